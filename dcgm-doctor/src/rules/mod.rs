//! The rules: each finding kind's, in a file of its own, and what they need.

mod beats;
mod compute_bound;
mod hardware_errors;
mod input_starved;
mod launch_bound;
mod memory_bound;
mod memory_idle;
mod mostly_idle;
mod pcie_bound;
mod shared_gpu;
mod straggler;
mod tensor_cores;
mod throttle;

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, NotJudged, Severity};
use crate::limits::Limits;
use crate::sample::Sample;
use crate::segment::{self, IDLE_UTIL_PCT, Regime, SM_IDLE_RATIO, SMALL_KERNEL_FILL, Segment};
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

    /// The samples the GPU was busy in: all of them, or a periodic regime's busy beats.
    pub fn busy_samples(&self) -> impl Iterator<Item = &Sample> + Clone {
        let periodic = self.segment.regime == Regime::Periodic;
        self.samples.iter().filter(move |s| !periodic || busy(s))
    }

    /// How well the kernels fill the SMs while they run ([`segment::sm_fill`]), over the busy
    /// samples.
    pub fn sm_fill(&self) -> Option<f64> {
        let m = |f| stats::mean_over(self.busy_samples(), f);
        segment::sm_fill(m(Field::SmActive), m(Field::GrActive), m(Field::GpuUtil))
    }

    /// The fill, where the kernels are small (below [`SMALL_KERNEL_FILL`]): the host-bound
    /// rule's case, which the rules for a GPU that waits on input or sleeps leave to it.
    pub fn small_kernels(&self) -> Option<f64> {
        self.sm_fill().filter(|f| *f < SMALL_KERNEL_FILL)
    }

    /// How many processes were on the GPU during the stretch (distinct pids), `None` where the
    /// process lists were not read.
    pub fn processes(&self) -> Option<usize> {
        let mut pids: Vec<u32> = Vec::new();
        let mut read = false;
        for s in self.samples {
            if let Some(ps) = &s.processes {
                read = true;
                pids.extend(ps.iter().map(|p| p.pid));
            }
        }
        pids.sort_unstable();
        pids.dedup();
        read.then_some(pids.len())
    }

    /// The busiest math pipe (tensor, FP64, FP32, FP16) and its mean, where any is known.
    pub fn busiest_pipe(&self) -> Option<(Field, f64)> {
        PIPES
            .iter()
            .filter_map(|&f| self.mean(f).map(|v| (f, v)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
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

/// The math pipes, tensor first.
pub(crate) const PIPES: [Field; 4] = [
    Field::TensorActive,
    Field::Fp64Active,
    Field::Fp32Active,
    Field::Fp16Active,
];

/// A sample in which kernels ran: utilisation or SM activity above idle.
pub(crate) fn busy(s: &Sample) -> bool {
    s.get(Field::GpuUtil).is_some_and(|u| u >= IDLE_UTIL_PCT)
        || s.get(Field::SmActive).is_some_and(|x| x >= SM_IDLE_RATIO)
}

type StretchRule = fn(&Stretch<'_>) -> Vec<Finding>;

/// The rules judged on every regime of every GPU.
const STRETCH_RULES: [StretchRule; 10] = [
    input_starved::judge,
    mostly_idle::judge,
    pcie_bound::judge,
    launch_bound::judge,
    memory_bound::judge,
    compute_bound::judge,
    tensor_cores::judge,
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
        Kind::InputStarved | Kind::MostlyIdle => (&[GpuUtil], &[]),
        Kind::PcieTransferBound => (&[SmActive], &[PcieRxBytes, PcieTxBytes]),
        Kind::LaunchBound => (&[SmActive], &[GpuUtil, GrActive]),
        Kind::MemoryBandwidthBound => (&[DramActive], &PIPES),
        Kind::ComputeBound => (&[SmActive], &PIPES),
        Kind::TensorCoresUnused => (&[TensorActive], &[Fp64Active, Fp32Active]),
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
