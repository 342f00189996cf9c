//! Typed field values: a number, a string or bytes, or a kind of "no value". DCGM's in-band
//! sentinels (2147483632, 1.4e14, `<<<NULL>>>`, ...) never reach a user.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dcgm_sys::*;

pub use crate::blank::BlankKind;

use crate::entity::{Entity, EntityGroup};
use crate::error::ReturnCode;
use crate::field::{FieldId, FieldType};

/// A value, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer (`DCGM_FT_INT64`, and timestamps).
    Int(i64),
    /// A double.
    Double(f64),
    /// A string.
    String(String),
    /// A binary field (a C struct blob).
    Bytes(Vec<u8>),
    /// No value: blank, entity not found, not supported, or not permitted.
    Blank(BlankKind),
}

impl Value {
    /// The value as a float (ints converted), or `None` for strings, bytes and blanks.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Double(d) => Some(*d),
            _ => None,
        }
    }

    /// The integer, if this is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Whether there is no value.
    pub fn is_blank(&self) -> bool {
        matches!(self, Value::Blank(_))
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Double(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::String(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::String(v)
    }
}

impl std::fmt::Display for Value {
    /// Numbers as numbers; blanks as `N/A` (never as a sentinel number).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Double(d) => write!(f, "{d}"),
            Value::String(s) => f.write_str(s),
            Value::Bytes(b) => write!(f, "<{} bytes>", b.len()),
            Value::Blank(_) => f.write_str("N/A"),
        }
    }
}

/// One sample of one field of one entity.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldValue {
    /// Whose value it is.
    pub entity: Entity,
    /// Which field.
    pub field: FieldId,
    /// Microseconds since the Unix epoch when the sample was taken (0 if there is none).
    pub timestamp_us: i64,
    /// The value, or why there is none.
    pub value: Value,
    /// The library's per-value status (`DCGM_ST_OK` when there is a sample).
    pub status: ReturnCode,
}

impl FieldValue {
    /// When the sample was taken.
    pub fn time(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_micros(self.timestamp_us.max(0) as u64)
    }

    /// Decodes a C value record of an entity.
    pub(crate) fn from_raw_v1(group: u32, id: u32, v: &dcgmFieldValue_v1) -> Self {
        Self::from_raw_v1_of(Entity::new(EntityGroup::from_raw(group), id), v)
    }

    /// Decodes a C value record of a known entity (the callbacks pass a run of records of one
    /// entity, so its conversion is done once per run).
    #[inline]
    pub(crate) fn from_raw_v1_of(entity: Entity, v: &dcgmFieldValue_v1) -> Self {
        Self {
            entity,
            field: FieldId(v.fieldId),
            timestamp_us: v.ts,
            value: decode(v.fieldId, v.fieldType, v.status, &v.value),
            status: ReturnCode::from_raw(v.status),
        }
    }

    /// Decodes a C value record that carries its entity.
    pub(crate) fn from_raw_v2(v: &dcgmFieldValue_v2) -> Self {
        Self {
            entity: Entity::new(EntityGroup::from_raw(v.entityGroupId), v.entityId),
            field: FieldId(v.fieldId),
            timestamp_us: v.ts,
            value: decode(v.fieldId, v.fieldType, v.status, &v.value),
            status: ReturnCode::from_raw(v.status),
        }
    }
}

