//! [`Exposition`]: one collection in structured form (metric families, their samples, each
//! sample's labels and value), written by the [`Renderer`](crate::Renderer) in the same pass
//! as the text, so that other encodings (OTLP) are built from the same data as `/metrics`.

use std::fmt::Write as _;
use std::sync::Arc;

use dcgm::{Entity, Value};

use crate::counters::{CounterField, MetricKind};
use crate::identity::{EntityIdentity, LabelOptions, LabelSet, OtherEntity, labels};

/// One collection, structured: the families in the order the text writes them, each with the
/// series the text has, label for label and value for value.
#[derive(Debug, Clone, Default)]
pub struct Exposition {
    /// The metric families, in text order (families without series are left out, as in the
    /// text).
    pub families: Vec<MetricFamily>,
    /// Whether the values come from dcgm-sim (`None`: not said, as in the text).
    pub simulated: Option<bool>,
    /// The host-name label's name (`hostname` by default).
    pub hostname_label: String,
    /// The UUID label's name (`UUID` by default).
    pub uuid_label: String,
}

impl Exposition {
    /// Empties it.
    pub fn clear(&mut self) {
        self.families.clear();
        self.simulated = None;
    }

    /// The family named `name`.
    pub fn family(&self, name: &str) -> Option<&MetricFamily> {
        self.families.iter().find(|f| f.name == name)
    }
}

/// A metric family: a counters-file row (or an info family set by the caller) and its series.
#[derive(Debug, Clone)]
pub struct MetricFamily {
    /// The metric name, as in the text.
    pub name: String,
    /// The help text as written in the counters file (not escaped, without the simulated
    /// note).
    pub help: String,
    /// The row's type.
    pub kind: MetricKind,
    /// The DCGM field or exporter row it reads; `None` for a family set by the caller
    /// ([`Renderer::set_info_family`](crate::Renderer::set_info_family)).
    pub field: Option<CounterField>,
    /// Its series.
    pub samples: Vec<Sample>,
}

/// One series: its labels in text order (the label sets it shares with the entity's other
/// series, then its own) and its value. The shared sets are reference-counted, so that a
/// consumer can convert each once per collection (by [`Arc::as_ptr`]) rather than per series.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The entity's identity labels (GPU or MIG instance, NvSwitch, link, CPU), host name and
    /// host engine included.
    pub base: Arc<LabelSet>,
    /// The labels of the counters file's `label` rows for the entity.
    pub row: Arc<LabelSet>,
    /// The workload's labels (pod, HPC job; empty when none), or the owner's for per-owner
    /// rows.
    pub workload: Arc<LabelSet>,
    /// This row's own labels (`err_code`, `xid`, `window_size_in_ms`, `health_watch`, ...).
    pub own: LabelSet,
    /// [`Value::Int`] or [`Value::Double`].
    pub value: Value,
    /// The DCGM entity the value was read for (`None` for rows computed per physical GPU
    /// where no entity applies).
    pub entity: Option<Entity>,
}

impl Sample {
    /// Every label, names and unescaped values, in the order the text writes them.
    pub fn labels(&self) -> impl Iterator<Item = &(String, String)> + '_ {
        self.base
            .iter()
            .chain(self.row.iter())
            .chain(self.workload.iter())
            .chain(self.own.iter())
    }

    /// The value of label `name`.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The host-name and host-engine labels, as the text's identity labels end.
fn push_hostname(out: &mut LabelSet, opts: &LabelOptions) {
    if let Some(h) = opts.hostname.as_deref().filter(|h| !h.is_empty()) {
        out.push((opts.hostname_label.clone(), h.to_string()));
    }
    if let Some(e) = opts.hostengine.as_deref().filter(|e| !e.is_empty()) {
        out.push((labels::HOSTENGINE.to_string(), e.to_string()));
    }
}

/// The identity labels of a GPU or MIG instance, as the text writes them (same names, same
/// order, values unescaped).
pub(crate) fn base_label_pairs(id: &EntityIdentity, opts: &LabelOptions) -> LabelSet {
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

/// The labels of an NvSwitch, NVLink, CPU or core, as the text writes them.
pub(crate) fn other_label_pairs(o: &OtherEntity, opts: &LabelOptions) -> LabelSet {
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

/// A number label as the text writes it (`write_number`'s format).
pub(crate) fn number_label(v: &Value) -> Option<String> {
    let mut s = String::new();
    crate::number::write_number(v, &mut s).then_some(s)
}

/// `n` written as a decimal.
pub(crate) fn decimal(n: impl std::fmt::Display) -> String {
    let mut s = String::new();
    let _ = write!(s, "{n}");
    s
}
