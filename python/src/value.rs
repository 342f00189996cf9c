//! Field values as Python objects: numbers, strings and bytes as themselves, "no value" as a
//! `dcgm.Blank` member, never as a sentinel number. The binary fields DCGM documents are
//! decoded: `DCGM_FI_DEV_COMPUTE_PIDS` / `DCGM_FI_DEV_GRAPHICS_PIDS` into
//! `dcgm.RunningProcess`, `DCGM_FI_DEV_PROCESS_ACCOUNTING_STATS` into `dcgm.AccountingStats`;
//! other blobs (and blobs that do not decode) stay `bytes`.

use dcgm::raw::Binding;
use dcgm::raw::sys::{
    DCGM_FI_DEV_COMPUTE_PIDS, DCGM_FI_DEV_GRAPHICS_PIDS, DCGM_FI_DEV_PROCESS_ACCOUNTING_STATS,
    dcgmDevicePidAccountingStats_version1, dcgmRunningProcess_version1,
};
use dcgm::{AccountingStats, BlankKind, FieldId, FieldValue, RunningProcess, Value};
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyBytes;

use crate::entity::entity_tuple;

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
        _ => "BLANK",
    };
    Ok(blank.bind(py).getattr(name)?.unbind())
}

/// The value undecoded: int, float, str or bytes; `None` for a blank.
pub fn raw_value_to_py(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    match v {
        Value::Int(i) => i.into_py_any(py),
        Value::Double(d) => d.into_py_any(py),
        Value::String(s) => s.into_py_any(py),
        Value::Bytes(b) => Ok(PyBytes::new(py, b).into_any().unbind()),
        Value::Blank(_) => Ok(py.None()),
    }
}

/// The value of `field` as int, float, str, bytes, or the decoded struct of a known binary
/// field; `None` for a blank.
pub fn value_to_py(py: Python<'_>, field: FieldId, v: &Value) -> PyResult<Py<PyAny>> {
    if matches!(v, Value::Bytes(_)) {
        match field.0 {
            DCGM_FI_DEV_COMPUTE_PIDS | DCGM_FI_DEV_GRAPHICS_PIDS => {
                if let Some(p) = v.running_process() {
                    return Py::new(py, PyRunningProcess { inner: p }).map(Py::into_any);
                }
            }
            DCGM_FI_DEV_PROCESS_ACCOUNTING_STATS => {
                if let Some(a) = v.accounting_stats() {
                    return Py::new(py, PyAccountingStats { inner: a }).map(Py::into_any);
                }
            }
            _ => {}
        }
    }
    raw_value_to_py(py, v)
}

/// The value, or its `dcgm.Blank` member for a blank (for the plain `{key: value}` dicts).
pub fn value_or_blank(py: Python<'_>, field: FieldId, v: &Value) -> PyResult<Py<PyAny>> {
    match v {
        Value::Blank(k) => blank_member(py, *k),
        other => value_to_py(py, field, other),
    }
}

