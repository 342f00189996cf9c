//! The real H200 traces of `../shared/fixtures/h200-traces/`: each phase, judged alone, gives
//! the finding its workload is known for; judged whole, each finding covers its phase.
//!
//! The fixture lives outside the repository. Where it is absent these tests are reported
//! skipped (`dcgm::testing::shared_path`), unless `DCGM_REQUIRE_REAL=1`, which makes its
//! absence a failure.

use std::path::PathBuf;

use dcgm_doctor::replay::{self, Phase, Selection};
use dcgm_doctor::{Kind, Report, Severity};

/// Where the fixture is: `DCGM_H200_TRACES`, or `shared/fixtures/h200-traces` beside the
/// checkout.
fn fixture_dir() -> Option<PathBuf> {
    match std::env::var_os("DCGM_H200_TRACES") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.join("workloads.jsonl").is_file() {
                return Some(dir);
            }
            dcgm::testing::skip(&format!("no workloads.jsonl in {}", dir.display()));
            None
        }
        None => {
            let f = dcgm::testing::shared_path("fixtures/h200-traces/workloads.jsonl")?;
            f.parent().map(PathBuf::from)
        }
    }
}

fn load() -> Option<(replay::Trace, Vec<Phase>)> {
    let dir = fixture_dir()?;
    let file = std::fs::File::open(dir.join("workloads.jsonl")).unwrap();
    let trace = replay::read(std::io::BufReader::new(file)).unwrap();
    let phases =
        replay::phases(&std::fs::read_to_string(dir.join("workloads-phases.txt")).unwrap())
            .unwrap();
    Some((trace, phases))
}

fn phase_report(trace: &replay::Trace, phases: &[Phase], name: &str) -> Report {
    let sel = Selection::Phase {
        name: name.into(),
        settle_s: replay::PHASE_SETTLE_S,
    };
    let w = replay::select(&trace.window, phases, &sel).unwrap();
    dcgm_doctor::judge(&w)
}

fn kinds(r: &Report) -> Vec<(Kind, Severity)> {
    r.findings.iter().map(|f| (f.kind, f.severity)).collect()
}

#[test]
fn steady_matmul_is_compute_bound_and_power_capped_without_a_problem() {
    let Some((trace, phases)) = load() else {
        return;
    };
    let r = phase_report(&trace, &phases, "steady_matmul");
    let k = kinds(&r);
    assert!(k.contains(&(Kind::ComputeBound, Severity::Info)), "{k:?}");
    let cap = r.of_kind(Kind::PowerCapped).next().expect("power-capped");
    assert!(cap.severity <= Severity::Warning, "{k:?}");
    assert!(cap.evidence("violation_time").is_some_and(|t| t > 0.0));
    assert!(r.worst() < Some(Severity::Problem), "{k:?}");
}

#[test]
fn sawtooth_is_input_starved_with_its_period() {
    let Some((trace, phases)) = load() else {
        return;
    };
    let r = phase_report(&trace, &phases, "sawtooth_data_starved");
    let f = r
        .of_kind(Kind::InputStarved)
        .next()
        .unwrap_or_else(|| panic!("{:?}", kinds(&r)));
    let period = f.evidence("period").unwrap();
    assert!((1.0..=1.5).contains(&period), "period {period}");
    let duty = f.evidence("duty_cycle").unwrap();
    assert!(duty > 0.0 && duty < 1.0, "duty {duty}");
}

#[test]
fn pageable_copies_are_pcie_transfer_bound_without_link_fields() {
    let Some((trace, phases)) = load() else {
        return;
    };
    let r = phase_report(&trace, &phases, "pcie_h2d_pageable");
    let k = kinds(&r);
    assert!(
        k.contains(&(Kind::PcieTransferBound, Severity::Problem)),
        "{k:?}"
    );
    assert!(!k.iter().any(|(k, _)| *k == Kind::LaunchBound), "{k:?}");
}

