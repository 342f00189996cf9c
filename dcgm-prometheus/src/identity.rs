//! Who a series belongs to and how it is labelled: GPU and MIG identities
//! ([`EntityIdentity`]), NvSwitches, NVLinks, CPUs and cores ([`OtherEntity`]), label options
//! and dcgm-exporter's label names (the label sets are built in `label_sets`).

use dcgm::{Entity, EntityGroup, FieldId};

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

    pub(super) fn sort_key(&self) -> (u32, u32, u32) {
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
    /// Name of the host-name label: `hostname`, as dcgm-exporter since its rename (#655);
    /// `Hostname` before it.
    pub hostname_label: String,
    /// Name of the UUID label: `UUID` (dcgm-exporter's `--use-old-namespace` uses `uuid`).
    pub uuid_label: String,
    /// Replace the blanks of model names with dashes (dcgm-exporter's
    /// `--replace-blanks-in-model-name`).
    pub replace_blanks_in_model_name: bool,
    /// Value of the `hostengine` label (the host engine's address), put on every series
    /// after the host name when one exporter reads several host engines; `None` (the
    /// default) leaves the label out.
    pub hostengine: Option<String>,
}

impl Default for LabelOptions {
    fn default() -> Self {
        Self {
            hostname: Some(default_hostname(None)),
            hostname_label: "hostname".into(),
            uuid_label: "UUID".into(),
            replace_blanks_in_model_name: false,
            hostengine: None,
        }
    }
}

/// The host name dcgm-exporter would label series with: the host of a remote host engine
/// (`host:port`) unless it is local, otherwise `NODE_NAME`, otherwise this machine's name.
pub fn default_hostname(remote_hostengine: Option<&str>) -> String {
    if let Some(r) = remote_hostengine {
        let host = split_host(r);
        let lower = r.to_ascii_lowercase();
        // A unix socket or a vsock address is this machine's (or its hypervisor's) engine:
        // the node's own name.
        if !host.is_empty()
            && !host.starts_with('/')
            && !lower.starts_with("unix://")
            && !lower.starts_with("vsock://")
        {
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
    /// Every series, when one exporter reads several host engines: the engine's address.
    pub const HOSTENGINE: &str = "hostengine";
    /// `DCGM_EXP_GPU_INFO`: the NVIDIA driver's version.
    pub const DRIVER_VERSION: &str = "driver_version";
    /// `DCGM_EXP_GPU_INFO`: the VBIOS version.
    pub const VBIOS_VERSION: &str = "vbios_version";
    /// `DCGM_EXP_GPU_INFO`: the CUDA compute capability, `major.minor`.
    pub const CUDA_COMPUTE_CAPABILITY: &str = "cuda_compute_capability";
    /// `DCGM_EXP_GPU_INFO`: `enabled` or `disabled`.
    pub const MIG_MODE: &str = "mig_mode";
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
        // Discovery found these links among DCGM's own, so their numbers are in range.
        let link = |parent, index| {
            Entity::link(parent, index).unwrap_or(Entity::new(EntityGroup::Link, u32::MAX))
        };
        match *self {
            Self::Switch { id } => Entity::new(EntityGroup::Switch, id),
            Self::SwitchLink { switch, link: l } => {
                link(Entity::new(EntityGroup::Switch, switch), l)
            }
            Self::GpuLink { gpu, link: l, .. } => link(Entity::gpu(gpu), l),
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
    pub(super) fn sort_key(&self) -> (u8, u32, u32) {
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
/// use dcgm_prometheus::row_entity_group;
/// assert_eq!(row_entity_group(FieldId::parse("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS")?), EntityGroup::Switch);
/// assert_eq!(row_entity_group(FieldId::parse("DCGM_FI_DEV_CPU_UTIL_TOTAL")?), EntityGroup::CpuCore);
/// assert_eq!(row_entity_group(FieldId::parse("DCGM_FI_DEV_GPU_TEMP")?), EntityGroup::Gpu);
/// # Ok::<(), dcgm::Error>(())
/// ```
pub fn row_entity_group(field: FieldId) -> EntityGroup {
    match field.entity_level() {
        Some(
            g @ (EntityGroup::Switch | EntityGroup::Link | EntityGroup::Cpu | EntityGroup::CpuCore),
        ) => g,
        _ => EntityGroup::Gpu,
    }
}

/// Whether a field is global (entity level `NONE`): a `label` row of such a field labels the
/// series of every entity, GPUs, NvSwitches, links and CPUs alike.
pub(super) fn is_global_field(field: FieldId) -> bool {
    field.is_global()
}

/// Extra labels of one series: (name, value) pairs.
pub type LabelSet = Vec<(String, String)>;
