//! MIG: the tree of GPU instances and compute instances of each GPU in MIG mode, and their
//! creation and deletion (`dcgmCreateMigEntity`, `dcgmDeleteMigEntity`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use dcgm_sys::*;

use crate::blank::NonBlank;
use crate::entity::EntityGroup;
use crate::error::{Error, Result, ReturnCode};
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

/// The profile of a new MIG GPU instance (DCGM's `DcgmMigProfileGpuInstanceSlice*`): how many
/// of the GPU's compute slices it takes. Which ones a GPU offers depends on the GPU (an H200
/// 141GB: 1g.18gb, 1g.18gb+me, 1g.35gb, 2g.35gb, 3g.71gb, 4g.71gb and 7g.141gb).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GpuInstanceProfile {
    /// One slice (`1g.18gb` on an H200).
    Slice1,
    /// Two slices (`2g.35gb`).
    Slice2,
    /// Three slices (`3g.71gb`).
    Slice3,
    /// Four slices (`4g.71gb`).
    Slice4,
    /// Seven slices, the whole GPU (`7g.141gb`).
    Slice7,
    /// Eight slices (GPUs with eight compute slices).
    Slice8,
    /// Six slices.
    Slice6,
    /// One slice with the media extensions (`1g.18gb+me`; DCGM's `Slice1Rev1`).
    Slice1MediaExtensions,
    /// Two slices with the media extensions (DCGM's `Slice2Rev1`).
    Slice2MediaExtensions,
    /// One compute slice with two memory slices (`1g.35gb`; DCGM's `Slice1Rev2`).
    Slice1DoubleMemory,
}

impl GpuInstanceProfile {
    /// Every profile, in DCGM's order.
    pub const ALL: [GpuInstanceProfile; 10] = [
        Self::Slice1,
        Self::Slice2,
        Self::Slice3,
        Self::Slice4,
        Self::Slice7,
        Self::Slice8,
        Self::Slice6,
        Self::Slice1MediaExtensions,
        Self::Slice2MediaExtensions,
        Self::Slice1DoubleMemory,
    ];

    /// The C value (`DcgmMigProfileGpuInstanceSlice1` …); [`crate::raw::gpu_instance_profile`]
    /// outside the crate.
    pub(crate) fn raw(self) -> dcgmMigProfile_t {
        DcgmMigProfileGpuInstanceSlice1
            + Self::ALL.iter().position(|p| *p == self).unwrap_or(0) as u32
    }

    /// The profile of a C value; `None` for one that is not a GPU-instance profile.
    pub(crate) fn from_raw(v: dcgmMigProfile_t) -> Option<Self> {
        let i = v.checked_sub(DcgmMigProfileGpuInstanceSlice1)?;
        Self::ALL.get(i as usize).copied()
    }
}

/// The profile of a new MIG compute instance (DCGM's `DcgmMigProfileComputeInstanceSlice*`):
/// how many of its GPU instance's compute slices it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ComputeInstanceProfile {
    /// One slice.
    Slice1,
    /// Two slices.
    Slice2,
    /// Three slices.
    Slice3,
    /// Four slices.
    Slice4,
    /// Seven slices.
    Slice7,
    /// Eight slices.
    Slice8,
    /// Six slices.
    Slice6,
    /// One slice, revision 1 (DCGM's `Slice1Rev1`).
    Slice1Rev1,
}

impl ComputeInstanceProfile {
    /// Every profile, in DCGM's order.
    pub const ALL: [ComputeInstanceProfile; 8] = [
        Self::Slice1,
        Self::Slice2,
        Self::Slice3,
        Self::Slice4,
        Self::Slice7,
        Self::Slice8,
        Self::Slice6,
        Self::Slice1Rev1,
    ];

    /// The C value (`DcgmMigProfileComputeInstanceSlice1` …);
    /// [`crate::raw::compute_instance_profile`] outside the crate.
    pub(crate) fn raw(self) -> dcgmMigProfile_t {
        DcgmMigProfileComputeInstanceSlice1
            + Self::ALL.iter().position(|p| *p == self).unwrap_or(0) as u32
    }

    /// The profile of a C value; `None` for one that is not a compute-instance profile.
    pub(crate) fn from_raw(v: dcgmMigProfile_t) -> Option<Self> {
        let i = v.checked_sub(DcgmMigProfileComputeInstanceSlice1)?;
        Self::ALL.get(i as usize).copied()
    }
}

/// How long a new instance may take to appear in DCGM's hierarchy: the host engine learns of
/// the change from the driver's event, which its event thread polls about once a second.
const APPEAR_TIMEOUT: Duration = Duration::from_secs(10);
const APPEAR_POLL: Duration = Duration::from_millis(100);

