//! Health watches, policies (Python callbacks or channel subscriptions), diagnostics and
//! process/job statistics, returned as plain dicts and lists.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dcgm::{
    DiagLevel, DiagRequest, DiagResponse, DiagResult, GpuUsage, Group, HealthSystems, JobGpuStats,
    PidGpuInfo, Policy, PolicyCondition, PolicyRegistration, PolicyViolation, StatSummary,
    ViolationDetail, WatchOptions,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::errors::{self, ResultExt};
use crate::handle::seconds;
use crate::slot::Slot;
use crate::tables::entity_tuple;

/// Set at interpreter exit: policy callbacks arriving after it are dropped instead of taking
/// the GIL of a finalizing interpreter.
static FINALIZING: AtomicBool = AtomicBool::new(false);

/// Called by the package's `atexit` hook.
#[pyfunction]
#[pyo3(name = "_at_exit")]
pub fn at_exit() {
    FINALIZING.store(true, Ordering::SeqCst);
}

fn secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

// --- health ---

pub fn health_set(
    py: Python<'_>,
    g: Group,
    systems: u32,
    update_interval: Option<f64>,
    max_keep_age: Option<f64>,
) -> PyResult<()> {
    let systems = HealthSystems::from_bits_retain(systems);
    match (update_interval, max_keep_age) {
        (None, None) => py.detach(move || g.health_set(systems)).py(py),
        (i, a) => {
            let i = seconds(py, "update_interval", i.unwrap_or(30.0))?;
            let a = seconds(py, "max_keep_age", a.unwrap_or(600.0))?;
            py.detach(move || g.health_set_with(systems, i, a)).py(py)
        }
    }
}

pub fn health_get(py: Python<'_>, g: Group) -> PyResult<u32> {
    Ok(py.detach(move || g.health_get()).py(py)?.bits())
}

pub fn health_check<'py>(py: Python<'py>, g: Group) -> PyResult<Bound<'py, PyDict>> {
    let r = py.detach(move || g.health_check()).py(py)?;
    let d = PyDict::new(py);
    d.set_item("overall", r.overall.to_string())?;
    d.set_item("healthy", r.is_healthy())?;
    let list = PyList::empty(py);
    for i in r.incidents {
        let x = PyDict::new(py);
        x.set_item("system", i.system.bits())?;
        x.set_item("system_name", i.system.to_string())?;
        x.set_item("result", i.result.to_string())?;
        x.set_item("entity", entity_tuple(i.entity))?;
        x.set_item("error_code", i.error_code)?;
        x.set_item("error_name", i.error_name)?;
        x.set_item("category", i.category.map(|c| format!("{c:?}")))?;
        x.set_item("severity", i.severity.map(|s| s.to_string()))?;
        x.set_item("suggestion", i.suggestion)?;
        x.set_item("message", i.message)?;
        list.append(x)?;
    }
    d.set_item("incidents", list)?;
    Ok(d)
}

// --- policy ---

fn policy_dict<'py>(py: Python<'py>, p: &Policy) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("conditions", p.conditions().bits())?;
    d.set_item("dbe", p.dbe)?;
    d.set_item("pci", p.pci)?;
    d.set_item("max_retired_pages", p.max_retired_pages)?;
    d.set_item("thermal_max_c", p.thermal_max_c)?;
    d.set_item("power_max_w", p.power_max_w)?;
    d.set_item("nvlink", p.nvlink)?;
    d.set_item("xid", p.xid)?;
    Ok(d)
}

pub fn policy_set(py: Python<'_>, g: Group, p: Policy) -> PyResult<()> {
    py.detach(move || g.policy_set(&p)).py(py)
}

pub fn policy_get<'py>(py: Python<'py>, g: Group) -> PyResult<Bound<'py, PyDict>> {
    let all = py.detach(move || g.policy_get()).py(py)?;
    let d = PyDict::new(py);
    for (gpu, p) in all {
        d.set_item(gpu, policy_dict(py, &p)?)?;
    }
    Ok(d)
}

