//! `dcgm.compat`'s way into libdcgm: every C function of `dcgm-sys`'s table, called by its
//! index with integer and float arguments (addresses for pointers), the GIL released during
//! the call; and `dcgm-sys`'s layout table, from which `dcgm.compat.dcgm_structs` builds its
//! ctypes classes. NVIDIA's bindings reach the library with `ctypes.CDLL`; this package never
//! loads libdcgm from Python: the library is the one `dcgm-sys` finds, opened once per process.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use dcgm::raw::sys::layout::{self, ConstValue};
use dcgm::raw::sys::{DcgmApi, DcgmLibrary, RawArg, RawCallError};
use pyo3::exceptions::{PyLookupError, PyOSError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyList, PyTuple};

use crate::sim;

/// The library the compat layer calls, opened on first use and kept for the process (DCGM's
/// state is process-wide, and the function addresses must stay valid). Read without a lock on
/// every call; [`OPENING`] serialises the one open.
static LIBRARY: OnceLock<DcgmLibrary> = OnceLock::new();
static OPENING: Mutex<()> = Mutex::new(());

fn loaded() -> Option<&'static DcgmLibrary> {
    LIBRARY.get()
}

/// Most parameters of any table function (dcgmGetFieldValuesSince has 8).
const MAX_ARGS: usize = 12;

/// Opens the library for the compat layer, once: `library_path` (a file, or a directory
/// holding `libdcgm.so.4`), else the packaged simulator when `simulate`, else `dcgm-sys`'s
/// search (`DCGM_LIB_PATH`, the sonames, the distribution directories). Answers the path of
/// the library in use and whether it is the simulator; a second call with another choice
/// keeps the first library and says so by its answer.
#[pyfunction]
#[pyo3(signature = (library_path=None, simulate=false))]
pub fn raw_open(
    py: Python<'_>,
    library_path: Option<PathBuf>,
    simulate: bool,
) -> PyResult<(String, bool)> {
    let _opening = OPENING.lock().unwrap_or_else(|p| p.into_inner());
    if LIBRARY.get().is_none() {
        let path = match library_path {
            Some(p) if p.is_dir() => Some(p.join("libdcgm.so.4")),
            Some(p) => Some(p),
            None => sim::resolve(simulate, None).map_err(|e| crate::errors::to_py(py, &e))?,
        };
        let lib = py
            .detach(|| match path {
                Some(p) => DcgmLibrary::open_path(p),
                None => DcgmLibrary::open(),
            })
            .map_err(|e| PyOSError::new_err(e.to_string()))?;
        let _ = LIBRARY.set(lib);
    }
    let lib = LIBRARY.get().expect("opened above");
    Ok((lib.path().display().to_string(), lib.is_simulator()))
}

/// The library in use, if one was opened: `(path, is_simulator)`.
#[pyfunction]
pub fn raw_library() -> Option<(String, bool)> {
    loaded().map(|l| (l.path().display().to_string(), l.is_simulator()))
}

/// The index of a C function in the table, or `None` if `dcgm-sys` does not bind it.
#[pyfunction]
pub fn raw_index(name: &str) -> Option<usize> {
    DcgmApi::index_of(name)
}

/// Whether the opened library exports the function at `index`.
#[pyfunction]
pub fn raw_has(index: usize) -> PyResult<bool> {
    let lib = loaded().ok_or_else(not_open)?;
    let name = DcgmApi::SYMBOLS
        .get(index)
        .ok_or_else(|| PyLookupError::new_err(format!("no function has index {index}")))?;
    Ok(!lib.api().missing_symbols().contains(name))
}

fn not_open() -> PyErr {
    PyOSError::new_err("no libdcgm is open for dcgm.compat: call dcgm_structs._dcgmInit() first")
}

