//! The dcgm-sim library shipped in the wheel: used only when asked for (`simulate=True`), always
//! by its explicit path, never as a fallback of the normal libdcgm search.

use std::collections::HashMap;
use std::ffi::{CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pyo3::prelude::*;

use crate::errors::{self, ResultExt};

static PACKAGED: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Tells the module where the package keeps its copy of the simulator (set by
/// `dcgm/__init__.py` at import).
#[pyfunction]
#[pyo3(name = "_set_packaged_simulator")]
pub fn set_packaged_simulator(path: Option<PathBuf>) {
    *PACKAGED.lock().unwrap_or_else(|p| p.into_inner()) = path;
}

/// The packaged simulator, if this installation has one.
pub fn packaged() -> Option<PathBuf> {
    PACKAGED.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The library a handle should load: an explicit path wins; `simulate` means the packaged
/// simulator; otherwise libdcgm's normal search (`DCGM_LIB_PATH`, the sonames, the
/// distribution directories), which must not end at the simulator (see [`default_search`]).
pub fn resolve(simulate: bool, library_path: Option<PathBuf>) -> dcgm::Result<Option<PathBuf>> {
    if let Some(p) = library_path {
        return Ok(Some(p));
    }
    if !simulate {
        return default_search();
    }
    match packaged() {
        Some(p) if p.is_file() => Ok(Some(p)),
        p => Err(dcgm::Error::SimulatorNotFound(format!(
            "simulate=True, but this installation of the dcgm package has no simulator (looked \
             for {}): install a wheel built by python/build_and_test.sh, or pass library_path= \
             the path of libdcgm_sim.so",
            p.map_or_else(
                || "dcgm/_sim/libdcgm_sim.so".into(),
                |p| p.display().to_string()
            )
        ))),
    }
}

/// libdcgm's normal search. The loader in `dcgm-sys` never accepts the simulator from the
/// soname or distribution-directory search (dcgm-sim's soname is `libdcgm.so.4`, so once this
/// process has loaded it the dynamic loader would answer with it): simulated data only comes
/// from an explicit `simulate=True` or library path.
fn default_search() -> dcgm::Result<Option<PathBuf>> {
    Ok(None)
}

type ConfigureFn = unsafe extern "C" fn(*const c_char) -> i32;

/// Simulator libraries opened for configuration, kept loaded for the rest of the process so a
/// configuration is not forgotten between handles.
static CONFIGURERS: Mutex<Option<HashMap<PathBuf, (libloading::Library, ConfigureFn)>>> =
    Mutex::new(None);

fn configure(path: &Path, json: Option<&str>) -> dcgm::Result<()> {
    let c = json.map(CString::new).transpose().map_err(|_| {
        dcgm::Error::InvalidArgument("the configuration contains a NUL byte".into())
    })?;
    let mut map = CONFIGURERS.lock().unwrap_or_else(|p| p.into_inner());
    let map = map.get_or_insert_with(HashMap::new);
    if !map.contains_key(path) {
        // SAFETY: dcgm-sim's initialisers have no preconditions; the same file is opened by
        // the handles, and the dynamic loader shares one instance between both opens.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| {
            dcgm::Error::SimulatorNotFound(format!("could not load {}: {e}", path.display()))
        })?;
        // SAFETY: dcgm-sim exports dcgmSimConfigure with this signature.
        let f = unsafe { lib.get::<ConfigureFn>(b"dcgmSimConfigure\0") }
            .map(|s| *s)
            .map_err(|_| {
                dcgm::Error::SimulatorNotFound(format!(
                    "{} does not export dcgmSimConfigure: it is not dcgm-sim",
                    path.display()
                ))
            })?;
        map.insert(path.to_path_buf(), (lib, f));
    }
    let f = map[path].1;
    // SAFETY: NULL or a NUL-terminated string valid for the call; the library stays loaded.
    let rc = unsafe { f(c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) };
    if rc != 0 {
        return Err(dcgm::Error::InvalidArgument(
            "the simulator rejected the configuration (its reason is on stderr)".into(),
        ));
    }
    Ok(())
}

/// Replaces the simulator's configuration (dcgm-sim's JSON or TOML config; `None` returns to
/// `DCGM_SIM_CONFIG` or the default node). It applies at the next `dcgmInit`, that is once no
/// handle on the simulator is open.
#[pyfunction]
#[pyo3(signature = (config=None, library_path=None))]
pub fn configure_simulator(
    py: Python<'_>,
    config: Option<String>,
    library_path: Option<PathBuf>,
) -> PyResult<()> {
    let path = resolve(true, library_path)
        .py(py)?
        .ok_or_else(|| errors::badparam(py, "no simulator library to configure"))?;
    py.detach(|| configure(&path, config.as_deref())).py(py)
}
