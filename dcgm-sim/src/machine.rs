//! The simulated node's entities, built from a [`SimConfig`]: GPUs, MIG GPU and compute
//! instances, NvSwitches, NVLinks, CPUs and CPU cores, with their ids and parents, plus the
//! fake entities a client adds through the test API.

use std::collections::{BTreeSet, HashMap};

use dcgm_sys::*;

use crate::config::{CpuConfig, GpuConfig, SimConfig};
use crate::cpu::{CoreRange, Cpus};
use crate::mig_instances::MigInstances;

/// All entities of the node.
#[derive(Debug, Clone)]
pub struct Machine {
    pub cfg: SimConfig,
    /// The CPU cores, configured and fake ([`crate::cpu`]).
    pub cpus: Cpus,
    /// GPUs added by `dcgmCreateFakeEntities`.
    pub fake_gpus: BTreeSet<u32>,
    /// NvSwitches added by `dcgmCreateFakeEntities`: no hardware behind them, blank fields.
    pub fake_switches: BTreeSet<u32>,
    /// Link states forced by `dcgmSetEntityNvLinkLinkState`, by (entity group, entity, link).
    pub link_states: HashMap<(u32, u32, u32), dcgmNvLinkLinkState_t>,
    /// The MIG instances and the driver's MIG state ([`crate::mig_instances`]).
    pub mig: MigInstances,
    /// Whether the host engine holds the driver (`dcgmDetachDriver`/`dcgmAttachDriver`).
    pub driver: crate::driver::DriverState,
}

/// UUID of every fake GPU, as DCGM gives it.
pub const FAKE_GPU_UUID: &str = "GPU-00000000-0000-0000-0000-000000000000";

/// Packs a link entity id the way `dcgm_link_t` does: parent type, link index, parent id.
pub fn link_id(parent_group: u32, index: u32, parent: u32) -> u32 {
    (parent_group & 0xff) | ((index & 0xffff) << 8) | ((parent & 0xff) << 24)
}

/// Unpacks a link entity id into (parent type, link index, parent id).
pub fn unpack_link(id: u32) -> (u32, u32, u32) {
    (id & 0xff, (id >> 8) & 0xffff, id >> 24)
}

/// NVLinks per NvSwitch in the simulation.
pub const SWITCH_LINKS: u32 = 64;

impl Machine {
    pub fn new(mut cfg: SimConfig) -> Self {
        let mut cpu_cores = Vec::new();
        let mut next = 0;
        for (i, c) in cfg.cpus.iter().enumerate() {
            cpu_cores.push(CoreRange {
                cpu: i as u32,
                first: next,
                count: c.cores,
            });
            next += c.cores;
        }
        if cfg.host_cpus {
            let topology =
                crate::host_cpus::host_topology(std::path::Path::new("/")).unwrap_or_default();
            (cfg.cpus, cpu_cores) = crate::host_cpus::host_cpus(&topology, &cfg.cpus);
        }
        Self {
            mig: MigInstances::from_config(&cfg),
            cfg,
            cpus: Cpus::new(cpu_cores),
            fake_gpus: BTreeSet::new(),
            fake_switches: BTreeSet::new(),
            link_states: HashMap::new(),
            driver: Default::default(),
        }
    }

    /// Adds a fake GPU with the next free id; `None` when the node is full.
    pub fn add_fake_gpu(&mut self) -> Option<u32> {
        let id = self.gpu_count();
        if id as usize >= DCGM_MAX_NUM_DEVICES {
            return None;
        }
        self.cfg.gpus.push(GpuConfig {
            uuid: FAKE_GPU_UUID.into(),
            pci_bus_id: format!("00000000:{:02X}:00.0", 0xF0 + id),
            nvlinks: 0,
            ..GpuConfig::default()
        });
        self.fake_gpus.insert(id);
        Some(id)
    }

    /// Adds a fake GPU instance under `gpu` (see [`MigInstances::add_fake_gpu_instance`]);
    /// `None` for an unknown GPU.
    pub fn add_fake_gpu_instance(&mut self, gpu: u32) -> Option<u32> {
        (gpu < self.gpu_count()).then(|| self.mig.add_fake_gpu_instance(gpu))
    }

    /// The CPU socket a GPU hangs off: the GPUs are shared out in order, an equal run of them
    /// to each socket (the first half on CPU 0, the rest on CPU 1 on a two-socket node).
    pub fn gpu_socket(&self, gpu: u32) -> u32 {
        let sockets = self.cfg.cpus.len().max(1) as u32;
        let per = self.gpu_count().div_ceil(sockets).max(1);
        (gpu / per).min(sockets - 1)
    }

    /// Adds a fake CPU with the next CPU id.
    pub fn add_fake_cpu(&mut self) -> Result<u32, dcgmReturn_t> {
        let id = self.cfg.cpus.len() as u32;
        if id as usize >= DCGM_MAX_NUM_CPUS {
            return Err(DCGM_ST_INSUFFICIENT_RESOURCES);
        }
        self.cfg.cpus.push(CpuConfig {
            model: String::new(),
            cores: 0,
        });
        self.cpus.add_fake_cpu(id);
        Ok(id)
    }

    /// Adds a fake NvSwitch with the next id.
    pub fn add_fake_switch(&mut self) -> u32 {
        self.cfg.nvswitches += 1;
        self.fake_switches.insert(self.cfg.nvswitches - 1);
        self.cfg.nvswitches - 1
    }

