//! GPU topology: PCIe/NVLink paths between GPUs, CPU affinity, and topology-aware GPU
//! selection.

use std::ffi::c_ulong;

/// The C enum behind [`dcgmGpuTopologyLevel_v1_t`].
pub type dcgmGpuLevel_enum = u32;
/// A path between two GPUs in the version-1 structs (NVLink 1–18 only).
pub type dcgmGpuTopologyLevel_v1_t = dcgmGpuLevel_enum;
/// A path between two GPUs: the PCIe level in the low 8 bits, one bit per NVLink above.
///
/// The `DCGM_TOPOLOGY_*` constants below all have this 64-bit type so they combine with the
/// paths of the current structs; cast them to [`dcgmGpuTopologyLevel_v1_t`] for the version-1
/// structs (only values up to [`DCGM_TOPOLOGY_NVLINK18`] occur there).
pub type dcgmGpuTopologyLevel_t = u64;

/// The path is not known.
pub const DCGM_TOPOLOGY_UNINITIALIZED: dcgmGpuTopologyLevel_t = 0x0;
/// Both GPUs are on the same board.
pub const DCGM_TOPOLOGY_BOARD: dcgmGpuTopologyLevel_t = 0x1;
/// Connected through one PCIe switch.
pub const DCGM_TOPOLOGY_SINGLE: dcgmGpuTopologyLevel_t = 0x2;
/// Connected through several PCIe switches.
pub const DCGM_TOPOLOGY_MULTIPLE: dcgmGpuTopologyLevel_t = 0x4;
/// Connected through a PCIe host bridge.
pub const DCGM_TOPOLOGY_HOSTBRIDGE: dcgmGpuTopologyLevel_t = 0x8;
/// Connected through a CPU (same NUMA node).
pub const DCGM_TOPOLOGY_CPU: dcgmGpuTopologyLevel_t = 0x10;
/// Connected through the inter-CPU link (different NUMA nodes).
pub const DCGM_TOPOLOGY_SYSTEM: dcgmGpuTopologyLevel_t = 0x20;
/// Connected by 1 NVLink.
pub const DCGM_TOPOLOGY_NVLINK1: dcgmGpuTopologyLevel_t = 0x100;
/// Connected by 2 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK2: dcgmGpuTopologyLevel_t = 0x200;
/// Connected by 3 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK3: dcgmGpuTopologyLevel_t = 0x400;
/// Connected by 4 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK4: dcgmGpuTopologyLevel_t = 0x800;
/// Connected by 5 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK5: dcgmGpuTopologyLevel_t = 0x1000;
/// Connected by 6 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK6: dcgmGpuTopologyLevel_t = 0x2000;
/// Connected by 7 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK7: dcgmGpuTopologyLevel_t = 0x4000;
/// Connected by 8 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK8: dcgmGpuTopologyLevel_t = 0x8000;
/// Connected by 9 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK9: dcgmGpuTopologyLevel_t = 0x10000;
/// Connected by 10 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK10: dcgmGpuTopologyLevel_t = 0x20000;
/// Connected by 11 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK11: dcgmGpuTopologyLevel_t = 0x40000;
/// Connected by 12 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK12: dcgmGpuTopologyLevel_t = 0x80000;
/// Connected by 13 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK13: dcgmGpuTopologyLevel_t = 0x100000;
/// Connected by 14 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK14: dcgmGpuTopologyLevel_t = 0x200000;
/// Connected by 15 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK15: dcgmGpuTopologyLevel_t = 0x400000;
/// Connected by 16 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK16: dcgmGpuTopologyLevel_t = 0x800000;
/// Connected by 17 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK17: dcgmGpuTopologyLevel_t = 0x1000000;
/// Connected by 18 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK18: dcgmGpuTopologyLevel_t = 0x2000000;
/// Connected by 19 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK19: dcgmGpuTopologyLevel_t = 0x4000000;
/// Connected by 20 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK20: dcgmGpuTopologyLevel_t = 0x8000000;
/// Connected by 21 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK21: dcgmGpuTopologyLevel_t = 0x10000000;
/// Connected by 22 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK22: dcgmGpuTopologyLevel_t = 0x20000000;
/// Connected by 23 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK23: dcgmGpuTopologyLevel_t = 0x40000000;
/// Connected by 24 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK24: dcgmGpuTopologyLevel_t = 0x80000000;
/// Connected by 25 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK25: dcgmGpuTopologyLevel_t = 0x100000000;
/// Connected by 26 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK26: dcgmGpuTopologyLevel_t = 0x200000000;
/// Connected by 27 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK27: dcgmGpuTopologyLevel_t = 0x400000000;
/// Connected by 28 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK28: dcgmGpuTopologyLevel_t = 0x800000000;
/// Connected by 29 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK29: dcgmGpuTopologyLevel_t = 0x1000000000;
/// Connected by 30 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK30: dcgmGpuTopologyLevel_t = 0x2000000000;
/// Connected by 31 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK31: dcgmGpuTopologyLevel_t = 0x4000000000;
/// Connected by 32 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK32: dcgmGpuTopologyLevel_t = 0x8000000000;
/// Connected by 33 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK33: dcgmGpuTopologyLevel_t = 0x10000000000;
/// Connected by 34 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK34: dcgmGpuTopologyLevel_t = 0x20000000000;
/// Connected by 35 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK35: dcgmGpuTopologyLevel_t = 0x40000000000;
/// Connected by 36 NVLinks.
pub const DCGM_TOPOLOGY_NVLINK36: dcgmGpuTopologyLevel_t = 0x80000000000;

