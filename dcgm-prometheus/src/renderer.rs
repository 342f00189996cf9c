//! [`Renderer`]: what the series of a collection are built from besides the snapshots (the
//! counters' families and `label` rows, the entities and their label sets, workloads, health,
//! P2P, GPU info, per-owner rows, info families), set by the caller between collections.

use std::collections::BTreeMap;
use std::sync::Arc;

use dcgm::{Entity, EntityGroup, FieldId, GpuP2pStatus};

use crate::counters::{Counter, CounterField, ExporterCounter};
use crate::exposition::Exposition;
use crate::gpu_info::GpuInfo;
use crate::identity::{EntityIdentity, LabelOptions, LabelSet, OtherEntity};
use crate::label_sets::{LabelRow, gpu_labels, label_rows, other_entity_labels, prometheus_labels};
use crate::metadata::{FamilyMeta, metric_families};
use crate::text::TextEncoder;
use crate::verdicts::GpuHealth;

/// Builds the [`Exposition`] model of each collection, once, and writes it in the Prometheus
/// text format ([`write_text`](crate::write_text)); see the [crate docs](crate).
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
/// Rows of NvSwitch, NVLink, CPU and CPU-core fields ([`row_entity_group`](crate::row_entity_group))
/// are written for the entities given to [`Renderer::set_other_entities`], with
/// dcgm-exporter's labels for them:
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
    /// The counters' metric families, sorted by name.
    pub(crate) families: Vec<FamilyMeta>,
    /// `label` rows, sorted by name.
    pub(crate) label_rows: Vec<LabelRow>,
    pub(crate) opts: LabelOptions,
    /// GPUs and MIG instances, in export order.
    pub(crate) identities: Vec<EntityIdentity>,
    /// Per identity: its identity labels.
    pub(crate) identity_labels: Vec<Arc<LabelSet>>,
    /// Per identity: its `label`-row labels, rebuilt each collection.
    pub(crate) row_labels: Vec<Arc<LabelSet>>,
    /// Per identity: the label sets of the workloads on it, one series each; empty: one
    /// series without them.
    pub(crate) workload: Vec<Vec<Arc<LabelSet>>>,
    /// The physical GPUs of the identities, for the rows computed per GPU.
    pub(crate) gpus: Vec<PhysicalGpu>,
    /// NvSwitches, NVLinks, CPUs and cores, in export order, with their entities.
    pub(crate) others: Vec<(OtherEntity, Entity, EntityGroup)>,
    /// Per other entity: its identity labels.
    pub(crate) other_labels: Vec<Arc<LabelSet>>,
    /// Per other entity: its `label`-row labels, rebuilt each collection.
    pub(crate) other_row_labels: Vec<Arc<LabelSet>>,
    pub(crate) health: Option<GpuHealth>,
    pub(crate) p2p: Option<Vec<GpuP2pStatus>>,
    /// Per physical GPU: what `DCGM_EXP_GPU_INFO` says (`None`: the row is left out).
    pub(crate) gpu_info: Option<BTreeMap<u32, GpuInfo>>,
    /// `DCGM_EXP_POD_FB_USED`'s rows (MiB), `None`: the row is left out.
    pub(crate) owner_memory: Option<Vec<OwnerValue>>,
    /// `DCGM_EXP_POD_SM_UTIL`'s rows (percent), `None`: the row is left out.
    pub(crate) owner_sm_util: Option<Vec<OwnerValue>>,
    /// Per field: per-workload values of GPU series, replacing the repeated device value.
    pub(crate) workload_values: Vec<(FieldId, Vec<WorkloadValue>)>,
    /// Families set by the caller, sorted by name.
    pub(crate) info_families: Vec<InfoFamily>,
    pub(crate) simulated: Option<bool>,
    /// The field of `DCGM_EXP_XID_ERRORS_COUNT`, whose own series carry `err_code`.
    pub(crate) xid_field: Option<FieldId>,
    /// No labels.
    pub(crate) empty: Arc<LabelSet>,
    /// The model of the last collection rendered as text only, kept for its allocations.
    pub(crate) exposition: Exposition,
    /// The text encoder, kept between renders.
    pub(crate) text: TextEncoder,
}

/// A physical GPU of the identities: its id, its identity labels without MIG labels, and its
/// first identity (whose `label`-row labels its per-GPU rows carry).
pub(crate) struct PhysicalGpu {
    pub(crate) gpu: u32,
    pub(crate) labels: Arc<LabelSet>,
    pub(crate) first: usize,
}

/// One owner's value on a physical GPU: the GPU, the owner's labels, the value.
pub(crate) type OwnerValue = (u32, Arc<LabelSet>, f64);

/// One workload's own value of a GPU series: the entity, the workload's labels, the value.
pub(crate) type WorkloadValue = (Entity, Arc<LabelSet>, f64);

