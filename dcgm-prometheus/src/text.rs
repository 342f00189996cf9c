//! The Prometheus text exposition format: [`Renderer`] writes snapshots as families of
//! series.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::io;
use std::sync::Arc;

use dcgm::{Entity, EntityGroup, FieldId, FieldValue, GpuP2pStatus, Value};

use crate::counters::{Counter, CounterField, ExporterCounter, MetricKind, is_label_name};
use crate::events::{CLOCK_EVENT_REASONS, EventWindow};
use crate::exposition::{
    Exposition, MetricFamily, Sample, base_label_pairs, decimal, number_label, other_label_pairs,
};
use crate::gpu_info::GpuInfo;
use crate::identity::{
    EntityIdentity, LabelOptions, LabelSet, OtherEntity, base_labels, escape_help,
    escape_label_value, is_global_field, labels, other_labels, row_entity_group,
};
use crate::number::write_number;
use crate::verdicts::{GpuHealth, HEALTH_WATCHES, p2p_status_value};
use dcgm_reader::Snapshot;

/// Name of the gauge that tells whether the values are simulated.
pub const SIMULATED_METRIC: &str = "dcgm_exporter_simulated";

/// Label used for the window size of the windowed exporter rows (as dcgm-exporter).
pub const WINDOW_LABEL: &str = "window_size_in_ms";

struct Family {
    name: String,
    /// Escaped help text.
    help: String,
    /// The help text as written.
    raw_help: String,
    kind: MetricKind,
    field: CounterField,
    /// The entities a field row is exported for ([`row_entity_group`]).
    group: EntityGroup,
}

/// A family of value-1 series per identity set by the caller ([`Renderer::set_info_family`]).
struct InfoFamily {
    name: String,
    /// Escaped help text.
    help: String,
    /// The help text as given.
    raw_help: String,
    /// Per entity: the label strings of its series (`,name="value"…`), one series each.
    series: Vec<(Entity, Vec<String>)>,
    /// The same label sets, structured (label names only).
    sets: Vec<(Entity, Vec<LabelSet>)>,
}

/// A `label` row.
struct LabelRow {
    field: FieldId,
    name: String,
    /// The entities it labels ([`row_entity_group`]), every entity when `global`.
    group: EntityGroup,
    global: bool,
}

/// Writes snapshots in Prometheus text format; see the [module docs](super).
///
/// ```
/// use dcgm::{Entity, FieldId, FieldValue, Value};
/// use dcgm_prometheus::{EntityIdentity, LabelOptions, Renderer, parse_counters};
/// use dcgm_reader::Snapshot;
/// let counters = parse_counters("DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (C).").unwrap();
/// let gpu0 = EntityIdentity::gpu(0, "GPU-1234", "00000000:18:00.0", "NVIDIA H100 80GB HBM3");
/// let opts = LabelOptions { hostname: Some("node-1".into()), ..LabelOptions::default() };
/// let mut r = Renderer::new(&counters, vec![gpu0], opts);
/// let mut snap = Snapshot::new();
/// let v = FieldValue { entity: Entity::gpu(0), field: FieldId(150), timestamp_us: 0,
///                      value: Value::Int(41), status: dcgm::ReturnCode::Ok };
/// snap.entry(Entity::gpu(0)).or_default().insert(FieldId(150), v);
/// let mut text = String::new();
/// r.render(&snap, &[], &mut text);
/// assert!(text.contains(
///     "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-1234\",pci_bus_id=\"00000000:18:00.0\",\
///      device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"node-1\"} 41\n"));
/// ```
///
/// Rows of NvSwitch, NVLink, CPU and CPU-core fields ([`row_entity_group`]) are written for the
/// entities given to [`Renderer::set_other_entities`], with dcgm-exporter's labels for them:
///
/// ```
/// use dcgm::{Entity, EntityGroup, FieldId, FieldValue, Value};
/// use dcgm_prometheus::OtherEntity;
/// use dcgm_prometheus::{LabelOptions, Renderer, parse_counters};
/// use dcgm_reader::Snapshot;
/// let counters = parse_counters("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS, gauge, t\n").unwrap();
/// let mut r = Renderer::new(&counters, vec![], LabelOptions { hostname: None, ..Default::default() });
/// r.set_other_entities(vec![OtherEntity::Switch { id: 2 }]);
/// let e = Entity::new(EntityGroup::Switch, 2);
/// let f = FieldId::parse("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS").unwrap();
/// let mut snap = Snapshot::new();
/// snap.entry(e).or_default().insert(f, FieldValue { entity: e, field: f, timestamp_us: 0,
///                                                  value: Value::Int(47), status: dcgm::ReturnCode::Ok });
/// let mut text = String::new();
/// r.render(&snap, &[], &mut text);
/// assert!(text.contains("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS{nvswitch=\"nvswitch2\"} 47\n"));
/// ```
pub struct Renderer {
    families: Vec<Family>,
    /// `label` rows, sorted by name.
    labels: Vec<LabelRow>,
    identities: Vec<EntityIdentity>,
    opts: LabelOptions,
    /// Per identity: its fixed labels, without braces.
    base: Vec<String>,
    /// Per identity: the labels of `label` rows, rebuilt each render (the buffers are kept).
    row: Vec<String>,
    /// Per physical GPU of the identities: its id, its labels without MIG labels (for the
    /// health and P2P rows), and the index of its first identity (whose `label` rows it uses).
    pub(super) gpu_base: Vec<(u32, String, usize)>,
    /// NvSwitches, NVLinks, CPUs and cores, in export order, with their entities.
    others: Vec<(OtherEntity, Entity, EntityGroup)>,
    /// Per other entity: its fixed labels.
    other_base: Vec<String>,
    /// Per other entity: the labels of `label` rows.
    other_row: Vec<String>,
    health: Option<GpuHealth>,
    p2p: Option<Vec<GpuP2pStatus>>,
    /// Per physical GPU: what `DCGM_EXP_GPU_INFO` says (`None`: the row is left out).
    gpu_info: Option<BTreeMap<u32, GpuInfo>>,
    /// Per physical GPU and owner: the owner's labels and its processes' memory in MiB, for
    /// `DCGM_EXP_POD_FB_USED` (`None`: the row is left out).
    owner_memory: Option<Vec<(u32, String, f64)>>,
    /// Per physical GPU and owner: the owner's labels and its processes' SM utilisation in
    /// percent, for `DCGM_EXP_POD_SM_UTIL` (`None`: the row is left out).
    owner_sm_util: Option<Vec<(u32, String, f64)>>,
    /// Per field: per-workload values of GPU series, replacing the repeated device value
    /// (dcgm-exporter's `--kubernetes-virtual-gpus` for `DCGM_FI_DEV_GPU_UTIL` and
    /// `DCGM_FI_DEV_FB_USED`): per entity, the workload's label string, label set and value.
    workload_values: Vec<(FieldId, Vec<WorkloadValue>)>,
    /// Families set by the caller, sorted by name.
    info_families: Vec<InfoFamily>,
    /// Per identity: the label sets of the workloads on it (`,pod="…",…`), one series each;
    /// empty: one series without them.
    workload: Vec<Vec<String>>,
    simulated: Option<bool>,
    xid_field: Option<FieldId>,
    scratch: Vec<(i64, u64)>,
    /// One metric family's text, kept between renders.
    family: String,
    /// The structured forms of `base`, `gpu_base`, `other_base`, `row`, `other_row`,
    /// `workload` and `owner_memory`'s labels, for [`Renderer::render_structured`].
    pairs: Pairs,
}

