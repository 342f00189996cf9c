//! MIG management: the simulated driver's MIG state of each GPU (GPU instances and compute
//! instances with their profiles and placements), what `dcgmCreateMigEntity` and
//! `dcgmDeleteMigEntity` do to it, and how DCGM's view of it (the GPU_I and GPU_CI entities)
//! follows.
//!
//! Nothing here comes from a GPU whose MIG mode was changed: the behaviour is taken from
//! documentation and source, and only the answers for a GPU not in MIG mode were recorded
//! from the real libdcgm 4.6.0 (the differential battery's `mig/*` cases).
//!
//! * **Profiles** (NVIDIA's MIG user guide, "Supported MIG Profiles",
//!   <https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html>,
//!   and `nvidia-smi mig -lgip` / `-lgipp` on an H100): a Hopper GPU has 7 compute slices
//!   and 8 memory slices. The H200 141GB offers 1g.18gb (NVML profile id 19, 7 instances,
//!   placed at memory slice 0–6, size 1), 1g.18gb+me (id 20, 1 instance, same placements),
//!   1g.35gb (id 15, 4 instances, at 0, 2, 4, 6, size 2), 2g.35gb (id 14, 3 instances, at 0,
//!   2, 4, size 2), 3g.71gb (id 9, 2 instances, at 0 and 4, size 4), 4g.71gb (id 5, 1
//!   instance, at 0, size 4) and 7g.141gb (id 0, 1 instance, at 0, size 8); the H100 80GB has
//!   the same profiles named 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb and 7g.80gb. Compute
//!   instance profiles are the NVML indices 0 (1 slice), 1 (2), 2 (3), 3 (4) and 4 (7); a GPU
//!   instance of n compute slices offers those of at most n slices (a 4g instance no 3-slice
//!   one), each placed at a multiple of its size rounded up to a power of two.
//! * **Requests** (DCGM 4.6.0's `DcgmApi.cpp` `tsapiCreateMigEntity`/`tsapiDeleteMigEntity`
//!   and `DcgmCacheManager::CreateMigEntity`/`DeleteMigEntity`): the DCGM profile
//!   `DcgmMigProfileGpuInstanceSlice*` is NVML's profile index plus one
//!   (`DcgmMigProfileComputeInstanceSlice*` plus 30); an unknown GPU or GPU instance is
//!   `DCGM_ST_BADPARAM`; a deletion of an unknown instance `DCGM_ST_INSTANCE_NOT_FOUND` /
//!   `DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND`; a request on a fake instance (one
//!   `dcgmCreateFakeEntities` made, which no driver has) `DCGM_ST_NVML_NOT_LOADED`, as
//!   recorded from the real library; the rest is NVML's answer through DCGM's
//!   `NvmlReturnToDcgmReturn`: MIG mode disabled or a profile the GPU does not offer is
//!   `NVML_ERROR_NOT_SUPPORTED` → `DCGM_ST_NOT_SUPPORTED`, no free placement
//!   `NVML_ERROR_INSUFFICIENT_RESOURCES` → `DCGM_ST_INSUFFICIENT_RESOURCES`, and a GPU
//!   instance that still has compute instances (or an instance running processes)
//!   `NVML_ERROR_IN_USE`, which DCGM does not map: `DCGM_ST_NVML_ERROR`.
//! * **DCGM's view**: DCGM re-reads a GPU's whole MIG layout when NVML reports a change, and
//!   numbers it afresh (`DcgmCacheManager::InitializeGpuInstances`): GPU instances in NVML
//!   profile-index order, then NVML order, get `gpu × 7 + n` (7 is
//!   `nvmlDeviceGetMaxMigDeviceCount` on Hopper), compute instances `gpu × 7 + n` counting
//!   over the GPU. So creating an instance can renumber the others. The simulator re-reads at
//!   once where DCGM's event thread does within about a second.
//! * **`DCGM_MIG_RECONFIG_DELAY_PROCESSING`** (`dcgm_test_structs.h`): a request with this
//!   flag changes the driver state, but the host engine ignores the change events for 10 s,
//!   so that a series of requests keeps the ids it started with; the next request without
//!   the flag has the GPU re-read. The simulator keeps such a GPU's view as it was until the
//!   next request without the flag (which re-reads every GPU changed meanwhile).
//!
//! A GPU laid out by the configuration keeps the configuration's entity ids until its first
//! change; from then on it is numbered as DCGM numbers it (an id another GPU's configured
//! instance holds is skipped).

use crate::config::SimConfig;

/// `nvmlDeviceGetMaxMigDeviceCount` on Hopper: the stride of DCGM's instance ids per GPU.
pub const MAX_GPCS: u32 = 7;
/// Memory slices of a Hopper GPU.
pub const MEMORY_SLICES: u32 = 8;

