//! Structs of DCGM's test API (`dcgm_test_apis.h`, `dcgm_test_structs.h` and the internal
//! structs header): fake entities, the cache-manager view of a field, forced NVLink states and
//! MIG instance creation, and the NVML-injection values. Layouts are those of DCGM 4.6 on LP64.

use std::ffi::c_char;

use crate::{dcgm_field_eid_t, dcgm_field_entity_group_t, dcgmMigHierarchyInfo_t};

/// Input and output of `dcgmCreateFakeEntities`: the entities to create, each with its parent;
/// the library writes the new ids into `entityList[i].entity.entityId`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmCreateFakeEntities_v2 {
    pub version: u32,
    /// Number of valid entries of `entityList`.
    pub numToCreate: u32,
    /// Set `entity.entityGroupId` and `parent` (for instances); `entity.entityId` and
    /// `sliceProfile` are ignored by the library.
    pub entityList: [dcgmMigHierarchyInfo_t; crate::DCGM_MAX_HIERARCHY_INFO],
}
crate::versioned_struct!(
    dcgmCreateFakeEntities_v2,
    dcgmCreateFakeEntities_version2 = 2,
    size = 8968,
    word = 0x0200_2308
);
/// Current version of the fake-entity request.
pub type dcgmCreateFakeEntities_t = dcgmCreateFakeEntities_v2;
/// Current version word of [`dcgmCreateFakeEntities_t`].
pub const dcgmCreateFakeEntities_version: u32 = dcgmCreateFakeEntities_version2;

/// Who watches a field (the C enum `DcgmWatcherType_t`).
pub type DcgmWatcherType_t = u32;
/// A client of the API.
pub const DcgmWatcherTypeClient: DcgmWatcherType_t = 0;
/// The host engine itself.
pub const DcgmWatcherTypeHostEngine: DcgmWatcherType_t = 1;
/// The health module.
pub const DcgmWatcherTypeHealthWatch: DcgmWatcherType_t = 2;
/// The policy module.
pub const DcgmWatcherTypePolicyManager: DcgmWatcherType_t = 3;
/// The cache manager.
pub const DcgmWatcherTypeCacheManager: DcgmWatcherType_t = 4;
/// The configuration module.
pub const DcgmWatcherTypeConfigManager: DcgmWatcherType_t = 5;
/// The NvSwitch module.
pub const DcgmWatcherTypeNvSwitchManager: DcgmWatcherType_t = 6;

/// One watcher of a cached field.
#[repr(C)]
#[derive(Debug, Copy, Clone, Default)]
pub struct dcgm_cm_field_info_watcher_t {
    pub watcherType: DcgmWatcherType_t,
    /// Connection of the watcher; 0 for none (the embedded engine).
    pub connectionId: u32,
    pub monitorIntervalUsec: i64,
    pub maxAgeUsec: i64,
}
crate::plain_struct!(dcgm_cm_field_info_watcher_t, size = 24, align = 8);

/// Capacity of [`dcgmCacheManagerFieldInfo_v4_t::watchers`].
pub const DCGM_CM_FIELD_INFO_NUM_WATCHERS: usize = 10;
/// [`dcgmCacheManagerFieldInfo_v4_t::flags`] bit: the field is watched.
pub const DCGM_CMI_F_WATCHED: u32 = 0x1;

/// The cache manager's view of one (entity, field): set `entityGroupId`, `entityId` and
/// `fieldId`; the library fills the rest.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmCacheManagerFieldInfo_v4_t {
    pub version: u32,
    /// `DCGM_CMI_F_*` bits.
    pub flags: u32,
    pub entityId: dcgm_field_eid_t,
    pub entityGroupId: dcgm_field_entity_group_t,
    pub fieldId: u16,
    /// Status of the last sample.
    pub lastStatus: i16,
    /// Oldest cached sample, µs since the epoch.
    pub oldestTimestamp: i64,
    /// Newest cached sample, µs since the epoch.
    pub newestTimestamp: i64,
    pub monitorIntervalUsec: i64,
    pub maxAgeUsec: i64,
    pub execTimeUsec: i64,
    pub fetchCount: i64,
    pub numSamples: i32,
    pub numWatchers: i32,
    pub watchers: [dcgm_cm_field_info_watcher_t; DCGM_CM_FIELD_INFO_NUM_WATCHERS],
}
crate::versioned_struct!(
    dcgmCacheManagerFieldInfo_v4_t,
    dcgmCacheManagerFieldInfo_version4 = 4,
    size = 320,
    word = 0x0400_0140
);

/// Input of `dcgmSetEntityNvLinkLinkState`: the state to report for one link.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmSetNvLinkLinkState_v1 {
    pub version: u32,
    /// `DCGM_FE_GPU` or `DCGM_FE_SWITCH`.
    pub entityGroupId: dcgm_field_entity_group_t,
    pub entityId: dcgm_field_eid_t,
    /// Index of the link on the entity.
    pub linkId: u32,
    /// A `DcgmNvLinkLinkState*` value.
    pub linkState: crate::dcgmNvLinkLinkState_t,
    /// Set to 0.
    pub unused: u32,
}
crate::versioned_struct!(
    dcgmSetNvLinkLinkState_v1,
    dcgmSetNvLinkLinkState_version1 = 1,
    size = 24,
    word = 0x0100_0018
);

/// What `dcgmCreateMigEntity` creates (the C enum `dcgmMigCreate_t`).
pub type dcgmMigCreate_t = u32;
/// A GPU instance.
pub const DcgmMigCreateGpuInstance: dcgmMigCreate_t = 0;
/// A compute instance.
pub const DcgmMigCreateComputeInstance: dcgmMigCreate_t = 1;
/// Flag of the MIG entity requests: do not rescan the hierarchy after the change.
pub const DCGM_MIG_RECONFIG_DELAY_PROCESSING: u32 = 0x1;

