//! Entities: GPUs, MIG instances, NvSwitches, NVLinks, CPUs and the rest.

use std::fmt;

use dcgm_sys::*;

/// The kind of an entity (`DCGM_FE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum EntityGroup {
    /// No entity: global fields.
    None,
    /// A GPU.
    Gpu,
    /// A vGPU.
    Vgpu,
    /// An NvSwitch.
    Switch,
    /// A MIG GPU instance.
    GpuInstance,
    /// A MIG compute instance.
    ComputeInstance,
    /// An NVLink (the id is a packed `dcgm_link_t`).
    Link,
    /// A CPU (socket).
    Cpu,
    /// A CPU core.
    CpuCore,
    /// A ConnectX network adapter.
    ConnectX,
    /// A value this crate does not know.
    Other(u32),
}

impl EntityGroup {
    /// From the C value.
    pub(crate) fn from_raw(v: dcgm_field_entity_group_t) -> Self {
        match v {
            DCGM_FE_NONE => Self::None,
            DCGM_FE_GPU => Self::Gpu,
            DCGM_FE_VGPU => Self::Vgpu,
            DCGM_FE_SWITCH => Self::Switch,
            DCGM_FE_GPU_I => Self::GpuInstance,
            DCGM_FE_GPU_CI => Self::ComputeInstance,
            DCGM_FE_LINK => Self::Link,
            DCGM_FE_CPU => Self::Cpu,
            DCGM_FE_CPU_CORE => Self::CpuCore,
            DCGM_FE_CONNECTX => Self::ConnectX,
            o => Self::Other(o),
        }
    }

    /// The C value.
    pub(crate) fn raw(self) -> dcgm_field_entity_group_t {
        match self {
            Self::None => DCGM_FE_NONE,
            Self::Gpu => DCGM_FE_GPU,
            Self::Vgpu => DCGM_FE_VGPU,
            Self::Switch => DCGM_FE_SWITCH,
            Self::GpuInstance => DCGM_FE_GPU_I,
            Self::ComputeInstance => DCGM_FE_GPU_CI,
            Self::Link => DCGM_FE_LINK,
            Self::Cpu => DCGM_FE_CPU,
            Self::CpuCore => DCGM_FE_CPU_CORE,
            Self::ConnectX => DCGM_FE_CONNECTX,
            Self::Other(o) => o,
        }
    }

    /// DCGM's name for the group (`GPU`, `GPU_I`, `Switch`, ...).
    pub fn name(self) -> &'static str {
        entity_group_name(self.raw())
    }
}

/// One entity: its group and its id within the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entity {
    /// What kind of entity.
    pub group: EntityGroup,
    /// Its id within the group (a GPU id, a switch id, ...).
    pub id: u32,
}

impl Entity {
    /// The NVLink `index` of a GPU or an NvSwitch (`parent`), as DCGM numbers link entities;
    /// `None` for another parent group or an index out of DCGM's range.
    pub fn link(parent: Entity, index: u32) -> Option<Self> {
        let parent_type = match parent.group {
            EntityGroup::Gpu => DCGM_FE_GPU,
            EntityGroup::Switch => DCGM_FE_SWITCH,
            _ => return None,
        };
        let l = dcgm_link_t::new(
            parent_type,
            u16::try_from(index).ok()?,
            u8::try_from(parent.id).ok()?,
        );
        Some(Self::new(EntityGroup::Link, l.raw()))
    }

    /// A GPU by id.
    pub fn gpu(id: u32) -> Self {
        Self {
            group: EntityGroup::Gpu,
            id,
        }
    }

    /// Any entity.
    pub fn new(group: EntityGroup, id: u32) -> Self {
        Self { group, id }
    }

    /// The C pair.
    pub(crate) fn raw(self) -> dcgmGroupEntityPair_t {
        dcgmGroupEntityPair_t {
            entityGroupId: self.group.raw(),
            entityId: self.id,
        }
    }

    /// From the C pair.
    pub(crate) fn from_raw(p: dcgmGroupEntityPair_t) -> Self {
        Self {
            group: EntityGroup::from_raw(p.entityGroupId),
            id: p.entityId,
        }
    }
}

impl fmt::Display for Entity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group == EntityGroup::Link {
            let l = dcgm_link_t::from_raw(self.id);
            let parent = if l.type_() == DCGM_FE_SWITCH {
                "Switch"
            } else {
                "GPU"
            };
            return write!(f, "{parent} {} link {}", l.parent_id(), l.index());
        }
        write!(f, "{} {}", self.group.name(), self.id)
    }
}
