//! Device configuration and status objects through `dcgm-sys` (`dcgmConfigSet`/`Get`/`Enforce`;
//! `config.rs` is the simulator's own node description).

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::{CStr, c_char};
use std::time::Duration;

use common::*;
use dcgm_sys::*;

fn power_config(watts: u32) -> dcgmConfig_v2 {
    let blank = DCGM_INT32_BLANK as u32;
    let mut c = dcgmConfig_v2::new_versioned();
    c.eccMode = blank;
    c.computeMode = blank;
    c.perfState.syncBoost = blank;
    c.perfState.targetClocks.version = dcgmClockSet_version1 as i32;
    c.perfState.targetClocks.memClock = blank;
    c.perfState.targetClocks.smClock = blank;
    c.powerLimit.type_ = DCGM_CONFIG_POWER_CAP_INDIVIDUAL;
    c.powerLimit.val = watts;
    c.workloadPowerProfiles = [blank; 8];
    c
}

#[test]
fn config_set_changes_the_enforced_power_limit_and_reports_errors_in_the_status() {
    let (_s, h) = Session::embedded(None, AUTO);
    let l = lib();
    let g = gpu_group(h, "cfg", &[0]);
    let fg = field_group(
        h,
        "cfg-fields",
        &[DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS],
    )
    .unwrap();
    // The watch samples at once (as libdcgm's does); a forced update samples again once the
    // millisecond interval has passed.
    assert_eq!(watch(h, g, fg, 1_000, 60.0, 0), DCGM_ST_OK);
    let mut status: dcgmStatus_t = 0;
    // SAFETY: writable handle; versioned configs; the status handle is valid.
    unsafe {
        assert_eq!(l.dcgmStatusCreate().unwrap()(&mut status), DCGM_ST_OK);
        let mut c = power_config(500);
        assert_eq!(l.dcgmConfigSet().unwrap()(h, g, &mut c, status), DCGM_ST_OK);
    }
    std::thread::sleep(Duration::from_millis(2));
    update(h);
    let v = latest(h, g, fg).unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].dbl, 500.0);

    // SAFETY: as above.
    unsafe {
        let mut c = power_config(100);
        assert_eq!(
            l.dcgmConfigSet().unwrap()(h, g, &mut c, status),
            DCGM_ST_BADPARAM
        );
        let mut n = 0;
        assert_eq!(l.dcgmStatusGetCount().unwrap()(status, &mut n), DCGM_ST_OK);
        assert_eq!(n, 1);
        let mut e = dcgm_sys::zeroed::<dcgmErrorInfo_t>();
        assert_eq!(l.dcgmStatusPopError().unwrap()(status, &mut e), DCGM_ST_OK);
        assert_eq!((e.gpuId, e.status), (0, DCGM_ST_BADPARAM));
        assert_eq!(
            e.fieldId as u16,
            DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS
        );
        assert_eq!(
            l.dcgmStatusPopError().unwrap()(status, &mut e),
            DCGM_ST_NO_DATA
        );

        let mut out = [dcgmConfig_v2::new_versioned(); 1];
        assert_eq!(
            l.dcgmConfigGet().unwrap()(h, g, DCGM_CONFIG_TARGET_STATE, 1, out.as_mut_ptr(), status),
            DCGM_ST_OK
        );
        assert_eq!(out[0].powerLimit.val, 500);
        assert_eq!(
            out[0].perfState.targetClocks.smClock,
            DCGM_INT32_BLANK as u32
        );
        assert_eq!(
            l.dcgmConfigGet().unwrap()(
                h,
                g,
                DCGM_CONFIG_CURRENT_STATE,
                1,
                out.as_mut_ptr(),
                status
            ),
            DCGM_ST_OK
        );
        assert_eq!(out[0].powerLimit.val, 500);
        assert_eq!(out[0].perfState.targetClocks.smClock, 1980);

        let mut c = power_config(500);
        c.version = dcgmConfig_version1;
        assert_eq!(
            l.dcgmConfigSet().unwrap()(h, g, &mut c, 0),
            DCGM_ST_VER_MISMATCH
        );
        assert_eq!(l.dcgmStatusDestroy().unwrap()(status), DCGM_ST_OK);
        assert_eq!(l.dcgmStatusDestroy().unwrap()(status), DCGM_ST_BADPARAM);

        let mut name: *const c_char = std::ptr::null();
        assert_eq!(
            l.dcgmPowerProfileIdToName().unwrap()(DCGM_POWER_PROFILE_HPC, &mut name),
            DCGM_ST_OK
        );
        assert_eq!(CStr::from_ptr(name).to_str().unwrap(), "POWER_PROFILE_HPC");
        assert_eq!(
            l.dcgmPowerProfileIdToName().unwrap()(DCGM_POWER_PROFILE_MAX, &mut name),
            DCGM_ST_BADPARAM
        );
    }
}
