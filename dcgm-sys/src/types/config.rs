//! Configuration: ECC, compute mode, clocks, power limits and workload power profiles.

use crate::{dcgmClockSet_t, dcgmGpuGrp_t};

/// The C enum behind [`dcgmConfigType_t`].
pub type dcgmConfigType_enum = u32;
/// Which configuration `dcgmConfigGet` returns.
pub type dcgmConfigType_t = dcgmConfigType_enum;
/// The configuration DCGM was asked to apply.
pub const DCGM_CONFIG_TARGET_STATE: dcgmConfigType_t = 0;
/// The configuration the GPU has now.
pub const DCGM_CONFIG_CURRENT_STATE: dcgmConfigType_t = 1;

/// The C enum behind [`dcgmConfigPowerLimitType_t`].
pub type dcgmConfigPowerLimitType_enum = u32;
/// How a power limit applies.
pub type dcgmConfigPowerLimitType_t = dcgmConfigPowerLimitType_enum;
/// The limit applies to each GPU.
pub const DCGM_CONFIG_POWER_CAP_INDIVIDUAL: dcgmConfigPowerLimitType_t = 0;
/// The limit is a budget shared by the group.
pub const DCGM_CONFIG_POWER_BUDGET_GROUP: dcgmConfigPowerLimitType_t = 1;

/// Words in a workload power-profile bitmask.
pub const DCGM_POWER_PROFILE_ARRAY_SIZE: usize = 8;
/// Bits per word of a workload power-profile bitmask.
pub const DCGM_POWER_PROFILE_MASK_BITS_PER_ELEM: usize = 32;
/// Capacity of [`dcgmWorkloadPowerProfileProfilesInfo_v1::workloadPowerProfile`].
pub const DCGM_POWER_PROFILE_MAX_NUM: usize = 255;

/// A workload power profile (the C enum is anonymous).
pub type dcgmPowerProfileType_t = u32;
/// Maximum performance.
pub const DCGM_POWER_PROFILE_MAX_P: dcgmPowerProfileType_t = 0;
/// Maximum performance per watt.
pub const DCGM_POWER_PROFILE_MAX_Q: dcgmPowerProfileType_t = 1;
/// Compute-heavy work.
pub const DCGM_POWER_PROFILE_COMPUTE: dcgmPowerProfileType_t = 2;
/// Memory-bound work.
pub const DCGM_POWER_PROFILE_MEMORY_BOUND: dcgmPowerProfileType_t = 3;
/// Network-bound work.
pub const DCGM_POWER_PROFILE_NETWORK: dcgmPowerProfileType_t = 4;
/// Balanced.
pub const DCGM_POWER_PROFILE_BALANCED: dcgmPowerProfileType_t = 5;
/// LLM inference.
pub const DCGM_POWER_PROFILE_LLM_INFERENCE: dcgmPowerProfileType_t = 6;
/// LLM training.
pub const DCGM_POWER_PROFILE_LLM_TRAINING: dcgmPowerProfileType_t = 7;
/// RBM.
pub const DCGM_POWER_PROFILE_RBM: dcgmPowerProfileType_t = 8;
/// DCPCIe.
pub const DCGM_POWER_PROFILE_DCPCIE: dcgmPowerProfileType_t = 9;
/// Sparse HMMA.
pub const DCGM_POWER_PROFILE_HMMA_SPARSE: dcgmPowerProfileType_t = 10;
/// Dense HMMA.
pub const DCGM_POWER_PROFILE_HMMA_DENSE: dcgmPowerProfileType_t = 11;
/// Synchronised balanced.
pub const DCGM_POWER_PROFILE_SYNC_BALANCED: dcgmPowerProfileType_t = 12;
/// HPC.
pub const DCGM_POWER_PROFILE_HPC: dcgmPowerProfileType_t = 13;
/// MIG.
pub const DCGM_POWER_PROFILE_MIG: dcgmPowerProfileType_t = 14;
/// Number of profiles.
pub const DCGM_POWER_PROFILE_MAX: dcgmPowerProfileType_t = 15;

/// One workload power profile a GPU offers.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmWorkloadPowerProfileInfo_v1 {
    pub version: u32,
    pub profileId: dcgmPowerProfileType_t,
    /// The profile's priority.
    pub priority: u32,
    /// Profiles that cannot be combined with this one.
    pub conflictingMask: [u32; 8],
}
crate::versioned_struct!(
    dcgmWorkloadPowerProfileInfo_v1,
    dcgmWorkloadPowerProfileInfo_version1 = 1,
    size = 44,
    word = 0x0100_002C
);
/// Current version of the power-profile info.
pub type dcgmWorkloadPowerProfileInfo_t = dcgmWorkloadPowerProfileInfo_v1;
/// Current version word of [`dcgmWorkloadPowerProfileInfo_t`].
pub const dcgmWorkloadPowerProfileInfo_version: u32 = dcgmWorkloadPowerProfileInfo_version1;

/// The workload power profiles a GPU offers (first output of
/// `dcgmGetDeviceWorkloadPowerProfileInfo`).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmWorkloadPowerProfileProfilesInfo_v1 {
    pub version: u32,
    pub workloadPowerProfile: [dcgmWorkloadPowerProfileInfo_v1; 255],
    /// Number of valid entries of `workloadPowerProfile`.
    pub profileCount: u32,
}
crate::versioned_struct!(
    dcgmWorkloadPowerProfileProfilesInfo_v1,
    dcgmWorkloadPowerProfileProfilesInfo_version1 = 1,
    size = 11228,
    word = 0x0100_2BDC
);
/// Current version of the power-profile list.
pub type dcgmWorkloadPowerProfileProfilesInfo_t = dcgmWorkloadPowerProfileProfilesInfo_v1;
/// Current version word of [`dcgmWorkloadPowerProfileProfilesInfo_t`].
pub const dcgmWorkloadPowerProfileProfilesInfo_version: u32 =
    dcgmWorkloadPowerProfileProfilesInfo_version1;

