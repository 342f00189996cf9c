//! Input-starved: the GPU waits for its next batch. Full-speed bursts with regular idle gaps
//! between them, or kernels that fill the SMs but run too little of the time. A GPU of small
//! kernels is host-bound instead (`launch_bound`), and one busy less than
//! [`MOSTLY_IDLE_DUTY`] of its time is mostly idle (`mostly_idle`): neither is told to add
//! data-loader workers.

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::segment::Regime;
use crate::stats;

use super::Stretch;
use super::beats::Beats;
use super::mostly_idle::MOSTLY_IDLE_DUTY;

/// A GPU running its SMs steadily below this utilisation (%) spends more than half its time
/// waiting for work: the host does not keep up.
pub const LOW_UTIL_PCT: f64 = 50.0;

/// A GPU whose work arrives in bursts shorter than the sampling interval shows no idle samples,
/// only a utilisation that swings from sample to sample. Below this mean utilisation (%) such a
/// GPU waits for a noticeable share of its time (a fed-as-fast-as-it-can GPU reads 95-100 %).
pub const BURSTY_UTIL_PCT: f64 = 85.0;

/// The swing (mean absolute change of utilisation between consecutive readings that differ,
/// percentage points) above which a busy GPU's work is called bursty: steady work, even under
/// a fixed-rate load, changes by a few points at most.
pub const BURSTY_SWING_PCT: f64 = 10.0;

/// A periodic stall whose busy share (duty cycle) is below this leaves the GPU idle most of
/// the time: a problem, not only a warning.
pub const PROBLEM_DUTY: f64 = 0.5;

const ADVICE: &str = "prepare input ahead of the GPU: more data-loader workers, pinned memory \
                      and prefetching, or move the CPU-side transforms onto the GPU";

pub(super) fn judge(st: &Stretch<'_>) -> Vec<Finding> {
    // Small kernels are the host's doing, not the input's.
    if st.small_kernels().is_some() {
        return Vec::new();
    }
    match st.segment.regime {
        Regime::Periodic => periodic(st),
        Regime::Compute => steady_low(st),
        _ => Vec::new(),
    }
}

/// Busy in short beats with idle gaps between them.
fn periodic(st: &Stretch<'_>) -> Vec<Finding> {
    let Some(beats) = Beats::of(st) else {
        return Vec::new();
    };
    let (period, duty) = (beats.period, beats.duty);
    // Bursts far apart: a mostly idle GPU (`mostly_idle`), not a starved one.
    if duty < MOSTLY_IDLE_DUTY {
        return Vec::new();
    }
    let severity = if duty < PROBLEM_DUTY {
        Severity::Problem
    } else {
        Severity::Warning
    };
    let regular = beats.regular();
    let ev = beats.evidence(st);
    vec![st.finding(
        Kind::InputStarved,
        severity,
        ev,
        format!(
            "the GPU works in bursts {regular} {period:.2} s and idles between them: busy {:.0} % \
             of the time, waiting for input the rest",
            duty * 100.0
        ),
        ADVICE,
    )]
}

/// Kernels that use the SMs, but not often enough.
fn steady_low(st: &Stretch<'_>) -> Vec<Finding> {
    let Some(util) = st.mean(Field::GpuUtil) else {
        return Vec::new();
    };
    if stats::duration_s(st.samples) < 2.0 * crate::segment::MIN_REGIME_S {
        return Vec::new();
    }
    if util >= LOW_UTIL_PCT {
        return bursty(st, util);
    }
    // A little work spread thin: a mostly idle GPU (`mostly_idle`).
    if util < MOSTLY_IDLE_DUTY * 100.0 {
        return Vec::new();
    }
    let mut ev = vec![Evidence::new("gpu_util_mean", util, "%")];
    if let Some(sm) = st.mean(Field::SmActive) {
        ev.push(Evidence::new("sm_active_mean", sm, "ratio"));
    }
    vec![st.finding(
        Kind::InputStarved,
        Severity::Warning,
        ev,
        format!(
            "kernels ran only {util:.0} % of the time, steadily: the GPU waits on the host \
             between them"
        ),
        ADVICE,
    )]
}

/// The mean absolute change of utilisation between consecutive readings that differ (DCGM
/// refreshes utilisation more slowly than a fast sampler reads it, so repeated readings are the
/// same measurement, not a steady GPU); 0 when it never changes.
fn swing(st: &Stretch<'_>) -> Option<f64> {
    let u: Vec<f64> = st
        .samples
        .iter()
        .filter_map(|s| s.get(Field::GpuUtil))
        .collect();
    if u.len() < 3 {
        return None;
    }
    let changes: Vec<f64> = u
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .filter(|d| *d > 0.0)
        .collect();
    if changes.is_empty() {
        return Some(0.0);
    }
    Some(changes.iter().sum::<f64>() / changes.len() as f64)
}

/// Busy, but in bursts shorter than the samples: utilisation below [`BURSTY_UTIL_PCT`] that
/// swings by more than [`BURSTY_SWING_PCT`] from one sample to the next (a data loader that
/// cannot keep up, seen at 100 ms).
fn bursty(st: &Stretch<'_>, util: f64) -> Vec<Finding> {
    let Some(swing) = swing(st) else {
        return Vec::new();
    };
    if util >= BURSTY_UTIL_PCT || swing < BURSTY_SWING_PCT {
        return Vec::new();
    }
    let mut ev = vec![
        Evidence::new("gpu_util_mean", util, "%"),
        Evidence::new("gpu_util_swing", swing, "%"),
    ];
    if let Some(sm) = st.mean(Field::SmActive) {
        ev.push(Evidence::new("sm_active_mean", sm, "ratio"));
    }
    vec![st.finding(
        Kind::InputStarved,
        Severity::Warning,
        ev,
        format!(
            "the GPU is busy {util:.0} % of the time in bursts shorter than the samples \
             (utilisation swings {swing:.0} points from one sample to the next): it waits on the \
             host for the rest"
        ),
        ADVICE,
    )]
}
