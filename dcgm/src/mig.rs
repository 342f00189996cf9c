//! MIG: the tree of GPU instances and compute instances of each GPU in MIG mode.

use std::collections::BTreeMap;

use dcgm_sys::*;

use crate::blank::NonBlank;
use crate::entity::EntityGroup;
use crate::error::Result;
use crate::library::{c_buf, ffi};
use crate::system::System;

/// A MIG compute instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputeInstance {
    /// The DCGM entity id (group [`EntityGroup::ComputeInstance`]).
    pub entity_id: u32,
    /// NVML's compute-instance id within its GPU instance (`None` where DCGM leaves it blank).
    pub nvml_compute_instance_id: Option<u32>,
    /// NVML's profile id (`None` where blank).
    pub profile_id: Option<u32>,
    /// Compute slices (`None` where blank).
    pub slices: Option<u32>,
}

/// A MIG GPU instance with its compute instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuInstance {
    /// The DCGM entity id (group [`EntityGroup::GpuInstance`]).
    pub entity_id: u32,
    /// NVML's GPU-instance id within its GPU (`None` where DCGM leaves it blank).
    pub nvml_instance_id: Option<u32>,
    /// NVML's profile id (`None` where blank).
    pub profile_id: Option<u32>,
    /// Memory/compute slices (`None` where blank).
    pub slices: Option<u32>,
    /// Its compute instances, by entity id.
    pub compute_instances: Vec<ComputeInstance>,
}

/// A GPU in MIG mode with its instances.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// for gpu in handle.system().mig_hierarchy()? {
///     println!("GPU {} ({})", gpu.gpu, gpu.uuid);
///     for gi in &gpu.instances {
///         println!("  GPU instance {} ({:?} slices), {} compute instances",
///             gi.entity_id, gi.slices, gi.compute_instances.len());
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigGpu {
    /// The GPU id.
    pub gpu: u32,
    /// The GPU's UUID.
    pub uuid: String,
    /// Its GPU instances, by entity id.
    pub instances: Vec<GpuInstance>,
}

impl System {
    /// The MIG tree of the node: GPUs in MIG mode, their GPU instances and compute
    /// instances. GPUs without MIG are left out.
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away. A node without MIG is not an error: the
    /// list is empty (libdcgm 4.6.0).
    #[doc(alias = "dcgmGetGpuInstanceHierarchy")]
    pub fn mig_hierarchy(&self) -> Result<Vec<MigGpu>> {
        let mut h = dcgmMigHierarchy_v2::boxed_versioned();
        let lib = self.handle().lib();
        // SAFETY: a versioned struct valid for the call.
        unsafe {
            ffi!(
                lib,
                dcgmGetGpuInstanceHierarchy(self.handle().raw(), &mut *h)
            )
        }?;
        let n = (h.count as usize).min(h.entityList.len());
        let list = &h.entityList[..n];
        let group = |p: dcgmGroupEntityPair_t| EntityGroup::from_raw(p.entityGroupId);
        // GPU instance entity id -> (parent GPU, instance); entries may come in any order.
        let mut instances: BTreeMap<u32, (u32, String, GpuInstance)> = BTreeMap::new();
        for e in list
            .iter()
            .filter(|e| group(e.entity) == EntityGroup::GpuInstance)
        {
            if group(e.parent) != EntityGroup::Gpu {
                continue;
            }
            instances.insert(
                e.entity.entityId,
                (
                    e.parent.entityId,
                    c_buf(&e.info.gpuUuid),
                    GpuInstance {
                        entity_id: e.entity.entityId,
                        nvml_instance_id: e.info.nvmlInstanceId.non_blank(),
                        profile_id: e.info.nvmlMigProfileId.non_blank(),
                        slices: e.info.nvmlProfileSlices.non_blank(),
                        compute_instances: Vec::new(),
                    },
                ),
            );
        }
        for e in list
            .iter()
            .filter(|e| group(e.entity) == EntityGroup::ComputeInstance)
        {
            if group(e.parent) != EntityGroup::GpuInstance {
                continue;
            }
            if let Some((_, _, gi)) = instances.get_mut(&e.parent.entityId) {
                gi.compute_instances.push(ComputeInstance {
                    entity_id: e.entity.entityId,
                    nvml_compute_instance_id: e.info.nvmlComputeInstanceId.non_blank(),
                    profile_id: e.info.nvmlMigProfileId.non_blank(),
                    slices: e.info.nvmlProfileSlices.non_blank(),
                });
            }
        }
        let mut gpus: BTreeMap<u32, MigGpu> = BTreeMap::new();
        for (_, (gpu, uuid, mut gi)) in instances {
            gi.compute_instances.sort_by_key(|c| c.entity_id);
            gpus.entry(gpu)
                .or_insert_with(|| MigGpu {
                    gpu,
                    uuid,
                    instances: Vec::new(),
                })
                .instances
                .push(gi);
        }
        Ok(gpus.into_values().collect())
    }
}
