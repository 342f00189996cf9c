//! Seconds as Python writes them (floats) to `Duration`s, checked.

use std::time::Duration;

use pyo3::prelude::*;

use crate::errors;

/// Seconds (a float) to a `Duration`; negative, NaN or huge values raise `DCGMError_Badparam`.
pub fn seconds(py: Python<'_>, what: &str, s: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| {
        errors::badparam(
            py,
            format!("{what} must be a non-negative number of seconds, not {s}"),
        )
    })
}
