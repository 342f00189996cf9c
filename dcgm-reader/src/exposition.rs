//! Prometheus exposition of DCGM values, compatible with NVIDIA's dcgm-exporter.
//!
//! * [`Renderer`] writes a [`Snapshot`] as Prometheus text exposition format 0.0.4: one
//!   `# HELP`/`# TYPE` pair per metric family, families sorted by name, series in a fixed
//!   entity order, label values escaped, blank values left out (never a sentinel number). It
//!   writes into a `String` you keep and reuse; in steady state it allocates nothing per
//!   value.
//! * GPU and MIG series carry dcgm-exporter's labels: `gpu`, `UUID`, `pci_bus_id`, `device`
//!   (`nvidiaN`), `modelName`, `Hostname`, and for MIG GPU instances `GPU_I_PROFILE` and
//!   `GPU_I_ID`; then one label per `label` row of the counters file (`DCGM_FI_DRIVER_VERSION`,
//!   ...), named as written in the file.
//! * Rows of NvSwitch, NVLink, CPU and CPU-core fields ([`row_entity_group`]) are exported for
//!   those entities ([`OtherEntity`]) with dcgm-exporter's labels for them (see [`labels`]):
//!   `nvswitch="nvswitchN"`; `nvlink` with `nvswitch`, or with the GPU's `gpu`, `gpu_uuid`,
//!   `pci_bus_id`, `device`, `model_name`; `cpu`; `cpucore` and `cpu`. Global `label` rows
//!   label them too.
//! * `DCGM_EXP_GPU_HEALTH_STATUS`: one series per GPU and health watch ([`HEALTH_WATCHES`]),
//!   labels `health_watch` and `health_error_code`, value 0 / 10 / 20 (pass / warn / fail).
//!   `DCGM_EXP_P2P_STATUS`: one series per GPU and peer GPU, labels `peer_gpu` and
//!   `link_status`, value DCGM's P2P status (0 = OK).
//! * [`DeviceSelection`] is dcgm-exporter's `-d` syntax (`f`, `g`, `g:0,1`, `g:0-3`, `i`,
//!   `i:0,2-4`); [`discover_entities`] turns it into the entities to read, with their
//!   identities. [`EntitySelection`] is the same syntax for `-s` (NvSwitches / links) and `-p`
//!   (CPUs / cores); [`discover_other_entities`] resolves them.
//! * [`EventWindow`] counts XID errors and clock events over a sliding window, for the
//!   `DCGM_EXP_XID_ERRORS_COUNT` and `DCGM_EXP_CLOCK_EVENTS_COUNT` rows.
//! * [`Collector`] ties it together: it connects, discovers, watches and renders.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let _lock = dcgm::testing::SimulatorLock::new(None)?;
//! use dcgm_reader::{Collector, CollectorConfig, parse_counters};
//! let counters = parse_counters(
//!     "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (C).\n\
//!      DCGM_FI_DRIVER_VERSION, label, Driver version.\n",
//! )?;
//! let mut collector = Collector::new(CollectorConfig {
//!     library_path: Some(dcgm::testing::simulator_path()),
//!     ..CollectorConfig::new(counters)
//! })?;
//! let mut text = String::new();
//! collector.collect(&mut text)?;
//! assert!(text.contains("# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"));
//! assert!(text.contains("DCGM_FI_DRIVER_VERSION=\""));
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dcgm::{
    Entity, EntityGroup, Error, FieldId, FieldValue, GpuP2pStatus, Group, Handle, HealthReport,
    HealthResult, HealthSystems, Incident, P2pStatus, Result, Value,
};

use crate::counters::{
    Counter, CounterField, ExporterCounter, MetricKind, counter_fields, is_label_name,
};
use crate::reader::{Connection, Reader, Snapshot};

/// Name of the gauge that tells whether the values are simulated.
pub const SIMULATED_METRIC: &str = "dcgm_exporter_simulated";

/// Label used for the window size of the windowed exporter rows (as dcgm-exporter).
pub const WINDOW_LABEL: &str = "window_size_in_ms";

/// A MIG GPU instance's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigInstance {
    /// NVML's GPU-instance id within its GPU (the `GPU_I_ID` label; empty where DCGM leaves
    /// it blank).
    pub instance_id: Option<u32>,
    /// The profile name, e.g. `3g.40gb` (the `GPU_I_PROFILE` label).
    pub profile: String,
    /// Slices of the profile (used to name the profile when DCGM does not).
    pub slices: Option<u32>,
    /// The MIG device's UUID (`MIG-…`, what the Kubernetes device plugin hands to pods), where
    /// DCGM reports one.
    pub uuid: Option<String>,
}

/// Who a series belongs to: an entity (a GPU or a MIG GPU instance) and the physical GPU
/// behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityIdentity {
    /// The entity the values are read from.
    pub entity: Entity,
    /// The physical GPU's id (the `gpu` label; `device` is `nvidia<gpu>`).
    pub gpu: u32,
    /// The physical GPU's UUID.
    pub uuid: String,
    /// The physical GPU's PCI bus id.
    pub pci_bus_id: String,
    /// The physical GPU's model (`modelName`).
    pub model_name: String,
    /// Set for a MIG GPU instance.
    pub mig: Option<MigInstance>,
}

impl EntityIdentity {
    /// A whole GPU.
    pub fn gpu(gpu: u32, uuid: &str, pci_bus_id: &str, model_name: &str) -> Self {
        Self {
            entity: Entity::gpu(gpu),
            gpu,
            uuid: uuid.into(),
            pci_bus_id: pci_bus_id.into(),
            model_name: model_name.into(),
            mig: None,
        }
    }

    fn sort_key(&self) -> (u32, u32, u32) {
        (
            self.gpu,
            u32::from(self.mig.is_some()),
            self.mig.as_ref().and_then(|m| m.instance_id).unwrap_or(0),
        )
    }
}

/// How series are labelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelOptions {
    /// Value of the host-name label; `None` leaves the label out (dcgm-exporter's
    /// `--no-hostname`).
    pub hostname: Option<String>,
    /// Name of the host-name label: `Hostname`, as dcgm-exporter 4.x (the unreleased
    /// dcgm-exporter main spells it `hostname`).
    pub hostname_label: String,
    /// Name of the UUID label: `UUID` (dcgm-exporter's `--use-old-namespace` uses `uuid`).
    pub uuid_label: String,
    /// Replace the blanks of model names with dashes (dcgm-exporter's
    /// `--replace-blanks-in-model-name`).
    pub replace_blanks_in_model_name: bool,
}

impl Default for LabelOptions {
    fn default() -> Self {
        Self {
            hostname: Some(default_hostname(None)),
            hostname_label: "Hostname".into(),
            uuid_label: "UUID".into(),
            replace_blanks_in_model_name: false,
        }
    }
}

/// The host name dcgm-exporter would label series with: the host of a remote host engine
/// (`host:port`) unless it is local, otherwise `NODE_NAME`, otherwise this machine's name.
pub fn default_hostname(remote_hostengine: Option<&str>) -> String {
    if let Some(r) = remote_hostengine {
        let host = split_host(r);
        if !host.is_empty() && !host.starts_with('/') && !r.starts_with("unix://") {
            return host.to_string();
        }
    }
    if let Ok(n) = std::env::var("NODE_NAME")
        && !n.is_empty()
    {
        return n;
    }
    for p in ["/proc/sys/kernel/hostname", "/etc/hostname"] {
        if let Ok(s) = std::fs::read_to_string(p) {
            let s = s.trim();
            if !s.is_empty() {
                return s.to_string();
            }
        }
    }
    std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into())
}

fn split_host(addr: &str) -> &str {
    let a = addr.strip_prefix("tcp://").unwrap_or(addr);
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match a.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) && !h.contains(':') => h,
        _ => a,
    }
}

/// Which entities to export, in dcgm-exporter's `-d` syntax.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DeviceSelection {
    /// `f`: every GPU, except that a GPU in MIG mode is replaced by its GPU instances.
    #[default]
    Flex,
    /// `g` (every GPU) or `g:0,1`, `g:0-3` (these GPU ids).
    Gpus(Option<Vec<u32>>),
    /// `i` (every MIG GPU instance) or `i:0,2-4` (these GPU-instance entity ids).
    GpuInstances(Option<Vec<u32>>),
}

impl FromStr for DeviceSelection {
    type Err = String;

    /// ```
    /// use dcgm_reader::DeviceSelection;
    /// assert_eq!("f".parse(), Ok(DeviceSelection::Flex));
    /// assert_eq!("g:0,2-3".parse(), Ok(DeviceSelection::Gpus(Some(vec![0, 2, 3]))));
    /// assert_eq!("i".parse(), Ok(DeviceSelection::GpuInstances(None)));
    /// assert!("f:1".parse::<DeviceSelection>().is_err());
    /// ```
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let s = s.trim();
        let (letter, range) = match s.split_once(':') {
            Some((l, r)) => (l, Some(r)),
            None => (s, None),
        };
        let ids = match range {
            None => None,
            Some(r) => Some(parse_id_list(r)?),
        };
        match (letter, ids) {
            ("f", None) => Ok(Self::Flex),
            ("f", Some(_)) => Err("no id list can follow 'f'".into()),
            ("g", ids) => Ok(Self::Gpus(ids)),
            ("i", ids) => Ok(Self::GpuInstances(ids)),
            _ => Err(format!(
                "invalid device option {s:?}: expected f, g, g:<ids>, i or i:<ids> (ids like 0,2-4)"
            )),
        }
    }
}

