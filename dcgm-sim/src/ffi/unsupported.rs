//! The calls the simulator deliberately does not support: each answers
//! `DCGM_ST_NOT_SUPPORTED`, with the reason in its comment.

use std::ffi::c_char;

use dcgm_sys::*;

use super::guard;
use crate::sim::with_engine;

/// Running a host-engine listener needs the real nv-hostengine: not supported.
///
/// # Safety
///
/// `socketPath` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmEngineRun(
    portNumber: u16,
    socketPath: *const c_char,
    connectionType: u32,
) -> dcgmReturn_t {
    let _ = (portNumber, socketPath, connectionType);
    DCGM_ST_NOT_SUPPORTED
}

/// The MIG layout comes from the simulator's config: fake instances are not supported.
///
/// # Safety
///
/// `hierarchy` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmAddFakeInstances(
    pDcgmHandle: dcgmHandle_t,
    hierarchy: *mut dcgmMigHierarchy_v2,
) -> dcgmReturn_t {
    let _ = hierarchy;
    guard(|| {
        with_engine(pDcgmHandle, |_| Ok(()))?;
        Err(DCGM_ST_NOT_SUPPORTED)
    })
}
