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

/// One process, `pid`, on the sample's GPU.
fn with_process(mut s: Sample, pid: u32) -> Sample {
    s.processes = Some(vec![GpuProcess {
        pid,
        name: Some("python3".into()),
        memory_mib: Some(880),
        sm_util: None,
    }]);
    s
}

/// A GPU kept lightly busy by small kernels: utilisation `util` %, the SMs `fill` of the way
/// busy while the kernels run, the math pipes nearly idle.
fn small_kernels(util: f64, fill: f64) -> impl Fn(u32, i64) -> Sample {
    move |g, i| {
        busy(g, i)
            .with(Field::GpuUtil, util)
            .with(Field::GrActive, util / 100.0)
            .with(Field::SmActive, fill * util / 100.0)
            .with(Field::TensorActive, 0.0)
            .with(Field::Fp32Active, 0.003)
            .with(Field::DramActive, 0.003)
    }
}

#[test]
fn small_kernels_are_host_bound_whatever_the_utilisation() {
    // The field trace's small-batch trainer (10 %, fill 0.28), the decoding loop (41 %, 0.12),
    // and two trainers time-slicing one GPU (93 %, 0.095).
    for (util, fill) in [(10.0, 0.28), (41.0, 0.12), (93.0, 0.095)] {
        let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
            with_process(small_kernels(util, fill)(g, i), 900)
        }));
        let f = r
            .of_kind(Kind::LaunchBound)
            .next()
            .unwrap_or_else(|| panic!("{util} %: {:?}", kinds(&r)));
        assert_eq!(f.severity, Severity::Problem);
        assert!(
            (f.evidence("sm_fill").unwrap() - fill).abs() < 1e-6,
            "{f:?}"
        );
        assert_eq!(f.evidence("processes"), Some(1.0));
        for part in [
            "larger batches",
            "CUDA graph",
            "torch.compile",
            "fused",
            "host syncs",
        ] {
            assert!(f.advice.contains(part), "{part}: {}", f.advice);
        }
        // Host-bound only: not input-starved, not mostly idle, not compute-bound.
        assert_eq!(kinds(&r), [Kind::LaunchBound], "{util} %");
    }
}

#[test]
fn kernels_that_fill_the_sms_at_low_utilisation_are_not_host_bound() {
    // Fill 0.9 at 30 %: kernels of full size with the GPU waiting between them.
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
        with_process(small_kernels(30.0, 0.9)(g, i), 900)
    }));
    assert!(!kinds(&r).contains(&Kind::LaunchBound), "{:?}", kinds(&r));
    assert!(kinds(&r).contains(&Kind::InputStarved), "{:?}", kinds(&r));
}

#[test]
fn small_kernels_with_no_process_on_the_gpu_are_not_host_bound() {
    // The process lists were read and list nobody: no process keeps this GPU busy.
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
        let mut s = small_kernels(10.0, 0.28)(g, i);
        s.processes = Some(Vec::new());
        s
    }));
    assert!(!kinds(&r).contains(&Kind::LaunchBound), "{:?}", kinds(&r));
    assert!(!kinds(&r).contains(&Kind::InputStarved), "{:?}", kinds(&r));
}

#[test]
fn the_live_small_batch_report_judged_again_is_host_bound() {
    // `tests/data/h200-field/live-small-batch.json`: the doctor live on the H200 while the
    // small-batch trainer ran alone called it input-starved (utilisation 15.5 %, SM active
    // 0.043, one process). The same means, judged by the new rules, are host-bound.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/h200-field/live-small-batch.json"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let ev = |name: &str| {
        v["findings"][0]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap()["value"]
            .as_f64()
            .unwrap()
    };
    let (util, sm) = (ev("gpu_util_mean"), ev("sm_active_mean"));
    assert_eq!(v["findings"][0]["kind"], "input_starved");
    let r = dcgm_doctor::judge(&window(1, 16, |g, i| {
        with_process(small_kernels(util, sm / (util / 100.0))(g, i), 901)
    }));
    assert_eq!(kinds(&r), [Kind::LaunchBound], "{:?}", r.findings);
}

