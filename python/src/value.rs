//! Field values as Python objects: numbers, strings and bytes as themselves, "no value" as a
//! `dcgm.Blank` member, never as a sentinel number.

use dcgm::{BlankKind, FieldValue, Value};
use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyBytes;

use crate::tables::entity_tuple;

static BLANK_ENUM: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The `dcgm.Blank` member of a blank kind.
pub fn blank_member(py: Python<'_>, kind: BlankKind) -> PyResult<Py<PyAny>> {
    let blank = BLANK_ENUM.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("dcgm._enums")?.getattr("Blank")?.unbind())
    })?;
    let name = match kind {
        BlankKind::Blank => "BLANK",
        BlankKind::NotFound => "NOT_FOUND",
        BlankKind::NotSupported => "NOT_SUPPORTED",
        BlankKind::NotPermissioned => "NOT_PERMISSIONED",
    };
    Ok(blank.bind(py).getattr(name)?.unbind())
}

/// The value as int, float, str or bytes; `None` for a blank.
pub fn value_to_py(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    match v {
        Value::Int(i) => i.into_py_any(py),
        Value::Double(d) => d.into_py_any(py),
        Value::String(s) => s.into_py_any(py),
        Value::Bytes(b) => Ok(PyBytes::new(py, b).into_any().unbind()),
        Value::Blank(_) => Ok(py.None()),
    }
}

/// The value, or its `dcgm.Blank` member for a blank (for the plain `{key: value}` dicts).
pub fn value_or_blank(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    match v {
        Value::Blank(k) => blank_member(py, *k),
        other => value_to_py(py, other),
    }
}

/// One sample of one field of one entity.
#[pyclass(frozen, name = "FieldValue", module = "dcgm")]
pub struct PyFieldValue {
    pub inner: FieldValue,
}

impl PyFieldValue {
    pub fn new(inner: FieldValue) -> Self {
        Self { inner }
    }
}

/// Turns values into a Python list.
pub fn values_to_list(py: Python<'_>, values: Vec<FieldValue>) -> PyResult<Vec<Py<PyFieldValue>>> {
    values
        .into_iter()
        .map(|v| Py::new(py, PyFieldValue::new(v)))
        .collect()
}

#[pymethods]
impl PyFieldValue {
    /// `DCGM_FE_*` of the entity.
    #[getter]
    fn entity_group(&self) -> u32 {
        self.inner.entity.group.raw()
    }

    #[getter]
    fn entity_id(&self) -> u32 {
        self.inner.entity.id
    }

    /// `(entity_group, entity_id)`.
    #[getter]
    fn entity(&self) -> (u32, u32) {
        entity_tuple(self.inner.entity)
    }

    #[getter]
    fn field_id(&self) -> u16 {
        self.inner.field.0
    }

    /// The field's tag (`gpu_temp`), the key of the by-name dicts.
    #[getter]
    fn field_tag(&self) -> String {
        self.inner.field.tag()
    }

    /// The field's DCGM 4.6 name (`DCGM_FI_DEV_GPU_TEMP_CELSIUS`).
    #[getter]
    fn field_name(&self) -> String {
        self.inner.field.name()
    }

    /// Microseconds since the Unix epoch (0 when there is no sample).
    #[getter]
    fn timestamp_us(&self) -> i64 {
        self.inner.timestamp_us
    }

    /// Seconds since the Unix epoch, as a float (for `datetime.fromtimestamp`).
    #[getter]
    fn timestamp(&self) -> f64 {
        self.inner.timestamp_us as f64 / 1e6
    }

    /// int, float, str or bytes; `None` when blank (see `blank`).
    #[getter]
    fn value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        value_to_py(py, &self.inner.value)
    }

    /// Why there is no value (a `dcgm.Blank` member), or `None` when there is one.
    #[getter]
    fn blank(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.inner.value {
            Value::Blank(k) => blank_member(py, k),
            _ => Ok(py.None()),
        }
    }

    #[getter]
    fn is_blank(&self) -> bool {
        self.inner.value.is_blank()
    }

    /// The library's per-value status (`DCGM_ST_OK` when there is a sample). For the samples
    /// of `Reader.since_last_call`, which come without one, it is derived from `blank`.
    #[getter]
    fn status(&self) -> i32 {
        self.inner.status
    }

    /// pydcgm's `DcgmFieldValue.ts`.
    #[getter]
    fn ts(&self) -> i64 {
        self.inner.timestamp_us
    }

    /// pydcgm's `DcgmFieldValue.fieldId`.
    #[getter(fieldId)]
    fn field_id_upstream(&self) -> u16 {
        self.inner.field.0
    }

    /// pydcgm's `DcgmFieldValue.isBlank`.
    #[getter(isBlank)]
    fn is_blank_upstream(&self) -> bool {
        self.inner.value.is_blank()
    }

    /// pydcgm's `DcgmFieldValue.fieldType` (`'i'`, `'d'`, `'s'`, `'b'` or `'t'`).
    #[getter(fieldType)]
    fn field_type_upstream(&self) -> String {
        self.inner
            .field
            .info()
            .map_or('i', |f| char::from(f.field_type))
            .to_string()
    }

    /// pydcgm's `entityGroupId`.
    #[getter(entityGroupId)]
    fn entity_group_upstream(&self) -> u32 {
        self.inner.entity.group.raw()
    }

    /// pydcgm's `entityId`.
    #[getter(entityId)]
    fn entity_id_upstream(&self) -> u32 {
        self.inner.entity.id
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let shown = match &self.inner.value {
            Value::Blank(k) => format!("{k:?}"),
            v => value_to_py(py, v)?.bind(py).repr()?.to_string(),
        };
        Ok(format!(
            "FieldValue({} {}, {}={}, ts={})",
            self.inner.entity.group.name(),
            self.inner.entity.id,
            self.inner.field.tag(),
            shown,
            self.inner.timestamp_us
        ))
    }
}
