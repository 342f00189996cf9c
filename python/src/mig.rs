//! MIG management (`System.create_gpu_instance`, `create_compute_instance`,
//! `delete_gpu_instance`, `delete_compute_instance`): the `dcgm` crate's calls, with DCGM's
//! profile constants as ints.

use dcgm::System;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::ResultExt;
use crate::hierarchy::{compute_instance_dict, gpu_instance_dict};

pub fn create_gpu_instance<'py>(
    py: Python<'py>,
    s: System,
    gpu: u32,
    profile: u32,
) -> PyResult<Bound<'py, PyDict>> {
    let p = dcgm::raw::gpu_instance_profile_from(profile).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{profile} is not a GPU-instance profile: use DCGM's DcgmMigProfileGpuInstanceSlice* \
             values 1 to 10 (3 = three slices, 5 = seven)"
        ))
    })?;
    let gi = py.detach(move || s.create_gpu_instance(gpu, p)).py(py)?;
    gpu_instance_dict(py, gi)
}

pub fn create_compute_instance<'py>(
    py: Python<'py>,
    s: System,
    gpu_instance: u32,
    profile: u32,
) -> PyResult<Bound<'py, PyDict>> {
    let p = dcgm::raw::compute_instance_profile_from(profile).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{profile} is not a compute-instance profile: use DCGM's \
             DcgmMigProfileComputeInstanceSlice* values 30 to 37 (30 = one slice)"
        ))
    })?;
    let ci = py
        .detach(move || s.create_compute_instance(gpu_instance, p))
        .py(py)?;
    compute_instance_dict(py, ci)
}

pub fn delete_gpu_instance(py: Python<'_>, s: System, gpu_instance: u32) -> PyResult<()> {
    py.detach(move || s.delete_gpu_instance(gpu_instance))
        .py(py)
}

pub fn delete_compute_instance(py: Python<'_>, s: System, compute_instance: u32) -> PyResult<()> {
    py.detach(move || s.delete_compute_instance(compute_instance))
        .py(py)
}
