//! Diagnostics through `dcgm-sys`: the levels' tests, a DBE failing the memory test, and
//! `dcgmActionValidate_v2` on named tests and listed entities.

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::c_char;

use common::*;
use dcgm_sys::*;

fn run_diag(
    h: dcgmHandle_t,
    g: dcgmGpuGrp_t,
    level: dcgmDiagnosticLevel_t,
) -> Box<dcgmDiagResponse_v12> {
    let mut r = dcgmDiagResponse_v12::boxed_versioned();
    // SAFETY: a versioned response.
    let rc = unsafe { lib().dcgmRunDiagnostic().unwrap()(h, g, level, &mut *r) };
    assert_eq!(rc, DCGM_ST_OK);
    r
}

fn test_names(r: &dcgmDiagResponse_v12) -> Vec<String> {
    r.tests[..r.numTests as usize]
        .iter()
        .map(|t| text(&t.name))
        .collect()
}

/// Result of one test for one GPU.
fn result_of(r: &dcgmDiagResponse_v12, test: &str, gpu: u32) -> dcgmDiagResult_t {
    let ti = test_names(r).iter().position(|n| n == test).expect(test);
    let t = &r.tests[ti];
    t.resultIndices[..t.numResults as usize]
        .iter()
        .map(|&i| r.results[i as usize])
        .find(|x| x.entity.entityId == gpu && x.testId == ti as u32)
        .map(|x| x.result)
        .expect("result for the GPU")
}

#[test]
fn diagnostic_levels_run_their_tests_and_a_dbe_fails_the_memory_test() {
    let cfg = r#"{"events":[{"at_ms":0,"gpu":1,"kind":"dbe","value":1}]}"#;
    let (_s, h) = Session::embedded(Some(cfg), AUTO);
    let g = gpu_group(h, "diag", &[0, 1]);

    let short = run_diag(h, g, DCGM_DIAG_LVL_SHORT);
    assert_eq!(test_names(&short), ["software"]);
    assert_eq!(short.numEntities, 2);
    assert_eq!(short.numResults, 2);
    assert_eq!(short.tests[0].result, DCGM_DIAG_RESULT_PASS);
    assert_eq!(text(&short.dcgmVersion), "4.6.0");
    assert!(!text(&short.driverVersion).is_empty());
    assert_eq!(short.entities[1].entity.entityId, 1);

    let long = run_diag(h, g, DCGM_DIAG_LVL_LONG);
    assert_eq!(
        test_names(&long),
        [
            "software",
            "pcie",
            "memory",
            "diagnostic",
            "targeted_stress",
            "targeted_power",
            "memory_bandwidth"
        ]
    );
    assert_eq!(long.numResults, 14);
    assert_eq!(result_of(&long, "memory", 0), DCGM_DIAG_RESULT_PASS);
    assert_eq!(result_of(&long, "memory", 1), DCGM_DIAG_RESULT_FAIL);
    assert_eq!(result_of(&long, "pcie", 1), DCGM_DIAG_RESULT_PASS);
    let mem = &long.tests[2];
    assert_eq!(mem.result, DCGM_DIAG_RESULT_FAIL);
    assert_eq!(mem.numErrors, 1);
    let err = &long.errors[mem.errorIndices[0] as usize];
    assert_eq!(err.code, DCGM_FR_VOLATILE_DBE_DETECTED);
    assert_eq!(err.entity.entityId, 1);
    assert_eq!(err.testId, 2);
    assert_eq!(long.numErrors, 1);
    assert!(long.numCategories >= 3);

    let empty = gpu_group(h, "diag-empty", &[]);
    let mut r = dcgmDiagResponse_v12::boxed_versioned();
    // SAFETY: a versioned response.
    let rc = unsafe { lib().dcgmRunDiagnostic().unwrap()(h, empty, DCGM_DIAG_LVL_SHORT, &mut *r) };
    assert_eq!(rc, DCGM_ST_GROUP_IS_EMPTY);
    r.version = dcgmDiagResponse_version9;
    // SAFETY: the version is wrong on purpose; the struct is large enough for any layout.
    let rc = unsafe { lib().dcgmRunDiagnostic().unwrap()(h, g, DCGM_DIAG_LVL_SHORT, &mut *r) };
    assert_eq!(rc, DCGM_ST_VER_MISMATCH);
}

