//! `dcgm.Group`, `dcgm.FieldGroup`, `dcgm.Watch` and `dcgm.SinceCursor`.

use std::sync::atomic::{AtomicI64, Ordering};

use dcgm::{FieldGroup, Group, SinceCursor, Watch, WatchOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::duration::seconds;
use crate::entity::{entity_tuple, extract_entity};
use crate::errors::ResultExt;
use crate::policy::{PyPolicyRegistration, PyPolicySubscription};
use crate::slot::Slot;
use crate::value::{PyFieldValue, values_to_list};
use crate::{config, diagnostic, health, policy, profiling, stats, topology};

// `policy_subscribe`'s default capacity (a literal there, so that Python shows it) is dcgm's.
const _: () = assert!(dcgm::DEFAULT_POLICY_CHANNEL_CAPACITY == 1024);

/// A group of entities (GPUs, MIG instances, NvSwitches, ...).
#[pyclass(frozen, name = "Group", module = "dcgm")]
pub struct PyGroup {
    inner: Slot<Group>,
}

impl PyGroup {
    pub fn wrap(g: Group) -> Self {
        Self {
            inner: Slot::new(g, "group"),
        }
    }

    /// The group, or `DCGMError_Uninitialized` once destroyed.
    pub fn get(&self, py: Python<'_>) -> PyResult<Group> {
        self.inner.get(py)
    }
}

#[pymethods]
impl PyGroup {
    /// The DCGM group id.
    #[getter]
    fn id(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.get(py)?.id().value())
    }

    /// The group's name.
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        let g = self.get(py)?;
        Ok(py.detach(move || g.info()).py(py)?.name)
    }

    /// Members as `(entity_group, entity_id)` pairs.
    fn entities(&self, py: Python<'_>) -> PyResult<Vec<(u32, u32)>> {
        let g = self.get(py)?;
        let e = py.detach(move || g.entities()).py(py)?;
        Ok(e.into_iter().map(entity_tuple).collect())
    }

    /// The GPU members.
    fn gpu_ids(&self, py: Python<'_>) -> PyResult<Vec<u32>> {
        let g = self.get(py)?;
        py.detach(move || g.gpu_ids()).py(py)
    }

    fn add_gpu(&self, py: Python<'_>, gpu: u32) -> PyResult<()> {
        let g = self.get(py)?;
        py.detach(move || g.add_gpu(gpu)).py(py)
    }

    /// Adds an entity: `(entity_group, entity_id)` or an object with those attributes.
    fn add_entity(&self, py: Python<'_>, entity: &Bound<'_, PyAny>) -> PyResult<()> {
        let e = extract_entity(entity)?;
        let g = self.get(py)?;
        py.detach(move || g.add_entity(e)).py(py)
    }

    fn remove_gpu(&self, py: Python<'_>, gpu: u32) -> PyResult<()> {
        let g = self.get(py)?;
        py.detach(move || g.remove_gpu(gpu)).py(py)
    }

    fn remove_entity(&self, py: Python<'_>, entity: &Bound<'_, PyAny>) -> PyResult<()> {
        let e = extract_entity(entity)?;
        let g = self.get(py)?;
        py.detach(move || g.remove_entity(e)).py(py)
    }

    /// Watches `field_group` on this group: sampled every `update_interval` seconds, kept
    /// `max_keep_age` seconds (and at most `max_keep_samples` samples, 0 = no limit). The
    /// watch ends with `close()`, at the end of a `with` block, or when collected.
    #[pyo3(signature = (field_group, update_interval=1.0, max_keep_age=300.0, max_keep_samples=0))]
    fn watch(
        &self,
        py: Python<'_>,
        field_group: &PyFieldGroup,
        update_interval: f64,
        max_keep_age: f64,
        max_keep_samples: u32,
    ) -> PyResult<PyWatch> {
        let options = WatchOptions {
            update_interval: seconds(py, "update_interval", update_interval)?,
            max_keep_age: seconds(py, "max_keep_age", max_keep_age)?,
            max_keep_samples,
        };
        let g = self.get(py)?;
        let fg = field_group.get(py)?;
        let w = py.detach(move || g.watch(&fg, options)).py(py)?;
        Ok(PyWatch {
            inner: Slot::new(w, "watch"),
        })
    }

    /// The latest value of every field of `field_group` for every entity of the group.
    fn latest_values(
        &self,
        py: Python<'_>,
        field_group: &PyFieldGroup,
    ) -> PyResult<Vec<Py<PyFieldValue>>> {
        let g = self.get(py)?;
        let fg = field_group.get(py)?;
        let v = py.detach(move || g.latest_values(&fg)).py(py)?;
        values_to_list(py, v)
    }

    /// Every sample taken since `cursor` (oldest first per field); advances `cursor`, so the
    /// next call with it continues where this one stopped.
    fn values_since(
        &self,
        py: Python<'_>,
        field_group: &PyFieldGroup,
        cursor: &PySinceCursor,
    ) -> PyResult<Vec<Py<PyFieldValue>>> {
        let g = self.get(py)?;
        let fg = field_group.get(py)?;
        let mut c = SinceCursor(cursor.value.load(Ordering::Acquire));
        let v = py.detach(|| g.values_since(&fg, &mut c)).py(py)?;
        cursor.value.fetch_max(c.0, Ordering::AcqRel);
        values_to_list(py, v)
    }

    /// Destroys the group in DCGM now (built-in groups are never destroyed).
    fn destroy(&self, py: Python<'_>) -> PyResult<()> {
        self.inner
            .close_with(py, Group::destroy)
            .map_or(Ok(()), |r| r.py(py))
    }

    // --- health ---

    /// Watches these health systems (`dcgm.HealthSystem` flags) of the group's entities.
    #[pyo3(signature = (systems, update_interval=None, max_keep_age=None))]
    fn health_set(
        &self,
        py: Python<'_>,
        systems: u32,
        update_interval: Option<f64>,
        max_keep_age: Option<f64>,
    ) -> PyResult<()> {
        health::health_set(py, self.get(py)?, systems, update_interval, max_keep_age)
    }

    /// The watched health systems, as `dcgm.HealthSystem` flag bits.
    fn health_get(&self, py: Python<'_>) -> PyResult<u32> {
        health::health_get(py, self.get(py)?)
    }

    /// What the health watches found since the previous check, as a dict.
    fn health_check<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        health::health_check(py, self.get(py)?)
    }

    // --- policy ---

    /// Sets the group's policy. Keywords: `dbe`, `pci`, `nvlink`, `xid` (bool),
    /// `max_retired_pages`, `thermal_max_c`, `power_max_w` (int thresholds).
    #[pyo3(signature = (*, dbe=false, pci=false, max_retired_pages=None, thermal_max_c=None, power_max_w=None, nvlink=false, xid=false))]
    #[allow(clippy::too_many_arguments)]
    fn policy_set(
        &self,
        py: Python<'_>,
        dbe: bool,
        pci: bool,
        max_retired_pages: Option<u32>,
        thermal_max_c: Option<u32>,
        power_max_w: Option<u32>,
        nvlink: bool,
        xid: bool,
    ) -> PyResult<()> {
        let p = dcgm::Policy {
            dbe,
            pci,
            max_retired_pages,
            thermal_max_c,
            power_max_w,
            nvlink,
            xid,
        };
        policy::policy_set(py, self.get(py)?, p)
    }

    /// The policy of each GPU of the group: `{gpu_id: {...}}`.
    fn policy_get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        policy::policy_get(py, self.get(py)?)
    }

    /// Calls `callback(violation)` (a dict) for each violation of `conditions`
    /// (`dcgm.PolicyCondition` flags) on the group's GPUs. It runs on a DCGM thread, with the
    /// GIL taken for the call. An exception it raises is reported through
    /// `sys.unraisablehook` and counted in the registration's `errors`.
    fn policy_register(
        &self,
        py: Python<'_>,
        conditions: u32,
        callback: Py<PyAny>,
    ) -> PyResult<PyPolicyRegistration> {
        policy::policy_register(py, self.get(py)?, conditions, callback)
    }

    /// Subscribes to the violations of `conditions` (`dcgm.PolicyCondition` flags) on the
    /// group's GPUs: they queue up in a channel of `capacity` violations (when it is full,
    /// further ones are dropped and counted), read with `get(timeout)` or by iterating the
    /// returned `PolicySubscription`, without a callback on DCGM's thread.
    #[pyo3(signature = (conditions, capacity=1024))]
    fn policy_subscribe(
        &self,
        py: Python<'_>,
        conditions: u32,
        capacity: usize,
    ) -> PyResult<PyPolicySubscription> {
        policy::policy_subscribe(py, self.get(py)?, conditions, capacity)
    }

    // --- diagnostics ---

    /// Runs a diagnostic and waits for it: a level (1 short, 2 medium, 3 long, 4 extra long)
    /// or named `tests`, with optional `params` (`"test.param=value"`). Returns a dict.
    #[pyo3(signature = (level=1, *, tests=None, params=None, verbose=false, fail_early=false, timeout=None))]
    #[allow(clippy::too_many_arguments)]
    fn run_diagnostic<'py>(
        &self,
        py: Python<'py>,
        level: u32,
        tests: Option<Vec<String>>,
        params: Option<Vec<String>>,
        verbose: bool,
        fail_early: bool,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        diagnostic::run_diagnostic(
            py,
            self.get(py)?,
            level,
            tests,
            params,
            verbose,
            fail_early,
            timeout,
        )
    }

    // --- process statistics ---

    /// Starts recording per-process statistics on the group's GPUs.
    #[pyo3(signature = (update_interval=1.0, max_keep_age=3600.0, max_keep_samples=0))]
    fn watch_pid_fields(
        &self,
        py: Python<'_>,
        update_interval: f64,
        max_keep_age: f64,
        max_keep_samples: u32,
    ) -> PyResult<()> {
        let options = WatchOptions {
            update_interval: seconds(py, "update_interval", update_interval)?,
            max_keep_age: seconds(py, "max_keep_age", max_keep_age)?,
            max_keep_samples,
        };
        stats::watch_pid_fields(py, self.get(py)?, options)
    }

    /// Statistics of a process on the group's GPUs, as a dict.
    fn pid_info<'py>(&self, py: Python<'py>, pid: u32) -> PyResult<Bound<'py, PyDict>> {
        stats::pid_info(py, self.get(py)?, pid)
    }

    /// Starts the watches job statistics need.
    #[pyo3(signature = (update_interval=1.0, max_keep_age=3600.0, max_keep_samples=0))]
    fn watch_job_fields(
        &self,
        py: Python<'_>,
        update_interval: f64,
        max_keep_age: f64,
        max_keep_samples: u32,
    ) -> PyResult<()> {
        let options = WatchOptions {
            update_interval: seconds(py, "update_interval", update_interval)?,
            max_keep_age: seconds(py, "max_keep_age", max_keep_age)?,
            max_keep_samples,
        };
        stats::watch_job_fields(py, self.get(py)?, options)
    }

    /// Starts recording job `job_id` (at most 63 bytes) on the group's GPUs; stop it and read
    /// it with `Handle.job_stop` / `Handle.job_stats`.
    fn job_start(&self, py: Python<'_>, job_id: String) -> PyResult<()> {
        stats::job_start(py, self.get(py)?, job_id)
    }

    // --- configuration, profiling, topology ---

    /// Sets the configuration of the group's GPUs; arguments left `None` stay unchanged.
    /// `compute_mode`: `"default"`, `"prohibited"` or `"exclusive_process"`.
    #[pyo3(signature = (*, ecc_mode=None, compute_mode=None, power_limit_w=None, sm_app_clock_mhz=None, mem_app_clock_mhz=None, sync_boost=None))]
    #[allow(clippy::too_many_arguments)]
    fn config_set(
        &self,
        py: Python<'_>,
        ecc_mode: Option<bool>,
        compute_mode: Option<String>,
        power_limit_w: Option<u32>,
        sm_app_clock_mhz: Option<u32>,
        mem_app_clock_mhz: Option<u32>,
        sync_boost: Option<bool>,
    ) -> PyResult<()> {
        config::config_set(
            py,
            self.get(py)?,
            ecc_mode,
            compute_mode,
            power_limit_w,
            sm_app_clock_mhz,
            mem_app_clock_mhz,
            sync_boost,
        )
    }

    /// The target configuration of each GPU (or the current one with `current=True`).
    #[pyo3(signature = (current=false))]
    fn config_get<'py>(&self, py: Python<'py>, current: bool) -> PyResult<Bound<'py, PyList>> {
        config::config_get(py, self.get(py)?, current)
    }

    /// Applies the target configuration again.
    fn config_enforce(&self, py: Python<'_>) -> PyResult<()> {
        config::config_enforce(py, self.get(py)?)
    }

    /// Profiling metric groups of the group's first GPU.
    fn profiling_metric_groups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        profiling::profiling_metric_groups(py, self.get(py)?)
    }

    /// The group's topology: CPU affinity, NUMA optimality, slowest PCI path and NVLink count.
    fn topology<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        topology::group_topology(py, self.get(py)?)
    }

    fn __repr__(&self) -> String {
        self.inner.peek(|g| match g {
            Some(g) => format!("Group(id={})", g.id()),
            None => "Group(destroyed)".into(),
        })
    }
}