/// What the privileges section of every MIG management call says.
macro_rules! mig_privileges_doc {
    () => {
        "On real GPUs this reconfigures the GPU: DCGM must run as root (the embedded engine in \
         a root process, or an `nv-hostengine` running as root), the GPU must be in MIG mode \
         (`nvidia-smi -i N -mig 1`, which takes effect after a GPU reset with no process on \
         the GPU), and an instance can only be removed when no process runs in it. The \
         simulator (`dcgm-sim`) does it in its simulated driver, following DCGM's source and \
         NVIDIA's MIG documentation; no real GPU's MIG layout is changed by its tests."
    };
}

impl System {
    /// NVML ids of the GPU instances DCGM shows on `gpu`.
    fn nvml_gpu_instances(&self, gpu: u32) -> Result<Vec<(u32, Option<u32>)>> {
        Ok(self
            .mig_hierarchy()?
            .into_iter()
            .filter(|g| g.gpu == gpu)
            .flat_map(|g| g.instances)
            .map(|gi| (gi.entity_id, gi.nvml_instance_id))
            .collect())
    }

    /// Waits until `found` finds the new instance in DCGM's hierarchy.
    fn await_instance<T>(&self, mut found: impl FnMut(&[MigGpu]) -> Option<T>) -> Result<T> {
        let start = Instant::now();
        loop {
            if let Some(t) = found(&self.mig_hierarchy()?) {
                return Ok(t);
            }
            if start.elapsed() > APPEAR_TIMEOUT {
                return Err(Error::Dcgm {
                    code: ReturnCode::from_raw(DCGM_ST_TIMEOUT),
                    call: "dcgmGetGpuInstanceHierarchy",
                    message: Some(
                        "the new MIG instance was created but did not appear in DCGM's \
                         hierarchy within 10 s: read mig_hierarchy() again later"
                            .into(),
                    ),
                });
            }
            std::thread::sleep(APPEAR_POLL);
        }
    }

    fn create_mig(&self, parent: u32, profile: dcgmMigProfile_t, option: u32) -> Result<()> {
        let mut c = dcgmCreateMigEntity_v1::new_versioned();
        c.parentId = parent;
        c.profile = profile;
        c.createOption = option;
        let lib = self.handle().lib();
        // SAFETY: a versioned request valid for the call.
        unsafe { ffi!(lib, dcgmCreateMigEntity(self.handle().raw(), &mut c)) }
    }

    fn delete_mig(&self, group: u32, entity: u32) -> Result<()> {
        let mut d = dcgmDeleteMigEntity_v1::new_versioned();
        d.entityGroupId = group;
        d.entityId = entity;
        let lib = self.handle().lib();
        // SAFETY: a versioned request valid for the call.
        unsafe { ffi!(lib, dcgmDeleteMigEntity(self.handle().raw(), &mut d)) }
    }

    /// Creates a MIG GPU instance of `profile` on GPU `gpu` and returns it as DCGM shows it
    /// once the host engine has seen it (DCGM renumbers a GPU's instances after a change, so
    /// read the entity ids of the others again too).
    ///
    #[doc = mig_privileges_doc!()]
    ///
    /// ```
    /// # fn main() -> dcgm::Result<()> {
    /// use dcgm::{ComputeInstanceProfile, GpuInstanceProfile};
    /// // The simulator, with one H200 in MIG mode and no instance yet.
    /// dcgm::testing::configure_simulator(Some(
    ///     r#"{"gpus":[{"model":"NVIDIA H200","memory_mib":143771,"mig_mode":true}]}"#,
    /// ))?;
    /// let handle = dcgm::Handle::builder()
    ///     .library_path(dcgm::testing::simulator_path())
    ///     .embedded()?;
    /// let system = handle.system();
    /// let gi = system.create_gpu_instance(0, GpuInstanceProfile::Slice3)?;
    /// assert_eq!(gi.slices, Some(3));
    /// let ci = system.create_compute_instance(gi.entity_id, ComputeInstanceProfile::Slice1)?;
    /// assert_eq!(system.mig_hierarchy()?[0].instances[0].compute_instances[0], ci);
    /// system.delete_compute_instance(ci.entity_id)?;
    /// system.delete_gpu_instance(gi.entity_id)?;
    /// assert!(system.mig_hierarchy()?.is_empty());
    /// # dcgm::testing::configure_simulator(None)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// `NotSupported` when the GPU is not in MIG mode or does not offer the profile;
    /// `InsufficientResources` when the GPU has no free placement for it; `BadParam` for an
    /// unknown GPU; `NoPermission` without root; a `Timeout` error when the instance was made
    /// but DCGM did not show it within 10 s.
    #[doc(alias = "dcgmCreateMigEntity")]
    pub fn create_gpu_instance(
        &self,
        gpu: u32,
        profile: GpuInstanceProfile,
    ) -> Result<GpuInstance> {
        let before: Vec<Option<u32>> = self
            .nvml_gpu_instances(gpu)?
            .into_iter()
            .map(|(_, nvml)| nvml)
            .collect();
        self.create_mig(gpu, profile.raw(), DcgmMigCreateGpuInstance)?;
        self.await_instance(|tree| {
            tree.iter()
                .filter(|g| g.gpu == gpu)
                .flat_map(|g| &g.instances)
                .find(|gi| gi.nvml_instance_id.is_some() && !before.contains(&gi.nvml_instance_id))
                .cloned()
        })
    }

