//! The verdict per GPU at the end of a burn: sustained TFLOPS and their stability, peak
//! temperature and when it settled, time at the power cap and thermally throttled, errors
//! (compute mismatches, ECC, XID, PCIe replays), and the comparison with its siblings. The
//! DCGM-side judging is `dcgm-doctor`'s (its thermal-throttle and hardware-error rules, its
//! power-cap rule as information: at the cap is where a stress test should be).

use std::collections::BTreeMap;

use dcgm_doctor::{Evidence, Field, Finding, Kind, Sample, Severity, Window};
use serde::Serialize;

use crate::dtype::Dtype;

/// A GPU this share or more below the median TFLOPS of the GPUs burned with it is named:
/// cards of one model under one load differ by a few % at most (the 10 %).
pub const SLOW_SHARE: f64 = 0.10;

/// TFLOPS falling by this share or more from the start of the run to its end is unstable.
pub const UNSTABLE_DROP: f64 = 0.05;

/// Runs at least this long compare their first minute with their last; shorter ones their
/// first third with their last.
pub const MINUTE_COMPARE_FROM_S: f64 = 180.0;

/// The temperature has settled once it stays within this many °C of where it ends.
pub const SETTLE_BAND_C: f64 = 2.0;

/// A clock-event reason set for at least this share of the samples is named as the cause.
pub const REASON_SHARE: f64 = 0.2;

/// Clock-event reasons: software power cap and hardware power brake.
pub const POWER_REASONS: u64 = 0x4 | 0x80;
/// Clock-event reasons: software and hardware thermal slowdown.
pub const THERMAL_REASONS: u64 = 0x20 | 0x40;

/// How a GPU came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Nothing above information.
    Healthy,
    /// A warning: worth a look.
    Warning,
    /// A failure: do not trust this card until fixed.
    Failure,
}

impl Status {
    /// The status a finding of `severity` gives.
    pub fn of(severity: Severity) -> Status {
        match severity {
            Severity::Problem => Status::Failure,
            Severity::Warning => Status::Warning,
            _ => Status::Healthy,
        }
    }

    /// The exit status: 0 healthy, 2 warnings, 3 failures.
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Healthy => 0,
            Status::Warning => 2,
            Status::Failure => 3,
        }
    }
}

/// One conclusion about a GPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BurnFinding {
    /// What (`slower_than_siblings`, `compute_errors`, `unstable`, `load_failed`, or a
    /// doctor kind: `thermal_throttled`, `hardware_errors`, `power_capped`).
    pub kind: String,
    /// How much it matters.
    pub severity: Severity,
    /// In one line.
    pub explanation: String,
    /// The numbers behind it.
    pub evidence: Vec<Evidence>,
    /// What to try.
    pub advice: String,
}

impl BurnFinding {
    /// The value of the evidence named `name`.
    pub fn evidence(&self, name: &str) -> Option<f64> {
        self.evidence
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.value)
    }
}

impl From<&Finding> for BurnFinding {
    fn from(f: &Finding) -> Self {
        BurnFinding {
            kind: f.kind.name().into(),
            severity: f.severity,
            explanation: f.explanation.clone(),
            evidence: f.evidence.clone(),
            advice: f.advice.clone(),
        }
    }
}

/// What the results check found on a GPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ComputeErrors {
    /// Products computed (0 when simulated: the load is modelled).
    pub products: u64,
    /// Checks done.
    pub checks: u64,
    /// 32-bit words of a result that differed from the reference, over all checks.
    pub mismatches: u64,
    /// Why the load stopped early on this GPU.
    pub failed: Option<String>,
}

/// Everything one burn recorded.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// DCGM's samples.
    pub window: Window,
    /// Each GPU's TFLOPS over time, (ms since the epoch, TFLOPS).
    pub tflops: BTreeMap<u32, Vec<(i64, f64)>>,
    /// Each GPU's memory temperature over time, (ms, °C).
    pub memory_temp: BTreeMap<u32, Vec<(i64, f64)>>,
    /// The results check per GPU.
    pub compute: BTreeMap<u32, ComputeErrors>,
    /// The GPUs burned.
    pub gpus: Vec<u32>,
}

