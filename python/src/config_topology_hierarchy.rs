//! The rest of the dcgm crate's surface, as plain dicts and lists: configuration, profiling
//! metric groups, topology, NVLink, MIG and CPU hierarchies, host-engine introspection,
//! modules and GPU status.

use dcgm::raw::Binding;
use dcgm::{ComputeMode, ConfigKind, GpuConfig, Group, MetricGroup, Module, PciPath, System};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{self, ResultExt};

fn metric_groups<'py>(py: Python<'py>, groups: Vec<MetricGroup>) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for g in groups {
        let d = PyDict::new(py);
        d.set_item("major", g.major)?;
        d.set_item("minor", g.minor)?;
        d.set_item("fields", g.fields.iter().map(|f| f.0).collect::<Vec<_>>())?;
        l.append(d)?;
    }
    Ok(l)
}

fn pci(p: PciPath) -> String {
    p.to_string()
}

// --- System ---

pub fn profiling_metric_groups_gpu<'py>(
    py: Python<'py>,
    s: System,
    gpu: u32,
) -> PyResult<Bound<'py, PyList>> {
    let g = py.detach(move || s.profiling_metric_groups(gpu)).py(py)?;
    metric_groups(py, g)
}

pub fn device_topology<'py>(py: Python<'py>, s: System, gpu: u32) -> PyResult<Bound<'py, PyDict>> {
    let t = py.detach(move || s.device_topology(gpu)).py(py)?;
    let d = PyDict::new(py);
    d.set_item("cpu_affinity", t.cpu_affinity)?;
    let paths = PyList::empty(py);
    for p in t.paths {
        let x = PyDict::new(py);
        x.set_item("gpu", p.gpu)?;
        x.set_item("pci", pci(p.pci))?;
        x.set_item("nvlinks", p.nvlinks)?;
        x.set_item("local_links", p.local_links)?;
        paths.append(x)?;
    }
    d.set_item("paths", paths)?;
    Ok(d)
}

pub fn select_gpus_by_topology(
    py: Python<'_>,
    s: System,
    candidates: Vec<u32>,
    count: u32,
    ignore_health: bool,
) -> PyResult<Vec<u32>> {
    py.detach(move || s.select_gpus_by_topology(&candidates, count, ignore_health))
        .py(py)
}

pub fn nvlink_status<'py>(py: Python<'py>, s: System) -> PyResult<Bound<'py, PyDict>> {
    let st = py.detach(move || s.nvlink_status()).py(py)?;
    let d = PyDict::new(py);
    for (key, list) in [("gpus", &st.gpus), ("switches", &st.switches)] {
        let m = PyDict::new(py);
        for (id, links) in list {
            m.set_item(id, links.iter().map(|l| l.to_string()).collect::<Vec<_>>())?;
        }
        d.set_item(key, m)?;
    }
    Ok(d)
}

pub fn nvlink_p2p_status<'py>(py: Python<'py>, s: System) -> PyResult<Bound<'py, PyDict>> {
    let st = py.detach(move || s.nvlink_p2p_status()).py(py)?;
    let d = PyDict::new(py);
    for g in st {
        let m = PyDict::new(py);
        for (peer, status) in g.peers {
            m.set_item(peer, format!("{status:?}"))?;
        }
        d.set_item(g.gpu, m)?;
    }
    Ok(d)
}

pub fn mig_hierarchy<'py>(py: Python<'py>, s: System) -> PyResult<Bound<'py, PyList>> {
    let gpus = py.detach(move || s.mig_hierarchy()).py(py)?;
    let l = PyList::empty(py);
    for g in gpus {
        let d = PyDict::new(py);
        d.set_item("gpu", g.gpu)?;
        d.set_item("uuid", g.uuid)?;
        let instances = PyList::empty(py);
        for i in g.instances {
            let x = PyDict::new(py);
            x.set_item("entity_id", i.entity_id)?;
            x.set_item("nvml_instance_id", i.nvml_instance_id)?;
            x.set_item("profile_id", i.profile_id)?;
            x.set_item("slices", i.slices)?;
            let cis = PyList::empty(py);
            for c in i.compute_instances {
                let y = PyDict::new(py);
                y.set_item("entity_id", c.entity_id)?;
                y.set_item("nvml_compute_instance_id", c.nvml_compute_instance_id)?;
                y.set_item("profile_id", c.profile_id)?;
                y.set_item("slices", c.slices)?;
                cis.append(y)?;
            }
            x.set_item("compute_instances", cis)?;
            instances.append(x)?;
        }
        d.set_item("instances", instances)?;
        l.append(d)?;
    }
    Ok(l)
}

pub fn cpu_hierarchy<'py>(py: Python<'py>, s: System) -> PyResult<Bound<'py, PyList>> {
    let cpus = py.detach(move || s.cpu_hierarchy()).py(py)?;
    let l = PyList::empty(py);
    for c in cpus {
        let d = PyDict::new(py);
        d.set_item("id", c.id)?;
        d.set_item("cores", c.cores)?;
        d.set_item("serial", c.serial)?;
        l.append(d)?;
    }
    Ok(l)
}

pub fn hostengine_memory_bytes(py: Python<'_>, s: System) -> PyResult<u64> {
    py.detach(move || s.hostengine_memory_bytes()).py(py)
}

