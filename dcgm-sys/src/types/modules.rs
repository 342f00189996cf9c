//! DCGM's loadable modules: ids, load states and the status query.

/// A DCGM module (the C enum is anonymous).
pub type dcgmModuleId_t = u32;
/// The core module (always loaded).
pub const DcgmModuleIdCore: dcgmModuleId_t = 0;
/// NvSwitch module.
pub const DcgmModuleIdNvSwitch: dcgmModuleId_t = 1;
/// vGPU module.
pub const DcgmModuleIdVGPU: dcgmModuleId_t = 2;
/// Introspection module.
pub const DcgmModuleIdIntrospect: dcgmModuleId_t = 3;
/// Health-watch module.
pub const DcgmModuleIdHealth: dcgmModuleId_t = 4;
/// Policy module.
pub const DcgmModuleIdPolicy: dcgmModuleId_t = 5;
/// Configuration module.
pub const DcgmModuleIdConfig: dcgmModuleId_t = 6;
/// Diagnostic module.
pub const DcgmModuleIdDiag: dcgmModuleId_t = 7;
/// Profiling module.
pub const DcgmModuleIdProfiling: dcgmModuleId_t = 8;
/// System (CPU) monitoring module.
pub const DcgmModuleIdSysmon: dcgmModuleId_t = 9;
/// Multi-node diagnostic module.
pub const DcgmModuleIdMnDiag: dcgmModuleId_t = 10;
/// Number of module ids.
pub const DcgmModuleIdCount: dcgmModuleId_t = 11;

/// Deny-list capacity of `dcgmStartEmbeddedV2Params_v1`/`_v2`.
pub const DCGM_MODULE_ID_COUNT_V1: usize = 10;
/// Deny-list capacity of `dcgmStartEmbeddedV2Params_v3`.
pub const DCGM_MODULE_ID_COUNT_V2: usize = 16;

/// Load state of a module (the C enum is anonymous).
pub type dcgmModuleStatus_t = u32;
/// Not loaded yet.
pub const DcgmModuleStatusNotLoaded: dcgmModuleStatus_t = 0;
/// On the deny list; will not be loaded.
pub const DcgmModuleStatusDenylisted: dcgmModuleStatus_t = 1;
/// Loading failed.
pub const DcgmModuleStatusFailed: dcgmModuleStatus_t = 2;
/// Loaded.
pub const DcgmModuleStatusLoaded: dcgmModuleStatus_t = 3;
/// Unloaded.
pub const DcgmModuleStatusUnloaded: dcgmModuleStatus_t = 4;
/// Loaded but paused.
pub const DcgmModuleStatusPaused: dcgmModuleStatus_t = 5;
/// Loaded and allowed to be unloaded and reloaded.
pub const DcgmModuleStatusReloadable: dcgmModuleStatus_t = 6;

/// One module and its state.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmModuleGetStatusesModule_t {
    pub id: dcgmModuleId_t,
    pub status: dcgmModuleStatus_t,
}
crate::plain_struct!(dcgmModuleGetStatusesModule_t, size = 8, align = 4);

/// Capacity of [`dcgmModuleGetStatuses_v1::statuses`].
pub const DCGM_MODULE_STATUSES_CAPACITY: usize = 16;

/// Output of `dcgmModuleGetStatuses`: the state of every module.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmModuleGetStatuses_v1 {
    pub version: u32,
    /// Number of valid entries of `statuses`.
    pub numStatuses: u32,
    pub statuses: [dcgmModuleGetStatusesModule_t; 16],
}
crate::versioned_struct!(
    dcgmModuleGetStatuses_v1,
    dcgmModuleGetStatuses_version1 = 1,
    size = 136,
    word = 0x0100_0088
);
/// Current version of the module-status struct.
pub type dcgmModuleGetStatuses_t = dcgmModuleGetStatuses_v1;
/// Current version word of [`dcgmModuleGetStatuses_t`].
pub const dcgmModuleGetStatuses_version: u32 = dcgmModuleGetStatuses_version1;

/// Input of `dcgmMarkModulesReloadable`: which modules may be unloaded and reloaded.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmModulesReloadable_v1 {
    pub version: u32,
    /// Bit `1 << moduleId` per module.
    pub moduleMask: u32,
}
crate::versioned_struct!(
    dcgmModulesReloadable_v1,
    dcgmModulesReloadable_version1 = 1,
    size = 8,
    word = 0x0100_0008
);
/// Current version of the reloadable-modules struct.
pub type dcgmModulesReloadable_t = dcgmModulesReloadable_v1;
/// Current version word of [`dcgmModulesReloadable_t`].
pub const dcgmModulesReloadable_version: u32 = dcgmModulesReloadable_version1;
