//! `dcgm.Reader`: dcgm-reader's one-call reads, snake_case. The upstream-compatible
//! `dcgm.DcgmReader` (Python) is built on it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use dcgm::raw::sys::{
    DCGM_ST_BADPARAM, DCGM_ST_NO_DATA, DCGM_ST_NO_PERMISSION, DCGM_ST_NOT_SUPPORTED, DCGM_ST_OK,
};
use dcgm::{BlankKind, EntityGroup, FieldId, FieldValue, OperationMode, Value};
use dcgm_reader::{ChosenMode, Connection, Reader, Snapshot};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::duration::seconds;
use crate::entity::{entity_tuple, extract_entities};
use crate::errors::{self, ResultExt};
use crate::field::extract_fields;
use crate::sim;
use crate::slot::Slot;
use crate::value::{PyFieldValue, value_or_blank};

/// Every watched field of every GPU (or entity) in one call.
#[pyclass(frozen, name = "Reader", module = "dcgm")]
pub struct PyReader {
    inner: Slot<Reader>,
    /// The read buffer of `latest_gpu_dict`, kept between calls.
    buf: std::sync::Mutex<Vec<FieldValue>>,
    /// Field tags as Python strings, made once per field.
    tags: std::sync::Mutex<std::collections::HashMap<u16, Py<PyString>>>,
}

impl PyReader {
    /// A fresh snapshot, read with the GIL released; `None` if the reader is closed.
    fn latest_or_closed(&self, py: Python<'_>) -> PyResult<Option<Snapshot>> {
        self.inner
            .try_map_detached(py, Reader::latest)
            .transpose()
            .py(py)
    }

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

/// `{gpu_id: {key(field): value}}` of the GPUs of a snapshot (as `Reader::latest_by_id` and
/// `Reader::latest_by_name` make it, keeping the field id to decode binary values).
fn by_gpu<'py, K: IntoPyObject<'py>>(
    py: Python<'py>,
    snap: Snapshot,
    key: impl Fn(FieldId) -> K,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (e, fields) in snap {
        if e.group != EntityGroup::Gpu {
            continue;
        }
        let d = PyDict::new(py);
        for (f, v) in fields {
            d.set_item(key(f), value_or_blank(py, f, &v.value)?)?;
        }
        out.set_item(e.id, d)?;
    }
    Ok(out)
}

/// A snapshot as `{(entity_group, entity_id): {field_id: FieldValue}}`.
fn snapshot_dict<'py>(py: Python<'py>, snap: Snapshot) -> PyResult<Bound<'py, PyDict>> {
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

/// How long a wait with the GIL released lasts at most before signals (Ctrl-C) are checked
/// and the reader is looked at again.
const TICK: Duration = Duration::from_millis(50);

/// Waits until `deadline` with the GIL released, checking for signals every [`TICK`]; returns
/// `false` early if `reader` is closed meanwhile.
fn wait_until(py: Python<'_>, reader: &PyReader, deadline: Instant) -> PyResult<bool> {
    loop {
        if reader.inner.is_closed() {
            return Ok(false);
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(true);
        }
        let nap = (deadline - now).min(TICK);
        py.detach(move || std::thread::sleep(nap));
        py.check_signals()?;
    }
}

/// The deadline of the read after one due at `due`: one `interval` later, or now if that has
/// passed already (a slow handler delays the next read; missed reads are not made up).
fn next_due(due: Instant, interval: Duration) -> Instant {
    (due + interval).max(Instant::now())
}

/// The snapshots of `Reader.snapshots`: an iterator of
/// `{(entity_group, entity_id): {field_id: FieldValue}}`, one every `interval` seconds (the first
/// at once). It ends after `count` snapshots, or when the reader is closed.
#[pyclass(name = "Snapshots", module = "dcgm")]
pub struct PySnapshots {
    reader: Py<PyReader>,
    interval: Duration,
    remaining: Option<u64>,
    due: Instant,
}

