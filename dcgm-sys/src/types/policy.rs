//! Policies: conditions, thresholds, actions, and the violation reports handed to callbacks.

use std::ffi::{c_int, c_void};

use crate::{dcgmGpuGrp_t, dcgmHandle_t, dcgmReturn_t};

/// Notification settings of the legacy violation API.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPolicyViolation_v1 {
    pub version: u32,
    /// Non-zero to be notified of ECC double-bit errors.
    pub notifyOnEccDbe: u32,
    /// Non-zero to be notified of PCIe events.
    pub notifyOnPciEvent: u32,
    /// Retired-page count that triggers a notification.
    pub notifyOnMaxRetiredPages: u32,
}
crate::versioned_struct!(
    dcgmPolicyViolation_v1,
    dcgmPolicyViolation_version1 = 1,
    size = 16,
    word = 0x0100_0010
);
/// The current legacy violation struct.
pub type dcgmPolicyViolation_t = dcgmPolicyViolation_v1;
/// Version word of [`dcgmPolicyViolation_t`].
pub const dcgmPolicyViolation_version: u32 = dcgmPolicyViolation_version1;

/// The C enum behind [`dcgmPolicyConditionIdx_t`].
pub type dcgmPolicyConditionIdx_enum = u32;
/// Index of a condition in [`dcgmPolicy_v1::parms`].
pub type dcgmPolicyConditionIdx_t = dcgmPolicyConditionIdx_enum;
/// ECC double-bit errors (boolean parameter).
pub const DCGM_POLICY_COND_IDX_DBE: dcgmPolicyConditionIdx_t = 0;
/// PCIe errors (boolean parameter).
pub const DCGM_POLICY_COND_IDX_PCI: dcgmPolicyConditionIdx_t = 1;
/// Retired-page limit (numeric parameter).
pub const DCGM_POLICY_COND_IDX_MAX_PAGES_RETIRED: dcgmPolicyConditionIdx_t = 2;
/// Temperature limit (numeric parameter).
pub const DCGM_POLICY_COND_IDX_THERMAL: dcgmPolicyConditionIdx_t = 3;
/// Power limit (numeric parameter).
pub const DCGM_POLICY_COND_IDX_POWER: dcgmPolicyConditionIdx_t = 4;
/// NVLink errors (boolean parameter).
pub const DCGM_POLICY_COND_IDX_NVLINK: dcgmPolicyConditionIdx_t = 5;
/// XID errors (numeric parameter).
pub const DCGM_POLICY_COND_IDX_XID: dcgmPolicyConditionIdx_t = 6;
/// Number of condition indices.
pub const DCGM_POLICY_COND_IDX_MAX: usize = 7;
/// Number of condition parameters in a policy.
pub const DCGM_POLICY_COND_MAX: usize = DCGM_POLICY_COND_IDX_MAX;

/// The C enum behind [`dcgmPolicyCondition_t`].
pub type dcgmPolicyCondition_enum = u32;
/// Bitmask of policy conditions.
pub type dcgmPolicyCondition_t = dcgmPolicyCondition_enum;
/// ECC double-bit errors.
pub const DCGM_POLICY_COND_DBE: dcgmPolicyCondition_t = 0x1;
/// PCIe errors.
pub const DCGM_POLICY_COND_PCI: dcgmPolicyCondition_t = 0x2;
/// Too many retired pages.
pub const DCGM_POLICY_COND_MAX_PAGES_RETIRED: dcgmPolicyCondition_t = 0x4;
/// Temperature above the threshold.
pub const DCGM_POLICY_COND_THERMAL: dcgmPolicyCondition_t = 0x8;
/// Power above the threshold.
pub const DCGM_POLICY_COND_POWER: dcgmPolicyCondition_t = 0x10;
/// NVLink errors.
pub const DCGM_POLICY_COND_NVLINK: dcgmPolicyCondition_t = 0x20;
/// XID errors.
pub const DCGM_POLICY_COND_XID: dcgmPolicyCondition_t = 0x40;
/// Every condition bit above. Not a name of DCGM's headers: the one list of the conditions,
/// for the simulator's mask checks and `dcgm::PolicyCondition::ALL`.
pub const DCGM_POLICY_COND_ALL: dcgmPolicyCondition_t = DCGM_POLICY_COND_DBE
    | DCGM_POLICY_COND_PCI
    | DCGM_POLICY_COND_MAX_PAGES_RETIRED
    | DCGM_POLICY_COND_THERMAL
    | DCGM_POLICY_COND_POWER
    | DCGM_POLICY_COND_NVLINK
    | DCGM_POLICY_COND_XID;