/// A violation as a dict: `gpu`, `condition` (one `PolicyCondition` bit), `condition_name`,
/// `timestamp_us`, `message`, and the condition's own keys.
fn violation_dict<'py>(py: Python<'py>, v: &PolicyViolation) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("gpu", v.gpu)?;
    d.set_item("condition", v.condition.bits())?;
    d.set_item("condition_name", v.condition.to_string())?;
    d.set_item("timestamp_us", v.timestamp_us)?;
    d.set_item("message", v.to_string())?;
    match v.detail {
        ViolationDetail::Dbe { location, count } => {
            d.set_item("location", format!("{location:?}"))?;
            d.set_item("count", count)?;
        }
        ViolationDetail::Pci { counter } => d.set_item("counter", counter)?,
        ViolationDetail::RetiredPages { sbe, dbe } => {
            d.set_item("sbe_pages", sbe)?;
            d.set_item("dbe_pages", dbe)?;
        }
        ViolationDetail::Thermal { temperature_c } => d.set_item("temperature_c", temperature_c)?,
        ViolationDetail::Power { watts } => d.set_item("watts", watts)?,
        ViolationDetail::Nvlink { field, counter } => {
            d.set_item("field_id", field.0)?;
            d.set_item("counter", counter)?;
        }
        ViolationDetail::Xid { xid } => d.set_item("xid", xid)?,
    }
    Ok(d)
}

/// Counters shared between a registration and its callback.
#[derive(Default)]
struct Counts {
    calls: AtomicU64,
    errors: AtomicU64,
}

/// A policy callback registration. `unregister()` (or the end of a `with` block, or
/// collection) stops delivery.
#[pyclass(frozen, name = "PolicyRegistration", module = "dcgm")]
pub struct PyPolicyRegistration {
    inner: Slot<PolicyRegistration>,
    counts: Arc<Counts>,
    conditions: u32,
}

#[pymethods]
impl PyPolicyRegistration {
    /// The registered `PolicyCondition` bits.
    #[getter]
    fn conditions(&self) -> u32 {
        self.conditions
    }

    /// Whether callbacks are still delivered.
    #[getter]
    fn active(&self) -> bool {
        !self.inner.is_closed()
    }

    /// How many times the callback was called.
    #[getter]
    fn calls(&self) -> u64 {
        self.counts.calls.load(Ordering::Relaxed)
    }

    /// How many calls raised an exception (each was reported through `sys.unraisablehook`).
    #[getter]
    fn errors(&self) -> u64 {
        self.counts.errors.load(Ordering::Relaxed)
    }

    /// Violations lost: undecodable responses from the library.
    #[getter]
    fn dropped(&self) -> u64 {
        self.inner
            .peek(|r| r.map_or(0, PolicyRegistration::dropped))
    }

    /// Stops delivery and unregisters the conditions from the group.
    fn unregister(&self, py: Python<'_>) -> PyResult<()> {
        self.inner
            .close_with(py, PolicyRegistration::unregister)
            .map_or(Ok(()), |r| r.py(py))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.unregister(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "PolicyRegistration(conditions={}, active={}, calls={}, errors={})",
            PolicyCondition::from_bits_retain(self.conditions),
            self.active(),
            self.calls(),
            self.errors()
        )
    }
}

pub fn policy_register(
    py: Python<'_>,
    g: Group,
    conditions: u32,
    callback: Py<PyAny>,
) -> PyResult<PyPolicyRegistration> {
    if !callback.bind(py).is_callable() {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "callback must be callable",
        ));
    }
    let counts = Arc::new(Counts::default());
    let c = counts.clone();
    let deliver = move |v: PolicyViolation| {
        if FINALIZING.load(Ordering::SeqCst) {
            return;
        }
        Python::attach(|py| {
            c.calls.fetch_add(1, Ordering::Relaxed);
            let r = violation_dict(py, &v).and_then(|d| callback.bind(py).call1((d,)));
            if let Err(e) = r {
                c.errors.fetch_add(1, Ordering::Relaxed);
                e.write_unraisable(py, Some(callback.bind(py)));
            }
        });
    };
    let cond = PolicyCondition::from_bits_retain(conditions);
    let reg = py.detach(move || g.policy_register(cond, deliver)).py(py)?;
    Ok(PyPolicyRegistration {
        inner: Slot::new(reg, "policy registration"),
        counts,
        conditions,
    })
}

/// How long a blocking receive lasts at most, with the GIL released, before signals (Ctrl-C)
/// are checked.
const RECV_TICK: Duration = Duration::from_millis(50);

