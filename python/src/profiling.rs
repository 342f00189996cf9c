//! Profiling metric groups of a GPU (`System.profiling_metric_groups`) or of a group's first GPU
//! (`Group.profiling_metric_groups`), as `[{"major", "minor", "fields"}]`.

use dcgm::{Group, MetricGroup, System};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::ResultExt;

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

pub fn profiling_metric_groups_gpu<'py>(
    py: Python<'py>,
    s: System,
    gpu: u32,
) -> PyResult<Bound<'py, PyList>> {
    let g = py.detach(move || s.profiling_metric_groups(gpu)).py(py)?;
    metric_groups(py, g)
}

pub fn profiling_metric_groups<'py>(py: Python<'py>, g: Group) -> PyResult<Bound<'py, PyList>> {
    let m = py.detach(move || g.profiling_metric_groups()).py(py)?;
    metric_groups(py, m)
}
