//! Entity groups, field groups and field summaries.

use std::ffi::c_char;

use crate::{dcgm_field_eid_t, dcgm_field_entity_group_t, dcgmFieldGrp_t, dcgmGroupEntityPair_t};

/// The C enum behind [`dcgmGroupType_t`].
pub type dcgmGroupType_enum = u32;
/// What a new group starts with.
pub type dcgmGroupType_t = dcgmGroupType_enum;
/// Every GPU of the node.
pub const DCGM_GROUP_DEFAULT: dcgmGroupType_t = 0;
/// Nothing; add entities yourself.
pub const DCGM_GROUP_EMPTY: dcgmGroupType_t = 1;
/// Every NvSwitch of the node.
pub const DCGM_GROUP_DEFAULT_NVSWITCHES: dcgmGroupType_t = 2;
/// Every MIG GPU instance of the node.
pub const DCGM_GROUP_DEFAULT_INSTANCES: dcgmGroupType_t = 3;
/// Every MIG compute instance of the node.
pub const DCGM_GROUP_DEFAULT_COMPUTE_INSTANCES: dcgmGroupType_t = 4;
/// Every entity of the node.
pub const DCGM_GROUP_DEFAULT_EVERYTHING: dcgmGroupType_t = 5;

/// A group's name and members (up to 64 entities; superseded by [`dcgmGroupInfo_v3`]).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmGroupInfo_v2 {
    pub version: u32,
    /// Number of valid entries of `entityList`.
    pub count: u32,
    pub groupName: [c_char; 256],
    pub entityList: [dcgmGroupEntityPair_t; 64],
}
crate::versioned_struct!(
    dcgmGroupInfo_v2,
    dcgmGroupInfo_version2 = 2,
    size = 776,
    word = 0x0200_0308
);

/// A group's name and members (up to 1024 entities).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmGroupInfo_v3 {
    pub version: u32,
    /// Number of valid entries of `entityList`.
    pub count: u32,
    pub groupName: [c_char; 256],
    pub entityList: [dcgmGroupEntityPair_t; 1024],
}
crate::versioned_struct!(
    dcgmGroupInfo_v3,
    dcgmGroupInfo_version3 = 3,
    size = 8456,
    word = 0x0300_2108
);
/// Current version of the group-info struct.
pub type dcgmGroupInfo_t = dcgmGroupInfo_v3;
/// Current version word of [`dcgmGroupInfo_t`].
pub const dcgmGroupInfo_version: u32 = dcgmGroupInfo_version3;

/// A field group: its id, name and fields. Set `fieldGroupId` before `dcgmFieldGroupGetInfo`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmFieldGroupInfo_v1 {
    pub version: u32,
    /// Number of valid entries of `fieldIds`.
    pub numFieldIds: u32,
    pub fieldGroupId: dcgmFieldGrp_t,
    pub fieldGroupName: [c_char; 256],
    pub fieldIds: [u16; 128],
}
crate::versioned_struct!(
    dcgmFieldGroupInfo_v1,
    dcgmFieldGroupInfo_version1 = 1,
    size = 528,
    word = 0x0100_0210
);
/// Current version of the field-group info struct.
pub type dcgmFieldGroupInfo_t = dcgmFieldGroupInfo_v1;
/// Current version word of [`dcgmFieldGroupInfo_t`].
pub const dcgmFieldGroupInfo_version: u32 = dcgmFieldGroupInfo_version1;

/// Every field group of the connection.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmAllFieldGroup_v1 {
    pub version: u32,
    /// Number of valid entries of `fieldGroups`.
    pub numFieldGroups: u32,
    pub fieldGroups: [dcgmFieldGroupInfo_t; 64],
}
crate::versioned_struct!(
    dcgmAllFieldGroup_v1,
    dcgmAllFieldGroup_version1 = 1,
    size = 33800,
    word = 0x0100_8408
);
/// Current version of the all-field-groups struct.
pub type dcgmAllFieldGroup_t = dcgmAllFieldGroup_v1;
/// Current version word of [`dcgmAllFieldGroup_t`].
pub const dcgmAllFieldGroup_version: u32 = dcgmAllFieldGroup_version1;

/// Summary kind: minimum.
pub const DCGM_SUMMARY_MIN: u32 = 0x0000_0001;
/// Summary kind: maximum.
pub const DCGM_SUMMARY_MAX: u32 = 0x0000_0002;
/// Summary kind: average.
pub const DCGM_SUMMARY_AVG: u32 = 0x0000_0004;
/// Summary kind: sum.
pub const DCGM_SUMMARY_SUM: u32 = 0x0000_0008;
/// Summary kind: number of samples.
pub const DCGM_SUMMARY_COUNT: u32 = 0x0000_0010;
/// Summary kind: integral over time.
pub const DCGM_SUMMARY_INTEGRAL: u32 = 0x0000_0020;
/// Summary kind: last value minus first value.
pub const DCGM_SUMMARY_DIFF: u32 = 0x0000_0040;
/// Number of summary kinds.
pub const DCGM_SUMMARY_SIZE: usize = 7;

/// One summary value: an integer or a double, by the field's type (anonymous in C).
#[repr(C)]
#[derive(Copy, Clone)]
pub union dcgmSummaryResponse_t__bindgen_ty_1 {
    pub i64_: i64,
    pub fp64: f64,
}
crate::plain_struct!(dcgmSummaryResponse_t__bindgen_ty_1, size = 8, align = 8);

/// The answer part of [`dcgmFieldSummaryRequest_v1`].
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmSummaryResponse_t {
    /// The `DCGM_FT_*` letter of the field.
    pub fieldType: u32,
    /// Number of valid entries of `values`.
    pub summaryCount: u32,
    /// One value per requested kind, in bit order of the mask.
    pub values: [dcgmSummaryResponse_t__bindgen_ty_1; 7],
}
crate::plain_struct!(dcgmSummaryResponse_t, size = 64, align = 8);

/// Input and output of `dcgmGetFieldSummary`: summaries of one field of one entity over a
/// time range (int64 and double fields only).
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmFieldSummaryRequest_v1 {
    pub version: u32,
    pub fieldId: u16,
    pub entityGroupId: dcgm_field_entity_group_t,
    pub entityId: dcgm_field_eid_t,
    /// `DCGM_SUMMARY_*` bits.
    pub summaryTypeMask: u32,
    /// Start of the range, microseconds since the epoch (0: the oldest sample).
    pub startTime: u64,
    /// End of the range, microseconds since the epoch (0: now).
    pub endTime: u64,
    pub response: dcgmSummaryResponse_t,
}
crate::versioned_struct!(
    dcgmFieldSummaryRequest_v1,
    dcgmFieldSummaryRequest_version1 = 1,
    size = 104,
    word = 0x0100_0068
);
/// Current version of the field-summary request.
pub type dcgmFieldSummaryRequest_t = dcgmFieldSummaryRequest_v1;
