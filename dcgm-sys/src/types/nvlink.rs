//! NVLink: link states of GPUs and NvSwitches, GPU peer-to-peer status and NVLink error kinds.

use crate::dcgm_field_eid_t;

/// The C enum behind [`dcgmNvLinkLinkState_t`].
pub type dcgmNvLinkLinkState_enum = u32;
/// State of one NVLink.
pub type dcgmNvLinkLinkState_t = dcgmNvLinkLinkState_enum;
/// The link does not exist on this entity.
pub const DcgmNvLinkLinkStateNotSupported: dcgmNvLinkLinkState_t = 0;
/// The link exists but is disabled.
pub const DcgmNvLinkLinkStateDisabled: dcgmNvLinkLinkState_t = 1;
/// The link is enabled but down.
pub const DcgmNvLinkLinkStateDown: dcgmNvLinkLinkState_t = 2;
/// The link is up.
pub const DcgmNvLinkLinkStateUp: dcgmNvLinkLinkState_t = 3;

/// Link states of one GPU with up to 6 links.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkGpuLinkStatus_v1 {
    pub entityId: dcgm_field_eid_t,
    pub linkState: [dcgmNvLinkLinkState_t; 6],
}
crate::plain_struct!(dcgmNvLinkGpuLinkStatus_v1, size = 28, align = 4);

/// Link states of one GPU with up to 12 links.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkGpuLinkStatus_v2 {
    pub entityId: dcgm_field_eid_t,
    pub linkState: [dcgmNvLinkLinkState_t; 12],
}
crate::plain_struct!(dcgmNvLinkGpuLinkStatus_v2, size = 52, align = 4);

/// Link states of one GPU with up to 18 links.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkGpuLinkStatus_v3 {
    pub entityId: dcgm_field_eid_t,
    pub linkState: [dcgmNvLinkLinkState_t; 18],
}
crate::plain_struct!(dcgmNvLinkGpuLinkStatus_v3, size = 76, align = 4);

/// Link states of one GPU with up to 36 links.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkGpuLinkStatus_v4 {
    pub entityId: dcgm_field_eid_t,
    pub linkState: [dcgmNvLinkLinkState_t; 36],
}
crate::plain_struct!(dcgmNvLinkGpuLinkStatus_v4, size = 148, align = 4);

/// Link states of one NvSwitch.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkNvSwitchLinkStatus_t {
    pub entityId: dcgm_field_eid_t,
    pub linkState: [dcgmNvLinkLinkState_t; 256],
}
crate::plain_struct!(dcgmNvLinkNvSwitchLinkStatus_t, size = 1028, align = 4);

/// Link states of one NvSwitch with up to 64 links (NVLink status version 3: DCGM 3.x names
/// it `dcgmNvLinkNvSwitchLinkStatus_t`).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkNvSwitchLinkStatus_v3 {
    pub entityId: dcgm_field_eid_t,
    pub linkState: [dcgmNvLinkLinkState_t; 64],
}
crate::plain_struct!(dcgmNvLinkNvSwitchLinkStatus_v3, size = 260, align = 4);

/// NVLink states of every GPU (18 links each) and NvSwitch (64 links each), version 3: what
/// DCGM 3.x's `dcgmGetNvLinkLinkStatus` takes.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkStatus_v3 {
    pub version: u32,
    /// Number of valid entries of `gpus`.
    pub numGpus: u32,
    pub gpus: [dcgmNvLinkGpuLinkStatus_v3; 32],
    /// Number of valid entries of `nvSwitches`.
    pub numNvSwitches: u32,
    pub nvSwitches: [dcgmNvLinkNvSwitchLinkStatus_v3; 12],
}
// 4 + 4 + 32 × 76 + 4 + 12 × 260.
crate::versioned_struct!(
    dcgmNvLinkStatus_v3,
    dcgmNvLinkStatus_version3 = 3,
    size = 5564,
    word = 0x0300_15BC
);

/// NVLink states of every GPU (18 links each) and NvSwitch, version 4.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkStatus_v4 {
    pub version: u32,
    /// Number of valid entries of `gpus`.
    pub numGpus: u32,
    pub gpus: [dcgmNvLinkGpuLinkStatus_v3; 32],
    /// Number of valid entries of `nvSwitches`.
    pub numNvSwitches: u32,
    pub nvSwitches: [dcgmNvLinkNvSwitchLinkStatus_t; 12],
}
crate::versioned_struct!(
    dcgmNvLinkStatus_v4,
    dcgmNvLinkStatus_version4 = 4,
    size = 14780,
    word = 0x0400_39BC
);

