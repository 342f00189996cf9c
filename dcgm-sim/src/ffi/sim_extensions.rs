//! The simulator's own C functions, beside the DCGM API: `dcgmSimConfigure` (the
//! configuration of the next `dcgmInit`), `dcgmSimIsSimulator` and `dcgmSimInitError` (why the
//! last `dcgmInit` failed on its configuration).

use std::ffi::{CString, c_char, c_int};
use std::sync::Mutex;

use dcgm_sys::*;

use super::{c_str, guard};
use crate::{config, sim};

/// Replaces the configuration used by the next `dcgmInit` with this JSON (a `SimConfig`);
/// NULL or an empty string returns to the environment's configuration. Returns
/// `DCGM_ST_BADPARAM` for invalid JSON (the reason goes to stderr).
///
/// # Safety
///
/// `json` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmSimConfigure(json: *const c_char) -> dcgmReturn_t {
    guard(|| {
        let text = if json.is_null() {
            ""
        } else {
            // SAFETY: per this function's contract.
            unsafe { c_str(json) }?
        };
        let cfg = if text.trim().is_empty() {
            None
        } else {
            Some(config::SimConfig::parse(text).map_err(|e| {
                eprintln!("dcgm-sim: {e}");
                DCGM_ST_BADPARAM
            })?)
        };
        let mut s = sim::lock();
        s.override_cfg = cfg;
        // A new configuration re-arms the one-shot faults and brings restarting engines back.
        s.dropped_once = false;
        s.down_until.clear();
        Ok(())
    })
}

/// Always 1: lets a client tell that it has loaded the simulator, to label its data.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmSimIsSimulator() -> c_int {
    1
}

/// Why the last `dcgmInit` failed on its configuration (`DCGM_SIM_CONFIG`, a preset name or
/// `DCGM_SIM_FAULTS`), as the message `dcgmInit` printed on stderr; NULL when it did not. The
/// string stays valid until the next `dcgmInit`.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmSimInitError() -> *const c_char {
    lock_init_error()
        .as_ref()
        .map_or(std::ptr::null(), |e| e.as_ptr())
}

static INIT_ERROR: Mutex<Option<CString>> = Mutex::new(None);

fn lock_init_error() -> std::sync::MutexGuard<'static, Option<CString>> {
    INIT_ERROR.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records why `dcgmInit` failed on its configuration (`None`: it did not), for
/// [`dcgmSimInitError`].
pub fn set_init_error(reason: Option<&str>) {
    *lock_init_error() = reason.map(|r| CString::new(r.replace('\0', " ")).unwrap_or_default());
}
