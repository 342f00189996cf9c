//! `dcgm.burn`: dcgm-burn's stress test from Python. The load runs on a thread of its own with
//! the GIL released; Ctrl-C stops it early and what was sampled is judged. The verdicts come
//! back as `BurnVerdict` objects (one per GPU) in a `BurnReport`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use dcgm_burn::{BurnError, Options, Outcome, Status};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::{self, ResultExt};
use crate::sim;

/// One conclusion of the burn about a GPU (dcgm_burn::verdict::BurnFinding).
#[pyclass(name = "BurnFinding", module = "dcgm._native", frozen, get_all)]
pub struct PyBurnFinding {
    /// `slower_than_siblings`, `compute_errors`, `unstable`, `load_failed`, or a doctor kind.
    kind: String,
    /// `problem`, `warning` or `info`.
    severity: &'static str,
    /// In one line.
    explanation: String,
    /// The numbers behind it: `{name: value}`.
    evidence: BTreeMap<String, f64>,
    /// The unit of each number.
    units: BTreeMap<String, String>,
    /// What to try.
    advice: String,
}

#[pymethods]
impl PyBurnFinding {
    fn __repr__(&self) -> String {
        format!(
            "BurnFinding({} {}: {})",
            self.severity, self.kind, self.explanation
        )
    }
}

/// The verdict on one GPU (dcgm_burn::GpuVerdict).
#[pyclass(name = "BurnVerdict", module = "dcgm._native", frozen, get_all)]
pub struct PyBurnVerdict {
    /// The GPU (DCGM id).
    gpu: u32,
    /// `healthy`, `warning` or `failure`.
    status: &'static str,
    /// Sustained TFLOPS (modelled when simulated).
    tflops: Option<f64>,
    /// TFLOPS of the first minute (or third) of the run, and of the last.
    tflops_first: Option<f64>,
    /// See `tflops_first`.
    tflops_last: Option<f64>,
    /// `tflops_last / tflops_first`.
    stability: Option<f64>,
    /// Peak GPU temperature, °C.
    peak_temp_c: Option<f64>,
    /// Seconds until the temperature settled; `None`: still moving at the end.
    temp_settled_s: Option<f64>,
    /// Peak memory temperature, °C.
    peak_memory_temp_c: Option<f64>,
    /// Mean SM clock, MHz.
    sm_clock_mhz: Option<f64>,
    /// Mean board power, W.
    power_w: Option<f64>,
    /// Enforced power limit, W.
    power_limit_w: Option<f64>,
    /// Seconds at the power cap.
    power_capped_s: Option<f64>,
    /// Seconds thermally throttled.
    thermal_throttled_s: Option<f64>,
    /// 32-bit words of results that differed from the reference.
    mismatches: u64,
    /// New volatile single-bit ECC errors.
    ecc_sbe: Option<f64>,
    /// New volatile double-bit ECC errors.
    ecc_dbe: Option<f64>,
    /// XIDs seen.
    xids: Vec<u32>,
    /// The findings, worst first.
    findings: Vec<Py<PyBurnFinding>>,
}

#[pymethods]
impl PyBurnVerdict {
    fn __repr__(&self) -> String {
        format!(
            "BurnVerdict(GPU {} {}, {} TFLOPS)",
            self.gpu,
            self.status,
            self.tflops.map_or("?".into(), |t| format!("{t:.1}"))
        )
    }
}

/// What a burn concluded (dcgm_burn::Outcome).
#[pyclass(name = "BurnReport", module = "dcgm._native", frozen, get_all)]
pub struct PyBurnReport {
    /// One verdict per GPU burned.
    gpus: Vec<Py<PyBurnVerdict>>,
    /// The worst GPU's status.
    status: &'static str,
    /// The command line's exit status for it: 0, 2 or 3.
    exit_status: u8,
    /// The median of the GPUs' TFLOPS.
    median_tflops: Option<f64>,
    /// The data came from the simulator (the TFLOPS are modelled).
    simulated: bool,
    /// What computed the products.
    engine: String,
    /// The precision.
    dtype: String,
    /// The matrix side.
    size: usize,
    /// Seconds the load ran.
    seconds: f64,
    /// What the run met that the verdicts do not say.
    notes: Vec<String>,
    /// The report as `dcgm-burn --json` writes it.
    json: String,
}

#[pymethods]
impl PyBurnReport {
    fn __repr__(&self) -> String {
        format!(
            "BurnReport({} GPUs {}{})",
            self.gpus.len(),
            self.status,
            if self.simulated { ", simulated" } else { "" }
        )
    }

    fn __len__(&self) -> usize {
        self.gpus.len()
    }
}

fn status(s: Status) -> &'static str {
    match s {
        Status::Healthy => "healthy",
        Status::Warning => "warning",
        Status::Failure => "failure",
    }
}