/// Which workload power profiles a GPU has, was asked for and enforces (second output of
/// `dcgmGetDeviceWorkloadPowerProfileInfo`).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceWorkloadPowerProfilesStatus_v1 {
    pub version: u32,
    /// Profiles the GPU supports.
    pub profileMask: [u32; 8],
    /// Profiles requested.
    pub requestedProfileMask: [u32; 8],
    /// Profiles in force.
    pub enforcedProfileMask: [u32; 8],
}
crate::versioned_struct!(
    dcgmDeviceWorkloadPowerProfilesStatus_v1,
    dcgmDeviceWorkloadPowerProfilesStatus_version1 = 1,
    size = 100,
    word = 0x0100_0064
);
/// Current version of the power-profile status.
pub type dcgmDeviceWorkloadPowerProfilesStatus_t = dcgmDeviceWorkloadPowerProfilesStatus_v1;
/// Current version word of [`dcgmDeviceWorkloadPowerProfilesStatus_t`].
pub const dcgmDeviceWorkloadPowerProfilesStatus_version: u32 =
    dcgmDeviceWorkloadPowerProfilesStatus_version1;

/// Performance settings of a configuration.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmConfigPerfStateSettings_t {
    /// Sync boost on (1) or off (0).
    pub syncBoost: u32,
    /// Application clocks.
    pub targetClocks: dcgmClockSet_t,
}
crate::plain_struct!(dcgmConfigPerfStateSettings_t, size = 16, align = 4);

/// A power limit of a configuration.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmConfigPowerLimit_t {
    pub type_: dcgmConfigPowerLimitType_t,
    /// The limit, in watts.
    pub val: u32,
}
crate::plain_struct!(dcgmConfigPowerLimit_t, size = 8, align = 4);

/// A GPU configuration, version 1. Members set to a `*_BLANK` value are left unchanged.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmConfig_v1 {
    pub version: u32,
    pub gpuId: u32,
    /// ECC on (1) or off (0).
    pub eccMode: u32,
    /// A `DCGM_CONFIG_COMPUTEMODE_*` value.
    pub computeMode: u32,
    pub perfState: dcgmConfigPerfStateSettings_t,
    pub powerLimit: dcgmConfigPowerLimit_t,
}
crate::versioned_struct!(
    dcgmConfig_v1,
    dcgmConfig_version1 = 1,
    size = 40,
    word = 0x0100_0028
);

/// A GPU configuration (`dcgmConfigSet`/`dcgmConfigGet`). Members set to a `*_BLANK` value
/// are left unchanged.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmConfig_v2 {
    pub version: u32,
    pub gpuId: u32,
    /// ECC on (1) or off (0).
    pub eccMode: u32,
    /// A `DCGM_CONFIG_COMPUTEMODE_*` value.
    pub computeMode: u32,
    pub perfState: dcgmConfigPerfStateSettings_t,
    pub powerLimit: dcgmConfigPowerLimit_t,
    /// Workload power-profile bitmask.
    pub workloadPowerProfiles: [u32; 8],
}
crate::versioned_struct!(
    dcgmConfig_v2,
    dcgmConfig_version2 = 2,
    size = 72,
    word = 0x0200_0048
);
/// Current version of the configuration.
pub type dcgmConfig_t = dcgmConfig_v2;
/// Current version word of [`dcgmConfig_t`].
pub const dcgmConfig_version: u32 = dcgmConfig_version2;

/// What `dcgmConfigSetWorkloadPowerProfile` does with the mask (the C enum is anonymous).
pub type dcgmWorkloadProfileAction_t = u32;
/// Add the profiles in the mask.
pub const DCGM_WORKLOAD_PROFILE_ACTION_SET: dcgmWorkloadProfileAction_t = 0;
/// Replace the requested profiles by the mask.
pub const DCGM_WORKLOAD_PROFILE_ACTION_SET_AND_OVERWRITE: dcgmWorkloadProfileAction_t = 1;
/// Remove the profiles in the mask.
pub const DCGM_WORKLOAD_PROFILE_ACTION_CLEAR: dcgmWorkloadProfileAction_t = 2;

/// Input of `dcgmConfigSetWorkloadPowerProfile`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmWorkloadPowerProfile_v1 {
    pub version: u32,
    pub groupId: dcgmGpuGrp_t,
    pub action: dcgmWorkloadProfileAction_t,
    /// Bit `p % 32` of word `p / 32` for profile `p`.
    pub profileMask: [u32; 8],
}
crate::versioned_struct!(
    dcgmWorkloadPowerProfile_v1,
    dcgmWorkloadPowerProfile_version1 = 1,
    size = 56,
    word = 0x0100_0038
);
/// Current version of the power-profile request.
pub type dcgmWorkloadPowerProfile_t = dcgmWorkloadPowerProfile_v1;
/// Current version word of [`dcgmWorkloadPowerProfile_t`].
pub const dcgmWorkloadPowerProfile_version: u32 = dcgmWorkloadPowerProfile_version1;
