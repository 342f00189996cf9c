//! Field values, entity pairs and the value-enumeration callbacks.

use std::ffi::{c_char, c_int, c_void};

use crate::{dcgm_field_eid_t, dcgm_field_entity_group_t};

/// An entity: its group and its id within the group.
#[repr(C)]
#[derive(Debug, Copy, Clone, Default, PartialEq, Eq, Hash)]
pub struct dcgmGroupEntityPair_t {
    pub entityGroupId: dcgm_field_entity_group_t,
    pub entityId: dcgm_field_eid_t,
}
crate::plain_struct!(dcgmGroupEntityPair_t, size = 8, align = 4);

/// The value union of [`dcgmFieldValue_v1`] (anonymous in C).
#[repr(C)]
#[derive(Copy, Clone)]
pub union dcgmFieldValue_v1__bindgen_ty_1 {
    pub i64_: i64,
    pub dbl: f64,
    pub str_: [c_char; 256],
    pub blob: [c_char; 4096],
}
crate::plain_struct!(dcgmFieldValue_v1__bindgen_ty_1, size = 4096, align = 8);

/// One sample of one field, without its entity (callbacks pass the entity separately).
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmFieldValue_v1 {
    pub version: u32,
    pub fieldId: u16,
    /// The `DCGM_FT_*` letter, in an unsigned short.
    pub fieldType: u16,
    /// `DCGM_ST_OK`, or why there is no value.
    pub status: i32,
    /// Microseconds since the Unix epoch.
    pub ts: i64,
    pub value: dcgmFieldValue_v1__bindgen_ty_1,
}
crate::versioned_struct!(
    dcgmFieldValue_v1,
    dcgmFieldValue_version1 = 1,
    size = 4120,
    word = 0x0100_1018
);

/// The value union of [`dcgmFieldValue_v2`] (anonymous in C).
pub type dcgmFieldValue_v2__bindgen_ty_1 = dcgmFieldValue_v1__bindgen_ty_1;

/// One sample of one field of one entity.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmFieldValue_v2 {
    pub version: u32,
    pub entityGroupId: dcgm_field_entity_group_t,
    pub entityId: dcgm_field_eid_t,
    pub fieldId: u16,
    pub fieldType: u16,
    pub status: i32,
    pub unused: u32,
    pub ts: i64,
    pub value: dcgmFieldValue_v2__bindgen_ty_1,
}
crate::versioned_struct!(
    dcgmFieldValue_v2,
    dcgmFieldValue_version2 = 2,
    size = 4128,
    word = 0x0200_1020
);

/// Callback of the GPU-only value reads: `(gpuId, values, numValues, userData)`; return 0 to
/// continue, a negative number to stop.
pub type dcgmFieldValueEnumeration_f = Option<
    unsafe extern "C" fn(
        gpuId: u32,
        values: *mut dcgmFieldValue_v1,
        numValues: c_int,
        userData: *mut c_void,
    ) -> c_int,
>;

/// Callback of the entity value reads: `(entityGroupId, entityId, values, numValues,
/// userData)`; return 0 to continue, a negative number to stop.
pub type dcgmFieldValueEntityEnumeration_f = Option<
    unsafe extern "C" fn(
        entityGroupId: dcgm_field_entity_group_t,
        entityId: dcgm_field_eid_t,
        values: *mut dcgmFieldValue_v1,
        numValues: c_int,
        userData: *mut c_void,
    ) -> c_int,
>;

/// A value to inject with `dcgmInjectFieldValue` (the same layout as [`dcgmFieldValue_v1`]).
pub type dcgmInjectFieldValue_v1 = dcgmFieldValue_v1;
/// Current version of the injected value.
pub type dcgmInjectFieldValue_t = dcgmInjectFieldValue_v1;
/// Version word of [`dcgmInjectFieldValue_v1`] (the same as [`dcgmFieldValue_version1`]).
pub const dcgmInjectFieldValue_version1: u32 = dcgmFieldValue_version1;
/// Current version word of [`dcgmInjectFieldValue_t`].
pub const dcgmInjectFieldValue_version: u32 = dcgmInjectFieldValue_version1;