/// A policy subscription: violations of the subscribed conditions queue up in a bounded
/// channel, read with `get()` or by iterating. `close()` (or the end of a `with` block, or
/// collection) unregisters; violations queued by then can still be read, after which
/// iteration stops and `get()` returns `None`.
#[pyclass(frozen, name = "PolicySubscription", module = "dcgm")]
pub struct PyPolicySubscription {
    inner: Slot<PolicyRegistration>,
    rx: Mutex<Receiver<PolicyViolation>>,
    conditions: u32,
    capacity: usize,
    /// `dropped` at the time of `close()` (the registration, which counts, is gone after).
    dropped_at_close: AtomicU64,
}

impl PyPolicySubscription {
    /// The next violation, waiting at most `timeout` (`None`: until one arrives or the
    /// subscription is closed), with the GIL released. `None` on timeout, or once closed and
    /// drained.
    fn recv(&self, py: Python<'_>, timeout: Option<Duration>) -> PyResult<Option<PolicyViolation>> {
        let deadline = timeout.map(|t| Instant::now().checked_add(t));
        loop {
            let wait = match deadline {
                None | Some(None) => RECV_TICK,
                Some(Some(d)) => d.saturating_duration_since(Instant::now()).min(RECV_TICK),
            };
            let got = py.detach(|| {
                self.rx
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .recv_timeout(wait)
            });
            match got {
                Ok(v) => return Ok(Some(v)),
                Err(RecvTimeoutError::Disconnected) => return Ok(None),
                Err(RecvTimeoutError::Timeout) => {
                    py.check_signals()?;
                    if let Some(Some(d)) = deadline
                        && Instant::now() >= d
                    {
                        return Ok(None);
                    }
                }
            }
        }
    }
}

#[pymethods]
impl PyPolicySubscription {
    /// The next violation (a dict, as `policy_register` callbacks get it). Waits at most
    /// `timeout` seconds (`None`: until one arrives or the subscription is closed; `0`: does not
    /// wait), with the GIL released. Returns `None` if none arrived in time, or once the
    /// subscription is closed and every queued violation was read.
    #[pyo3(signature = (timeout=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        timeout: Option<f64>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let timeout = timeout.map(|t| seconds(py, "timeout", t)).transpose()?;
        self.recv(py, timeout)?
            .map(|v| violation_dict(py, &v))
            .transpose()
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Waits for the next violation (GIL released); stops once closed and drained.
    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.get(py, None)
    }

    /// The subscribed `PolicyCondition` bits.
    #[getter]
    fn conditions(&self) -> u32 {
        self.conditions
    }

    /// How many violations the channel holds at most.
    #[getter]
    fn capacity(&self) -> usize {
        self.capacity
    }

    /// Whether violations are still delivered (not closed).
    #[getter]
    fn active(&self) -> bool {
        !self.inner.is_closed()
    }

    /// Violations lost: the channel was full, or the library sent a response that could not
    /// be decoded.
    #[getter]
    fn dropped(&self) -> u64 {
        self.inner.peek(|r| {
            r.map_or_else(
                || self.dropped_at_close.load(Ordering::Relaxed),
                PolicyRegistration::dropped,
            )
        })
    }

    /// Unregisters the conditions from the group and stops delivery. Violations already
    /// queued can still be read. Closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let done = self.inner.close_with(py, |r| {
            let dropped = r.dropped();
            (dropped, r.unregister())
        });
        match done {
            None => Ok(()),
            Some((dropped, r)) => {
                self.dropped_at_close.store(dropped, Ordering::Relaxed);
                r.py(py)
            }
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "PolicySubscription(conditions={}, capacity={}, active={}, dropped={})",
            PolicyCondition::from_bits_retain(self.conditions),
            self.capacity,
            self.active(),
            self.dropped()
        )
    }
}

pub fn policy_subscribe(
    py: Python<'_>,
    g: Group,
    conditions: u32,
    capacity: usize,
) -> PyResult<PyPolicySubscription> {
    let cond = PolicyCondition::from_bits_retain(conditions);
    let (reg, rx) = py
        .detach(move || g.policy_subscribe_with_capacity(cond, capacity))
        .py(py)?;
    Ok(PyPolicySubscription {
        inner: Slot::new(reg, "policy subscription"),
        rx: Mutex::new(rx),
        conditions,
        capacity,
        dropped_at_close: AtomicU64::new(0),
    })
}

