//! A collector started for one engine, and the log of what it exports.

use dcgm_prometheus::{Collector, Counter};

use super::settings::Settings;

/// An exported entity as its labels name it: `GPU 0`, or a MIG instance by its GPU and
/// `GPU_I_ID` (DCGM's entity id, which the log used to show, is not a label).
fn describe(id: &dcgm_prometheus::EntityIdentity) -> String {
    match &id.mig {
        None => format!("GPU {}", id.gpu),
        Some(m) => {
            let instance = m
                .instance_id
                .map_or_else(|| "?".to_string(), |i| i.to_string());
            if m.profile.is_empty() {
                format!("GPU {} GPU_I_ID {instance}", id.gpu)
            } else {
                format!("GPU {} GPU_I_ID {instance} ({})", id.gpu, m.profile)
            }
        }
    }
}

pub(crate) enum StartError {
    /// The configuration cannot work (exit status 2).
    Config(dcgm::Error),
    /// DCGM failed; may work later.
    Dcgm(dcgm::Error),
}

/// Starts a collector and logs what it exports.
pub(crate) fn start(settings: &Settings, counters: Vec<Counter>) -> Result<Collector, StartError> {
    let source = settings
        .cli
        .collectors
        .as_ref()
        .map_or("built-in default counters".into(), |p| {
            p.display().to_string()
        });
    let collector = Collector::new(settings.config(counters)).map_err(|e| match e {
        e @ dcgm::Error::InvalidArgument(_) => StartError::Config(e),
        e => StartError::Dcgm(e),
    })?;
    if collector.is_simulated() {
        log::warn!(
            "SIMULATED DATA: reading from dcgm-sim, not from GPUs (dcgm_exporter_simulated 1)"
        );
    }
    for c in collector.ignored() {
        log::warn!(
            "{source} line {}: {} is not exported (not supported here)",
            c.line,
            c.metric_name
        );
    }
    log::info!(
        "exporting {} entities from {source}: {}",
        collector.identities().len(),
        collector
            .identities()
            .iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut counts = std::collections::BTreeMap::new();
    for o in collector.other_entities() {
        let kind = match o.group() {
            dcgm::EntityGroup::Switch => "NvSwitches",
            dcgm::EntityGroup::Link => "NVLinks",
            dcgm::EntityGroup::Cpu => "CPUs",
            _ => "CPU cores",
        };
        *counts.entry(kind).or_insert(0usize) += 1;
    }
    if !counts.is_empty() {
        log::info!(
            "and {}",
            counts
                .iter()
                .map(|(g, n)| format!("{n} {g}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(collector)
}
