//! Fields: `dcgm.FieldMeta`, the field table `dcgm.fields` is built from at import (from
//! `dcgm-sys/data/fields.tsv` through `dcgm_sys::FIELD_TABLE`), and field arguments (an id, a
//! name, a pre-4.6 alias or a tag) to `FieldId`s.

use dcgm::FieldId;
use dcgm::raw::Binding;
use dcgm::raw::sys::{self as sys, FieldInfo};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};

use crate::errors;

/// A field's metadata: from the field table, or as a running library reports it.
#[pyclass(frozen, skip_from_py_object, name = "FieldMeta", module = "dcgm")]
#[derive(Clone)]
pub struct PyFieldMeta {
    #[pyo3(get)]
    field_id: u16,
    /// The DCGM 4.6 constant name (`DCGM_FI_DEV_GPU_TEMP_CELSIUS`), if the table knows the id.
    #[pyo3(get)]
    name: Option<String>,
    #[pyo3(get)]
    tag: String,
    #[pyo3(get)]
    field_type: String,
    #[pyo3(get)]
    size: u8,
    #[pyo3(get)]
    scope: i32,
    #[pyo3(get)]
    entity_level: u32,
    #[pyo3(get)]
    nvml_field_id: i32,
    #[pyo3(get)]
    short_name: String,
    #[pyo3(get)]
    unit: String,
    #[pyo3(get)]
    width: i16,
    deprecated_aliases: Vec<String>,
    #[pyo3(get)]
    internal: bool,
    newer_names: Vec<String>,
    /// The release that added the field where later than 4.6.0 (`"4.6.1"`), else `None`.
    #[pyo3(get)]
    since: Option<String>,
}

/// `"4.6.1"` for a table row's `since`.
fn release_text(since: Option<(u16, u16, u16)>) -> Option<String> {
    since.map(|(major, minor, patch)| format!("{major}.{minor}.{patch}"))
}

impl PyFieldMeta {
    pub fn from_info(f: &FieldInfo) -> Self {
        Self {
            field_id: f.id,
            name: Some(f.name.to_string()),
            tag: f.tag.to_string(),
            field_type: char::from(f.field_type).to_string(),
            size: f.size,
            scope: f.scope,
            entity_level: f.entity_level,
            nvml_field_id: f.nvml_field_id,
            short_name: f.short_name.to_string(),
            unit: f.unit.to_string(),
            width: f.width,
            deprecated_aliases: f.deprecated_aliases.iter().map(|s| s.to_string()).collect(),
            internal: f.internal,
            newer_names: f.newer_names.iter().map(|s| s.to_string()).collect(),
            since: release_text(f.since),
        }
    }

    /// What the library reported, completed from the table where the library says nothing.
    pub fn from_meta(m: &dcgm::FieldMeta) -> Self {
        let info = sys::field_by_id(m.id.0);
        let field_type = match m.field_type {
            dcgm::FieldType::Int64 => 'i',
            dcgm::FieldType::Double => 'd',
            dcgm::FieldType::String => 's',
            dcgm::FieldType::Binary => 'b',
            dcgm::FieldType::Timestamp => 't',
            dcgm::FieldType::Unknown(c) => char::from(c),
        };
        Self {
            field_id: m.id.0,
            name: info.map(|f| f.name.to_string()),
            tag: m.tag.clone(),
            field_type: field_type.to_string(),
            size: info.map_or(0, |f| f.size),
            scope: if m.global {
                sys::DCGM_FS_GLOBAL
            } else {
                sys::DCGM_FS_ENTITY
            },
            entity_level: m.entity_level.raw(),
            nvml_field_id: info.map_or(0, |f| f.nvml_field_id),
            short_name: m.short_name.clone(),
            unit: m.unit.clone(),
            width: m.width,
            deprecated_aliases: info
                .map(|f| f.deprecated_aliases.iter().map(|s| s.to_string()).collect())
                .unwrap_or_default(),
            internal: info.is_some_and(|f| f.internal),
            newer_names: info
                .map(|f| f.newer_names.iter().map(|s| s.to_string()).collect())
                .unwrap_or_default(),
            since: release_text(info.and_then(|f| f.since)),
        }
    }
}

