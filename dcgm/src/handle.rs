//! `Handle`: a connection to DCGM, embedded in this process or to an nv-hostengine.

use std::collections::HashMap;
use std::ffi::{CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dcgm_sys::*;

use crate::error::{Error, Result};
use crate::library::{Lib, ffi};

/// Environment variable naming the dcgm-sim library for [`HandleBuilder::simulator`].
pub const DCGM_SIM_LIB_ENV: &str = "DCGM_SIM_LIB";

/// Whether DCGM updates watched fields by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OperationMode {
    /// DCGM updates fields and runs policy checks on its own threads (the default).
    #[default]
    Auto,
    /// Nothing happens until [`Handle::update_all_fields`] / a policy trigger.
    Manual,
}

impl OperationMode {
    fn raw(self) -> dcgmOperationMode_t {
        match self {
            OperationMode::Auto => DCGM_OPERATION_MODE_AUTO,
            OperationMode::Manual => DCGM_OPERATION_MODE_MANUAL,
        }
    }
}

/// Log severity of the embedded engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogSeverity {
    /// Nothing.
    None,
    /// Fatal errors only.
    Fatal,
    /// Errors.
    Error,
    /// Warnings and errors.
    Warning,
    /// Informational messages too.
    Info,
    /// Debug messages too.
    Debug,
    /// Everything.
    Verbose,
}

/// How a handle is connected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionKind {
    /// The engine runs inside this process.
    Embedded,
    /// Connected to an nv-hostengine at this address (`host:port`, `unix:///path`, ...).
    Standalone(String),
}

/// Process-wide state per loaded library: DCGM's `dcgmInit`/`dcgmShutdown` and the embedded
/// engine are global to the process, so they are reference-counted here.
struct Runtime {
    lib: Arc<Lib>,
    inits: usize,
    embedded: Option<(dcgmHandle_t, usize)>,
    /// The operation mode the embedded engine was started in.
    embedded_mode: OperationMode,
    /// Set by [`HandleBuilder::keep_engine_until_exit`]: the embedded engine is not stopped
    /// when its last handle goes; it runs until the process exits.
    keep_engine: bool,
}

static RUNTIMES: Mutex<Option<HashMap<PathBuf, Runtime>>> = Mutex::new(None);

fn runtimes() -> std::sync::MutexGuard<'static, Option<HashMap<PathBuf, Runtime>>> {
    RUNTIMES.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) struct HandleInner {
    pub lib: Arc<Lib>,
    pub raw: dcgmHandle_t,
    key: PathBuf,
    kind: ConnectionKind,
    closed: Mutex<bool>,
    /// The connected nv-hostengine's release, asked once: a raw handle is bound to one
    /// engine process for its life (a restarted engine makes it invalid), so it cannot change.
    pub(crate) engine_release: std::sync::OnceLock<crate::DcgmVersion>,
    /// The struct versions this handle's release accepted, remembered per call
    /// ([`crate::dialect`]).
    pub(crate) dialect: crate::dialect::Dialect,
}

impl std::fmt::Debug for HandleInner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("kind", &self.kind)
            .field("library", &self.lib.raw.path())
            .field("simulated", &self.lib.raw.is_simulator())
            .finish()
    }
}

/// A connection to DCGM. Cheap to clone (an `Arc`); groups, field groups, watches and policy
/// registrations keep a clone, so they can live in your own long-lived structs and are
/// released before the connection is.
///
/// `Handle` is `Send` and `Sync`: DCGM's client API may be called from many threads at once.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let sim = dcgm::testing::simulator_path();
/// // On a GPU node: dcgm::Handle::embedded()?
/// let handle = dcgm::Handle::builder().library_path(sim).embedded()?;
/// let gpus = handle.system().gpu_ids()?;
/// println!("{} GPUs ({})", gpus.len(), if handle.is_simulated() { "simulated" } else { "real" });
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Handle {
    pub(crate) inner: Arc<HandleInner>,
}