/// Type of the `tag` of [`dcgmPolicyConditionParams_st`] (an anonymous enum in C).
pub type dcgmPolicyConditionParams_st__bindgen_ty_1 = u32;
/// The parameter is `val.boolean`.
pub const BOOL: dcgmPolicyConditionParams_st__bindgen_ty_1 = 0;
/// The parameter is `val.llval`.
pub const LLONG: dcgmPolicyConditionParams_st__bindgen_ty_1 = 1;

/// The value of a condition parameter (anonymous union in C).
#[repr(C)]
#[derive(Copy, Clone)]
pub union dcgmPolicyConditionParams_st__bindgen_ty_2 {
    pub boolean: u32,
    pub llval: u64,
}
crate::plain_struct!(
    dcgmPolicyConditionParams_st__bindgen_ty_2,
    size = 8,
    align = 8
);

/// A condition parameter: a tag saying which member of `val` is set, and the value.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmPolicyConditionParams_st {
    /// [`BOOL`] or [`LLONG`].
    pub tag: dcgmPolicyConditionParams_st__bindgen_ty_1,
    pub val: dcgmPolicyConditionParams_st__bindgen_ty_2,
}
crate::plain_struct!(dcgmPolicyConditionParams_st, size = 16, align = 8);
/// The typedef name of [`dcgmPolicyConditionParams_st`].
pub type dcgmPolicyConditionParams_t = dcgmPolicyConditionParams_st;

/// The C enum behind [`dcgmPolicyMode_t`].
pub type dcgmPolicyMode_enum = u32;
/// Whether the policy acts on its own or waits for the client.
pub type dcgmPolicyMode_t = dcgmPolicyMode_enum;
/// Automatic mode.
pub const DCGM_POLICY_MODE_AUTOMATED: dcgmPolicyMode_t = 0;
/// Manual mode.
pub const DCGM_POLICY_MODE_MANUAL: dcgmPolicyMode_t = 1;

/// The C enum behind [`dcgmPolicyIsolation_t`].
pub type dcgmPolicyIsolation_enum = u32;
/// GPU isolation after a violation.
pub type dcgmPolicyIsolation_t = dcgmPolicyIsolation_enum;
/// No isolation.
pub const DCGM_POLICY_ISOLATION_NONE: dcgmPolicyIsolation_t = 0;

/// The C enum behind [`dcgmPolicyAction_t`].
pub type dcgmPolicyAction_enum = u32;
/// Action taken after a violation.
pub type dcgmPolicyAction_t = dcgmPolicyAction_enum;
/// No action.
pub const DCGM_POLICY_ACTION_NONE: dcgmPolicyAction_t = 0;
/// Reset the GPU (deprecated).
pub const DCGM_POLICY_ACTION_GPURESET: dcgmPolicyAction_t = 1;

/// The C enum behind [`dcgmPolicyValidation_t`].
pub type dcgmPolicyValidation_enum = u32;
/// Validation run after an action (also the `validate` level of the diagnostic run structs).
pub type dcgmPolicyValidation_t = dcgmPolicyValidation_enum;
/// No validation.
pub const DCGM_POLICY_VALID_NONE: dcgmPolicyValidation_t = 0;
/// Short system validation.
pub const DCGM_POLICY_VALID_SV_SHORT: dcgmPolicyValidation_t = 1;
/// Medium system validation.
pub const DCGM_POLICY_VALID_SV_MED: dcgmPolicyValidation_t = 2;
/// Long system validation.
pub const DCGM_POLICY_VALID_SV_LONG: dcgmPolicyValidation_t = 3;
/// Extra-long system validation.
pub const DCGM_POLICY_VALID_SV_XLONG: dcgmPolicyValidation_t = 4;

