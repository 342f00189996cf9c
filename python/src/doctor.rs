//! `dcgm.doctor` and `dcgm.doctor_replay`: the dcgm-doctor crate's diagnosis from Python, live
//! (sampled through the reader, the GIL released while it samples) or from a `dmon --json`
//! recording. Findings come back as `Finding` objects with the crate's fields.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use dcgm_doctor::Window;
use dcgm_doctor::live::{self, Live};
use dcgm_doctor::replay::{self, Selection};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use crate::errors::{self, ResultExt};
use crate::sim;

/// One conclusion of the doctor, as `dcgm_doctor::Finding`.
#[pyclass(name = "Finding", module = "dcgm._native", frozen, get_all)]
pub struct PyFinding {
    /// `input_starved`, `pcie_transfer_bound`, ... (the kind's `--json` name).
    kind: &'static str,
    /// `problem`, `warning` or `info`.
    severity: &'static str,
    /// The GPUs it concerns.
    gpus: Vec<u32>,
    /// `(start_ms, end_ms)`: when the evidence starts and ends, ms since the Unix epoch.
    span: (i64, i64),
    /// The numbers behind it: `{name: value}`.
    evidence: BTreeMap<String, f64>,
    /// The unit of each number: `{name: unit}` (`ratio`, `%`, `B/s`, `s`, `MHz`, `W`, ...).
    units: BTreeMap<String, String>,
    /// What is happening, in one line.
    explanation: String,
    /// What to try.
    advice: String,
}

#[pymethods]
impl PyFinding {
    fn __repr__(&self) -> String {
        format!(
            "Finding({} {} on GPU {:?}: {})",
            self.severity, self.kind, self.gpus, self.explanation
        )
    }
}

/// What the doctor concluded about a window, as `dcgm_doctor::Report`.
#[pyclass(name = "DoctorReport", module = "dcgm._native", frozen, get_all)]
pub struct PyReport {
    /// The findings, worst first, then by time.
    findings: Vec<Py<PyFinding>>,
    /// `{kind: reason}` for each kind the samples lacked the fields to judge.
    not_judged: BTreeMap<String, String>,
    /// The GPUs judged.
    gpus: Vec<u32>,
    /// `{gpu: last_ms}` for each GPU that stopped reporting before the window's end.
    stopped: BTreeMap<u32, i64>,
    /// `(first_ms, last_ms)` of the samples, `None` for none.
    span: Option<(i64, i64)>,
    /// How many samples, of every GPU.
    samples: usize,
    /// The samples came from the simulator.
    simulated: bool,
    /// What the run noted (the phase judged, an interruption, a stopped read).
    notes: Vec<String>,
}

#[pymethods]
impl PyReport {
    fn __repr__(&self) -> String {
        format!(
            "DoctorReport({} findings on GPU {:?}, {} samples{})",
            self.findings.len(),
            self.gpus,
            self.samples,
            if self.simulated { ", simulated" } else { "" }
        )
    }

    fn __len__(&self) -> usize {
        self.findings.len()
    }
}

fn report(py: Python<'_>, window: &Window, notes: Vec<String>) -> PyResult<PyReport> {
    let r = py.detach(|| dcgm_doctor::judge(window));
    let findings = r
        .findings
        .iter()
        .map(|f| {
            Py::new(
                py,
                PyFinding {
                    kind: f.kind.name(),
                    severity: match f.severity {
                        dcgm_doctor::Severity::Problem => "problem",
                        dcgm_doctor::Severity::Warning => "warning",
                        dcgm_doctor::Severity::Info => "info",
                    },
                    gpus: f.gpus.clone(),
                    span: (f.start_ms, f.end_ms),
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
                    explanation: f.explanation.clone(),
                    advice: f.advice.clone(),
                },
            )
        })
        .collect::<PyResult<_>>()?;
    Ok(PyReport {
        findings,
        not_judged: r
            .not_judged
            .iter()
            .map(|n| (n.kind.name().to_string(), n.reason.clone()))
            .collect(),
        gpus: r.gpus,
        stopped: r.stopped.iter().map(|s| (s.gpu, s.last_ms)).collect(),
        span: r.span_ms,
        samples: r.samples,
        simulated: r.simulated,
        notes,
    })
}

