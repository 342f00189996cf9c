//! Health checks through `dcgm-sys`: a DBE is a memory failure only once it happened, and
//! PCIe watched as a warning, against scripted events.

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use dcgm_sys::*;

fn health_check(h: dcgmHandle_t, g: dcgmGpuGrp_t) -> Box<dcgmHealthResponse_v5> {
    let mut r = dcgmHealthResponse_v5::boxed_versioned();
    // SAFETY: a versioned response.
    let rc = unsafe { lib().dcgmHealthCheck().unwrap()(h, g, &mut *r) };
    assert_eq!(rc, DCGM_ST_OK);
    r
}

#[test]
fn health_check_reports_a_dbe_as_a_memory_failure_only_once_it_happened() {
    let cfg = r#"{"events":[
        {"at_ms":400,"gpu":2,"kind":"dbe","value":1},
        {"at_ms":400,"gpu":3,"kind":"pcie_replay","value":5}
    ]}"#;
    let (_s, h) = Session::embedded(Some(cfg), AUTO);
    let t0 = Instant::now();
    // SAFETY: plain arguments.
    let rc = unsafe {
        lib().dcgmHealthSet().unwrap()(h, ALL, DCGM_HEALTH_WATCH_MEM | DCGM_HEALTH_WATCH_SM)
    };
    assert_eq!(rc, DCGM_ST_OK);
    let mut systems = 0;
    // SAFETY: `systems` is writable.
    assert_eq!(
        unsafe { lib().dcgmHealthGet().unwrap()(h, ALL, &mut systems) },
        DCGM_ST_OK
    );
    assert_eq!(systems, DCGM_HEALTH_WATCH_MEM | DCGM_HEALTH_WATCH_SM);

    let before = health_check(h, ALL);
    assert!(
        t0.elapsed() < Duration::from_millis(380),
        "setup too slow for the scripted times"
    );
    assert_eq!(before.incidentCount, 0);
    assert_eq!(before.overallHealth, DCGM_HEALTH_RESULT_PASS);

    sleep_until(t0 + Duration::from_millis(500));
    let after = health_check(h, ALL);
    // The PCIe replay is not watched: only the DBE shows.
    assert_eq!(after.incidentCount, 1);
    assert_eq!(after.overallHealth, DCGM_HEALTH_RESULT_FAIL);
    let inc = &after.incidents[0];
    assert_eq!(inc.system, DCGM_HEALTH_WATCH_MEM);
    assert_eq!(inc.health, DCGM_HEALTH_RESULT_FAIL);
    assert_eq!(inc.error.code, DCGM_FR_VOLATILE_DBE_DETECTED);
    assert_eq!(
        (inc.entityInfo.entityGroupId, inc.entityInfo.entityId),
        (DCGM_FE_GPU, 2)
    );
    assert!(
        text(&inc.error.msg).contains("GPU 2"),
        "{}",
        text(&inc.error.msg)
    );

    // As on libdcgm, the volatile DBE total stays above 0, so the next check reports it again.
    let again = health_check(h, ALL);
    assert_eq!(again.incidentCount, 1);
    assert_eq!(again.incidents[0].error.code, DCGM_FR_VOLATILE_DBE_DETECTED);
}

#[test]
fn health_set_v2_watches_pcie_as_a_warning() {
    // A gen 5 x16 link may see 31 replays a minute: GPU 0's 4 pass, GPU 1's 100 warn.
    let cfg = r#"{"events":[{"at_ms":300,"gpu":0,"kind":"pcie_replay","value":4},
        {"at_ms":300,"gpu":1,"kind":"pcie_replay","value":100}]}"#;
    let (_s, h) = Session::embedded(Some(cfg), AUTO);
    let t0 = Instant::now();
    let g = gpu_group(h, "health-pcie", &[0, 1]);
    let mut p = dcgmHealthSetParams_v2::new_versioned();
    p.groupId = g;
    p.systems = DCGM_HEALTH_WATCH_PCIE;
    p.updateInterval = 1_000_000;
    p.maxKeepAge = 60.0;
    // SAFETY: a versioned struct.
    assert_eq!(
        unsafe { lib().dcgmHealthSet_v2().unwrap()(h, &mut p) },
        DCGM_ST_OK
    );
    sleep_until(t0 + Duration::from_millis(400));
    let r = health_check(h, g);
    assert_eq!(r.incidentCount, 1);
    assert_eq!(r.overallHealth, DCGM_HEALTH_RESULT_WARN);
    assert_eq!(r.incidents[0].system, DCGM_HEALTH_WATCH_PCIE);
    assert_eq!(r.incidents[0].error.code, DCGM_FR_PCI_REPLAY_RATE);
    assert_eq!(r.incidents[0].entityInfo.entityId, 1);

    p.version = dcgmHealthSetParams_version2 - (1 << 24);
    // SAFETY: as above; the version is wrong on purpose.
    assert_eq!(
        unsafe { lib().dcgmHealthSet_v2().unwrap()(h, &mut p) },
        DCGM_ST_VER_MISMATCH
    );
}