#[test]
fn bursts_of_small_kernels_are_host_bound_not_input_starved() {
    // A decoding service: 0.8 s of batch-1 decoding every 2 s.
    let r = dcgm_doctor::judge(&window(1, 20, |g, i| {
        let on = i % 20 < 8;
        let s = small_kernels(40.0, 0.12)(g, i);
        if on {
            s
        } else {
            s.with(Field::GpuUtil, 0.0)
                .with(Field::GrActive, 0.0)
                .with(Field::SmActive, 0.0)
        }
    }));
    let f = r
        .of_kind(Kind::LaunchBound)
        .next()
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    assert!(f.evidence("sm_fill").unwrap() < 0.2, "{f:?}");
    assert!(f.evidence("duty_cycle").is_some(), "{f:?}");
    assert!(!kinds(&r).contains(&Kind::InputStarved), "{:?}", kinds(&r));
}

#[test]
fn rare_full_speed_bursts_are_mostly_idle_not_input_starved() {
    // 0.2 s of full-speed matmuls every 2 s: a service answering the odd request.
    let r = dcgm_doctor::judge(&window(1, 20, |g, i| {
        let on = i % 20 < 2;
        busy(g, i)
            .with(Field::GpuUtil, if on { 99.0 } else { 0.0 })
            .with(Field::GrActive, if on { 0.99 } else { 0.0 })
            .with(Field::SmActive, if on { 0.9 } else { 0.0 })
            .with(Field::TensorActive, if on { 0.8 } else { 0.0 })
    }));
    assert_eq!(kinds(&r), [Kind::MostlyIdle], "{:?}", r.findings);
    let f = &r.findings[0];
    assert_eq!(f.severity, Severity::Info);
    assert!((f.evidence("period").unwrap() - 2.0).abs() < 0.15);
    assert!(f.evidence("duty_cycle").unwrap() < 0.15);
    assert!(!f.advice.contains("data-loader"), "{}", f.advice);
}

#[test]
fn a_little_full_size_work_spread_thin_is_mostly_idle() {
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
        with_process(small_kernels(8.0, 0.9)(g, i), 900)
    }));
    assert_eq!(kinds(&r), [Kind::MostlyIdle], "{:?}", r.findings);
    assert_eq!(r.worst(), Some(Severity::Info));
}

#[test]
fn a_gpu_with_nothing_running_gives_no_finding() {
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
        busy(g, i)
            .with(Field::GpuUtil, 0.0)
            .with(Field::GrActive, 0.0)
            .with(Field::SmActive, 0.0)
            .with(Field::TensorActive, 0.0)
            .with(Field::DramActive, 0.0)
            .with(Field::FbUsed, 500.0)
    }));
    assert!(r.findings.is_empty(), "{:?}", kinds(&r));
}

#[test]
fn busy_sms_with_idle_math_pipes_are_not_compute_bound() {
    // Streaming kernels: every SM busy, waiting on DRAM.
    let stream = |g, i| {
        busy(g, i)
            .with(Field::SmActive, 0.99)
            .with(Field::TensorActive, 0.0)
            .with(Field::Fp32Active, 0.01)
            .with(Field::DramActive, 0.9)
    };
    let r = dcgm_doctor::judge(&window(1, 10, stream));
    assert_eq!(kinds(&r), [Kind::MemoryBandwidthBound], "{:?}", r.findings);
    // DRAM not saturated either: busy SMs doing neither are nothing to report.
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
        stream(g, i).with(Field::DramActive, 0.4)
    }));
    assert!(r.findings.is_empty(), "{:?}", kinds(&r));
    // Without any math pipe in the samples, compute-bound is not judged, never guessed.
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
        Sample::new(i * 100, g)
            .with(Field::GpuUtil, 99.0)
            .with(Field::SmActive, 0.95)
    }));
    assert!(r.findings.is_empty(), "{:?}", kinds(&r));
    assert!(r.not_judged.iter().any(|n| n.kind == Kind::ComputeBound));
}