/// The verdict on one GPU.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuVerdict {
    /// The GPU (DCGM id).
    pub gpu: u32,
    /// How it came out: its worst finding.
    pub status: Status,
    /// Mean TFLOPS over the run after its first tenth (the ramp).
    pub tflops: Option<f64>,
    /// Mean TFLOPS of the first minute (or third) and of the last.
    pub tflops_first: Option<f64>,
    /// See `tflops_first`.
    pub tflops_last: Option<f64>,
    /// `tflops_last / tflops_first`.
    pub stability: Option<f64>,
    /// What was compared: `minute` or `third`.
    pub stability_window: &'static str,
    /// The highest GPU temperature, °C.
    pub peak_temp_c: Option<f64>,
    /// Seconds from the start until the temperature stayed within [`SETTLE_BAND_C`] of where
    /// it ended; `None`: still moving at the end.
    pub temp_settled_s: Option<f64>,
    /// The highest memory temperature, °C.
    pub peak_memory_temp_c: Option<f64>,
    /// Mean SM clock and the maximum, MHz.
    pub sm_clock_mhz: Option<f64>,
    /// See `sm_clock_mhz`.
    pub sm_clock_max_mhz: Option<f64>,
    /// Mean board power and the enforced limit, W.
    pub power_w: Option<f64>,
    /// See `power_w`.
    pub power_limit_w: Option<f64>,
    /// Seconds with a power reason set (samples' share times the run).
    pub power_capped_s: Option<f64>,
    /// Seconds with a thermal reason set.
    pub thermal_throttled_s: Option<f64>,
    /// The results check.
    pub compute: ComputeErrors,
    /// New volatile single- and double-bit ECC errors during the run.
    pub ecc_sbe: Option<f64>,
    /// See `ecc_sbe`.
    pub ecc_dbe: Option<f64>,
    /// XIDs seen during the run.
    pub xids: Vec<u32>,
    /// New PCIe replays.
    pub pcie_replays: Option<f64>,
    /// The findings, worst first.
    pub findings: Vec<BurnFinding>,
}

/// The verdict on a burn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Each GPU's.
    pub gpus: Vec<GpuVerdict>,
    /// The median of the GPUs' sustained TFLOPS.
    pub median_tflops: Option<f64>,
    /// The worst of the GPUs'.
    pub status: Status,
}

impl Verdict {
    /// The verdict of one GPU.
    pub fn gpu(&self, gpu: u32) -> Option<&GpuVerdict> {
        self.gpus.iter().find(|g| g.gpu == gpu)
    }
}