/// A named set of fields to watch and read together.
#[pyclass(frozen, name = "FieldGroup", module = "dcgm")]
pub struct PyFieldGroup {
    inner: Slot<FieldGroup>,
}

impl PyFieldGroup {
    pub fn wrap(fg: FieldGroup) -> Self {
        Self {
            inner: Slot::new(fg, "field group"),
        }
    }

    /// The field group, or `DCGMError_Uninitialized` once closed.
    pub fn get(&self, py: Python<'_>) -> PyResult<FieldGroup> {
        self.inner.get(py)
    }
}

#[pymethods]
impl PyFieldGroup {
    /// The DCGM field group id.
    #[getter]
    fn id(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.get(py)?.id().value())
    }

    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.get(py)?.name().to_string())
    }

    /// The field ids, in creation order.
    #[getter]
    fn fields(&self, py: Python<'_>) -> PyResult<Vec<u16>> {
        Ok(self.get(py)?.fields().iter().map(|f| f.0).collect())
    }

    /// Releases this object's reference (the field group is destroyed in DCGM once no watch
    /// uses it).
    fn close(&self, py: Python<'_>) {
        self.inner.close(py);
    }

    /// Destroys the field group in DCGM now and raises what DCGM answers (`close` does not);
    /// does nothing while a watch still uses it.
    fn destroy(&self, py: Python<'_>) -> PyResult<()> {
        self.inner
            .close_with(py, FieldGroup::destroy)
            .map_or(Ok(()), |r| r.py(py))
    }

    fn __repr__(&self) -> String {
        self.inner.peek(|g| match g {
            Some(g) => format!(
                "FieldGroup(id={}, name={:?}, fields={:?})",
                g.id(),
                g.name(),
                g.fields().iter().map(|f| f.0).collect::<Vec<_>>()
            ),
            None => "FieldGroup(closed)".into(),
        })
    }
}