/// One workload's own value of a GPU series: the entity, the workload's label string and set,
/// the value.
type WorkloadValue = (Entity, String, Arc<LabelSet>, f64);

/// Labels in structured form, parallel to the renderer's label strings.
#[derive(Default)]
struct Pairs {
    base: Vec<Arc<LabelSet>>,
    gpu_base: Vec<Arc<LabelSet>>,
    other_base: Vec<Arc<LabelSet>>,
    row: Vec<Arc<LabelSet>>,
    other_row: Vec<Arc<LabelSet>>,
    workload: Vec<Vec<Arc<LabelSet>>>,
    owner_memory: Option<Vec<Arc<LabelSet>>>,
    owner_sm_util: Option<Vec<Arc<LabelSet>>>,
    /// No labels.
    empty: Arc<LabelSet>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field(
                "families",
                &self.families.iter().map(|x| &x.name).collect::<Vec<_>>(),
            )
            .field("identities", &self.identities.len())
            .field("other_entities", &self.others.len())
            .finish()
    }
}

/// The values of `entity` in the first snapshot that has it.
fn values_of<'a>(
    snaps: &[&'a Snapshot],
    entity: &Entity,
) -> Option<&'a BTreeMap<FieldId, FieldValue>> {
    snaps.iter().find_map(|s| s.get(entity))
}

/// Rebuilds the `label`-row labels of one entity of `group`.
fn fill_row(
    row: &mut String,
    values: Option<&BTreeMap<FieldId, FieldValue>>,
    labels: &[LabelRow],
    group: EntityGroup,
) {
    row.clear();
    let Some(values) = values else {
        return;
    };
    for l in labels {
        if !(l.global || l.group == group) {
            continue;
        }
        let Some(v) = values.get(&l.field) else {
            continue;
        };
        let start = row.len();
        let _ = write!(row, ",{}=\"", l.name);
        let ok = match &v.value {
            Value::String(s) => {
                escape_label_value(s, row);
                true
            }
            Value::Int(_) | Value::Double(_) => write_number(&v.value, row),
            _ => false,
        };
        if ok {
            row.push('"');
        } else {
            row.truncate(start);
        }
    }
}

/// [`fill_row`]'s labels, structured.
fn fill_row_pairs(
    slot: &mut Arc<LabelSet>,
    values: Option<&BTreeMap<FieldId, FieldValue>>,
    labels: &[LabelRow],
    group: EntityGroup,
) {
    let mut row = LabelSet::new();
    fill_row_set(&mut row, values, labels, group);
    // Unchanged labels keep their set (and the converters' caches of it).
    if **slot != row {
        *slot = Arc::new(row);
    }
}

fn fill_row_set(
    row: &mut LabelSet,
    values: Option<&BTreeMap<FieldId, FieldValue>>,
    labels: &[LabelRow],
    group: EntityGroup,
) {
    let Some(values) = values else {
        return;
    };
    for l in labels {
        if !(l.global || l.group == group) {
            continue;
        }
        let Some(v) = values.get(&l.field) else {
            continue;
        };
        let value = match &v.value {
            Value::String(s) => Some(s.clone()),
            Value::Int(_) | Value::Double(_) => number_label(&v.value),
            _ => None,
        };
        if let Some(value) = value {
            row.push((l.name.clone(), value));
        }
    }
}

/// A label set without the names that are not label names (what [`label_string`] writes).
fn label_pairs(set: &LabelSet) -> LabelSet {
    set.iter()
        .filter(|(n, _)| is_label_name(n))
        .cloned()
        .collect()
}

