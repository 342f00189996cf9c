//! Straggler: one GPU slower than its peers while all run alike.

use std::collections::BTreeMap;

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::limits::Limits;
use crate::segment::IDLE_UTIL_PCT;
use crate::stats;
use crate::window::Window;

/// Fewer GPUs than this have no majority to call one of them an outlier.
pub const STRAGGLER_MIN_GPUS: usize = 3;

/// A GPU busy for at least this share of the window takes part in the comparison; idle ones
/// are not running alike.
pub const BUSY_SHARE: f64 = 0.5;

/// A GPU this share or more below the median of its peers, in SM clock, power or utilisation
/// (each against the GPU's own limit where known), is the slow one: synchronous data-parallel
/// jobs run at the pace of their slowest rank. Peers of one model under one load differ by a
/// few % at most.
pub const OUTLIER_SHARE: f64 = 0.1;

/// A busy GPU: its id, its samples and its limits.
type Busy<'a> = (u32, &'a [crate::Sample], Limits);

pub(super) fn judge(window: &Window) -> Vec<Finding> {
    let Some((start, end)) = window.span() else {
        return Vec::new();
    };
    let busy: Vec<Busy<'_>> = window
        .gpus()
        .filter(|(_, s)| {
            stats::fraction(s, Field::GpuUtil, |u| u >= IDLE_UTIL_PCT)
                .is_some_and(|f| f >= BUSY_SHARE)
        })
        .map(|(g, s)| (g, s, Limits::from_samples(s)))
        .collect();
    // Running alike: where the process lists are known, only GPUs running the same programs
    // are peers (a training job's ranks, not the inference server beside them).
    let mut peers: BTreeMap<Option<Vec<String>>, Vec<Busy<'_>>> = BTreeMap::new();
    for b in busy {
        peers.entry(programs(b.1)).or_default().push(b);
    }
    let mut out = Vec::new();
    for group in peers.values() {
        out.extend(judge_peers(group, start, end));
    }
    out
}

/// The sorted names of the processes a GPU ran in the window, `None` where unknown.
fn programs(samples: &[crate::Sample]) -> Option<Vec<String>> {
    let mut names: Vec<String> = samples
        .iter()
        .filter_map(|s| s.processes.as_ref())
        .flatten()
        .map(|p| p.name.clone().unwrap_or_else(|| "?".into()))
        .collect();
    if names.is_empty() {
        return None;
    }
    names.sort();
    names.dedup();
    Some(names)
}

fn judge_peers(busy: &[Busy<'_>], start: i64, end: i64) -> Vec<Finding> {
    if busy.len() < STRAGGLER_MIN_GPUS {
        return Vec::new();
    }
    // Each metric as a share of the GPU's own limit where known (or of 1 where it is not),
    // so that a GPU with a lower limit set on purpose is compared on what it can do.
    type Metric = (&'static str, Field, fn(&Limits) -> Option<f64>);
    let metrics: [Metric; 3] = [
        ("sm_clock", Field::SmClock, |l| l.max_sm_clock_mhz),
        ("power", Field::Power, |l| l.power_limit_w),
        ("gpu_util", Field::GpuUtil, |_| Some(100.0)),
    ];
    let mut out: Vec<Finding> = Vec::new();
    for (name, field, limit) in metrics {
        // Shares of the limits where every peer's is known, else the readings themselves.
        let shares = busy.iter().all(|(_, _, l)| limit(l).is_some());
        let unit = match (shares, field) {
            (true, _) => "ratio",
            (false, Field::SmClock) => "MHz",
            (false, _) => "W",
        };
        let vals: Vec<(u32, f64)> = busy
            .iter()
            .filter_map(|(g, s, l)| {
                let m = stats::mean(s, field)?;
                Some((*g, if shares { m / limit(l)? } else { m }))
            })
            .collect();
        if vals.len() < STRAGGLER_MIN_GPUS {
            continue;
        }
        let mut sorted: Vec<f64> = vals.iter().map(|v| v.1).collect();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        if median <= 0.0 {
            continue;
        }
        for (g, v) in &vals {
            let below = 1.0 - v / median;
            if below < OUTLIER_SHARE {
                continue;
            }
            let ev = vec![
                Evidence::new(metric_name(name, "gpu"), *v, unit),
                Evidence::new(metric_name(name, "median"), median, unit),
                Evidence::new("below_median", below, "ratio"),
                Evidence::new("peers", vals.len() as f64, "count"),
            ];
            if let Some(f) = out.iter_mut().find(|f| f.gpus == [*g]) {
                f.evidence.extend(ev);
                f.explanation
                    .push_str(&format!(", {name} {:.0} % below", below * 100.0));
                continue;
            }
            out.push(Finding {
                kind: Kind::Straggler,
                severity: Severity::Problem,
                gpus: vec![*g],
                start_ms: start,
                end_ms: end,
                evidence: ev,
                explanation: format!(
                    "GPU {g} runs slower than its {} peers under the same load: {name} {:.0} % \
                     below their median",
                    vals.len() - 1,
                    below * 100.0
                ),
                advice: "compare this GPU's clock-event reasons, temperature and power limit with \
                         its peers (cooling, a lower limit set, a degraded PCIe or NVLink link); \
                         the whole job waits for it"
                    .into(),
            });
        }
    }
    out
}

/// Evidence names for the straggler's numbers (static strings, one per metric).
fn metric_name(metric: &str, which: &str) -> &'static str {
    match (metric, which) {
        ("sm_clock", "gpu") => "sm_clock",
        ("sm_clock", _) => "sm_clock_peers_median",
        ("power", "gpu") => "power",
        ("power", _) => "power_peers_median",
        (_, "gpu") => "gpu_util",
        _ => "gpu_util_peers_median",
    }
}