fn parse_id_list(r: &str) -> std::result::Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in r.split(',') {
        let part = part.trim();
        let num = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("{t:?} is not an id (in {r:?})"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("empty range {part:?}"));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.dedup();
    Ok(out)
}

/// `DCGM_FI_DEV_UUID`: for a GPU instance, its MIG device UUID.
const MIG_UUID_FIELD: FieldId = FieldId(54);

/// The entities a [`DeviceSelection`] names, with their identities, in export order.
///
/// A MIG instance's profile starts as `<slices>g`; [`Collector`] replaces it with the name
/// DCGM reports for the instance (`DCGM_FI_DEV_NAME` of the GPU instance, as dcgm-exporter
/// does), when DCGM reports one.
pub fn discover_entities(
    handle: &Handle,
    selection: &DeviceSelection,
) -> Result<Vec<EntityIdentity>> {
    let sys = handle.system();
    let mut gpus = BTreeMap::new();
    for gpu in sys.gpu_ids()? {
        let a = sys.device_attributes(gpu)?;
        gpus.insert(
            gpu,
            EntityIdentity::gpu(gpu, &a.uuid, &a.pci_bus_id, &a.name),
        );
    }
    let needs_mig = !matches!(selection, DeviceSelection::Gpus(_));
    let mig = if needs_mig {
        match sys.mig_hierarchy() {
            Ok(m) => m,
            Err(e) if *selection == DeviceSelection::Flex => {
                log::warn!("MIG hierarchy unavailable ({e}); exporting whole GPUs");
                Vec::new()
            }
            Err(e) => return Err(e),
        }
    } else {
        Vec::new()
    };
    let mut instances = Vec::new();
    for m in &mig {
        let Some(parent) = gpus.get(&m.gpu) else {
            continue;
        };
        for gi in &m.instances {
            let entity = Entity::new(EntityGroup::GpuInstance, gi.entity_id);
            instances.push(EntityIdentity {
                entity,
                mig: Some(MigInstance {
                    instance_id: gi.nvml_instance_id,
                    profile: gi.slices.map(|s| format!("{s}g")).unwrap_or_default(),
                    slices: gi.slices,
                    uuid: None,
                }),
                ..parent.clone()
            });
        }
    }
    let mut out: Vec<EntityIdentity> = match selection {
        DeviceSelection::Flex => gpus
            .values()
            .flat_map(|g| {
                let mine: Vec<_> = instances
                    .iter()
                    .filter(|i| i.gpu == g.gpu)
                    .cloned()
                    .collect();
                if mine.is_empty() {
                    vec![g.clone()]
                } else {
                    mine
                }
            })
            .collect(),
        DeviceSelection::Gpus(None) => gpus.values().cloned().collect(),
        DeviceSelection::Gpus(Some(ids)) => ids
            .iter()
            .map(|id| {
                gpus.get(id)
                    .cloned()
                    .ok_or_else(|| Error::InvalidArgument(format!("GPU {id} does not exist")))
            })
            .collect::<Result<_>>()?,
        DeviceSelection::GpuInstances(None) => {
            if instances.is_empty() {
                return Err(Error::InvalidArgument(
                    "no MIG GPU instances: 'i' needs a GPU in MIG mode".into(),
                ));
            }
            instances
        }
        DeviceSelection::GpuInstances(Some(ids)) => ids
            .iter()
            .map(|id| {
                instances
                    .iter()
                    .find(|i| i.entity.id == *id)
                    .cloned()
                    .ok_or_else(|| {
                        Error::InvalidArgument(format!("GPU instance {id} does not exist"))
                    })
            })
            .collect::<Result<_>>()?,
    };
    out.sort_by_key(EntityIdentity::sort_key);
    Ok(out)
}

/// Which NvSwitches and NVLinks (`-s/--switch-devices`), or which CPUs and CPU cores
/// (`-p/--cpu-devices`), to export. dcgm-exporter's syntax for these flags: the letters of `-d`,
/// `g` naming the top-level entities and `i` the sub-level ones.
///
/// | | `-s` (NvSwitches) | `-p` (CPUs) |
/// |---|---|---|
/// | `f` (default) | every NvSwitch, and every link of every NvSwitch that is up | every CPU and every core |
/// | `g` / `g:0,2-3` | every NvSwitch / these NvSwitches; no links | every CPU / these CPUs; no cores |
/// | `i` / `i:0-7` | the links (up) with these indices on every NvSwitch; no switch | every core / these cores; no CPU |
///
/// The NVLinks of GPUs follow `-d` instead (the links of the exported GPUs; none with `i`).
///
/// ```
/// use dcgm_reader::exposition::EntitySelection;
/// assert_eq!("f".parse(), Ok(EntitySelection::Flex));
/// assert_eq!("g:0,2-3".parse(), Ok(EntitySelection::Major(Some(vec![0, 2, 3]))));
/// assert_eq!("i".parse(), Ok(EntitySelection::Minor(None)));
/// assert!("s:1".parse::<EntitySelection>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EntitySelection {
    /// `f`: every top-level entity and every sub-level entity.
    #[default]
    Flex,
    /// `g` (all) or `g:<ids>`: NvSwitches or CPUs.
    Major(Option<Vec<u32>>),
    /// `i` (all) or `i:<ids>`: NvSwitch link indices, or CPU cores.
    Minor(Option<Vec<u32>>),
}

impl FromStr for EntitySelection {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Ok(match s.parse::<DeviceSelection>()? {
            DeviceSelection::Flex => Self::Flex,
            DeviceSelection::Gpus(ids) => Self::Major(ids),
            DeviceSelection::GpuInstances(ids) => Self::Minor(ids),
        })
    }
}

/// Label names of the NvSwitch, NVLink and CPU series (dcgm-exporter's).
pub mod labels {
    /// NvSwitch series: `nvswitch="nvswitch<id>"`; NvSwitch links carry it too.
    pub const NVSWITCH: &str = "nvswitch";
    /// NVLink series: the link's index on its NvSwitch or GPU.
    pub const NVLINK: &str = "nvlink";
    /// GPU NVLink series: the GPU's UUID.
    pub const GPU_UUID: &str = "gpu_uuid";
    /// GPU NVLink series: the GPU's model.
    pub const MODEL_NAME: &str = "model_name";
    /// CPU series: the CPU id; CPU-core series: the id of the core's CPU.
    pub const CPU: &str = "cpu";
    /// CPU-core series: the core id.
    pub const CPU_CORE: &str = "cpucore";
    /// `DCGM_EXP_GPU_HEALTH_STATUS`: the health watch (`PCIE`, `MEM`, ..., `ALL`).
    pub const HEALTH_WATCH: &str = "health_watch";
    /// `DCGM_EXP_GPU_HEALTH_STATUS`: the failure reason (`DCGM_FR_OK` when healthy).
    pub const HEALTH_ERROR_CODE: &str = "health_error_code";
    /// `DCGM_EXP_P2P_STATUS`: the peer GPU id.
    pub const PEER_GPU: &str = "peer_gpu";
    /// `DCGM_EXP_P2P_STATUS`: the status name (`OK`, `TopologyNotSupported`, ...).
    pub const LINK_STATUS: &str = "link_status";
}

/// An NvSwitch, an NVLink (of an NvSwitch or of a GPU), a CPU or a CPU core to export, with
/// what its labels need. Series of GPU and MIG instances use [`EntityIdentity`] instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OtherEntity {
    /// An NvSwitch: `nvswitch="nvswitch<id>"`.
    Switch {
        /// The switch id.
        id: u32,
    },
    /// A link of an NvSwitch: `nvlink="<link>",nvswitch="nvswitch<switch>"`.
    SwitchLink {
        /// The switch id.
        switch: u32,
        /// The link's index on the switch.
        link: u32,
    },
    /// A link of a GPU: `nvlink`, `gpu`, `gpu_uuid`, `pci_bus_id`, `device`, `model_name`.
    GpuLink {
        /// The GPU id.
        gpu: u32,
        /// The link's index on the GPU.
        link: u32,
        /// The GPU's UUID.
        uuid: String,
        /// The GPU's PCI bus id.
        pci_bus_id: String,
        /// The GPU's product name.
        model_name: String,
    },
    /// A CPU (socket): `cpu="<id>"`.
    Cpu {
        /// The CPU id.
        id: u32,
    },
    /// A CPU core: `cpucore="<core>",cpu="<cpu>"`.
    CpuCore {
        /// The CPU the core belongs to.
        cpu: u32,
        /// The core id.
        core: u32,
    },
}

impl OtherEntity {
    /// A link of GPU `gpu`, with the GPU's identity.
    pub fn gpu_link(gpu: &EntityIdentity, link: u32) -> Self {
        Self::GpuLink {
            gpu: gpu.gpu,
            link,
            uuid: gpu.uuid.clone(),
            pci_bus_id: gpu.pci_bus_id.clone(),
            model_name: gpu.model_name.clone(),
        }
    }

