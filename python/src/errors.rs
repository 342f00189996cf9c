//! DCGM errors as Python exceptions: every `dcgm::Error` becomes an instance of the
//! `dcgm.structs.DCGMError_<Name>` subclass of its return code, carrying the code, the message
//! and the hint.

use dcgm::raw::sys::{DCGM_ST_BADPARAM, DCGM_ST_UNINITIALIZED, DCGM_ST_UNKNOWN_FIELD};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

static FACTORY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Builds the Python exception for a code, a message and an optional hint through
/// `dcgm.structs._from_native`.
pub fn raise(py: Python<'_>, code: i32, message: String, hint: Option<&str>) -> PyErr {
    let factory = FACTORY.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("dcgm.structs")?.getattr("_from_native")?.unbind())
    });
    let made = factory.and_then(|f| f.bind(py).call1((code, message.clone(), hint)));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => {
            let err = PyRuntimeError::new_err(format!("DCGM error {code}: {message}"));
            err.set_cause(py, Some(e));
            err
        }
    }
}

/// The Python exception of a `dcgm::Error`.
pub fn to_py(py: Python<'_>, e: &dcgm::Error) -> PyErr {
    let code = e.code().raw();
    match e {
        // The Python-side way to the simulator is `simulate=True`: say so where it matters.
        dcgm::Error::LibraryNotFound(_) => raise(
            py,
            code,
            format!(
                "{e}\nIn Python, pass simulate=True to read from the simulator shipped in this \
                 package."
            ),
            e.hint(),
        ),
        _ => raise(py, code, e.to_string(), e.hint()),
    }
}

/// `DCGMError_Badparam` with this message.
pub fn badparam(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, DCGM_ST_BADPARAM, message.into(), None)
}

/// `DCGMError_UnknownField` with this message.
pub fn unknown_field(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(py, DCGM_ST_UNKNOWN_FIELD, message.into(), None)
}

/// `DCGMError_Uninitialized` for an object that was closed.
pub fn closed(py: Python<'_>, what: &str) -> PyErr {
    raise(
        py,
        DCGM_ST_UNINITIALIZED,
        format!("this {what} was closed"),
        Some("create a new one"),
    )
}

/// `dcgm::Result` to `PyResult`.
pub trait ResultExt<T> {
    /// Converts the error to its Python exception.
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> ResultExt<T> for dcgm::Result<T> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, &e))
    }
}
