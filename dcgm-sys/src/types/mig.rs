//! MIG: profiles, the GPU/compute-instance hierarchy and the instance attribute blobs.

use std::ffi::c_char;

use crate::dcgmGroupEntityPair_t;

/// A MIG slice profile (the C enum is anonymous).
pub type dcgmMigProfile_t = u32;
/// No profile.
pub const DcgmMigProfileNone: dcgmMigProfile_t = 0;
/// GPU instance of 1 slice.
pub const DcgmMigProfileGpuInstanceSlice1: dcgmMigProfile_t = 1;
/// GPU instance of 2 slices.
pub const DcgmMigProfileGpuInstanceSlice2: dcgmMigProfile_t = 2;
/// GPU instance of 3 slices.
pub const DcgmMigProfileGpuInstanceSlice3: dcgmMigProfile_t = 3;
/// GPU instance of 4 slices.
pub const DcgmMigProfileGpuInstanceSlice4: dcgmMigProfile_t = 4;
/// GPU instance of 7 slices.
pub const DcgmMigProfileGpuInstanceSlice7: dcgmMigProfile_t = 5;
/// GPU instance of 8 slices.
pub const DcgmMigProfileGpuInstanceSlice8: dcgmMigProfile_t = 6;
/// GPU instance of 6 slices.
pub const DcgmMigProfileGpuInstanceSlice6: dcgmMigProfile_t = 7;
/// GPU instance of 1 slice, revision 1.
pub const DcgmMigProfileGpuInstanceSlice1Rev1: dcgmMigProfile_t = 8;
/// GPU instance of 2 slices, revision 1.
pub const DcgmMigProfileGpuInstanceSlice2Rev1: dcgmMigProfile_t = 9;
/// GPU instance of 1 slice, revision 2.
pub const DcgmMigProfileGpuInstanceSlice1Rev2: dcgmMigProfile_t = 10;
/// GPU instance of 1 slice with graphics.
pub const DcgmMigProfileGpuInstanceSlice1GFX: dcgmMigProfile_t = 11;
/// GPU instance of 2 slices with graphics.
pub const DcgmMigProfileGpuInstanceSlice2GFX: dcgmMigProfile_t = 12;
/// GPU instance of 4 slices with graphics.
pub const DcgmMigProfileGpuInstanceSlice4GFX: dcgmMigProfile_t = 13;
/// Compute instance of 1 slice.
pub const DcgmMigProfileComputeInstanceSlice1: dcgmMigProfile_t = 30;
/// Compute instance of 2 slices.
pub const DcgmMigProfileComputeInstanceSlice2: dcgmMigProfile_t = 31;
/// Compute instance of 3 slices.
pub const DcgmMigProfileComputeInstanceSlice3: dcgmMigProfile_t = 32;
/// Compute instance of 4 slices.
pub const DcgmMigProfileComputeInstanceSlice4: dcgmMigProfile_t = 33;
/// Compute instance of 7 slices.
pub const DcgmMigProfileComputeInstanceSlice7: dcgmMigProfile_t = 34;
/// Compute instance of 8 slices.
pub const DcgmMigProfileComputeInstanceSlice8: dcgmMigProfile_t = 35;
/// Compute instance of 6 slices.
pub const DcgmMigProfileComputeInstanceSlice6: dcgmMigProfile_t = 36;
/// Compute instance of 1 slice, revision 1.
pub const DcgmMigProfileComputeInstanceSlice1Rev1: dcgmMigProfile_t = 37;

/// Maximum GPU instances per GPU.
pub const DCGM_MAX_INSTANCES_PER_GPU: usize = 8;
/// Maximum compute instances per GPU.
pub const DCGM_MAX_COMPUTE_INSTANCES_PER_GPU: usize = DCGM_MAX_INSTANCES_PER_GPU;
/// Maximum GPU plus compute instances per GPU.
pub const DCGM_MAX_TOTAL_INSTANCES_PER_GPU: usize = 14;
/// Capacity of [`dcgmMigHierarchy_v2::entityList`].
pub const DCGM_MAX_HIERARCHY_INFO: usize =
    crate::DCGM_MAX_NUM_DEVICES * DCGM_MAX_TOTAL_INSTANCES_PER_GPU;
