//! Diagnostics of a group (`Group.run_diagnostic`), the response as a dict.

use dcgm::{DiagLevel, DiagRequest, DiagResponse, DiagResult, Group};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::duration::seconds;
use crate::entity::entity_tuple;
use crate::errors::{self, ResultExt};

fn diag_result(r: DiagResult) -> String {
    r.to_string()
}

fn diag_error<'py>(py: Python<'py>, e: &dcgm::DiagError) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("entity", e.entity.map(entity_tuple))?;
    d.set_item("code", e.code)?;
    d.set_item("code_name", e.code_name)?;
    d.set_item("category", e.category.map(|c| format!("{c:?}")))?;
    d.set_item("severity", e.severity.map(|s| s.to_string()))?;
    d.set_item("message", &e.message)?;
    Ok(d)
}

fn diag_dict<'py>(py: Python<'py>, r: &DiagResponse) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("overall", diag_result(r.overall()))?;
    let tests = PyList::empty(py);
    for t in &r.tests {
        let x = PyDict::new(py);
        x.set_item("name", &t.name)?;
        x.set_item("plugin", &t.plugin)?;
        x.set_item("category", &t.category)?;
        x.set_item("result", diag_result(t.result))?;
        let per = PyList::empty(py);
        for (e, res) in &t.results {
            per.append((entity_tuple(*e), diag_result(*res)))?;
        }
        x.set_item("results", per)?;
        let errs = PyList::empty(py);
        for e in &t.errors {
            errs.append(diag_error(py, e)?)?;
        }
        x.set_item("errors", errs)?;
        x.set_item("info", t.info.clone())?;
        tests.append(x)?;
    }
    d.set_item("tests", tests)?;
    let ents = PyList::empty(py);
    for e in &r.entities {
        let x = PyDict::new(py);
        x.set_item("entity", entity_tuple(e.entity))?;
        x.set_item("serial", &e.serial)?;
        x.set_item("sku_device_id", &e.sku_device_id)?;
        ents.append(x)?;
    }
    d.set_item("entities", ents)?;
    let other = PyList::empty(py);
    for e in &r.other_errors {
        other.append(diag_error(py, e)?)?;
    }
    d.set_item("other_errors", other)?;
    d.set_item("dcgm_version", &r.dcgm_version)?;
    d.set_item("driver_version", &r.driver_version)?;
    Ok(d)
}

#[allow(clippy::too_many_arguments)]
pub fn run_diagnostic<'py>(
    py: Python<'py>,
    g: Group,
    level: u32,
    tests: Option<Vec<String>>,
    params: Option<Vec<String>>,
    verbose: bool,
    fail_early: bool,
    timeout: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let lvl = match level {
        1 => DiagLevel::Short,
        2 => DiagLevel::Medium,
        3 => DiagLevel::Long,
        4 => DiagLevel::ExtraLong,
        n => {
            return Err(errors::badparam(
                py,
                format!("diagnostic level {n}: use 1, 2, 3 or 4"),
            ));
        }
    };
    let mut req = match tests {
        Some(t) => DiagRequest::tests(t),
        None => DiagRequest::level(lvl),
    };
    for p in params.unwrap_or_default() {
        req = req.param(p);
    }
    req = req.verbose(verbose).fail_early(fail_early);
    if let Some(t) = timeout {
        req = req.timeout(seconds(py, "timeout", t)?);
    }
    let r = py.detach(move || g.run_diag(&req)).py(py)?;
    diag_dict(py, &r)
}
