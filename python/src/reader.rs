//! `dcgm.Reader`: dcgm-reader's one-call reads, snake_case. The upstream-compatible
//! `dcgm.DcgmReader` (Python) is built on it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use dcgm::sys::{
    DCGM_ST_BADPARAM, DCGM_ST_NO_DATA, DCGM_ST_NO_PERMISSION, DCGM_ST_NOT_SUPPORTED, DCGM_ST_OK,
};
use dcgm::{BlankKind, FieldId, FieldValue, OperationMode, Value};
use dcgm_reader::{ChosenMode, Connection, Reader};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::errors::{self, ResultExt};
use crate::handle::seconds;
use crate::sim;
use crate::slot::Slot;
use crate::tables::{entity_tuple, extract_entities, extract_fields};
use crate::value::{PyFieldValue, value_or_blank};

/// Every watched field of every GPU (or entity) in one call.
#[pyclass(frozen, name = "Reader", module = "dcgm")]
pub struct PyReader {
    inner: Slot<Reader>,
}

impl PyReader {
    /// Runs `f` on the reader with the GIL released.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Reader) -> dcgm::Result<T> + Send,
    ) -> PyResult<T> {
        self.inner.map_detached(py, f)?.py(py)
    }
}

fn status_of(v: &Value) -> i32 {
    match v {
        Value::Blank(BlankKind::NotSupported) => DCGM_ST_NOT_SUPPORTED,
        Value::Blank(BlankKind::NotPermissioned) => DCGM_ST_NO_PERMISSION,
        Value::Blank(BlankKind::NotFound) => DCGM_ST_BADPARAM,
        Value::Blank(BlankKind::Blank) => DCGM_ST_NO_DATA,
        _ => DCGM_ST_OK,
    }
}

fn by_gpu<'py, K: IntoPyObject<'py> + Clone>(
    py: Python<'py>,
    m: BTreeMap<u32, BTreeMap<K, Value>>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (gpu, fields) in m {
        let d = PyDict::new(py);
        for (k, v) in fields {
            d.set_item(k, value_or_blank(py, &v)?)?;
        }
        out.set_item(gpu, d)?;
    }
    Ok(out)
}

