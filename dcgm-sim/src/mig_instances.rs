//! The node's MIG part: DCGM's GPU and compute instance entities (configured, fake, or
//! numbered afresh from the driver after a change) and the driver's MIG state behind them;
//! creating and deleting instances as the driver and DCGM's host engine do (the rules and
//! profiles are in `mig.rs`).

use std::collections::BTreeSet;

use dcgm_sys::*;

use crate::config::{GpuConfig, SimConfig};
use crate::mig::*;

/// GPU instance ids of a GPU start at `gpu * IDS_PER_GPU` (DCGM's id scheme for fake ones).
pub const IDS_PER_GPU: u32 = 8;

/// A MIG GPU instance.
#[derive(Debug, Clone)]
pub struct GpuInstance {
    pub id: u32,
    pub gpu: u32,
    /// Index of the instance within its GPU (the NVML instance id).
    pub local_id: u32,
    pub profile: String,
    pub slices: u32,
}

/// A MIG compute instance.
#[derive(Debug, Clone)]
pub struct ComputeInstance {
    pub id: u32,
    pub gpu: u32,
    pub instance: u32,
    pub local_id: u32,
    /// Its own profile name (a fake one's, `1fc.1g.4gb` as DCGM names it); `None`: its GPU
    /// instance's, as DCGM names a real compute instance.
    pub profile: Option<String>,
}

/// DCGM's MIG instances and the driver's MIG state.
#[derive(Debug, Clone)]
pub struct MigInstances {
    gpu_instances: Vec<GpuInstance>,
    compute_instances: Vec<ComputeInstance>,
    /// The driver's MIG state of each GPU (`dcgmCreateMigEntity` changes it).
    driver: MigState,
}

impl MigInstances {
    /// The instances a configuration describes, numbered in order.
    pub fn from_config(cfg: &SimConfig) -> Self {
        let mut gpu_instances = Vec::new();
        let mut compute_instances = Vec::new();
        for (g, gpu) in cfg.gpus.iter().enumerate() {
            for (li, mi) in gpu.mig.iter().enumerate() {
                let id = gpu_instances.len() as u32;
                gpu_instances.push(GpuInstance {
                    id,
                    gpu: g as u32,
                    local_id: li as u32 + 1,
                    profile: mi.profile.clone(),
                    slices: mi.slices,
                });
                for c in 0..mi.compute_instances {
                    compute_instances.push(ComputeInstance {
                        id: compute_instances.len() as u32,
                        gpu: g as u32,
                        instance: id,
                        local_id: c,
                        profile: None,
                    });
                }
            }
        }
        Self {
            gpu_instances,
            compute_instances,
            driver: MigState::from_config(cfg),
        }
    }

    /// Every GPU instance, in the order DCGM made them.
    pub fn gpu_instances(&self) -> &[GpuInstance] {
        &self.gpu_instances
    }

    /// Every compute instance, in the order DCGM made them.
    pub fn compute_instances(&self) -> &[ComputeInstance] {
        &self.compute_instances
    }

    /// A GPU instance by id.
    pub fn gpu_instance(&self, id: u32) -> Option<&GpuInstance> {
        self.gpu_instances.iter().find(|i| i.id == id)
    }

    /// A compute instance by id.
    pub fn compute_instance(&self, id: u32) -> Option<&ComputeInstance> {
        self.compute_instances.iter().find(|c| c.id == id)
    }

    /// Whether a GPU is in MIG mode (configured so, or holding fake instances).
    pub fn enabled(&self, gpu: u32) -> bool {
        self.driver.enabled(gpu) || self.gpu_instances.iter().any(|i| i.gpu == gpu)
    }

