//! Host-engine introspection: the memory and CPU the engine itself uses
//! (`System.hostengine_memory_bytes`, `System.hostengine_cpu_utilization`).

use dcgm::System;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::ResultExt;

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
