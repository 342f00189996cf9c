//! Health, diagnostics, policies, statistics, configuration, profiling, topology, NVLink, MIG,
//! CPUs, introspection and modules, against dcgm-sim.
//!
//! The simulator is process-global and reads its configuration (`dcgmSimConfigure`) at the
//! next `dcgmInit`: every test takes the simulator lock, configures, opens its handle, and
//! closes every handle before returning.

use dcgm::raw::Binding;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dcgm::raw::sys::*;
use dcgm::*;

/// Takes the simulator for one test and configures it (`None`: the default node).
fn sim(json: Option<&str>) -> testing::SimulatorLock {
    testing::SimulatorLock::new(json).expect("configure dcgm-sim")
}

fn open(mode: OperationMode) -> Handle {
    Handle::builder()
        .library_path(testing::simulator_path())
        .operation_mode(mode)
        .embedded()
        .expect("embedded simulator handle")
}

fn code(e: &Error) -> dcgmReturn_t {
    e.code().raw()
}

/// Sleeps until `ms` milliseconds after `t0`.
fn until(t0: Instant, ms: u64) {
    let target = t0 + Duration::from_millis(ms);
    let now = Instant::now();
    if target > now {
        std::thread::sleep(target - now);
    }
}

/// Keeps the panic the policy test provokes out of the test output; other panics still print.
fn quiet_deliberate_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let deliberate = info
                .payload()
                .downcast_ref::<&str>()
                .is_some_and(|m| m.starts_with("deliberate panic"));
            if !deliberate {
                previous(info);
            }
        }));
    });
}

/// Polls `f` every 10 ms until it is true or `limit` passes.
fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    f()
}

// ---------------------------------------------------------------------------------------------
// Health

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
fn long_lived_objects_are_send_and_sync() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<PolicyRegistration>();
    send_sync::<PolicyViolation>();
    send_sync::<DiagResponse>();
    send_sync::<DiagRequest>();
    send_sync::<HealthReport>();
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

// ---------------------------------------------------------------------------------------------
// Diagnostics