    /// The share of its GPU's compute an entity has (1.0 for a whole GPU).
    pub fn compute_share(&self, group: dcgm_field_entity_group_t, id: u32) -> f64 {
        match group {
            DCGM_FE_GPU_I => self
                .gpu_instance(id)
                .map_or(1.0, |i| f64::from(i.slices) / 7.0),
            DCGM_FE_GPU_CI => self
                .compute_instance(id)
                .and_then(|c| self.gpu_instance(c.instance))
                .map_or(1.0, |i| {
                    let n = self
                        .compute_instances
                        .iter()
                        .filter(|c| c.instance == i.id)
                        .count()
                        .max(1);
                    f64::from(i.slices) / 7.0 / n as f64
                }),
            _ => 1.0,
        }
    }

    /// Adds a fake GPU instance under `gpu` (a GPU of the node): id `gpu * 8 + n` for its
    /// n-th instance (the next free id after it when a configured instance holds that id).
    pub fn add_fake_gpu_instance(&mut self, gpu: u32) -> u32 {
        let n = self.gpu_instances.iter().filter(|i| i.gpu == gpu).count() as u32;
        let mut id = gpu * IDS_PER_GPU + n;
        while self.gpu_instance(id).is_some() {
            id += 1;
        }
        self.gpu_instances.push(GpuInstance {
            id,
            gpu,
            local_id: n,
            profile: "1fg.4gb".into(),
            slices: 1,
        });
        id
    }

    /// Adds a fake compute instance under GPU instance `gi`: id `gpu * 8 + n` for the n-th
    /// compute instance of that GPU; `None` for an unknown GPU instance.
    pub fn add_fake_compute_instance(&mut self, gi: u32) -> Option<u32> {
        let gpu = self.gpu_instance(gi)?.gpu;
        let n = self
            .compute_instances
            .iter()
            .filter(|c| c.gpu == gpu)
            .count() as u32;
        let local = self
            .compute_instances
            .iter()
            .filter(|c| c.instance == gi)
            .count() as u32;
        let mut id = gpu * IDS_PER_GPU + n;
        while self.compute_instance(id).is_some() {
            id += 1;
        }
        self.compute_instances.push(ComputeInstance {
            id,
            gpu,
            instance: gi,
            local_id: local,
            profile: Some("1fc.1g.4gb".into()),
        });
        Some(id)
    }

    /// Rebuilds DCGM's view (entities) of one GPU from its driver state, numbered as DCGM does.
    fn refresh(&mut self, gpus: &[GpuConfig], gpu: u32) {
        self.gpu_instances.retain(|i| i.gpu != gpu);
        self.compute_instances.retain(|c| c.gpu != gpu);
        let taken_gi: BTreeSet<u32> = self.gpu_instances.iter().map(|i| i.id).collect();
        let taken_ci: BTreeSet<u32> = self.compute_instances.iter().map(|c| c.id).collect();
        let memory_mib = gpus.get(gpu as usize).map_or(0, |g| g.memory_mib);
        let state = self.driver.gpu_mut(gpu);
        state.renumbered = true;
        state.stale = false;
        let mut gis: Vec<NvmlGi> = state.gis.clone();
        gis.sort_by_key(|g| (g.profile.index, g.nvml_id));
        let (mut next_gi, mut next_ci) = (gpu * MAX_GPCS, gpu * MAX_GPCS);
        for gi in &gis {
            while taken_gi.contains(&next_gi) {
                next_gi += 1;
            }
            let gi_id = next_gi;
            next_gi += 1;
            self.gpu_instances.push(GpuInstance {
                id: gi_id,
                gpu,
                local_id: gi.nvml_id,
                profile: profile_name(&gi.profile, memory_mib),
                slices: gi.profile.compute,
            });
            let mut cis = gi.cis.clone();
            cis.sort_by_key(|c| (c.profile, c.nvml_id));
            for ci in cis {
                while taken_ci.contains(&next_ci) {
                    next_ci += 1;
                }
                self.compute_instances.push(ComputeInstance {
                    id: next_ci,
                    gpu,
                    instance: gi_id,
                    local_id: ci.nvml_id,
                    profile: None,
                });
                next_ci += 1;
            }
        }
    }