/// Maximum GPU instances per node.
pub const DCGM_MAX_INSTANCES: usize = crate::DCGM_MAX_NUM_DEVICES * DCGM_MAX_INSTANCES_PER_GPU;
/// Maximum compute instances per node.
pub const DCGM_MAX_COMPUTE_INSTANCES: usize = DCGM_MAX_INSTANCES;

/// An instance, its parent and its profile (the older hierarchy record).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMigHierarchyInfo_t {
    pub entity: dcgmGroupEntityPair_t,
    pub parent: dcgmGroupEntityPair_t,
    pub sliceProfile: dcgmMigProfile_t,
}
crate::plain_struct!(dcgmMigHierarchyInfo_t, size = 20, align = 4);

/// NVML's view of a MIG instance.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMigEntityInfo_t {
    /// UUID of the parent GPU.
    pub gpuUuid: [c_char; 128],
    pub nvmlGpuIndex: u32,
    pub nvmlInstanceId: u32,
    pub nvmlComputeInstanceId: u32,
    pub nvmlMigProfileId: u32,
    pub nvmlProfileSlices: u32,
}
crate::plain_struct!(dcgmMigEntityInfo_t, size = 148, align = 4);

/// One instance of the MIG hierarchy: the instance, its parent, and NVML's view of it.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMigHierarchyInfo_v2 {
    pub entity: dcgmGroupEntityPair_t,
    pub parent: dcgmGroupEntityPair_t,
    pub info: dcgmMigEntityInfo_t,
}
crate::plain_struct!(dcgmMigHierarchyInfo_v2, size = 164, align = 4);

/// Output of `dcgmGetGpuInstanceHierarchy`: every GPU and compute instance of the node.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMigHierarchy_v2 {
    pub version: u32,
    /// Number of valid entries of `entityList`.
    pub count: u32,
    pub entityList: [dcgmMigHierarchyInfo_v2; 448],
}
crate::versioned_struct!(
    dcgmMigHierarchy_v2,
    dcgmMigHierarchy_version2 = 2,
    size = 73480,
    word = 0x0201_1F08
);
/// Current version word of [`dcgmMigHierarchy_v2`].
pub const dcgmMigHierarchy_version: u32 = dcgmMigHierarchy_version2;

/// Resources of one MIG device.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceMigAttributesInfo_v1 {
    pub version: u32,
    pub gpuInstanceId: u32,
    pub computeInstanceId: u32,
    pub multiprocessorCount: u32,
    pub sharedCopyEngineCount: u32,
    pub sharedDecoderCount: u32,
    pub sharedEncoderCount: u32,
    pub sharedJpegCount: u32,
    pub sharedOfaCount: u32,
    pub gpuInstanceSliceCount: u32,
    pub computeInstanceSliceCount: u32,
    pub memorySizeMB: u64,
}
crate::versioned_struct!(
    dcgmDeviceMigAttributesInfo_v1,
    dcgmDeviceMigAttributesInfo_version1 = 1,
    size = 56,
    word = 0x0100_0038
);
/// Current version of the MIG device resources.
pub type dcgmDeviceMigAttributesInfo_t = dcgmDeviceMigAttributesInfo_v1;
/// Current version word of [`dcgmDeviceMigAttributesInfo_t`].
pub const dcgmDeviceMigAttributesInfo_version: u32 = dcgmDeviceMigAttributesInfo_version1;

/// MIG devices of a GPU (the blob of the MIG attributes field).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceMigAttributes_v1 {
    pub version: u32,
    pub migDevicesCount: u32,
    pub migAttributesInfo: dcgmDeviceMigAttributesInfo_v1,
}
crate::versioned_struct!(
    dcgmDeviceMigAttributes_v1,
    dcgmDeviceMigAttributes_version1 = 1,
    size = 64,
    word = 0x0100_0040
);
/// Current version of the MIG attributes.
pub type dcgmDeviceMigAttributes_t = dcgmDeviceMigAttributes_v1;
/// Current version word of [`dcgmDeviceMigAttributes_t`].
pub const dcgmDeviceMigAttributes_version: u32 = dcgmDeviceMigAttributes_version1;