    /// The state of one link of a GPU or NvSwitch: forced, or up when the entity has it.
    pub fn link_state(&self, group: u32, id: u32, link: u32) -> dcgmNvLinkLinkState_t {
        if let Some(s) = self.link_states.get(&(group, id, link)) {
            return *s;
        }
        let has = match group {
            DCGM_FE_GPU => self
                .cfg
                .gpus
                .get(id as usize)
                .is_some_and(|g| link < g.nvlinks),
            DCGM_FE_SWITCH => id < self.cfg.nvswitches && link < SWITCH_LINKS,
            _ => false,
        };
        if has {
            DcgmNvLinkLinkStateUp
        } else {
            DcgmNvLinkLinkStateNotSupported
        }
    }

    pub fn gpu_count(&self) -> u32 {
        self.cfg.gpus.len() as u32
    }

    /// Entity ids of one entity group.
    pub fn entities(&self, group: dcgm_field_entity_group_t) -> Vec<u32> {
        match group {
            DCGM_FE_GPU => (0..self.gpu_count()).collect(),
            DCGM_FE_GPU_I => {
                let mut v: Vec<u32> = self.mig.gpu_instances().iter().map(|i| i.id).collect();
                v.sort_unstable();
                v
            }
            DCGM_FE_GPU_CI => {
                let mut v: Vec<u32> = self.mig.compute_instances().iter().map(|c| c.id).collect();
                v.sort_unstable();
                v
            }
            DCGM_FE_SWITCH => (0..self.cfg.nvswitches).collect(),
            DCGM_FE_CPU => (0..self.cfg.cpus.len() as u32).collect(),
            DCGM_FE_CPU_CORE => self.cpus.all_cores(),
            DCGM_FE_LINK => {
                let mut v = Vec::new();
                for (g, gpu) in self.cfg.gpus.iter().enumerate() {
                    for l in 0..gpu.nvlinks {
                        v.push(link_id(DCGM_FE_GPU, l, g as u32));
                    }
                }
                for s in 0..self.cfg.nvswitches {
                    for l in 0..SWITCH_LINKS {
                        v.push(link_id(DCGM_FE_SWITCH, l, s));
                    }
                }
                v
            }
            _ => Vec::new(),
        }
    }

    /// Whether the entity exists.
    pub fn exists(&self, group: dcgm_field_entity_group_t, id: u32) -> bool {
        match group {
            DCGM_FE_NONE => true,
            DCGM_FE_GPU => id < self.gpu_count(),
            DCGM_FE_GPU_I => self.mig.gpu_instance(id).is_some(),
            DCGM_FE_GPU_CI => self.mig.compute_instance(id).is_some(),
            DCGM_FE_SWITCH => id < self.cfg.nvswitches,
            DCGM_FE_CPU => (id as usize) < self.cfg.cpus.len(),
            DCGM_FE_CPU_CORE => self.cpus.core_exists(id),
            // libdcgm 4.6.0's cache takes any port a link id may name, not only the links
            // there are: on a known GPU up to twice the most links a GPU has; on any NvSwitch
            // (it cannot check those) up to twice the most an NvSwitch has. `link_present` says
            // whether hardware is behind a link, `link_parent_exists` what a group accepts.
            DCGM_FE_LINK => {
                let (t, idx, parent) = unpack_link(id);
                match t {
                    DCGM_FE_GPU => {
                        parent < self.gpu_count() && idx < 2 * DCGM_NVLINK_MAX_LINKS_PER_GPU as u32
                    }
                    DCGM_FE_SWITCH => idx < 2 * DCGM_NVLINK_MAX_LINKS_PER_NVSWITCH as u32,
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// Whether the GPU or NvSwitch a link entity id names exists, whatever its port: what
    /// libdcgm 4.6.0 checks before it adds a link to a group.
    pub fn link_parent_exists(&self, id: u32) -> bool {
        let (t, _, parent) = unpack_link(id);
        match t {
            DCGM_FE_GPU => parent < self.gpu_count(),
            DCGM_FE_SWITCH => parent < self.cfg.nvswitches,
            _ => false,
        }
    }

    /// Whether a link entity id names a link its GPU or NvSwitch has.
    pub fn link_present(&self, id: u32) -> bool {
        let (t, idx, parent) = unpack_link(id);
        match t {
            DCGM_FE_GPU => self
                .cfg
                .gpus
                .get(parent as usize)
                .is_some_and(|g| idx < g.nvlinks),
            DCGM_FE_SWITCH => parent < self.cfg.nvswitches && idx < SWITCH_LINKS,
            _ => false,
        }
    }

    /// The physical GPU an entity belongs to (for GPU, GPU_I, GPU_CI and GPU links).
    pub fn gpu_of(&self, group: dcgm_field_entity_group_t, id: u32) -> Option<u32> {
        match group {
            DCGM_FE_GPU => Some(id),
            DCGM_FE_GPU_I => self.mig.gpu_instance(id).map(|i| i.gpu),
            DCGM_FE_GPU_CI => self.mig.compute_instance(id).map(|c| c.gpu),
            DCGM_FE_LINK => {
                let (t, _, parent) = unpack_link(id);
                (t == DCGM_FE_GPU).then_some(parent)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fake_cpu_takes_the_next_cpu_id_and_its_cores_follow_every_core() {
        let mut m = Machine::new(SimConfig {
            host_cpus: false,
            ..SimConfig::default()
        });
        let cpus = m.cfg.cpus.len() as u32;
        let cores = m.cpus.all_cores().len() as u32;
        assert_eq!(m.add_fake_cpu(), Ok(cpus));
        assert!(m.cpus.is_fake(cpus));
        assert_eq!(m.entities(DCGM_FE_CPU).len() as u32, cpus + 1);
        assert_eq!(m.cpus.add_fake_core(DCGM_FE_CPU, cpus), Ok(cores));
        assert_eq!(m.cpus.cores_of_cpu(cpus), [cores]);
    }
}
