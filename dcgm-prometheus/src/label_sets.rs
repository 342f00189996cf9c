//! Label building: the label sets of the model's series ([`LabelSet`], names and unescaped
//! values in text order), each built once: an entity's identity labels when the entities are
//! set, its `label`-row labels once per collection, a workload's when it is set. The text and
//! OTLP encoders only read them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use dcgm::{EntityGroup, FieldId, FieldValue, Value};

use crate::counters::{Counter, is_label_name};
use crate::identity::{
    EntityIdentity, LabelOptions, LabelSet, OtherEntity, is_global_field, labels, row_entity_group,
};
use crate::number::write_number;

/// The host-name and host-engine labels, with which identity labels end.
fn push_hostname(out: &mut LabelSet, opts: &LabelOptions) {
    if let Some(h) = opts.hostname.as_deref().filter(|h| !h.is_empty()) {
        out.push((opts.hostname_label.clone(), h.to_string()));
    }
    if let Some(e) = opts.hostengine.as_deref().filter(|e| !e.is_empty()) {
        out.push((labels::HOSTENGINE.to_string(), e.to_string()));
    }
}

/// The identity labels of a GPU or MIG instance: `gpu`, the UUID label, `pci_bus_id`,
/// `device`, `modelName`, for MIG `GPU_I_PROFILE` and `GPU_I_ID`, then host name and engine.
pub(crate) fn gpu_labels(id: &EntityIdentity, opts: &LabelOptions) -> LabelSet {
    let model = if opts.replace_blanks_in_model_name {
        id.model_name
            .split_whitespace()
            .collect::<Vec<_>>()
            .join("-")
    } else {
        id.model_name.clone()
    };
    let mut out = vec![
        ("gpu".to_string(), id.gpu.to_string()),
        (opts.uuid_label.clone(), id.uuid.clone()),
        ("pci_bus_id".to_string(), id.pci_bus_id.clone()),
        ("device".to_string(), format!("nvidia{}", id.gpu)),
        ("modelName".to_string(), model),
    ];
    if let Some(m) = &id.mig {
        out.push(("GPU_I_PROFILE".into(), m.profile.clone()));
        out.push((
            "GPU_I_ID".into(),
            m.instance_id.map(|i| i.to_string()).unwrap_or_default(),
        ));
    }
    push_hostname(&mut out, opts);
    out
}

/// The labels of an NvSwitch, NVLink, CPU or core, as dcgm-exporter names them (empty GPU
/// identity labels of a GPU link are left out, as dcgm-exporter does), then host name and
/// engine.
pub(crate) fn other_entity_labels(o: &OtherEntity, opts: &LabelOptions) -> LabelSet {
    use labels::*;
    let mut out: LabelSet = Vec::new();
    let mut push = |n: &str, v: String| out.push((n.to_string(), v));
    match o {
        OtherEntity::Switch { id } => push(NVSWITCH, format!("nvswitch{id}")),
        OtherEntity::SwitchLink { switch, link } => {
            push(NVLINK, link.to_string());
            push(NVSWITCH, format!("nvswitch{switch}"));
        }
        OtherEntity::GpuLink {
            gpu,
            link,
            uuid,
            pci_bus_id,
            model_name,
        } => {
            push(NVLINK, link.to_string());
            push("gpu", gpu.to_string());
            if !uuid.is_empty() {
                push(GPU_UUID, uuid.clone());
            }
            if !pci_bus_id.is_empty() {
                push("pci_bus_id", pci_bus_id.clone());
            }
            push("device", format!("nvidia{gpu}"));
            if !model_name.is_empty() {
                push(MODEL_NAME, model_name.clone());
            }
        }
        OtherEntity::Cpu { id } => push(CPU, id.to_string()),
        OtherEntity::CpuCore { cpu, core } => {
            push(CPU_CORE, core.to_string());
            push(CPU, cpu.to_string());
        }
    }
    push_hostname(&mut out, opts);
    out
}

/// A `label` row of the counters file: a field whose value labels the series of entities.
#[derive(Debug)]
pub(crate) struct LabelRow {
    field: FieldId,
    name: String,
    /// The entities it labels ([`row_entity_group`]), every entity when `global`.
    group: EntityGroup,
    global: bool,
}

/// The `label` rows of `counters`, sorted by name.
pub(crate) fn label_rows(counters: &[Counter]) -> Vec<LabelRow> {
    let mut rows: Vec<LabelRow> = counters
        .iter()
        .filter(|c| c.is_label())
        .filter_map(|c| {
            let field = c.field_id()?;
            Some(LabelRow {
                field,
                name: c.metric_name.clone(),
                group: row_entity_group(field),
                global: is_global_field(field),
            })
        })
        .collect();
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    rows
}

/// Rebuilds the `label`-row labels of one entity of `group` from its values; unchanged labels
/// keep their set (and the encoders' caches of it).
pub(crate) fn refresh_row_labels(
    slot: &mut Arc<LabelSet>,
    values: Option<&BTreeMap<FieldId, FieldValue>>,
    rows: &[LabelRow],
    group: EntityGroup,
) {
    let mut set = LabelSet::new();
    if let Some(values) = values {
        for l in rows.iter().filter(|l| l.global || l.group == group) {
            let Some(v) = values.get(&l.field) else {
                continue;
            };
            let value = match &v.value {
                Value::String(s) => Some(s.clone()),
                Value::Int(_) | Value::Double(_) => number_label(&v.value),
                _ => None,
            };
            if let Some(value) = value {
                set.push((l.name.clone(), value));
            }
        }
    }
    if **slot != set {
        *slot = Arc::new(set);
    }
}

/// A label set without the names that are not Prometheus label names.
pub(crate) fn prometheus_labels(set: &LabelSet) -> LabelSet {
    set.iter()
        .filter(|(n, _)| is_label_name(n))
        .cloned()
        .collect()
}

/// A number label as the text writes sample values ([`write_number`]'s format).
fn number_label(v: &Value) -> Option<String> {
    let mut s = String::new();
    write_number(v, &mut s).then_some(s)
}

/// `n` written as a decimal.
pub(crate) fn decimal(n: impl std::fmt::Display) -> String {
    let mut s = String::new();
    let _ = write!(s, "{n}");
    s
}