/// Output of `dcgmGetNvLinkLinkStatus`: NVLink states of every GPU (36 links each) and
/// NvSwitch.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkStatus_v5 {
    pub version: u32,
    /// Number of valid entries of `gpus`.
    pub numGpus: u32,
    pub gpus: [dcgmNvLinkGpuLinkStatus_v4; 32],
    /// Number of valid entries of `nvSwitches`.
    pub numNvSwitches: u32,
    pub nvSwitches: [dcgmNvLinkNvSwitchLinkStatus_t; 12],
}
crate::versioned_struct!(
    dcgmNvLinkStatus_v5,
    dcgmNvLinkStatus_version5 = 5,
    size = 17084,
    word = 0x0500_42BC
);
/// Current version of the NVLink status.
pub type dcgmNvLinkStatus_t = dcgmNvLinkStatus_v5;
/// Current version word of [`dcgmNvLinkStatus_t`].
pub const dcgmNvLinkStatus_version: u32 = dcgmNvLinkStatus_version5;

/// The C enum behind [`dcgmNvLinkGpuP2PStatus_t`].
pub type dcgmNvLinkGpuP2PStatus_enum = u32;
/// Whether two GPUs can talk peer to peer over NVLink, and if not, why.
pub type dcgmNvLinkGpuP2PStatus_t = dcgmNvLinkGpuP2PStatus_enum;
/// Peer-to-peer works.
pub const DcgmNvLinkP2pStatusOK: dcgmNvLinkGpuP2PStatus_t = 0;
/// The chipset does not support it.
pub const DcgmNvLinkP2pStatusChipsetNotSupported: dcgmNvLinkGpuP2PStatus_t = 1;
/// The GPU does not support it.
pub const DcgmNvLinkP2pStatusGpuNotSupported: dcgmNvLinkGpuP2PStatus_t = 2;
/// The topology does not support it.
pub const DcgmNvLinkP2pStatusTopologyNotSupported: dcgmNvLinkGpuP2PStatus_t = 3;
/// Disabled by a driver registry key.
pub const DcgmNvLinkP2pStatusDisabledByRegKey: dcgmNvLinkGpuP2PStatus_t = 4;
/// Not supported, for another reason.
pub const DcgmNvLinkP2pStatusNotSupported: dcgmNvLinkGpuP2PStatus_t = 5;
/// The status is not known.
pub const DcgmNvLinkP2pStatusUnknown: dcgmNvLinkGpuP2PStatus_t = 6;

/// Peer-to-peer status from one GPU to every GPU (indexed by GPU id).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkGpuLinkP2PStatus_v1 {
    pub entityId: dcgm_field_eid_t,
    pub linkStatus: [dcgmNvLinkGpuP2PStatus_t; 32],
}
crate::plain_struct!(dcgmNvLinkGpuLinkP2PStatus_v1, size = 132, align = 4);

/// Input and output of `dcgmGetNvLinkP2PStatus`. Set `numGpus` to 0 to query every GPU.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmNvLinkP2PStatus_v1 {
    pub version: u32,
    /// Number of valid entries of `gpus`.
    pub numGpus: u32,
    pub gpus: [dcgmNvLinkGpuLinkP2PStatus_v1; 32],
}
crate::versioned_struct!(
    dcgmNvLinkP2PStatus_v1,
    dcgmNvLinkP2PStatus_version1 = 1,
    size = 4232,
    word = 0x0100_1088
);
/// Current version of the peer-to-peer status.
pub type dcgmNvLinkP2PStatus_t = dcgmNvLinkP2PStatus_v1;

/// The C enum behind [`dcgmGpuNVLinkErrorType_t`].
pub type dcgmGpuNVLinkErrorType_enum = u32;
/// Kind of a GPU NVLink error (value of `DCGM_FI_DEV_NVLINK_ERROR`).
pub type dcgmGpuNVLinkErrorType_t = dcgmGpuNVLinkErrorType_enum;
/// The link needs recovery.
pub const DCGM_GPU_NVLINK_ERROR_RECOVERY_REQUIRED: dcgmGpuNVLinkErrorType_t = 1;
/// The link had a fatal error.
pub const DCGM_GPU_NVLINK_ERROR_FATAL: dcgmGpuNVLinkErrorType_t = 2;
