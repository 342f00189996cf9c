//! `dcgm.Handle` and `dcgm.System`.

use dcgm::raw::Binding;
use std::path::PathBuf;
use std::time::Duration;

use dcgm::{ConnectionKind, EntityGroup, Handle, LogSeverity, OperationMode};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{self, ResultExt};
use crate::group::{PyFieldGroup, PyGroup};
use crate::sim;
use crate::slot::Slot;
use crate::tables::{PyFieldMeta, entity_tuple, extract_entities, extract_fields};
use crate::value::{PyFieldValue, values_to_list};

/// Seconds (a float) to a `Duration`; negative, NaN or huge values raise `DCGMError_Badparam`.
pub fn seconds(py: Python<'_>, what: &str, s: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| {
        errors::badparam(
            py,
            format!("{what} must be a non-negative number of seconds, not {s}"),
        )
    })
}

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
                .map(|m| {
                    crate::config_topology_hierarchy::module(py, m)
                        .map(|m| dcgm::raw::Binding::raw(&m))
                })
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

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Node-wide queries.
    fn system(&self, py: Python<'_>) -> PyResult<PySystem> {
        Ok(PySystem {
            inner: self.get(py)?.system(),
        })
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
        crate::health_policy_diag_stats::job_stats(py, self.get(py)?, job_id)
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

/// Node-wide queries on a handle.
#[pyclass(frozen, name = "System", module = "dcgm")]
pub struct PySystem {
    inner: dcgm::System,
}

fn version_dict<'py>(py: Python<'py>, v: dcgm::VersionInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("version", v.version)?;
    let fields = PyDict::new(py);
    for (k, val) in v.fields {
        fields.set_item(k, val)?;
    }
    d.set_item("fields", fields)?;
    d.set_item("raw", v.raw)?;
    Ok(d)
}

#[pymethods]
impl PySystem {
    /// Every GPU id.
    fn gpu_ids(&self, py: Python<'_>) -> PyResult<Vec<u32>> {
        let s = self.inner.clone();
        py.detach(move || s.gpu_ids()).py(py)
    }

    /// GPU ids DCGM supports.
    fn supported_gpu_ids(&self, py: Python<'_>) -> PyResult<Vec<u32>> {
        let s = self.inner.clone();
        py.detach(move || s.supported_gpu_ids()).py(py)
    }

    /// Entities of one group (`DCGM_FE_*`) as `(entity_group, entity_id)` pairs.
    #[pyo3(signature = (group, only_supported=false))]
    fn entities(
        &self,
        py: Python<'_>,
        group: u32,
        only_supported: bool,
    ) -> PyResult<Vec<(u32, u32)>> {
        let s = self.inner.clone();
        let e = py
            .detach(move || s.entities(EntityGroup::from_raw(group), only_supported))
            .py(py)?;
        Ok(e.into_iter().map(entity_tuple).collect())
    }