/// An active watch; the fields stop being watched when it is closed.
#[pyclass(frozen, name = "Watch", module = "dcgm")]
pub struct PyWatch {
    inner: Slot<Watch>,
}

impl PyWatch {
    fn options(&self, py: Python<'_>) -> PyResult<WatchOptions> {
        self.inner.map(py, Watch::options)
    }
}

#[pymethods]
impl PyWatch {
    /// Whether the watch is still active.
    #[getter]
    fn active(&self) -> bool {
        !self.inner.is_closed()
    }

    /// Seconds between samples.
    #[getter]
    fn update_interval(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.options(py)?.update_interval.as_secs_f64())
    }

    /// Seconds samples are kept.
    #[getter]
    fn max_keep_age(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.options(py)?.max_keep_age.as_secs_f64())
    }

    #[getter]
    fn max_keep_samples(&self, py: Python<'_>) -> PyResult<u32> {
        Ok(self.options(py)?.max_keep_samples)
    }

    /// Stops watching.
    fn close(&self, py: Python<'_>) {
        self.inner.close(py);
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
        self.inner.peek(|w| match w {
            Some(w) => format!(
                "Watch(group={}, field_group={}, update_interval={}s)",
                w.group().id(),
                w.fields().id(),
                w.options().update_interval.as_secs_f64()
            ),
            None => "Watch(closed)".into(),
        })
    }
}

/// Where a since-read left off. Pass the same cursor to each `Group.values_since` call and no
/// sample is lost or repeated between them.
#[pyclass(frozen, name = "SinceCursor", module = "dcgm")]
pub struct PySinceCursor {
    value: AtomicI64,
}

#[pymethods]
impl PySinceCursor {
    /// A cursor at `timestamp_us` (0: every sample kept so far).
    #[new]
    #[pyo3(signature = (timestamp_us=0))]
    fn new(timestamp_us: i64) -> Self {
        Self {
            value: AtomicI64::new(timestamp_us),
        }
    }

    /// The position, in microseconds since the Unix epoch.
    #[getter]
    fn timestamp_us(&self) -> i64 {
        self.value.load(Ordering::Acquire)
    }

    fn __repr__(&self) -> String {
        format!("SinceCursor({})", self.timestamp_us())
    }
}
