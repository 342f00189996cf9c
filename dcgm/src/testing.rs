//! Helpers for examples, doc tests and tests that run against dcgm-sim.

use std::path::PathBuf;

/// The dcgm-sim library: [`crate::find_simulator`], or, for doc tests that run from a temporary
/// directory, the library in this workspace's `target` directory.
///
/// # Panics
///
/// If the simulator has not been built (`cargo build -p dcgm-sim`).
pub fn simulator_path() -> PathBuf {
    if let Ok(p) = crate::find_simulator() {
        return p;
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../target"));
    for profile in ["debug", "release"] {
        let p = target.join(profile).join("libdcgm_sim.so");
        if p.is_file() {
            return p;
        }
    }
    panic!("dcgm-sim is not built: run `cargo build -p dcgm-sim` first");
}

/// Replaces the simulator's configuration (a dcgm-sim `SimConfig` as JSON; `None` returns to
/// `DCGM_SIM_CONFIG`/the default node) through its exported `dcgmSimConfigure`. It applies at
/// the next `dcgmInit`, that is when no handle on the simulator is open. The simulator library
/// stays loaded for the rest of the process so the configuration is not forgotten.
///
/// ```
/// dcgm::testing::configure_simulator(Some(r#"{"gpus":[{},{}]}"#)).unwrap();
/// let h = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded().unwrap();
/// assert_eq!(h.system().gpu_ids().unwrap().len(), 2);
/// # drop(h);
/// # dcgm::testing::configure_simulator(None).unwrap();
/// ```
pub fn configure_simulator(json: Option<&str>) -> crate::Result<()> {
    use std::ffi::{CString, c_char};
    use std::sync::OnceLock;
    type ConfigureFn = unsafe extern "C" fn(*const c_char) -> i32;
    // One handle on the library, kept for the whole process: the function pointer stays valid
    // and the simulator does not forget its configuration by being unloaded.
    static CONFIGURE: OnceLock<Result<(libloading::Library, ConfigureFn), String>> =
        OnceLock::new();
    let path = simulator_path();
    let loaded = CONFIGURE.get_or_init(|| {
        // SAFETY: dcgm-sim has no initialisers with preconditions.
        let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| e.to_string())?;
        // SAFETY: dcgm-sim exports dcgmSimConfigure with this signature.
        let f = unsafe { lib.get::<ConfigureFn>(b"dcgmSimConfigure\0") }
            .map(|s| *s)
            .map_err(|_| {
                format!(
                    "{} does not export dcgmSimConfigure: it is not dcgm-sim",
                    path.display()
                )
            })?;
        Ok((lib, f))
    });
    let f = match loaded {
        Ok((_, f)) => *f,
        Err(e) => return Err(crate::Error::SimulatorNotFound(e.clone())),
    };
    let c = json
        .map(CString::new)
        .transpose()
        .map_err(|_| crate::Error::InvalidArgument("config contains a NUL byte".into()))?;
    // SAFETY: NULL or a NUL-terminated string, valid for the call.
    let rc = unsafe { f(c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) };
    if rc != 0 {
        return Err(crate::Error::InvalidArgument(
            "the simulator rejected the configuration (its reason is on stderr)".into(),
        ));
    }
    Ok(())
}

/// Exclusive use of the simulator for one test: the simulator is process-global (as libdcgm
/// is), so tests that configure it must not overlap. Resets the configuration when dropped.
pub struct SimulatorLock {
    _guard: std::sync::MutexGuard<'static, ()>,
}

impl std::fmt::Debug for SimulatorLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SimulatorLock")
    }
}

impl SimulatorLock {
    /// Takes the lock and applies `json` (see [`configure_simulator`]).
    pub fn new(json: Option<&str>) -> crate::Result<Self> {
        static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        configure_simulator(json)?;
        Ok(Self { _guard: g })
    }
}

impl Drop for SimulatorLock {
    fn drop(&mut self) {
        let _ = configure_simulator(None);
    }
}

/// The blank sentinels DCGM uses, as they look when printed: 32-bit (`2147483632`), the low half
/// of the 64-bit one (`4294967280`), `u32::MAX`, 64-bit (`9223372036854775792`) and the float
/// blank (`140737488355328`, also as `1.40737488355328e14`). None of them may appear as data in
/// a decoded value, a Python value or a tool's output.
pub const SENTINEL_TEXTS: [&str; 6] = [
    "2147483632",
    "4294967280",
    "4294967295",
    "9223372036854775792",
    "140737488355328",
    "1.40737488355328e14",
];

/// The first blank sentinel found in `text` (see [`SENTINEL_TEXTS`]), if any.
///
/// ```
/// assert_eq!(dcgm::testing::find_sentinel("power 700 W"), None);
/// assert_eq!(dcgm::testing::find_sentinel("power 2147483632 W"), Some("2147483632"));
/// ```
pub fn find_sentinel(text: &str) -> Option<&'static str> {
    SENTINEL_TEXTS.into_iter().find(|s| text.contains(s))
}

/// Panics, showing `text`, if a blank sentinel appears in it.
///
/// # Panics
///
/// When [`find_sentinel`] finds one.
pub fn assert_no_sentinel(text: &str) {
    if let Some(s) = find_sentinel(text) {
        panic!("blank sentinel {s} shown as data in:\n{text}");
    }
}
