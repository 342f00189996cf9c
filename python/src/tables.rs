//! The tables the Python package is generated from at import: fields (from
//! `dcgm-sys/data/fields.tsv` through `dcgm_sys::FIELD_TABLE`), return codes and entity groups,
//! plus argument conversion for fields and entities.

use dcgm::raw::Binding;
use dcgm::raw::sys::{self as sys, FieldInfo};
use dcgm::{Entity, EntityGroup, FieldId};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString, PyTuple};

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

/// Every `dcgmReturn_t` code: `(code, C name, description, pydcgm class suffix)`.
#[pyfunction]
pub fn return_codes() -> Vec<(i32, &'static str, &'static str, String)> {
    sys::RETURN_CODES
        .iter()
        .map(|(c, n, d)| (*c, *n, *d, sys::python_error_suffix(n)))
        .collect()
}

/// The class-name suffix pydcgm gives the exception of a return code's C name.
#[pyfunction]
pub fn python_error_suffix(c_name: &str) -> String {
    sys::python_error_suffix(c_name)
}

/// Every entity group: `(constant name, value, DCGM's display name)`.
#[pyfunction]
pub fn entity_groups() -> Vec<(&'static str, u32, &'static str)> {
    let all = [
        ("DCGM_FE_NONE", sys::DCGM_FE_NONE),
        ("DCGM_FE_GPU", sys::DCGM_FE_GPU),
        ("DCGM_FE_VGPU", sys::DCGM_FE_VGPU),
        ("DCGM_FE_SWITCH", sys::DCGM_FE_SWITCH),
        ("DCGM_FE_GPU_I", sys::DCGM_FE_GPU_I),
        ("DCGM_FE_GPU_CI", sys::DCGM_FE_GPU_CI),
        ("DCGM_FE_LINK", sys::DCGM_FE_LINK),
        ("DCGM_FE_CPU", sys::DCGM_FE_CPU),
        ("DCGM_FE_CPU_CORE", sys::DCGM_FE_CPU_CORE),
        ("DCGM_FE_CONNECTX", sys::DCGM_FE_CONNECTX),
    ];
    all.iter()
        .map(|(n, v)| (*n, *v, sys::entity_group_name(*v)))
        .collect()
}

/// The number of entity groups (`DCGM_FE_COUNT`).
pub const ENTITY_GROUP_COUNT: u32 = sys::DCGM_FE_COUNT;

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

/// An entity argument: an `(entityGroupId, entityId)` pair, or an object with
/// `entityGroupId`/`entityId` (pydcgm's `c_dcgmGroupEntityPair_t`) or
/// `entity_group`/`entity_id` attributes.
pub fn extract_entity(obj: &Bound<'_, PyAny>) -> PyResult<Entity> {
    let pair = |g: Bound<'_, PyAny>, i: Bound<'_, PyAny>| -> PyResult<Entity> {
        let g: u32 = g.extract()?;
        let i: u32 = i.extract()?;
        Ok(Entity::new(EntityGroup::from_raw(g), i))
    };
    if let Ok(t) = obj.cast::<PyTuple>()
        && t.len() == 2
    {
        return pair(t.get_item(0)?, t.get_item(1)?);
    }
    for (g, i) in [("entityGroupId", "entityId"), ("entity_group", "entity_id")] {
        if obj.hasattr(g)? && obj.hasattr(i)? {
            return pair(obj.getattr(g)?, obj.getattr(i)?);
        }
    }
    if let Ok(l) = obj.extract::<(u32, u32)>() {
        return Ok(Entity::new(EntityGroup::from_raw(l.0), l.1));
    }
    Err(PyTypeError::new_err(format!(
        "an entity is an (entityGroupId, entityId) pair or an object with entityGroupId and \
         entityId attributes, not {}",
        obj.repr()?
    )))
}

/// A list of entity arguments.
pub fn extract_entities(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Entity>> {
    obj.try_iter()?.map(|e| extract_entity(&e?)).collect()
}

/// An entity as a Python pair.
pub fn entity_tuple(e: Entity) -> (u32, u32) {
    (e.group.raw(), e.id)
}

/// The named health systems: `(name, bit)`, in declaration order, `ALL` last.
#[pyfunction]
pub fn health_systems() -> Vec<(&'static str, u32)> {
    named_flags::<dcgm::HealthSystems>()
}

/// The policy conditions: `(name, bit)`, in declaration order, `ALL` last.
#[pyfunction]
pub fn policy_conditions() -> Vec<(&'static str, u32)> {
    named_flags::<dcgm::PolicyCondition>()
}

/// Every named constant of a flags type (the unnamed catch-all that keeps unknown bits is left
/// out).
fn named_flags<F: bitflags::Flags<Bits = u32>>() -> Vec<(&'static str, u32)> {
    F::FLAGS
        .iter()
        .filter(|f| !f.name().is_empty())
        .map(|f| (f.name(), f.value().bits()))
        .collect()
}
