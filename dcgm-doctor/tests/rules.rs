//! Each rule on synthetic windows built from a GPU's own limits: the finding appears when its
//! cause is there, with the right GPUs and evidence, and not when it is not.

use dcgm_doctor::{Field, GpuProcess, Kind, Report, Sample, Severity, Window};

/// `secs` seconds of samples at 100 ms for `gpus`, each made by `f(gpu, index)`.
fn window(gpus: u32, secs: u32, f: impl Fn(u32, i64) -> Sample) -> Window {
    let n = i64::from(secs) * 10;
    Window::from_samples(
        (0..gpus)
            .flat_map(|g| (0..n).map(move |i| (g, i)))
            .map(|(g, i)| f(g, i)),
    )
}

/// A busy GPU of known limits: 1500 MHz of a 1500 MHz maximum, 400 W of a 500 W limit.
fn busy(g: u32, i: i64) -> Sample {
    Sample::new(i * 100, g)
        .with(Field::GpuUtil, 99.0)
        .with(Field::SmActive, 0.9)
        .with(Field::GrActive, 0.99)
        .with(Field::TensorActive, 0.7)
        .with(Field::DramActive, 0.2)
        .with(Field::SmClock, 1500.0)
        .with(Field::SmMaxClock, 1500.0)
        .with(Field::Power, 400.0)
        .with(Field::PowerLimit, 500.0)
        .with(Field::FbUsed, 20_000.0)
        .with(Field::FbTotal, 80_000.0)
        .with(Field::ClockEventReasons, 0.0)
}

fn kinds(r: &Report) -> Vec<Kind> {
    r.findings.iter().map(|f| f.kind).collect()
}

#[test]
fn a_busy_healthy_gpu_is_compute_bound_and_nothing_worse() {
    let r = dcgm_doctor::judge(&window(1, 10, busy));
    assert_eq!(kinds(&r), [Kind::ComputeBound]);
    assert_eq!(r.worst(), Some(Severity::Info));
}

#[test]
fn dram_busy_with_idle_pipes_is_memory_bandwidth_bound() {
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
        busy(g, i)
            .with(Field::SmActive, 0.6)
            .with(Field::DramActive, 0.85)
            .with(Field::TensorActive, 0.0)
            .with(Field::Fp32Active, 0.15)
    }));
    let f = r
        .of_kind(Kind::MemoryBandwidthBound)
        .next()
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    assert!((f.evidence("dram_active_mean").unwrap() - 0.85).abs() < 1e-9);
    assert!(f.explanation.contains("fp32_active"), "{}", f.explanation);
}

#[test]
fn the_straggler_among_eight_gpus_is_named_by_id() {
    // GPU 5 runs at two thirds of the clock of its peers under the same load.
    let r = dcgm_doctor::judge(&window(8, 10, |g, i| {
        let s = busy(g, i);
        if g == 5 {
            s.with(Field::SmClock, 1000.0)
        } else {
            s
        }
    }));
    let s: Vec<_> = r.of_kind(Kind::Straggler).collect();
    assert_eq!(s.len(), 1, "{:?}", kinds(&r));
    assert_eq!(s[0].gpus, [5]);
    assert_eq!(s[0].severity, Severity::Problem);
}

#[test]
fn gpus_running_alike_have_no_straggler() {
    let r = dcgm_doctor::judge(&window(8, 10, busy));
    assert!(r.of_kind(Kind::Straggler).next().is_none());
    assert!(!r.not_judged.iter().any(|n| n.kind == Kind::Straggler));
}

#[test]
fn two_processes_on_a_gpu_are_listed_with_pids_names_and_memory() {
    let r = dcgm_doctor::judge(&window(2, 5, |g, i| {
        let mut s = busy(g, i);
        let mut ps = vec![GpuProcess {
            pid: 100 + g,
            name: Some("train".into()),
            memory_mib: Some(10_000),
            sm_util: None,
        }];
        if g == 1 {
            ps.push(GpuProcess {
                pid: 4242,
                name: Some("notebook".into()),
                memory_mib: Some(3_000),
                sm_util: None,
            });
        }
        s.processes = Some(ps);
        s
    }));
    let f: Vec<_> = r.of_kind(Kind::SharedGpu).collect();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].gpus, [1]);
    for part in ["101 (train, 10000 MiB)", "4242 (notebook, 3000 MiB)"] {
        assert!(f[0].explanation.contains(part), "{}", f[0].explanation);
    }
}

#[test]
fn an_xid_and_a_double_bit_error_in_the_window_are_hardware_errors() {
    let r = dcgm_doctor::judge(&window(1, 5, |g, i| {
        let mut s = busy(g, i).with(Field::EccDbe, if i < 20 { 0.0 } else { 1.0 });
        if i >= 30 {
            s = s.with(Field::Xid, 79.0);
        }
        s
    }));
    let f = r
        .of_kind(Kind::HardwareErrors)
        .next()
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    assert_eq!(f.severity, Severity::Problem);
    assert_eq!(f.evidence("ecc_dbe_new"), Some(1.0));
    assert!(f.explanation.contains("XID 79"), "{}", f.explanation);
    assert_eq!((f.start_ms, f.end_ms), (2000, 3000));
}