/// A GPU-instance profile a Hopper GPU offers.
#[derive(Debug, Clone, Copy)]
pub struct GiProfile {
    /// NVML's profile index (`NVML_GPU_INSTANCE_PROFILE_*`): DCGM's profile minus one.
    pub index: u32,
    /// NVML's profile id (`nvidia-smi mig -lgip`), which DCGM's hierarchy reports.
    pub nvml_id: u32,
    /// Compute slices.
    pub compute: u32,
    /// Memory slices.
    pub memory: u32,
    /// First memory slice of each placement.
    pub starts: &'static [u32],
    /// Most instances of the profile on one GPU.
    pub max: u32,
    /// With media extensions (`+me`).
    pub media: bool,
}

/// The GPU-instance profiles of an H100/H200 (see the module docs for the source).
pub const GI_PROFILES: [GiProfile; 7] = [
    GiProfile {
        index: 0,
        nvml_id: 19,
        compute: 1,
        memory: 1,
        starts: &[0, 1, 2, 3, 4, 5, 6],
        max: 7,
        media: false,
    },
    GiProfile {
        index: 7,
        nvml_id: 20,
        compute: 1,
        memory: 1,
        starts: &[0, 1, 2, 3, 4, 5, 6],
        max: 1,
        media: true,
    },
    GiProfile {
        index: 9,
        nvml_id: 15,
        compute: 1,
        memory: 2,
        starts: &[0, 2, 4, 6],
        max: 4,
        media: false,
    },
    GiProfile {
        index: 1,
        nvml_id: 14,
        compute: 2,
        memory: 2,
        starts: &[0, 2, 4],
        max: 3,
        media: false,
    },
    GiProfile {
        index: 2,
        nvml_id: 9,
        compute: 3,
        memory: 4,
        starts: &[0, 4],
        max: 2,
        media: false,
    },
    GiProfile {
        index: 3,
        nvml_id: 5,
        compute: 4,
        memory: 4,
        starts: &[0],
        max: 1,
        media: false,
    },
    GiProfile {
        index: 4,
        nvml_id: 0,
        compute: 7,
        memory: 8,
        starts: &[0],
        max: 1,
        media: false,
    },
];

/// The GPU-instance profile of an NVML profile index, if a Hopper GPU offers it.
pub fn gi_profile(index: u32) -> Option<&'static GiProfile> {
    GI_PROFILES.iter().find(|p| p.index == index)
}

/// Compute slices of an NVML compute-instance profile index (0–4 on Hopper).
pub fn ci_slices(index: u32) -> Option<u32> {
    match index {
        0 => Some(1),
        1 => Some(2),
        2 => Some(3),
        3 => Some(4),
        4 => Some(7),
        _ => None,
    }
}

/// Whether a GPU instance of `gi_compute` slices offers a compute instance of `slices`.
pub(crate) fn ci_offered(gi_compute: u32, slices: u32) -> bool {
    slices <= gi_compute && !(slices == 3 && gi_compute == 4)
}

/// A profile's name: `3g.71gb`, `1g.18gb+me`. Memory sizes are NVIDIA's names for the H200
/// 141GB; other GPUs get their memory share in GB, rounded (which gives the H100 80GB's and
/// the A100 80GB's names).
pub fn profile_name(p: &GiProfile, memory_mib: i64) -> String {
    let gb = if memory_mib >= 140_000 {
        match p.memory {
            1 => 18,
            2 => 35,
            4 => 71,
            _ => 141,
        }
    } else {
        (memory_mib as f64 * f64::from(p.memory) / f64::from(MEMORY_SLICES) / 1024.0).round() as i64
    };
    let me = if p.media { "+me" } else { "" };
    format!("{}g.{gb}gb{me}", p.compute)
}

/// A compute instance in the driver.
#[derive(Debug, Clone)]
pub struct NvmlCi {
    /// NVML's compute-instance id within its GPU instance.
    pub nvml_id: u32,
    /// NVML's compute-instance profile index (= its profile id).
    pub profile: u32,
    /// First compute slice within the GPU instance.
    pub start: u32,
    /// A configured process runs in it (see [`MigState::from_config`]).
    pub busy: bool,
}

/// A GPU instance in the driver.
#[derive(Debug, Clone)]
pub struct NvmlGi {
    /// NVML's GPU-instance id.
    pub nvml_id: u32,
    /// Its profile.
    pub profile: GiProfile,
    /// First memory slice.
    pub start: u32,
    /// Its compute instances.
    pub cis: Vec<NvmlCi>,
}

/// One GPU's MIG state.
#[derive(Debug, Clone, Default)]
pub struct MigGpu {
    /// MIG mode is enabled.
    pub enabled: bool,
    /// The driver's GPU instances.
    pub gis: Vec<NvmlGi>,
    /// DCGM's view of this GPU was built by `MigInstances::refresh` (DCGM's numbering), not from the
    /// configuration.
    pub renumbered: bool,
    /// Changed in the driver since DCGM last read it (a request with the delay flag).
    pub stale: bool,
}

