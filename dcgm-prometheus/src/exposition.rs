//! [`Exposition`]: one collection as a model (metric families, their series, each series'
//! labels and value), built once per collection by the [`Renderer`](crate::Renderer). The
//! Prometheus text (`/metrics`, [`write_text`](crate::write_text)) and OTLP are two encodings
//! of it.

use std::sync::Arc;

use dcgm::{Entity, Value};

use crate::counters::{CounterField, MetricKind};
use crate::identity::LabelSet;

/// One collection: the families in the order the text writes them, each with its series,
/// label for label and value for value.
#[derive(Debug, Clone, Default)]
pub struct Exposition {
    /// The metric families, in text order (families without series are left out, as in the
    /// text).
    pub families: Vec<MetricFamily>,
    /// Whether the values come from dcgm-sim (`None`: not said). The text writes it as the
    /// `dcgm_exporter_simulated` gauge after the families, and, when true, a note on every
    /// help text.
    pub simulated: Option<bool>,
    /// The host-name label's name (`hostname` by default).
    pub hostname_label: String,
    /// The UUID label's name (`UUID` by default).
    pub uuid_label: String,
    /// The host engine's address when one exporter reads several (the `hostengine` label of
    /// every series, which the text also puts on `dcgm_exporter_simulated`); `None`: no such
    /// label.
    pub hostengine: Option<String>,
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
/// series, then its own) and its value. The shared sets are built once and reference-counted,
/// so that an encoder can convert each once per collection (by [`Arc::as_ptr`]) rather than
/// per series.
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
