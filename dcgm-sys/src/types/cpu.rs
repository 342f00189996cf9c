//! CPU hierarchy: CPU nodes and the cores each owns.

use std::ffi::c_char;

/// Number of 64-bit words in a core bitmask (1024 cores).
pub const DCGM_CPU_CORE_BITMASK_COUNT_V1: usize = crate::DCGM_MAX_NUM_CPU_CORES / 64;

/// Bitmask of the cores a CPU owns: bit `n % 64` of word `n / 64` for core `n`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmCpuHierarchyOwnedCores_v1 {
    pub version: u32,
    pub bitmask: [u64; 16],
}
crate::versioned_struct!(
    dcgmCpuHierarchyOwnedCores_v1,
    dcgmCpuHierarchyOwnedCores_version1 = 1,
    size = 136,
    word = 0x0100_0088
);
/// Current version of the owned-cores bitmask.
pub type dcgmCpuHierarchyOwnedCores_t = dcgmCpuHierarchyOwnedCores_v1;

/// One CPU of [`dcgmCpuHierarchy_v1`] (a named struct nested in the C declaration).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmCpuHierarchyCpu_v1 {
    pub cpuId: u32,
    pub ownedCores: dcgmCpuHierarchyOwnedCores_v1,
}
crate::plain_struct!(dcgmCpuHierarchyCpu_v1, size = 144, align = 8);
/// The name bindgen gives [`dcgmCpuHierarchyCpu_v1`] when it reads the header as C++.
pub type dcgmCpuHierarchy_v1_dcgmCpuHierarchyCpu_v1 = dcgmCpuHierarchyCpu_v1;

/// Output of `dcgmGetCpuHierarchy`: the CPUs of the node, version 1.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmCpuHierarchy_v1 {
    pub version: u32,
    /// Number of valid entries of `cpus`.
    pub numCpus: u32,
    pub cpus: [dcgmCpuHierarchyCpu_v1; 8],
}
crate::versioned_struct!(
    dcgmCpuHierarchy_v1,
    dcgmCpuHierarchy_version1 = 1,
    size = 1160,
    word = 0x0100_0488
);

/// One CPU of [`dcgmCpuHierarchy_v2`] (a named struct nested in the C declaration).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmCpuHierarchyCpu_v2 {
    pub cpuId: u32,
    pub ownedCores: dcgmCpuHierarchyOwnedCores_v1,
    pub serial: [c_char; 256],
}
crate::plain_struct!(dcgmCpuHierarchyCpu_v2, size = 400, align = 8);
/// The name bindgen gives [`dcgmCpuHierarchyCpu_v2`] when it reads the header as C++.
pub type dcgmCpuHierarchy_v2_dcgmCpuHierarchyCpu_v2 = dcgmCpuHierarchyCpu_v2;

/// Output of `dcgmGetCpuHierarchy_v2`: the CPUs of the node with their serial numbers.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmCpuHierarchy_v2 {
    pub version: u32,
    /// Number of valid entries of `cpus`.
    pub numCpus: u32,
    pub cpus: [dcgmCpuHierarchyCpu_v2; 8],
}
crate::versioned_struct!(
    dcgmCpuHierarchy_v2,
    dcgmCpuHierarchy_version2 = 2,
    size = 3208,
    word = 0x0200_0C88
);
/// Current version of the CPU hierarchy.
pub type dcgmCpuHierarchy_t = dcgmCpuHierarchy_v2;
/// Current version word of [`dcgmCpuHierarchy_t`].
pub const dcgmCpuHierarchy_version: u32 = dcgmCpuHierarchy_version2;