/// The C enum behind [`dcgmPolicyFailureResp_t`].
pub type dcgmPolicyFailureResp_enum = u32;
/// What to do when validation fails.
pub type dcgmPolicyFailureResp_t = dcgmPolicyFailureResp_enum;
/// Nothing.
pub const DCGM_POLICY_FAILURE_NONE: dcgmPolicyFailureResp_t = 0;

/// A GPU and the [`dcgmPolicyCondition_t`] bits it violated.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPolicyViolationNotify_t {
    pub gpuId: u32,
    pub violationOccurred: u32,
}
crate::plain_struct!(dcgmPolicyViolationNotify_t, size = 8, align = 4);

/// A policy: the watched conditions, their parameters and what happens on a violation.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmPolicy_v1 {
    pub version: u32,
    pub condition: dcgmPolicyCondition_t,
    pub mode: dcgmPolicyMode_t,
    pub isolation: dcgmPolicyIsolation_t,
    pub action: dcgmPolicyAction_t,
    pub validation: dcgmPolicyValidation_t,
    pub response: dcgmPolicyFailureResp_t,
    /// Indexed by [`dcgmPolicyConditionIdx_t`].
    pub parms: [dcgmPolicyConditionParams_t; DCGM_POLICY_COND_MAX],
}
crate::versioned_struct!(
    dcgmPolicy_v1,
    dcgmPolicy_version1 = 1,
    size = 144,
    word = 0x0100_0090
);
/// The current policy struct.
pub type dcgmPolicy_t = dcgmPolicy_v1;
/// Version word of [`dcgmPolicy_t`].
pub const dcgmPolicy_version: u32 = dcgmPolicy_version1;

/// Type of [`dcgmPolicyConditionDbe_t::location`] (an anonymous enum in C).
pub type dcgmPolicyConditionDbe_t__bindgen_ty_1 = u32;
/// L1 cache.
pub const L1: dcgmPolicyConditionDbe_t__bindgen_ty_1 = 0;
/// L2 cache.
pub const L2: dcgmPolicyConditionDbe_t__bindgen_ty_1 = 1;
/// Device memory.
pub const DEVICE: dcgmPolicyConditionDbe_t__bindgen_ty_1 = 2;
/// Register file.
pub const REGISTER: dcgmPolicyConditionDbe_t__bindgen_ty_1 = 3;
/// Texture memory.
pub const TEXTURE: dcgmPolicyConditionDbe_t__bindgen_ty_1 = 4;

/// ECC double-bit error violation.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPolicyConditionDbe_t {
    pub timestamp: i64,
    pub location: dcgmPolicyConditionDbe_t__bindgen_ty_1,
    pub numerrors: u32,
}
crate::plain_struct!(dcgmPolicyConditionDbe_t, size = 16, align = 8);

/// PCIe replay violation.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPolicyConditionPci_t {
    pub timestamp: i64,
    /// PCIe replay counter.
    pub counter: u32,
}
crate::plain_struct!(dcgmPolicyConditionPci_t, size = 16, align = 8);

/// Retired-pages violation.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPolicyConditionMpr_t {
    pub timestamp: i64,
    /// Pages pending retirement because of single-bit errors.
    pub sbepages: u32,
    /// Pages pending retirement because of double-bit errors.
    pub dbepages: u32,
}
crate::plain_struct!(dcgmPolicyConditionMpr_t, size = 16, align = 8);

/// Thermal violation.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPolicyConditionThermal_t {
    pub timestamp: i64,
    /// The temperature that crossed the threshold.
    pub thermalViolation: u32,
}
crate::plain_struct!(dcgmPolicyConditionThermal_t, size = 16, align = 8);

/// Power violation.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPolicyConditionPower_t {
    pub timestamp: i64,
    /// The power that crossed the threshold.
    pub powerViolation: u32,
}
crate::plain_struct!(dcgmPolicyConditionPower_t, size = 16, align = 8);

