//! Layouts of DCGM 3.3.9 structs that dcgm-sys does not declare, for the 3.3.9 personality
//! ([`crate::personality`]). Their sizes and version words were checked against the real
//! 3.3.9 library, which accepts exactly these words. Named as DCGM names them.

#![allow(non_upper_case_globals)]

use dcgm_sys::*;

/// Link states of one NvSwitch with up to 64 links (DCGM 3.3.9).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkNvSwitchLinkStatus_v3 {
    pub entityId: dcgm_field_eid_t,
    pub linkState: [dcgmNvLinkLinkState_t; 64],
}
dcgm_sys::plain_struct!(dcgmNvLinkNvSwitchLinkStatus_v3, size = 260, align = 4);

/// NVLink states of every GPU (18 links each) and NvSwitch (64 links each), version 3: what
/// DCGM 3.3.9's `dcgmGetNvLinkLinkStatus` accepts.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkStatus_v3 {
    /// The version word, `dcgmNvLinkStatus_version3`.
    pub version: u32,
    /// Number of valid entries of `gpus`.
    pub numGpus: u32,
    /// Each GPU's link states.
    pub gpus: [dcgmNvLinkGpuLinkStatus_v3; 32],
    /// Number of valid entries of `nvSwitches`.
    pub numNvSwitches: u32,
    /// Each NvSwitch's link states.
    pub nvSwitches: [dcgmNvLinkNvSwitchLinkStatus_v3; 12],
}
dcgm_sys::versioned_struct!(
    dcgmNvLinkStatus_v3,
    dcgmNvLinkStatus_version3 = 3,
    size = 5564,
    word = 0x0300_15BC
);

/// Capacity of the incident list of [`dcgmHealthResponse_v4`] (DCGM 3.3.9's
/// `DCGM_HEALTH_WATCH_MAX_INCIDENTS`).
pub const DCGM_HEALTH_WATCH_MAX_INCIDENTS_V1: usize = 64;

/// A health check's verdict and incidents, version 4: what DCGM 3.3.9's `dcgmHealthCheck`
/// accepts (version 5's layout with room for 64 incidents).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmHealthResponse_v4 {
    /// The version word, `dcgmHealthResponse_version4`.
    pub version: u32,
    /// The worst verdict of the incidents.
    pub overallHealth: dcgmHealthWatchResults_t,
    /// Number of valid entries in `incidents`.
    pub incidentCount: u32,
    /// The incidents found.
    pub incidents: [dcgmIncidentInfo_t; DCGM_HEALTH_WATCH_MAX_INCIDENTS_V1],
}
dcgm_sys::versioned_struct!(
    dcgmHealthResponse_v4,
    dcgmHealthResponse_version4 = 4,
    size = 66828,
    word = 0x0401_050C
);
