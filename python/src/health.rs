//! Health watches of a group (`Group.health_set` / `health_get` / `health_check`), the
//! check's report as a dict.

use dcgm::{Group, HealthSystems};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::duration::seconds;
use crate::entity::entity_tuple;
use crate::errors::ResultExt;
use crate::flags::named_flags;

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

/// The named health systems: `(name, bit)`, in declaration order, `ALL` last.
#[pyfunction]
pub fn health_systems() -> Vec<(&'static str, u32)> {
    named_flags::<HealthSystems>()
}
