//! The return-code table `dcgm.structs` builds its `DCGM_ST_*` constants and `DCGMError_*`
//! classes from (`dcgm_sys::RETURN_CODES`).

use dcgm::raw::sys;
use pyo3::prelude::*;

/// Every `dcgmReturn_t` code: `(code, C name, description, pydcgm class suffix)`.
#[pyfunction]
pub fn return_codes() -> Vec<(i32, &'static str, &'static str, String)> {
    sys::RETURN_CODES
        .iter()
        .map(|(c, n, d)| (*c, *n, *d, sys::python_error_suffix(n)))
        .collect()
}

/// The class-name suffix pydcgm gives the exception of a return code's C name.
#[pyfunction]
pub fn python_error_suffix(c_name: &str) -> String {
    sys::python_error_suffix(c_name)
}
