//! The failure-reason functions of the C API (`dcgmGetErrorMeta`, `dcgmErrorGet*ByCode`),
//! answered from the recorded metadata ([`crate::failure_reasons`]).

use std::ffi::c_char;
use std::sync::OnceLock;

use dcgm_sys::*;

use crate::failure_reasons::{error_info, errors, recorded_class};

struct MetaTable(Vec<dcgm_error_meta_t>);
// SAFETY: the table is immutable and its pointers point into the 'static `errors()` table.
unsafe impl Sync for MetaTable {}
// SAFETY: as above.
unsafe impl Send for MetaTable {}

fn meta_table() -> &'static [dcgm_error_meta_t] {
    static T: OnceLock<MetaTable> = OnceLock::new();
    &T.get_or_init(|| {
        MetaTable(
            errors()
                .iter()
                .map(|e| dcgm_error_meta_t {
                    errorId: e.code,
                    msgFormat: e.format.as_ptr(),
                    suggestion: e.suggestion.as_ptr(),
                    severity: recorded_class(e.code).0 as i32,
                    category: recorded_class(e.code).1 as i32,
                })
                .collect(),
        )
    })
    .0
}

/// The library's description of a failure reason, or NULL for a code it does not know.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmGetErrorMeta(error: dcgmError_t) -> *const dcgm_error_meta_t {
    meta_table()
        .iter()
        .find(|m| m.errorId == error)
        .map_or(std::ptr::null(), |m| m as *const dcgm_error_meta_t)
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetPriorityByCode(code: u32) -> dcgmErrorSeverity_t {
    recorded_class(code).0
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetCategoryByCode(code: u32) -> dcgmErrorCategory_t {
    recorded_class(code).1
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetFormatMsgByCode(code: u32) -> *const c_char {
    error_info(code).map_or(std::ptr::null(), |e| e.format.as_ptr())
}
