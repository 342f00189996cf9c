//! Policies: callbacks (a panicking one included), channels, manual-mode triggers, and the
//! long-lived objects' Send + Sync, against dcgm-sim.
//!
//! The simulator is process-global and reads its configuration (`dcgmSimConfigure`) at the
//! next `dcgmInit`: every test takes the simulator lock, configures, opens its handle, and
//! closes every handle before returning.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use dcgm::*;

#[test]
fn panicking_policy_callback_is_caught_and_later_events_arrive() {
    let _sim = sim(Some(
        r#"{"events":[
            {"at_ms":400,"gpu":0,"kind":"xid","value":13},
            {"at_ms":700,"gpu":0,"kind":"xid","value":31},
            {"at_ms":1000,"gpu":0,"kind":"xid","value":43},
            {"at_ms":1900,"gpu":0,"kind":"xid","value":45}
        ]}"#,
    ));
    quiet_deliberate_panics();
    let t0 = Instant::now();
    let h = open(OperationMode::Auto);
    let g = Group::with_gpus(&h, "beyond-policy-cb", &[0]).unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (c, s) = (calls.clone(), seen.clone());
    let reg = g
        .policy_register(PolicyCondition::XID, move |v| {
            if c.fetch_add(1, Ordering::SeqCst) == 0 {
                panic!("deliberate panic in a policy callback (expected by the test)");
            }
            s.lock().unwrap().push(v);
        })
        .unwrap();
    assert_eq!(reg.conditions(), PolicyCondition::XID);

    assert!(wait_for(Duration::from_secs(3), || seen
        .lock()
        .unwrap()
        .len()
        >= 2));
    assert_eq!(reg.panics(), 1);
    assert_eq!(reg.dropped(), 0);
    {
        let seen = seen.lock().unwrap();
        let xids: Vec<ViolationDetail> = seen.iter().map(|v| v.detail).collect();
        assert_eq!(
            xids,
            [
                ViolationDetail::Xid { xid: 31 },
                ViolationDetail::Xid { xid: 43 }
            ]
        );
        assert!(
            seen.iter()
                .all(|v| v.gpu == 0 && v.condition == PolicyCondition::XID)
        );
        assert!(seen.iter().all(|v| v.timestamp_us > 0));
    }

    // Dropping the registration stops delivery: the event at 1.9 s is not seen.
    until(t0, 1300);
    drop(reg);
    until(t0, 2400);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert_eq!(seen.lock().unwrap().len(), 2);
    drop(g);
    h.close().unwrap();
}

#[test]
fn policy_channel_delivers_typed_violations_and_counts_drops() {
    let _sim = sim(Some(
        r#"{"events":[
            {"at_ms":500,"gpu":2,"kind":"dbe","value":1},
            {"at_ms":600,"gpu":2,"kind":"thermal","value":95},
            {"at_ms":650,"gpu":3,"kind":"thermal","value":80},
            {"at_ms":700,"gpu":3,"kind":"xid","value":79}
        ]}"#,
    ));
    let h = open(OperationMode::Auto);
    let g = Group::with_gpus(&h, "beyond-policy-ch", &[2, 3]).unwrap();
    let policy = Policy {
        dbe: true,
        thermal_max_c: Some(90),
        xid: true,
        ..Policy::default()
    };
    g.policy_set(&policy).unwrap();
    assert_eq!(g.policy_get().unwrap(), vec![(2, policy), (3, policy)]);

    let (reg, rx) = g.policy_subscribe(PolicyCondition::ALL).unwrap();
    // A second group on the same GPUs, with a one-slot channel nobody reads.
    let g2 = Group::with_gpus(&h, "beyond-policy-ch2", &[2, 3]).unwrap();
    let (small, _rx2) = g2
        .policy_subscribe_with_capacity(PolicyCondition::ALL, 1)
        .unwrap();

    // Overlapping registrations on one group are refused (DCGM unregisters per condition).
    let e = g.policy_subscribe(PolicyCondition::XID).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(matches!(
        g.policy_subscribe(PolicyCondition::empty()),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        g.policy_subscribe_with_capacity(PolicyCondition::POWER, 0),
        Err(Error::InvalidArgument(_))
    ));

    let mut got = Vec::new();
    while got.len() < 3 {
        match rx.recv_timeout(Duration::from_secs(3)) {
            Ok(v) => got.push(v),
            Err(e) => panic!("only {} violations arrived ({e}): {got:?}", got.len()),
        }
    }
    let details: Vec<(u32, ViolationDetail)> = got.iter().map(|v| (v.gpu, v.detail)).collect();
    assert_eq!(
        details,
        [
            (
                2,
                ViolationDetail::Dbe {
                    location: DbeLocation::Device,
                    count: 1
                }
            ),
            (2, ViolationDetail::Thermal { temperature_c: 95 }),
            (3, ViolationDetail::Xid { xid: 79 }),
        ],
        "the 80 °C event is under the policy's 90 °C"
    );
    assert!(got[1].to_string().contains("95"), "{}", got[1]);
    assert!(wait_for(Duration::from_secs(2), || small.dropped() == 2));
    assert_eq!(reg.dropped(), 0);
    reg.unregister().unwrap();
    small.unregister().unwrap();
    // Both are gone: a new registration on the same group is accepted.
    let again = g.policy_register(PolicyCondition::XID, |_| {}).unwrap();
    drop(again);
    drop((g, g2));
    h.close().unwrap();
}

#[test]
fn manual_mode_delivers_on_trigger() {
    let _sim = sim(Some(
        r#"{"events":[{"at_ms":300,"gpu":5,"kind":"power","value":720}]}"#,
    ));
    let t0 = Instant::now();
    let h = open(OperationMode::Manual);
    let g = Group::with_gpus(&h, "beyond-policy-manual", &[5]).unwrap();
    let (reg, rx) = g.policy_subscribe(PolicyCondition::POWER).unwrap();
    until(t0, 600);
    assert!(
        rx.recv_timeout(Duration::from_millis(100)).is_err(),
        "manual mode checks nothing by itself"
    );
    h.policy_trigger().unwrap();
    let v = rx
        .recv_timeout(Duration::from_secs(2))
        .expect("the triggered violation");
    assert_eq!(v.detail, ViolationDetail::Power { watts: 720 });
    assert!(v.time() > std::time::UNIX_EPOCH);
    drop(reg);
    drop(g);
    h.close().unwrap();
}

#[test]
fn long_lived_objects_are_send_and_sync() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<PolicyRegistration>();
    send_sync::<PolicyViolation>();
    send_sync::<DiagResponse>();
    send_sync::<DiagRequest>();
    send_sync::<HealthReport>();
}