fn mean(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (s, n) = v
        .into_iter()
        .fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

fn field_mean(samples: &[Sample], f: Field) -> Option<f64> {
    mean(samples.iter().filter_map(|s| s.get(f)))
}

fn field_max(samples: &[Sample], f: Field) -> Option<f64> {
    samples.iter().filter_map(|s| s.get(f)).reduce(f64::max)
}

/// Growth of a cumulative counter over the samples (last minus first known), at least 0.
fn growth(samples: &[Sample], f: Field) -> Option<f64> {
    let mut known = samples.iter().filter_map(|s| s.get(f));
    let first = known.next()?;
    let last = known.next_back().unwrap_or(first);
    Some((last - first).max(0.0))
}

/// The share of samples whose clock-event reasons hold a bit of `mask`.
fn reason_share(samples: &[Sample], mask: u64) -> Option<f64> {
    let known: Vec<u64> = samples
        .iter()
        .filter_map(|s| s.get(Field::ClockEventReasons))
        .map(|v| v as u64)
        .collect();
    (!known.is_empty())
        .then(|| known.iter().filter(|r| *r & mask != 0).count() as f64 / known.len() as f64)
}

/// Mean of a (ms, value) series between `from_ms` (inclusive) and `to_ms` (exclusive).
fn series_mean(series: &[(i64, f64)], from_ms: i64, to_ms: i64) -> Option<f64> {
    mean(
        series
            .iter()
            .filter(|(t, _)| *t >= from_ms && *t < to_ms)
            .map(|p| p.1),
    )
}

/// When the temperature settled: seconds from `start_ms` to the first sample from which every
/// later one stays within [`SETTLE_BAND_C`] of the mean of the run's last tenth; `None` when
/// that first sample is in the last tenth itself (still moving at the end).
fn settled(samples: &[Sample], start_ms: i64) -> Option<f64> {
    let temps: Vec<(i64, f64)> = samples
        .iter()
        .filter_map(|s| s.get(Field::Temperature).map(|t| (s.timestamp_ms, t)))
        .collect();
    let tail = (temps.len() / 10).max(1);
    let end = mean(temps[temps.len().checked_sub(tail)?..].iter().map(|p| p.1))?;
    let from = temps
        .iter()
        .rposition(|(_, t)| (t - end).abs() > SETTLE_BAND_C)
        .map_or(0, |i| i + 1);
    // Still moving in the last 30 % of the run: not settled.
    if from * 10 > temps.len() * 7 {
        return None;
    }
    temps
        .get(from)
        .map(|(t, _)| (t - start_ms).max(0) as f64 / 1e3)
}

/// Judges a run: `dtype` only names the work in the findings.
pub fn judge(run: &Run, dtype: Dtype) -> Verdict {
    let report = dcgm_doctor::judge(&run.window);
    let (start_ms, end_ms) = run.window.span().unwrap_or((0, 0));
    let span_s = (end_ms - start_ms) as f64 / 1e3;
    let (early_to, late_from, window_name) = if span_s >= MINUTE_COMPARE_FROM_S {
        (start_ms + 60_000, end_ms - 60_000, "minute")
    } else {
        let third = (end_ms - start_ms) / 3;
        (start_ms + third, end_ms - third, "third")
    };
    let ramp_end = start_ms + (end_ms - start_ms) / 10;
    let empty = Vec::new();
    let mut out: Vec<GpuVerdict> = run
        .gpus
        .iter()
        .map(|&gpu| {
            let samples = run.window.gpu(gpu);
            let series = run.tflops.get(&gpu).unwrap_or(&empty);
            let first = series_mean(series, start_ms, early_to);
            let last = series_mean(series, late_from, end_ms + 1);
            let tflops = series_mean(series, ramp_end, end_ms + 1)
                .or_else(|| mean(series.iter().map(|p| p.1)));
            let xids: Vec<u32> = {
                let mut prev = samples.first().and_then(|s| s.get(Field::Xid));
                let mut x = Vec::new();
                for s in samples {
                    if let Some(v) = s.get(Field::Xid) {
                        if v != 0.0 && Some(v) != prev {
                            x.push(v as u32);
                        }
                        prev = Some(v);
                    }
                }
                x
            };
            let mut findings: Vec<BurnFinding> = report
                .findings
                .iter()
                .filter(|f| f.gpus == [gpu])
                .filter_map(|f| match f.kind {
                    Kind::ThermalThrottled | Kind::HardwareErrors => Some(f.into()),
                    // At the power cap is where dense math runs: information.
                    Kind::PowerCapped => Some(BurnFinding {
                        severity: Severity::Info,
                        ..f.into()
                    }),
                    _ => None,
                })
                .collect();
            let compute = run.compute.get(&gpu).cloned().unwrap_or_default();
            if compute.mismatches > 0 {
                findings.push(BurnFinding {
                    kind: "compute_errors".into(),
                    severity: Severity::Problem,
                    explanation: format!(
                        "the same {dtype} product gave different bits: {} words differed from \
                         the reference over {} checks",
                        compute.mismatches, compute.checks
                    ),
                    evidence: vec![
                        Evidence::new("mismatched_words", compute.mismatches as f64, "count"),
                        Evidence::new("checks", compute.checks as f64, "count"),
                        Evidence::new("products", compute.products as f64, "count"),
                    ],
                    advice: "the card computes wrongly under load: drain it, run dcgmi diag -r 3, \
                             and have it replaced if the errors repeat"
                        .into(),
                });
            }
            if let Some(why) = &compute.failed {
                findings.push(BurnFinding {
                    kind: "load_failed".into(),
                    severity: Severity::Problem,
                    explanation: format!("the load stopped on this GPU: {why}"),
                    evidence: vec![Evidence::new("products", compute.products as f64, "count")],
                    advice: "look for an XID in the kernel log (dmesg) and at the GPU's state \
                             (nvidia-smi -q)"
                        .into(),
                });
            }
            if let (Some(a), Some(b)) = (first, last)
                && a > 0.0
                && 1.0 - b / a >= UNSTABLE_DROP
            {
                findings.push(BurnFinding {
                    kind: "unstable".into(),
                    severity: Severity::Warning,
                    explanation: format!(
                        "TFLOPS fell {:.0} % from the first {window_name} of the run to the last \
                         ({a:.1} to {b:.1})",
                        (1.0 - b / a) * 100.0
                    ),
                    evidence: vec![
                        Evidence::new("tflops_first", a, "TFLOPS"),
                        Evidence::new("tflops_last", b, "TFLOPS"),
                    ],
                    advice: "the card slows as it warms: check its cooling and clock-event \
                             reasons over a longer run"
                        .into(),
                });
            }
            let share_s = |mask| reason_share(samples, mask).map(|s| s * span_s);
            GpuVerdict {
                gpu,
                status: Status::Healthy,
                tflops,
                tflops_first: first,
                tflops_last: last,
                stability: first.zip(last).and_then(|(a, b)| (a > 0.0).then(|| b / a)),
                stability_window: window_name,
                peak_temp_c: field_max(samples, Field::Temperature),
                temp_settled_s: settled(samples, start_ms),
                peak_memory_temp_c: run
                    .memory_temp
                    .get(&gpu)
                    .and_then(|v| v.iter().map(|p| p.1).reduce(f64::max)),
                sm_clock_mhz: field_mean(samples, Field::SmClock),
                sm_clock_max_mhz: field_max(samples, Field::SmMaxClock),
                power_w: field_mean(samples, Field::Power),
                power_limit_w: field_max(samples, Field::PowerLimit),
                power_capped_s: share_s(POWER_REASONS),
                thermal_throttled_s: share_s(THERMAL_REASONS),
                compute,
                ecc_sbe: growth(samples, Field::EccSbe),
                ecc_dbe: growth(samples, Field::EccDbe),
                xids,
                pcie_replays: growth(samples, Field::PcieReplays),
                findings,
            }
        })
        .collect();
    let median_tflops = median(out.iter().filter_map(|g| g.tflops).collect());
    if let Some(median) = median_tflops.filter(|m| *m > 0.0) {
        let siblings = Siblings::of(&out);
        for g in &mut out {
            if let Some(f) = slower(g, median, &siblings, run.window.gpu(g.gpu)) {
                g.findings.push(f);
            }
        }
    }
    for g in &mut out {
        g.findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        g.status = g
            .findings
            .iter()
            .map(|f| Status::of(f.severity))
            .max()
            .unwrap_or(Status::Healthy);
        if g.tflops.is_none() && g.status < Status::Failure {
            g.status = Status::Failure;
            g.findings.insert(
                0,
                BurnFinding {
                    kind: "load_failed".into(),
                    severity: Severity::Problem,
                    explanation: "no TFLOPS measured on this GPU: the load never ran on it".into(),
                    evidence: Vec::new(),
                    advice: "check that CUDA sees the GPU (CUDA_VISIBLE_DEVICES, nvidia-smi)"
                        .into(),
                },
            );
        }
    }
    let status = out
        .iter()
        .map(|g| g.status)
        .max()
        .unwrap_or(Status::Failure);
    Verdict {
        gpus: out,
        median_tflops,
        status,
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The siblings' medians the slow card's evidence is set against.
struct Siblings {
    count: usize,
    clock: Option<f64>,
    power: Option<f64>,
}

impl Siblings {
    fn of(all: &[GpuVerdict]) -> Self {
        Siblings {
            count: all.len(),
            clock: median(all.iter().filter_map(|g| g.sm_clock_mhz).collect()),
            power: median(all.iter().filter_map(|g| g.power_w).collect()),
        }
    }
}

/// The finding for a GPU [`SLOW_SHARE`] or more below the median, with the evidence that
/// names why: thermal or power reasons, a clock below its siblings' with no reason, or power
/// below theirs.
fn slower(g: &GpuVerdict, median: f64, sib: &Siblings, samples: &[Sample]) -> Option<BurnFinding> {
    let t = g.tflops?;
    let below = 1.0 - t / median;
    if below < SLOW_SHARE {
        return None;
    }
    let mut ev = vec![
        Evidence::new("tflops", t, "TFLOPS"),
        Evidence::new("tflops_median", median, "TFLOPS"),
        Evidence::new("below_median", below, "ratio"),
    ];
    if let Some(c) = g.sm_clock_mhz {
        ev.push(Evidence::new("sm_clock", c, "MHz"));
    }
    if let Some(c) = sib.clock {
        ev.push(Evidence::new("sm_clock_median", c, "MHz"));
    }
    if let Some(p) = g.power_w {
        ev.push(Evidence::new("power", p, "W"));
    }
    if let Some(p) = sib.power {
        ev.push(Evidence::new("power_median", p, "W"));
    }
    let thermal = reason_share(samples, THERMAL_REASONS).unwrap_or(0.0);
    let power = reason_share(samples, POWER_REASONS).unwrap_or(0.0);
    ev.push(Evidence::new("thermal_reason_share", thermal, "ratio"));
    ev.push(Evidence::new("power_reason_share", power, "ratio"));
    let clock_low = g
        .sm_clock_mhz
        .zip(sib.clock)
        .is_some_and(|(c, m)| m > 0.0 && 1.0 - c / m >= SLOW_SHARE);
    let power_low = g
        .power_w
        .zip(sib.power)
        .is_some_and(|(p, m)| m > 0.0 && 1.0 - p / m >= SLOW_SHARE);
    let clocks = match (g.sm_clock_mhz, sib.clock) {
        (Some(c), Some(m)) => format!("SM clock {c:.0} MHz against its siblings' {m:.0} MHz"),
        _ => "SM clock unknown".into(),
    };
    let (cause, advice) = if thermal >= REASON_SHARE {
        (
            format!(
                "thermally throttled {:.0} % of the time (peak {:.0} °C), {clocks}",
                thermal * 100.0,
                g.peak_temp_c.unwrap_or(f64::NAN)
            ),
            "check this card's cooling: fans, airflow, heatsink contact, its slot's neighbours",
        )
    } else if power >= REASON_SHARE && !power_low {
        (
            format!(
                "held at its power limit {:.0} % of the time ({:.0} W of {:.0} W), {clocks}",
                power * 100.0,
                g.power_w.unwrap_or(f64::NAN),
                g.power_limit_w.unwrap_or(f64::NAN)
            ),
            "compare its power limit and power draw with its siblings' (nvidia-smi -q -d POWER): \
             a lower limit set, or a board drawing more for the same work",
        )
    } else if clock_low {
        (
            format!("{clocks}, no throttle reason reported"),
            "the clock is held down with no reason the driver names: a clock locked by hand \
             (nvidia-smi -rgc resets it), a failing fan or power stage; compare nvidia-smi -q -d \
             CLOCK with a sibling",
        )
    } else if power_low {
        (
            format!(
                "power {:.0} W against its siblings' {:.0} W at a similar clock",
                g.power_w.unwrap_or(f64::NAN),
                sib.power.unwrap_or(f64::NAN)
            ),
            "the card does less work per clock: check its PCIe/NVLink links and memory errors",
        )
    } else {
        (
            format!("{clocks}; clocks and power as its siblings'"),
            "clocks and power look normal: check its memory (ECC, row remapping) and links",
        )
    };
    Some(BurnFinding {
        kind: "slower_than_siblings".into(),
        severity: Severity::Problem,
        explanation: format!(
            "GPU {} computes {:.0} % below the median of the {} GPUs burned ({t:.1} against \
             {median:.1} TFLOPS): {cause}",
            g.gpu,
            below * 100.0,
            sib.count
        ),
        evidence: ev,
        advice: advice.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of `gpus` GPUs, `secs` seconds at 1 s, each GPU's sample from `sample(gpu, t)`
    /// and TFLOPS from `tflops(gpu, t)`.
    fn run_of(
        gpus: u32,
        secs: i64,
        sample: impl Fn(u32, i64) -> Sample,
        tflops: impl Fn(u32, i64) -> f64,
    ) -> Run {
        let mut r = Run {
            gpus: (0..gpus).collect(),
            ..Run::default()
        };
        for g in 0..gpus {
            for t in 0..secs {
                r.window.push(sample(g, t));
                r.tflops
                    .entry(g)
                    .or_default()
                    .push((t * 1000, tflops(g, t)));
            }
        }
        r
    }

    fn busy(g: u32, t: i64) -> Sample {
        Sample::new(t * 1000, g)
            .with(Field::GpuUtil, 100.0)
            .with(Field::SmClock, 1980.0)
            .with(Field::SmMaxClock, 1980.0)
            .with(Field::Power, 650.0)
            .with(Field::PowerLimit, 700.0)
            .with(Field::Temperature, 60.0)
            .with(Field::ClockEventReasons, 0.0)
    }

    #[test]
    fn alike_gpus_are_healthy_and_the_numbers_are_theirs() {
        let v = judge(&run_of(4, 30, busy, |_, _| 600.0), Dtype::Bf16);
        assert_eq!(v.status, Status::Healthy);
        assert_eq!(v.median_tflops, Some(600.0));
        let g = v.gpu(1).unwrap();
        assert_eq!((g.tflops, g.stability), (Some(600.0), Some(1.0)));
        assert_eq!(g.stability_window, "third");
        assert_eq!((g.peak_temp_c, g.temp_settled_s), (Some(60.0), Some(0.0)));
        assert_eq!(g.power_capped_s, Some(0.0));
    }

    #[test]
    fn a_gpu_below_the_median_by_the_threshold_is_named_and_one_just_above_is_not() {
        // Six GPUs, four at 600: the median is 600.
        let r = run_of(6, 30, busy, |g, _| match g {
            1 => 600.0 * (1.0 - SLOW_SHARE) - 1.0,
            2 => 600.0 * (1.0 - SLOW_SHARE) + 1.0,
            _ => 600.0,
        });
        let v = judge(&r, Dtype::Bf16);
        let named: Vec<u32> = v
            .gpus
            .iter()
            .filter(|g| g.findings.iter().any(|f| f.kind == "slower_than_siblings"))
            .map(|g| g.gpu)
            .collect();
        assert_eq!(named, [1]);
        // Clocks and power like its siblings': the explanation says so.
        let f = &v.gpu(1).unwrap().findings[0];
        assert!(
            f.explanation.contains("as its siblings'"),
            "{}",
            f.explanation
        );
        assert_eq!(v.status, Status::Failure);
    }

    #[test]
    fn the_cause_of_a_slow_gpu_is_the_throttle_reason_or_the_clock() {
        // GPU 0 thermally throttled, GPU 1 with its clock held low and no reason, both at a
        // quarter of the other three's TFLOPS.
        let r = run_of(
            5,
            30,
            |g, t| match g {
                0 => busy(g, t).with(Field::ClockEventReasons, 0x20.into()),
                1 => busy(g, t).with(Field::SmClock, 300.0),
                _ => busy(g, t),
            },
            |g, _| if g < 2 { 150.0 } else { 600.0 },
        );
        let v = judge(&r, Dtype::Bf16);
        let why = |g| {
            v.gpu(g)
                .unwrap()
                .findings
                .iter()
                .find(|f| f.kind == "slower_than_siblings")
                .unwrap()
                .explanation
                .clone()
        };
        assert!(why(0).contains("thermally throttled 100 %"), "{}", why(0));
        assert!(why(1).contains("no throttle reason"), "{}", why(1));
    }

    #[test]
    fn tflops_falling_over_the_run_are_unstable_and_compute_errors_fail() {
        let mut r = run_of(3, 30, busy, |g, t| {
            if g == 0 {
                600.0 - 10.0 * t as f64
            } else {
                600.0
            }
        });
        r.compute.insert(
            2,
            ComputeErrors {
                products: 800,
                checks: 100,
                mismatches: 16,
                failed: None,
            },
        );
        let v = judge(&r, Dtype::Fp32);
        let g0 = v.gpu(0).unwrap();
        assert!(g0.findings.iter().any(|f| f.kind == "unstable"));
        assert!(g0.stability.unwrap() < 1.0 - UNSTABLE_DROP);
        let g2 = v.gpu(2).unwrap();
        assert_eq!(g2.status, Status::Failure);
        let f = &g2.findings[0];
        assert_eq!(f.kind, "compute_errors");
        assert_eq!(f.evidence("mismatched_words"), Some(16.0));
        assert_eq!(v.gpu(1).unwrap().status, Status::Healthy);
    }

    #[test]
    fn a_temperature_still_climbing_has_not_settled_and_a_plateau_has() {
        let climbing = run_of(
            1,
            60,
            |g, t| busy(g, t).with(Field::Temperature, 30.0 + t as f64),
            |_, _| 600.0,
        );
        assert_eq!(judge(&climbing, Dtype::Bf16).gpus[0].temp_settled_s, None);
        let plateau = run_of(
            1,
            60,
            |g, t| busy(g, t).with(Field::Temperature, 30.0 + (t.min(20) as f64) * 2.0),
            |_, _| 600.0,
        );
        let g = &judge(&plateau, Dtype::Bf16).gpus[0];
        // 68 °C at 19 s is within 2 °C of the 70 it ends at.
        assert_eq!(g.temp_settled_s, Some(19.0));
        assert_eq!(g.peak_temp_c, Some(70.0));
    }

    #[test]
    fn a_gpu_without_tflops_is_a_failure_and_long_runs_compare_minutes() {
        let mut r = run_of(2, 200, busy, |_, _| 600.0);
        r.tflops.remove(&1);
        let v = judge(&r, Dtype::Bf16);
        assert_eq!(v.gpu(1).unwrap().status, Status::Failure);
        assert_eq!(v.gpu(1).unwrap().findings[0].kind, "load_failed");
        assert_eq!(v.gpu(0).unwrap().stability_window, "minute");
        assert_eq!(Status::Failure.exit_code(), 3);
        assert_eq!(Status::Warning.exit_code(), 2);
    }
}
