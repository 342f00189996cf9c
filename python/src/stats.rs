//! Process and job statistics (`Group.watch_pid_fields` / `pid_info`, `Group.job_start`,
//! `Handle.job_stats`), as dicts that keep one level: what both kinds share sits flat in each
//! per-GPU dict.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dcgm::{GpuUsage, Group, JobGpuStats, PidGpuInfo, StatSummary, WatchOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::ResultExt;

fn secs(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

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
