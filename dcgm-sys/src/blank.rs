//! DCGM's blank sentinels: the in-band values that mean "no value", "not found",
//! "not supported" or "not permitted", and helpers that recognise them.
//!
//! The safe `dcgm` crate turns these into an enum so that no sentinel reaches a user as a
//! number; this module is for code that talks to the C API directly.

/// 8-bit blank (used as the diagnostic "system error" marker).
pub const DCGM_INT8_BLANK: u8 = 0x70;
/// 32-bit integer blank.
pub const DCGM_INT32_BLANK: i32 = 0x7fff_fff0;
/// 64-bit integer blank.
pub const DCGM_INT64_BLANK: i64 = 0x7fff_ffff_ffff_fff0;
/// Double blank (2^47).
pub const DCGM_FP64_BLANK: f64 = 140_737_488_355_328.0;
/// String blank.
pub const DCGM_STR_BLANK: &str = "<<<NULL>>>";
/// 32-bit "entity not found".
pub const DCGM_INT32_NOT_FOUND: i32 = DCGM_INT32_BLANK + 1;
/// 64-bit "entity not found".
pub const DCGM_INT64_NOT_FOUND: i64 = DCGM_INT64_BLANK + 1;
/// Double "entity not found".
pub const DCGM_FP64_NOT_FOUND: f64 = DCGM_FP64_BLANK + 1.0;
/// String "entity not found".
pub const DCGM_STR_NOT_FOUND: &str = "<<<NOT_FOUND>>>";
/// 32-bit "not supported".
pub const DCGM_INT32_NOT_SUPPORTED: i32 = DCGM_INT32_BLANK + 2;
/// 64-bit "not supported".
pub const DCGM_INT64_NOT_SUPPORTED: i64 = DCGM_INT64_BLANK + 2;
/// Double "not supported".
pub const DCGM_FP64_NOT_SUPPORTED: f64 = DCGM_FP64_BLANK + 2.0;
/// String "not supported".
pub const DCGM_STR_NOT_SUPPORTED: &str = "<<<NOT_SUPPORTED>>>";
/// 32-bit "not permitted".
pub const DCGM_INT32_NOT_PERMISSIONED: i32 = DCGM_INT32_BLANK + 3;
/// 64-bit "not permitted".
pub const DCGM_INT64_NOT_PERMISSIONED: i64 = DCGM_INT64_BLANK + 3;
/// Double "not permitted".
pub const DCGM_FP64_NOT_PERMISSIONED: f64 = DCGM_FP64_BLANK + 3.0;
/// String "not permitted". (go-dcgm spells this `<<<NOT_PERMISSIONED>>>`, which is wrong.)
pub const DCGM_STR_NOT_PERMISSIONED: &str = "<<<NOT_PERM>>>";

/// Which kind of "no value" a sentinel stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlankKind {
    /// No value (the base sentinel, or any unrecognised value above it).
    Blank,
    /// The entity was not found.
    NotFound,
    /// The field is not supported on this entity.
    NotSupported,
    /// The caller may not read this field.
    NotPermissioned,
}

impl BlankKind {
    fn from_offset(offset: i64) -> Self {
        match offset {
            1 => BlankKind::NotFound,
            2 => BlankKind::NotSupported,
            3 => BlankKind::NotPermissioned,
            _ => BlankKind::Blank,
        }
    }
}

/// `DCGM_INT8_IS_BLANK`.
pub const fn dcgm_int8_is_blank(v: u8) -> bool {
    v >= DCGM_INT8_BLANK
}
/// `DCGM_INT32_IS_BLANK`.
pub const fn dcgm_int32_is_blank(v: i32) -> bool {
    v >= DCGM_INT32_BLANK
}
/// `DCGM_INT64_IS_BLANK`.
pub const fn dcgm_int64_is_blank(v: i64) -> bool {
    v >= DCGM_INT64_BLANK
}
/// `DCGM_FP64_IS_BLANK`.
pub fn dcgm_fp64_is_blank(v: f64) -> bool {
    v >= DCGM_FP64_BLANK
}
/// `DCGM_STR_IS_BLANK`: starts with `<<<` and contains `>>>`.
pub fn dcgm_str_is_blank(v: &str) -> bool {
    v.starts_with("<<<") && v[3..].contains(">>>")
}

/// The blank kind of a 32-bit value, or `None` if it is a real value.
///
/// ```
/// use dcgm_sys::{BlankKind, int32_blank_kind, DCGM_INT32_NOT_SUPPORTED};
/// assert_eq!(int32_blank_kind(DCGM_INT32_NOT_SUPPORTED), Some(BlankKind::NotSupported));
/// assert_eq!(int32_blank_kind(75), None);
/// ```
pub fn int32_blank_kind(v: i32) -> Option<BlankKind> {
    dcgm_int32_is_blank(v)
        .then(|| BlankKind::from_offset(i64::from(v) - i64::from(DCGM_INT32_BLANK)))
}

/// The blank kind of a 64-bit value, or `None` if it is a real value.
pub fn int64_blank_kind(v: i64) -> Option<BlankKind> {
    dcgm_int64_is_blank(v).then(|| BlankKind::from_offset(v - DCGM_INT64_BLANK))
}

/// The blank kind of a double, or `None` if it is a real value.
pub fn fp64_blank_kind(v: f64) -> Option<BlankKind> {
    if !dcgm_fp64_is_blank(v) {
        return None;
    }
    let off = v - DCGM_FP64_BLANK;
    Some(if off == 1.0 {
        BlankKind::NotFound
    } else if off == 2.0 {
        BlankKind::NotSupported
    } else if off == 3.0 {
        BlankKind::NotPermissioned
    } else {
        BlankKind::Blank
    })
}

/// The blank kind of a string value, or `None` if it is a real value.
pub fn str_blank_kind(v: &str) -> Option<BlankKind> {
    if !dcgm_str_is_blank(v) {
        return None;
    }
    Some(match v {
        DCGM_STR_NOT_FOUND => BlankKind::NotFound,
        DCGM_STR_NOT_SUPPORTED => BlankKind::NotSupported,
        DCGM_STR_NOT_PERMISSIONED => BlankKind::NotPermissioned,
        _ => BlankKind::Blank,
    })
}
