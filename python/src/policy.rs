//! Policies of a group: setting and reading them, and their violations delivered to a Python
//! callback (`PolicyRegistration`) or into a bounded channel (`PolicySubscription`), each
//! violation a dict.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dcgm::{Group, Policy, PolicyCondition, PolicyRegistration, PolicyViolation, ViolationDetail};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::duration::seconds;
use crate::errors::ResultExt;
use crate::flags::named_flags;
use crate::slot::Slot;

/// Set at interpreter exit: policy callbacks arriving after it are dropped instead of taking
/// the GIL of a finalizing interpreter.
static FINALIZING: AtomicBool = AtomicBool::new(false);

/// Called by the package's `atexit` hook.
#[pyfunction]
#[pyo3(name = "_at_exit")]
pub fn at_exit() {
    FINALIZING.store(true, Ordering::SeqCst);
}

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

/// The policy conditions: `(name, bit)`, in declaration order, `ALL` last.
#[pyfunction]
pub fn policy_conditions() -> Vec<(&'static str, u32)> {
    named_flags::<PolicyCondition>()
}
