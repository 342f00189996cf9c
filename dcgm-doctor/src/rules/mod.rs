//! The rules: each finding kind's, in a file of its own, and what they need.

mod compute_bound;
mod hardware_errors;
mod input_starved;
mod launch_bound;
mod memory_bound;
mod memory_idle;
mod pcie_bound;
mod shared_gpu;
mod straggler;
mod throttle;

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, NotJudged, Severity};
use crate::limits::Limits;
use crate::sample::Sample;
use crate::segment::{self, Segment};
use crate::stats;
use crate::window::Window;

pub(crate) use straggler::STRAGGLER_MIN_GPUS;

/// One regime of one GPU, with what a rule needs around it.
pub(crate) struct Stretch<'a> {
    pub gpu: u32,
    /// The regime's samples.
    pub samples: &'a [Sample],
    /// All of the GPU's samples in the window (for maxima seen over the whole window).
    pub all: &'a [Sample],
    pub segment: &'a Segment,
    pub limits: &'a Limits,
}

impl Stretch<'_> {
    pub fn mean(&self, f: Field) -> Option<f64> {
        stats::mean(self.samples, f)
    }

    pub fn finding(
        &self,
        kind: Kind,
        severity: Severity,
        evidence: Vec<Evidence>,
        explanation: String,
        advice: &str,
    ) -> Finding {
        let mut evidence = evidence;
        evidence.push(Evidence::new(
            "duration",
            stats::duration_s(self.samples),
            "s",
        ));
        Finding {
            kind,
            severity,
            gpus: vec![self.gpu],
            start_ms: self.samples.first().map_or(0, |s| s.timestamp_ms),
            end_ms: self.samples.last().map_or(0, |s| s.timestamp_ms),
            evidence,
            explanation,
            advice: advice.to_string(),
        }
    }
}

type StretchRule = fn(&Stretch<'_>) -> Vec<Finding>;

/// The rules judged on every regime of every GPU.
const STRETCH_RULES: [StretchRule; 8] = [
    input_starved::judge,
    pcie_bound::judge,
    launch_bound::judge,
    memory_bound::judge,
    compute_bound::judge,
    throttle::judge_power,
    throttle::judge_thermal,
    memory_idle::judge,
];

/// Every finding of the window.
pub(crate) fn judge(window: &Window) -> Vec<Finding> {
    let mut out = Vec::new();
    for (gpu, samples) in window.gpus() {
        let limits = Limits::from_samples(samples);
        for seg in segment::segments(samples, &limits) {
            let stretch = Stretch {
                gpu,
                samples: &samples[seg.start..seg.end],
                all: samples,
                segment: &seg,
                limits: &limits,
            };
            for rule in STRETCH_RULES {
                out.extend(rule(&stretch));
            }
        }
        out.extend(hardware_errors::judge(gpu, samples));
        out.extend(shared_gpu::judge(gpu, samples));
    }
    out.extend(straggler::judge(window));
    out
}

/// What each kind needs: all of `all`, and one of `any` (when not empty).
fn needs(kind: Kind) -> (&'static [Field], &'static [Field]) {
    use Field::*;
    match kind {
        Kind::InputStarved => (&[GpuUtil], &[]),
        Kind::PcieTransferBound => (&[SmActive], &[PcieRxBytes, PcieTxBytes]),
        Kind::LaunchBound => (&[GpuUtil, SmActive], &[]),
        Kind::MemoryBandwidthBound => (
            &[DramActive],
            &[TensorActive, Fp64Active, Fp32Active, Fp16Active],
        ),
        Kind::ComputeBound => (&[SmActive], &[]),
        Kind::PowerCapped | Kind::ThermalThrottled => (&[ClockEventReasons], &[]),
        Kind::Straggler => (&[], &[SmClock, Power, GpuUtil]),
        Kind::MemoryHeldIdle => (&[FbUsed, GpuUtil], &[]),
        Kind::HardwareErrors => (&[], &[Xid, EccDbe, EccSbe, PcieReplays, NvlinkCrcErrors]),
        Kind::SharedGpu => (&[], &[]),
    }
}

/// The kinds the window lacks the fields for, on any of its GPUs.
pub(crate) fn not_judged(window: &Window) -> Vec<NotJudged> {
    let mut out = Vec::new();
    for kind in Kind::ALL {
        let (all, any) = needs(kind);
        let mut missing: Vec<String> = Vec::new();
        for (_, samples) in window.gpus() {
            let mut lacks: Vec<String> = all
                .iter()
                .filter(|f| !stats::present(samples, **f))
                .map(|f| f.tag().to_string())
                .collect();
            if !any.is_empty() && !any.iter().any(|f| stats::present(samples, *f)) {
                lacks.push(any.iter().map(|f| f.tag()).collect::<Vec<_>>().join(" or "));
            }
            for l in lacks {
                if !missing.contains(&l) {
                    missing.push(l);
                }
            }
        }
        let mut reason =
            (!missing.is_empty()).then(|| format!("no {} in the samples", missing.join(", ")));
        if kind == Kind::SharedGpu
            && !window
                .gpus()
                .any(|(_, s)| s.iter().any(|s| s.processes.is_some()))
        {
            reason = Some("no process lists in the samples (a replay file carries none; a library may refuse them)".into());
        }
        if kind == Kind::Straggler && window.gpus().count() < STRAGGLER_MIN_GPUS {
            reason = Some(format!(
                "needs at least {STRAGGLER_MIN_GPUS} GPUs to compare; the window has {}",
                window.gpus().count()
            ));
        }
        if let Some(reason) = reason {
            out.push(NotJudged { kind, reason });
        }
    }
    out
}