/// Options for opening a [`Handle`].
#[derive(Debug, Clone, Default)]
pub struct HandleBuilder {
    lib_path: Option<PathBuf>,
    simulator: bool,
    mode: OperationMode,
    log_file: Option<String>,
    log_severity: Option<LogSeverity>,
    deny_modules: Vec<u32>,
    timeout: Option<Duration>,
    persist: bool,
    keep_engine: bool,
}

/// Fills what `dcgmStartEmbedded_v2`'s params v2 and v3 share (their layouts differ only in
/// the deny list's length): the mode, the log file and severity, the denied modules.
macro_rules! fill_embedded_params {
    ($p:ident, $builder:ident, $log_file:ident) => {{
        $p.opMode = $builder.mode.raw();
        $p.logFile = $log_file.map_or(std::ptr::null(), |c| c.as_ptr());
        $p.severity = $builder
            .log_severity
            .map_or(DcgmLoggingSeverityUnspecified, severity_raw);
        $p.denyListCount = $builder.deny_modules.len() as u32;
        for (d, m) in $p.denyList.iter_mut().zip(&$builder.deny_modules) {
            *d = *m;
        }
    }};
}

impl Handle {
    /// Options for opening a handle.
    pub fn builder() -> HandleBuilder {
        HandleBuilder::default()
    }

    /// Calls `ask` with a version word of `offers` in this handle's dialect: the word its
    /// release accepted before, or the newest it accepts, retried once older on a version
    /// refusal ([`crate::dialect`]).
    pub(crate) fn ask_versioned<W: Copy, T>(
        &self,
        what: crate::dialect::Asked,
        offers: &[crate::dialect::Offer<W>],
        ask: impl FnMut(W) -> Result<T>,
    ) -> Result<T> {
        self.inner
            .dialect
            .ask(self.dcgm_version(), what, offers, ask)
    }

    /// Starts (or shares) the embedded engine, with the default library search.
    ///
    /// # Errors
    ///
    /// As [`HandleBuilder::embedded`]: `LibraryNotFound` when no libdcgm loads;
    /// `DCGM_ST_INIT_ERROR` when DCGM cannot start; `InvalidArgument` when this process's embedded
    /// engine already runs in manual mode.
    pub fn embedded() -> Result<Self> {
        Self::builder().embedded()
    }

    /// Connects to an nv-hostengine: `host`, `host:port`, `/path/to/socket`, or a connection
    /// string `tcp://…`, `unix://…`, `vsock://…`.
    ///
    /// # Errors
    ///
    /// As [`HandleBuilder::connect`]: `ConnectFailed` naming the address and why;
    /// `LibraryNotFound`; `SymbolNotAvailable` for a `vsock://` address on a library without
    /// `dcgmConnect_v3`; `InvalidArgument` for an address with a NUL byte.
    pub fn connect(address: &str) -> Result<Self> {
        Self::builder().connect(address)
    }

    /// The raw `dcgmHandle_t` ([`crate::raw::handle`] outside this crate).
    pub(crate) fn raw(&self) -> dcgmHandle_t {
        self.inner.raw
    }

    /// The loaded library ([`crate::raw::library`] outside this crate).
    pub(crate) fn library(&self) -> &DcgmLibrary {
        &self.inner.lib.raw
    }

    /// How this handle is connected.
    pub fn kind(&self) -> &ConnectionKind {
        &self.inner.kind
    }

    /// Whether the library is the dcgm-sim simulator: values are simulated, and must be
    /// labelled so.
    pub fn is_simulated(&self) -> bool {
        self.inner.lib.raw.is_simulator()
    }

    pub(crate) fn lib(&self) -> &Lib {
        &self.inner.lib
    }

