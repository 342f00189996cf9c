//! A host-engine restart (`drop_after`) outlives the client's copy of the library: a client that
//! gives up during its start-up, unloads libdcgm and loads it again to retry finds the engine
//! back after `down_ms`, as it finds a real nv-hostengine that was killed and came back.
//!
//! Its own test binary: the faults come from `DCGM_SIM_FAULTS`, as in a deployed client (a
//! configuration set through `dcgmSimConfigure` would itself be lost with an unloaded library).

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::{CString, c_int};
use std::time::Duration;

use common::sim_path;
use dcgm_sys::*;

/// What one start-up of a client does: load the library, init, connect to the simulated host
/// engine and list the GPUs and their attributes; then, successful or not, disconnect, shut
/// down and unload. Returns the first failing return code.
fn start_up() -> Result<(), dcgmReturn_t> {
    let lib = DcgmLibrary::open_path(sim_path()).expect("load dcgm-sim");
    // SAFETY: no arguments.
    assert_eq!(unsafe { lib.dcgmInit().unwrap()() }, DCGM_ST_OK);
    let a = CString::new("127.0.0.1").unwrap();
    let mut p = dcgmConnectV2Params_v2::new_versioned();
    let mut h = 0;
    // SAFETY: valid pointers.
    let mut rc = unsafe { lib.dcgmConnect_v2().unwrap()(a.as_ptr(), &mut p, &mut h) };
    if rc == DCGM_ST_OK {
        let mut ids = [0u32; 32];
        let mut n: c_int = 0;
        // SAFETY: buffers of the documented size.
        rc = unsafe { lib.dcgmGetAllDevices().unwrap()(h, ids.as_mut_ptr(), &mut n) };
        for &gpu in &ids[..n as usize] {
            if rc != DCGM_ST_OK {
                break;
            }
            let mut attr = dcgmDeviceAttributes_v3::boxed_versioned();
            // SAFETY: a versioned attributes struct.
            rc = unsafe { lib.dcgmGetDeviceAttributes().unwrap()(h, gpu, &mut *attr) };
        }
        // SAFETY: a handle of this library (a broken one is refused harmlessly).
        unsafe { lib.dcgmDisconnect().unwrap()(h) };
    }
    // SAFETY: no arguments.
    unsafe { lib.dcgmShutdown().unwrap()() };
    drop(lib);
    if rc == DCGM_ST_OK { Ok(()) } else { Err(rc) }
}

#[test]
fn a_restart_during_start_up_is_over_after_down_ms_for_a_client_that_reloads_the_library() {
    // SAFETY: the only test of this binary, set before it loads the library; no other thread
    // of the process reads the environment.
    unsafe { std::env::set_var("DCGM_SIM_FAULTS", "drop_after=3,down_ms=200") };
    // The fourth call of the first start-up meets the restart.
    assert_eq!(start_up(), Err(DCGM_ST_CONNECTION_NOT_VALID));
    // While the engine restarts, a retry is refused ...
    assert_eq!(start_up(), Err(DCGM_ST_CONNECTION_NOT_VALID));
    std::thread::sleep(Duration::from_millis(300));
    // ... and after down_ms every start-up works: the restart happened once.
    for attempt in 0..3 {
        assert_eq!(start_up(), Ok(()), "start-up {attempt} after the restart");
    }
}