    /// The DCGM entity the values are read from (a link's id is a packed `dcgm_link_t`).
    pub fn entity(&self) -> Entity {
        use dcgm::sys::{DCGM_FE_GPU, DCGM_FE_SWITCH, dcgm_link_t};
        let link = |parent_type, index: u32, parent: u32| {
            let l = dcgm_link_t::new(parent_type, index as u16, parent as u8);
            Entity::new(EntityGroup::Link, l.raw())
        };
        match *self {
            Self::Switch { id } => Entity::new(EntityGroup::Switch, id),
            Self::SwitchLink { switch, link: l } => link(DCGM_FE_SWITCH, l, switch),
            Self::GpuLink { gpu, link: l, .. } => link(DCGM_FE_GPU, l, gpu),
            Self::Cpu { id } => Entity::new(EntityGroup::Cpu, id),
            Self::CpuCore { core, .. } => Entity::new(EntityGroup::CpuCore, core),
        }
    }

    /// The entity group whose counters-file rows it exports: `Switch`, `Link`, `Cpu` or
    /// `CpuCore` (see [`row_entity_group`]).
    pub fn group(&self) -> EntityGroup {
        match self {
            Self::Switch { .. } => EntityGroup::Switch,
            Self::SwitchLink { .. } | Self::GpuLink { .. } => EntityGroup::Link,
            Self::Cpu { .. } => EntityGroup::Cpu,
            Self::CpuCore { .. } => EntityGroup::CpuCore,
        }
    }

    /// Export order: switches, links (of GPUs, then of switches), CPUs, cores.
    fn sort_key(&self) -> (u8, u32, u32) {
        match *self {
            Self::Switch { id } => (0, id, 0),
            Self::GpuLink { gpu, link, .. } => (1, gpu, link),
            Self::SwitchLink { switch, link } => (2, switch, link),
            Self::Cpu { id } => (3, id, 0),
            Self::CpuCore { cpu, core } => (4, cpu, core),
        }
    }
}

/// The entities a counters-file row reading `field` is exported for: `Switch`, `Link`, `Cpu` or
/// `CpuCore` when that is the field's entity level, otherwise `Gpu` (GPUs and MIG instances,
/// including global fields).
///
/// ```
/// use dcgm::{EntityGroup, FieldId};
/// use dcgm_reader::exposition::row_entity_group;
/// assert_eq!(row_entity_group(FieldId::parse("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS")?), EntityGroup::Switch);
/// assert_eq!(row_entity_group(FieldId::parse("DCGM_FI_DEV_CPU_UTIL_TOTAL")?), EntityGroup::CpuCore);
/// assert_eq!(row_entity_group(FieldId::parse("DCGM_FI_DEV_GPU_TEMP")?), EntityGroup::Gpu);
/// # Ok::<(), dcgm::Error>(())
/// ```
pub fn row_entity_group(field: FieldId) -> EntityGroup {
    match field.info().map(|f| EntityGroup::from_raw(f.entity_level)) {
        Some(
            g @ (EntityGroup::Switch | EntityGroup::Link | EntityGroup::Cpu | EntityGroup::CpuCore),
        ) => g,
        _ => EntityGroup::Gpu,
    }
}

/// Whether a field is global (entity level `NONE`): a `label` row of such a field labels the
/// series of every entity, GPUs, NvSwitches, links and CPUs alike.
fn is_global_field(field: FieldId) -> bool {
    field
        .info()
        .is_some_and(|f| f.entity_level == dcgm::sys::DCGM_FE_NONE)
}

/// The NvSwitches, NVLinks, CPUs and CPU cores to export, in export order, for the entity
/// groups in `groups` (only those are looked up, so a counters file without NvSwitch or CPU
/// rows costs nothing).
///
/// * NvSwitches and their links follow `switches`, CPUs and their cores follow `cpus` (see
///   [`EntitySelection`]); only links that are up are exported, as dcgm-exporter does.
/// * GPU links are those (up) of the GPUs of `gpus` (pass the identities of the `-d`
///   selection, or none for dcgm-exporter's `-d i`).
/// * Ids that do not exist are an [`Error::InvalidArgument`]. A machine without NvSwitches or
///   CPUs DCGM knows about simply has none (logged), unless ids were asked for.
pub fn discover_other_entities(
    handle: &Handle,
    groups: &[EntityGroup],
    gpus: &[EntityIdentity],
    switches: &EntitySelection,
    cpus: &EntitySelection,
) -> Result<Vec<OtherEntity>> {
    let sys = handle.system();
    let want = |g: EntityGroup| groups.contains(&g);
    let mut out = Vec::new();
    let explicit = |s: &EntitySelection| {
        matches!(
            s,
            EntitySelection::Major(Some(_)) | EntitySelection::Minor(Some(_))
        )
    };

    if want(EntityGroup::Switch) {
        let all: Vec<u32> = match sys.entities(EntityGroup::Switch, false) {
            Ok(e) => e.into_iter().map(|e| e.id).collect(),
            Err(e) if !explicit(switches) => {
                log::info!("cannot list the NvSwitches ({e}); not exporting NvSwitch rows");
                Vec::new()
            }
            Err(e) => return Err(e),
        };
        if all.is_empty() && !explicit(switches) {
            log::info!("no NvSwitch found; NvSwitch rows have nothing to export");
        }
        match switches {
            EntitySelection::Flex | EntitySelection::Major(None) => {
                out.extend(all.iter().map(|&id| OtherEntity::Switch { id }));
            }
            EntitySelection::Major(Some(ids)) => {
                for &id in ids {
                    if !all.contains(&id) {
                        return Err(Error::InvalidArgument(format!(
                            "NvSwitch {id} does not exist"
                        )));
                    }
                    out.push(OtherEntity::Switch { id });
                }
            }
            EntitySelection::Minor(_) => {}
        }
    }

    if want(EntityGroup::Link) {
        let status = match sys.nvlink_status() {
            Ok(s) => Some(s),
            Err(e) if !explicit(switches) => {
                log::info!("cannot read the NVLink states ({e}); not exporting NVLink rows");
                None
            }
            Err(e) => return Err(e),
        };
        if let Some(status) = status {
            let up = |links: &[dcgm::LinkState]| -> Vec<u32> {
                (0..links.len() as u32)
                    .filter(|&i| links[i as usize] == dcgm::LinkState::Up)
                    .collect()
            };
            let wanted: Option<Option<&[u32]>> = match switches {
                EntitySelection::Flex | EntitySelection::Minor(None) => Some(None),
                EntitySelection::Minor(Some(ids)) => Some(Some(ids)),
                EntitySelection::Major(_) => None,
            };
            if let Some(Some(ids)) = wanted {
                for &i in ids {
                    if !status.switches.iter().any(|(_, l)| (i as usize) < l.len()) {
                        return Err(Error::InvalidArgument(format!(
                            "no NvSwitch has a link {i}"
                        )));
                    }
                }
            }
            if let Some(ids) = wanted {
                for (switch, links) in &status.switches {
                    for link in up(links) {
                        if ids.is_none_or(|ids| ids.contains(&link)) {
                            out.push(OtherEntity::SwitchLink {
                                switch: *switch,
                                link,
                            });
                        }
                    }
                }
            }
            let mut seen = BTreeSet::new();
            for id in gpus {
                if !seen.insert(id.gpu) {
                    continue;
                }
                if let Some((_, links)) = status.gpus.iter().find(|(g, _)| *g == id.gpu) {
                    out.extend(up(links).into_iter().map(|l| OtherEntity::gpu_link(id, l)));
                }
            }
        }
    }

    if want(EntityGroup::Cpu) || want(EntityGroup::CpuCore) {
        let hierarchy = match sys.cpu_hierarchy() {
            Ok(h) => h,
            Err(e) if !explicit(cpus) => {
                log::info!("cannot read the CPU hierarchy ({e}); not exporting CPU rows");
                Vec::new()
            }
            Err(e) => return Err(e),
        };
        if hierarchy.is_empty() && !explicit(cpus) {
            log::info!("no CPU found; CPU rows have nothing to export");
        }
        let check = |ids: &[u32], exists: &dyn Fn(u32) -> bool, what: &str| -> Result<()> {
            match ids.iter().find(|&&id| !exists(id)) {
                Some(id) => Err(Error::InvalidArgument(format!(
                    "{what} {id} does not exist"
                ))),
                None => Ok(()),
            }
        };
        let (cpu_ids, core_ids): (Option<&[u32]>, Option<&[u32]>) = match cpus {
            EntitySelection::Major(Some(ids)) => {
                check(ids, &|id| hierarchy.iter().any(|c| c.id == id), "CPU")?;
                (Some(ids), Some(&[]))
            }
            EntitySelection::Minor(Some(ids)) => {
                check(
                    ids,
                    &|id| hierarchy.iter().any(|c| c.cores.contains(&id)),
                    "CPU core",
                )?;
                (Some(&[]), Some(ids))
            }
            EntitySelection::Major(None) => (None, Some(&[])),
            EntitySelection::Minor(None) => (Some(&[]), None),
            EntitySelection::Flex => (None, None),
        };
        for cpu in &hierarchy {
            if want(EntityGroup::Cpu) && cpu_ids.is_none_or(|ids| ids.contains(&cpu.id)) {
                out.push(OtherEntity::Cpu { id: cpu.id });
            }
            if want(EntityGroup::CpuCore) {
                for &core in &cpu.cores {
                    if core_ids.is_none_or(|ids| ids.contains(&core)) {
                        out.push(OtherEntity::CpuCore { cpu: cpu.id, core });
                    }
                }
            }
        }
    }
    out.sort_by_key(OtherEntity::sort_key);
    Ok(out)
}