/// A family of value-1 series per identity, set by the caller ([`Renderer::set_info_family`]).
pub(crate) struct InfoFamily {
    pub(crate) name: String,
    /// The help text as given.
    pub(crate) help: String,
    /// Per entity: the label sets of its series, one series each.
    pub(crate) sets: Vec<(Entity, Vec<LabelSet>)>,
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

impl Renderer {
    /// A renderer of `counters` for `identities` (which are sorted into export order).
    pub fn new(counters: &[Counter], identities: Vec<EntityIdentity>, opts: LabelOptions) -> Self {
        let mut r = Self {
            families: metric_families(counters),
            label_rows: label_rows(counters),
            opts,
            identities: Vec::new(),
            identity_labels: Vec::new(),
            row_labels: Vec::new(),
            workload: Vec::new(),
            gpus: Vec::new(),
            others: Vec::new(),
            other_labels: Vec::new(),
            other_row_labels: Vec::new(),
            health: None,
            p2p: None,
            gpu_info: None,
            owner_memory: None,
            owner_sm_util: None,
            workload_values: Vec::new(),
            info_families: Vec::new(),
            simulated: None,
            xid_field: ExporterCounter::XidErrorsCount.source_field(),
            empty: Arc::default(),
            exposition: Exposition::default(),
            text: TextEncoder::default(),
        };
        r.set_identities(identities);
        r
    }

    /// Adds the `dcgm_exporter_simulated` gauge (1 when `simulated`), and, when simulated,
    /// a note on every help text.
    pub fn mark_simulated(&mut self, simulated: bool) {
        self.simulated = Some(simulated);
    }

    /// The identities, in export order.
    pub fn identities(&self) -> &[EntityIdentity] {
        &self.identities
    }

    /// The physical GPUs of the identities, in export order.
    pub(crate) fn physical_gpus(&self) -> impl Iterator<Item = u32> + '_ {
        self.gpus.iter().map(|g| g.gpu)
    }

    /// Replaces the identities (e.g. once MIG profile names are known).
    pub fn set_identities(&mut self, mut identities: Vec<EntityIdentity>) {
        identities.sort_by_key(EntityIdentity::sort_key);
        self.identity_labels = identities
            .iter()
            .map(|i| Arc::new(gpu_labels(i, &self.opts)))
            .collect();
        self.row_labels = vec![self.empty.clone(); identities.len()];
        // Workload labels stay with their entity.
        let mut old: Vec<(Entity, Vec<Arc<LabelSet>>)> = self
            .identities
            .iter()
            .map(|i| i.entity)
            .zip(std::mem::take(&mut self.workload))
            .collect();
        self.workload = identities
            .iter()
            .map(|i| {
                old.iter_mut()
                    .find(|(e, _)| *e == i.entity)
                    .map(|(_, w)| std::mem::take(w))
                    .unwrap_or_default()
            })
            .collect();
        self.gpus.clear();
        for (i, id) in identities.iter().enumerate() {
            if self.gpus.iter().all(|g| g.gpu != id.gpu) {
                let whole = EntityIdentity {
                    entity: Entity::gpu(id.gpu),
                    mig: None,
                    ..id.clone()
                };
                self.gpus.push(PhysicalGpu {
                    gpu: id.gpu,
                    labels: Arc::new(gpu_labels(&whole, &self.opts)),
                    first: i,
                });
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
        self.other_labels = others
            .iter()
            .map(|o| Arc::new(other_entity_labels(o, &self.opts)))
            .collect();
        self.other_row_labels = vec![self.empty.clone(); others.len()];
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
        for (id, sets) in self.identities.iter().zip(&mut self.workload) {
            *sets = labels(id)
                .iter()
                .map(|set| Arc::new(prometheus_labels(set)))
                .collect();
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
        self.owner_sm_util = owner_rows(util);
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
        self.owner_memory = owner_rows(mib);
    }

    /// Per-workload values for the GPU series of `field`, from the next render on: for an
    /// identity with entries, its series is written once without workload labels (the
    /// device's value), then once per entry with the entry's labels and value, instead of
    /// once per workload label set with the device's value. Identities without entries are
    /// written as before. An empty list (or `None`) goes back to the usual series. Label
    /// names that are not Prometheus label names are left out. dcgm-exporter's
    /// `--kubernetes-virtual-gpus` does this for `DCGM_FI_DEV_GPU_UTIL` and
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
                .map(|(e, set, value)| (e, Arc::new(prometheus_labels(&set)), value))
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
        let sets = self
            .identities
            .iter()
            .map(|id| {
                (
                    id.entity,
                    labels(id).iter().map(prometheus_labels).collect(),
                )
            })
            .collect();
        self.remove_info_family(name);
        if self.families.iter().any(|f| f.name == name) {
            return;
        }
        self.info_families.push(InfoFamily {
            name: name.into(),
            help: help.into(),
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
}

/// The per-owner rows with their owners' labels built (names that are not label names left
/// out).
fn owner_rows(rows: Option<Vec<(u32, LabelSet, f64)>>) -> Option<Vec<OwnerValue>> {
    Some(
        rows?
            .into_iter()
            .map(|(gpu, set, v)| (gpu, Arc::new(prometheus_labels(&set)), v))
            .collect(),
    )
}
