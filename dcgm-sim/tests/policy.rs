//! Policies and their callback thread through `dcgm-sys`: callbacks run on the library's
//! thread once per violation and stop after unregistering; manual mode waits for a trigger.

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::c_int;
use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use common::*;
use dcgm_sys::*;

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