/// The health watches `DCGM_EXP_GPU_HEALTH_STATUS` reports for every GPU, in dcgm-exporter's
/// order, with their `health_watch` label values. `ALL` carries incidents DCGM files under no
/// single subsystem.
pub const HEALTH_WATCHES: [(HealthSystems, &str); 11] = [
    (HealthSystems::PCIE, "PCIE"),
    (HealthSystems::NVLINK, "NVLINK"),
    (HealthSystems::PMU, "PMU"),
    (HealthSystems::MCU, "MCU"),
    (HealthSystems::MEM, "MEM"),
    (HealthSystems::SM, "SM"),
    (HealthSystems::INFOROM, "INFOROM"),
    (HealthSystems::THERMAL, "THERMAL"),
    (HealthSystems::POWER, "POWER"),
    (HealthSystems::DRIVER, "DRIVER"),
    (HealthSystems::ALL, "ALL"),
];

/// One health watch's verdict for one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HealthVerdict {
    /// Pass, warn or fail.
    pub result: HealthResult,
    /// The failure reason (`DCGM_FR_*`; 0, `DCGM_FR_OK`, when it passes).
    pub error_code: u32,
}

impl HealthVerdict {
    /// The sample value: DCGM's `dcgmHealthWatchResults_t` (0 pass, 10 warn, 20 fail), as
    /// dcgm-exporter exports it.
    pub fn value(&self) -> u32 {
        match self.result {
            HealthResult::Pass => dcgm::sys::DCGM_HEALTH_RESULT_PASS,
            HealthResult::Warn => dcgm::sys::DCGM_HEALTH_RESULT_WARN,
            HealthResult::Fail => dcgm::sys::DCGM_HEALTH_RESULT_FAIL,
        }
    }

    fn write_error_code(&self, out: &mut String) {
        match dcgm::sys::failure_reason_name(self.error_code) {
            Some(n) => out.push_str(n),
            None => {
                let _ = write!(out, "DCGM_FR_UNKNOWN({})", self.error_code);
            }
        }
    }
}

/// The verdicts of one health check, per GPU and health watch, for the
/// `DCGM_EXP_GPU_HEALTH_STATUS` row: every watch of every GPU passes unless an incident of
/// the check says otherwise (the worst incident of a watch wins).
///
/// ```
/// use dcgm::{Entity, HealthReport, HealthResult, HealthSystems, Incident};
/// use dcgm_reader::exposition::GpuHealth;
/// let mut h = GpuHealth::new([0, 1]);
/// h.apply(&HealthReport {
///     overall: HealthResult::Fail,
///     incidents: vec![Incident {
///         system: HealthSystems::MEM,
///         result: HealthResult::Fail,
///         error_code: dcgm::sys::DCGM_FR_VOLATILE_DBE_DETECTED,
///         error_name: None,
///         category: None,
///         severity: None,
///         suggestion: None,
///         message: "2 DBEs".into(),
///         entity: Entity::gpu(1),
///     }],
/// });
/// assert_eq!(h.verdict(1, HealthSystems::MEM).unwrap().value(), 20);
/// assert_eq!(h.verdict(0, HealthSystems::MEM).unwrap().value(), 0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuHealth {
    gpus: Vec<(u32, [HealthVerdict; HEALTH_WATCHES.len()])>,
}

impl GpuHealth {
    /// Every watch of these GPUs passing.
    pub fn new(gpus: impl IntoIterator<Item = u32>) -> Self {
        let mut ids: Vec<u32> = gpus.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        Self {
            gpus: ids
                .into_iter()
                .map(|g| (g, [HealthVerdict::default(); HEALTH_WATCHES.len()]))
                .collect(),
        }
    }

    /// The GPUs, in order.
    pub fn gpus(&self) -> impl Iterator<Item = u32> + '_ {
        self.gpus.iter().map(|(g, _)| *g)
    }

    /// Every watch of every GPU back to passing.
    pub fn clear(&mut self) {
        for (_, v) in &mut self.gpus {
            *v = [HealthVerdict::default(); HEALTH_WATCHES.len()];
        }
    }

    /// Records an incident, if it concerns one of the GPUs and one of [`HEALTH_WATCHES`];
    /// returns whether it did. A watch keeps its worst incident.
    pub fn record(&mut self, incident: &Incident) -> bool {
        if incident.entity.group != EntityGroup::Gpu {
            return false;
        }
        let Some(w) = HEALTH_WATCHES
            .iter()
            .position(|(s, _)| *s == incident.system)
        else {
            return false;
        };
        let Some((_, v)) = self.gpus.iter_mut().find(|(g, _)| *g == incident.entity.id) else {
            return false;
        };
        if incident.result > v[w].result {
            v[w] = HealthVerdict {
                result: incident.result,
                error_code: incident.error_code,
            };
        }
        true
    }

    /// The verdicts of one health check: [`GpuHealth::clear`], then every incident recorded.
    pub fn apply(&mut self, report: &HealthReport) {
        self.clear();
        for i in &report.incidents {
            self.record(i);
        }
    }

    /// The verdict of one watch of one GPU.
    pub fn verdict(&self, gpu: u32, watch: HealthSystems) -> Option<HealthVerdict> {
        let w = HEALTH_WATCHES.iter().position(|(s, _)| *s == watch)?;
        self.verdicts(gpu).map(|v| v[w])
    }

    /// The verdicts of one GPU, in [`HEALTH_WATCHES`] order.
    pub fn verdicts(&self, gpu: u32) -> Option<&[HealthVerdict; HEALTH_WATCHES.len()]> {
        self.gpus.iter().find(|(g, _)| *g == gpu).map(|(_, v)| v)
    }
}

/// A peer-to-peer status as dcgm-exporter exports it in `DCGM_EXP_P2P_STATUS`: the sample value
/// (DCGM's `dcgmNvLinkP2PStatus_t`) and the `link_status` label.
///
/// ```
/// use dcgm::P2pStatus;
/// use dcgm_reader::exposition::p2p_status_value;
/// assert_eq!(p2p_status_value(P2pStatus::Ok), (0, "OK"));
/// assert_eq!(p2p_status_value(P2pStatus::TopologyNotSupported), (3, "TopologyNotSupported"));
/// ```
pub fn p2p_status_value(s: P2pStatus) -> (u32, &'static str) {
    match s {
        P2pStatus::Ok => (0, "OK"),
        P2pStatus::ChipsetNotSupported => (1, "ChipsetNotSupported"),
        P2pStatus::GpuNotSupported => (2, "GPUNotSupported"),
        P2pStatus::TopologyNotSupported => (3, "TopologyNotSupported"),
        P2pStatus::DisabledByRegKey => (4, "DisabledByRegKey"),
        P2pStatus::NotSupported => (5, "NotSupported"),
        P2pStatus::Unknown => (6, "Unknown"),
    }
}

/// Names of the clock-event (clock throttling) reason bits, as dcgm-exporter labels them.
pub const CLOCK_EVENT_REASONS: [(i64, &str); 9] = [
    (0x1, "gpu_idle"),
    (0x2, "clocks_setting"),
    (0x4, "power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal"),
    (0x40, "hw_thermal"),
    (0x80, "hw_power_brake"),
    (0x100, "display_clocks"),
];

/// Counts events of one kind per GPU over a sliding window, for the windowed exporter rows.
///
/// * XID errors (`DCGM_FI_DEV_XID_ERRORS` holds the last XID): a sample is a new event when
///   it is non-zero and differs from the GPU's previous sample, or follows it after more than
///   twice the sampling interval (DCGM records an XID sample per error; a host engine that
///   re-samples the field every interval repeats the last XID, which is not a new error).
/// * Clock events (`DCGM_FI_DEV_CLOCKS_EVENT_REASONS` is a bit mask): an event is a reason
///   bit that is set in a sample and was not in the GPU's previous sample.
///
/// Counts are by key (the XID number, or the reason bit) and cover the events whose sample
/// time is within the window.
#[derive(Debug, Clone)]
pub struct EventWindow {
    kind: ExporterCounter,
    window: Duration,
    interval_us: i64,
    gpus: BTreeMap<u32, GpuEvents>,
}

#[derive(Debug, Clone, Default)]
struct GpuEvents {
    last: Option<(i64, i64)>,
    events: VecDeque<(i64, i64)>,
}

