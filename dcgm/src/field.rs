//! Field ids and their metadata.

use std::fmt;

use dcgm_sys::*;

use crate::entity::EntityGroup;
use crate::error::{Error, Result};

/// A DCGM field id (`DCGM_FI_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldId(pub u16);

impl FieldId {
    /// A field by its 4.6 name, a pre-4.6 alias, its DCGM 4.6.1 name, or its tag:
    /// `"DCGM_FI_DEV_GPU_TEMP_CELSIUS"`, `"DCGM_FI_DEV_GPU_TEMP"` and `"gpu_temp"` are the same
    /// field, as are 4.6.0's `DCGM_FI_DEV_CPU_UTIL_TOTAL` and 4.6.1's
    /// `DCGM_FI_DEV_CPU_UTIL_RATIO`. A decimal id is accepted too.
    ///
    /// ```
    /// use dcgm::FieldId;
    /// assert_eq!(FieldId::parse("DCGM_FI_DEV_GPU_TEMP")?, FieldId(150));
    /// assert_eq!(FieldId::parse("gpu_temp")?, FieldId(150));
    /// assert_eq!(FieldId::parse("DCGM_FI_DEV_CPU_UTIL_RATIO")?, FieldId(1100));
    /// assert!(FieldId::parse("no_such_field").is_err());
    /// # Ok::<(), dcgm::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a name, tag or number that DCGM 4.6's field table does not know (the
    /// table is built into this crate: no library is asked).
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        if let Ok(n) = s.parse::<u16>() {
            return field_by_id(n)
                .map(|f| FieldId(f.id))
                .ok_or_else(|| Error::InvalidArgument(format!("unknown field id {n}")));
        }
        field_by_name(s)
            .or_else(|| field_by_name(&format!("DCGM_FI_{s}")))
            .or_else(|| field_by_tag(s))
            .map(|f| FieldId(f.id))
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown field {s:?}: use a DCGM_FI_* name (4.6.1, 4.6 or pre-4.6), a tag such as \
                     gpu_temp, or a numeric id"
                ))
            })
    }

    /// The registry entry, if DCGM 4.6 knows this id (outside this crate:
    /// `dcgm::raw::sys::field_by_id`).
    pub(crate) fn info(self) -> Option<&'static FieldInfo> {
        field_by_id(self.0)
    }

    /// Whether DCGM 4.6 knows this id.
    pub fn is_known(self) -> bool {
        self.info().is_some()
    }

    /// The lowest entity level the field can be read at, if DCGM 4.6 knows this id.
    pub fn entity_level(self) -> Option<EntityGroup> {
        self.info().map(|f| EntityGroup::from_raw(f.entity_level))
    }

    /// The field's metadata from DCGM 4.6's registry (no library needed), if it knows this id.
    pub fn meta(self) -> Option<FieldMeta> {
        self.info().map(FieldMeta::from_table)
    }

    /// The field with this DCGM 4.6 C name (`DCGM_FI_DEV_GPU_TEMP_CELSIUS`, or an older
    /// spelling such as `DCGM_FI_DEV_GPU_TEMP`), if there is one.
    pub fn by_name(name: &str) -> Option<FieldId> {
        field_by_name(name).map(|f| FieldId(f.id))
    }

    /// The field with this tag (`gpu_temp`), if there is one.
    pub fn by_tag(tag: &str) -> Option<FieldId> {
        field_by_tag(tag).map(|f| FieldId(f.id))
    }

    /// Whether the field describes the whole node (the driver version, say) rather than an
    /// entity: its value is the same whichever entity it is read for.
    pub fn is_global(self) -> bool {
        self.info().is_some_and(|f| f.entity_level == DCGM_FE_NONE)
    }

    /// The type of the field's values, if DCGM 4.6 knows this id.
    pub fn field_type(self) -> Option<FieldType> {
        self.info().map(|f| FieldType::from_raw(f.field_type))
    }

    /// The 4.6 C name, or the number if unknown.
    pub fn name(self) -> String {
        self.info()
            .map_or_else(|| self.0.to_string(), |f| f.name.to_string())
    }

    /// The tag (`gpu_temp`), or the number if unknown.
    pub fn tag(self) -> String {
        self.info()
            .map_or_else(|| self.0.to_string(), |f| f.tag.to_string())
    }
}

impl fmt::Display for FieldId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl From<u16> for FieldId {
    fn from(v: u16) -> Self {
        FieldId(v)
    }
}

/// The type of a field's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// A 64-bit integer.
    Int64,
    /// A double.
    Double,
    /// A string.
    String,
    /// A binary blob (a C struct).
    Binary,
    /// A timestamp (µs since the Unix epoch).
    Timestamp,
    /// A type letter this crate does not know.
    Unknown(u8),
}

impl FieldType {
    pub(crate) fn from_raw(c: u8) -> Self {
        match c {
            DCGM_FT_INT64 => Self::Int64,
            DCGM_FT_DOUBLE => Self::Double,
            DCGM_FT_STRING => Self::String,
            DCGM_FT_BINARY => Self::Binary,
            DCGM_FT_TIMESTAMP => Self::Timestamp,
            o => Self::Unknown(o),
        }
    }
}

/// A field's metadata, copied out of the library (the library's copy dies with
/// `dcgmShutdown`).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldMeta {
    /// The field.
    pub id: FieldId,
    /// Its tag (`gpu_temp`).
    pub tag: String,
    /// The type of its values.
    pub field_type: FieldType,
    /// Lowest entity level the field can be read at.
    pub entity_level: EntityGroup,
    /// Whether the field is global rather than per entity.
    pub global: bool,
    /// dmon column title.
    pub short_name: String,
    /// dmon unit (`C`, `W`), possibly empty.
    pub unit: String,
    /// dmon column width.
    pub width: i16,
}

impl FieldMeta {
    /// Copies the library's metadata.
    pub(crate) fn from_raw(m: &dcgm_field_meta_t) -> Self {
        let (short_name, unit, width) = if m.valueFormat.is_null() {
            (String::new(), String::new(), 0)
        } else {
            // SAFETY: a non-null valueFormat points to the library's format struct, alive while
            // the library is initialised (the caller holds a handle).
            let f = unsafe { &*m.valueFormat };
            (
                crate::library::c_buf(&f.shortName),
                crate::library::c_buf(&f.unit),
                f.width,
            )
        };
        Self {
            id: FieldId(m.fieldId),
            tag: crate::library::c_buf(&m.tag),
            field_type: FieldType::from_raw(m.fieldType as u8),
            entity_level: EntityGroup::from_raw(m.entityLevel),
            global: m.scope == DCGM_FS_GLOBAL,
            short_name,
            unit,
            width,
        }
    }

    /// The same facts from the crate's own field table (no library needed).
    pub(crate) fn from_table(f: &FieldInfo) -> Self {
        Self {
            id: FieldId(f.id),
            tag: f.tag.to_string(),
            field_type: FieldType::from_raw(f.field_type),
            entity_level: EntityGroup::from_raw(f.entity_level),
            global: f.scope == DCGM_FS_GLOBAL,
            short_name: f.short_name.to_string(),
            unit: f.unit.to_string(),
            width: f.width,
        }
    }
}
