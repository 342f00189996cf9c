//! Topology: a GPU's CPU affinity and paths to the other GPUs (`System.device_topology`), the
//! best-connected GPUs (`System.select_gpus_by_topology`), and a group's topology
//! (`Group.topology`), as dicts.

use dcgm::{Group, PciPath, System};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::ResultExt;

fn pci(p: PciPath) -> String {
    p.to_string()
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

pub fn group_topology<'py>(py: Python<'py>, g: Group) -> PyResult<Bound<'py, PyDict>> {
    let t = py.detach(move || g.topology()).py(py)?;
    let d = PyDict::new(py);
    d.set_item("cpu_affinity", t.cpu_affinity)?;
    d.set_item("numa_optimal", t.numa_optimal)?;
    d.set_item("slowest_pci", pci(t.slowest_pci))?;
    d.set_item("slowest_nvlinks", t.slowest_nvlinks)?;
    Ok(d)
}