#[test]
fn tiny_kernels_are_launch_bound() {
    let Some((trace, phases)) = load() else {
        return;
    };
    let r = phase_report(&trace, &phases, "tiny_kernels");
    let k = kinds(&r);
    assert!(k.contains(&(Kind::LaunchBound, Severity::Problem)), "{k:?}");
    assert!(
        !k.iter().any(|(k, _)| *k == Kind::PcieTransferBound),
        "{k:?}"
    );
}

#[test]
fn memory_high_idle_is_memory_held_while_idle() {
    let Some((trace, phases)) = load() else {
        return;
    };
    let r = phase_report(&trace, &phases, "memory_high_idle");
    let k = kinds(&r);
    assert!(k.iter().any(|(k, _)| *k == Kind::MemoryHeldIdle), "{k:?}");
}

#[test]
fn idle_gives_nothing_above_info() {
    let Some((trace, phases)) = load() else {
        return;
    };
    let r = phase_report(&trace, &phases, "idle");
    assert!(r.worst() <= Some(Severity::Info), "{:?}", kinds(&r));
}

#[test]
fn the_whole_trace_gives_each_phase_its_finding_within_two_seconds_of_its_bounds() {
    let Some((trace, phases)) = load() else {
        return;
    };
    let r = dcgm_doctor::judge(&trace.window);
    let expect = [
        ("steady_matmul", Kind::ComputeBound),
        ("steady_matmul", Kind::PowerCapped),
        ("sawtooth_data_starved", Kind::InputStarved),
        ("pcie_h2d_pageable", Kind::PcieTransferBound),
        ("tiny_kernels", Kind::LaunchBound),
        ("memory_high_idle", Kind::MemoryHeldIdle),
    ];
    for (name, kind) in expect {
        let p = phases.iter().find(|p| p.name == name).unwrap();
        let end = p.end_ms.unwrap();
        let near = |a: i64, b: i64| (a - b).abs() <= 2000;
        assert!(
            r.of_kind(kind)
                .any(|f| near(f.start_ms, p.start_ms) && near(f.end_ms, end)),
            "{name}: no {kind} within 2 s of {}..{}; found {:?}",
            p.start_ms,
            end,
            r.of_kind(kind)
                .map(|f| (f.start_ms, f.end_ms))
                .collect::<Vec<_>>()
        );
    }
    // The idle phase gives nothing above info.
    let idle = phases.iter().find(|p| p.name == "idle").unwrap();
    let idle_end = idle.end_ms.unwrap();
    for f in &r.findings {
        if f.end_ms < idle_end - 2000 {
            assert!(f.severity <= Severity::Info, "{f:?}");
        }
    }
}

#[test]
fn the_trace_without_error_or_process_fields_says_what_it_could_not_judge() {
    let Some((trace, _)) = load() else { return };
    let r = dcgm_doctor::judge(&trace.window);
    let nj: Vec<Kind> = r.not_judged.iter().map(|n| n.kind).collect();
    assert!(nj.contains(&Kind::HardwareErrors), "{nj:?}");
    assert!(nj.contains(&Kind::SharedGpu), "{nj:?}");
    assert!(nj.contains(&Kind::Straggler), "{nj:?}");
    assert!(!nj.contains(&Kind::LaunchBound), "{nj:?}");
}

#[test]
fn the_html_report_of_the_trace_draws_every_chart_and_shades_every_finding() {
    let Some((trace, _)) = load() else { return };
    let r = dcgm_doctor::judge(&trace.window);
    let page = dcgm_doctor::html::render(&trace.window, &r);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(page.matches("<figure>").count(), 7);
    // Utilisation, activity, PCIe, power, clock and temperature are in the trace; NVLink is not.
    assert_eq!(page.matches("no readings").count(), 1);
    let lines = page.matches("<polyline points=\"").count();
    assert!(lines >= 8, "{lines}");
    // Every finding is shaded on each chart and listed beside them.
    let shades = page.matches("class=\"shade ").count();
    assert_eq!(shades, 7 * r.findings.len());
    for f in &r.findings {
        assert!(page.contains(&format!(
            "{} {}</b>",
            f.severity.to_string().to_uppercase(),
            f.kind
        )));
    }
    // Self-contained: no script and nothing fetched.
    assert!(!page.contains("<script") && !page.contains("src=") && !page.contains("href="));
}