/// Input of `dcgmCreateMigEntity`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmCreateMigEntity_v1 {
    pub version: u32,
    /// The GPU (for a GPU instance) or GPU instance (for a compute instance).
    pub parentId: u32,
    /// A `dcgmMigProfile_t`.
    pub profile: crate::dcgmMigProfile_t,
    pub createOption: dcgmMigCreate_t,
    pub flags: u32,
}
crate::versioned_struct!(
    dcgmCreateMigEntity_v1,
    dcgmCreateMigEntity_version1 = 1,
    size = 20,
    word = 0x0100_0014
);
/// Current version of the MIG creation request.
pub type dcgmCreateMigEntity_t = dcgmCreateMigEntity_v1;
/// Current version word of [`dcgmCreateMigEntity_t`].
pub const dcgmCreateMigEntity_version: u32 = dcgmCreateMigEntity_version1;

/// Input of `dcgmDeleteMigEntity`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeleteMigEntity_v1 {
    pub version: u32,
    /// `DCGM_FE_GPU_I` or `DCGM_FE_GPU_CI`.
    pub entityGroupId: dcgm_field_entity_group_t,
    pub entityId: dcgm_field_eid_t,
    pub flags: u32,
}
crate::versioned_struct!(
    dcgmDeleteMigEntity_v1,
    dcgmDeleteMigEntity_version1 = 1,
    size = 16,
    word = 0x0100_0010
);
/// Current version of the MIG deletion request.
pub type dcgmDeleteMigEntity_t = dcgmDeleteMigEntity_v1;
/// Current version word of [`dcgmDeleteMigEntity_t`].
pub const dcgmDeleteMigEntity_version: u32 = dcgmDeleteMigEntity_version1;

/// Size in bytes of NVML injection's value union (`simpleValue_t`, generated from NVML's
/// types: about 440 scalar, struct and pointer members).
pub const NVML_INJECTION_SIMPLE_VALUE_SIZE: usize = 13344;
/// Most extra keys of one NVML injection.
pub const NVML_INJECTION_MAX_EXTRA_KEYS: usize = 4;
/// Most values of one injected NVML return.
pub const NVML_INJECTION_MAX_VALUES: usize = 4;
/// Most returns of `dcgmInjectNvmlDeviceForFollowingCalls`.
pub const NVML_INJECTION_MAX_RETURNS: usize = 8;
/// Capacity of a function name in [`injectNvmlFuncCallInfo_t`].
pub const NVML_MAX_FUNC_NAME_LENGTH: usize = 1024;
/// Capacity of [`injectNvmlFuncCallCounts_t::funcCallInfo`].
pub const NVML_MAX_FUNCS: usize = 1024;

/// NVML injection's value union, kept opaque: write the member `type_` names at offset 0.
#[repr(C, align(8))]
#[derive(Debug, Copy, Clone)]
pub struct simpleValue_t {
    pub bytes: [u8; NVML_INJECTION_SIMPLE_VALUE_SIZE],
}
crate::plain_struct!(simpleValue_t, size = 13344, align = 8);

/// Type of an injected NVML value (the C enum `injectionArgType_t`, of which the first
/// members are listed here).
pub type injectionArgType_t = u32;
/// A `char`.
pub const INJECTION_CHAR: injectionArgType_t = 0;
/// A `char *`.
pub const INJECTION_CHAR_PTR: injectionArgType_t = 1;
/// A `double`.
pub const INJECTION_DOUBLE: injectionArgType_t = 2;
/// A `double *`.
pub const INJECTION_DOUBLE_PTR: injectionArgType_t = 3;
/// An `int`.
pub const INJECTION_INT: injectionArgType_t = 4;
/// An `int *`.
pub const INJECTION_INT_PTR: injectionArgType_t = 5;
/// A `long`.
pub const INJECTION_LONG: injectionArgType_t = 6;
/// A `long *`.
pub const INJECTION_LONG_PTR: injectionArgType_t = 7;
/// A `long long`.
pub const INJECTION_LONG_LONG: injectionArgType_t = 8;

/// One injected NVML value (a key, an extra key, or a returned value). Not versioned.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct injectNvmlVal_t {
    pub value: simpleValue_t,
    pub type_: injectionArgType_t,
}
crate::plain_struct!(injectNvmlVal_t, size = 13352, align = 8);

/// What an injected NVML call returns: its `nvmlReturn_t` and up to four values. Not
/// versioned.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct injectNvmlRet_t {
    pub nvmlRet: u32,
    pub values: [injectNvmlVal_t; NVML_INJECTION_MAX_VALUES + 1],
    pub valueCount: u32,
}
crate::plain_struct!(injectNvmlRet_t, size = 66776, align = 8);

/// How often one NVML function was called.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct injectNvmlFuncCallInfo_t {
    pub funcName: [c_char; NVML_MAX_FUNC_NAME_LENGTH],
    pub funcCallCount: u32,
}
crate::plain_struct!(injectNvmlFuncCallInfo_t, size = 1028, align = 4);

/// Call counts of the injected NVML (about 1 MiB: allocate it on the heap). Not versioned.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct injectNvmlFuncCallCounts_t {
    pub funcCallInfo: [injectNvmlFuncCallInfo_t; NVML_MAX_FUNCS],
    pub numFuncs: u32,
}
crate::plain_struct!(injectNvmlFuncCallCounts_t, size = 1052676, align = 4);
