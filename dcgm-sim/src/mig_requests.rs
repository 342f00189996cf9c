//! MIG requests applied to the simulated machine: creating and deleting GPU and compute
//! instances as the driver and DCGM's host engine do (the rules are in `mig.rs`), and the
//! re-read of a GPU's instances after a change.

use std::collections::BTreeSet;

use dcgm_sys::*;

use crate::machine::{ComputeInstance, GpuInstance, Machine};
use crate::mig::*;

/// Rebuilds DCGM's view (entities) of one GPU from its driver state, numbered as DCGM does.
pub fn refresh(m: &mut Machine, gpu: u32) {
    m.gpu_instances.retain(|i| i.gpu != gpu);
    m.compute_instances.retain(|c| c.gpu != gpu);
    let taken_gi: BTreeSet<u32> = m.gpu_instances.iter().map(|i| i.id).collect();
    let taken_ci: BTreeSet<u32> = m.compute_instances.iter().map(|c| c.id).collect();
    let memory_mib = m.cfg.gpus.get(gpu as usize).map_or(0, |g| g.memory_mib);
    let state = m.mig.gpu_mut(gpu);
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
        m.gpu_instances.push(GpuInstance {
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
            m.compute_instances.push(ComputeInstance {
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
fn changed(m: &mut Machine, gpu: u32, flags: u32) {
    m.mig.gpu_mut(gpu).stale = true;
    if flags & DCGM_MIG_RECONFIG_DELAY_PROCESSING != 0 {
        return;
    }
    let stale: Vec<u32> = (0..m.mig.gpus.len() as u32)
        .filter(|g| m.mig.gpus[*g as usize].stale)
        .collect();
    for g in stale {
        refresh(m, g);
    }
}

/// The driver's GPU instance behind a GPU_I entity: (GPU, index in its `gis`).
fn nvml_gi_of(m: &Machine, entity: u32) -> Option<(u32, usize)> {
    let gi = m.gpu_instance(entity)?;
    let state = m.mig.gpus.get(gi.gpu as usize)?;
    let idx = state.gis.iter().position(|g| g.nvml_id == gi.local_id)?;
    Some((gi.gpu, idx))
}

/// The answer for a DCGM instance the driver does not have: one destroyed under the delay
/// flag (NVML refuses the stale handle: `DCGM_ST_BADPARAM`), or a fake one made by
/// `dcgmCreateFakeEntities`, for which libdcgm 4.6.0 answers `DCGM_ST_NVML_NOT_LOADED`
/// (recorded: the battery's `mig/*/fake_*` cases).
fn not_in_driver(m: &Machine, gpu: Option<u32>) -> dcgmReturn_t {
    let stale = gpu
        .and_then(|g| m.mig.gpus.get(g as usize))
        .is_some_and(|g| g.stale);
    if stale {
        DCGM_ST_BADPARAM
    } else {
        DCGM_ST_NVML_NOT_LOADED
    }
}

/// `dcgmCreateMigEntity` for a GPU instance (NVML profile index `index`) on `gpu`.
pub fn create_gpu_instance(
    m: &mut Machine,
    gpu: u32,
    index: u32,
    flags: u32,
) -> Result<(), dcgmReturn_t> {
    if gpu >= m.gpu_count() {
        return Err(DCGM_ST_BADPARAM);
    }
    let p = *gi_profile(index).ok_or(DCGM_ST_NOT_SUPPORTED)?;
    let state = m.mig.gpu_mut(gpu);
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
    changed(m, gpu, flags);
    Ok(())
}

/// `dcgmCreateMigEntity` for a compute instance (NVML profile index `index`) in the GPU
/// instance entity `parent`.
pub fn create_compute_instance(
    m: &mut Machine,
    parent: u32,
    index: u32,
    flags: u32,
) -> Result<(), dcgmReturn_t> {
    let Some(parent_gpu) = m.gpu_instance(parent).map(|g| g.gpu) else {
        return Err(DCGM_ST_BADPARAM);
    };
    let (gpu, idx) = nvml_gi_of(m, parent).ok_or_else(|| not_in_driver(m, Some(parent_gpu)))?;
    let gi = &mut m.mig.gpu_mut(gpu).gis[idx];
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
    changed(m, gpu, flags);
    Ok(())
}

/// `dcgmDeleteMigEntity` of a GPU instance entity.
pub fn delete_gpu_instance(m: &mut Machine, entity: u32, flags: u32) -> Result<(), dcgmReturn_t> {
    let Some(entity_gpu) = m.gpu_instance(entity).map(|g| g.gpu) else {
        return Err(DCGM_ST_INSTANCE_NOT_FOUND);
    };
    let (gpu, idx) = nvml_gi_of(m, entity).ok_or_else(|| not_in_driver(m, Some(entity_gpu)))?;
    // NVML_ERROR_IN_USE (it has compute instances), which DCGM passes on unmapped.
    if !m.mig.gpus[gpu as usize].gis[idx].cis.is_empty() {
        return Err(DCGM_ST_NVML_ERROR);
    }
    m.mig.gpu_mut(gpu).gis.remove(idx);
    changed(m, gpu, flags);
    Ok(())
}

/// `dcgmDeleteMigEntity` of a compute instance entity.
pub fn delete_compute_instance(
    m: &mut Machine,
    entity: u32,
    flags: u32,
) -> Result<(), dcgmReturn_t> {
    let ci = m
        .compute_instance(entity)
        .cloned()
        .ok_or(DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND)?;
    let (gpu, idx) = nvml_gi_of(m, ci.instance).ok_or_else(|| not_in_driver(m, Some(ci.gpu)))?;
    let cis = &m.mig.gpus[gpu as usize].gis[idx].cis;
    let pos = cis
        .iter()
        .position(|c| c.nvml_id == ci.local_id)
        .ok_or_else(|| not_in_driver(m, Some(gpu)))?;
    // NVML_ERROR_IN_USE: a process runs in it.
    if cis[pos].busy {
        return Err(DCGM_ST_NVML_ERROR);
    }
    m.mig.gpu_mut(gpu).gis[idx].cis.remove(pos);
    changed(m, gpu, flags);
    Ok(())
}

/// NVML's profile id and slices of a GPU instance entity, for the hierarchy, on a GPU DCGM
/// numbered itself (`None`: a configured or fake instance, described as before).
pub fn gi_nvml_profile(m: &Machine, gi: &GpuInstance) -> Option<(u32, u32)> {
    let state = m.mig.gpus.get(gi.gpu as usize).filter(|s| s.renumbered)?;
    let g = state.gis.iter().find(|g| g.nvml_id == gi.local_id)?;
    Some((g.profile.nvml_id, g.profile.compute))
}

/// NVML's profile id and slices of a compute instance entity, as [`gi_nvml_profile`].
pub fn ci_nvml_profile(m: &Machine, ci: &ComputeInstance) -> Option<(u32, u32)> {
    let parent = m.gpu_instance(ci.instance)?;
    let state = m.mig.gpus.get(ci.gpu as usize).filter(|s| s.renumbered)?;
    let g = state.gis.iter().find(|g| g.nvml_id == parent.local_id)?;
    let c = g.cis.iter().find(|c| c.nvml_id == ci.local_id)?;
    Some((c.profile, ci_slices(c.profile).unwrap_or(1)))
}