fn arg(a: &Bound<'_, PyAny>, position: usize) -> PyResult<RawArg> {
    if a.is_instance_of::<PyInt>() {
        if let Ok(v) = a.extract::<i64>() {
            return Ok(RawArg::Int(v.into()));
        }
        return a
            .extract::<u64>()
            .map(|v| RawArg::Int(v.into()))
            .map_err(|_| {
                PyOverflowError::new_err(format!("argument {position} does not fit 64 bits"))
            });
    }
    if a.is_instance_of::<PyFloat>() {
        return Ok(RawArg::Float(a.extract()?));
    }
    if a.is_none() {
        return Ok(RawArg::Int(0));
    }
    Err(PyTypeError::new_err(format!(
        "argument {position}: expected an int, a float or None (an address for a pointer), got {}",
        a.get_type().name()?
    )))
}

/// Calls the C function at `index` with `args` (ints, floats, or None for a null pointer),
/// releasing the GIL; answers its return value as an int (a pointer as its address).
///
/// The caller (the `dcgm.compat` modules) passes addresses of ctypes objects it keeps alive
/// for the call; a wrong arity or an int that does not fit its C parameter is a `TypeError`
/// or `OverflowError` before any call is made.
#[pyfunction]
#[pyo3(signature = (index, *args))]
pub fn raw_call(py: Python<'_>, index: usize, args: &Bound<'_, PyTuple>) -> PyResult<i128> {
    let lib = loaded().ok_or_else(not_open)?;
    if args.len() > MAX_ARGS {
        return Err(PyTypeError::new_err(format!(
            "at most {MAX_ARGS} arguments, {} given",
            args.len()
        )));
    }
    let mut buf = [RawArg::Int(0); MAX_ARGS];
    for (i, a) in args.iter().enumerate() {
        buf[i] = arg(&a, i)?;
    }
    let words = &buf[..args.len()];
    // SAFETY: the compat modules pass, for each pointer parameter, the address of a live ctypes
    // object of the parameter's C layout (built from dcgm-sys's layout table), kept referenced
    // by the caller until this returns; callbacks are ctypes CFUNCTYPE thunks of the declared
    // signature, kept alive as long as the library may call them.
    let r = py.detach(|| unsafe { lib.api().call_raw(index, words) });
    r.map_err(|e| match e {
        RawCallError::Missing(_) | RawCallError::UnknownFunction(_) => {
            PyLookupError::new_err(e.to_string())
        }
        RawCallError::Arity { .. } => PyTypeError::new_err(e.to_string()),
        RawCallError::Argument { .. } => PyValueError::new_err(e.to_string()),
    })
}

/// `(name, parameter count)` of every C function of the table, by index.
#[pyfunction]
pub fn raw_arities() -> Vec<(&'static str, usize)> {
    DcgmApi::SYMBOLS
        .iter()
        .enumerate()
        .map(|(i, n)| (*n, DcgmApi::arity(i).unwrap_or(0)))
        .collect()
}

/// The names of every C function of the table, by index.
#[pyfunction]
pub fn raw_symbols() -> Vec<&'static str> {
    DcgmApi::SYMBOLS.to_vec()
}

/// `dcgm-sys`'s layout table: `[(name, is_union, is_packed, size, align, [(field, rust_type,
/// offset)])]`.
#[pyfunction]
pub fn raw_layouts<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for s in layout::STRUCT_LAYOUTS {
        let fields: Vec<(&str, &str, usize)> =
            s.fields.iter().map(|f| (f.name, f.ty, f.offset)).collect();
        out.append((s.name, s.union, s.packed, s.size, s.align, fields))?;
    }
    Ok(out)
}

/// `dcgm-sys`'s type aliases: `{name: rust_type}`.
#[pyfunction]
pub fn raw_aliases<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (a, t) in layout::TYPE_ALIASES {
        out.set_item(a, t)?;
    }
    Ok(out)
}

/// `dcgm-sys`'s integer, float and string constants: `{name: value}`.
#[pyfunction]
pub fn raw_constants<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (name, v) in layout::CONSTANTS {
        match v {
            ConstValue::Int(i) => out.set_item(name, i)?,
            ConstValue::Float(f) => out.set_item(name, f)?,
            ConstValue::Str(s) => out.set_item(name, s)?,
        }
    }
    Ok(out)
}