/// A GPU-instance profile.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmGpuInstanceProfileInfo_v1 {
    pub version: u32,
    pub id: u32,
    pub isP2pSupported: u32,
    pub sliceCount: u32,
    pub instanceCount: u32,
    pub multiprocessorCount: u32,
    pub copyEngineCount: u32,
    pub decoderCount: u32,
    pub encoderCount: u32,
    pub jpegCount: u32,
    pub ofaCount: u32,
    pub memorySizeMB: u64,
}
crate::versioned_struct!(
    dcgmGpuInstanceProfileInfo_v1,
    dcgmGpuInstanceProfileInfo_version1 = 1,
    size = 56,
    word = 0x0100_0038
);
/// Current version of the GPU-instance profile.
pub type dcgmGpuInstanceProfileInfo_t = dcgmGpuInstanceProfileInfo_v1;
/// Current version word of [`dcgmGpuInstanceProfileInfo_t`].
pub const dcgmGpuInstanceProfileInfo_version: u32 = dcgmGpuInstanceProfileInfo_version1;

/// GPU-instance profiles of a GPU.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmGpuInstanceProfiles_v1 {
    pub version: u32,
    pub profileCount: u32,
    pub profileInfo: dcgmGpuInstanceProfileInfo_v1,
}
crate::versioned_struct!(
    dcgmGpuInstanceProfiles_v1,
    dcgmGpuInstanceProfiles_version1 = 1,
    size = 64,
    word = 0x0100_0040
);
/// Current version of the GPU-instance profile list.
pub type dcgmGpuInstanceProfiles_t = dcgmGpuInstanceProfiles_v1;
/// Current version word of [`dcgmGpuInstanceProfiles_t`].
pub const dcgmGpuInstanceProfiles_version: u32 = dcgmGpuInstanceProfiles_version1;

/// A compute-instance profile.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmComputeInstanceProfileInfo_v1 {
    pub version: u32,
    pub gpuInstanceId: u32,
    pub id: u32,
    pub sliceCount: u32,
    pub instanceCount: u32,
    pub multiprocessorCount: u32,
    pub sharedCopyEngineCount: u32,
    pub sharedDecoderCount: u32,
    pub sharedEncoderCount: u32,
    pub sharedJpegCount: u32,
    pub sharedOfaCount: u32,
}
crate::versioned_struct!(
    dcgmComputeInstanceProfileInfo_v1,
    dcgmComputeInstanceProfileInfo_version1 = 1,
    size = 44,
    word = 0x0100_002C
);
/// Current version of the compute-instance profile.
pub type dcgmComputeInstanceProfileInfo_t = dcgmComputeInstanceProfileInfo_v1;
/// Current version word of [`dcgmComputeInstanceProfileInfo_t`].
pub const dcgmComputeInstanceProfileInfo_version: u32 = dcgmComputeInstanceProfileInfo_version1;

/// Compute-instance profiles of a GPU instance.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmComputeInstanceProfiles_v1 {
    pub version: u32,
    pub profileCount: u32,
    pub profileInfo: dcgmComputeInstanceProfileInfo_v1,
}
crate::versioned_struct!(
    dcgmComputeInstanceProfiles_v1,
    dcgmComputeInstanceProfiles_version1 = 1,
    size = 52,
    word = 0x0100_0034
);
/// Current version of the compute-instance profile list.
pub type dcgmComputeInstanceProfiles_t = dcgmComputeInstanceProfiles_v1;
/// Current version word of [`dcgmComputeInstanceProfiles_t`].
pub const dcgmComputeInstanceProfiles_version: u32 = dcgmComputeInstanceProfiles_version1;