/// Adds `s` to the family's structured series, when they are asked for.
fn add(list: &mut Option<Vec<Sample>>, s: Option<Sample>) {
    if let (Some(list), Some(s)) = (list.as_mut(), s) {
        list.push(s);
    }
}

/// A sample of a number value (`None` for anything else, which the text leaves out too):
/// the shared label sets `parts` (entity, label rows, workload), then the row's own labels.
fn sample(
    parts: (&Arc<LabelSet>, &Arc<LabelSet>, &Arc<LabelSet>),
    own: LabelSet,
    v: &Value,
    entity: Option<Entity>,
) -> Option<Sample> {
    matches!(v, Value::Int(_) | Value::Double(_)).then(|| Sample {
        base: parts.0.clone(),
        row: parts.1.clone(),
        workload: parts.2.clone(),
        own,
        value: v.clone(),
        entity,
    })
}

/// Writes one series: `name{base row} value`, nothing when the value is not a number.
fn write_series(out: &mut String, name: &str, base: &str, row: &str, v: &Value) {
    if !matches!(v, Value::Int(_) | Value::Double(_)) {
        return;
    }
    let line = out.len();
    let _ = write!(out, "{name}{{{base}{row}}} ");
    if write_number(v, out) {
        out.push('\n');
    } else {
        out.truncate(line);
    }
}

impl Renderer {
    /// A renderer of `counters` for `identities` (which are sorted into export order).
    pub fn new(
        counters: &[Counter],
        mut identities: Vec<EntityIdentity>,
        opts: LabelOptions,
    ) -> Self {
        let mut families: Vec<Family> = counters
            .iter()
            .filter(|c| !c.is_label())
            .map(|c| Family {
                name: c.metric_name.clone(),
                help: escape_help(&c.help),
                raw_help: c.help.clone(),
                kind: c.kind,
                field: c.field,
                group: c.field_id().map_or(EntityGroup::Gpu, row_entity_group),
            })
            .collect();
        families.sort_by(|a, b| a.name.cmp(&b.name));
        let mut labels: Vec<LabelRow> = counters
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
        labels.sort_by(|a, b| a.name.cmp(&b.name));
        identities.sort_by_key(EntityIdentity::sort_key);
        let mut r = Self {
            families,
            labels,
            identities: Vec::new(),
            opts,
            base: Vec::new(),
            row: Vec::new(),
            gpu_base: Vec::new(),
            others: Vec::new(),
            other_base: Vec::new(),
            other_row: Vec::new(),
            health: None,
            p2p: None,
            gpu_info: None,
            owner_memory: None,
            workload_values: Vec::new(),
            owner_sm_util: None,
            info_families: Vec::new(),
            workload: Vec::new(),
            simulated: None,
            xid_field: ExporterCounter::XidErrorsCount.source_field(),
            scratch: Vec::new(),
            family: String::new(),
            pairs: Pairs::default(),
        };
        r.set_identities(identities);
        r
    }

    /// Adds the `dcgm_exporter_simulated` gauge (1 when `simulated`), and, when simulated,
    /// a note on every help text.
    pub fn mark_simulated(&mut self, simulated: bool) {
        if simulated && self.simulated != Some(true) {
            for f in &mut self.families {
                f.help
                    .push_str(" [simulated: values come from dcgm-sim, not from a GPU]");
            }
        }
        self.simulated = Some(simulated);
    }

    /// The identities, in export order.
    pub fn identities(&self) -> &[EntityIdentity] {
        &self.identities
    }

    /// Replaces the identities (e.g. once MIG profile names are known).
    pub fn set_identities(&mut self, mut identities: Vec<EntityIdentity>) {
        identities.sort_by_key(EntityIdentity::sort_key);
        self.base = identities
            .iter()
            .map(|i| base_labels(i, &self.opts))
            .collect();
        self.row = vec![String::new(); identities.len()];
        self.pairs.base = identities
            .iter()
            .map(|i| Arc::new(base_label_pairs(i, &self.opts)))
            .collect();
        self.pairs.row = vec![self.pairs.empty.clone(); identities.len()];
        // Workload labels stay with their entity.
        let mut old_sets = std::mem::take(&mut self.pairs.workload);
        old_sets.resize(self.identities.len(), Vec::new());
        let mut old: Vec<(Entity, Vec<String>, Vec<Arc<LabelSet>>)> = self
            .identities
            .iter()
            .map(|i| i.entity)
            .zip(std::mem::take(&mut self.workload))
            .zip(old_sets)
            .map(|((e, w), s)| (e, w, s))
            .collect();
        (self.workload, self.pairs.workload) = identities
            .iter()
            .map(|i| {
                old.iter_mut()
                    .find(|(e, _, _)| *e == i.entity)
                    .map(|(_, w, s)| (std::mem::take(w), std::mem::take(s)))
                    .unwrap_or_default()
            })
            .unzip();
        self.gpu_base.clear();
        self.pairs.gpu_base.clear();
        for (i, id) in identities.iter().enumerate() {
            if self.gpu_base.iter().all(|(g, _, _)| *g != id.gpu) {
                let whole = EntityIdentity {
                    entity: Entity::gpu(id.gpu),
                    mig: None,
                    ..id.clone()
                };
                self.gpu_base
                    .push((id.gpu, base_labels(&whole, &self.opts), i));
                self.pairs
                    .gpu_base
                    .push(Arc::new(base_label_pairs(&whole, &self.opts)));
            }
        }
        self.identities = identities;
    }

