//! Process and job statistics, and the accounting blobs of some fields.

use crate::{
    DCGM_HEALTH_WATCH_COUNT_V1, DCGM_MAX_NUM_DEVICES, DCGM_MAX_XID_INFO, dcgmHealthSystems_t,
    dcgmHealthWatchResults_t,
};

/// Minimum, maximum and average of a series of 64-bit integers (each may be a blank value).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmStatSummaryInt64_t {
    pub minValue: i64,
    pub maxValue: i64,
    pub average: i64,
}
crate::plain_struct!(dcgmStatSummaryInt64_t, size = 24, align = 8);

/// Minimum, maximum and average of a series of 32-bit integers (each may be a blank value).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmStatSummaryInt32_t {
    pub minValue: i32,
    pub maxValue: i32,
    pub average: i32,
}
crate::plain_struct!(dcgmStatSummaryInt32_t, size = 12, align = 4);

/// Minimum, maximum and average of a series of doubles (each may be a blank value).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmStatSummaryFp64_t {
    pub minValue: f64,
    pub maxValue: f64,
    pub average: f64,
}
crate::plain_struct!(dcgmStatSummaryFp64_t, size = 24, align = 8);

/// Capacity of the per-process lists in the pid and job statistics.
pub const DCGM_MAX_PID_INFO_NUM: usize = 16;

/// SM and memory utilization of one process, in percent.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmProcessUtilInfo_t {
    pub pid: u32,
    pub smUtil: f64,
    pub memUtil: f64,
}
crate::plain_struct!(dcgmProcessUtilInfo_t, size = 24, align = 8);

/// One utilization sample of one process.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmProcessUtilSample_t {
    pub util: f64,
    pub pid: u32,
}
crate::plain_struct!(dcgmProcessUtilSample_t, size = 16, align = 8);

/// Health of one subsystem in [`dcgmPidSingleInfo_t::systems`] (anonymous struct in C).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPidSingleInfo_t__bindgen_ty_1 {
    pub system: dcgmHealthSystems_t,
    pub health: dcgmHealthWatchResults_t,
}
crate::plain_struct!(dcgmPidSingleInfo_t__bindgen_ty_1, size = 8, align = 4);

/// Statistics of one process on one GPU (or the summary over GPUs), over its lifetime.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPidSingleInfo_t {
    pub gpuId: u32,
    /// Energy in millijoules.
    pub energyConsumed: i64,
    pub pcieRxBandwidth: dcgmStatSummaryInt64_t,
    pub pcieTxBandwidth: dcgmStatSummaryInt64_t,
    pub pcieReplays: i64,
    /// Microseconds since the Unix epoch.
    pub startTime: i64,
    /// Microseconds since the Unix epoch, 0 while the process runs.
    pub endTime: i64,
    pub processUtilization: dcgmProcessUtilInfo_t,
    pub smUtilization: dcgmStatSummaryInt32_t,
    pub memoryUtilization: dcgmStatSummaryInt32_t,
    pub eccSingleBit: u32,
    pub eccDoubleBit: u32,
    pub memoryClock: dcgmStatSummaryInt32_t,
    pub smClock: dcgmStatSummaryInt32_t,
    pub numXidCriticalErrors: i32,
    pub xidCriticalErrorsTs: [i64; DCGM_MAX_XID_INFO],
    pub numOtherComputePids: i32,
    pub otherComputePids: [u32; DCGM_MAX_PID_INFO_NUM],
    pub numOtherGraphicsPids: i32,
    pub otherGraphicsPids: [u32; DCGM_MAX_PID_INFO_NUM],
    /// Bytes.
    pub maxGpuMemoryUsed: i64,
    /// Microseconds at reduced clocks, per reason (this one and the five below).
    pub powerViolationTime: i64,
    pub thermalViolationTime: i64,
    pub reliabilityViolationTime: i64,
    pub boardLimitViolationTime: i64,
    pub lowUtilizationTime: i64,
    pub syncBoostTime: i64,
    pub overallHealth: dcgmHealthWatchResults_t,
    pub incidentCount: u32,
    pub systems: [dcgmPidSingleInfo_t__bindgen_ty_1; DCGM_HEALTH_WATCH_COUNT_V1],
}
crate::plain_struct!(dcgmPidSingleInfo_t, size = 536, align = 8);