    /// After a successful change on `gpu`: DCGM re-reads it (and every GPU changed under the
    /// delay flag) unless this request asked for the delay.
    fn changed(&mut self, gpus: &[GpuConfig], gpu: u32, flags: u32) {
        self.driver.gpu_mut(gpu).stale = true;
        if flags & DCGM_MIG_RECONFIG_DELAY_PROCESSING != 0 {
            return;
        }
        let stale: Vec<u32> = (0..self.driver.gpus.len() as u32)
            .filter(|g| self.driver.gpus[*g as usize].stale)
            .collect();
        for g in stale {
            self.refresh(gpus, g);
        }
    }

    /// The driver's GPU instance behind a GPU_I entity: (GPU, index in its `gis`).
    fn nvml_gi_of(&self, entity: u32) -> Option<(u32, usize)> {
        let gi = self.gpu_instance(entity)?;
        let state = self.driver.gpus.get(gi.gpu as usize)?;
        let idx = state.gis.iter().position(|g| g.nvml_id == gi.local_id)?;
        Some((gi.gpu, idx))
    }

    /// The answer for a DCGM instance the driver does not have: one destroyed under the delay
    /// flag (NVML refuses the stale handle: `DCGM_ST_BADPARAM`), or a fake one made by
    /// `dcgmCreateFakeEntities`, for which libdcgm 4.6.0 answers `DCGM_ST_NVML_NOT_LOADED`
    /// and older releases otherwise (recorded: the battery's `mig/*/fake_*` cases;
    /// `personality::fake_mig_instance_answer`). `create`: a creation in it, else a deletion.
    fn not_in_driver(&self, gpu: Option<u32>, create: bool) -> dcgmReturn_t {
        let stale = gpu
            .and_then(|g| self.driver.gpus.get(g as usize))
            .is_some_and(|g| g.stale);
        if stale {
            DCGM_ST_BADPARAM
        } else {
            crate::personality::fake_mig_instance_answer(create)
        }
    }

    /// `dcgmCreateMigEntity` for a GPU instance (NVML profile index `index`) on `gpu`.
    pub fn create_gpu_instance(
        &mut self,
        gpus: &[GpuConfig],
        gpu: u32,
        index: u32,
        flags: u32,
    ) -> Result<(), dcgmReturn_t> {
        if gpu as usize >= gpus.len() {
            return Err(DCGM_ST_BADPARAM);
        }
        let p = *gi_profile(index).ok_or(DCGM_ST_NOT_SUPPORTED)?;
        let state = self.driver.gpu_mut(gpu);
        if !state.enabled {
            return Err(DCGM_ST_NOT_SUPPORTED);
        }
        let count = state
            .gis
            .iter()
            .filter(|g| g.profile.index == p.index)
            .count() as u32;
        let media = p.media && state.gis.iter().any(|g| g.profile.media);
        if count >= p.max || media {
            return Err(DCGM_ST_INSUFFICIENT_RESOURCES);
        }
        let start = free_start(state, &p).ok_or(DCGM_ST_INSUFFICIENT_RESOURCES)?;
        let nvml_id = (1..)
            .find(|id| !state.gis.iter().any(|g| g.nvml_id == *id))
            .unwrap_or(1);
        state.gis.push(NvmlGi {
            nvml_id,
            profile: p,
            start,
            cis: Vec::new(),
        });
        self.changed(gpus, gpu, flags);
        Ok(())
    }

    /// `dcgmCreateMigEntity` for a compute instance (NVML profile index `index`) in the GPU
    /// instance entity `parent`.
    pub fn create_compute_instance(
        &mut self,
        gpus: &[GpuConfig],
        parent: u32,
        index: u32,
        flags: u32,
    ) -> Result<(), dcgmReturn_t> {
        let Some(parent_gpu) = self.gpu_instance(parent).map(|g| g.gpu) else {
            return Err(DCGM_ST_BADPARAM);
        };
        let (gpu, idx) = self
            .nvml_gi_of(parent)
            .ok_or_else(|| self.not_in_driver(Some(parent_gpu), true))?;
        let gi = &mut self.driver.gpu_mut(gpu).gis[idx];
        let slices = ci_slices(index).ok_or(DCGM_ST_NOT_SUPPORTED)?;
        if !ci_offered(gi.profile.compute, slices) {
            return Err(DCGM_ST_NOT_SUPPORTED);
        }
        let start = free_ci_start(gi, slices).ok_or(DCGM_ST_INSUFFICIENT_RESOURCES)?;
        let nvml_id = (0..)
            .find(|id| !gi.cis.iter().any(|c| c.nvml_id == *id))
            .unwrap_or(0);
        gi.cis.push(NvmlCi {
            nvml_id,
            profile: index,
            start,
            busy: false,
        });
        self.changed(gpus, gpu, flags);
        Ok(())
    }