pub fn hostengine_cpu_utilization<'py>(py: Python<'py>, s: System) -> PyResult<Bound<'py, PyDict>> {
    let u = py.detach(move || s.hostengine_cpu_utilization()).py(py)?;
    let d = PyDict::new(py);
    d.set_item("total", u.total)?;
    d.set_item("kernel", u.kernel)?;
    d.set_item("user", u.user)?;
    Ok(d)
}

pub fn module_statuses<'py>(py: Python<'py>, s: System) -> PyResult<Bound<'py, PyDict>> {
    let all = py.detach(move || s.module_statuses()).py(py)?;
    let d = PyDict::new(py);
    for (m, st) in all {
        d.set_item(m.to_string(), format!("{st:?}"))?;
    }
    Ok(d)
}

/// A module by `DcgmModuleId*` number or by name (`"Diag"`, `"profiling"`).
pub fn module(py: Python<'_>, m: &Bound<'_, PyAny>) -> PyResult<Module> {
    if let Ok(id) = m.extract::<u32>() {
        return Ok(Module::from_raw(id));
    }
    let name: String = m.extract()?;
    (0..32)
        .map(Module::from_raw)
        .find(|x| !matches!(x, Module::Other(_)) && x.to_string().eq_ignore_ascii_case(&name))
        .ok_or_else(|| errors::badparam(py, format!("unknown DCGM module {name:?}")))
}

pub fn module_denylist(py: Python<'_>, s: System, m: &Bound<'_, PyAny>) -> PyResult<()> {
    let m = module(py, m)?;
    py.detach(move || s.module_denylist(m)).py(py)
}

pub fn gpu_status(py: Python<'_>, s: System, gpu: u32) -> PyResult<String> {
    Ok(format!(
        "{:?}",
        py.detach(move || s.gpu_status(gpu)).py(py)?
    ))
}

pub fn chip_architecture(py: Python<'_>, s: System, gpu: u32) -> PyResult<String> {
    Ok(py
        .detach(move || s.chip_architecture(gpu))
        .py(py)?
        .to_string())
}

// --- Group ---

pub fn profiling_metric_groups<'py>(py: Python<'py>, g: Group) -> PyResult<Bound<'py, PyList>> {
    let m = py.detach(move || g.profiling_metric_groups()).py(py)?;
    metric_groups(py, m)
}

pub fn group_topology<'py>(py: Python<'py>, g: Group) -> PyResult<Bound<'py, PyDict>> {
    let t = py.detach(move || g.topology()).py(py)?;
    let d = PyDict::new(py);
    d.set_item("cpu_affinity", t.cpu_affinity)?;
    d.set_item("numa_optimal", t.numa_optimal)?;
    d.set_item("slowest_pci", pci(t.slowest_pci))?;
    d.set_item("slowest_nvlinks", t.slowest_nvlinks)?;
    Ok(d)
}

fn compute_mode(py: Python<'_>, s: &str) -> PyResult<ComputeMode> {
    Ok(
        match s.to_ascii_lowercase().replace(['-', ' '], "_").as_str() {
            "default" => ComputeMode::Default,
            "prohibited" => ComputeMode::Prohibited,
            "exclusive_process" => ComputeMode::ExclusiveProcess,
            other => {
                return Err(errors::badparam(
                    py,
                    format!(
                        "compute mode {other:?}: use 'default', 'prohibited' or 'exclusive_process'"
                    ),
                ));
            }
        },
    )
}

#[allow(clippy::too_many_arguments)]
pub fn config_set(
    py: Python<'_>,
    g: Group,
    ecc_mode: Option<bool>,
    compute_mode_name: Option<String>,
    power_limit_w: Option<u32>,
    sm_app_clock_mhz: Option<u32>,
    mem_app_clock_mhz: Option<u32>,
    sync_boost: Option<bool>,
) -> PyResult<()> {
    let c = GpuConfig {
        gpu: 0,
        ecc_mode,
        compute_mode: compute_mode_name
            .map(|m| compute_mode(py, &m))
            .transpose()?,
        power_limit_w,
        sm_app_clock_mhz,
        mem_app_clock_mhz,
        sync_boost,
    };
    py.detach(move || g.config_set(&c)).py(py)
}

pub fn config_get<'py>(py: Python<'py>, g: Group, current: bool) -> PyResult<Bound<'py, PyList>> {
    let kind = if current {
        ConfigKind::Current
    } else {
        ConfigKind::Target
    };
    let all = py.detach(move || g.config_get(kind)).py(py)?;
    let l = PyList::empty(py);
    for c in all {
        let d = PyDict::new(py);
        d.set_item("gpu", c.gpu)?;
        d.set_item("ecc_mode", c.ecc_mode)?;
        d.set_item(
            "compute_mode",
            c.compute_mode.map(|m| match m {
                ComputeMode::Default => "default",
                ComputeMode::Prohibited => "prohibited",
                ComputeMode::ExclusiveProcess => "exclusive_process",
            }),
        )?;
        d.set_item("power_limit_w", c.power_limit_w)?;
        d.set_item("sm_app_clock_mhz", c.sm_app_clock_mhz)?;
        d.set_item("mem_app_clock_mhz", c.mem_app_clock_mhz)?;
        d.set_item("sync_boost", c.sync_boost)?;
        l.append(d)?;
    }
    Ok(l)
}

pub fn config_enforce(py: Python<'_>, g: Group) -> PyResult<()> {
    py.detach(move || g.config_enforce()).py(py)
}
