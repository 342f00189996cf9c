//! HELP/TYPE metadata: the metric families a counters file declares (name, help text, type,
//! the field or exporter row they read, the entities they are exported for) and the
//! `dcgm_exporter_simulated` gauge's own.

use dcgm::EntityGroup;

use crate::counters::{Counter, CounterField, MetricKind};
use crate::identity::row_entity_group;

/// Name of the gauge that tells whether the values are simulated.
pub const SIMULATED_METRIC: &str = "dcgm_exporter_simulated";

/// The help text of [`SIMULATED_METRIC`].
pub(crate) const SIMULATED_HELP: &str =
    "1 when the values come from dcgm-sim, a DCGM simulator, instead of real GPUs.";

/// What every other help text ends with when the values are simulated.
pub(crate) const SIMULATED_NOTE: &str = " [simulated: values come from dcgm-sim, not from a GPU]";

/// A metric family of the counters file (a row that is not a `label` row).
#[derive(Debug)]
pub(crate) struct FamilyMeta {
    pub(crate) name: String,
    /// The help text as written.
    pub(crate) help: String,
    pub(crate) kind: MetricKind,
    pub(crate) field: CounterField,
    /// The entities a field row is exported for ([`row_entity_group`]).
    pub(crate) group: EntityGroup,
}

/// The metric families of `counters`, sorted by name (the text's order).
pub(crate) fn metric_families(counters: &[Counter]) -> Vec<FamilyMeta> {
    let mut families: Vec<FamilyMeta> = counters
        .iter()
        .filter(|c| !c.is_label())
        .map(|c| FamilyMeta {
            name: c.metric_name.clone(),
            help: c.help.clone(),
            kind: c.kind,
            field: c.field,
            group: c.field_id().map_or(EntityGroup::Gpu, row_entity_group),
        })
        .collect();
    families.sort_by(|a, b| a.name.cmp(&b.name));
    families
}