#[pymethods]
impl PyReader {
    /// Reads `fields` (ids, names, aliases or tags; default: the 30 fields of NVIDIA's
    /// DcgmReader) every `update_interval` seconds. `field_intervals` (`{seconds: [fields]}`)
    /// takes precedence over both. Connection: `address` (an nv-hostengine), `embedded=True`,
    /// or by default a local nv-hostengine if one answers, else the embedded engine.
    /// `simulate=True` reads from the simulator shipped in this package.
    #[new]
    #[pyo3(signature = (fields=None, *, update_interval=10.0, max_keep_age=3600.0, ignore=None, gpu_ids=None, entities=None, field_intervals=None, ignore_blank=true, address=None, embedded=false, simulate=false, library_path=None, manual=false, field_group_name=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        fields: Option<&Bound<'_, PyAny>>,
        update_interval: f64,
        max_keep_age: f64,
        ignore: Option<&Bound<'_, PyAny>>,
        gpu_ids: Option<Vec<u32>>,
        entities: Option<&Bound<'_, PyAny>>,
        field_intervals: Option<&Bound<'_, PyDict>>,
        ignore_blank: bool,
        address: Option<String>,
        embedded: bool,
        simulate: bool,
        library_path: Option<PathBuf>,
        manual: bool,
        field_group_name: Option<String>,
    ) -> PyResult<Self> {
        let mut b = Reader::builder()
            .update_frequency(seconds(py, "update_interval", update_interval)?)
            .max_keep_age(seconds(py, "max_keep_age", max_keep_age)?)
            .ignore_blank(ignore_blank)
            .operation_mode(if manual {
                OperationMode::Manual
            } else {
                OperationMode::Auto
            });
        if let Some(f) = fields {
            b = b.fields(&extract_fields(py, f)?);
        }
        if let Some(i) = ignore {
            b = b.ignore(&extract_fields(py, i)?);
        }
        if let Some(g) = gpu_ids {
            b = b.gpu_ids(&g);
        }
        if let Some(e) = entities {
            b = b.entities(&extract_entities(e)?);
        }
        if let Some(m) = field_intervals {
            let mut map: BTreeMap<Duration, Vec<FieldId>> = BTreeMap::new();
            for (k, v) in m.iter() {
                let secs: f64 = k.extract()?;
                map.entry(seconds(py, "a field_intervals key", secs)?)
                    .or_default()
                    .extend(extract_fields(py, &v)?);
            }
            b = b.field_intervals(map);
        }
        b = b.connection(match (address, embedded) {
            (Some(_), true) => {
                return Err(errors::badparam(
                    py,
                    "give either address or embedded=True, not both",
                ));
            }
            (Some(a), false) => Connection::Remote(a),
            (None, true) => Connection::Embedded,
            (None, false) => Connection::Auto,
        });
        if let Some(p) = sim::resolve(simulate, library_path).py(py)? {
            b = b.library_path(p);
        }
        if let Some(n) = field_group_name {
            b = b.field_group_name(&n);
        }
        let r = b.build().py(py)?;
        Ok(Self {
            inner: Slot::new(r, "reader"),
        })
    }

    /// Connects now (otherwise the first read does).
    fn connect(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, Reader::connect)
    }

    /// Drops the connection and what the reader created in DCGM; the next read reconnects.
    fn disconnect(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |r| {
            r.shutdown();
            Ok(())
        })
    }

    /// Releases everything for good.
    fn close(&self, py: Python<'_>) {
        self.inner.close(py);
    }

    /// `"embedded"`, `"standalone"`, or `None` before connecting.
    #[getter]
    fn mode(&self, py: Python<'_>) -> PyResult<Option<&'static str>> {
        self.with(py, |r| {
            Ok(r.mode().map(|m| match m {
                ChosenMode::Embedded => "embedded",
                ChosenMode::Standalone(_) => "standalone",
            }))
        })
    }

    /// The host engine's address when standalone.
    #[getter]
    fn address(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.with(py, |r| {
            Ok(match r.mode() {
                Some(ChosenMode::Standalone(a)) => Some(a.clone()),
                _ => None,
            })
        })
    }

    /// Whether the values come from the simulator (`None` before connecting).
    #[getter]
    fn is_simulated(&self, py: Python<'_>) -> PyResult<Option<bool>> {
        self.with(py, |r| Ok(r.is_simulated()))
    }

    /// How many times a lost connection was re-established.
    #[getter]
    fn reconnects(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |r| Ok(r.reconnects()))
    }

    /// The GPUs read: `[{"gpu", "uuid", "pci_bus_id", "name"}]`.
    fn gpus<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let gpus = self.with(py, Reader::gpus)?;
        gpus.into_iter()
            .map(|g| {
                let d = PyDict::new(py);
                d.set_item("gpu", g.gpu)?;
                d.set_item("uuid", g.uuid)?;
                d.set_item("pci_bus_id", g.pci_bus_id)?;
                d.set_item("name", g.name)?;
                Ok(d)
            })
            .collect()
    }

    /// Latest value of every field for every entity:
    /// `{(entity_group, entity_id): {field_id: FieldValue}}`.
    fn latest<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let snap = self.with(py, Reader::latest)?;
        let out = PyDict::new(py);
        for (e, fields) in snap {
            let d = PyDict::new(py);
            for (f, v) in fields {
                d.set_item(f.0, Py::new(py, PyFieldValue::new(v))?)?;
            }
            out.set_item(entity_tuple(e), d)?;
        }
        Ok(out)
    }

    /// `{gpu_id: {field_id: value}}` (a blank value, when kept, is its `dcgm.Blank` member).
    fn latest_by_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.with(py, Reader::latest_by_id)?;
        let m: BTreeMap<u32, BTreeMap<u16, Value>> = m
            .into_iter()
            .map(|(g, f)| (g, f.into_iter().map(|(k, v)| (k.0, v)).collect()))
            .collect();
        by_gpu(py, m)
    }

    /// `{gpu_id: {field_tag: value}}`.
    fn latest_by_name<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.with(py, Reader::latest_by_name)?;
        by_gpu(py, m)
    }

    /// Every sample since the previous call (the first call: every sample kept so far), oldest
    /// first: `{(entity_group, entity_id): {field_id: [FieldValue, ...]}}`. Nothing is lost or
    /// repeated between calls.
    fn since_last_call<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = self.with(py, Reader::since_last_call)?;
        let out = PyDict::new(py);
        for (e, fields) in m {
            let d = PyDict::new(py);
            for (f, samples) in fields {
                let list: Vec<Py<PyFieldValue>> = samples
                    .into_iter()
                    .map(|s| {
                        let status = status_of(&s.value);
                        Py::new(
                            py,
                            PyFieldValue::new(FieldValue {
                                entity: e,
                                field: f,
                                timestamp_us: s.timestamp_us,
                                value: s.value,
                                status,
                            }),
                        )
                    })
                    .collect::<PyResult<_>>()?;
                d.set_item(f.0, list)?;
            }
            out.set_item(entity_tuple(e), d)?;
        }
        Ok(out)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        self.inner
            .try_peek(|r| match r {
                Some(r) => format!("Reader({:?})", r.mode()),
                None => "Reader(closed)".into(),
            })
            .unwrap_or_else(|| "Reader(busy)".into())
    }
}