/// The MIG state of every GPU of the node.
#[derive(Debug, Clone, Default)]
pub struct MigState {
    pub gpus: Vec<MigGpu>,
}

impl MigState {
    /// The driver state a configuration describes: a GPU with `mig` entries (or
    /// `mig_mode = true`) is in MIG mode, each entry a GPU instance of the profile its slices
    /// name (`+me` in the name: the media-extension one; two memory slices for a one-slice
    /// name whose memory is twice the smallest), placed at the first free placement, with
    /// its compute instances splitting it evenly. The simulator does not say which instance
    /// a configured process runs in: on a GPU in MIG mode it runs in every configured compute
    /// instance (which cannot be deleted then), never in one created later.
    pub fn from_config(cfg: &SimConfig) -> Self {
        let gpus = cfg
            .gpus
            .iter()
            .enumerate()
            .map(|(gi_gpu, g)| {
                let mut gpu = MigGpu {
                    enabled: g.mig_mode || !g.mig.is_empty(),
                    ..MigGpu::default()
                };
                for (li, mi) in g.mig.iter().enumerate() {
                    let profile = config_profile(&mi.profile, mi.slices, g.memory_mib);
                    let start = free_start(&gpu, &profile).unwrap_or(0);
                    let per = (profile.compute / mi.compute_instances.max(1)).max(1);
                    let busy = cfg
                        .processes
                        .iter()
                        .any(|p| p.gpus.contains(&(gi_gpu as u32)));
                    let ci_profile = (0..5).find(|i| ci_slices(*i) == Some(per)).unwrap_or(0);
                    let cis = (0..mi.compute_instances)
                        .map(|c| NvmlCi {
                            nvml_id: c,
                            profile: ci_profile,
                            start: c * per,
                            busy,
                        })
                        .collect();
                    gpu.gis.push(NvmlGi {
                        nvml_id: li as u32 + 1,
                        profile,
                        start,
                        cis,
                    });
                }
                gpu
            })
            .collect();
        Self { gpus }
    }

    /// A GPU's state; a GPU added later (a fake one) is not in MIG mode.
    pub(crate) fn gpu_mut(&mut self, gpu: u32) -> &mut MigGpu {
        let i = gpu as usize;
        while self.gpus.len() <= i {
            self.gpus.push(MigGpu::default());
        }
        &mut self.gpus[i]
    }

    /// Whether a GPU is in MIG mode.
    pub fn enabled(&self, gpu: u32) -> bool {
        self.gpus.get(gpu as usize).is_some_and(|g| g.enabled)
    }
}

/// The profile a configured instance stands for.
pub(crate) fn config_profile(name: &str, slices: u32, memory_mib: i64) -> GiProfile {
    let same = |p: &&GiProfile| p.compute == slices.max(1);
    let candidates: Vec<&GiProfile> = GI_PROFILES.iter().filter(same).collect();
    let media = name.contains("+me");
    let wanted_mem = name.split('.').nth(1).and_then(|m| {
        m.trim_end_matches("+me")
            .trim_end_matches("gb")
            .parse::<f64>()
            .ok()
    });
    let pick = candidates
        .iter()
        .filter(|p| p.media == media)
        .min_by_key(|p| {
            let mem = profile_name(p, memory_mib);
            let gb = mem
                .split('.')
                .nth(1)
                .and_then(|m| {
                    m.trim_end_matches("+me")
                        .trim_end_matches("gb")
                        .parse::<f64>()
                        .ok()
                })
                .unwrap_or(0.0);
            (wanted_mem.map_or(0.0, |w| (w - gb).abs()) * 10.0) as i64
        })
        .or(candidates.first());
    pick.map_or(GI_PROFILES[0], |p| **p)
}

/// Memory slices `[start, start + size)` overlap one of the GPU's instances.
pub(crate) fn memory_taken(gpu: &MigGpu, start: u32, size: u32) -> bool {
    gpu.gis
        .iter()
        .any(|g| start < g.start + g.profile.memory && g.start < start + size)
}

/// The first free placement of a profile on a GPU.
pub(crate) fn free_start(gpu: &MigGpu, p: &GiProfile) -> Option<u32> {
    p.starts
        .iter()
        .copied()
        .find(|s| s + p.memory <= MEMORY_SLICES && !memory_taken(gpu, *s, p.memory))
}

/// The first free placement of a compute instance of `slices` in a GPU instance.
pub(crate) fn free_ci_start(gi: &NvmlGi, slices: u32) -> Option<u32> {
    let align = slices.next_power_of_two();
    (0..gi.profile.compute)
        .step_by(align as usize)
        .filter(|s| s + slices <= gi.profile.compute)
        .find(|s| {
            !gi.cis.iter().any(|c| {
                let size = ci_slices(c.profile).unwrap_or(1);
                *s < c.start + size && c.start < s + slices
            })
        })
}
