//! Mostly idle: the GPU sleeps most of the time, woken for short bursts of full-speed work far
//! apart (a service answering the odd request), or running a little work spread thin. Not a
//! problem in itself, and not input starvation: nothing is told to add data-loader workers.
//! A GPU with nothing running at all gives no finding; one kept lightly busy by small kernels
//! is host-bound (`launch_bound`).

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::segment::{MIN_REGIME_S, Regime};
use crate::stats;

use super::Stretch;
use super::beats::Beats;

/// Busy less than this share of the time, the GPU mostly sleeps: a burst of 0.15 s every 2 s
/// (a service answering the odd request, the H200 field trace's `sleepy_service`) is 0.09; a
/// data-starved training loop keeps it busy a third of the time or more (0.4 s of matmuls
/// every 1.2 s: 0.32).
pub const MOSTLY_IDLE_DUTY: f64 = 0.15;

const ADVICE: &str = "nothing to fix if it serves work as it comes (batching requests makes \
                      each burst count more); if a job should keep this GPU busy, find what it \
                      waits for between bursts; a GPU this idle can be shared (MIG, MPS) or \
                      given to other work";

pub(super) fn judge(st: &Stretch<'_>) -> Vec<Finding> {
    if st.small_kernels().is_some() {
        return Vec::new();
    }
    match st.segment.regime {
        Regime::Periodic => bursts(st),
        Regime::Compute => thin(st),
        _ => Vec::new(),
    }
}

/// Full-speed bursts far apart.
fn bursts(st: &Stretch<'_>) -> Vec<Finding> {
    let Some(beats) = Beats::of(st) else {
        return Vec::new();
    };
    if beats.duty >= MOSTLY_IDLE_DUTY {
        return Vec::new();
    }
    let mut ev = beats.evidence(st);
    let busy_sm = stats::mean_over(st.busy_samples(), Field::SmActive);
    if let Some(sm) = busy_sm {
        ev.push(Evidence::new("sm_active_busy_mean", sm, "ratio"));
    }
    let speed = busy_sm
        .map(|sm| format!(" (SM active {:.0} % during them)", sm * 100.0))
        .unwrap_or_default();
    vec![st.finding(
        Kind::MostlyIdle,
        Severity::Info,
        ev,
        format!(
            "the GPU is idle {:.0} % of the time, woken {} {:.2} s for a short burst of work{speed}: \
             mostly idle, as a service waiting for requests is",
            (1.0 - beats.duty) * 100.0,
            beats.regular(),
            beats.period
        ),
        ADVICE,
    )]
}

/// Kernels that fill the SMs, running a small share of the time, steadily.
fn thin(st: &Stretch<'_>) -> Vec<Finding> {
    let Some(util) = st.mean(Field::GpuUtil) else {
        return Vec::new();
    };
    if util >= MOSTLY_IDLE_DUTY * 100.0 || stats::duration_s(st.samples) < 2.0 * MIN_REGIME_S {
        return Vec::new();
    }
    let mut ev = vec![Evidence::new("gpu_util_mean", util, "%")];
    if let Some(sm) = st.mean(Field::SmActive) {
        ev.push(Evidence::new("sm_active_mean", sm, "ratio"));
    }
    vec![st.finding(
        Kind::MostlyIdle,
        Severity::Info,
        ev,
        format!(
            "kernels ran only {util:.0} % of the time, in work spread thin: the GPU is mostly \
             idle"
        ),
        ADVICE,
    )]
}