impl EventWindow {
    /// A window for `kind` ([`ExporterCounter::XidErrorsCount`] or
    /// [`ExporterCounter::ClockEventsCount`]), whose source field is sampled every
    /// `sample_interval`.
    pub fn new(kind: ExporterCounter, window: Duration, sample_interval: Duration) -> Self {
        Self {
            kind,
            window,
            interval_us: sample_interval.as_micros().min(i64::MAX as u128) as i64,
            gpus: BTreeMap::new(),
        }
    }

    /// Which row this window feeds.
    pub fn kind(&self) -> ExporterCounter {
        self.kind
    }

    /// The window.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// Takes one sample of the source field of `gpu` (samples of a GPU in time order).
    pub fn observe(&mut self, gpu: u32, timestamp_us: i64, value: i64) {
        let g = self.gpus.entry(gpu).or_default();
        match self.kind {
            ExporterCounter::XidErrorsCount => {
                let new = value != 0
                    && match g.last {
                        None => true,
                        Some((ts, v)) => v != value || timestamp_us - ts > 2 * self.interval_us,
                    };
                if new {
                    g.events.push_back((timestamp_us, value));
                }
            }
            ExporterCounter::ClockEventsCount => {
                let before = g.last.map_or(0, |(_, v)| v);
                for (bit, _) in CLOCK_EVENT_REASONS {
                    if value & bit != 0 && before & bit == 0 {
                        g.events.push_back((timestamp_us, bit));
                    }
                }
            }
            ExporterCounter::GpuHealthStatus | ExporterCounter::P2pStatus => {}
        }
        g.last = Some((timestamp_us, value));
    }

    /// Forgets the events older than the window, as of `now_us` (µs since the epoch).
    pub fn prune(&mut self, now_us: i64) {
        let start = now_us - self.window.as_micros().min(i64::MAX as u128) as i64;
        for g in self.gpus.values_mut() {
            while g.events.front().is_some_and(|(ts, _)| *ts < start) {
                g.events.pop_front();
            }
        }
    }

    /// The counts of `gpu`'s events by key, sorted by key, into `out` (cleared first).
    pub fn counts_into(&self, gpu: u32, out: &mut Vec<(i64, u64)>) {
        out.clear();
        let Some(g) = self.gpus.get(&gpu) else {
            return;
        };
        for (_, key) in &g.events {
            match out.iter_mut().find(|(k, _)| k == key) {
                Some((_, n)) => *n += 1,
                None => out.push((*key, 1)),
            }
        }
        out.sort_unstable_by_key(|(k, _)| *k);
    }

    fn write_key_label(&self, key: i64, out: &mut String) {
        match self.kind {
            ExporterCounter::ClockEventsCount => {
                let name = CLOCK_EVENT_REASONS
                    .iter()
                    .find(|(b, _)| *b == key)
                    .map_or("unknown", |(_, n)| n);
                let _ = write!(out, ",clock_event=\"{name}\"");
            }
            _ => {
                let _ = write!(out, ",xid=\"{key}\"");
            }
        }
    }
}

struct Family {
    name: String,
    /// Escaped help text.
    help: String,
    kind: MetricKind,
    field: CounterField,
    /// The entities a field row is exported for ([`row_entity_group`]).
    group: EntityGroup,
}

/// A `label` row.
struct LabelRow {
    field: FieldId,
    name: String,
    /// The entities it labels ([`row_entity_group`]), every entity when `global`.
    group: EntityGroup,
    global: bool,
}

/// Writes snapshots in Prometheus text format; see the [module docs](self).
///
/// ```
/// use dcgm::{Entity, FieldId, FieldValue, Value};
/// use dcgm_reader::{EntityIdentity, LabelOptions, Renderer, Snapshot, parse_counters};
/// let counters = parse_counters("DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (C).").unwrap();
/// let gpu0 = EntityIdentity::gpu(0, "GPU-1234", "00000000:18:00.0", "NVIDIA H100 80GB HBM3");
/// let opts = LabelOptions { hostname: Some("node-1".into()), ..LabelOptions::default() };
/// let mut r = Renderer::new(&counters, vec![gpu0], opts);
/// let mut snap = Snapshot::new();
/// let v = FieldValue { entity: Entity::gpu(0), field: FieldId(150), timestamp_us: 0,
///                      value: Value::Int(41), status: 0 };
/// snap.entry(Entity::gpu(0)).or_default().insert(FieldId(150), v);
/// let mut text = String::new();
/// r.render(&snap, &[], &mut text);
/// assert!(text.contains(
///     "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-1234\",pci_bus_id=\"00000000:18:00.0\",\
///      device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-1\"} 41\n"));
/// ```
///
/// Rows of NvSwitch, NVLink, CPU and CPU-core fields ([`row_entity_group`]) are written for the
/// entities given to [`Renderer::set_other_entities`], with dcgm-exporter's labels for them:
///
/// ```
/// use dcgm::{Entity, EntityGroup, FieldId, FieldValue, Value};
/// use dcgm_reader::exposition::OtherEntity;
/// use dcgm_reader::{LabelOptions, Renderer, Snapshot, parse_counters};
/// let counters = parse_counters("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS, gauge, t\n").unwrap();
/// let mut r = Renderer::new(&counters, vec![], LabelOptions { hostname: None, ..Default::default() });
/// r.set_other_entities(vec![OtherEntity::Switch { id: 2 }]);
/// let e = Entity::new(EntityGroup::Switch, 2);
/// let f = FieldId::parse("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS").unwrap();
/// let mut snap = Snapshot::new();
/// snap.entry(e).or_default().insert(f, FieldValue { entity: e, field: f, timestamp_us: 0,
///                                                  value: Value::Int(47), status: 0 });
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
    gpu_base: Vec<(u32, String, usize)>,
    /// NvSwitches, NVLinks, CPUs and cores, in export order, with their entities.
    others: Vec<(OtherEntity, Entity, EntityGroup)>,
    /// Per other entity: its fixed labels.
    other_base: Vec<String>,
    /// Per other entity: the labels of `label` rows.
    other_row: Vec<String>,
    health: Option<GpuHealth>,
    p2p: Option<Vec<GpuP2pStatus>>,
    /// Per identity: the label sets of the workloads on it (`,pod="…",…`), one series each;
    /// empty: one series without them.
    workload: Vec<Vec<String>>,
    simulated: Option<bool>,
    xid_field: Option<FieldId>,
    scratch: Vec<(i64, u64)>,
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
            workload: Vec::new(),
            simulated: None,
            xid_field: ExporterCounter::XidErrorsCount.source_field(),
            scratch: Vec::new(),
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
        // Workload labels stay with their entity.
        let mut old: Vec<(Entity, Vec<String>)> = self
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
        self.gpu_base.clear();
        for (i, id) in identities.iter().enumerate() {
            if self.gpu_base.iter().all(|(g, _, _)| *g != id.gpu) {
                let whole = EntityIdentity {
                    entity: Entity::gpu(id.gpu),
                    mig: None,
                    ..id.clone()
                };
                self.gpu_base
                    .push((id.gpu, base_labels(&whole, &self.opts), i));
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
        for (id, slot) in self.identities.iter().zip(&mut self.workload) {
            slot.clear();
            for set in labels(id) {
                let mut s = String::new();
                for (name, value) in set.iter().filter(|(n, _)| is_label_name(n)) {
                    let _ = write!(s, ",{name}=\"");
                    escape_label_value(value, &mut s);
                    s.push('"');
                }
                slot.push(s);
            }
        }
    }

    /// The verdicts written by the `DCGM_EXP_GPU_HEALTH_STATUS` row (`None`: the row is left
    /// out). Only GPUs of the identities are written.
    pub fn health_mut(&mut self) -> &mut Option<GpuHealth> {
        &mut self.health
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
        self.render_snapshots(&[snap], windows, out);
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
        for (i, id) in self.identities.iter().enumerate() {
            let values = values_of(snaps, &id.entity);
            fill_row(&mut self.row[i], values, &self.labels, EntityGroup::Gpu);
        }
        for (i, (_, e, g)) in self.others.iter().enumerate() {
            fill_row(
                &mut self.other_row[i],
                values_of(snaps, e),
                &self.labels,
                *g,
            );
        }
        for f in &self.families {
            let start = out.len();
            let _ = write!(
                out,
                "# HELP {} {}\n# TYPE {} {}\n",
                f.name,
                f.help,
                f.name,
                f.kind.exposition_type()
            );
            let header_end = out.len();
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
                        for extra in variants(&self.workload[i]) {
                            let line = out.len();
                            let _ =
                                write!(out, "{}{{{}{}{extra}", f.name, self.base[i], self.row[i]);
                            if Some(field) == self.xid_field
                                && let Value::Int(x) = v.value
                            {
                                let _ = write!(out, ",err_code=\"{x}\"");
                            }
                            out.push_str("} ");
                            if write_number(&v.value, out) {
                                out.push('\n');
                            } else {
                                out.truncate(line);
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
                                out,
                                &f.name,
                                &self.other_base[i],
                                &self.other_row[i],
                                &v.value,
                            );
                        }
                    }
                }
                CounterField::Exporter(ExporterCounter::GpuHealthStatus) => {
                    let Some(h) = &self.health else {
                        out.truncate(start);
                        continue;
                    };
                    for (gpu, base, first) in &self.gpu_base {
                        let Some(verdicts) = h.verdicts(*gpu) else {
                            continue;
                        };
                        for (v, (_, watch)) in verdicts.iter().zip(HEALTH_WATCHES) {
                            let _ = write!(
                                out,
                                "{}{{{}{},{}=\"{watch}\",{}=\"",
                                f.name,
                                base,
                                self.row[*first],
                                labels::HEALTH_WATCH,
                                labels::HEALTH_ERROR_CODE
                            );
                            v.write_error_code(out);
                            let _ = writeln!(out, "\"}} {}", v.value());
                        }
                    }
                }
                CounterField::Exporter(ExporterCounter::P2pStatus) => {
                    let Some(p2p) = &self.p2p else {
                        out.truncate(start);
                        continue;
                    };
                    for (gpu, base, first) in &self.gpu_base {
                        let Some(st) = p2p.iter().find(|s| s.gpu == *gpu) else {
                            continue;
                        };
                        for (peer, status) in &st.peers {
                            let (value, name) = p2p_status_value(*status);
                            let _ = writeln!(
                                out,
                                "{}{{{}{},{}=\"{peer}\",{}=\"{name}\"}} {value}",
                                f.name,
                                base,
                                self.row[*first],
                                labels::PEER_GPU,
                                labels::LINK_STATUS
                            );
                        }
                    }
                }
                CounterField::Exporter(kind) => {
                    if let Some(w) = windows.iter().find(|w| w.kind() == kind) {
                        let window_ms = w.window().as_millis();
                        for (i, id) in self.identities.iter().enumerate() {
                            w.counts_into(id.gpu, &mut self.scratch);
                            for extra in variants(&self.workload[i]) {
                                if self.scratch.is_empty() {
                                    let _ = writeln!(
                                        out,
                                        "{}{{{}{}{extra},{WINDOW_LABEL}=\"{window_ms}\"}} 0",
                                        f.name, self.base[i], self.row[i]
                                    );
                                }
                                for &(key, n) in &self.scratch {
                                    let _ = write!(
                                        out,
                                        "{}{{{}{}{extra}",
                                        f.name, self.base[i], self.row[i]
                                    );
                                    w.write_key_label(key, out);
                                    let _ = writeln!(out, ",{WINDOW_LABEL}=\"{window_ms}\"}} {n}");
                                }
                            }
                        }
                    }
                }
            }
            if out.len() == header_end {
                out.truncate(start);
            }
        }
        if let Some(sim) = self.simulated {
            let _ = write!(
                out,
                "# HELP {SIMULATED_METRIC} 1 when the values come from dcgm-sim, a DCGM simulator, \
                 instead of real GPUs.\n# TYPE {SIMULATED_METRIC} gauge\n{SIMULATED_METRIC} {}\n",
                u8::from(sim)
            );
        }
    }
}

