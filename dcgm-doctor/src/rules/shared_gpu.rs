//! Shared GPU: more than one process on it at once.

use std::collections::BTreeMap;

use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::sample::{GpuProcess, Sample};

pub(super) fn judge(gpu: u32, samples: &[Sample]) -> Vec<Finding> {
    let together: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.processes.as_ref().is_some_and(|p| p.len() > 1))
        .collect();
    let (Some(first), Some(last)) = (together.first(), together.last()) else {
        return Vec::new();
    };
    // Each pid once, with the most memory it was seen holding.
    let mut procs: BTreeMap<u32, GpuProcess> = BTreeMap::new();
    for p in together.iter().flat_map(|s| s.processes.iter().flatten()) {
        let e = procs.entry(p.pid).or_insert_with(|| p.clone());
        e.memory_mib = e.memory_mib.max(p.memory_mib);
        if e.name.is_none() {
            e.name.clone_from(&p.name);
        }
    }
    let list = procs
        .values()
        .map(|p| {
            let name = p.name.as_deref().unwrap_or("?");
            match p.memory_mib {
                Some(m) => format!("{} ({name}, {m} MiB)", p.pid),
                None => format!("{} ({name})", p.pid),
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let share = together.len() as f64 / samples.len() as f64;
    vec![Finding {
        kind: Kind::SharedGpu,
        severity: Severity::Warning,
        gpus: vec![gpu],
        start_ms: first.timestamp_ms,
        end_ms: last.timestamp_ms,
        evidence: vec![
            Evidence::new("processes", procs.len() as f64, "count"),
            Evidence::new("shared_share", share, "ratio"),
        ],
        explanation: format!(
            "{} processes share the GPU, {:.0} % of the time: pids {list}",
            procs.len(),
            share * 100.0
        ),
        advice: "processes on one GPU time-slice it and compete for its memory: give each its \
                 own GPU (CUDA_VISIBLE_DEVICES), a MIG instance, or run them under MPS"
            .into(),
    }]
}