    /// Closes the connection now and reports any error that dropping the handle would swallow.
    /// Objects still holding a clone keep the connection open until they are dropped; then
    /// this returns `Ok` without doing anything.
    ///
    /// # Errors
    ///
    /// The library's code when stopping the embedded engine (`dcgmStopEmbedded`), disconnecting
    /// (`dcgmDisconnect`) or the final `dcgmShutdown` fails; the handle is released either way.
    pub fn close(self) -> Result<()> {
        match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner.release(),
            Err(_) => Ok(()),
        }
    }

    /// `dcgmUpdateAllFields`: samples every watched field now; with `wait`, returns once done.
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmUpdateAllFields")]
    pub fn update_all_fields(&self, wait: bool) -> Result<()> {
        let lib = self.lib();
        // SAFETY: plain arguments on a live handle.
        unsafe { ffi!(lib, dcgmUpdateAllFields(self.raw(), i32::from(wait))) }
    }
}

impl HandleInner {
    fn release(&self) -> Result<()> {
        let mut closed = self.closed.lock().unwrap_or_else(|p| p.into_inner());
        if *closed {
            return Ok(());
        }
        *closed = true;
        let mut first_err = Ok(());
        let mut rts = runtimes();
        let map = rts.get_or_insert_with(HashMap::new);
        if let Some(rt) = map.get_mut(&self.key) {
            match self.kind {
                ConnectionKind::Embedded => {
                    if let Some((h, n)) = rt.embedded.as_mut() {
                        *n -= 1;
                        if *n == 0 && !rt.keep_engine {
                            let h = *h;
                            rt.embedded = None;
                            let lib = &self.lib;
                            // SAFETY: the embedded handle is live until this stop.
                            first_err = unsafe { ffi!(lib, dcgmStopEmbedded(h)) };
                        }
                    }
                }
                ConnectionKind::Standalone(_) => {
                    let lib = &self.lib;
                    // SAFETY: the connection handle is live until this disconnect.
                    first_err = unsafe { ffi!(lib, dcgmDisconnect(self.raw)) };
                }
            }
            rt.inits -= 1;
            // A kept engine keeps its init too: both end with the process.
            if rt.inits == 0 && rt.embedded.is_none() {
                let lib = &self.lib;
                // SAFETY: no handle of this library is left.
                let r = unsafe { ffi!(lib, dcgmShutdown()) };
                if first_err.is_ok() {
                    first_err = r;
                }
                map.remove(&self.key);
            }
        }
        first_err
    }
}

impl Drop for HandleInner {
    fn drop(&mut self) {
        // Errors are swallowed here; `Handle::close` reports them.
        let _ = self.release();
    }
}

