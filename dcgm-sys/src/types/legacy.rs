//! Structures that DCGM 4.6's own Python bindings still define although the 4.6 C API no
//! longer takes them: the pre-v3 device attributes, the vGPU device and instance attributes,
//! the vGPU configuration, NVLink status version 2 and the policy module's power update.
//! They are here so that a binding mirroring NVIDIA's can take their layout from this crate;
//! the sizes and version words are those of NVIDIA's 4.6 ctypes classes. The vGPU attributes
//! (version 7) and the vGPU configuration are also what the vGPU functions of DCGM's test
//! header take (`dcgmGetVgpuDeviceAttributes`, `dcgmVgpuConfigSet`, ...), which libdcgm 4.6
//! still exports.

use std::ffi::c_char;

use crate::{
    dcgm_field_eid_t, dcgmConfigPerfStateSettings_t, dcgmConfigPowerLimit_t,
    dcgmDeviceIdentifiers_v1, dcgmDeviceMemoryUsage_v1, dcgmDevicePowerLimits_v1,
    dcgmDeviceSupportedClockSets_v1, dcgmDeviceThermals_v1, dcgmDeviceVgpuTypeInfo_v1,
    dcgmDeviceVgpuTypeInfo_v2, dcgmDeviceVgpuUtilInfo_v1, dcgmNvLinkGpuLinkStatus_v2,
    dcgmNvLinkLinkState_t,
};

/// Device attributes before `dcgmDeviceAttributes_v3` (no device settings; padded).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceAttributes_deprecated_v1 {
    pub version: u32,
    pub clockSets: dcgmDeviceSupportedClockSets_v1,
    pub thermalSettings: dcgmDeviceThermals_v1,
    pub powerLimits: dcgmDevicePowerLimits_v1,
    pub identifiers: dcgmDeviceIdentifiers_v1,
    pub memoryUsage: dcgmDeviceMemoryUsage_v1,
    pub unused: [c_char; 208],
}
crate::versioned_struct!(
    dcgmDeviceAttributes_deprecated_v1,
    dcgmDeviceAttributes_deprecated_version1 = 1,
    size = 5412,
    word = 0x0100_1524
);

/// vGPU attributes of a physical GPU, with version-1 vGPU type records. Its version word
/// carries version number 1, as DCGM's bindings define it.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmVgpuDeviceAttributes_v6 {
    pub version: u32,
    /// Number of valid entries of `activeVgpuInstanceIds`.
    pub activeVgpuInstanceCount: u32,
    pub activeVgpuInstanceIds: [u32; 32],
    /// Number of valid entries of `creatableVgpuTypeIds`.
    pub creatableVgpuTypeCount: u32,
    pub creatableVgpuTypeIds: [u32; 32],
    /// Number of valid entries of `supportedVgpuTypeInfo`.
    pub supportedVgpuTypeCount: u32,
    pub supportedVgpuTypeInfo: [dcgmDeviceVgpuTypeInfo_v1; 32],
    pub vgpuUtilInfo: [dcgmDeviceVgpuUtilInfo_v1; 32],
    /// GPU utilisation, in percent.
    pub gpuUtil: u32,
    /// Memory-copy utilisation, in percent.
    pub memCopyUtil: u32,
    /// Encoder utilisation, in percent.
    pub encUtil: u32,
    /// Decoder utilisation, in percent.
    pub decUtil: u32,
}
crate::versioned_struct!(
    dcgmVgpuDeviceAttributes_v6,
    dcgmVgpuDeviceAttributes_version6 = 1,
    size = 10528,
    word = 0x0100_2920
);

