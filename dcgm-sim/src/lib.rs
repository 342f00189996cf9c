//! dcgm-sim: a stand-in for `libdcgm.so.4` that simulates a GPU node.
//!
//! Built as a `cdylib`, it exports the DCGM 4.x C API with the same symbol names, signatures
//! and struct layouts as the real library, so any DCGM client (C, Python, Go, Rust) can load
//! it: point `DCGM_LIB_PATH` at it, or put a `libdcgm.so.4` link to it on the library path.
//!
//! The simulated node comes from `DCGM_SIM_CONFIG` (TOML or JSON), or is a default 8-GPU H100
//! training node with NvSwitches, one GPU in MIG mode and two CPU sockets. It speaks DCGM 4.6.0,
//! or an older release from 3.3.9 on (`DCGM_SIM_VERSION=4.5.3`, or `dcgm_version` in the
//! config): that release's version, struct versions, functions and field ids. Faults come from the
//! config or `DCGM_SIM_FAULTS`. Every value is a pure function of the seed, the entity, the
//! field and the time.
//!
//! Besides the DCGM API it exports `dcgmSimConfigure(json)`, which replaces the configuration
//! for the next `dcgmInit` (tests use it to script faults and events without environment
//! variables), `dcgmSimIsSimulator()`, which returns 1 so clients can label simulated data,
//! and `dcgmSimInitError()`, why the last `dcgmInit` failed on its configuration (so a client
//! can say what is wrong with the simulator's config rather than with a driver).

#![allow(non_snake_case)]

// This crate's API is the C ABI it exports and `config`, the description of a node;
// `testing` holds what its own integration tests need besides.
mod cache;
pub mod config;
mod cpu;
mod driver;
mod engine;
mod ffi;
mod health;
mod host_cpus;
mod imex;
mod listener_probe;
mod machine;
mod mig;
mod mig_requests;
mod model;
mod module_state;
mod personality;
mod policy_feed;
mod policy_thread;
mod sampling;
mod sim;
mod sim_value;
#[doc(hidden)]
pub mod testing;
mod values;
mod violations;
mod watch_set;
mod workload;

use std::ffi::{CString, c_char, c_int};
use std::sync::Mutex;

use dcgm_sys::*;

/// Replaces the configuration used by the next `dcgmInit` with this JSON (a `SimConfig`);
/// NULL or an empty string returns to the environment's configuration. Returns
/// `DCGM_ST_BADPARAM` for invalid JSON (the reason goes to stderr).
///
/// # Safety
///
/// `json` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmSimConfigure(json: *const c_char) -> dcgmReturn_t {
    ffi::guard(|| {
        let text = if json.is_null() {
            ""
        } else {
            // SAFETY: per this function's contract.
            unsafe { ffi::c_str(json) }?
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
pub(crate) fn set_init_error(reason: Option<&str>) {
    *lock_init_error() = reason.map(|r| CString::new(r.replace('\0', " ")).unwrap_or_default());
}