fn report(py: Python<'_>, o: &Outcome) -> PyResult<PyBurnReport> {
    let gpus = o
        .verdict
        .gpus
        .iter()
        .map(|g| {
            let findings = g
                .findings
                .iter()
                .map(|f| {
                    Py::new(
                        py,
                        PyBurnFinding {
                            kind: f.kind.clone(),
                            severity: match f.severity {
                                dcgm_doctor::Severity::Problem => "problem",
                                dcgm_doctor::Severity::Warning => "warning",
                                dcgm_doctor::Severity::Info => "info",
                            },
                            explanation: f.explanation.clone(),
                            evidence: f
                                .evidence
                                .iter()
                                .map(|e| (e.name.to_string(), e.value))
                                .collect(),
                            units: f
                                .evidence
                                .iter()
                                .map(|e| (e.name.to_string(), e.unit.to_string()))
                                .collect(),
                            advice: f.advice.clone(),
                        },
                    )
                })
                .collect::<PyResult<_>>()?;
            Py::new(
                py,
                PyBurnVerdict {
                    gpu: g.gpu,
                    status: status(g.status),
                    tflops: g.tflops,
                    tflops_first: g.tflops_first,
                    tflops_last: g.tflops_last,
                    stability: g.stability,
                    peak_temp_c: g.peak_temp_c,
                    temp_settled_s: g.temp_settled_s,
                    peak_memory_temp_c: g.peak_memory_temp_c,
                    sm_clock_mhz: g.sm_clock_mhz,
                    power_w: g.power_w,
                    power_limit_w: g.power_limit_w,
                    power_capped_s: g.power_capped_s,
                    thermal_throttled_s: g.thermal_throttled_s,
                    mismatches: g.compute.mismatches,
                    ecc_sbe: g.ecc_sbe,
                    ecc_dbe: g.ecc_dbe,
                    xids: g.xids.clone(),
                    findings,
                },
            )
        })
        .collect::<PyResult<_>>()?;
    Ok(PyBurnReport {
        gpus,
        status: status(o.verdict.status),
        exit_status: o.verdict.status.exit_code(),
        median_tflops: o.verdict.median_tflops,
        simulated: o.simulated,
        engine: o.engine.clone(),
        dtype: o.dtype.to_string(),
        size: o.size,
        seconds: o.seconds,
        notes: o.notes.clone(),
        json: dcgm_burn::report::json(o).to_string(),
    })
}

/// Burns the GPUs for `duration` seconds (dense `dtype` products of side `size`, the results
/// checked, DCGM sampled every `interval` seconds) and returns the verdict per GPU. `gpus`:
/// DCGM GPU ids (default: every GPU CUDA sees); `simulate=True` models the load on the
/// simulator shipped in the package (its configured node: `dcgm.testing.configure_simulator`
/// with GPUs of `workload="burn"`), `library_path` another libdcgm, `cublas` the cuBLAS to
/// load. Raises `RuntimeError` without an NVIDIA driver or GPU (and not simulated).
#[pyfunction]
#[pyo3(signature = (duration=60.0, *, gpus=None, dtype="bf16", size=8192, interval=0.5, simulate=false, library_path=None, cublas=None))]
#[allow(clippy::too_many_arguments)]
pub fn burn(
    py: Python<'_>,
    duration: f64,
    gpus: Option<Vec<u32>>,
    dtype: &str,
    size: usize,
    interval: f64,
    simulate: bool,
    library_path: Option<PathBuf>,
    cublas: Option<PathBuf>,
) -> PyResult<PyBurnReport> {
    if !(duration > 0.0 && duration <= 24.0 * 3600.0) {
        return Err(errors::badparam(
            py,
            "duration must be above 0 and at most a day, in seconds",
        ));
    }
    if !(interval >= 0.001 && interval <= duration.max(0.001)) {
        return Err(errors::badparam(
            py,
            "interval must be at least 0.001 s and at most the duration",
        ));
    }
    let dtype = dtype.parse().map_err(|e: String| errors::badparam(py, e))?;
    let lib = sim::resolve(simulate, library_path).py(py)?;
    let opts = Options {
        gpus: gpus.unwrap_or_default(),
        duration: Duration::from_secs_f64(duration),
        dtype,
        size,
        interval: Duration::from_secs_f64(interval),
        simulate,
        cublas,
        corrupt_result: None,
    };
    let stop = AtomicBool::new(false);
    let outcome = std::thread::scope(|s| {
        let run = s.spawn(|| {
            dcgm_burn::run(
                &opts,
                |b| {
                    let b = match &lib {
                        Some(p) => b.library_path(p),
                        None => b,
                    };
                    let mut r = b.build()?;
                    r.connect()?;
                    Ok(r)
                },
                |_, _| {},
                &stop,
            )
        });
        // Ctrl-C: the interpreter's signal, looked for every 100 ms with the GIL held.
        while !run.is_finished() {
            py.detach(|| std::thread::sleep(Duration::from_millis(100)));
            if py.check_signals().is_err() {
                stop.store(true, Ordering::Relaxed);
            }
        }
        run.join()
    });
    match outcome {
        Ok(Ok(o)) => report(py, &o),
        Ok(Err(BurnError::Dcgm(e))) => Err(e).py(py),
        Ok(Err(BurnError::NoGpu(e))) => Err(PyRuntimeError::new_err(e.to_string())),
        Ok(Err(e)) => Err(PyValueError::new_err(e.to_string())),
        Err(_) => Err(PyRuntimeError::new_err(
            "the burn stopped on an internal error",
        )),
    }
}
