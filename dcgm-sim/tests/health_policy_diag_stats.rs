//! Beyond monitoring: health checks, policies and their callback thread, diagnostics, process
//! and job statistics, configuration, profiling and the smaller APIs, driven through `dcgm-sys`
//! against scripted events.

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::{CStr, CString, c_char, c_int};
use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use common::*;
use dcgm_sys::*;

const AUTO: dcgmOperationMode_t = DCGM_OPERATION_MODE_AUTO;
const MANUAL: dcgmOperationMode_t = DCGM_OPERATION_MODE_MANUAL;
const ALL: dcgmGpuGrp_t = DCGM_GROUP_ALL_GPUS;

fn gpu_group(h: dcgmHandle_t, name: &str, gpus: &[u32]) -> dcgmGpuGrp_t {
    let n = CString::new(name).unwrap();
    let mut g = 0;
    // SAFETY: valid pointers.
    let rc = unsafe { lib().dcgmGroupCreate().unwrap()(h, DCGM_GROUP_EMPTY, n.as_ptr(), &mut g) };
    assert_eq!(rc, DCGM_ST_OK);
    for &id in gpus {
        // SAFETY: plain arguments.
        let rc = unsafe { lib().dcgmGroupAddDevice().unwrap()(h, g, id) };
        assert_eq!(rc, DCGM_ST_OK);
    }
    g
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

fn text(s: &[c_char]) -> String {
    // SAFETY: the library NUL-terminates every string it writes.
    unsafe { CStr::from_ptr(s.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// A job id buffer (`char[64]`).
fn job(id: &str) -> [c_char; 64] {
    let mut b = [0 as c_char; 64];
    for (d, s) in b.iter_mut().zip(id.bytes()) {
        *d = s as c_char;
    }
    b
}

// ---------------------------------------------------------------------------------------------
// Health

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

// ---------------------------------------------------------------------------------------------
// Policy

/// (condition, GPU, value, user data, thread) per callback.
type Seen = (u32, u32, u32, u64, ThreadId);
static SEEN: Mutex<Vec<Seen>> = Mutex::new(Vec::new());

unsafe extern "C" fn on_violation(r: *mut dcgmPolicyCallbackResponse_t, user: u64) -> c_int {
    // SAFETY: the library passes a valid response for the duration of the call.
    let r = unsafe { &*r };
    assert_eq!(r.version, dcgmPolicyCallbackResponse_version2);
    // SAFETY: the member read is the one `condition` names.
    let value = unsafe {
        match r.condition {
            DCGM_POLICY_COND_XID => r.val.xid.errnum,
            DCGM_POLICY_COND_THERMAL => r.val.thermal.thermalViolation,
            DCGM_POLICY_COND_DBE => r.val.dbe.numerrors,
            _ => u32::MAX,
        }
    };
    SEEN.lock().unwrap().push((
        r.condition,
        r.gpuId,
        value,
        user,
        std::thread::current().id(),
    ));
    0
}

fn seen() -> Vec<Seen> {
    SEEN.lock().unwrap().clone()
}

fn thermal_xid_policy(max_temp: u64) -> dcgmPolicy_v1 {
    let mut p = dcgmPolicy_v1::new_versioned();
    p.condition = DCGM_POLICY_COND_THERMAL | DCGM_POLICY_COND_XID;
    p.parms[DCGM_POLICY_COND_IDX_THERMAL as usize] = dcgmPolicyConditionParams_t {
        tag: LLONG,
        val: dcgmPolicyConditionParams_st__bindgen_ty_2 { llval: max_temp },
    };
    p.parms[DCGM_POLICY_COND_IDX_XID as usize] = dcgmPolicyConditionParams_t {
        tag: BOOL,
        val: dcgmPolicyConditionParams_st__bindgen_ty_2 { boolean: 1 },
    };
    p
}

#[test]
fn policy_callbacks_run_on_the_library_thread_once_and_stop_after_unregister() {
    let cfg = r#"{"events":[
        {"at_ms":500,"gpu":1,"kind":"xid","value":31},
        {"at_ms":600,"gpu":2,"kind":"thermal","value":95},
        {"at_ms":600,"gpu":3,"kind":"thermal","value":80},
        {"at_ms":1600,"gpu":1,"kind":"xid","value":13}
    ]}"#;
    let (_s, h) = Session::embedded(Some(cfg), AUTO);
    SEEN.lock().unwrap().clear();
    let t0 = Instant::now();
    let mut p = thermal_xid_policy(85);
    // SAFETY: a versioned policy.
    assert_eq!(
        unsafe { lib().dcgmPolicySet().unwrap()(h, ALL, &mut p, 0) },
        DCGM_ST_OK
    );
    let mut got = [dcgmPolicy_v1::new_versioned(); 8];
    // SAFETY: room for 8 policies, the first versioned.
    let rc = unsafe { lib().dcgmPolicyGet().unwrap()(h, ALL, 8, got.as_mut_ptr(), 0) };
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(
        got[5].condition,
        DCGM_POLICY_COND_THERMAL | DCGM_POLICY_COND_XID
    );
    // SAFETY: set as LLONG above.
    assert_eq!(
        unsafe {
            got[5].parms[DCGM_POLICY_COND_IDX_THERMAL as usize]
                .val
                .llval
        },
        85
    );

    let cond = DCGM_POLICY_COND_THERMAL | DCGM_POLICY_COND_XID;
    // SAFETY: the callback has the expected signature and lives for the whole program.
    let rc =
        unsafe { lib().dcgmPolicyRegister_v2().unwrap()(h, ALL, cond, Some(on_violation), 77) };
    assert_eq!(rc, DCGM_ST_OK);
    assert!(
        t0.elapsed() < Duration::from_millis(450),
        "setup too slow for the scripted times"
    );

    let deadline = t0 + Duration::from_secs(3);
    while seen().len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let s = seen();
    assert_eq!(s.len(), 2, "{s:?}");
    let me = std::thread::current().id();
    assert!(s.iter().all(|x| x.4 != me && x.3 == 77), "{s:?}");
    assert!(
        s.contains(&(DCGM_POLICY_COND_XID, 1, 31, 77, s[0].4)),
        "{s:?}"
    );
    assert!(
        s.iter()
            .any(|x| x.0 == DCGM_POLICY_COND_THERMAL && x.1 == 2 && x.2 == 95),
        "{s:?}"
    );

    // Delivered once; 80 °C stays under the policy's 85 °C.
    sleep_until(t0 + Duration::from_millis(1000));
    assert_eq!(seen().len(), 2, "{:?}", seen());

    // SAFETY: plain arguments.
    assert_eq!(
        unsafe { lib().dcgmPolicyUnregister().unwrap()(h, ALL, cond) },
        DCGM_ST_OK
    );
    sleep_until(t0 + Duration::from_millis(1900));
    assert_eq!(seen().len(), 2, "callback after unregister: {:?}", seen());

    let mut bad = thermal_xid_policy(85);
    bad.version = dcgmPolicy_version1 + (1 << 24);
    // SAFETY: the version is wrong on purpose.
    assert_eq!(
        unsafe { lib().dcgmPolicySet().unwrap()(h, ALL, &mut bad, 0) },
        DCGM_ST_VER_MISMATCH
    );
    // SAFETY: a NULL callback is rejected before use.
    let rc = unsafe { lib().dcgmPolicyRegister_v2().unwrap()(h, ALL, cond, None, 0) };
    assert_eq!(rc, DCGM_ST_BADPARAM);
}

#[test]
fn policy_callbacks_wait_for_a_trigger_in_manual_mode() {
    let cfg = r#"{"events":[{"at_ms":100,"gpu":4,"kind":"dbe","value":2}]}"#;
    let (_s, h) = Session::embedded(Some(cfg), MANUAL);
    SEEN.lock().unwrap().clear();
    let t0 = Instant::now();
    // No policy: every DBE is a violation.
    // SAFETY: the callback has the expected signature.
    let rc = unsafe {
        lib().dcgmPolicyRegister_v2().unwrap()(h, ALL, DCGM_POLICY_COND_DBE, Some(on_violation), 5)
    };
    assert_eq!(rc, DCGM_ST_OK);
    sleep_until(t0 + Duration::from_millis(300));
    assert!(seen().is_empty(), "{:?}", seen());
    // SAFETY: plain argument.
    assert_eq!(unsafe { lib().dcgmPolicyTrigger().unwrap()(h) }, DCGM_ST_OK);
    let s = seen();
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(
        (s[0].0, s[0].1, s[0].2, s[0].3),
        (DCGM_POLICY_COND_DBE, 4, 2, 5)
    );
    // SAFETY: plain argument.
    assert_eq!(unsafe { lib().dcgmPolicyTrigger().unwrap()(h) }, DCGM_ST_OK);
    assert_eq!(seen().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Diagnostics

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

// ---------------------------------------------------------------------------------------------
// Process and job statistics

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

// ---------------------------------------------------------------------------------------------
// Configuration and status objects

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

// ---------------------------------------------------------------------------------------------
// Profiling

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

// ---------------------------------------------------------------------------------------------
// Modules, introspection, topology, summaries, failure reasons

#[test]
fn modules_introspection_and_failure_reasons() {
    let (_s, h) = Session::embedded(None, AUTO);
    let l = lib();
    // SAFETY: versioned structs and writable outputs.
    unsafe {
        let mut st = dcgmModuleGetStatuses_v1::new_versioned();
        assert_eq!(l.dcgmModuleGetStatuses().unwrap()(h, &mut st), DCGM_ST_OK);
        assert_eq!(st.numStatuses, DcgmModuleIdCount);
        // As libdcgm 4.6.0: the core and the NvSwitch modules load at start, the others on
        // first use; a loaded module cannot be denylisted.
        let loaded: Vec<u32> = st.statuses[..st.numStatuses as usize]
            .iter()
            .filter(|s| s.status == DcgmModuleStatusLoaded)
            .map(|s| s.id)
            .collect();
        assert_eq!(loaded, [DcgmModuleIdCore, DcgmModuleIdNvSwitch]);
        assert_eq!(l.dcgmPolicyTrigger().unwrap()(h), DCGM_ST_OK);
        assert_eq!(
            l.dcgmModuleDenylist().unwrap()(h, DcgmModuleIdPolicy),
            DCGM_ST_IN_USE
        );
        assert_eq!(
            l.dcgmModuleDenylist().unwrap()(h, DcgmModuleIdHealth),
            DCGM_ST_OK
        );
        assert_eq!(
            l.dcgmModuleDenylist().unwrap()(h, DcgmModuleIdCore),
            DCGM_ST_BADPARAM
        );
        assert_eq!(l.dcgmModuleGetStatuses().unwrap()(h, &mut st), DCGM_ST_OK);
        assert_eq!(
            st.statuses[DcgmModuleIdHealth as usize].status,
            DcgmModuleStatusDenylisted
        );
        assert_eq!(
            l.dcgmHealthSet().unwrap()(h, ALL, DCGM_HEALTH_WATCH_ALL),
            DCGM_ST_MODULE_NOT_LOADED
        );
        let mut name: *const c_char = std::ptr::null();
        assert_eq!(
            l.dcgmModuleIdToName().unwrap()(DcgmModuleIdDiag, &mut name),
            DCGM_ST_OK
        );
        assert_eq!(CStr::from_ptr(name).to_str().unwrap(), "Diag");

        let mut mem = dcgmIntrospectMemory_v1::new_versioned();
        assert_eq!(
            l.dcgmIntrospectGetHostengineMemoryUsage().unwrap()(h, &mut mem, 0),
            DCGM_ST_OK
        );
        assert!(mem.bytesUsed > 1 << 20);
        let mut cpu = dcgmIntrospectCpuUtil_v1::new_versioned();
        assert_eq!(
            l.dcgmIntrospectGetHostengineCpuUtilization().unwrap()(h, &mut cpu, 0),
            DCGM_ST_OK
        );
        assert!(
            cpu.total > 0.0 && cpu.total < 1.0 && (cpu.kernel + cpu.user - cpu.total).abs() < 1e-12
        );

        let mut mask = 0u64;
        assert_eq!(
            l.dcgmSelectGpusByTopology().unwrap()(h, 0b1011_0100, 3, &mut mask, 0),
            DCGM_ST_OK
        );
        assert_eq!(mask, 0b0011_0100);
        let mut p2p = Box::new(dcgmNvLinkP2PStatus_v1::new_versioned());
        assert_eq!(
            l.dcgmGetNvLinkP2PStatus().unwrap()(h, &mut *p2p),
            DCGM_ST_OK
        );
        assert_eq!(p2p.numGpus, 8);
        assert_eq!(p2p.gpus[2].linkStatus[5], DcgmNvLinkP2pStatusOK);

        let meta = l.dcgmGetErrorMeta().unwrap()(DCGM_FR_VOLATILE_DBE_DETECTED);
        assert!(!meta.is_null());
        assert_eq!((*meta).errorId, DCGM_FR_VOLATILE_DBE_DETECTED);
        assert_eq!(
            l.dcgmErrorGetCategoryByCode().unwrap()(DCGM_FR_PCI_REPLAY_RATE),
            DCGM_FR_EC_HARDWARE_PCIE
        );
        assert!(!l.dcgmErrorGetFormatMsgByCode().unwrap()(DCGM_FR_XID_ERROR).is_null());
        assert!(l.dcgmGetErrorMeta().unwrap()(DCGM_FR_ERROR_SENTINEL).is_null());
        assert_eq!(
            l.dcgmErrorGetPriorityByCode().unwrap()(DCGM_FR_ERROR_SENTINEL),
            DCGM_ERROR_UNKNOWN
        );

        // The driver is attached: attaching it again succeeds and changes nothing.
        assert_eq!(l.dcgmAttachDriver().unwrap()(h), DCGM_ST_OK);
        assert_eq!(
            l.dcgmEngineRun().unwrap()(5555, std::ptr::null(), 0),
            DCGM_ST_NOT_SUPPORTED
        );
    }
}

#[test]
fn field_summary_and_sample_ranges_come_from_the_cache() {
    let (_s, h) = Session::embedded(None, AUTO);
    let l = lib();
    let g = gpu_group(h, "summary", &[1]);
    let fg = field_group(
        h,
        "summary-fields",
        &[DCGM_FI_DEV_BOARD_POWER_WATTS, DCGM_FI_DEV_GPU_NAME],
    )
    .unwrap();
    assert_eq!(watch(h, g, fg, 10_000, 60.0, 0), DCGM_ST_OK);
    std::thread::sleep(Duration::from_millis(120));
    // SAFETY: versioned request; buffers of the announced sizes.
    unsafe {
        let mut req = dcgmFieldSummaryRequest_v1::new_versioned();
        req.fieldId = DCGM_FI_DEV_BOARD_POWER_WATTS;
        req.entityGroupId = DCGM_FE_GPU;
        req.entityId = 1;
        req.summaryTypeMask =
            DCGM_SUMMARY_MIN | DCGM_SUMMARY_MAX | DCGM_SUMMARY_AVG | DCGM_SUMMARY_COUNT;
        assert_eq!(l.dcgmGetFieldSummary().unwrap()(h, &mut req), DCGM_ST_OK);
        assert_eq!(req.response.summaryCount, 4);
        assert_eq!(req.response.fieldType, u32::from(DCGM_FT_DOUBLE));
        let v: Vec<f64> = req.response.values[..4].iter().map(|x| x.fp64).collect();
        assert!(v[0] <= v[2] && v[2] <= v[1], "{v:?}");
        assert!(v[3] >= 5.0, "{v:?}");

        req.fieldId = DCGM_FI_DEV_GPU_NAME;
        assert_eq!(
            l.dcgmGetFieldSummary().unwrap()(h, &mut req),
            DCGM_ST_FIELD_UNSUPPORTED_BY_API
        );
        req.fieldId = DCGM_FI_DEV_GPU_TEMP_CELSIUS;
        assert_eq!(
            l.dcgmGetFieldSummary().unwrap()(h, &mut req),
            DCGM_ST_NOT_WATCHED
        );

        let mut vals = vec![dcgm_sys::zeroed::<dcgmFieldValue_v1>(); 4];
        let mut n: c_int = 4;
        let f = l.dcgmGetMultipleValuesForField().unwrap();
        let rc = f(
            h,
            1,
            DCGM_FI_DEV_BOARD_POWER_WATTS,
            &mut n,
            0,
            0,
            DCGM_ORDER_ASCENDING,
            vals.as_mut_ptr(),
        );
        assert_eq!(rc, DCGM_ST_OK);
        assert_eq!(n, 4);
        assert!(vals.windows(2).all(|w| w[0].ts < w[1].ts));
        let oldest = vals[0].ts;
        n = 4;
        let rc = f(
            h,
            1,
            DCGM_FI_DEV_BOARD_POWER_WATTS,
            &mut n,
            0,
            0,
            DCGM_ORDER_DESCENDING,
            vals.as_mut_ptr(),
        );
        assert_eq!(rc, DCGM_ST_OK);
        assert!(vals.windows(2).all(|w| w[0].ts > w[1].ts));
        assert!(vals[3].ts > oldest);
        n = 4;
        let rc = f(
            h,
            1,
            DCGM_FI_DEV_GPU_TEMP_CELSIUS,
            &mut n,
            0,
            0,
            DCGM_ORDER_ASCENDING,
            vals.as_mut_ptr(),
        );
        assert_eq!(rc, DCGM_ST_NOT_WATCHED);
    }
}