/// The PCIe part of a path (its low 8 bits).
pub const fn DCGM_TOPOLOGY_PATH_PCI(x: dcgmGpuTopologyLevel_t) -> dcgmGpuTopologyLevel_t {
    x & 0xFF
}
/// The NVLink part of a path (all bits above the low 8).
pub const fn DCGM_TOPOLOGY_PATH_NVLINK(x: dcgmGpuTopologyLevel_t) -> dcgmGpuTopologyLevel_t {
    x & 0xFFFF_FFFF_FFFF_FF00
}

/// Number of `unsigned long` words in a CPU affinity mask.
pub const DCGM_AFFINITY_BITMASK_ARRAY_SIZE: usize = 8;

/// The path from one GPU to one peer, version 1 (anonymous in C).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceTopology_v1__bindgen_ty_1 {
    pub gpuId: u32,
    pub path: dcgmGpuTopologyLevel_v1_t,
    /// Bit `n` set: local NVLink `n` leads to this peer.
    pub localNvLinkIds: u32,
}
crate::plain_struct!(dcgmDeviceTopology_v1__bindgen_ty_1, size = 12, align = 4);

/// A GPU's CPU affinity and its paths to every other GPU, version 1.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceTopology_v1 {
    pub version: u32,
    /// CPUs close to the GPU, one bit per CPU.
    pub cpuAffinityMask: [c_ulong; 8],
    /// Number of valid entries of `gpuPaths`.
    pub numGpus: u32,
    pub gpuPaths: [dcgmDeviceTopology_v1__bindgen_ty_1; 31],
}
crate::versioned_struct!(
    dcgmDeviceTopology_v1,
    dcgmDeviceTopology_version1 = 1,
    size = 448,
    word = 0x0100_01C0
);

/// The path from one GPU to one peer, version 2 (anonymous in C).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceTopology_v2__bindgen_ty_1 {
    pub gpuId: u32,
    pub path: dcgmGpuTopologyLevel_t,
    /// Bit `n` set: local NVLink `n` leads to this peer.
    pub localNvLinkIds: u64,
}
crate::plain_struct!(dcgmDeviceTopology_v2__bindgen_ty_1, size = 24, align = 8);

/// Output of `dcgmGetDeviceTopology`: a GPU's CPU affinity and its paths to every other GPU.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceTopology_v2 {
    pub version: u32,
    /// CPUs close to the GPU, one bit per CPU.
    pub cpuAffinityMask: [c_ulong; 8],
    /// Number of valid entries of `gpuPaths`.
    pub numGpus: u32,
    pub gpuPaths: [dcgmDeviceTopology_v2__bindgen_ty_1; 31],
}
crate::versioned_struct!(
    dcgmDeviceTopology_v2,
    dcgmDeviceTopology_version2 = 2,
    size = 824,
    word = 0x0200_0338
);
/// Current version of the device topology.
pub type dcgmDeviceTopology_t = dcgmDeviceTopology_v2;
/// Current version word of [`dcgmDeviceTopology_t`].
pub const dcgmDeviceTopology_version: u32 = dcgmDeviceTopology_version2;

/// A group's common CPU affinity and its slowest GPU-to-GPU path, version 1.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmGroupTopology_v1 {
    pub version: u32,
    /// CPUs close to every GPU of the group.
    pub groupCpuAffinityMask: [c_ulong; 8],
    /// 1 if every GPU of the group is on the same NUMA node.
    pub numaOptimalFlag: u32,
    pub slowestPath: dcgmGpuTopologyLevel_v1_t,
}
crate::versioned_struct!(
    dcgmGroupTopology_v1,
    dcgmGroupTopology_version1 = 1,
    size = 80,
    word = 0x0100_0050
);

/// Output of `dcgmGetGroupTopology`: a group's common CPU affinity and its slowest path.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmGroupTopology_v2 {
    pub version: u32,
    /// CPUs close to every GPU of the group.
    pub groupCpuAffinityMask: [c_ulong; 8],
    /// 1 if every GPU of the group is on the same NUMA node.
    pub numaOptimalFlag: u32,
    pub slowestPath: dcgmGpuTopologyLevel_t,
}
crate::versioned_struct!(
    dcgmGroupTopology_v2,
    dcgmGroupTopology_version2 = 2,
    size = 88,
    word = 0x0200_0058
);
/// Current version of the group topology.
pub type dcgmGroupTopology_t = dcgmGroupTopology_v2;
/// Current version word of [`dcgmGroupTopology_t`].
pub const dcgmGroupTopology_version: u32 = dcgmGroupTopology_version2;

/// `dcgmSelectGpusByTopology` hint: none.
pub const DCGM_TOPO_HINT_F_NONE: u64 = 0x0;
/// `dcgmSelectGpusByTopology` hint: also pick unhealthy GPUs.
pub const DCGM_TOPO_HINT_F_IGNOREHEALTH: u64 = 0x1;

/// The arguments of a topology-aware GPU selection, as a message.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmTopoSchedHint_v1 {
    pub version: u32,
    /// Candidate GPUs, one bit per GPU id.
    pub inputGpuIds: u64,
    /// How many GPUs to pick.
    pub numGpus: u32,
    /// `DCGM_TOPO_HINT_F_*` bits.
    pub hintFlags: u64,
}
crate::versioned_struct!(
    dcgmTopoSchedHint_v1,
    dcgmTopoSchedHint_version1 = 1,
    size = 32,
    word = 0x0100_0020
);
/// Current version of the selection hint.
pub type dcgmTopoSchedHint_t = dcgmTopoSchedHint_v1;