#[pymethods]
impl PySnapshots {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        if self.remaining == Some(0) {
            return Ok(None);
        }
        let reader = self.reader.clone_ref(py);
        let reader = reader.get();
        if !wait_until(py, reader, self.due)? {
            return Ok(None);
        }
        let Some(snap) = reader.latest_or_closed(py)? else {
            return Ok(None);
        };
        self.due = next_due(self.due, self.interval);
        if let Some(n) = self.remaining.as_mut() {
            *n -= 1;
        }
        snapshot_dict(py, snap).map(Some)
    }

    /// Seconds between snapshots.
    #[getter]
    fn interval(&self) -> f64 {
        self.interval.as_secs_f64()
    }

    /// Snapshots still to come (`None`: no limit).
    #[getter]
    fn remaining(&self) -> Option<u64> {
        self.remaining
    }
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
            buf: Default::default(),
            tags: Default::default(),
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
        snapshot_dict(py, snap)
    }

    /// `{gpu_id: {field id, or its tag: value}}`, built straight from the read buffer (no
    /// snapshot, no `FieldValue` objects): what `DcgmReader.GetLatestGpuValuesAsFieldIdDict`
    /// and `...FieldNameDict` return. Blanks are left out with `ignore_blank`, otherwise
    /// they are their `dcgm.Blank` member.
    #[pyo3(signature = (by_id=true, ignore_blank=true))]
    fn latest_gpu_dict<'py>(
        &self,
        py: Python<'py>,
        by_id: bool,
        ignore_blank: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let lock = |m: &std::sync::Mutex<Vec<FieldValue>>| {
            std::mem::take(&mut *m.lock().unwrap_or_else(|p| p.into_inner()))
        };
        let mut buf = lock(&self.buf);
        buf = self.with(py, move |r| {
            r.latest_values_into(&mut buf)?;
            Ok(buf)
        })?;
        let out = PyDict::new(py);
        let mut cur: Option<(u32, Bound<'py, PyDict>)> = None;
        let mut tags = self.tags.lock().unwrap_or_else(|p| p.into_inner());
        for v in &buf {
            if v.entity.group != EntityGroup::Gpu || (ignore_blank && v.value.is_blank()) {
                continue;
            }
            let id = v.entity.id;
            if cur.as_ref().is_none_or(|(c, _)| *c != id) {
                // Values come entity by entity; an entity seen before (a second field group)
                // continues its dict.
                let d = match out.get_item(id)? {
                    Some(d) => d.cast_into::<PyDict>()?,
                    None => {
                        let d = PyDict::new(py);
                        out.set_item(id, &d)?;
                        d
                    }
                };
                cur = Some((id, d));
            }
            let d = &cur.as_ref().expect("set above").1;
            let value = value_or_blank(py, v.field, &v.value)?;
            if by_id {
                d.set_item(v.field.0, value)?;
            } else {
                let tag = tags
                    .entry(v.field.0)
                    .or_insert_with(|| PyString::new(py, &v.field.tag()).unbind());
                d.set_item(tag.bind(py), value)?;
            }
        }
        drop(tags);
        *self.buf.lock().unwrap_or_else(|p| p.into_inner()) = buf;
        Ok(out)
    }

    /// `{gpu_id: {field_id: value}}` (a blank value, when kept, is its `dcgm.Blank` member).
    fn latest_by_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let snap = self.with(py, Reader::latest)?;
        by_gpu(py, snap, |f| f.0)
    }

    /// `{gpu_id: {field_tag: value}}`.
    fn latest_by_name<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let snap = self.with(py, Reader::latest)?;
        by_gpu(py, snap, FieldId::tag)
    }

    /// Calls `handler(snapshot)` with a fresh `latest()` snapshot every `interval` seconds
    /// (the first at once), `count` times or, with `count=None`, until `handler` returns
    /// `False` or the reader is closed. The GIL is released while reading and waiting; the
    /// reader is not locked while `handler` runs, so it may use the reader. An exception
    /// raised by `handler` stops the loop and propagates. Returns how many snapshots were
    /// handled.
    #[pyo3(signature = (interval, handler, count=None))]
    fn run(
        &self,
        py: Python<'_>,
        interval: f64,
        handler: &Bound<'_, PyAny>,
        count: Option<u64>,
    ) -> PyResult<u64> {
        let interval = seconds(py, "interval", interval)?;
        if !handler.is_callable() {
            return Err(PyTypeError::new_err("handler must be callable"));
        }
        let mut due = Instant::now();
        let mut n = 0;
        while count.is_none_or(|c| n < c) {
            if !wait_until(py, self, due)? {
                break;
            }
            let Some(snap) = self.latest_or_closed(py)? else {
                break;
            };
            n += 1;
            let go_on = handler.call1((snapshot_dict(py, snap)?,))?;
            if matches!(go_on.extract::<bool>(), Ok(false)) {
                break;
            }
            due = next_due(due, interval);
        }
        Ok(n)
    }

    /// An iterator of `latest()` snapshots, one every `interval` seconds (the first at once),
    /// `count` of them or, with `count=None`, until the reader is closed. The GIL is released
    /// while reading and waiting.
    #[pyo3(signature = (interval, count=None))]
    fn snapshots(
        slf: Py<Self>,
        py: Python<'_>,
        interval: f64,
        count: Option<u64>,
    ) -> PyResult<PySnapshots> {
        Ok(PySnapshots {
            reader: slf,
            interval: seconds(py, "interval", interval)?,
            remaining: count,
            due: Instant::now(),
        })
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
                                status: dcgm::ReturnCode::from_raw(status),
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