    /// Creates a MIG compute instance of `profile` in the GPU instance with entity id
    /// `gpu_instance` and returns it as DCGM shows it once the host engine has seen it.
    ///
    #[doc = mig_privileges_doc!()]
    ///
    /// # Errors
    ///
    /// `BadParam` for a GPU instance DCGM does not know; `NotSupported` for a profile the
    /// GPU instance does not offer; `InsufficientResources` when it has no room left; as
    /// [`System::create_gpu_instance`] otherwise.
    #[doc(alias = "dcgmCreateMigEntity")]
    pub fn create_compute_instance(
        &self,
        gpu_instance: u32,
        profile: ComputeInstanceProfile,
    ) -> Result<ComputeInstance> {
        let tree = self.mig_hierarchy()?;
        let parent = tree.iter().find_map(|g| {
            g.instances
                .iter()
                .find(|gi| gi.entity_id == gpu_instance)
                .map(|gi| (g.gpu, gi.nvml_instance_id))
        });
        let before: Vec<(u32, Option<u32>, Option<u32>)> = tree
            .iter()
            .flat_map(|g| {
                g.instances.iter().flat_map(move |gi| {
                    gi.compute_instances
                        .iter()
                        .map(move |ci| (g.gpu, gi.nvml_instance_id, ci.nvml_compute_instance_id))
                })
            })
            .collect();
        self.create_mig(gpu_instance, profile.raw(), DcgmMigCreateComputeInstance)?;
        let Some((gpu, nvml_gi)) = parent else {
            // DCGM accepted a parent its hierarchy does not show (a fake instance).
            return Err(Error::InvalidArgument(format!(
                "GPU instance {gpu_instance} is not in DCGM's MIG hierarchy"
            )));
        };
        self.await_instance(|tree| {
            tree.iter().filter(|g| g.gpu == gpu).find_map(|g| {
                g.instances
                    .iter()
                    .filter(|gi| gi.nvml_instance_id == nvml_gi)
                    .flat_map(|gi| &gi.compute_instances)
                    .find(|ci| {
                        ci.nvml_compute_instance_id.is_some()
                            && !before.contains(&(gpu, nvml_gi, ci.nvml_compute_instance_id))
                    })
                    .cloned()
            })
        })
    }

    /// Deletes the MIG GPU instance with entity id `gpu_instance` (delete its compute
    /// instances first).
    ///
    #[doc = mig_privileges_doc!()]
    ///
    /// # Errors
    ///
    /// `InstanceNotFound` for an id DCGM does not know; `NvmlError` when the driver refuses
    /// because the instance still has compute instances or a process runs in it (NVML's
    /// `IN_USE`, which DCGM passes on as `DCGM_ST_NVML_ERROR`); `NoPermission` without root.
    #[doc(alias = "dcgmDeleteMigEntity")]
    pub fn delete_gpu_instance(&self, gpu_instance: u32) -> Result<()> {
        self.delete_mig(DCGM_FE_GPU_I, gpu_instance)
    }

    /// Deletes the MIG compute instance with entity id `compute_instance`.
    ///
    #[doc = mig_privileges_doc!()]
    ///
    /// # Errors
    ///
    /// `ComputeInstanceNotFound` for an id DCGM does not know; `NvmlError` when a process
    /// runs in it; `NoPermission` without root.
    #[doc(alias = "dcgmDeleteMigEntity")]
    pub fn delete_compute_instance(&self, compute_instance: u32) -> Result<()> {
        self.delete_mig(DCGM_FE_GPU_CI, compute_instance)
    }
}
