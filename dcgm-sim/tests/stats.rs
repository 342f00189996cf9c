//! Process and job statistics through `dcgm-sys`: a configured process's information, unknown
//! pids refused, jobs started, stopped, reported and removed.

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::time::Duration;

use common::*;
use dcgm_sys::*;

#[test]
fn pid_info_covers_the_configured_process_and_rejects_unknown_pids() {
    let (_s, h) = Session::embedded(None, AUTO);
    let mut info = Box::new(dcgmPidInfo_v2::new_versioned());
    info.pid = 4242;
    // SAFETY: a versioned struct.
    assert_eq!(
        unsafe { lib().dcgmGetPidInfo().unwrap()(h, ALL, &mut *info) },
        DCGM_ST_NOT_WATCHED
    );
    // SAFETY: plain arguments.
    let rc = unsafe { lib().dcgmWatchPidFields().unwrap()(h, ALL, 1_000_000, 3600.0, 0) };
    assert_eq!(rc, DCGM_ST_OK);
    // SAFETY: a versioned struct.
    assert_eq!(
        unsafe { lib().dcgmGetPidInfo().unwrap()(h, ALL, &mut *info) },
        DCGM_ST_OK
    );
    assert_eq!(info.numGpus, 7);
    let g0 = &info.gpus[0];
    assert_eq!(g0.gpuId, 0);
    assert!(g0.energyConsumed > 0);
    assert!(g0.startTime > 0 && g0.startTime < info.gpus[0].startTime + 1);
    assert_eq!(g0.endTime, 0);
    assert_eq!(g0.maxGpuMemoryUsed, 62_000 * 1024 * 1024);
    assert!(g0.smUtilization.maxValue >= g0.smUtilization.minValue);
    assert!(info.summary.energyConsumed >= g0.energyConsumed);

    let mut other = Box::new(dcgmPidInfo_v2::new_versioned());
    other.pid = 999;
    // SAFETY: a versioned struct.
    assert_eq!(
        unsafe { lib().dcgmGetPidInfo().unwrap()(h, ALL, &mut *other) },
        DCGM_ST_NO_DATA
    );
    other.version = dcgmPidInfo_version2 - (1 << 24);
    // SAFETY: the version is wrong on purpose.
    assert_eq!(
        unsafe { lib().dcgmGetPidInfo().unwrap()(h, ALL, &mut *other) },
        DCGM_ST_VER_MISMATCH
    );
}

#[test]
fn jobs_start_stop_report_and_go_away() {
    let (_s, h) = Session::embedded(None, AUTO);
    let l = lib();
    let mut id = job("train-42");
    // SAFETY: job ids are 64-byte buffers; the structs are versioned.
    unsafe {
        assert_eq!(
            l.dcgmWatchJobFields().unwrap()(h, ALL, 1_000_000, 3600.0, 0),
            DCGM_ST_OK
        );
        assert_eq!(
            l.dcgmJobStartStats().unwrap()(h, ALL, id.as_mut_ptr()),
            DCGM_ST_OK
        );
        assert_eq!(
            l.dcgmJobStartStats().unwrap()(h, ALL, id.as_mut_ptr()),
            DCGM_ST_DUPLICATE_KEY
        );
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            l.dcgmJobStopStats().unwrap()(h, id.as_mut_ptr()),
            DCGM_ST_OK
        );
        let mut info = Box::new(dcgmJobInfo_v3::new_versioned());
        assert_eq!(
            l.dcgmJobGetStats().unwrap()(h, id.as_mut_ptr(), &mut *info),
            DCGM_ST_OK
        );
        assert_eq!(info.numGpus, 8);
        let g = &info.gpus[3];
        assert_eq!(g.gpuId, 3);
        assert!(
            g.endTime >= g.startTime + 15_000,
            "{} {}",
            g.startTime,
            g.endTime
        );
        assert!(g.powerUsage.average > 0.0 && g.powerUsage.maxValue >= g.powerUsage.minValue);
        assert!(g.numComputePids >= 1);
        assert!(info.summary.energyConsumed >= g.energyConsumed);

        info.version = dcgmJobInfo_version3 + 1;
        assert_eq!(
            l.dcgmJobGetStats().unwrap()(h, id.as_mut_ptr(), &mut *info),
            DCGM_ST_VER_MISMATCH
        );
        info.version = dcgmJobInfo_version3;

        assert_eq!(l.dcgmJobRemove().unwrap()(h, id.as_mut_ptr()), DCGM_ST_OK);
        assert_eq!(
            l.dcgmJobGetStats().unwrap()(h, id.as_mut_ptr(), &mut *info),
            DCGM_ST_NO_DATA
        );
        assert_eq!(
            l.dcgmJobRemove().unwrap()(h, id.as_mut_ptr()),
            DCGM_ST_NO_DATA
        );
        let mut other = job("other");
        assert_eq!(
            l.dcgmJobStartStats().unwrap()(h, ALL, other.as_mut_ptr()),
            DCGM_ST_OK
        );
        assert_eq!(l.dcgmJobRemoveAll().unwrap()(h), DCGM_ST_OK);
        assert_eq!(
            l.dcgmJobStopStats().unwrap()(h, other.as_mut_ptr()),
            DCGM_ST_NO_DATA
        );
    }
}