    /// Identity and static properties of a GPU, as a dict.
    fn device_attributes<'py>(&self, py: Python<'py>, gpu: u32) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.clone();
        let a = py.detach(move || s.device_attributes(gpu)).py(py)?;
        let d = PyDict::new(py);
        d.set_item("name", a.name)?;
        d.set_item("brand", a.brand)?;
        d.set_item("uuid", a.uuid)?;
        d.set_item("serial", a.serial)?;
        d.set_item("pci_bus_id", a.pci_bus_id)?;
        d.set_item("pci_device_id", a.pci_device_id)?;
        d.set_item("vbios", a.vbios)?;
        d.set_item("inforom_image_version", a.inforom_image_version)?;
        d.set_item("driver_version", a.driver_version)?;
        d.set_item("memory_total_mib", a.memory_total_mib)?;
        d.set_item("memory_used_mib", a.memory_used_mib)?;
        d.set_item("memory_free_mib", a.memory_free_mib)?;
        d.set_item("power_limit_w", a.power_limit_w)?;
        d.set_item("power_limit_default_w", a.power_limit_default_w)?;
        d.set_item("power_limit_min_w", a.power_limit_min_w)?;
        d.set_item("power_limit_max_w", a.power_limit_max_w)?;
        d.set_item("power_limit_enforced_w", a.power_limit_enforced_w)?;
        d.set_item("slowdown_temp_c", a.slowdown_temp_c)?;
        d.set_item("shutdown_temp_c", a.shutdown_temp_c)?;
        d.set_item("persistence_mode", a.persistence_mode)?;
        d.set_item("mig_mode", a.mig_mode)?;
        d.set_item("confidential_compute", a.confidential_compute)?;
        d.set_item("supported_clocks", a.supported_clocks)?;
        Ok(d)
    }

    /// Field metadata as the library reports it (by id, name, alias or tag); `None` if the
    /// library does not know the field.
    fn field_meta(
        &self,
        py: Python<'_>,
        field: &Bound<'_, PyAny>,
    ) -> PyResult<Option<PyFieldMeta>> {
        let s = self.inner.clone();
        let m = if let Ok(id) = field.extract::<u16>() {
            py.detach(move || s.field_meta(dcgm::FieldId(id))).py(py)?
        } else {
            let name: String = field.extract()?;
            py.detach(move || s.field_meta_by_name(&name)).py(py)?
        };
        Ok(m.as_ref().map(PyFieldMeta::from_meta))
    }

    /// Version of the client library: `{"version": ..., "fields": {...}, "raw": ...}`.
    fn library_version<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.clone();
        let v = py.detach(move || s.library_version()).py(py)?;
        version_dict(py, v)
    }

    /// Version of the host engine.
    fn hostengine_version<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.clone();
        let v = py.detach(move || s.hostengine_version()).py(py)?;
        version_dict(py, v)
    }

    /// Whether the host engine reports itself healthy.
    fn hostengine_healthy(&self, py: Python<'_>) -> PyResult<bool> {
        let s = self.inner.clone();
        py.detach(move || s.hostengine_healthy()).py(py)
    }

    /// Samples every watched field now.
    #[pyo3(signature = (wait=true))]
    fn update_all_fields(&self, py: Python<'_>, wait: bool) -> PyResult<()> {
        let s = self.inner.clone();
        py.detach(move || s.update_all_fields(wait)).py(py)
    }

    /// Profiling metric groups of a GPU: `[{"major", "minor", "fields"}]`.
    fn profiling_metric_groups<'py>(
        &self,
        py: Python<'py>,
        gpu: u32,
    ) -> PyResult<Bound<'py, PyList>> {
        crate::config_topology_hierarchy::profiling_metric_groups_gpu(py, self.inner.clone(), gpu)
    }

    /// A GPU's CPU affinity and its paths to the other GPUs.
    fn device_topology<'py>(&self, py: Python<'py>, gpu: u32) -> PyResult<Bound<'py, PyDict>> {
        crate::config_topology_hierarchy::device_topology(py, self.inner.clone(), gpu)
    }

    /// Picks `count` of `candidates` (empty: every GPU) with the best connections between them.
    #[pyo3(signature = (count, candidates=Vec::new(), ignore_health=false))]
    fn select_gpus_by_topology(
        &self,
        py: Python<'_>,
        count: u32,
        candidates: Vec<u32>,
        ignore_health: bool,
    ) -> PyResult<Vec<u32>> {
        crate::config_topology_hierarchy::select_gpus_by_topology(
            py,
            self.inner.clone(),
            candidates,
            count,
            ignore_health,
        )
    }

    /// Link states: `{"gpus": {gpu: [state, ...]}, "switches": {switch: [...]}}`.
    fn nvlink_status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::config_topology_hierarchy::nvlink_status(py, self.inner.clone())
    }

    /// Peer-to-peer status: `{gpu: {peer: status}}`.
    fn nvlink_p2p_status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::config_topology_hierarchy::nvlink_p2p_status(py, self.inner.clone())
    }

    /// GPUs in MIG mode with their GPU and compute instances.
    fn mig_hierarchy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::config_topology_hierarchy::mig_hierarchy(py, self.inner.clone())
    }

    /// CPUs and their cores.
    fn cpu_hierarchy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        crate::config_topology_hierarchy::cpu_hierarchy(py, self.inner.clone())
    }

    /// Memory the host engine uses, in bytes.
    fn hostengine_memory_bytes(&self, py: Python<'_>) -> PyResult<u64> {
        crate::config_topology_hierarchy::hostengine_memory_bytes(py, self.inner.clone())
    }

    /// CPU the host engine uses: `{"total", "kernel", "user"}`.
    fn hostengine_cpu_utilization<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::config_topology_hierarchy::hostengine_cpu_utilization(py, self.inner.clone())
    }

    /// `{module name: status}`.
    fn module_statuses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::config_topology_hierarchy::module_statuses(py, self.inner.clone())
    }

    /// Keeps a module (by name or `DcgmModuleId*` number) from loading.
    fn module_denylist(&self, py: Python<'_>, module: &Bound<'_, PyAny>) -> PyResult<()> {
        crate::config_topology_hierarchy::module_denylist(py, self.inner.clone(), module)
    }

    /// A GPU's status (`"Ok"`, `"Lost"`, ...).
    fn gpu_status(&self, py: Python<'_>, gpu: u32) -> PyResult<String> {
        crate::config_topology_hierarchy::gpu_status(py, self.inner.clone(), gpu)
    }

    /// A GPU's chip architecture (`"Hopper"`, ...).
    fn chip_architecture(&self, py: Python<'_>, gpu: u32) -> PyResult<String> {
        crate::config_topology_hierarchy::chip_architecture(py, self.inner.clone(), gpu)
    }

    /// Latest values of watched fields for any list of entities, in one call.
    fn entities_latest_values(
        &self,
        py: Python<'_>,
        entities: &Bound<'_, PyAny>,
        fields: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Py<PyFieldValue>>> {
        let ents = extract_entities(entities)?;
        let ids = extract_fields(py, fields)?;
        let s = self.inner.clone();
        let vals = py
            .detach(move || s.entities_latest_values(&ents, &ids))
            .py(py)?;
        values_to_list(py, vals)
    }
}
