//! Health watches: the watched subsystems, incident reports and the watch parameters.

use std::ffi::c_char;

use crate::{DCGM_GROUP_MAX_ENTITIES_V2, dcgmGpuGrp_t, dcgmGroupEntityPair_t};

/// The C enum behind [`dcgmHealthSystems_t`].
pub type dcgmHealthSystems_enum = u32;
/// Bitmask of the subsystems a health watch covers.
pub type dcgmHealthSystems_t = dcgmHealthSystems_enum;
/// PCIe (needs a minute of samples before a check).
pub const DCGM_HEALTH_WATCH_PCIE: dcgmHealthSystems_t = 0x1;
/// NVLink.
pub const DCGM_HEALTH_WATCH_NVLINK: dcgmHealthSystems_t = 0x2;
/// Power management unit.
pub const DCGM_HEALTH_WATCH_PMU: dcgmHealthSystems_t = 0x4;
/// Micro-controller unit.
pub const DCGM_HEALTH_WATCH_MCU: dcgmHealthSystems_t = 0x8;
/// Memory.
pub const DCGM_HEALTH_WATCH_MEM: dcgmHealthSystems_t = 0x10;
/// Streaming multiprocessors.
pub const DCGM_HEALTH_WATCH_SM: dcgmHealthSystems_t = 0x20;
/// InfoROM.
pub const DCGM_HEALTH_WATCH_INFOROM: dcgmHealthSystems_t = 0x40;
/// Temperature (needs a minute of samples before a check).
pub const DCGM_HEALTH_WATCH_THERMAL: dcgmHealthSystems_t = 0x80;
/// Power (needs a minute of samples before a check).
pub const DCGM_HEALTH_WATCH_POWER: dcgmHealthSystems_t = 0x100;
/// Driver.
pub const DCGM_HEALTH_WATCH_DRIVER: dcgmHealthSystems_t = 0x200;
/// Non-fatal NvSwitch errors.
pub const DCGM_HEALTH_WATCH_NVSWITCH_NONFATAL: dcgmHealthSystems_t = 0x400;
/// Fatal NvSwitch errors.
pub const DCGM_HEALTH_WATCH_NVSWITCH_FATAL: dcgmHealthSystems_t = 0x800;
/// ConnectX devices.
pub const DCGM_HEALTH_WATCH_CONNECTX: dcgmHealthSystems_t = 0x1000;
/// Every subsystem.
pub const DCGM_HEALTH_WATCH_ALL: dcgmHealthSystems_t = 0xFFFF_FFFF;

/// Number of subsystems in the first version of the list (the per-system arrays of the stats
/// structs have this length).
pub const DCGM_HEALTH_WATCH_COUNT_V1: usize = 10;
/// Number of subsystems up to the NvSwitch watches.
pub const DCGM_HEALTH_WATCH_COUNT_V2: usize = 12;
/// Number of subsystems up to the ConnectX watch.
pub const DCGM_HEALTH_WATCH_COUNT_V3: usize = 13;

/// The C enum behind [`dcgmHealthWatchResults_t`].
pub type dcgmHealthWatchResult_enum = u32;
/// Outcome of a health check.
pub type dcgmHealthWatchResults_t = dcgmHealthWatchResult_enum;
/// Healthy.
pub const DCGM_HEALTH_RESULT_PASS: dcgmHealthWatchResults_t = 0;
/// A warning was raised.
pub const DCGM_HEALTH_RESULT_WARN: dcgmHealthWatchResults_t = 10;
/// A failure was raised.
pub const DCGM_HEALTH_RESULT_FAIL: dcgmHealthWatchResults_t = 20;

/// An error message with its `DCGM_FR_*` code.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagErrorDetail_t {
    pub msg: [c_char; 1024],
    /// A `dcgmError_t` (`DCGM_FR_*`) value.
    pub code: u32,
}
crate::plain_struct!(dcgmDiagErrorDetail_t, size = 1028, align = 4);

/// One health incident: which subsystem, how bad, what and where.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmIncidentInfo_t {
    pub system: dcgmHealthSystems_t,
    pub health: dcgmHealthWatchResults_t,
    pub error: dcgmDiagErrorDetail_t,
    pub entityInfo: dcgmGroupEntityPair_t,
}
crate::plain_struct!(dcgmIncidentInfo_t, size = 1044, align = 4);

/// Capacity of the incident list of [`dcgmHealthResponse_v5`].
pub const DCGM_HEALTH_WATCH_MAX_INCIDENTS_V2: usize = DCGM_GROUP_MAX_ENTITIES_V2;

/// Result of `dcgmHealthCheck`: the overall verdict and the list of incidents (about 1 MiB;
/// allocate it with `boxed_versioned`).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmHealthResponse_v5 {
    pub version: u32,
    pub overallHealth: dcgmHealthWatchResults_t,
    /// Number of valid entries in `incidents`.
    pub incidentCount: u32,
    pub incidents: [dcgmIncidentInfo_t; DCGM_HEALTH_WATCH_MAX_INCIDENTS_V2],
}
crate::versioned_struct!(
    dcgmHealthResponse_v5,
    dcgmHealthResponse_version5 = 5,
    size = 1069068,
    word = 0x0510_500C
);
/// The current health response struct.
pub type dcgmHealthResponse_t = dcgmHealthResponse_v5;
/// Version word of [`dcgmHealthResponse_t`].
pub const dcgmHealthResponse_version: u32 = dcgmHealthResponse_version5;

/// Capacity of the incident list of [`dcgmHealthResponse_v4`] (DCGM 3.x's
/// `DCGM_HEALTH_WATCH_MAX_INCIDENTS`, its `DCGM_GROUP_MAX_ENTITIES`).
pub const DCGM_HEALTH_WATCH_MAX_INCIDENTS_V1: usize = 64;

/// Result of `dcgmHealthCheck` in DCGM 3.x (the only version 3.3.9 accepts): the layout of
/// [`dcgmHealthResponse_v5`] with room for 64 incidents.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmHealthResponse_v4 {
    pub version: u32,
    pub overallHealth: dcgmHealthWatchResults_t,
    /// Number of valid entries in `incidents`.
    pub incidentCount: u32,
    pub incidents: [dcgmIncidentInfo_t; DCGM_HEALTH_WATCH_MAX_INCIDENTS_V1],
}
crate::versioned_struct!(
    dcgmHealthResponse_v4,
    dcgmHealthResponse_version4 = 4,
    size = 66828,
    word = 0x0401_050C
);

/// Parameters of `dcgmHealthSet_v2`: group, watched subsystems and sampling settings.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmHealthSetParams_v2 {
    pub version: u32,
    pub groupId: dcgmGpuGrp_t,
    pub systems: dcgmHealthSystems_t,
    /// Sampling interval in microseconds.
    pub updateInterval: i64,
    /// How long samples are kept, in seconds.
    pub maxKeepAge: f64,
}
crate::versioned_struct!(
    dcgmHealthSetParams_v2,
    dcgmHealthSetParams_version2 = 2,
    size = 40,
    word = 0x0200_0028
);