/// Extra labels of one series: (name, value) pairs.
pub type LabelSet = Vec<(String, String)>;

/// The workload label strings of an identity, or one empty string for its plain series.
fn variants(workload: &[String]) -> impl Iterator<Item = &str> {
    let plain = workload.is_empty().then_some("");
    workload.iter().map(String::as_str).chain(plain)
}

fn push_hostname(s: &mut String, opts: &LabelOptions) {
    if let Some(h) = opts.hostname.as_deref().filter(|h| !h.is_empty()) {
        let _ = write!(s, ",{}=\"", opts.hostname_label);
        escape_label_value(h, s);
        s.push('"');
    }
}

fn base_labels(id: &EntityIdentity, opts: &LabelOptions) -> String {
    let mut s = String::new();
    let _ = write!(s, "gpu=\"{}\",{}=\"", id.gpu, opts.uuid_label);
    escape_label_value(&id.uuid, &mut s);
    s.push_str("\",pci_bus_id=\"");
    escape_label_value(&id.pci_bus_id, &mut s);
    let _ = write!(s, "\",device=\"nvidia{}\",modelName=\"", id.gpu);
    if opts.replace_blanks_in_model_name {
        let model = id
            .model_name
            .split_whitespace()
            .collect::<Vec<_>>()
            .join("-");
        escape_label_value(&model, &mut s);
    } else {
        escape_label_value(&id.model_name, &mut s);
    }
    s.push('"');
    if let Some(m) = &id.mig {
        s.push_str(",GPU_I_PROFILE=\"");
        escape_label_value(&m.profile, &mut s);
        s.push_str("\",GPU_I_ID=\"");
        if let Some(id) = m.instance_id {
            let _ = write!(s, "{id}");
        }
        s.push('"');
    }
    push_hostname(&mut s, opts);
    s
}

/// The fixed labels of an NvSwitch, NVLink, CPU or core, as dcgm-exporter writes them (the
/// host-name label follows [`LabelOptions`], as on GPU series).
fn other_labels(o: &OtherEntity, opts: &LabelOptions) -> String {
    use labels::*;
    let mut s = String::new();
    match o {
        OtherEntity::Switch { id } => {
            let _ = write!(s, "{NVSWITCH}=\"nvswitch{id}\"");
        }
        OtherEntity::SwitchLink { switch, link } => {
            let _ = write!(s, "{NVLINK}=\"{link}\",{NVSWITCH}=\"nvswitch{switch}\"");
        }
        OtherEntity::GpuLink {
            gpu,
            link,
            uuid,
            pci_bus_id,
            model_name,
        } => {
            let _ = write!(s, "{NVLINK}=\"{link}\",gpu=\"{gpu}\"");
            // As dcgm-exporter: empty identity labels are left out.
            for (name, value) in [(GPU_UUID, uuid), ("pci_bus_id", pci_bus_id)] {
                if !value.is_empty() {
                    let _ = write!(s, ",{name}=\"");
                    escape_label_value(value, &mut s);
                    s.push('"');
                }
            }
            let _ = write!(s, ",device=\"nvidia{gpu}\"");
            if !model_name.is_empty() {
                let _ = write!(s, ",{MODEL_NAME}=\"");
                escape_label_value(model_name, &mut s);
                s.push('"');
            }
        }
        OtherEntity::Cpu { id } => {
            let _ = write!(s, "{CPU}=\"{id}\"");
        }
        OtherEntity::CpuCore { cpu, core } => {
            let _ = write!(s, "{CPU_CORE}=\"{core}\",{CPU}=\"{cpu}\"");
        }
    }
    push_hostname(&mut s, opts);
    s
}

