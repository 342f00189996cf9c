//! `dcgm.Handle`: a connection to DCGM (embedded engine or nv-hostengine), and what it
//! creates: groups, field groups, the node-wide `System`; job statistics and profiling control.

use std::path::PathBuf;

use dcgm::{ConnectionKind, Handle, LogSeverity, OperationMode};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::duration::seconds;
use crate::entity::extract_entities;
use crate::errors::{self, ResultExt};
use crate::field::{extract_field, extract_fields};
use crate::group::{PyFieldGroup, PyGroup};
use crate::slot::Slot;
use crate::system::PySystem;
use crate::{module, sim, stats};

fn severity(py: Python<'_>, s: &str) -> PyResult<LogSeverity> {
    Ok(match s.to_ascii_lowercase().as_str() {
        "none" => LogSeverity::None,
        "fatal" => LogSeverity::Fatal,
        "error" => LogSeverity::Error,
        "warning" | "warn" => LogSeverity::Warning,
        "info" => LogSeverity::Info,
        "debug" => LogSeverity::Debug,
        "verbose" => LogSeverity::Verbose,
        other => {
            return Err(errors::badparam(
                py,
                format!(
                    "unknown log severity {other:?}: none, fatal, error, warning, info, debug or verbose"
                ),
            ));
        }
    })
}

/// A connection to DCGM: the engine embedded in this process, or an nv-hostengine.
#[pyclass(frozen, name = "Handle", module = "dcgm")]
pub struct PyHandle {
    inner: Slot<Handle>,
}

impl PyHandle {
    pub fn wrap(h: Handle) -> Self {
        Self {
            inner: Slot::new(h, "handle"),
        }
    }

    /// The handle, or `DCGMError_Uninitialized` once closed.
    pub fn get(&self, py: Python<'_>) -> PyResult<Handle> {
        self.inner.get(py)
    }
}

#[pymethods]
impl PyHandle {
    /// Starts (or shares) the DCGM engine inside this process. `simulate=True` loads the
    /// simulator shipped in this package; `library_path` loads that libdcgm file; otherwise
    /// libdcgm is searched for as NVIDIA's bindings do. `manual=True` selects MANUAL operation
    /// mode (nothing is sampled until `update_all_fields`). `deny_modules` (names such as
    /// `"Diag"` or `DcgmModuleId*` numbers, at most 16) keeps those modules from loading. The
    /// engine is shared: `manual`, the log options and `deny_modules` apply when this call
    /// starts it, not when it joins an engine another handle already started.
    #[staticmethod]
    #[pyo3(signature = (simulate=false, library_path=None, manual=false, *, log_file=None, log_severity=None, deny_modules=None))]
    #[allow(clippy::too_many_arguments)]
    fn embedded(
        py: Python<'_>,
        simulate: bool,
        library_path: Option<PathBuf>,
        manual: bool,
        log_file: Option<String>,
        log_severity: Option<String>,
        deny_modules: Option<Vec<Bound<'_, PyAny>>>,
    ) -> PyResult<Self> {
        let lib = sim::resolve(simulate, library_path).py(py)?;
        let mut b = Handle::builder().operation_mode(if manual {
            OperationMode::Manual
        } else {
            OperationMode::Auto
        });
        if let Some(p) = lib {
            b = b.library_path(p);
        }
        if let Some(f) = log_file {
            b = b.log_file(f);
        }
        if let Some(s) = log_severity {
            b = b.log_severity(severity(py, &s)?);
        }
        if let Some(mods) = deny_modules {
            if mods.len() > 16 {
                return Err(errors::badparam(
                    py,
                    format!("at most 16 modules can be denied, not {}", mods.len()),
                ));
            }
            let ids = mods
                .iter()
                .map(|m| module::module(py, m).map(|m| dcgm::raw::Binding::raw(&m)))
                .collect::<PyResult<Vec<u32>>>()?;
            b = b.deny_modules(&ids);
        }
        let h = py.detach(move || b.embedded()).py(py)?;
        Ok(Self::wrap(h))
    }

