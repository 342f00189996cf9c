//! Health watches, checks and incidents against dcgm-sim.
//!
//! The simulator is process-global and reads its configuration (`dcgmSimConfigure`) at the
//! next `dcgmInit`: every test takes the simulator lock, configures, opens its handle, and
//! closes every handle before returning.

mod common;

use std::time::{Duration, Instant};

use common::*;
use dcgm::raw::sys::*;
use dcgm::*;

#[test]
fn health_incidents_carry_severity_and_category() {
    let _sim = sim(Some(
        r#"{"events":[
            {"at_ms":500,"gpu":2,"kind":"dbe","value":1},
            {"at_ms":500,"gpu":1,"kind":"xid","value":79},
            {"at_ms":500,"gpu":3,"kind":"sbe","value":4},
            {"at_ms":500,"gpu":4,"kind":"dbe","value":1}
        ]}"#,
    ));
    let t0 = Instant::now();
    let h = open(OperationMode::Auto);
    let g = Group::with_gpus(&h, "beyond-health", &[1, 2, 3]).unwrap();
    g.health_set(HealthSystems::MEM | HealthSystems::PCIE)
        .unwrap();
    assert_eq!(
        g.health_get().unwrap(),
        HealthSystems::MEM | HealthSystems::PCIE
    );
    let first = g.health_check().unwrap();
    assert!(first.is_healthy(), "nothing happened yet: {first:?}");

    until(t0, 900);
    let r = g.health_check().unwrap();
    assert_eq!(r.overall, HealthResult::Fail);
    // As on libdcgm 4.6.0: single-bit ECC errors raise no health incident (only the
    // diagnostics look at them), and GPU 4 is not in the group.
    assert_eq!(
        r.incidents.len(),
        2,
        "the DBE of GPU 2 and the XID 79 of GPU 1: {:#?}",
        r.incidents
    );
    let of = |gpu| {
        r.incidents
            .iter()
            .find(|i| i.entity == Entity::gpu(gpu))
            .unwrap()
    };

    let dbe = of(2);
    assert_eq!(dbe.system, HealthSystems::MEM);
    assert_eq!(dbe.result, HealthResult::Fail);
    assert_eq!(dbe.error_code, DCGM_FR_VOLATILE_DBE_DETECTED);
    assert_eq!(dbe.error_name, Some("DCGM_FR_VOLATILE_DBE_DETECTED"));
    assert_eq!(dbe.severity, Some(ErrorSeverity::Isolate));
    assert_eq!(dbe.category, Some(ErrorCategory::HardwareMemory));
    assert!(dbe.suggestion.as_deref().is_some_and(|s| !s.is_empty()));
    assert!(dbe.message.contains("GPU 2"), "{}", dbe.message);

    // XID 79 fails the GPU whatever system is watched: libdcgm reports it under "all".
    let bus = of(1);
    assert_eq!(bus.system, HealthSystems::ALL);
    assert_eq!(bus.error_name, Some("DCGM_FR_FALLEN_OFF_BUS"));
    assert_eq!(bus.severity, Some(ErrorSeverity::Isolate));
    assert_eq!(bus.category, Some(ErrorCategory::HardwareOther));

    assert!(r.incidents.iter().all(|i| i.entity != Entity::gpu(3)));

    // The state stays: the volatile DBE total is still 1 and the XID stays on record, so the
    // next check reports both again.
    assert_eq!(g.health_check().unwrap().incidents.len(), 2);

    g.health_set_with(
        HealthSystems::ALL,
        Duration::from_millis(500),
        Duration::from_secs(60),
    )
    .unwrap();
    assert_eq!(g.health_get().unwrap(), HealthSystems::ALL);
    let e = g
        .health_set_with(HealthSystems::ALL, Duration::ZERO, Duration::from_secs(60))
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    h.close().unwrap();
}

#[test]
fn health_systems_are_a_bit_set() {
    let s = HealthSystems::NVLINK | HealthSystems::THERMAL;
    assert_eq!(
        s.bits(),
        DCGM_HEALTH_WATCH_NVLINK | DCGM_HEALTH_WATCH_THERMAL
    );
    assert!(s.contains(HealthSystems::NVLINK) && !s.contains(HealthSystems::MEM));
    assert_eq!(
        s.iter().collect::<Vec<_>>(),
        vec![HealthSystems::NVLINK, HealthSystems::THERMAL]
    );
    assert_eq!((s - HealthSystems::NVLINK), HealthSystems::THERMAL);
    assert_eq!(HealthSystems::ALL.to_string(), "ALL");
    assert_eq!(HealthSystems::empty().to_string(), "-");
    assert!(HealthResult::Fail > HealthResult::Warn && HealthResult::Warn > HealthResult::Pass);
}