/// Writes the `#[pymethods]` of a record class over a `dcgm` struct held in `inner`: one
/// getter per field under its snake_case name and, after `=>`, under pydcgm's name too; a
/// `__repr__` listing the fields; then the class's other methods. A macro because a pyo3
/// getter has exactly one Python name, and the two names of a field must not drift apart.
macro_rules! record_methods {
    (
        $class:ident as $py_name:literal {
            $( $(#[doc = $doc:literal])* $field:ident: $ty:ty $(=> $upstream:ident)?; )*
        }
        $($rest:tt)*
    ) => {
        #[pymethods]
        impl $class {
            $(
                $(#[doc = $doc])*
                #[getter]
                fn $field(&self) -> $ty {
                    self.inner.$field
                }

                $(
                    #[doc = concat!("pydcgm's `", stringify!($upstream), "`: `", stringify!($field), "`.")]
                    #[getter]
                    #[allow(non_snake_case)]
                    fn $upstream(&self) -> $ty {
                        self.inner.$field
                    }
                )?
            )*

            fn __repr__(&self) -> String {
                let fields = [$(format!("{}={}", stringify!($field), self.inner.$field)),*];
                format!("{}({})", $py_name, fields.join(", "))
            }

            $($rest)*
        }
    };
}

/// A process on a GPU: a value of `DCGM_FI_DEV_COMPUTE_PIDS` or `DCGM_FI_DEV_GRAPHICS_PIDS`
/// (pydcgm's `c_dcgmRunningProcess_t`, whose attribute names it also has).
#[pyclass(
    frozen,
    eq,
    hash,
    skip_from_py_object,
    name = "RunningProcess",
    module = "dcgm"
)]
#[derive(PartialEq, Eq, Hash)]
pub struct PyRunningProcess {
    inner: RunningProcess,
}

impl PyRunningProcess {
    pub fn wrap(inner: RunningProcess) -> Self {
        Self { inner }
    }
}

record_methods! {
    PyRunningProcess as "RunningProcess" {
        /// The process id.
        pid: u32;
        /// GPU memory the process uses, in bytes.
        memory_used_bytes: u64 => memoryUsed;
    }

    #[new]
    fn new(pid: u32, memory_used_bytes: u64) -> Self {
        Self {
            inner: RunningProcess {
                pid,
                memory_used_bytes,
            },
        }
    }

    /// Decodes a `dcgmRunningProcess_v1` blob (the bytes of a PID-list value); raises
    /// `ValueError` if it is not one.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Value::Bytes(data.to_vec())
            .running_process()
            .map(|inner| Self { inner })
            .ok_or_else(|| PyValueError::new_err("not a dcgmRunningProcess_v1 record"))
    }

    /// pydcgm's `version`: the struct's version word.
    #[getter]
    fn version(&self) -> u32 {
        dcgmRunningProcess_version1
    }
}

/// Accounting statistics of a process: a value of `DCGM_FI_DEV_PROCESS_ACCOUNTING_STATS`
/// (pydcgm's `c_dcgmDevicePidAccountingStats_v1`, whose attribute names it also has).
#[pyclass(
    frozen,
    eq,
    hash,
    skip_from_py_object,
    name = "AccountingStats",
    module = "dcgm"
)]
#[derive(PartialEq, Eq, Hash)]
pub struct PyAccountingStats {
    inner: AccountingStats,
}

record_methods! {
    PyAccountingStats as "AccountingStats" {
        /// The process id.
        pid: u32;
        /// Percent of time the GPU was busy while the process ran.
        gpu_utilization: u32 => gpuUtilization;
        /// Percent of time the memory was busy while the process ran.
        memory_utilization: u32 => memoryUtilization;
        /// Peak GPU memory use, in bytes.
        max_memory_bytes: u64 => maxMemoryUsage;
        /// Start, in microseconds since the Unix epoch.
        start_time_us: u64 => startTimestamp;
        /// Run time, in microseconds.
        active_time_us: u64 => activeTimeUsec;
    }

    #[new]
    #[pyo3(signature = (pid, gpu_utilization=0, memory_utilization=0, max_memory_bytes=0, start_time_us=0, active_time_us=0))]
    fn new(
        pid: u32,
        gpu_utilization: u32,
        memory_utilization: u32,
        max_memory_bytes: u64,
        start_time_us: u64,
        active_time_us: u64,
    ) -> Self {
        Self {
            inner: AccountingStats {
                pid,
                gpu_utilization,
                memory_utilization,
                max_memory_bytes,
                start_time_us,
                active_time_us,
            },
        }
    }

    /// Decodes a `dcgmDevicePidAccountingStats_v1` blob; raises `ValueError` if it is not one.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Value::Bytes(data.to_vec())
            .accounting_stats()
            .map(|inner| Self { inner })
            .ok_or_else(|| PyValueError::new_err("not a dcgmDevicePidAccountingStats_v1 record"))
    }

    /// pydcgm's `version`: the struct's version word.
    #[getter]
    fn version(&self) -> u32 {
        dcgmDevicePidAccountingStats_version1
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

    /// int, float, str or bytes; a `RunningProcess` or `AccountingStats` for the binary
    /// fields DCGM documents; `None` when blank (see `blank`).
    #[getter]
    fn value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        value_to_py(py, self.inner.field, &self.inner.value)
    }

    /// The value undecoded: a binary field as `bytes`, anything else as `value`.
    #[getter]
    fn raw_value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        raw_value_to_py(py, &self.inner.value)
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
        self.inner.status.raw()
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
        dcgm::raw::sys::field_by_id(self.inner.field.0)
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
            v => value_to_py(py, self.inner.field, v)?
                .bind(py)
                .repr()?
                .to_string(),
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
