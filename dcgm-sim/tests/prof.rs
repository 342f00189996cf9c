//! Profiling through `dcgm-sys`: the simulated metric groups, pause and resume.

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::time::Duration;

use common::*;
use dcgm_sys::*;

fn metric_groups(h: dcgmHandle_t, gpu: u32) -> (dcgmReturn_t, dcgmProfGetMetricGroups_v3) {
    let mut mg = dcgmProfGetMetricGroups_v3::new_versioned();
    mg.gpuId = gpu;
    // SAFETY: a versioned struct.
    let rc = unsafe { lib().dcgmProfGetSupportedMetricGroups().unwrap()(h, &mut mg) };
    (rc, mg)
}

#[test]
fn profiling_lists_the_simulated_metrics_and_pauses() {
    let (s, h) = Session::embedded(None, AUTO);
    let (rc, mg) = metric_groups(h, 0);
    assert_eq!(rc, DCGM_ST_OK);
    let mut ids: Vec<u16> = mg.metricGroups[..mg.numMetricGroups as usize]
        .iter()
        .flat_map(|g| g.fieldIds[..g.numFieldIds as usize].to_vec())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1001..=1012).collect::<Vec<u16>>());
    assert_eq!(metric_groups(h, 99).0, DCGM_ST_BADPARAM);
    let mut bad = dcgmProfGetMetricGroups_v3::new_versioned();
    bad.version = dcgmProfGetMetricGroups_version3 - (1 << 24);
    // SAFETY: the version is wrong on purpose.
    let rc = unsafe { lib().dcgmProfGetSupportedMetricGroups().unwrap()(h, &mut bad) };
    assert_eq!(rc, DCGM_ST_VER_MISMATCH);

    let fg = field_group(h, "prof", &[DCGM_FI_PROF_SM_UTIL_RATIO]).unwrap();
    // Every millisecond: a forced update samples only fields that are due, as libdcgm does.
    assert_eq!(watch(h, ALL, fg, 1_000, 60.0, 0), DCGM_ST_OK);
    // Pausing is the profiling module's, which libdcgm 4.6.0 cannot load beside GPM (Hopper)
    // GPUs: not supported, and the metrics go on.
    // SAFETY: plain argument.
    assert_eq!(
        unsafe { lib().dcgmProfPause().unwrap()(h) },
        DCGM_ST_NOT_SUPPORTED
    );
    // SAFETY: plain argument.
    assert_eq!(
        unsafe { lib().dcgmProfResume().unwrap()(h) },
        DCGM_ST_NOT_SUPPORTED
    );
    std::thread::sleep(Duration::from_millis(2));
    update(h);
    assert!(latest(h, ALL, fg).unwrap().iter().all(|v| v.dbl <= 1.0));
    drop(s);

    let (_s, h) = Session::embedded(Some(r#"{"faults":{"profiling_in_use":true}}"#), AUTO);
    assert_eq!(metric_groups(h, 0).0, DCGM_ST_IN_USE);
}