/// Result of `dcgmGetPidInfo`: statistics of one process, summed and per GPU.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPidInfo_v2 {
    pub version: u32,
    /// The process to look up (input).
    pub pid: u32,
    pub unused: u32,
    /// Number of valid entries in `gpus`.
    pub numGpus: i32,
    pub summary: dcgmPidSingleInfo_t,
    pub gpus: [dcgmPidSingleInfo_t; DCGM_MAX_NUM_DEVICES],
}
crate::versioned_struct!(
    dcgmPidInfo_v2,
    dcgmPidInfo_version2 = 2,
    size = 17704,
    word = 0x0200_4528
);
/// The current pid-info struct.
pub type dcgmPidInfo_t = dcgmPidInfo_v2;
/// Version word of [`dcgmPidInfo_t`].
pub const dcgmPidInfo_version: u32 = dcgmPidInfo_version2;

/// Health of one subsystem in [`dcgmGpuUsageInfo_t::systems`] (anonymous struct in C).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmGpuUsageInfo_t__bindgen_ty_1 {
    pub system: dcgmHealthSystems_t,
    pub health: dcgmHealthWatchResults_t,
}
crate::plain_struct!(dcgmGpuUsageInfo_t__bindgen_ty_1, size = 8, align = 4);

/// Statistics of one job on one GPU (or the summary over GPUs).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmGpuUsageInfo_t {
    pub gpuId: u32,
    /// Energy in millijoules.
    pub energyConsumed: i64,
    /// Watts.
    pub powerUsage: dcgmStatSummaryFp64_t,
    pub pcieRxBandwidth: dcgmStatSummaryInt64_t,
    pub pcieTxBandwidth: dcgmStatSummaryInt64_t,
    pub pcieReplays: i64,
    /// Microseconds since the Unix epoch.
    pub startTime: i64,
    /// Microseconds since the Unix epoch.
    pub endTime: i64,
    pub smUtilization: dcgmStatSummaryInt32_t,
    pub memoryUtilization: dcgmStatSummaryInt32_t,
    pub eccSingleBit: u32,
    pub eccDoubleBit: u32,
    pub memoryClock: dcgmStatSummaryInt32_t,
    pub smClock: dcgmStatSummaryInt32_t,
    pub numXidCriticalErrors: i32,
    pub xidCriticalErrorsTs: [i64; DCGM_MAX_XID_INFO],
    pub numComputePids: i32,
    pub computePidInfo: [dcgmProcessUtilInfo_t; DCGM_MAX_PID_INFO_NUM],
    pub numGraphicsPids: i32,
    pub graphicsPidInfo: [dcgmProcessUtilInfo_t; DCGM_MAX_PID_INFO_NUM],
    /// Bytes.
    pub maxGpuMemoryUsed: i64,
    /// Microseconds at reduced clocks, per reason (this one and the five below).
    pub powerViolationTime: i64,
    pub thermalViolationTime: i64,
    pub reliabilityViolationTime: i64,
    pub boardLimitViolationTime: i64,
    pub lowUtilizationTime: i64,
    pub syncBoostTime: i64,
    pub overallHealth: dcgmHealthWatchResults_t,
    pub incidentCount: u32,
    pub systems: [dcgmGpuUsageInfo_t__bindgen_ty_1; DCGM_HEALTH_WATCH_COUNT_V1],
}
crate::plain_struct!(dcgmGpuUsageInfo_t, size = 1184, align = 8);

/// Result of `dcgmJobGetStats`: statistics of one job, summed and per GPU.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmJobInfo_v3 {
    pub version: u32,
    /// Number of valid entries in `gpus`.
    pub numGpus: i32,
    pub summary: dcgmGpuUsageInfo_t,
    pub gpus: [dcgmGpuUsageInfo_t; DCGM_MAX_NUM_DEVICES],
}
crate::versioned_struct!(
    dcgmJobInfo_v3,
    dcgmJobInfo_version3 = 3,
    size = 39080,
    word = 0x0300_98A8
);
/// The current job-info struct.
pub type dcgmJobInfo_t = dcgmJobInfo_v3;
/// Version word of [`dcgmJobInfo_t`].
pub const dcgmJobInfo_version: u32 = dcgmJobInfo_version3;

/// One running compute or graphics process (the blob of the internal pid-list fields).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmRunningProcess_v1 {
    pub version: u32,
    pub pid: u32,
    /// GPU memory used, in bytes.
    pub memoryUsed: u64,
}
crate::versioned_struct!(
    dcgmRunningProcess_v1,
    dcgmRunningProcess_version1 = 1,
    size = 16,
    word = 0x0100_0010
);
/// The current running-process struct.
pub type dcgmRunningProcess_t = dcgmRunningProcess_v1;
/// Version word of [`dcgmRunningProcess_t`].
pub const dcgmRunningProcess_version: u32 = dcgmRunningProcess_version1;

// `dcgmDevicePidAccountingStats_v1` (the blob of the accounting-data field) is defined in
// `device.rs`, next to the other device structs, as in the C header.