#[test]
fn diagnostic_levels_and_typed_results() {
    let _sim = sim(Some(
        r#"{"events":[{"at_ms":0,"gpu":1,"kind":"dbe","value":2}]}"#,
    ));
    let h = open(OperationMode::Auto);
    let g = Group::with_gpus(&h, "beyond-diag", &[0, 1]).unwrap();

    let counts: Vec<usize> = [
        DiagLevel::Short,
        DiagLevel::Medium,
        DiagLevel::Long,
        DiagLevel::ExtraLong,
    ]
    .iter()
    .map(|l| g.run_diagnostic(*l).unwrap().tests.len())
    .collect();
    assert_eq!(counts, vec![1, 3, 7, 9]);

    let short = g.run_diagnostic(DiagLevel::Short).unwrap();
    assert_eq!(short.tests[0].name, "software");
    assert_eq!(short.overall(), DiagResult::Pass);

    let r = g.run_diagnostic(DiagLevel::Medium).unwrap();
    assert_eq!(r.overall(), DiagResult::Fail);
    assert_eq!(r.entities.len(), 2);
    assert!(
        r.entities
            .iter()
            .all(|e| e.serial.is_some() && e.sku_device_id.is_some())
    );
    assert!(!r.dcgm_version.is_empty());
    assert_eq!(r.driver_version, "570.133.20");
    assert!(r.other_errors.is_empty());
    let mem = r.test("memory").expect("memory test");
    assert_eq!(mem.result, DiagResult::Fail);
    assert_eq!(mem.category.as_deref(), Some("Hardware"));
    assert_eq!(
        mem.results,
        vec![
            (Entity::gpu(0), DiagResult::Pass),
            (Entity::gpu(1), DiagResult::Fail)
        ]
    );
    assert_eq!(mem.errors.len(), 1);
    let err = &mem.errors[0];
    assert_eq!(err.entity, Some(Entity::gpu(1)));
    assert_eq!(err.code, DCGM_FR_VOLATILE_DBE_DETECTED);
    assert_eq!(err.code_name, Some("DCGM_FR_VOLATILE_DBE_DETECTED"));
    assert_eq!(err.severity, Some(ErrorSeverity::Isolate));
    assert_eq!(err.category, Some(ErrorCategory::HardwareMemory));
    assert_eq!(r.test("pcie").unwrap().result, DiagResult::Pass);

    // Named tests, through dcgmActionValidate_v2.
    let req = DiagRequest::tests(["pcie", "memory"])
        .param("memory.minimum_allocation_percentage=50")
        .verbose(true)
        .fail_early(true)
        .timeout(Duration::from_secs(60));
    let r = g.run_diag(&req).unwrap();
    let names: Vec<&str> = r.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["pcie", "memory"]);
    let r = g.run_diag(&DiagRequest::level(DiagLevel::Long)).unwrap();
    assert_eq!(r.tests.len(), 7);

    // MIG GPUs skip the hardware tests, with an explanation.
    let mig = Group::with_gpus(&h, "beyond-diag-mig", &[7]).unwrap();
    let r = mig.run_diagnostic(DiagLevel::Medium).unwrap();
    let pcie = r.test("pcie").unwrap();
    assert_eq!(pcie.result, DiagResult::Skip);
    assert!(
        pcie.info.iter().any(|m| m.contains("MIG")),
        "{:?}",
        pcie.info
    );

    // Wrong inputs.
    let e = g
        .run_diag(&DiagRequest::tests(["no_such_test"]))
        .unwrap_err();
    assert_eq!(code(&e), DCGM_ST_BADPARAM, "{e}");
    let many: Vec<String> = (0..21).map(|i| format!("t{i}")).collect();
    assert!(matches!(
        g.run_diag(&DiagRequest::tests(many)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        g.run_diag(&DiagRequest::level(DiagLevel::Short).param("no-equals-sign")),
        Err(Error::InvalidArgument(_))
    ));
    let empty = Group::create(&h, "beyond-diag-empty", GroupType::Empty).unwrap();
    let e = empty.run_diagnostic(DiagLevel::Short).unwrap_err();
    assert_eq!(code(&e), DCGM_ST_GROUP_IS_EMPTY, "{e}");

    h.stop_diagnostic().unwrap();
    drop((g, mig, empty));
    h.close().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Policies

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

// ---------------------------------------------------------------------------------------------
// Process and job statistics

#[test]
fn pid_and_job_statistics() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let all = Group::all_gpus(&h);
    let e = all.pid_info(4242).unwrap_err();
    assert_eq!(code(&e), DCGM_ST_NOT_WATCHED, "{e}");
    assert!(e.hint().is_some());
    all.watch_pid_fields(WatchOptions::default()).unwrap();
    h.update_all_fields(true).unwrap();

    let p = all.pid_info(4242).unwrap();
    assert_eq!(p.pid, 4242);
    assert_eq!(p.gpus.len(), 7);
    assert_eq!(
        p.gpus.iter().map(|g| g.gpu.unwrap()).collect::<Vec<_>>(),
        (0..7).collect::<Vec<_>>()
    );
    let g0 = &p.gpus[0];
    assert!(g0.usage.energy_joules.is_some_and(|j| j > 0.0));
    assert_eq!(g0.usage.max_memory_bytes, Some(62_000 * 1024 * 1024));
    assert!(g0.usage.start_time.is_some());
    assert_eq!(g0.usage.end_time, None, "still running");
    assert!(g0.usage.sm_util.average.is_some());
    assert_eq!(p.summary.gpu, None);
    let e = all.pid_info(1).unwrap_err();
    assert_eq!(code(&e), DCGM_ST_NO_DATA, "{e}");
    assert!(matches!(
        all.watch_pid_fields(WatchOptions {
            update_interval: Duration::ZERO,
            ..Default::default()
        }),
        Err(Error::InvalidArgument(_))
    ));

    let g = Group::with_gpus(&h, "beyond-job", &[0, 1]).unwrap();
    g.watch_job_fields(WatchOptions::default()).unwrap();
    g.job_start("train-1").unwrap();
    let e = g.job_start("train-1").unwrap_err();
    assert_eq!(code(&e), DCGM_ST_DUPLICATE_KEY, "{e}");
    std::thread::sleep(Duration::from_millis(50));
    h.update_all_fields(true).unwrap();
    let running = h.job_stats("train-1").unwrap();
    assert_eq!(running.gpus.len(), 2);
    assert_eq!(running.summary.usage.end_time, None);
    h.job_stop("train-1").unwrap();
    let s = h.job_stats("train-1").unwrap();
    assert!(s.summary.usage.end_time.is_some() && s.summary.usage.start_time.is_some());
    assert!(s.summary.usage.end_time >= s.summary.usage.start_time);
    assert!(s.gpus.iter().all(|g| !g.compute_processes.is_empty()));
    h.job_remove("train-1").unwrap();
    assert_eq!(code(&h.job_stats("train-1").unwrap_err()), DCGM_ST_NO_DATA);

    let long_id = "x".repeat(MAX_JOB_ID_LEN + 1);
    assert!(matches!(
        g.job_start(&long_id),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(h.job_stop(""), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        h.job_stats("a\0b"),
        Err(Error::InvalidArgument(_))
    ));
    g.job_start(&"y".repeat(MAX_JOB_ID_LEN)).unwrap();
    g.job_start("second").unwrap();
    h.job_remove_all().unwrap();
    assert_eq!(code(&h.job_stats("second").unwrap_err()), DCGM_ST_NO_DATA);
    drop((all, g));
    h.close().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Configuration

#[test]
fn config_set_is_reflected_and_errors_name_the_gpu() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let g = Group::with_gpus(&h, "beyond-config", &[0, 1]).unwrap();
    let before = g.config_get(ConfigKind::Target).unwrap();
    assert_eq!(before.len(), 2);
    assert!(
        before
            .iter()
            .all(|c| c.power_limit_w.is_none() && c.ecc_mode.is_none())
    );

    let want = GpuConfig {
        power_limit_w: Some(500),
        sm_app_clock_mhz: Some(1500),
        compute_mode: Some(ComputeMode::ExclusiveProcess),
        ..GpuConfig::default()
    };
    g.config_set(&want).unwrap();
    let target = g.config_get(ConfigKind::Target).unwrap();
    assert_eq!(target.iter().map(|c| c.gpu).collect::<Vec<_>>(), [0, 1]);
    for c in &target {
        assert_eq!(c.power_limit_w, Some(500));
        assert_eq!(c.sm_app_clock_mhz, Some(1500));
        assert_eq!(c.compute_mode, Some(ComputeMode::ExclusiveProcess));
        assert_eq!(c.ecc_mode, None, "not set");
        assert_eq!(c.mem_app_clock_mhz, None);
    }
    let current = g.config_get(ConfigKind::Current).unwrap();
    assert!(
        current
            .iter()
            .all(|c| c.power_limit_w == Some(500) && c.ecc_mode == Some(true))
    );
    assert_eq!(
        h.system().device_attributes(1).unwrap().power_limit_w,
        Some(500)
    );
    g.config_enforce().unwrap();

    // 100 W is below what the GPUs accept: the error lists each GPU.
    let e = g
        .config_set(&GpuConfig {
            power_limit_w: Some(100),
            ..GpuConfig::default()
        })
        .unwrap_err();
    assert_eq!(code(&e), DCGM_ST_BADPARAM);
    let msg = e.to_string();
    assert!(msg.contains("GPU 0") && msg.contains("GPU 1"), "{msg}");
    assert!(matches!(
        g.config_set(&GpuConfig::default()),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        g.config_set(&GpuConfig {
            power_limit_w: Some(u32::MAX),
            ..GpuConfig::default()
        }),
        Err(Error::InvalidArgument(_))
    ));
    let empty = Group::create(&h, "beyond-config-empty", GroupType::Empty).unwrap();
    assert_eq!(empty.config_get(ConfigKind::Current).unwrap(), vec![]);
    drop((g, empty));
    h.close().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Profiling

#[test]
fn profiling_metric_groups_and_pause() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let groups = Group::all_gpus(&h).profiling_metric_groups().unwrap();
    assert!(!groups.is_empty());
    assert!(groups.iter().all(|g| !g.fields.is_empty()));
    assert!(groups.iter().flat_map(|g| &g.fields).all(|f| f.is_known()));
    assert_eq!(h.system().profiling_metric_groups(3).unwrap(), groups);
    let empty = Group::create(&h, "beyond-prof-empty", GroupType::Empty).unwrap();
    assert!(matches!(
        empty.profiling_metric_groups(),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(
        code(&h.system().profiling_metric_groups(99).unwrap_err()),
        DCGM_ST_BADPARAM
    );
    // The simulated GPUs are Hopper: their metrics come from GPM, which cannot be paused.
    assert_eq!(
        code(&h.profiling_pause().unwrap_err()),
        DCGM_ST_NOT_SUPPORTED
    );
    assert_eq!(
        code(&h.profiling_resume().unwrap_err()),
        DCGM_ST_NOT_SUPPORTED
    );
    drop(empty);
    h.close().unwrap();
}

#[test]
fn profiling_held_by_another_client_says_what_to_do() {
    let _sim = sim(Some(r#"{"faults":{"profiling_in_use":true}}"#));
    let h = open(OperationMode::Auto);
    let e = Group::all_gpus(&h).profiling_metric_groups().unwrap_err();
    assert_eq!(code(&e), DCGM_ST_IN_USE);
    assert!(e.hint().is_some_and(|t| t.contains("profil")), "{e}");
    h.close().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Topology, NVLink, MIG, CPUs

#[test]
fn topology_of_devices_and_groups() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let sys = h.system();
    let t = sys.device_topology(0).unwrap();
    assert_eq!(t.paths.len(), 7);
    assert_eq!(t.cpu_affinity.len(), 56);
    assert!(
        t.paths
            .iter()
            .all(|p| p.nvlinks == 18 && p.local_links == (1 << 18) - 1)
    );
    assert_eq!(
        t.paths.iter().find(|p| p.gpu == 1).unwrap().pci,
        PciPath::Cpu
    );
    assert_eq!(
        t.paths.iter().find(|p| p.gpu == 7).unwrap().pci,
        PciPath::System
    );
    assert!(sys.device_topology(99).is_err());

    let near = Group::with_gpus(&h, "beyond-topo-near", &[0, 1]).unwrap();
    let tn = near.topology().unwrap();
    assert!(tn.numa_optimal);
    assert_eq!(tn.slowest_pci, PciPath::Cpu);
    let far = Group::with_gpus(&h, "beyond-topo-far", &[0, 7]).unwrap();
    let tf = far.topology().unwrap();
    assert!(!tf.numa_optimal);
    assert_eq!(tf.slowest_pci, PciPath::System);
    assert_eq!(tf.slowest_nvlinks, 18);
    assert_eq!(tf.cpu_affinity.len(), 112);

    assert_eq!(sys.select_gpus_by_topology(&[], 2, false).unwrap(), [0, 1]);
    assert_eq!(
        sys.select_gpus_by_topology(&[3, 5, 6], 2, true).unwrap(),
        [3, 5]
    );
    assert!(matches!(
        sys.select_gpus_by_topology(&[64], 1, false),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        sys.select_gpus_by_topology(&[0], 0, false),
        Err(Error::InvalidArgument(_))
    ));
    drop((near, far));
    h.close().unwrap();
}

#[test]
fn nvlink_states_and_peer_to_peer() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let s = h.system().nvlink_status().unwrap();
    assert_eq!(s.gpus.len(), 8);
    assert!(
        s.gpus
            .iter()
            .all(|(_, l)| l.len() == 18 && l.iter().all(|x| *x == LinkState::Up))
    );
    assert_eq!(s.switches.len(), 4);
    assert!(
        s.switches
            .iter()
            .all(|(_, l)| !l.is_empty() && l.last() != Some(&LinkState::NotSupported))
    );
    assert!(s.unhealthy_links().is_empty());
    let p2p = h.system().nvlink_p2p_status().unwrap();
    assert_eq!(p2p.len(), 8);
    assert!(p2p.iter().all(|g| {
        g.peers.len() == 7
            && g.peers
                .iter()
                .all(|(p, st)| *p != g.gpu && *st == P2pStatus::Ok)
    }));
    h.close().unwrap();
}

#[test]
fn mig_hierarchy_is_a_tree() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let tree = h.system().mig_hierarchy().unwrap();
    assert_eq!(tree.len(), 1, "only GPU 7 is in MIG mode");
    let gpu = &tree[0];
    assert_eq!(gpu.gpu, 7);
    assert_eq!(gpu.uuid, h.system().device_attributes(7).unwrap().uuid);
    assert_eq!(
        gpu.instances.iter().map(|i| i.slices).collect::<Vec<_>>(),
        [Some(3), Some(2), Some(1)]
    );
    assert_eq!(
        gpu.instances
            .iter()
            .map(|i| i.compute_instances.len())
            .collect::<Vec<_>>(),
        [1, 2, 1]
    );
    let instances = h
        .system()
        .entities(EntityGroup::GpuInstance, false)
        .unwrap();
    let ids: Vec<u32> = gpu.instances.iter().map(|i| i.entity_id).collect();
    assert_eq!(instances.iter().map(|e| e.id).collect::<Vec<_>>(), ids);
    h.close().unwrap();
}

#[test]
fn cpu_hierarchy_with_serials() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let cpus = h.system().cpu_hierarchy().unwrap();
    assert_eq!(cpus.len(), 2);
    assert!(
        cpus.iter()
            .all(|c| c.cores.len() == 56 && c.serial.is_some())
    );
    assert_eq!(cpus[0].cores[0], 0);
    assert_eq!(cpus[1].cores[0], 56);
    h.close().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Introspection, modules, GPU status

#[test]
fn introspection_modules_and_gpu_status() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let sys = h.system();
    assert!(sys.hostengine_memory_bytes().unwrap() > 1 << 20);
    let cpu = sys.hostengine_cpu_utilization().unwrap();
    assert!((0.0..=1.0).contains(&cpu.total) && (cpu.kernel + cpu.user - cpu.total).abs() < 1e-9);

    let statuses = sys.module_statuses().unwrap();
    // As libdcgm 4.6.0: the core is loaded at start, the health module on first use.
    assert!(statuses.contains(&(Module::Core, ModuleStatus::Loaded)));
    assert!(statuses.contains(&(Module::Health, ModuleStatus::NotLoaded)));
    assert!(statuses.iter().all(|(m, _)| !matches!(m, Module::Other(_))));
    sys.module_denylist(Module::Diag).unwrap();
    assert!(
        sys.module_statuses()
            .unwrap()
            .contains(&(Module::Diag, ModuleStatus::Denylisted))
    );
    let g = Group::with_gpus(&h, "beyond-denied", &[0]).unwrap();
    let e = g.run_diagnostic(DiagLevel::Short).unwrap_err();
    assert_eq!(code(&e), DCGM_ST_MODULE_NOT_LOADED);
    assert!(e.hint().is_some(), "{e}");
    assert_eq!(
        code(&sys.module_denylist(Module::Core).unwrap_err()),
        DCGM_ST_BADPARAM
    );
    assert_eq!(Module::from_raw(Module::Profiling.raw()), Module::Profiling);

    assert_eq!(sys.gpu_status(0).unwrap(), GpuStatus::Ok);
    assert_eq!(sys.gpu_status(99).unwrap(), GpuStatus::Unknown);
    assert_eq!(sys.chip_architecture(0).unwrap(), ChipArchitecture::Hopper);
    assert!(sys.chip_architecture(99).is_err());
    drop(g);
    h.close().unwrap();
}