/// NVLink error violation.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPolicyConditionNvlink_t {
    pub timestamp: i64,
    /// The NVLink counter field that crossed the threshold.
    pub fieldId: u16,
    pub counter: u32,
}
crate::plain_struct!(dcgmPolicyConditionNvlink_t, size = 16, align = 8);

/// XID violation.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmPolicyConditionXID_t {
    pub timestamp: i64,
    /// The XID number.
    pub errnum: u32,
}
crate::plain_struct!(dcgmPolicyConditionXID_t, size = 16, align = 8);

/// The violation details of [`dcgmPolicyCallbackResponse_v2`] (anonymous union in C); the
/// member to read follows from `condition`.
#[repr(C)]
#[derive(Copy, Clone)]
pub union dcgmPolicyCallbackResponse_v2__bindgen_ty_1 {
    pub dbe: dcgmPolicyConditionDbe_t,
    pub pci: dcgmPolicyConditionPci_t,
    pub mpr: dcgmPolicyConditionMpr_t,
    pub thermal: dcgmPolicyConditionThermal_t,
    pub power: dcgmPolicyConditionPower_t,
    pub nvlink: dcgmPolicyConditionNvlink_t,
    pub xid: dcgmPolicyConditionXID_t,
}
crate::plain_struct!(
    dcgmPolicyCallbackResponse_v2__bindgen_ty_1,
    size = 16,
    align = 8
);

/// What a policy callback receives: the violated condition, its details and the GPU.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmPolicyCallbackResponse_v2 {
    pub version: u32,
    pub condition: dcgmPolicyCondition_t,
    pub val: dcgmPolicyCallbackResponse_v2__bindgen_ty_1,
    pub gpuId: u32,
}
crate::versioned_struct!(
    dcgmPolicyCallbackResponse_v2,
    dcgmPolicyCallbackResponse_version2 = 2,
    size = 32,
    word = 0x0200_0020
);
/// The current callback response struct.
pub type dcgmPolicyCallbackResponse_t = dcgmPolicyCallbackResponse_v2;
/// Version word of [`dcgmPolicyCallbackResponse_t`].
pub const dcgmPolicyCallbackResponse_version: u32 = dcgmPolicyCallbackResponse_version2;

/// What a DCGM 3.x policy callback receives (`dcgmPolicyRegister`, before `_v2`): the
/// violated condition and its details, without the GPU.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmPolicyCallbackResponse_v1 {
    pub version: u32,
    pub condition: dcgmPolicyCondition_t,
    pub val: dcgmPolicyCallbackResponse_v2__bindgen_ty_1,
}
crate::versioned_struct!(
    dcgmPolicyCallbackResponse_v1,
    dcgmPolicyCallbackResponse_version1 = 1,
    size = 24,
    word = 0x0100_0018
);

/// Callback of DCGM 3.x's `dcgmPolicyRegister`: its one argument points at a
/// [`dcgmPolicyCallbackResponse_v1`] valid only during the call; there is no user data.
pub type fpRecvUpdates_v1 = Option<unsafe extern "C" fn(response: *mut c_void) -> c_int>;

/// DCGM 3.x's `dcgmPolicyRegister` (4.x exports only `dcgmPolicyRegister_v2`): one callback
/// when a violation begins and one when it finishes, both required. Resolved by
/// [`DcgmLibrary::policy_register_v1`](crate::DcgmLibrary::policy_register_v1).
pub type dcgmPolicyRegister_v1_t = unsafe extern "C" fn(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    condition: dcgmPolicyCondition_t,
    beginCallback: fpRecvUpdates_v1,
    finishCallback: fpRecvUpdates_v1,
) -> dcgmReturn_t;

/// Policy callback: `(response, userData)`. DCGM calls it on its own thread; the response is
/// only valid during the call.
pub type fpRecvUpdates = Option<
    unsafe extern "C" fn(response: *mut dcgmPolicyCallbackResponse_t, userData: u64) -> c_int,
>;
