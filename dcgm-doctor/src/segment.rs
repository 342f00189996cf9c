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

/// Kernels that, while they run, keep fewer than this share of the SMs busy are too small to
/// fill the GPU: SM active per unit of graphics-engine activity (of utilisation where the
/// engine's activity is unknown). Kernels of enough blocks fill every SM: the H200 field
/// traces read 0.91 to 0.99 for matmuls, streaming kernels, an optimizer step and the bursts
/// of a starved loader; a small-batch trainer 0.28, a batch-1 decoding loop 0.12, one-element
/// kernels 0.002.
pub const SMALL_KERNEL_FILL: f64 = 0.5;

/// A math pipe busy at least this share of cycles does the work; below it, the pipes wait
/// (dense matmuls keep the tensor pipes at 0.9, FP32 matmuls without TF32 the FP32 pipes at
/// 0.77; streaming kernels leave every pipe under 0.05). `compute_bound` needs a pipe at
/// least this busy, `memory_bandwidth_bound` every pipe below it, so the two never meet.
pub const PIPE_BUSY_RATIO: f64 = 0.3;

/// DRAM active above this share of cycles: the memory interface, not the math, is what the
/// kernels wait on (streaming kernels sit at 0.7 to 0.9; dense math at 0.1 to 0.3).
pub const DRAM_BOUND_RATIO: f64 = 0.6;

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
    /// Kernels that run but keep few of the SMs busy while they do (below
    /// [`SMALL_KERNEL_FILL`]): small kernels, launched one after another.
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

/// The unit a compute regime keeps busiest, where one stands out. A change of it splits a
/// compute regime even where utilisation and SM activity stay put (bf16 matmuls, then an FP32
/// optimizer step that streams memory, then FP32 matmuls: all at 99 %).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// The tensor pipes are the busiest pipes, at least [`PIPE_BUSY_RATIO`].
    Tensor,
    /// An FP64, FP32 or FP16 pipe is the busiest, at least [`PIPE_BUSY_RATIO`].
    Fp,
    /// DRAM at least [`DRAM_BOUND_RATIO`], every pipe below [`PIPE_BUSY_RATIO`].
    Dram,
}

/// The unit a sample's work keeps busiest (`None` when none stands out, or the fields are
/// blank).
pub fn sample_unit(s: &Sample) -> Option<Unit> {
    let tensor = s.get(Field::TensorActive);
    let fp = [Field::Fp64Active, Field::Fp32Active, Field::Fp16Active]
        .into_iter()
        .filter_map(|f| s.get(f))
        .reduce(f64::max);
    let busiest = match (tensor, fp) {
        (Some(t), Some(f)) if f > t => Some((Unit::Fp, f)),
        (Some(t), _) => Some((Unit::Tensor, t)),
        (None, Some(f)) => Some((Unit::Fp, f)),
        (None, None) => None,
    };
    match busiest {
        Some((unit, v)) if v >= PIPE_BUSY_RATIO => Some(unit),
        _ => s
            .get(Field::DramActive)
            .filter(|d| *d >= DRAM_BOUND_RATIO)
            .map(|_| Unit::Dram),
    }
}

/// Kernels' fill of the SMs while they run: SM active over graphics-engine activity (over
/// utilisation where the engine's activity is unknown or 0). `None` without SM activity or
/// with nothing running.
pub fn sm_fill(sm: Option<f64>, gr: Option<f64>, util_pct: Option<f64>) -> Option<f64> {
    let sm = sm?;
    let busy = gr
        .filter(|g| *g > 0.0)
        .or(util_pct.map(|u| u / 100.0))
        .filter(|b| *b > 0.0)?;
    Some((sm / busy).min(1.0))
}

/// A stretch of one regime: samples `start..end` of the GPU's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// What the GPU did.
    pub regime: Regime,
    /// For a compute regime: the unit its work kept busiest, where one stood out.
    pub unit: Option<Unit>,
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
    if sm_fill(sm, s.get(Field::GrActive), util).is_some_and(|f| f < SMALL_KERNEL_FILL) {
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
    let units = compute_units(samples, &states);
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
                unit: None,
                start: runs[i].1,
                end: runs[j - 1].2,
                beats,
            });
            i = j;
            continue;
        }
        // Not periodic: each sample's own regime (and unit), run by run.
        let (_, a, b) = runs[i];
        for (k, st) in states.iter().enumerate().take(b).skip(a) {
            match out.last_mut() {
                Some(seg) if seg.regime == *st && seg.unit == units[k] && seg.end == k => {
                    seg.end = k + 1
                }
                _ => out.push(Segment {
                    regime: *st,
                    unit: units[k],
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

/// The unit each compute sample keeps busiest ([`sample_unit`]); a compute sample where none
/// stands out takes the unit of the compute samples before it (the first ones, of the first
/// that has one), so that only a change from one unit to another splits a compute regime,
/// never a reading near a threshold. Other regimes have none.
fn compute_units(samples: &[Sample], states: &[Regime]) -> Vec<Option<Unit>> {
    let mut units: Vec<Option<Unit>> = samples
        .iter()
        .zip(states)
        .map(|(s, st)| (*st == Regime::Compute).then(|| sample_unit(s)).flatten())
        .collect();
    let mut k = 0;
    while k < states.len() {
        if states[k] != Regime::Compute {
            k += 1;
            continue;
        }
        let end = (k..states.len())
            .find(|&j| states[j] != Regime::Compute)
            .unwrap_or(states.len());
        let mut last = units[k..end].iter().flatten().next().copied();
        for u in &mut units[k..end] {
            match u {
                Some(v) => last = Some(*v),
                None => *u = last,
            }
        }
        k = end;
    }
    units
}

/// Joins each regime shorter than [`MIN_REGIME_S`] to the one before it (the first to the one
/// after), then merges neighbours of one regime and unit.
fn absorb_short(segs: Vec<Segment>, samples: &[Sample]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::with_capacity(segs.len());
    for seg in segs {
        let short = span_s(samples, seg.start, seg.end) < MIN_REGIME_S;
        match out.last_mut() {
            Some(prev) if short && seg.regime != Regime::Periodic => prev.end = seg.end,
            Some(prev)
                if prev.regime == seg.regime
                    && prev.unit == seg.unit
                    && prev.regime != Regime::Periodic =>
            {
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