/// vGPU attributes of a physical GPU, with version-2 vGPU type records.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmVgpuDeviceAttributes_v7 {
    pub version: u32,
    /// Number of valid entries of `activeVgpuInstanceIds`.
    pub activeVgpuInstanceCount: u32,
    pub activeVgpuInstanceIds: [u32; 32],
    /// Number of valid entries of `creatableVgpuTypeIds`.
    pub creatableVgpuTypeCount: u32,
    pub creatableVgpuTypeIds: [u32; 32],
    /// Number of valid entries of `supportedVgpuTypeInfo`.
    pub supportedVgpuTypeCount: u32,
    pub supportedVgpuTypeInfo: [dcgmDeviceVgpuTypeInfo_v2; 32],
    pub vgpuUtilInfo: [dcgmDeviceVgpuUtilInfo_v1; 32],
    /// GPU utilisation, in percent.
    pub gpuUtil: u32,
    /// Memory-copy utilisation, in percent.
    pub memCopyUtil: u32,
    /// Encoder utilisation, in percent.
    pub encUtil: u32,
    /// Decoder utilisation, in percent.
    pub decUtil: u32,
}
crate::versioned_struct!(
    dcgmVgpuDeviceAttributes_v7,
    dcgmVgpuDeviceAttributes_version7 = 7,
    size = 10656,
    word = 0x0700_29A0
);

/// Attributes of one vGPU instance.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmVgpuInstanceAttributes_v1 {
    pub version: u32,
    pub vmId: [c_char; 80],
    pub vmName: [c_char; 80],
    pub vgpuTypeId: u32,
    pub vgpuUuid: [c_char; 80],
    pub vgpuDriverVersion: [c_char; 80],
    /// Framebuffer in use, in MB.
    pub fbUsage: u32,
    pub licenseStatus: u32,
    pub frameRateLimit: u32,
}
crate::versioned_struct!(
    dcgmVgpuInstanceAttributes_v1,
    dcgmVgpuInstanceAttributes_version1 = 1,
    size = 340,
    word = 0x0100_0154
);

/// Configuration of a vGPU: `dcgmConfig_v1` under its vGPU name.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceVgpuConfig_v1 {
    pub version: u32,
    pub gpuId: u32,
    /// ECC on (1) or off (0).
    pub mEccMode: u32,
    /// A `DCGM_CONFIG_COMPUTEMODE_*` value.
    pub mComputeMode: u32,
    pub mPerfState: dcgmConfigPerfStateSettings_t,
    pub mPowerLimit: dcgmConfigPowerLimit_t,
}
crate::versioned_struct!(
    dcgmDeviceVgpuConfig_v1,
    dcgmDeviceVgpuConfig_version1 = 1,
    size = 40,
    word = 0x0100_0028
);

/// Link states of one NvSwitch with up to 36 links (NVLink status version 2).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkNvSwitchLinkStatus_v1 {
    pub entityId: dcgm_field_eid_t,
    pub linkState: [dcgmNvLinkLinkState_t; 36],
}
crate::plain_struct!(dcgmNvLinkNvSwitchLinkStatus_v1, size = 148, align = 4);

/// NVLink states of every GPU (12 links each) and NvSwitch (36 links each), version 2.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkStatus_v2 {
    pub version: u32,
    /// Number of valid entries of `gpus`.
    pub numGpus: u32,
    pub gpus: [dcgmNvLinkGpuLinkStatus_v2; 32],
    /// Number of valid entries of `nvSwitches`.
    pub numNvSwitches: u32,
    pub nvSwitches: [dcgmNvLinkNvSwitchLinkStatus_v1; 12],
}
crate::versioned_struct!(
    dcgmNvLinkStatus_v2,
    dcgmNvLinkStatus_version2 = 2,
    size = 3452,
    word = 0x0200_0D7C
);

/// The policy module's power-threshold update.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPolicyUpdate_v1 {
    pub version: u32,
    /// Power threshold, in watts.
    pub power: u32,
}
crate::versioned_struct!(
    dcgmPolicyUpdate_v1,
    dcgmPolicyUpdate_version1 = 1,
    size = 8,
    word = 0x0100_0008
);