#[pymethods]
impl PyFieldMeta {
    /// Names the field had before DCGM 4.6.
    #[getter]
    fn deprecated_aliases(&self) -> Vec<String> {
        self.deprecated_aliases.clone()
    }

    /// Names DCGM 4.6.1 gave the field (the same id).
    #[getter]
    fn newer_names(&self) -> Vec<String> {
        self.newer_names.clone()
    }

    /// Whether the field is global rather than per entity.
    #[getter]
    fn is_global(&self) -> bool {
        self.scope == sys::DCGM_FS_GLOBAL
    }

    /// pydcgm's spelling of `field_id`.
    #[getter(fieldId)]
    fn field_id_upstream(&self) -> u16 {
        self.field_id
    }

    /// pydcgm's spelling of `field_type`.
    #[getter(fieldType)]
    fn field_type_upstream(&self) -> String {
        self.field_type.clone()
    }

    /// pydcgm's spelling of `entity_level`.
    #[getter(entityLevel)]
    fn entity_level_upstream(&self) -> u32 {
        self.entity_level
    }

    /// pydcgm's spelling of `nvml_field_id`.
    #[getter(nvmlFieldId)]
    fn nvml_field_id_upstream(&self) -> i32 {
        self.nvml_field_id
    }

    fn __repr__(&self) -> String {
        format!(
            "FieldMeta(field_id={}, name={}, tag={:?}, field_type={:?}, unit={:?})",
            self.field_id,
            self.name
                .as_deref()
                .map_or("None".to_string(), |n| format!("{n:?}")),
            self.tag,
            self.field_type,
            self.unit
        )
    }
}

/// Every field of the table, in id order.
#[pyfunction]
pub fn field_table() -> Vec<PyFieldMeta> {
    sys::FIELD_TABLE
        .iter()
        .map(PyFieldMeta::from_info)
        .collect()
}

/// The table entry of a field by id, 4.6 name, pre-4.6 alias or tag; `None` if unknown.
#[pyfunction]
pub fn field_info(key: &Bound<'_, PyAny>) -> PyResult<Option<PyFieldMeta>> {
    Ok(lookup_field(key)?.map(PyFieldMeta::from_info))
}

fn lookup_field(key: &Bound<'_, PyAny>) -> PyResult<Option<&'static FieldInfo>> {
    if key.is_instance_of::<PyInt>() && !key.is_instance_of::<pyo3::types::PyBool>() {
        let n: i64 = key.extract()?;
        return Ok(u16::try_from(n).ok().and_then(sys::field_by_id));
    }
    if let Ok(s) = key.cast::<PyString>() {
        let s = s.to_cow()?;
        return Ok(FieldId::parse(&s).ok().and_then(|f| sys::field_by_id(f.0)));
    }
    Err(PyTypeError::new_err(format!(
        "a field is an int id or a str name/tag, not {}",
        key.get_type().name()?
    )))
}

/// A field argument: an int id or a name, alias or tag. Unknown fields raise
/// `DCGMError_UnknownField`.
pub fn extract_field(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<FieldId> {
    match lookup_field(obj)? {
        Some(f) => Ok(FieldId(f.id)),
        None => Err(errors::unknown_field(
            py,
            format!(
                "unknown field {}: use a DCGM_FI_* constant of dcgm.fields (4.6 name or pre-4.6 \
                 alias), a tag such as 'gpu_temp', or a numeric id",
                obj.repr()?
            ),
        )),
    }
}

/// A list of field arguments.
pub fn extract_fields(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<FieldId>> {
    if obj.is_instance_of::<PyString>() {
        return Ok(vec![extract_field(py, obj)?]);
    }
    obj.try_iter()?.map(|f| extract_field(py, &f?)).collect()
}