#[test]
fn action_validate_v2_runs_named_tests_on_listed_entities() {
    let cfg = r#"{"events":[{"at_ms":0,"gpu":3,"kind":"dbe","value":1}]}"#;
    let (_s, h) = Session::embedded(Some(cfg), AUTO);
    let mut rd = dcgmRunDiag_v10::boxed_versioned();
    rd.groupId = DCGM_GROUP_NULL;
    for (d, s) in rd.testNames[0].iter_mut().zip(b"memory") {
        *d = *s as c_char;
    }
    for (d, s) in rd.entityIds.iter_mut().zip(b"gpu:2,3") {
        *d = *s as c_char;
    }
    let mut r = dcgmDiagResponse_v12::boxed_versioned();
    // SAFETY: versioned request and response.
    let rc = unsafe { lib().dcgmActionValidate_v2().unwrap()(h, &mut *rd, &mut *r) };
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(test_names(&r), ["memory"]);
    assert_eq!(r.numEntities, 2);
    assert_eq!(result_of(&r, "memory", 2), DCGM_DIAG_RESULT_PASS);
    assert_eq!(result_of(&r, "memory", 3), DCGM_DIAG_RESULT_FAIL);

    // The older layouts of the same size are filled as their version says.
    let mut v11 = dcgmDiagResponse_v11::boxed_versioned();
    // SAFETY: a versioned response of the same size as v12.
    let rc = unsafe {
        lib().dcgmActionValidate_v2().unwrap()(
            h,
            &mut *rd,
            (&mut *v11 as *mut dcgmDiagResponse_v11).cast(),
        )
    };
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!((v11.numTests, v11.numEntities, v11.numErrors), (1, 2, 1));
    assert_eq!(text(&v11.tests[0].name), "memory");
    let mut v10 = dcgmDiagResponse_v10::boxed_versioned();
    // SAFETY: as above.
    let rc = unsafe {
        lib().dcgmRunDiagnostic().unwrap()(
            h,
            ALL,
            DCGM_DIAG_LVL_MED,
            (&mut *v10 as *mut dcgmDiagResponse_v10).cast(),
        )
    };
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(v10.gpuCount, 8);
    assert_eq!(v10.levelOneResults[0].status, DCGM_DIAG_RESULT_PASS);
    let mem = |g: usize| v10.perGpuResponses[g].results[DCGM_MEMORY_INDEX as usize];
    assert_eq!(
        (v10.perGpuResponses[3].gpuId, mem(3).status),
        (3, DCGM_DIAG_RESULT_FAIL)
    );
    assert_eq!(mem(3).error[0].code, DCGM_FR_VOLATILE_DBE_DETECTED);
    assert_eq!(mem(2).status, DCGM_DIAG_RESULT_PASS);
    assert_eq!(
        v10.perGpuResponses[2].results[DCGM_MEMTEST_INDEX as usize].status,
        DCGM_DIAG_RESULT_NOT_RUN
    );

    // MIG GPUs (GPU 7 on the default node) skip everything but the software test.
    let mut r = dcgmDiagResponse_v12::boxed_versioned();
    // SAFETY: a versioned response.
    let rc =
        unsafe { lib().dcgmActionValidate().unwrap()(h, ALL, DCGM_POLICY_VALID_SV_MED, &mut *r) };
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(result_of(&r, "software", 7), DCGM_DIAG_RESULT_PASS);
    assert_eq!(result_of(&r, "memory", 7), DCGM_DIAG_RESULT_SKIP);

    // SAFETY: NULL pointers are rejected; the multi-node diagnostic is not simulated.
    unsafe {
        assert_eq!(
            lib().dcgmRunMnDiagnostic().unwrap()(h, std::ptr::null(), std::ptr::null_mut()),
            DCGM_ST_NOT_SUPPORTED
        );
        assert_eq!(lib().dcgmStopDiagnostic().unwrap()(h), DCGM_ST_OK);
    }
}