/// Appends `s` escaped as a label value (`\` → `\\`, `"` → `\"`, newline → `\n`).
pub fn escape_label_value(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// `s` escaped as a help text (`\` → `\\`, newline → `\n`).
pub fn escape_help(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Appends a number as Prometheus writes sample values (`NaN`, `+Inf`, `-Inf`, integers
/// without a fraction, exponents for very large or small magnitudes). Returns `false`, writing
/// nothing, for anything that is not a number.
pub fn write_number(v: &Value, out: &mut String) -> bool {
    match v {
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Double(d) => {
            let d = *d;
            if d.is_nan() {
                out.push_str("NaN");
            } else if d.is_infinite() {
                out.push_str(if d > 0.0 { "+Inf" } else { "-Inf" });
            } else if d != 0.0 && (d.abs() >= 1e15 || d.abs() < 1e-4) {
                let _ = write!(out, "{d:e}");
            } else {
                let _ = write!(out, "{d}");
            }
        }
        _ => return false,
    }
    true
}

/// What a [`Collector`] exports and how it reaches DCGM.
#[derive(Debug, Clone)]
pub struct CollectorConfig {
    /// The counters file's rows.
    pub counters: Vec<Counter>,
    /// Which GPUs or MIG instances (`-d`; default [`DeviceSelection::Flex`]). NVLink rows are
    /// exported for the links of these GPUs (none with `i`).
    pub devices: DeviceSelection,
    /// Which NvSwitches and NvSwitch links (`-s`; default [`EntitySelection::Flex`]). Looked
    /// up only when the counters have NvSwitch or NVLink rows.
    pub switches: EntitySelection,
    /// Which CPUs and CPU cores (`-p`; default [`EntitySelection::Flex`]). Looked up only when
    /// the counters have CPU or CPU-core rows.
    pub cpus: EntitySelection,
    /// How to reach DCGM (default: the embedded engine).
    pub connection: Connection,
    /// Load libdcgm from here.
    pub library_path: Option<PathBuf>,
    /// Use the dcgm-sim simulator (when `library_path` is not set).
    pub simulator: bool,
    /// How often DCGM samples the fields (default 30 s, as dcgm-exporter).
    pub collect_interval: Duration,
    /// Window of `DCGM_EXP_XID_ERRORS_COUNT` (default 5 min, as dcgm-exporter).
    pub xid_window: Duration,
    /// Window of `DCGM_EXP_CLOCK_EVENTS_COUNT` (default 5 min, as dcgm-exporter).
    pub clock_events_window: Duration,
    /// Labels.
    pub labels: LabelOptions,
    /// DCGM's own log of an embedded engine: file (`-`: standard output) and severity.
    pub engine_log: Option<(String, dcgm::LogSeverity)>,
}

impl CollectorConfig {
    /// Defaults for `counters`.
    pub fn new(counters: Vec<Counter>) -> Self {
        Self {
            counters,
            devices: DeviceSelection::Flex,
            switches: EntitySelection::Flex,
            cpus: EntitySelection::Flex,
            connection: Connection::Embedded,
            library_path: None,
            simulator: false,
            collect_interval: Duration::from_secs(30),
            xid_window: Duration::from_secs(300),
            clock_events_window: Duration::from_secs(300),
            labels: LabelOptions::default(),
            engine_log: None,
        }
    }
}

/// A reader of NvSwitch, NVLink, CPU or CPU-core rows, with its last values.
struct OtherReader {
    reader: Reader,
    snap: Snapshot,
    what: &'static str,
    failing: bool,
}

/// The health watch behind `DCGM_EXP_GPU_HEALTH_STATUS`: a group of the exported GPUs,
/// watching every subsystem (as dcgm-exporter), on the GPU reader's connection.
struct HealthWatch {
    gpus: Vec<u32>,
    group: Option<Group>,
    /// The reader's reconnect count when the group was made (a new connection needs a new
    /// group).
    reconnects: u64,
    failing: bool,
}

impl HealthWatch {
    fn open(&mut self, reader: &Reader) -> Result<()> {
        self.group = None;
        let handle = reader
            .handle()
            .ok_or_else(|| Error::InvalidArgument("not connected".into()))?;
        let name = format!("dcgm_exporter_health_{}", std::process::id());
        let group = Group::with_gpus(handle, &name, &self.gpus)?;
        group.health_set(HealthSystems::ALL)?;
        self.group = Some(group);
        self.reconnects = reader.reconnects();
        Ok(())
    }
}

/// Reads the configured fields of the configured entities and renders them; see the
/// [module docs](self).
pub struct Collector {
    _handle: Handle,
    reader: Reader,
    /// The GPU reader's last values.
    snap: Snapshot,
    others: Vec<OtherReader>,
    events: Option<(Reader, Vec<EventWindow>)>,
    health: Option<HealthWatch>,
    /// Whether `DCGM_EXP_P2P_STATUS` is exported, and whether reading it is failing.
    p2p: Option<bool>,
    renderer: Renderer,
    simulated: bool,
    profiles_resolved: bool,
    ignored: Vec<Counter>,
    name_field: FieldId,
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collector")
            .field("renderer", &self.renderer)
            .field("simulated", &self.simulated)
            .finish()
    }
}

/// The entity groups other than GPUs the counters export (their rows' [`row_entity_group`]).
fn other_groups(counters: &[Counter]) -> Vec<EntityGroup> {
    let mut out = Vec::new();
    for c in counters.iter().filter(|c| !c.is_label()) {
        if let Some(f) = c.field_id() {
            let g = row_entity_group(f);
            if g != EntityGroup::Gpu && !out.contains(&g) {
                out.push(g);
            }
        }
    }
    out
}

impl Collector {
    /// Connects, discovers the entities and starts watching. Rows that cannot be exported
    /// are listed by [`Collector::ignored`]: profiling (`DCGM_FI_PROF_*`) rows when DCGM
    /// refuses to watch them (no profiling support, or the profiling module is in use), as
    /// dcgm-exporter skips them.
    ///
    /// NvSwitch, NVLink, CPU and CPU-core rows are read for the entities of
    /// [`CollectorConfig::switches`], [`CollectorConfig::cpus`] and [`CollectorConfig::devices`]
    /// (see [`discover_other_entities`]), each kind through its own watch; nothing is looked up
    /// when the counters have no such row. `DCGM_EXP_GPU_HEALTH_STATUS` sets a health watch of
    /// every subsystem on the exported GPUs and reports each check; `DCGM_EXP_P2P_STATUS`
    /// reports the NVLink peer-to-peer status between them and every other GPU.
    pub fn new(cfg: CollectorConfig) -> Result<Self> {
        let mut hb = Handle::builder();
        if let Some(p) = &cfg.library_path {
            hb = hb.library_path(p);
        } else if cfg.simulator {
            hb = hb.simulator();
        }
        let (handle, connection) = match &cfg.connection {
            Connection::Embedded => (hb.embedded()?, Connection::Embedded),
            Connection::Remote(a) => (hb.connect(a)?, Connection::Remote(a.clone())),
            Connection::Auto => match hb.clone().connect("localhost") {
                Ok(h) => (h, Connection::Remote("localhost".into())),
                Err(Error::ConnectFailed { .. }) | Err(Error::Dcgm { .. }) => {
                    (hb.embedded()?, Connection::Embedded)
                }
                Err(e) => return Err(e),
            },
        };
        let simulated = handle.is_simulated();
        let identities = discover_entities(&handle, &cfg.devices)?;
        if identities.is_empty() {
            return Err(Error::InvalidArgument("no GPU to export".into()));
        }
        let groups = other_groups(&cfg.counters);
        let others = if groups.is_empty() {
            Vec::new()
        } else {
            let link_gpus: &[EntityIdentity] = match cfg.devices {
                DeviceSelection::GpuInstances(_) => &[],
                _ => &identities,
            };
            discover_other_entities(&handle, &groups, link_gpus, &cfg.switches, &cfg.cpus)?
        };
        let name_field = FieldId(dcgm::sys::field_by_name("DCGM_FI_DEV_NAME").map_or(50, |f| f.id));
        let mut ignored = Vec::new();
        let mut counters = cfg.counters;
        let entities: Vec<Entity> = identities.iter().map(|i| i.entity).collect();
        let has_mig = identities.iter().any(|i| i.mig.is_some());
        let plain: Vec<Counter> = counters
            .iter()
            .filter(|c| {
                c.field_id()
                    .is_some_and(|f| row_entity_group(f) == EntityGroup::Gpu)
            })
            .cloned()
            .collect();
        let keep_age = (cfg.collect_interval * 4).max(Duration::from_secs(30));
        let open_reader = |fields: &[FieldId], entities: &[Entity], name: &str| -> Result<Reader> {
            let mut b = Reader::builder()
                .fields(fields)
                .entities(entities)
                .update_frequency(cfg.collect_interval)
                .max_keep_age(keep_age)
                .connection(connection.clone())
                .field_group_name(name);
            if let Some(p) = &cfg.library_path {
                b = b.library_path(p);
            } else if cfg.simulator {
                b = b.simulator();
            }
            if let Some((file, severity)) = &cfg.engine_log {
                b = b.engine_log(file, *severity);
            }
            let mut r = b.build()?;
            r.connect()?;
            Ok(r)
        };
        let build = |counters: &[Counter]| -> Result<Reader> {
            let mut fields = counter_fields(counters);
            // The GPU instances' names are their MIG profiles; a reader needs a field anyway.
            if (has_mig || fields.is_empty()) && !fields.contains(&name_field) {
                fields.push(name_field);
            }
            // ... and their MIG device UUIDs, for workload attribution.
            if has_mig && !fields.contains(&MIG_UUID_FIELD) {
                fields.push(MIG_UUID_FIELD);
            }
            open_reader(&fields, &entities, "dcgm_exporter")
        };
        let reader = match build(&plain) {
            Ok(r) => r,
            Err(e) if plain.iter().any(is_profiling) => {
                log::warn!("cannot watch the profiling fields ({e}); exporting without them");
                let (prof, rest): (Vec<Counter>, Vec<Counter>) =
                    plain.into_iter().partition(is_profiling);
                let prof_names: BTreeSet<String> =
                    prof.iter().map(|c| c.metric_name.clone()).collect();
                counters.retain(|c| {
                    if prof_names.contains(&c.metric_name) {
                        ignored.push(c.clone());
                        false
                    } else {
                        true
                    }
                });
                build(&rest)?
            }
            Err(e) => return Err(e),
        };

        // One watch per kind of other entity, with that kind's rows and the global labels.
        let mut other_readers = Vec::new();
        for (group, what) in [
            (EntityGroup::Switch, "NvSwitch"),
            (EntityGroup::Link, "NVLink"),
            (EntityGroup::Cpu, "CPU"),
            (EntityGroup::CpuCore, "CPU core"),
        ] {
            let ents: Vec<Entity> = others
                .iter()
                .filter(|o| o.group() == group)
                .map(OtherEntity::entity)
                .collect();
            if ents.is_empty() {
                continue;
            }
            let rows: Vec<Counter> = counters
                .iter()
                .filter(|c| {
                    c.field_id().is_some_and(|f| {
                        row_entity_group(f) == group || (c.is_label() && is_global_field(f))
                    })
                })
                .cloned()
                .collect();
            let fields = counter_fields(&rows);
            let name = format!("dcgm_exporter_{}", group.name().to_ascii_lowercase());
            for chunk in ents.chunks(dcgm::sys::DCGM_GROUP_MAX_ENTITIES_V2) {
                other_readers.push(OtherReader {
                    reader: open_reader(&fields, chunk, &name)?,
                    snap: Snapshot::new(),
                    what,
                    failing: false,
                });
            }
        }

        let mut windows = Vec::new();
        for c in &counters {
            if let CounterField::Exporter(kind) = c.field
                && kind.source_field().is_some()
                && windows.iter().all(|w: &EventWindow| w.kind() != kind)
            {
                let window = match kind {
                    ExporterCounter::XidErrorsCount => cfg.xid_window,
                    _ => cfg.clock_events_window,
                };
                windows.push(EventWindow::new(kind, window, cfg.collect_interval));
            }
        }
        let gpus: Vec<u32> = identities
            .iter()
            .map(|i| i.gpu)
            .collect::<BTreeSet<u32>>()
            .into_iter()
            .collect();
        let events = if windows.is_empty() {
            None
        } else {
            let fields: Vec<FieldId> = windows
                .iter()
                .filter_map(|w| w.kind().source_field())
                .collect();
            let longest = windows
                .iter()
                .map(EventWindow::window)
                .max()
                .unwrap_or_default();
            let mut b = Reader::builder()
                .fields(&fields)
                .gpu_ids(&gpus)
                .update_frequency(cfg.collect_interval)
                .max_keep_age(longest + cfg.collect_interval * 2)
                .connection(connection.clone())
                .field_group_name("dcgm_exporter_events");
            if let Some(p) = &cfg.library_path {
                b = b.library_path(p);
            } else if cfg.simulator {
                b = b.simulator();
            }
            if let Some((file, severity)) = &cfg.engine_log {
                b = b.engine_log(file, *severity);
            }
            let mut r = b.build()?;
            r.connect()?;
            Some((r, windows))
        };
        let has_row = |e: ExporterCounter| {
            counters
                .iter()
                .any(|c| c.field == CounterField::Exporter(e))
        };
        let health = if has_row(ExporterCounter::GpuHealthStatus) {
            let mut hw = HealthWatch {
                gpus: gpus.clone(),
                group: None,
                reconnects: 0,
                failing: false,
            };
            hw.open(&reader)?;
            Some(hw)
        } else {
            None
        };
        let p2p = has_row(ExporterCounter::P2pStatus).then_some(false);
        let mut renderer = Renderer::new(&counters, identities, cfg.labels);
        renderer.set_other_entities(others);
        renderer.mark_simulated(simulated);
        let mut collector = Self {
            _handle: handle,
            reader,
            snap: Snapshot::new(),
            others: other_readers,
            events,
            health,
            p2p,
            renderer,
            simulated,
            profiles_resolved: !has_mig,
            ignored,
            name_field,
        };
        // MIG profile names and UUIDs come from a first read, so that they are known before
        // the first collection (workload attribution needs the UUIDs).
        if has_mig && collector.reader.latest_into(&mut collector.snap).is_ok() {
            resolve_profiles(&mut collector.renderer, &collector.snap, name_field);
            collector.profiles_resolved = true;
        }
        Ok(collector)
    }

    /// Whether the values come from the dcgm-sim simulator.
    pub fn is_simulated(&self) -> bool {
        self.simulated
    }

    /// Labels of the workloads on each GPU or GPU instance; see
    /// [`Renderer::set_workload_labels`]. Call it before [`Collector::collect`] whenever the
    /// attribution changes.
    pub fn set_workload_labels(&mut self, labels: impl Fn(&EntityIdentity) -> Vec<LabelSet>) {
        self.renderer.set_workload_labels(labels);
    }

    /// The exported GPUs and MIG instances, in export order.
    pub fn identities(&self) -> &[EntityIdentity] {
        self.renderer.identities()
    }

    /// The exported NvSwitches, NVLinks, CPUs and CPU cores, in export order (none unless the
    /// counters have rows for them).
    pub fn other_entities(&self) -> impl ExactSizeIterator<Item = &OtherEntity> + '_ {
        self.renderer.other_entities()
    }

    /// Rows left out (see [`Collector::new`]).
    pub fn ignored(&self) -> &[Counter] {
        &self.ignored
    }

    /// Reads the latest values and writes their exposition into `out` (cleared first).
    ///
    /// A failure of the GPU reader is an error; a failure of the NvSwitch / NVLink / CPU
    /// readers, of the health check or of the P2P status is logged (once until it works
    /// again) and leaves those rows out.
    pub fn collect(&mut self, out: &mut String) -> Result<()> {
        self.reader.latest_into(&mut self.snap)?;
        if !self.profiles_resolved {
            resolve_profiles(&mut self.renderer, &self.snap, self.name_field);
            self.profiles_resolved = true;
        }
        for o in &mut self.others {
            match o.reader.latest_into(&mut o.snap) {
                Ok(()) => {
                    if std::mem::take(&mut o.failing) {
                        log::info!("reading the {} rows works again", o.what);
                    }
                }
                Err(e) => {
                    if !std::mem::replace(&mut o.failing, true) {
                        log::warn!("reading the {} rows failed: {e}", o.what);
                    }
                    o.snap.clear();
                }
            }
        }
        self.check_health();
        self.read_p2p();
        let windows: &[EventWindow] = match &mut self.events {
            Some((reader, windows)) => {
                match reader.since_last_call() {
                    Ok(samples) => {
                        for (entity, fields) in &samples {
                            for w in windows.iter_mut() {
                                let Some(src) = w.kind().source_field() else {
                                    continue;
                                };
                                for s in fields.get(&src).into_iter().flatten() {
                                    if let Value::Int(v) = s.value {
                                        w.observe(entity.id, s.timestamp_us, v);
                                    }
                                }
                            }
                        }
                    }
                    Err(e) => log::warn!("reading XID / clock-event samples failed: {e}"),
                }
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_micros() as i64);
                for w in windows.iter_mut() {
                    w.prune(now);
                }
                windows
            }
            None => &[],
        };
        let mut snaps: Vec<&Snapshot> = Vec::with_capacity(1 + self.others.len());
        snaps.push(&self.snap);
        snaps.extend(self.others.iter().map(|o| &o.snap));
        self.renderer.render_snapshots(&snaps, windows, out);
        Ok(())
    }

    /// Runs the health check of `DCGM_EXP_GPU_HEALTH_STATUS` (making the health watch again
    /// after a reconnection or a failure).
    fn check_health(&mut self) {
        let Some(hw) = &mut self.health else {
            return;
        };
        let result = if hw.group.is_none() || hw.reconnects != self.reader.reconnects() {
            hw.open(&self.reader)
        } else {
            Ok(())
        }
        .and_then(|()| match &hw.group {
            Some(g) => g.health_check(),
            None => Err(Error::InvalidArgument("no health watch".into())),
        });
        let status = self.renderer.health_mut();
        match result {
            Ok(report) => {
                status
                    .get_or_insert_with(|| GpuHealth::new(hw.gpus.iter().copied()))
                    .apply(&report);
                if std::mem::take(&mut hw.failing) {
                    log::info!("the GPU health check works again");
                }
            }
            Err(e) => {
                *status = None;
                hw.group = None;
                if !std::mem::replace(&mut hw.failing, true) {
                    log::warn!("the GPU health check failed: {e}");
                }
            }
        }
    }

    /// Reads the NVLink peer-to-peer status of `DCGM_EXP_P2P_STATUS`.
    fn read_p2p(&mut self) {
        let Some(failing) = &mut self.p2p else {
            return;
        };
        let result = match self.reader.handle() {
            Some(h) => h.system().nvlink_p2p_status(),
            None => Err(Error::InvalidArgument("not connected".into())),
        };
        match result {
            Ok(mut st) => {
                let gpus = &self.renderer.gpu_base;
                st.retain(|s| gpus.iter().any(|(g, _, _)| *g == s.gpu));
                self.renderer.set_p2p(Some(st));
                if std::mem::take(failing) {
                    log::info!("reading the NVLink P2P status works again");
                }
            }
            Err(e) => {
                self.renderer.set_p2p(None);
                if !std::mem::replace(failing, true) {
                    log::warn!("reading the NVLink P2P status failed: {e}");
                }
            }
        }
    }
}

/// Names MIG profiles after `DCGM_FI_DEV_NAME` of each GPU instance, when DCGM reports a name
/// other than the GPU's model.
fn resolve_profiles(renderer: &mut Renderer, snap: &Snapshot, name_field: FieldId) {
    let mut ids = renderer.identities().to_vec();
    for id in &mut ids {
        let Some(m) = id.mig.as_mut() else {
            continue;
        };
        if let Some(Value::String(name)) = snap
            .get(&id.entity)
            .and_then(|f| f.get(&name_field))
            .map(|v| &v.value)
        {
            let name = name.trim();
            if !name.is_empty() && name != id.model_name {
                m.profile = name.to_string();
            }
        }
        if m.uuid.is_none()
            && let Some(Value::String(uuid)) = snap
                .get(&id.entity)
                .and_then(|f| f.get(&MIG_UUID_FIELD))
                .map(|v| &v.value)
            && uuid.starts_with("MIG-")
        {
            m.uuid = Some(uuid.clone());
        }
    }
    renderer.set_identities(ids);
}

fn is_profiling(c: &Counter) -> bool {
    c.field_id()
        .and_then(|f| f.info())
        .is_some_and(|i| i.name.starts_with("DCGM_FI_PROF_"))
}