/// Turns a raw value into a typed one, status first: a record whose status is not OK has no
/// value, whatever its bytes say.
#[inline]
pub(crate) fn decode(
    field: u16,
    ty: u16,
    status: i32,
    v: &dcgmFieldValue_v1__bindgen_ty_1,
) -> Value {
    // The common case first: an integer sample.
    if status == DCGM_ST_OK && ty == u16::from(DCGM_FT_INT64) {
        // SAFETY: the record's type says the union holds an int64.
        let i = unsafe { v.i64_ };
        return match int64_blank_kind(i) {
            Some(k) => Value::Blank(BlankKind::from_raw(k)),
            None => Value::Int(i),
        };
    }
    match status {
        DCGM_ST_OK => {}
        DCGM_ST_NOT_SUPPORTED | DCGM_ST_FIELD_UNSUPPORTED_BY_API => {
            return Value::Blank(BlankKind::NotSupported);
        }
        DCGM_ST_NO_PERMISSION => return Value::Blank(BlankKind::NotPermissioned),
        DCGM_ST_BADPARAM | DCGM_ST_UNKNOWN_FIELD => return Value::Blank(BlankKind::NotFound),
        _ => return Value::Blank(BlankKind::Blank),
    }
    let ty = if ty == 0 {
        field_by_id(field).map_or(DCGM_FT_INT64, |f| f.field_type)
    } else {
        ty as u8
    };
    match FieldType::from_raw(ty) {
        FieldType::Int64 | FieldType::Timestamp => {
            // SAFETY: the record's type says the union holds an int64.
            let i = unsafe { v.i64_ };
            match int64_blank_kind(i) {
                Some(k) => Value::Blank(BlankKind::from_raw(k)),
                None => Value::Int(i),
            }
        }
        FieldType::Double => {
            // SAFETY: the record's type says the union holds a double.
            let d = unsafe { v.dbl };
            match fp64_blank_kind(d) {
                Some(k) => Value::Blank(BlankKind::from_raw(k)),
                None => Value::Double(d),
            }
        }
        FieldType::String => {
            // SAFETY: any byte pattern is a valid c_char array.
            let s = crate::library::c_buf(unsafe { &v.str_ });
            match str_blank_kind(&s) {
                Some(k) => Value::Blank(BlankKind::from_raw(k)),
                None => Value::String(s),
            }
        }
        FieldType::Binary | FieldType::Unknown(_) => {
            // SAFETY: any byte pattern is a valid c_char array.
            let blob = unsafe { &v.blob };
            let len = known_size(field)
                .or_else(|| {
                    field_by_id(field)
                        .map(|f| f.size as usize)
                        .filter(|n| *n > 0)
                })
                .unwrap_or(blob.len())
                .min(blob.len());
            Value::Bytes(blob[..len].iter().map(|c| *c as u8).collect())
        }
    }
}

/// The byte size of the struct a known binary field carries.
fn known_size(field: u16) -> Option<usize> {
    match field {
        DCGM_FI_DEV_COMPUTE_PIDS | DCGM_FI_DEV_GRAPHICS_PIDS => {
            Some(size_of::<dcgmRunningProcess_v1>())
        }
        DCGM_FI_DEV_PROCESS_ACCOUNTING_STATS => Some(size_of::<dcgmDevicePidAccountingStats_v1>()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_int(v: i64) -> dcgmFieldValue_v1__bindgen_ty_1 {
        let mut u: dcgmFieldValue_v1__bindgen_ty_1 = zeroed();
        u.i64_ = v;
        u
    }

    #[test]
    fn blank_int64_is_reported_as_blank_not_number() {
        let v = decode(
            150,
            DCGM_FT_INT64 as u16,
            DCGM_ST_OK,
            &raw_int(DCGM_INT64_NOT_SUPPORTED),
        );
        assert_eq!(v, Value::Blank(BlankKind::NotSupported));
        assert_eq!(v.to_string(), "N/A");
        let v = decode(150, DCGM_FT_INT64 as u16, DCGM_ST_OK, &raw_int(71));
        assert_eq!(v, Value::Int(71));
    }

    #[test]
    fn status_wins_over_the_bytes() {
        let v = decode(150, DCGM_FT_INT64 as u16, DCGM_ST_NO_DATA, &raw_int(71));
        assert_eq!(v, Value::Blank(BlankKind::Blank));
    }

    #[test]
    fn blank_double_and_string_are_blank() {
        let mut u: dcgmFieldValue_v1__bindgen_ty_1 = zeroed();
        u.dbl = DCGM_FP64_NOT_PERMISSIONED;
        assert_eq!(
            decode(155, DCGM_FT_DOUBLE as u16, DCGM_ST_OK, &u),
            Value::Blank(BlankKind::NotPermissioned)
        );
        let mut u: dcgmFieldValue_v1__bindgen_ty_1 = zeroed();
        // SAFETY: any byte pattern is a valid c_char array.
        for (d, s) in unsafe { &mut u.str_ }
            .iter_mut()
            .zip(DCGM_STR_BLANK.bytes())
        {
            *d = s as std::ffi::c_char;
        }
        assert_eq!(
            decode(50, DCGM_FT_STRING as u16, DCGM_ST_OK, &u),
            Value::Blank(BlankKind::Blank)
        );
    }
}
