//! Every exported libdcgm function this crate binds, in one table.

use std::ffi::{c_char, c_int};

use crate::*;

crate::library::dcgm_api! {
    /// Initialises DCGM for the process (not reference-counted by the library).
    fn dcgmInit() -> dcgmReturn_t;
    /// Tears down every connection and the embedded engine of the process.
    fn dcgmShutdown() -> dcgmReturn_t;
    /// Starts the embedded host engine.
    fn dcgmStartEmbedded(opMode: dcgmOperationMode_t, pDcgmHandle: *mut dcgmHandle_t) -> dcgmReturn_t;
    /// Stops the embedded host engine.
    fn dcgmStopEmbedded(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Version of the client library.
    fn dcgmVersionInfo(pVersionInfo: *mut dcgmVersionInfo_t) -> dcgmReturn_t;
    /// Text for a return code, or NULL for unknown codes.
    fn errorString(result: dcgmReturn_t) -> *const c_char;
    /// Latest values of fields for one GPU.
    fn dcgmGetLatestValuesForFields(pDcgmHandle: dcgmHandle_t, gpuId: c_int, fields: *mut u16, count: u32, values: *mut dcgmFieldValue_v1) -> dcgmReturn_t;
}