#[test]
fn an_xid_latched_before_the_window_is_not_an_error_in_it() {
    let r = dcgm_doctor::judge(&window(1, 5, |g, i| busy(g, i).with(Field::Xid, 13.0)));
    assert!(r.of_kind(Kind::HardwareErrors).next().is_none());
}

#[test]
fn a_power_cap_that_costs_clock_is_a_warning_with_the_time_lost() {
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
        busy(g, i)
            .with(Field::ClockEventReasons, 4.0)
            .with(Field::SmClock, 1100.0)
            .with(Field::Power, 495.0)
            .with(Field::PowerViolation, i as f64 * 1e8)
    }));
    let f = r
        .of_kind(Kind::PowerCapped)
        .next()
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    assert_eq!(f.severity, Severity::Warning);
    let lost = f.evidence("violation_time").unwrap();
    assert!((lost - 9.9).abs() < 1e-6, "{lost}");
    assert!(f.evidence("power_to_limit").unwrap() > 0.95);
}

#[test]
fn a_hardware_thermal_slowdown_is_a_problem() {
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
        busy(g, i)
            .with(Field::ClockEventReasons, 0x40 as f64)
            .with(Field::SmClock, 900.0)
    }));
    let f = r
        .of_kind(Kind::ThermalThrottled)
        .next()
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    assert_eq!(f.severity, Severity::Problem);
    assert!(f.evidence("clock_loss").unwrap() > 0.3);
}

#[test]
fn memory_held_while_idle_is_judged_against_the_gpus_own_size() {
    let idle = |g: u32, i: i64, used: f64| {
        Sample::new(i * 100, g)
            .with(Field::GpuUtil, 0.0)
            .with(Field::SmActive, 0.0)
            .with(Field::FbUsed, used)
            .with(Field::FbTotal, 24_000.0)
    };
    // 12 GB of a 24 GB card is held; 1 GB is a context.
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| idle(g, i, 12_000.0)));
    assert_eq!(kinds(&r), [Kind::MemoryHeldIdle]);
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| idle(g, i, 1_000.0)));
    assert!(r.findings.is_empty(), "{:?}", kinds(&r));
}

#[test]
fn pcie_judged_against_a_known_link_is_bound_only_when_busy_on_that_link() {
    let copy = |g: u32, i: i64, bytes: f64| {
        Sample::new(i * 100, g)
            .with(Field::GpuUtil, 45.0)
            .with(Field::SmActive, 0.0)
            .with(Field::GrActive, 0.0)
            .with(Field::PcieRxBytes, bytes)
            .with(Field::PcieLinkGen, 4.0)
            .with(Field::PcieLinkWidth, 16.0)
    };
    // Gen4 x16 moves about 31.5 GB/s a direction: 20 GB/s is busy, 2 GB/s is not.
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| copy(g, i, 20e9)));
    let f = r
        .of_kind(Kind::PcieTransferBound)
        .next()
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    let share = f.evidence("pcie_link_share").unwrap();
    assert!(share > 0.5 && share < 0.7, "{share}");
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| copy(g, i, 2e9)));
    assert!(
        r.of_kind(Kind::PcieTransferBound).next().is_none(),
        "{:?}",
        kinds(&r)
    );
}

#[test]
fn a_periodic_stall_reports_its_period_and_duty_cycle() {
    // Busy 0.6 s of every 2 s for 20 s.
    let r = dcgm_doctor::judge(&window(1, 20, |g, i| {
        let on = i % 20 < 6;
        busy(g, i)
            .with(Field::GpuUtil, if on { 99.0 } else { 0.0 })
            .with(Field::SmActive, if on { 0.9 } else { 0.0 })
    }));
    let f = r
        .of_kind(Kind::InputStarved)
        .next()
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    assert!((f.evidence("period").unwrap() - 2.0).abs() < 0.15);
    assert!((f.evidence("duty_cycle").unwrap() - 0.3).abs() < 0.05);
    assert_eq!(f.severity, Severity::Problem);
}

#[test]
fn blank_readings_are_unknown_and_give_no_finding() {
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| Sample::new(i * 100, g)));
    assert!(r.findings.is_empty());
    assert!(r.not_judged.len() >= 8, "{:?}", r.not_judged);
}