    /// The NvSwitches, NVLinks, CPUs and CPU cores, in export order.
    pub fn other_entities(&self) -> impl ExactSizeIterator<Item = &OtherEntity> + '_ {
        self.others.iter().map(|(o, _, _)| o)
    }

    /// Sets the NvSwitches, NVLinks, CPUs and CPU cores whose rows are exported (sorted into
    /// export order: switches, links, CPUs, cores).
    pub fn set_other_entities(&mut self, mut others: Vec<OtherEntity>) {
        others.sort_by_key(OtherEntity::sort_key);
        self.other_base = others.iter().map(|o| other_labels(o, &self.opts)).collect();
        self.other_row = vec![String::new(); others.len()];
        self.pairs.other_base = others
            .iter()
            .map(|o| Arc::new(other_label_pairs(o, &self.opts)))
            .collect();
        self.pairs.other_row = vec![self.pairs.empty.clone(); others.len()];
        self.others = others
            .into_iter()
            .map(|o| {
                let (e, g) = (o.entity(), o.group());
                (o, e, g)
            })
            .collect();
    }

    /// Labels of the workloads on each GPU or GPU instance (Kubernetes pods, HPC jobs):
    /// `labels` gives, per identity, one label set per series (dcgm-exporter writes one series
    /// per HPC job); no set leaves the identity's series as they are. Label names that are
    /// not Prometheus label names are left out; values are escaped. Applies to the identities'
    /// own rows and event windows, until the next call.
    pub fn set_workload_labels(&mut self, labels: impl Fn(&EntityIdentity) -> Vec<LabelSet>) {
        for ((id, slot), sets) in self
            .identities
            .iter()
            .zip(&mut self.workload)
            .zip(&mut self.pairs.workload)
        {
            slot.clear();
            sets.clear();
            for set in labels(id) {
                slot.push(label_string(&set));
                sets.push(Arc::new(label_pairs(&set)));
            }
        }
    }

    /// The verdicts written by the `DCGM_EXP_GPU_HEALTH_STATUS` row (`None`: the row is left
    /// out). Only GPUs of the identities are written.
    pub fn health_mut(&mut self) -> &mut Option<GpuHealth> {
        &mut self.health
    }

    /// Whether the counters have the exporter row `row`.
    pub fn has_row(&self, row: ExporterCounter) -> bool {
        self.families
            .iter()
            .any(|f| f.field == CounterField::Exporter(row))
    }

    /// What the `DCGM_EXP_GPU_INFO` row writes for each physical GPU (`None`: the row is left
    /// out). Each exported identity of a GPU in the map gets one series: its identity labels
    /// (GPU or MIG instance, host name) and the [`GpuInfo`] labels that have a value.
    pub fn set_gpu_info(&mut self, info: Option<BTreeMap<u32, GpuInfo>>) {
        self.gpu_info = info;
    }

    /// What the `DCGM_EXP_POD_SM_UTIL` row writes: per physical GPU and owner (its labels),
    /// the SM utilisation of the owner's processes in percent, written with the GPU's labels
    /// (`None`: the row is left out). See [`sm_util_by_owner`](crate::sm_util_by_owner).
    pub fn set_owner_sm_util(&mut self, util: Option<Vec<(u32, LabelSet, f64)>>) {
        (self.pairs.owner_sm_util, self.owner_sm_util) = owner_rows(util);
    }

    /// What the `DCGM_EXP_POD_FB_USED` row writes: per physical GPU and owner (its labels),
    /// the GPU memory of the owner's processes in bytes, written in MiB with the GPU's labels
    /// (`None`: the row is left out). See [`memory_by_owner`](crate::memory_by_owner).
    pub fn set_owner_memory(&mut self, memory: Option<Vec<(u32, LabelSet, u64)>>) {
        let mib = memory.map(|m| {
            m.into_iter()
                .map(|(gpu, set, bytes)| (gpu, set, bytes as f64 / 1_048_576.0))
                .collect()
        });
        (self.pairs.owner_memory, self.owner_memory) = owner_rows(mib);
    }

    /// Per-workload values for the GPU series of `field`, from the next render on: for an
    /// identity with entries, its series is written once without workload labels (the
    /// device's value), then once per entry with the entry's labels and value, instead of
    /// once per workload label set with the device's value. Identities without entries are
    /// written as before. An empty list (or `None`) goes back to the usual series.
    /// dcgm-exporter's `--kubernetes-virtual-gpus` does this for `DCGM_FI_DEV_GPU_UTIL` and
    /// `DCGM_FI_DEV_FB_USED` on shared GPUs.
    pub fn set_workload_values(
        &mut self,
        field: FieldId,
        values: Option<Vec<(Entity, LabelSet, f64)>>,
    ) {
        self.workload_values.retain(|(f, _)| *f != field);
        if let Some(v) = values.filter(|v| !v.is_empty()) {
            let rows = v
                .into_iter()
                .map(|(e, set, value)| (e, label_string(&set), Arc::new(set), value))
                .collect();
            self.workload_values.push((field, rows));
        }
    }

    /// A family `name` (a gauge) of value-1 series, written with the families of the counters
    /// in name order until it is set again or removed ([`Renderer::remove_info_family`]):
    /// one series per label set that `labels` gives for an identity, with the identity's
    /// labels first (`DCGM_EXP_HPC_JOB_INFO{gpu=…,UUID=…,…,hpc_job="…"} 1`). Label names that
    /// are not Prometheus label names are left out; values are escaped. A family whose name is
    /// also a counter's is not written.
    pub fn set_info_family(
        &mut self,
        name: &str,
        help: &str,
        labels: impl Fn(&EntityIdentity) -> Vec<LabelSet>,
    ) {
        let all: Vec<(Entity, Vec<LabelSet>)> = self
            .identities
            .iter()
            .map(|id| (id.entity, labels(id)))
            .collect();
        let series = all
            .iter()
            .map(|(e, sets)| (*e, sets.iter().map(label_string).collect()))
            .collect();
        let sets = all
            .iter()
            .map(|(e, s)| (*e, s.iter().map(label_pairs).collect()))
            .collect();
        self.remove_info_family(name);
        if self.families.iter().any(|f| f.name == name) {
            return;
        }
        self.info_families.push(InfoFamily {
            name: name.into(),
            help: escape_help(help),
            raw_help: help.into(),
            series,
            sets,
        });
        self.info_families.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Stops writing the family of [`Renderer::set_info_family`] named `name`.
    pub fn remove_info_family(&mut self, name: &str) {
        self.info_families.retain(|f| f.name != name);
    }

    /// The statuses written by the `DCGM_EXP_P2P_STATUS` row (`None`: the row is left out).
    /// Only GPUs of the identities are written, with every peer.
    pub fn set_p2p(&mut self, p2p: Option<Vec<GpuP2pStatus>>) {
        self.p2p = p2p;
    }

    /// Writes the exposition of `snap` into `out` (cleared first). `windows` feed the
    /// `DCGM_EXP_XID_ERRORS_COUNT` / `DCGM_EXP_CLOCK_EVENTS_COUNT` rows; a windowed row
    /// without its window is left out.
    pub fn render(&mut self, snap: &Snapshot, windows: &[EventWindow], out: &mut String) {
        out.clear();
        // Writing into a String cannot fail.
        let _ = self.render_to(&[snap], windows, out);
    }

    /// Like [`Renderer::render`], with the values spread over several snapshots (one per
    /// reader): an entity's values are taken from the first snapshot that has the entity.
    pub fn render_snapshots(
        &mut self,
        snaps: &[&Snapshot],
        windows: &[EventWindow],
        out: &mut String,
    ) {
        out.clear();
        let _ = self.render_to(snaps, windows, out);
    }

    /// Appends the exposition of `snaps` to any [`fmt::Write`] (a `String`, a formatter). Each
    /// metric family is built in a buffer the renderer keeps, and written whole, so a family
    /// with no series is left out without taking back what was written.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn render_to<W: fmt::Write + ?Sized>(
        &mut self,
        snaps: &[&Snapshot],
        windows: &[EventWindow],
        out: &mut W,
    ) -> fmt::Result {
        self.render_inner(snaps, windows, out, None)
    }

    /// Like [`Renderer::render_snapshots`], and also fills `structured` (cleared first) with
    /// the same collection in structured form: the same families in the same order, and in
    /// each the same series with the same labels (unescaped) and values, in the same pass.
    /// `dcgm_exporter_simulated` is [`Exposition::simulated`] rather than a family.
    pub fn render_structured(
        &mut self,
        snaps: &[&Snapshot],
        windows: &[EventWindow],
        out: &mut String,
        structured: &mut Exposition,
    ) {
        out.clear();
        structured.clear();
        structured.simulated = self.simulated;
        structured
            .hostname_label
            .clone_from(&self.opts.hostname_label);
        structured.uuid_label.clone_from(&self.opts.uuid_label);
        let _ = self.render_inner(snaps, windows, out, Some(structured));
    }

    fn render_inner<W: fmt::Write + ?Sized>(
        &mut self,
        snaps: &[&Snapshot],
        windows: &[EventWindow],
        out: &mut W,
        structured: Option<&mut Exposition>,
    ) -> fmt::Result {
        let with_pairs = structured.is_some();
        for (i, id) in self.identities.iter().enumerate() {
            let values = values_of(snaps, &id.entity);
            fill_row(&mut self.row[i], values, &self.labels, EntityGroup::Gpu);
            if with_pairs {
                fill_row_pairs(
                    &mut self.pairs.row[i],
                    values,
                    &self.labels,
                    EntityGroup::Gpu,
                );
            }
        }
        for (i, (_, e, g)) in self.others.iter().enumerate() {
            fill_row(
                &mut self.other_row[i],
                values_of(snaps, e),
                &self.labels,
                *g,
            );
            if with_pairs {
                fill_row_pairs(
                    &mut self.pairs.other_row[i],
                    values_of(snaps, e),
                    &self.labels,
                    *g,
                );
            }
        }
        let mut buf = std::mem::take(&mut self.family);
        let written = self.families_to(snaps, windows, &mut buf, out, structured);
        self.family = buf;
        written?;
        if let Some(sim) = self.simulated {
            write!(
                out,
                "# HELP {SIMULATED_METRIC} 1 when the values come from dcgm-sim, a DCGM simulator, \
                 instead of real GPUs.\n# TYPE {SIMULATED_METRIC} gauge\n{SIMULATED_METRIC}"
            )?;
            if let Some(e) = self.opts.hostengine.as_deref().filter(|e| !e.is_empty()) {
                let mut l = String::new();
                escape_label_value(e, &mut l);
                write!(out, "{{{}=\"{l}\"}}", labels::HOSTENGINE)?;
            }
            writeln!(out, " {}", u8::from(sim))?;
        }
        Ok(())
    }

    /// Appends the exposition of `snaps` to any [`io::Write`] (a file, a socket, standard
    /// output), as [`Renderer::render_to`] does.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn render_io<W: io::Write + ?Sized>(
        &mut self,
        snaps: &[&Snapshot],
        windows: &[EventWindow],
        out: &mut W,
    ) -> io::Result<()> {
        // fmt::Write over io::Write, keeping the io error that fmt::Error cannot carry (what
        // std's own `write_fmt` does inside).
        struct Adapter<'a, W: io::Write + ?Sized> {
            out: &'a mut W,
            error: Option<io::Error>,
        }
        impl<W: io::Write + ?Sized> fmt::Write for Adapter<'_, W> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.out.write_all(s.as_bytes()).map_err(|e| {
                    self.error = Some(e);
                    fmt::Error
                })
            }
        }
        let mut a = Adapter { out, error: None };
        match self.render_to(snaps, windows, &mut a) {
            Ok(()) => Ok(()),
            Err(fmt::Error) => Err(a
                .error
                .unwrap_or_else(|| io::Error::other("formatting the exposition failed"))),
        }
    }

    fn families_to<W: fmt::Write + ?Sized>(
        &mut self,
        snaps: &[&Snapshot],
        windows: &[EventWindow],
        buf: &mut String,
        out: &mut W,
        mut structured: Option<&mut Exposition>,
    ) -> fmt::Result {
        let simulated = self.simulated == Some(true);
        let pairs = &self.pairs;
        let mut info = self.info_families.iter().peekable();
        for f in &self.families {
            while let Some(i) = info.next_if(|i| i.name < f.name) {
                write_info_family(i, &self.identities, &self.base, simulated, buf, out)?;
                if let Some(s) = structured.as_deref_mut() {
                    push_info_family(i, &self.identities, pairs, s);
                }
            }
            buf.clear();
            let _ = write!(
                buf,
                "# HELP {} {}\n# TYPE {} {}\n",
                f.name,
                f.help,
                f.name,
                f.kind.exposition_type()
            );
            let header_end = buf.len();
            // The family's series in structured form, when asked for.
            let mut samples: Option<Vec<Sample>> = structured.as_ref().map(|_| Vec::new());
            match f.field {
                CounterField::Dcgm(field) if f.group == EntityGroup::Gpu => {
                    for (i, id) in self.identities.iter().enumerate() {
                        let Some(v) = values_of(snaps, &id.entity).and_then(|m| m.get(&field))
                        else {
                            continue;
                        };
                        if !matches!(v.value, Value::Int(_) | Value::Double(_)) {
                            continue;
                        }
                        let own_values: Vec<&WorkloadValue> = self
                            .workload_values
                            .iter()
                            .filter(|(wf, _)| *wf == field)
                            .flat_map(|(_, rows)| rows.iter().filter(|r| r.0 == id.entity))
                            .collect();
                        if !own_values.is_empty() {
                            // The device's series, then each workload's own value.
                            write_series(buf, &f.name, &self.base[i], &self.row[i], &v.value);
                            if samples.is_some() {
                                let parts = (&pairs.base[i], &pairs.row[i], &pairs.empty);
                                add(
                                    &mut samples,
                                    sample(parts, Vec::new(), &v.value, Some(id.entity)),
                                );
                            }
                            for (_, extra, set, value) in own_values {
                                let value = Value::Double(*value);
                                let row = format!("{}{extra}", self.row[i]);
                                write_series(buf, &f.name, &self.base[i], &row, &value);
                                if samples.is_some() {
                                    let parts = (&pairs.base[i], &pairs.row[i], set);
                                    add(
                                        &mut samples,
                                        sample(parts, Vec::new(), &value, Some(id.entity)),
                                    );
                                }
                            }
                            continue;
                        }
                        for (k, extra) in variants(&self.workload[i]).enumerate() {
                            let line = buf.len();
                            let _ =
                                write!(buf, "{}{{{}{}{extra}", f.name, self.base[i], self.row[i]);
                            let mut err_code = None;
                            if Some(field) == self.xid_field
                                && let Value::Int(x) = v.value
                            {
                                let _ = write!(buf, ",err_code=\"{x}\"");
                                err_code = Some(("err_code".to_string(), decimal(x)));
                            }
                            buf.push_str("} ");
                            if write_number(&v.value, buf) {
                                buf.push('\n');
                                if samples.is_some() {
                                    let w = pairs.workload[i].get(k).unwrap_or(&pairs.empty);
                                    let parts = (&pairs.base[i], &pairs.row[i], w);
                                    let own = err_code.into_iter().collect();
                                    add(
                                        &mut samples,
                                        sample(parts, own, &v.value, Some(id.entity)),
                                    );
                                }
                            } else {
                                buf.truncate(line);
                            }
                        }
                    }
                }
                CounterField::Dcgm(field) => {
                    for (i, (_, e, g)) in self.others.iter().enumerate() {
                        if *g != f.group {
                            continue;
                        }
                        if let Some(v) = values_of(snaps, e).and_then(|m| m.get(&field)) {
                            write_series(
                                buf,
                                &f.name,
                                &self.other_base[i],
                                &self.other_row[i],
                                &v.value,
                            );
                            if samples.is_some() {
                                let parts =
                                    (&pairs.other_base[i], &pairs.other_row[i], &pairs.empty);
                                add(&mut samples, sample(parts, Vec::new(), &v.value, Some(*e)));
                            }
                        }
                    }
                }
                CounterField::Exporter(ExporterCounter::GpuHealthStatus) => {
                    let Some(h) = &self.health else {
                        continue;
                    };
                    for (j, (gpu, base, first)) in self.gpu_base.iter().enumerate() {
                        let Some(verdicts) = h.verdicts(*gpu) else {
                            continue;
                        };
                        for (v, (_, watch)) in verdicts.iter().zip(HEALTH_WATCHES) {
                            let _ = write!(
                                buf,
                                "{}{{{}{},{}=\"{watch}\",{}=\"",
                                f.name,
                                base,
                                self.row[*first],
                                labels::HEALTH_WATCH,
                                labels::HEALTH_ERROR_CODE
                            );
                            let code_start = buf.len();
                            v.write_error_code(buf);
                            let code = buf[code_start..].to_string();
                            let _ = writeln!(buf, "\"}} {}", v.value());
                            if samples.is_some() {
                                let extra = [
                                    (labels::HEALTH_WATCH.to_string(), watch.to_string()),
                                    (labels::HEALTH_ERROR_CODE.to_string(), code),
                                ];
                                let parts = (&pairs.gpu_base[j], &pairs.row[*first], &pairs.empty);
                                let own = extra.to_vec();
                                let value = Value::Int(i64::from(v.value()));
                                add(
                                    &mut samples,
                                    sample(parts, own, &value, Some(Entity::gpu(*gpu))),
                                );
                            }
                        }
                    }
                }
                CounterField::Exporter(ExporterCounter::P2pStatus) => {
                    let Some(p2p) = &self.p2p else {
                        continue;
                    };
                    for (j, (gpu, base, first)) in self.gpu_base.iter().enumerate() {
                        let Some(st) = p2p.iter().find(|s| s.gpu == *gpu) else {
                            continue;
                        };
                        for (peer, status) in &st.peers {
                            let (value, name) = p2p_status_value(*status);
                            let _ = writeln!(
                                buf,
                                "{}{{{}{},{}=\"{peer}\",{}=\"{name}\"}} {value}",
                                f.name,
                                base,
                                self.row[*first],
                                labels::PEER_GPU,
                                labels::LINK_STATUS
                            );
                            if samples.is_some() {
                                let extra = [
                                    (labels::PEER_GPU.to_string(), decimal(peer)),
                                    (labels::LINK_STATUS.to_string(), name.to_string()),
                                ];
                                let parts = (&pairs.gpu_base[j], &pairs.row[*first], &pairs.empty);
                                let own = extra.to_vec();
                                let value = Value::Int(i64::from(value));
                                add(
                                    &mut samples,
                                    sample(parts, own, &value, Some(Entity::gpu(*gpu))),
                                );
                            }
                        }
                    }
                }
                CounterField::Exporter(ExporterCounter::GpuInfo) => {
                    let Some(info) = &self.gpu_info else {
                        continue;
                    };
                    for (i, id) in self.identities.iter().enumerate() {
                        let Some(gi) = info.get(&id.gpu) else {
                            continue;
                        };
                        let _ = write!(buf, "{}{{{}", f.name, self.base[i]);
                        gi.write_labels(buf);
                        buf.push_str("} 1\n");
                        if samples.is_some() {
                            let parts = (&pairs.base[i], &pairs.empty, &pairs.empty);
                            let own = gpu_info_pairs(gi);
                            add(
                                &mut samples,
                                sample(parts, own, &Value::Int(1), Some(id.entity)),
                            );
                        }
                    }
                }
                CounterField::Exporter(
                    kind @ (ExporterCounter::PodSmUtil | ExporterCounter::PodFbUsed),
                ) => {
                    let (rows, owners) = if kind == ExporterCounter::PodSmUtil {
                        (&self.owner_sm_util, &pairs.owner_sm_util)
                    } else {
                        (&self.owner_memory, &pairs.owner_memory)
                    };
                    let Some(rows) = rows else {
                        continue;
                    };
                    for (k, (gpu, owner, v)) in rows.iter().enumerate() {
                        let Some(j) = self.gpu_base.iter().position(|g| g.0 == *gpu) else {
                            continue;
                        };
                        let (_, base, first) = &self.gpu_base[j];
                        let _ = write!(buf, "{}{{{}{}{owner}}} ", f.name, base, self.row[*first]);
                        let value = Value::Double(*v);
                        write_number(&value, buf);
                        buf.push('\n');
                        if samples.is_some() {
                            let owner = owners
                                .as_ref()
                                .and_then(|o| o.get(k))
                                .unwrap_or(&pairs.empty);
                            let parts = (&pairs.gpu_base[j], &pairs.row[*first], owner);
                            add(
                                &mut samples,
                                sample(parts, Vec::new(), &value, Some(Entity::gpu(*gpu))),
                            );
                        }
                    }
                }
                CounterField::Exporter(kind) => {
                    if let Some(w) = windows.iter().find(|w| w.kind() == kind) {
                        let window_ms = w.window().as_millis();
                        let window = (WINDOW_LABEL.to_string(), decimal(window_ms));
                        for (i, id) in self.identities.iter().enumerate() {
                            w.counts_into(id.gpu, &mut self.scratch);
                            for (k, extra) in variants(&self.workload[i]).enumerate() {
                                let wl = pairs.workload[i].get(k).unwrap_or(&pairs.empty);
                                if self.scratch.is_empty() {
                                    let _ = writeln!(
                                        buf,
                                        "{}{{{}{}{extra},{WINDOW_LABEL}=\"{window_ms}\"}} 0",
                                        f.name, self.base[i], self.row[i]
                                    );
                                    if samples.is_some() {
                                        let parts = (&pairs.base[i], &pairs.row[i], wl);
                                        let own = vec![window.clone()];
                                        add(
                                            &mut samples,
                                            sample(parts, own, &Value::Int(0), Some(id.entity)),
                                        );
                                    }
                                }
                                for &(key, n) in &self.scratch {
                                    let _ = write!(
                                        buf,
                                        "{}{{{}{}{extra}",
                                        f.name, self.base[i], self.row[i]
                                    );
                                    w.write_key_label(key, buf);
                                    let _ = writeln!(buf, ",{WINDOW_LABEL}=\"{window_ms}\"}} {n}");
                                    if samples.is_some() {
                                        let parts = (&pairs.base[i], &pairs.row[i], wl);
                                        let own = vec![window_key_label(kind, key), window.clone()];
                                        let value =
                                            Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
                                        add(
                                            &mut samples,
                                            sample(parts, own, &value, Some(id.entity)),
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
            // A family with no series is left out, its HELP and TYPE too.
            if buf.len() > header_end {
                out.write_str(buf)?;
                if let (Some(s), Some(list)) = (structured.as_deref_mut(), samples) {
                    s.families.push(MetricFamily {
                        name: f.name.clone(),
                        help: f.raw_help.clone(),
                        kind: f.kind,
                        field: Some(f.field),
                        samples: list,
                    });
                }
            }
        }
        for i in info {
            write_info_family(i, &self.identities, &self.base, simulated, buf, out)?;
            if let Some(s) = structured.as_deref_mut() {
                push_info_family(i, &self.identities, pairs, s);
            }
        }
        Ok(())
    }
}

/// The labels [`EventWindow::write_key_label`] writes, structured.
fn window_key_label(kind: ExporterCounter, key: i64) -> (String, String) {
    match kind {
        ExporterCounter::ClockEventsCount => {
            let name = CLOCK_EVENT_REASONS
                .iter()
                .find(|(b, _)| *b == key)
                .map_or("unknown", |(_, n)| n);
            ("clock_event".to_string(), name.to_string())
        }
        _ => ("xid".to_string(), decimal(key)),
    }
}

/// The labels [`GpuInfo::write_labels`] writes, structured.
fn gpu_info_pairs(gi: &GpuInfo) -> LabelSet {
    let mig = gi.mig_mode.map(|m| if m { "enabled" } else { "disabled" });
    [
        (labels::DRIVER_VERSION, gi.driver_version.as_deref()),
        (labels::VBIOS_VERSION, gi.vbios_version.as_deref()),
        (
            labels::CUDA_COMPUTE_CAPABILITY,
            gi.compute_capability.as_deref(),
        ),
        (labels::MIG_MODE, mig),
    ]
    .into_iter()
    .filter_map(|(n, v)| v.map(|v| (n.to_string(), v.to_string())))
    .collect()
}

/// A family of [`Renderer::set_info_family`] in structured form (nothing when it has no
/// series, as in the text).
fn push_info_family(
    fam: &InfoFamily,
    identities: &[EntityIdentity],
    pairs: &Pairs,
    out: &mut Exposition,
) {
    let mut samples = Vec::new();
    for (i, id) in identities.iter().enumerate() {
        let Some((_, sets)) = fam.sets.iter().find(|(e, _)| *e == id.entity) else {
            continue;
        };
        for set in sets {
            samples.push(Sample {
                base: pairs.base[i].clone(),
                row: pairs.empty.clone(),
                workload: pairs.empty.clone(),
                own: set.clone(),
                value: Value::Int(1),
                entity: Some(id.entity),
            });
        }
    }
    if !samples.is_empty() {
        out.families.push(MetricFamily {
            name: fam.name.clone(),
            help: fam.raw_help.clone(),
            kind: MetricKind::Gauge,
            field: None,
            samples,
        });
    }
}

/// `,name="value"…` of a label set, leaving out names that are not label names.
fn label_string(set: &LabelSet) -> String {
    let mut s = String::new();
    for (name, value) in set.iter().filter(|(n, _)| is_label_name(n)) {
        let _ = write!(s, ",{name}=\"");
        escape_label_value(value, &mut s);
        s.push('"');
    }
    s
}

/// Writes a family of [`Renderer::set_info_family`] (nothing when it has no series).
fn write_info_family<W: fmt::Write + ?Sized>(
    fam: &InfoFamily,
    identities: &[EntityIdentity],
    base: &[String],
    simulated: bool,
    buf: &mut String,
    out: &mut W,
) -> fmt::Result {
    buf.clear();
    let note = if simulated {
        " [simulated: values come from dcgm-sim, not from a GPU]"
    } else {
        ""
    };
    let _ = write!(
        buf,
        "# HELP {0} {1}{note}\n# TYPE {0} gauge\n",
        fam.name, fam.help
    );
    let header_end = buf.len();
    for (i, id) in identities.iter().enumerate() {
        let Some((_, sets)) = fam.series.iter().find(|(e, _)| *e == id.entity) else {
            continue;
        };
        for set in sets {
            let _ = writeln!(buf, "{}{{{}{set}}} 1", fam.name, base[i]);
        }
    }
    if buf.len() > header_end {
        out.write_str(buf)?;
    }
    Ok(())
}

/// The workload label strings of an identity, or one empty string for its plain series.
fn variants(workload: &[String]) -> impl Iterator<Item = &str> {
    let plain = workload.is_empty().then_some("");
    workload.iter().map(String::as_str).chain(plain)
}

/// The per-pod rows' two forms, from (physical GPU, owner's labels, value): the label pairs
/// for the structured collection, and the label text for the exposition.
#[allow(clippy::type_complexity)]
fn owner_rows(
    rows: Option<Vec<(u32, LabelSet, f64)>>,
) -> (Option<Vec<Arc<LabelSet>>>, Option<Vec<(u32, String, f64)>>) {
    let Some(rows) = rows else {
        return (None, None);
    };
    let pairs = rows
        .iter()
        .map(|(_, set, _)| Arc::new(label_pairs(set)))
        .collect();
    let text = rows
        .into_iter()
        .map(|(gpu, set, v)| (gpu, label_string(&set), v))
        .collect();
    (Some(pairs), Some(text))
}