// --- diagnostics ---

fn diag_result(r: DiagResult) -> String {
    r.to_string()
}

fn diag_error<'py>(py: Python<'py>, e: &dcgm::DiagError) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("entity", e.entity.map(entity_tuple))?;
    d.set_item("code", e.code)?;
    d.set_item("code_name", e.code_name)?;
    d.set_item("category", e.category.map(|c| format!("{c:?}")))?;
    d.set_item("severity", e.severity.map(|s| s.to_string()))?;
    d.set_item("message", &e.message)?;
    Ok(d)
}

fn diag_dict<'py>(py: Python<'py>, r: &DiagResponse) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("overall", diag_result(r.overall()))?;
    let tests = PyList::empty(py);
    for t in &r.tests {
        let x = PyDict::new(py);
        x.set_item("name", &t.name)?;
        x.set_item("plugin", &t.plugin)?;
        x.set_item("category", &t.category)?;
        x.set_item("result", diag_result(t.result))?;
        let per = PyList::empty(py);
        for (e, res) in &t.results {
            per.append((entity_tuple(*e), diag_result(*res)))?;
        }
        x.set_item("results", per)?;
        let errs = PyList::empty(py);
        for e in &t.errors {
            errs.append(diag_error(py, e)?)?;
        }
        x.set_item("errors", errs)?;
        x.set_item("info", t.info.clone())?;
        tests.append(x)?;
    }
    d.set_item("tests", tests)?;
    let ents = PyList::empty(py);
    for e in &r.entities {
        let x = PyDict::new(py);
        x.set_item("entity", entity_tuple(e.entity))?;
        x.set_item("serial", &e.serial)?;
        x.set_item("sku_device_id", &e.sku_device_id)?;
        ents.append(x)?;
    }
    d.set_item("entities", ents)?;
    let other = PyList::empty(py);
    for e in &r.other_errors {
        other.append(diag_error(py, e)?)?;
    }
    d.set_item("other_errors", other)?;
    d.set_item("dcgm_version", &r.dcgm_version)?;
    d.set_item("driver_version", &r.driver_version)?;
    Ok(d)
}

#[allow(clippy::too_many_arguments)]
pub fn run_diagnostic<'py>(
    py: Python<'py>,
    g: Group,
    level: u32,
    tests: Option<Vec<String>>,
    params: Option<Vec<String>>,
    verbose: bool,
    fail_early: bool,
    timeout: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let lvl = match level {
        1 => DiagLevel::Short,
        2 => DiagLevel::Medium,
        3 => DiagLevel::Long,
        4 => DiagLevel::ExtraLong,
        n => {
            return Err(errors::badparam(
                py,
                format!("diagnostic level {n}: use 1, 2, 3 or 4"),
            ));
        }
    };
    let mut req = match tests {
        Some(t) => DiagRequest::tests(t),
        None => DiagRequest::level(lvl),
    };
    for p in params.unwrap_or_default() {
        req = req.param(p);
    }
    req = req.verbose(verbose).fail_early(fail_early);
    if let Some(t) = timeout {
        req = req.timeout(seconds(py, "timeout", t)?);
    }
    let r = py.detach(move || g.run_diag(&req)).py(py)?;
    diag_dict(py, &r)
}

// --- process and job statistics ---

fn summary<'py>(py: Python<'py>, s: &StatSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("min", s.min)?;
    d.set_item("max", s.max)?;
    d.set_item("average", s.average)?;
    Ok(d)
}

fn violations<'py>(py: Python<'py>, v: &dcgm::ViolationTimes) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let s = |x: Option<Duration>| x.map(|d| d.as_secs_f64());
    d.set_item("power", s(v.power))?;
    d.set_item("thermal", s(v.thermal))?;
    d.set_item("reliability", s(v.reliability))?;
    d.set_item("board_limit", s(v.board_limit))?;
    d.set_item("low_utilization", s(v.low_utilization))?;
    d.set_item("sync_boost", s(v.sync_boost))?;
    Ok(d)
}

