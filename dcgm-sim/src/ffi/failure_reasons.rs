//! The failure-reason functions of the C API (`dcgmGetErrorMeta`, `dcgmErrorGet*ByCode`),
//! answered from the recorded metadata ([`crate::failure_reasons`]).

use std::ffi::c_char;
use std::sync::OnceLock;

use dcgm_sys::*;

use crate::failure_reasons::{error_info, errors, recorded_class};
use crate::personality::knows_failure_reason;

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
        .filter(|m| knows_failure_reason(m.errorId))
        .find(|m| m.errorId == error)
        .map_or(std::ptr::null(), |m| m as *const dcgm_error_meta_t)
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetPriorityByCode(code: u32) -> dcgmErrorSeverity_t {
    class(code).0
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetCategoryByCode(code: u32) -> dcgmErrorCategory_t {
    class(code).1
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetFormatMsgByCode(code: u32) -> *const c_char {
    error_info(code)
        .filter(|_| knows_failure_reason(code))
        .map_or(std::ptr::null(), |e| e.format.as_ptr())
}

/// Severity and category of a failure reason; a code newer than the release in force answers
/// as an unknown one.
fn class(code: u32) -> (dcgmErrorSeverity_t, dcgmErrorCategory_t) {
    recorded_class(if knows_failure_reason(code) {
        code
    } else {
        u32::MAX
    })
}