/// Samples the GPUs for `duration` seconds every `interval` seconds and judges what it saw.
/// `gpus`: the GPU ids (default: every GPU); `simulate=True` reads the simulator shipped in
/// the package, `library_path` another libdcgm. The GIL is released while sampling; Ctrl-C
/// ends the sampling early and what was sampled is still judged.
#[pyfunction]
#[pyo3(signature = (duration=30.0, *, gpus=None, interval=0.1, simulate=false, library_path=None))]
pub fn doctor(
    py: Python<'_>,
    duration: f64,
    gpus: Option<Vec<u32>>,
    interval: f64,
    simulate: bool,
    library_path: Option<PathBuf>,
) -> PyResult<PyReport> {
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
    let delay = Duration::from_secs_f64(interval);
    let mut b = live::reader_builder(delay);
    if let Some(g) = &gpus {
        b = b.gpu_ids(g);
    }
    if let Some(p) = sim::resolve(simulate, library_path).py(py)? {
        b = b.library_path(p);
    }
    let reader = b.build().py(py)?;
    // A simulated node's pids are not this machine's: they go unnamed.
    let mut live = py
        .detach(|| {
            Live::new(reader, |pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .ok()
                    .map(|s| s.trim().to_string())
            })
        })
        .py(py)?;
    let simulated = live.simulated();
    if simulated {
        live = live.with_names(|_| None);
    }
    let mut window = Window::default();
    window.simulated = simulated;
    let mut notes = Vec::new();
    let total = Duration::from_secs_f64(duration);
    let start = Instant::now();
    while start.elapsed() < total {
        // A sample with the GIL released, then a look for Ctrl-C with it held.
        let read = py.detach(|| {
            let tick = Instant::now();
            let r = live.tick(&mut window, None);
            if let Some(rest) = delay.checked_sub(tick.elapsed()) {
                std::thread::sleep(rest.min(total.saturating_sub(start.elapsed())));
            }
            r
        });
        if let Err(e) = read {
            notes.push(format!(
                "sampling stopped after {:.1} s: {e}",
                start.elapsed().as_secs_f64()
            ));
            break;
        }
        if py.check_signals().is_err() {
            notes.push(format!(
                "interrupted after {:.1} s: judged what was sampled",
                start.elapsed().as_secs_f64()
            ));
            break;
        }
    }
    notes.extend(live.notes().iter().cloned());
    py.detach(|| live.shutdown());
    if window.is_empty() {
        return Err(PyValueError::new_err(
            "no GPU sent a sample: nothing to judge",
        ));
    }
    report(py, &window, notes)
}

/// Judges a `dmon --json` recording: all of it, one `phase` of its phases file (`phases`, by
/// default the file's name with `-phases.txt` for `.jsonl`), from `settle` seconds after the
/// phase's start, or the seconds `start`..`end` after its first sample.
#[pyfunction]
#[pyo3(signature = (path, phase=None, *, phases=None, settle=replay::PHASE_SETTLE_S, start=None, end=None))]
pub fn doctor_replay(
    py: Python<'_>,
    path: PathBuf,
    phase: Option<String>,
    phases: Option<PathBuf>,
    settle: f64,
    start: Option<f64>,
    end: Option<f64>,
) -> PyResult<PyReport> {
    if phase.is_some() && (start.is_some() || end.is_some()) {
        return Err(PyValueError::new_err("give a phase or start/end, not both"));
    }
    let result = py.detach(|| -> Result<(Window, Vec<String>), PyErr> {
        let f = std::fs::File::open(&path)
            .map_err(|e| PyOSError::new_err(format!("cannot open {}: {e}", path.display())))?;
        let trace = replay::read(std::io::BufReader::new(f))
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
        let phases_file = phases.clone().or_else(|| {
            let name = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
            let p = path.with_file_name(format!("{name}-phases.txt"));
            p.is_file().then_some(p)
        });
        let marks = match &phases_file {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| PyOSError::new_err(format!("cannot read {}: {e}", p.display())))?;
                replay::phases(&text)
                    .map_err(|e| PyValueError::new_err(format!("{}: {e}", p.display())))?
            }
            None => Vec::new(),
        };
        let mut notes = Vec::new();
        let sel = match (&phase, start, end) {
            (Some(name), _, _) => {
                if phases_file.is_none() {
                    return Err(PyValueError::new_err(format!(
                        "a phase needs a phases file: none beside {} (give phases=FILE)",
                        path.display()
                    )));
                }
                notes.push(format!(
                    "judged phase {name}, from {settle} s after its start to its end"
                ));
                Selection::Phase {
                    name: name.clone(),
                    settle_s: settle,
                }
            }
            (None, None, None) => Selection::All,
            (None, from_s, to_s) => Selection::Range { from_s, to_s },
        };
        let window = replay::select(&trace.window, &marks, &sel)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((window, notes))
    });
    let (window, notes) = result?;
    report(py, &window, notes)
}