#[test]
fn a_gpu_that_stops_reporting_mid_window_is_reported_and_judged_up_to_then() {
    // GPU 2 of 4 falls off after 4 of 10 seconds.
    let samples = (0..4u32)
        .flat_map(|g| (0..100).map(move |i| (g, i)))
        .filter(|&(g, i)| g != 2 || i < 40)
        .map(|(g, i)| busy(g, i));
    let r = dcgm_doctor::judge(&Window::from_samples(samples));
    assert_eq!(r.stopped.len(), 1, "{:?}", r.stopped);
    assert_eq!((r.stopped[0].gpu, r.stopped[0].last_ms), (2, 3900));
    assert!(r.of_kind(Kind::ComputeBound).any(|f| f.gpus == [2]));
}

#[test]
fn a_gpu_running_another_program_is_not_a_straggler_of_the_job_beside_it() {
    // GPUs 0-6 run a training job; GPU 7, half as busy, serves inference.
    let r = dcgm_doctor::judge(&window(8, 10, |g, i| {
        let mut s = busy(g, i);
        let name = if g == 7 {
            s = s.with(Field::GpuUtil, 40.0).with(Field::SmClock, 1000.0);
            "tritonserver"
        } else {
            "python3 train.py"
        };
        s.processes = Some(vec![GpuProcess {
            pid: 100 + g,
            name: Some(name.into()),
            memory_mib: None,
            sm_util: None,
        }]);
        s
    }));
    assert!(
        r.of_kind(Kind::Straggler).next().is_none(),
        "{:?}",
        kinds(&r)
    );
}

/// Utilisation in bursts shorter than the samples: `base + swing` and `base - swing`
/// alternating, the SMs busy in proportion.
fn bursty(base: f64, swing: f64) -> impl Fn(u32, i64) -> Sample {
    move |g, i| {
        let u = if i % 2 == 0 {
            base + swing
        } else {
            base - swing
        };
        busy(g, i)
            .with(Field::GpuUtil, u)
            .with(Field::SmActive, u / 110.0)
    }
}

#[test]
fn work_in_bursts_shorter_than_the_samples_is_input_starved() {
    let r = dcgm_doctor::judge(&window(1, 10, bursty(63.0, 25.0)));
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == Kind::InputStarved)
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    assert_eq!(f.severity, Severity::Warning);
    // Steady work below full use, and full use that swings a little, are not.
    for (base, swing) in [(63.0, 2.0), (95.0, 4.0)] {
        let r = dcgm_doctor::judge(&window(1, 10, bursty(base, swing)));
        assert!(
            !kinds(&r).contains(&Kind::InputStarved),
            "{base} ± {swing}: {:?}",
            kinds(&r)
        );
    }
}

/// A real H200 (2026-12-01, `dmon -d 100 --json` on the real libdcgm 4.6.0) during a training
/// step fed by a DataLoader with CPU-heavy transforms and `num_workers=0`
/// (`dcgm-doctor/workloads/starved.py starved`): 63 % busy, no idle sample.
#[test]
fn the_h200_loader_with_no_workers_is_input_starved() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/h200-loader-num-workers-0.jsonl"
    );
    let file = std::fs::File::open(path).unwrap();
    let trace = dcgm_doctor::replay::read(std::io::BufReader::new(file)).unwrap();
    let r = dcgm_doctor::judge(&trace.window);
    assert!(kinds(&r).contains(&Kind::InputStarved), "{:?}", r.findings);
}

#[test]
fn the_report_lists_each_process_with_its_memory_and_sm_share() {
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
        let mut s = busy(g, i).with(Field::FbTotal, 143_771.0);
        let mut ps = vec![GpuProcess {
            pid: 901,
            name: Some("python3".into()),
            memory_mib: Some(2658),
            sm_util: (i >= 10).then_some(4.0 + i as f64 / 100.0),
        }];
        // A second process for the last half of the window.
        if i >= 50 {
            ps.push(GpuProcess {
                pid: 924,
                name: None,
                memory_mib: Some(880),
                sm_util: None,
            });
        }
        s.processes = Some(ps);
        s
    }));
    let p: Vec<_> = r.processes.iter().map(|p| (p.gpu, p.pid)).collect();
    assert_eq!(p, [(0, 901), (0, 924)]);
    let (a, b) = (&r.processes[0], &r.processes[1]);
    assert_eq!(a.memory_mib, Some(2658));
    assert!((a.memory_share.unwrap() - 2658.0 / 143_771.0).abs() < 1e-9);
    assert!(
        (a.sm_util.unwrap() - 4.99).abs() < 1e-9,
        "the latest: {a:?}"
    );
    assert_eq!(a.listed_share, 1.0);
    assert_eq!((b.sm_util, b.listed_share), (None, 0.5));
    assert_eq!(b.first_ms, 5000);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["processes"][0]["pid"], 901);
    assert_eq!(json["processes"][1]["sm_util"], serde_json::Value::Null);
    let page = dcgm_doctor::html::render(&window(1, 1, busy), &r);
    assert!(
        page.contains("<caption>Processes</caption>"),
        "no process table"
    );
}
