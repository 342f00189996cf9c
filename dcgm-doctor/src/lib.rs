//! `dcgm-doctor`: from GPU telemetry to a diagnosis. It turns a window of per-GPU samples
//! (utilisation, the profiling fields, PCIe bytes, clocks and their event reasons, power,
//! memory, error counters, processes) into [`Finding`]s: what holds a GPU back, on which GPUs,
//! how much it matters, the numbers behind it over which time, and what to try.
//!
//! Every rule judges against the GPU's own limits (maximum clock, power limit, memory size,
//! PCIe link rate) where DCGM reports them; its thresholds are named constants with their
//! reasons. A blank reading is unknown, never 0: a kind whose fields a window lacks is listed
//! in [`Report::not_judged`] instead of being guessed.
//!
//! ```
//! use dcgm_doctor::{Field, Kind, Sample, Window};
//! // Ten seconds at 100 ms of a GPU whose kernels barely touch the SMs.
//! let samples = (0..100).map(|i| {
//!     Sample::new(i * 100, 0)
//!         .with(Field::GpuUtil, 40.0)
//!         .with(Field::SmActive, 0.001)
//!         .with(Field::GrActive, 0.4)
//! });
//! let report = dcgm_doctor::judge(&Window::from_samples(samples));
//! assert_eq!(report.findings[0].kind, Kind::LaunchBound);
//! ```
//!
//! Samples come from a live reader (feature `live`: `live::Live`, through `dcgm-reader`; the
//! `doctor` tool and the Python package sample with it) or from a `dmon --json` recording
//! ([`replay`]).

mod field;
mod finding;
pub mod html;
mod limits;
#[cfg(feature = "live")]
pub mod live;
pub mod replay;
mod rules;
mod sample;
pub mod segment;
mod stats;
mod window;

pub use field::Field;
pub use finding::{Evidence, Finding, Kind, NotJudged, ProcessUse, Report, Severity, Stopped};
pub use limits::Limits;
pub use replay::ReplayError;
pub use sample::{GpuProcess, Sample};
pub use window::Window;

/// Judges a window: its findings, worst first and then by time, and the kinds it lacked the
/// fields to judge.
pub fn judge(window: &Window) -> Report {
    let mut findings = rules::judge(window);
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.start_ms.cmp(&b.start_ms))
            .then(a.gpus.cmp(&b.gpus))
    });
    Report {
        findings,
        not_judged: rules::not_judged(window),
        gpus: window.gpus().map(|(g, _)| g).collect(),
        stopped: stopped(window),
        processes: processes(window),
        span_ms: window.span(),
        samples: window.len(),
        simulated: window.simulated,
    }
}

/// Each GPU's processes over the window, the most memory first: from every sample's process
/// list, each pid once per GPU with the most memory it held and its latest SM utilisation.
fn processes(window: &Window) -> Vec<ProcessUse> {
    let mut out = Vec::new();
    for (gpu, samples) in window.gpus() {
        let lists = samples.iter().filter(|s| s.processes.is_some()).count();
        let total = stats::latest(samples, Field::FbTotal).filter(|t| *t > 0.0);
        let mut by_pid: std::collections::BTreeMap<u32, (ProcessUse, usize)> =
            std::collections::BTreeMap::new();
        for s in samples {
            for p in s.processes.iter().flatten() {
                let (u, n) = by_pid.entry(p.pid).or_insert_with(|| {
                    (
                        ProcessUse {
                            gpu,
                            pid: p.pid,
                            name: None,
                            memory_mib: None,
                            memory_share: None,
                            sm_util: None,
                            listed_share: 0.0,
                            first_ms: s.timestamp_ms,
                            last_ms: s.timestamp_ms,
                        },
                        0,
                    )
                });
                *n += 1;
                u.last_ms = s.timestamp_ms;
                u.memory_mib = u.memory_mib.max(p.memory_mib);
                if p.name.is_some() {
                    u.name.clone_from(&p.name);
                }
                if p.sm_util.is_some() {
                    u.sm_util = p.sm_util;
                }
            }
        }
        let mut procs: Vec<ProcessUse> = by_pid
            .into_values()
            .map(|(mut u, n)| {
                u.listed_share = n as f64 / lists.max(1) as f64;
                u.memory_share = u.memory_mib.zip(total).map(|(m, t)| m as f64 / t);
                u
            })
            .collect();
        procs.sort_by(|a, b| b.memory_mib.cmp(&a.memory_mib).then(a.pid.cmp(&b.pid)));
        out.extend(procs);
    }
    out
}

/// A GPU silent for this many of its own sampling intervals before the window ends has stopped
/// reporting (a late sample or two is scheduling, not a lost GPU).
pub const STOPPED_AFTER_INTERVALS: f64 = 20.0;

/// The GPUs whose last sample comes well before the window's last.
fn stopped(window: &Window) -> Vec<Stopped> {
    let Some((_, end)) = window.span() else {
        return Vec::new();
    };
    window
        .gpus()
        .filter_map(|(gpu, samples)| {
            let last = samples.last()?.timestamp_ms;
            let gap_s = (end - last) as f64 / 1e3;
            (gap_s > STOPPED_AFTER_INTERVALS * stats::interval_s(samples))
                .then_some(Stopped { gpu, last_ms: last })
        })
        .collect()
}