    /// `dcgmDeleteMigEntity` of a GPU instance entity.
    pub fn delete_gpu_instance(
        &mut self,
        gpus: &[GpuConfig],
        entity: u32,
        flags: u32,
    ) -> Result<(), dcgmReturn_t> {
        let Some(entity_gpu) = self.gpu_instance(entity).map(|g| g.gpu) else {
            return Err(DCGM_ST_INSTANCE_NOT_FOUND);
        };
        let (gpu, idx) = self
            .nvml_gi_of(entity)
            .ok_or_else(|| self.not_in_driver(Some(entity_gpu), false))?;
        // NVML_ERROR_IN_USE (it has compute instances), which DCGM passes on unmapped.
        if !self.driver.gpus[gpu as usize].gis[idx].cis.is_empty() {
            return Err(DCGM_ST_NVML_ERROR);
        }
        self.driver.gpu_mut(gpu).gis.remove(idx);
        self.changed(gpus, gpu, flags);
        Ok(())
    }

    /// `dcgmDeleteMigEntity` of a compute instance entity.
    pub fn delete_compute_instance(
        &mut self,
        gpus: &[GpuConfig],
        entity: u32,
        flags: u32,
    ) -> Result<(), dcgmReturn_t> {
        let ci = self
            .compute_instance(entity)
            .cloned()
            .ok_or(DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND)?;
        let (gpu, idx) = self
            .nvml_gi_of(ci.instance)
            .ok_or_else(|| self.not_in_driver(Some(ci.gpu), false))?;
        let cis = &self.driver.gpus[gpu as usize].gis[idx].cis;
        let pos = cis
            .iter()
            .position(|c| c.nvml_id == ci.local_id)
            .ok_or_else(|| self.not_in_driver(Some(gpu), false))?;
        // NVML_ERROR_IN_USE: a process runs in it.
        if cis[pos].busy {
            return Err(DCGM_ST_NVML_ERROR);
        }
        self.driver.gpu_mut(gpu).gis[idx].cis.remove(pos);
        self.changed(gpus, gpu, flags);
        Ok(())
    }

    /// NVML's profile id and slices of a GPU instance entity, for the hierarchy, on a GPU DCGM
    /// numbered itself (`None`: a configured or fake instance, described as before).
    pub fn gi_nvml_profile(&self, gi: &GpuInstance) -> Option<(u32, u32)> {
        let state = self
            .driver
            .gpus
            .get(gi.gpu as usize)
            .filter(|s| s.renumbered)?;
        let g = state.gis.iter().find(|g| g.nvml_id == gi.local_id)?;
        Some((g.profile.nvml_id, g.profile.compute))
    }

    /// NVML's profile id and slices of a compute instance entity, as [`gi_nvml_profile`].
    pub fn ci_nvml_profile(&self, ci: &ComputeInstance) -> Option<(u32, u32)> {
        let parent = self.gpu_instance(ci.instance)?;
        let state = self
            .driver
            .gpus
            .get(ci.gpu as usize)
            .filter(|s| s.renumbered)?;
        let g = state.gis.iter().find(|g| g.nvml_id == parent.local_id)?;
        let c = g.cis.iter().find(|c| c.nvml_id == ci.local_id)?;
        Some((c.profile, ci_slices(c.profile).unwrap_or(1)))
    }
}