#[test]
fn compute_bound_and_memory_bandwidth_bound_never_meet() {
    // Across the boundary: the busiest pipe either side of 0.3, DRAM saturated.
    for pipe in [0.1, 0.29, 0.3, 0.31, 0.6, 0.9] {
        let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
            busy(g, i)
                .with(Field::SmActive, 0.95)
                .with(Field::TensorActive, pipe)
                .with(Field::DramActive, 0.85)
        }));
        let k = kinds(&r);
        assert!(
            !(k.contains(&Kind::ComputeBound) && k.contains(&Kind::MemoryBandwidthBound)),
            "{pipe}: {k:?}"
        );
        assert!(
            k.contains(&Kind::ComputeBound) || k.contains(&Kind::MemoryBandwidthBound),
            "{pipe}: {k:?}"
        );
    }
}

#[test]
fn fp32_math_with_idle_tensor_cores_is_told_to_use_tf32_or_bf16() {
    let fp = |field: Field| {
        move |g, i| {
            busy(g, i)
                .with(Field::SmActive, 0.97)
                .with(Field::TensorActive, 0.0)
                .with(field, 0.77)
                .with(Field::DramActive, 0.05)
        }
    };
    let r = dcgm_doctor::judge(&window(1, 10, fp(Field::Fp32Active)));
    assert_eq!(kinds(&r), [Kind::TensorCoresUnused], "{:?}", r.findings);
    let f = &r.findings[0];
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        (f.evidence("fp32_active_mean").unwrap() - 0.77).abs() < 1e-9,
        "{f:?}"
    );
    assert_eq!(f.evidence("tensor_active_mean"), Some(0.0));
    for part in ["TF32", "bf16", "autocast"] {
        assert!(f.advice.contains(part), "{part}: {}", f.advice);
    }
    // FP64: the advice is about double precision.
    let r = dcgm_doctor::judge(&window(1, 10, fp(Field::Fp64Active)));
    let f = r
        .of_kind(Kind::TensorCoresUnused)
        .next()
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    assert!(f.explanation.contains("FP64"), "{}", f.explanation);
    assert!(f.advice.contains("double precision"), "{}", f.advice);
    // Tensor cores busy beside the FP32 pipes: compute-bound, nothing to fix.
    let r = dcgm_doctor::judge(&window(1, 10, |g, i| {
        fp(Field::Fp32Active)(g, i).with(Field::TensorActive, 0.5)
    }));
    assert_eq!(kinds(&r), [Kind::ComputeBound], "{:?}", r.findings);
}

#[test]
fn a_change_of_the_busiest_unit_at_full_utilisation_splits_the_window() {
    // 10 s each of bf16 matmuls, a streaming optimizer step and FP32 matmuls, all at 99 %.
    let r = dcgm_doctor::judge(&window(1, 30, |g, i| {
        let s = busy(g, i).with(Field::SmActive, 0.95);
        match i / 100 {
            0 => s.with(Field::TensorActive, 0.9),
            1 => s
                .with(Field::TensorActive, 0.0)
                .with(Field::Fp32Active, 0.03)
                .with(Field::DramActive, 0.75),
            _ => s
                .with(Field::TensorActive, 0.0)
                .with(Field::Fp32Active, 0.77),
        }
    }));
    let span = |k: Kind| {
        r.of_kind(k)
            .map(|f| (f.start_ms, f.end_ms))
            .collect::<Vec<_>>()
    };
    assert_eq!(span(Kind::ComputeBound), [(0, 9900)], "{:?}", kinds(&r));
    assert_eq!(span(Kind::MemoryBandwidthBound), [(10_000, 19_900)]);
    assert_eq!(span(Kind::TensorCoresUnused), [(20_000, 29_900)]);
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
