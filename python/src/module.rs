//! DCGM modules (`Diag`, `Profiling`, ...): named by number or name, their statuses
//! (`System.module_statuses`), and keeping one from loading (`System.module_denylist`,
//! `Handle.embedded(deny_modules=...)`).

use dcgm::raw::Binding;
use dcgm::{Module, System};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{self, ResultExt};

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
