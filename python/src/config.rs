//! GPU configuration of a group (`Group.config_set` / `config_get` / `config_enforce`): ECC,
//! compute mode, power limit, application clocks and sync boost, as dicts.

use dcgm::{ComputeMode, ConfigKind, GpuConfig, Group};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{self, ResultExt};

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
