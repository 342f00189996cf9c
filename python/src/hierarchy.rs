//! Entity hierarchies: GPUs in MIG mode with their GPU and compute instances
//! (`System.mig_hierarchy`), and CPUs with their cores (`System.cpu_hierarchy`), as lists of
//! dicts.

use dcgm::System;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::ResultExt;

/// A GPU instance as the dict `System.mig_hierarchy` and `System.create_gpu_instance` give.
pub fn gpu_instance_dict<'py>(
    py: Python<'py>,
    i: dcgm::GpuInstance,
) -> PyResult<Bound<'py, PyDict>> {
    let x = PyDict::new(py);
    x.set_item("entity_id", i.entity_id)?;
    x.set_item("nvml_instance_id", i.nvml_instance_id)?;
    x.set_item("profile_id", i.profile_id)?;
    x.set_item("slices", i.slices)?;
    let cis = PyList::empty(py);
    for c in i.compute_instances {
        cis.append(compute_instance_dict(py, c)?)?;
    }
    x.set_item("compute_instances", cis)?;
    Ok(x)
}

/// A compute instance as a dict (see [`gpu_instance_dict`]).
pub fn compute_instance_dict<'py>(
    py: Python<'py>,
    c: dcgm::ComputeInstance,
) -> PyResult<Bound<'py, PyDict>> {
    let y = PyDict::new(py);
    y.set_item("entity_id", c.entity_id)?;
    y.set_item("nvml_compute_instance_id", c.nvml_compute_instance_id)?;
    y.set_item("profile_id", c.profile_id)?;
    y.set_item("slices", c.slices)?;
    Ok(y)
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
            instances.append(gpu_instance_dict(py, i)?)?;
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