/// Where the simulator library is, if it can be found: `DCGM_SIM_LIB`, then next to the
/// running program (cargo's target directory layout), then inside the Python package.
///
/// # Errors
///
/// `SimulatorNotFound` listing every path tried, when no dcgm-sim library is found.
pub fn find_simulator() -> Result<PathBuf> {
    let mut tried = Vec::new();
    if let Some(p) = std::env::var_os(DCGM_SIM_LIB_ENV).filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        tried.push(p);
    }
    if let Ok(exe) = std::env::current_exe() {
        let mut dir = exe.parent().map(Path::to_path_buf);
        for _ in 0..3 {
            let Some(d) = dir else { break };
            // Cargo leaves the library in `deps/` when it was built as a dependency (of the
            // examples, say) rather than on its own.
            for (sub, name) in [
                ("", "libdcgm_sim.so"),
                ("deps", "libdcgm_sim.so"),
                ("", "libdcgm.so.4"),
            ] {
                let cand = d.join(sub).join(name);
                if cand.is_file() && (name == "libdcgm_sim.so" || is_sim_file(&cand)) {
                    return Ok(cand);
                }
                tried.push(cand);
            }
            dir = d.parent().map(Path::to_path_buf);
        }
    }
    Err(Error::SimulatorNotFound(format!(
        "the dcgm-sim library was not found (tried {}): build it with `cargo build -p dcgm-sim` \
         or set {DCGM_SIM_LIB_ENV} to its path",
        tried
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

fn is_sim_file(p: &Path) -> bool {
    DcgmLibrary::open_path(p).is_ok_and(|l| l.is_simulator())
}

impl HandleBuilder {
    /// Load libdcgm from this file (or directory holding `libdcgm.so.4`) instead of searching.
    pub fn library_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.lib_path = Some(path.into());
        self
    }

    /// Use the dcgm-sim simulator ([`find_simulator`]) instead of NVIDIA's libdcgm. Data read
    /// through such a handle is simulated: [`Handle::is_simulated`] says so.
    pub fn simulator(mut self) -> Self {
        self.simulator = true;
        self
    }

    /// AUTO (default) or MANUAL operation of the embedded engine.
    pub fn operation_mode(mut self, mode: OperationMode) -> Self {
        self.mode = mode;
        self
    }

    /// Log file of the embedded engine (`-` for stdout).
    pub fn log_file(mut self, path: impl Into<String>) -> Self {
        self.log_file = Some(path.into());
        self
    }

    /// Log severity of the embedded engine.
    pub fn log_severity(mut self, s: LogSeverity) -> Self {
        self.log_severity = Some(s);
        self
    }

    /// Modules the embedded engine must not load (`DcgmModuleId*` values).
    pub fn deny_modules(mut self, modules: &[u32]) -> Self {
        self.deny_modules = modules.to_vec();
        self
    }

    /// Connection timeout of a standalone connection (default: the library's, 5 s).
    ///
    /// It bounds the TCP (or unix socket) connect only. Against a peer that accepts the
    /// connection and never answers, libdcgm 4.6.0's `dcgmConnect_v2` waited 120 s with a 1 s
    /// timeout, and then returned success; a caller that must not wait that long runs the
    /// connect on a thread of its own and gives up on it (as the example tools do).
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }

    /// Keep the host engine's objects after this client disconnects.
    pub fn persist_after_disconnect(mut self, yes: bool) -> Self {
        self.persist = yes;
        self
    }

    /// Leaves the embedded engine running when its last handle is dropped, until the process
    /// exits, instead of stopping it (`dcgmStopEmbedded`, then `dcgmShutdown`).
    ///
    /// For one-shot programs (a query, a health check, a script's helper): stopping the real
    /// libdcgm 4.6.0's embedded engine costs about two seconds, which is most of such a
    /// program's run (`query` took 2.1 s, 0.2 s with this). The trade-offs: the engine's
    /// threads, watches and memory stay until the process exits (the operating system
    /// reclaims them; nothing outlives the process, as the engine is in-process), so a later
    /// embedded handle in the same process reuses that engine with its earlier watches; its
    /// log is not flushed by a clean stop. Do not use it in a long-running program that opens
    /// and closes handles: there the engine would keep sampling what nobody reads. Once one
    /// handle of a process asks for it, the engine is kept. It has no effect on connections
    /// to an nv-hostengine, which close quickly.
    ///
    /// ```
    /// # let sim = dcgm::testing::simulator_path();
    /// let h = dcgm::Handle::builder().library_path(sim).keep_engine_until_exit(true).embedded().unwrap();
    /// println!("{:?}", h.system().gpu_ids().unwrap());
    /// drop(h); // returns at once; the engine ends with the process
    /// ```
    #[doc(alias = "dcgmStopEmbedded")]
    pub fn keep_engine_until_exit(mut self, yes: bool) -> Self {
        self.keep_engine = yes;
        self
    }

    fn load(&self) -> Result<(PathBuf, DcgmLibrary)> {
        let lib = if let Some(p) = &self.lib_path {
            DcgmLibrary::open_path(p).map_err(Error::library_not_found)?
        } else if self.simulator {
            DcgmLibrary::open_path(find_simulator()?).map_err(Error::library_not_found)?
        } else {
            DcgmLibrary::open().map_err(Error::library_not_found)?
        };
        let key = lib.path().to_path_buf();
        Ok((key, lib))
    }

    /// Loads the library this builder would use and returns its path, without initialising
    /// DCGM: a start-up check for programs that connect later (or retry connecting).
    ///
    /// # Errors
    ///
    /// `LibraryNotFound` listing every path tried, as [`HandleBuilder::embedded`] would fail.
    pub fn check_library(&self) -> Result<PathBuf> {
        self.load().map(|(path, _)| path)
    }

    /// Takes a reference on the process-wide `dcgmInit` of the library, initialising it first
    /// if needed. A failed init leaves no state, so it can simply be retried.
    fn acquire(&self) -> Result<(PathBuf, Arc<Lib>)> {
        let (key, raw) = self.load()?;
        let mut rts = runtimes();
        let map = rts.get_or_insert_with(HashMap::new);
        if let Some(rt) = map.get_mut(&key) {
            rt.inits += 1;
            return Ok((key, rt.lib.clone()));
        }
        let lib = Arc::new(Lib::new(raw));
        let l = &*lib;
        // SAFETY: dcgmInit takes no arguments.
        unsafe { ffi!(l, dcgmInit()) }.map_err(|e| match l.raw.simulator_init_error() {
            // A simulator that failed on its config says why: no driver is involved.
            Some(reason) => Error::SimulatorConfig(reason),
            None => e,
        })?;
        map.insert(
            key.clone(),
            Runtime {
                lib: lib.clone(),
                inits: 1,
                embedded: None,
                embedded_mode: OperationMode::Auto,
                keep_engine: false,
            },
        );
        Ok((key, lib))
    }

    fn release_init(key: &Path, lib: &Lib) {
        let mut rts = runtimes();
        let map = rts.get_or_insert_with(HashMap::new);
        if let Some(rt) = map.get_mut(key) {
            rt.inits -= 1;
            if rt.inits == 0 && rt.embedded.is_none() {
                // SAFETY: no handle of this library is left.
                let _ = unsafe { ffi!(lib, dcgmShutdown()) };
                map.remove(key);
            }
        }
    }

    /// Starts the embedded engine (or shares the one this process already runs).
    ///
    /// # Errors
    ///
    /// `LibraryNotFound` when no libdcgm loads (every path tried is listed); `DCGM_ST_INIT_ERROR`
    /// when DCGM cannot start (driver not loaded, another engine owns the GPUs);
    /// `InvalidArgument` for more than 16 denied modules, a log path with a NUL byte, or an
    /// operation mode other than the one this process's running embedded engine was started in
    /// (a shared engine keeps its mode).
    pub fn embedded(self) -> Result<Handle> {
        let (key, lib) = self.acquire()?;
        let r = self.start_embedded(&key, &lib);
        match r {
            Ok(raw) => Ok(Handle {
                inner: Arc::new(HandleInner {
                    lib,
                    raw,
                    key,
                    kind: ConnectionKind::Embedded,
                    closed: Mutex::new(false),
                    engine_release: std::sync::OnceLock::new(),
                    dialect: crate::dialect::Dialect::default(),
                }),
            }),
            Err(e) => {
                Self::release_init(&key, &lib);
                Err(e)
            }
        }
    }

    fn start_embedded(&self, key: &Path, lib: &Lib) -> Result<dcgmHandle_t> {
        let mut rts = runtimes();
        let map = rts.get_or_insert_with(HashMap::new);
        let rt = map.get_mut(key).expect("acquired above");
        rt.keep_engine |= self.keep_engine;
        if let Some((h, n)) = rt.embedded.as_mut() {
            if rt.embedded_mode != self.mode {
                return Err(Error::InvalidArgument(format!(
                    "this process's embedded engine already runs in {:?} mode, not {:?}: \
                     the mode is chosen when the engine starts; drop every embedded handle \
                     first, or ask for the same mode",
                    rt.embedded_mode, self.mode
                )));
            }
            *n += 1;
            return Ok(*h);
        }
        if self.deny_modules.len() > 16 {
            return Err(Error::InvalidArgument(format!(
                "at most 16 modules can be denied, not {}",
                self.deny_modules.len()
            )));
        }
        let log_file = self
            .log_file
            .as_deref()
            .map(CString::new)
            .transpose()
            .map_err(|_| Error::InvalidArgument("log file path contains a NUL byte".into()))?;
        let h = if self.log_file.is_none()
            && self.log_severity.is_none()
            && self.deny_modules.is_empty()
        {
            let mut h = 0;
            // SAFETY: `h` is a valid out-pointer for the call.
            unsafe { ffi!(lib, dcgmStartEmbedded(self.mode.raw(), &mut h)) }?;
            h
        } else {
            // Params v3 (16 denied modules) from DCGM 4.3.1; v2 (10) before, which 3.3.9 to
            // 4.2.3 accept. An unknown release is asked v3 first and v2 after a refusal.
            let v3_first = lib
                .release()
                .is_none_or(|v| v >= crate::DcgmVersion::new(4, 3, 1));
            let v3 = if v3_first {
                Some(self.start_embedded_v3(lib, log_file.as_ref()))
            } else {
                None
            };
            match v3 {
                Some(Err(e)) if crate::dialect::is_version_refusal(&e) => {
                    self.start_embedded_v2(lib, log_file.as_ref())?
                }
                Some(r) => r?,
                None => self.start_embedded_v2(lib, log_file.as_ref())?,
            }
        };
        rt.embedded = Some((h, 1));
        rt.embedded_mode = self.mode;
        Ok(h)
    }

    /// `dcgmStartEmbedded_v2` with params v3 (DCGM 4.3.1 and later).
    fn start_embedded_v3(&self, lib: &Lib, log_file: Option<&CString>) -> Result<dcgmHandle_t> {
        let mut p = dcgmStartEmbeddedV2Params_v3::new_versioned();
        fill_embedded_params!(p, self, log_file);
        // SAFETY: `p` is a versioned v3 params struct whose log-file string outlives the
        // call; the library writes the handle into it.
        unsafe {
            ffi!(
                lib,
                dcgmStartEmbedded_v2((&mut p as *mut dcgmStartEmbeddedV2Params_v3).cast())
            )
        }?;
        Ok(p.dcgmHandle)
    }

    /// `dcgmStartEmbedded_v2` with params v2 (DCGM 3.3.9 to 4.2.3: 10 denied modules at most).
    fn start_embedded_v2(&self, lib: &Lib, log_file: Option<&CString>) -> Result<dcgmHandle_t> {
        let mut p = dcgmStartEmbeddedV2Params_v2::new_versioned();
        if self.deny_modules.len() > p.denyList.len() {
            return Err(Error::InvalidArgument(format!(
                "this DCGM release takes at most {} denied modules, not {}",
                p.denyList.len(),
                self.deny_modules.len()
            )));
        }
        fill_embedded_params!(p, self, log_file);
        // SAFETY: `p` is a versioned v2 params struct whose log-file string outlives the
        // call; a library that accepts the word reads and writes only the v2 layout.
        unsafe {
            ffi!(
                lib,
                dcgmStartEmbedded_v2((&mut p as *mut dcgmStartEmbeddedV2Params_v2).cast())
            )
        }?;
        Ok(p.dcgmHandle)
    }

    /// Connects to an nv-hostengine.
    ///
    /// # Errors
    ///
    /// `ConnectFailed` naming the address and why (unresolvable name, refused port, missing
    /// socket); `LibraryNotFound` as for [`HandleBuilder::embedded`]; `SymbolNotAvailable` for a
    /// `vsock://` address on a library without `dcgmConnect_v3`.
    pub fn connect(self, address: &str) -> Result<Handle> {
        let (key, lib) = self.acquire()?;
        let connected = self.connect_raw(&lib, address).map_err(|e| match e {
            Error::ConnectionLost { .. } => Error::ConnectFailed {
                address: address.to_string(),
                reason: crate::reachability::why_unreachable(address),
            },
            other => other,
        });
        match connected {
            Ok(raw) => Ok(Handle {
                inner: Arc::new(HandleInner {
                    lib,
                    raw,
                    key,
                    kind: ConnectionKind::Standalone(address.to_string()),
                    closed: Mutex::new(false),
                    engine_release: std::sync::OnceLock::new(),
                    dialect: crate::dialect::Dialect::default(),
                }),
            }),
            Err(e) => {
                Self::release_init(&key, &lib);
                Err(e)
            }
        }
    }

    fn connect_raw(&self, lib: &Lib, address: &str) -> Result<dcgmHandle_t> {
        let timeout_ms = self
            .timeout
            .map(|t| u32::try_from(t.as_millis()).unwrap_or(u32::MAX))
            .unwrap_or(0);
        let lower = address.to_ascii_lowercase();
        let mut h = 0;
        let has_scheme = ["tcp://", "unix://", "vsock://"]
            .iter()
            .any(|p| lower.starts_with(p));
        // dcgmConnect_v3 from DCGM 4.5; an older release takes tcp:// and unix:// addresses
        // through dcgmConnect_v2 (below), and vsock:// not at all.
        let v3 = lib.raw.dcgmConnect_v3.is_some()
            && lib
                .release()
                .is_none_or(|v| v >= crate::Capability::ConnectUrl.since());
        if has_scheme && v3 {
            let c = cstring(address)?;
            let mut p = dcgmConnectV3Params_v1::new_versioned();
            p.persistAfterDisconnect = u32::from(self.persist);
            p.timeoutMs = timeout_ms;
            // SAFETY: valid C string, versioned params and out-pointer for the call.
            unsafe { ffi!(lib, dcgmConnect_v3(c.as_ptr(), &mut p, &mut h)) }?;
            return Ok(h);
        }
        if lower.starts_with("vsock://") {
            let have = lib.release();
            let needs = crate::Capability::ConnectUrl.since();
            return Err(match have {
                Some(have) if have < needs => Error::NotInRelease {
                    capability: crate::Capability::ConnectUrl,
                    needs,
                    have,
                },
                _ => Error::SymbolNotAvailable {
                    symbol: "dcgmConnect_v3",
                    library_version: lib.version().map(str::to_owned),
                },
            });
        }
        let (addr, unix) = if let Some(rest) = address.strip_prefix("unix://") {
            (rest, true)
        } else if let Some(rest) = address.strip_prefix("tcp://") {
            (rest, false)
        } else {
            (address, address.starts_with('/'))
        };
        let c = cstring(addr)?;
        let mut p = dcgmConnectV2Params_v2::new_versioned();
        p.persistAfterDisconnect = u32::from(self.persist);
        p.timeoutMs = timeout_ms;
        p.addressIsUnixSocket = u32::from(unix);
        // SAFETY: valid C string, versioned params and out-pointer for the call.
        unsafe { ffi!(lib, dcgmConnect_v2(c.as_ptr(), &mut p, &mut h)) }?;
        Ok(h)
    }
}

fn severity_raw(s: LogSeverity) -> i32 {
    match s {
        LogSeverity::None => DcgmLoggingSeverityNone,
        LogSeverity::Fatal => DcgmLoggingSeverityFatal,
        LogSeverity::Error => DcgmLoggingSeverityError,
        LogSeverity::Warning => DcgmLoggingSeverityWarning,
        LogSeverity::Info => DcgmLoggingSeverityInfo,
        LogSeverity::Debug => DcgmLoggingSeverityDebug,
        LogSeverity::Verbose => DcgmLoggingSeverityVerbose,
    }
}

pub(crate) fn cstring(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::InvalidArgument(format!("{s:?} contains a NUL byte")))
}

#[allow(dead_code)]
pub(crate) fn ptr_or_null(c: &Option<CString>) -> *const c_char {
    c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
}
