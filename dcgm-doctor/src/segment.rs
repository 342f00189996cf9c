//! Splitting a GPU's samples into stretches of one behaviour (regimes), so that each finding
//! covers the time its cause lasted, and a trace of several workloads gives each its own.

use serde::Serialize;

use crate::field::Field;
use crate::limits::Limits;
use crate::sample::Sample;

/// Below this utilisation (%) a GPU runs no kernel worth counting: DCGM's utilisation is the
/// share of time any kernel ran, and a monitoring tool's own queries leave a few %.
pub const IDLE_UTIL_PCT: f64 = 5.0;

/// Below this SM-active ratio the SMs are idle: 5 % of the SMs' cycles.
pub const SM_IDLE_RATIO: f64 = 0.05;

/// A GPU running kernels whose SM activity is under this share of its utilisation runs kernels
/// too small to fill the SMs (a full GPU shows SM active close to utilisation).
pub const LAUNCH_SM_TO_UTIL: f64 = 0.1;

/// Transfers keep the copy engines busy and the graphics engine idle: below this share of the
/// utilisation the graphics engine is not what the utilisation counts.
pub const TRANSFER_GR_TO_UTIL: f64 = 0.5;

/// A busy or idle stretch at most this long can be one beat of a periodic stall (a data
/// loader's batch, a host step between iterations); longer ones are steady behaviour.
pub const PERIODIC_MAX_RUN_S: f64 = 5.0;

/// A periodic stall needs this many busy beats to be told from a one-off pause.
pub const PERIODIC_MIN_CYCLES: usize = 3;

/// A regime shorter than this is a transition (a ramp, a sampling edge): it joins its
/// neighbour.
pub const MIN_REGIME_S: f64 = 1.0;

/// What a GPU does over a stretch of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    /// No kernel, no transfer.
    Idle,
    /// Idle, holding more memory than a context needs.
    IdleHoldingMemory,
    /// Kernels that use the SMs.
    Compute,
    /// Kernels that run but barely use the SMs.
    Launch,
    /// PCIe transfers while the SMs idle.
    Transfer,
    /// Busy and idle in short beats, again and again.
    Periodic,
}

impl Regime {
    fn active(self) -> bool {
        matches!(self, Regime::Compute | Regime::Launch | Regime::Transfer)
    }
}

/// A stretch of one regime: samples `start..end` of the GPU's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// What the GPU did.
    pub regime: Regime,
    /// First sample's index.
    pub start: usize,
    /// One past the last sample's index.
    pub end: usize,
    /// For a periodic regime: the start index of each busy beat.
    pub beats: Vec<usize>,
}

/// The regime a single sample shows; `None` when it has neither utilisation nor SM activity.
pub fn sample_regime(s: &Sample, limits: &Limits) -> Option<Regime> {
    let util = s.get(Field::GpuUtil);
    let sm = s.get(Field::SmActive);
    if util.is_none() && sm.is_none() {
        return None;
    }
    let pcie_busy = s
        .pcie_bytes()
        .is_some_and(|b| b >= limits.pcie_busy_bytes_per_s());
    let active = util.is_some_and(|u| u >= IDLE_UTIL_PCT)
        || sm.is_some_and(|x| x >= SM_IDLE_RATIO)
        || pcie_busy;
    if !active {
        let holding = s
            .get(Field::FbUsed)
            .is_some_and(|m| m >= limits.memory_held_mib());
        return Some(if holding {
            Regime::IdleHoldingMemory
        } else {
            Regime::Idle
        });
    }
    let util_ratio = util.map(|u| u / 100.0);
    let gr_quiet = match (s.get(Field::GrActive), util_ratio) {
        (Some(g), Some(u)) => g < TRANSFER_GR_TO_UTIL * u,
        (Some(g), None) => g < SM_IDLE_RATIO,
        (None, _) => true,
    };
    if pcie_busy && sm.is_none_or(|x| x < SM_IDLE_RATIO) && gr_quiet {
        return Some(Regime::Transfer);
    }
    if let (Some(u), Some(x)) = (util_ratio, sm)
        && u * 100.0 >= IDLE_UTIL_PCT
        && x < LAUNCH_SM_TO_UTIL * u
    {
        return Some(Regime::Launch);
    }
    Some(Regime::Compute)
}

/// Splits one GPU's samples (in time order) into regimes covering all of them.
pub fn segments(samples: &[Sample], limits: &Limits) -> Vec<Segment> {
    if samples.is_empty() {
        return Vec::new();
    }
    // A sample with neither reading carries its neighbour's regime: unknown is not idle.
    let mut states: Vec<Option<Regime>> =
        samples.iter().map(|s| sample_regime(s, limits)).collect();
    let first = states
        .iter()
        .flatten()
        .next()
        .copied()
        .unwrap_or(Regime::Idle);
    let mut last = first;
    for st in &mut states {
        last = *st.get_or_insert(last);
    }
    let states: Vec<Regime> = states.into_iter().map(|s| s.unwrap_or(first)).collect();
    let dur = |a: usize, b: usize| span_s(samples, a, b);

    // Busy/idle runs, then the stretches of short runs with enough busy beats.
    let mut runs: Vec<(bool, usize, usize)> = Vec::new();
    for (i, st) in states.iter().enumerate() {
        match runs.last_mut() {
            Some((act, _, end)) if *act == st.active() => *end = i + 1,
            _ => runs.push((st.active(), i, i + 1)),
        }
    }
    let mut out: Vec<Segment> = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        let mut j = i;
        while j < runs.len() && dur(runs[j].1, runs[j].2) <= PERIODIC_MAX_RUN_S {
            j += 1;
        }
        let beats: Vec<usize> = runs[i..j].iter().filter(|r| r.0).map(|r| r.1).collect();
        if beats.len() >= PERIODIC_MIN_CYCLES {
            out.push(Segment {
                regime: Regime::Periodic,
                start: runs[i].1,
                end: runs[j - 1].2,
                beats,
            });
            i = j;
            continue;
        }
        // Not periodic: each sample's own regime, run by run.
        let (_, a, b) = runs[i];
        for (k, st) in states.iter().enumerate().take(b).skip(a) {
            match out.last_mut() {
                Some(seg) if seg.regime == *st && seg.end == k => seg.end = k + 1,
                _ => out.push(Segment {
                    regime: *st,
                    start: k,
                    end: k + 1,
                    beats: Vec::new(),
                }),
            }
        }
        i += 1;
    }
    absorb_short(out, samples)
}

/// Joins each regime shorter than [`MIN_REGIME_S`] to the one before it (the first to the one
/// after), then merges neighbours of one regime.
fn absorb_short(segs: Vec<Segment>, samples: &[Sample]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::with_capacity(segs.len());
    for seg in segs {
        let short = span_s(samples, seg.start, seg.end) < MIN_REGIME_S;
        match out.last_mut() {
            Some(prev) if short && seg.regime != Regime::Periodic => prev.end = seg.end,
            Some(prev) if prev.regime == seg.regime && prev.regime != Regime::Periodic => {
                prev.end = seg.end
            }
            _ => out.push(seg),
        }
    }
    // A short first regime joins the next one.
    if out.len() > 1
        && out[0].regime != Regime::Periodic
        && span_s(samples, out[0].start, out[0].end) < MIN_REGIME_S
    {
        let first = out.remove(0);
        out[0].start = first.start;
    }
    out
}

/// Seconds covered by samples `a..b`: first to last, plus one interval.
fn span_s(samples: &[Sample], a: usize, b: usize) -> f64 {
    crate::stats::duration_s(&samples[a..b])
}