    /// Connects to an nv-hostengine: `host`, `host:port`, `/path/to/socket`, `tcp://…`,
    /// `unix://…`. `timeout` is in seconds.
    #[staticmethod]
    #[pyo3(signature = (address, *, simulate=false, library_path=None, timeout=None, persist_after_disconnect=false))]
    fn connect(
        py: Python<'_>,
        address: String,
        simulate: bool,
        library_path: Option<PathBuf>,
        timeout: Option<f64>,
        persist_after_disconnect: bool,
    ) -> PyResult<Self> {
        let lib = sim::resolve(simulate, library_path).py(py)?;
        let mut b = Handle::builder().persist_after_disconnect(persist_after_disconnect);
        if let Some(p) = lib {
            b = b.library_path(p);
        }
        if let Some(t) = timeout {
            b = b.timeout(seconds(py, "timeout", t)?);
        }
        let h = py.detach(move || b.connect(&address)).py(py)?;
        Ok(Self::wrap(h))
    }

    /// Whether the values come from the dcgm-sim simulator (label them so).
    #[getter]
    fn is_simulated(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.get(py)?.is_simulated())
    }

    /// `"embedded"` or `"standalone"`.
    #[getter]
    fn kind(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(match self.get(py)?.kind() {
            ConnectionKind::Embedded => "embedded",
            ConnectionKind::Standalone(_) => "standalone",
        })
    }

    /// The host engine's address, for a standalone connection.
    #[getter]
    fn address(&self, py: Python<'_>) -> PyResult<Option<String>> {
        Ok(match self.get(py)?.kind() {
            ConnectionKind::Embedded => None,
            ConnectionKind::Standalone(a) => Some(a.clone()),
        })
    }

    /// The libdcgm file in use.
    #[getter]
    fn library_path(&self, py: Python<'_>) -> PyResult<String> {
        Ok(dcgm::raw::library(&self.get(py)?)
            .path()
            .display()
            .to_string())
    }

    /// The DCGM release answering this handle (`"4.6.0"`): the library's, or for a
    /// connection the older of the library and the nv-hostengine; `None` when neither says.
    #[getter]
    fn dcgm_version(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let h = self.get(py)?;
        Ok(py.detach(move || h.dcgm_version()).map(|v| v.to_string()))
    }

    /// Whether the release answering this handle has `capability`, by name (`"diagnostics"`,
    /// `"topology_v2"`, … see `dcgm.CAPABILITIES`); `ValueError` for an unknown name. True
    /// where the release is unknown: the call then says so itself.
    fn supports(&self, py: Python<'_>, capability: &str) -> PyResult<bool> {
        let Some(c) = dcgm::Capability::from_name(capability) else {
            let names: Vec<_> = dcgm::Capability::ALL.iter().map(|c| c.name()).collect();
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown capability {capability:?}; known: {}",
                names.join(", ")
            )));
        };
        let h = self.get(py)?;
        Ok(py.detach(move || h.supports(c)))
    }

    /// Whether the loaded library knows field `field` (an id or a `DCGM_FI_*` name): a field
    /// added in a later release is unknown to an older one.
    fn knows_field(&self, py: Python<'_>, field: &Bound<'_, PyAny>) -> PyResult<bool> {
        // A number is asked as it is (an id this package's table lacks may be one a newer
        // library knows); a name must be one of the table's.
        let id = match field.extract::<u16>() {
            Ok(n) => dcgm::FieldId(n),
            Err(_) => extract_field(py, field)?,
        };
        Ok(self.get(py)?.knows_field(id))
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Node-wide queries.
    fn system(&self, py: Python<'_>) -> PyResult<PySystem> {
        Ok(PySystem::wrap(self.get(py)?.system()))
    }

    /// Creates a group of these GPUs and entities (empty if neither is given).
    #[pyo3(signature = (name, gpus=None, entities=None))]
    fn group(
        &self,
        py: Python<'_>,
        name: String,
        gpus: Option<Vec<u32>>,
        entities: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyGroup> {
        let h = self.get(py)?;
        let mut all: Vec<dcgm::Entity> = gpus
            .unwrap_or_default()
            .into_iter()
            .map(dcgm::Entity::gpu)
            .collect();
        if let Some(e) = entities {
            all.extend(extract_entities(e)?);
        }
        let g = py
            .detach(move || dcgm::Group::with_entities(&h, &name, &all))
            .py(py)?;
        Ok(PyGroup::wrap(g))
    }

    /// DCGM's built-in group of every GPU.
    fn all_gpus(&self, py: Python<'_>) -> PyResult<PyGroup> {
        Ok(PyGroup::wrap(dcgm::Group::all_gpus(&self.get(py)?)))
    }

    /// DCGM's built-in group of every NvSwitch.
    fn all_nvswitches(&self, py: Python<'_>) -> PyResult<PyGroup> {
        Ok(PyGroup::wrap(dcgm::Group::all_nvswitches(&self.get(py)?)))
    }

    /// Creates a field group of these fields (ids, names, aliases or tags; at most 127).
    fn field_group(
        &self,
        py: Python<'_>,
        name: String,
        fields: &Bound<'_, PyAny>,
    ) -> PyResult<PyFieldGroup> {
        let h = self.get(py)?;
        let ids = extract_fields(py, fields)?;
        let fg = py
            .detach(move || dcgm::FieldGroup::create(&h, &name, &ids))
            .py(py)?;
        Ok(PyFieldGroup::wrap(fg))
    }

    /// Samples every watched field now; with `wait`, returns once done.
    #[pyo3(signature = (wait=true))]
    fn update_all_fields(&self, py: Python<'_>, wait: bool) -> PyResult<()> {
        let h = self.get(py)?;
        py.detach(move || h.update_all_fields(wait)).py(py)
    }

    /// Runs the policy checks now (needed in MANUAL mode).
    fn policy_trigger(&self, py: Python<'_>) -> PyResult<()> {
        let h = self.get(py)?;
        py.detach(move || h.policy_trigger()).py(py)
    }

    /// Stops a running diagnostic.
    fn stop_diagnostic(&self, py: Python<'_>) -> PyResult<()> {
        let h = self.get(py)?;
        py.detach(move || h.stop_diagnostic()).py(py)
    }

    /// Stops recording job `job_id`; its statistics stay until removed.
    fn job_stop(&self, py: Python<'_>, job_id: String) -> PyResult<()> {
        let h = self.get(py)?;
        py.detach(move || h.job_stop(&job_id)).py(py)
    }

    /// The statistics of job `job_id`, as a dict.
    fn job_stats<'py>(&self, py: Python<'py>, job_id: String) -> PyResult<Bound<'py, PyDict>> {
        stats::job_stats(py, self.get(py)?, job_id)
    }

    /// Forgets job `job_id`.
    fn job_remove(&self, py: Python<'_>, job_id: String) -> PyResult<()> {
        let h = self.get(py)?;
        py.detach(move || h.job_remove(&job_id)).py(py)
    }

    /// Forgets every job.
    fn job_remove_all(&self, py: Python<'_>) -> PyResult<()> {
        let h = self.get(py)?;
        py.detach(move || h.job_remove_all()).py(py)
    }

    /// Pauses profiling so another tool can use the counters.
    fn profiling_pause(&self, py: Python<'_>) -> PyResult<()> {
        let h = self.get(py)?;
        py.detach(move || h.profiling_pause()).py(py)
    }

    /// Resumes profiling.
    fn profiling_resume(&self, py: Python<'_>) -> PyResult<()> {
        let h = self.get(py)?;
        py.detach(move || h.profiling_resume()).py(py)
    }

    /// Releases this object's reference on the connection and reports errors. Groups, field
    /// groups, watches and readers created from it keep the connection open until they are
    /// closed or collected.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.inner
            .close_with(py, Handle::close)
            .map_or(Ok(()), |r| r.py(py))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        self.inner.peek(|h| match h {
            None => "Handle(closed)".into(),
            Some(h) => format!(
                "Handle({}, library={:?}{})",
                match h.kind() {
                    ConnectionKind::Embedded => "embedded".to_string(),
                    ConnectionKind::Standalone(a) => format!("standalone {a:?}"),
                },
                dcgm::raw::library(h).path().display().to_string(),
                if h.is_simulated() { ", simulated" } else { "" }
            ),
        })
    }
}