/// Writes the fields process and job statistics share into `d`, flat (the dicts keep one level).
fn put_usage(py: Python<'_>, d: &Bound<'_, PyDict>, u: &GpuUsage) -> PyResult<()> {
    d.set_item("energy_joules", u.energy_joules)?;
    d.set_item("max_memory_bytes", u.max_memory_bytes)?;
    d.set_item("sm_util", summary(py, &u.sm_util)?)?;
    d.set_item("mem_util", summary(py, &u.mem_util)?)?;
    d.set_item("pcie_rx", summary(py, &u.pcie_rx)?)?;
    d.set_item("pcie_tx", summary(py, &u.pcie_tx)?)?;
    d.set_item("sm_clock_mhz", summary(py, &u.sm_clock_mhz)?)?;
    d.set_item("mem_clock_mhz", summary(py, &u.mem_clock_mhz)?)?;
    d.set_item("start_time", u.start_time.map(secs))?;
    d.set_item("end_time", u.end_time.map(secs))?;
    d.set_item("pcie_replays", u.pcie_replays)?;
    d.set_item("ecc_single_bit", u.ecc_single_bit)?;
    d.set_item("ecc_double_bit", u.ecc_double_bit)?;
    d.set_item("xid_count", u.xid_count)?;
    d.set_item(
        "xid_times",
        u.xid_times.iter().map(|t| secs(*t)).collect::<Vec<_>>(),
    )?;
    d.set_item("violations", violations(py, &u.violations)?)?;
    d.set_item("overall_health", u.overall_health.to_string())?;
    d.set_item("incident_count", u.incident_count)?;
    Ok(())
}

fn pid_gpu<'py>(py: Python<'py>, p: &PidGpuInfo) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("gpu", p.gpu)?;
    d.set_item("process_sm_util", p.process_sm_util)?;
    d.set_item("process_mem_util", p.process_mem_util)?;
    d.set_item("other_compute_pids", p.other_compute_pids.clone())?;
    d.set_item("other_graphics_pids", p.other_graphics_pids.clone())?;
    put_usage(py, &d, &p.usage)?;
    Ok(d)
}

pub fn watch_pid_fields(py: Python<'_>, g: Group, options: WatchOptions) -> PyResult<()> {
    py.detach(move || g.watch_pid_fields(options)).py(py)
}

pub fn pid_info<'py>(py: Python<'py>, g: Group, pid: u32) -> PyResult<Bound<'py, PyDict>> {
    let info = py.detach(move || g.pid_info(pid)).py(py)?;
    let d = PyDict::new(py);
    d.set_item("pid", info.pid)?;
    let gpus = PyList::empty(py);
    for x in &info.gpus {
        gpus.append(pid_gpu(py, x)?)?;
    }
    d.set_item("gpus", gpus)?;
    d.set_item("summary", pid_gpu(py, &info.summary)?)?;
    Ok(d)
}

fn job_gpu<'py>(py: Python<'py>, j: &JobGpuStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("gpu", j.gpu)?;
    d.set_item("power_w", summary(py, &j.power_w)?)?;
    let procs = |list: &[dcgm::ProcessUtil]| -> PyResult<Bound<'py, PyList>> {
        let l = PyList::empty(py);
        for p in list {
            let x = PyDict::new(py);
            x.set_item("pid", p.pid)?;
            x.set_item("sm_util", p.sm_util)?;
            x.set_item("mem_util", p.mem_util)?;
            l.append(x)?;
        }
        Ok(l)
    };
    d.set_item("compute_processes", procs(&j.compute_processes)?)?;
    d.set_item("graphics_processes", procs(&j.graphics_processes)?)?;
    put_usage(py, &d, &j.usage)?;
    Ok(d)
}

pub fn watch_job_fields(py: Python<'_>, g: Group, options: WatchOptions) -> PyResult<()> {
    py.detach(move || g.watch_job_fields(options)).py(py)
}

pub fn job_start(py: Python<'_>, g: Group, id: String) -> PyResult<()> {
    py.detach(move || g.job_start(&id)).py(py)
}

pub fn job_stats<'py>(
    py: Python<'py>,
    h: dcgm::Handle,
    id: String,
) -> PyResult<Bound<'py, PyDict>> {
    let s = py.detach(move || h.job_stats(&id)).py(py)?;
    let d = PyDict::new(py);
    let gpus = PyList::empty(py);
    for g in &s.gpus {
        gpus.append(job_gpu(py, g)?)?;
    }
    d.set_item("gpus", gpus)?;
    d.set_item("summary", job_gpu(py, &s.summary)?)?;
    Ok(d)
}
