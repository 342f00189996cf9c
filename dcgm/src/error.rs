//! The one error type of the safe layer.

use std::fmt;

use dcgm_sys::*;

use crate::release::{Capability, DcgmVersion};

macro_rules! return_code_enum {
    ($(#[$meta:meta])* $( $variant:ident = $c:ident, )*) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[non_exhaustive]
        pub enum ReturnCode {
            /// `DCGM_ST_OK`: success.
            #[default]
            Ok,
            $(
                #[doc = concat!("`", stringify!($c), "`.")]
                $variant,
            )*
            /// A code DCGM 4.6 does not define.
            Other(i32),
        }

        impl ReturnCode {
            /// The code for a C value.
            pub fn from_raw(v: i32) -> Self {
                match v {
                    DCGM_ST_OK => Self::Ok,
                    $( $c => Self::$variant, )*
                    other => Self::Other(other),
                }
            }

            /// The C value.
            pub fn raw(self) -> i32 {
                match self {
                    Self::Ok => DCGM_ST_OK,
                    $( Self::$variant => $c, )*
                    Self::Other(v) => v,
                }
            }
        }
    };
}

return_code_enum! {
    /// The status a DCGM call returned (`dcgmReturn_t`), one variant per code DCGM 4.6 defines;
    /// a code it does not define is [`ReturnCode::Other`]. Compare it with the C constants too
    /// (`code == DCGM_ST_NO_DATA`), through [`ReturnCode::raw`] or directly.
    ///
    /// ```
    /// use dcgm::ReturnCode;
    /// let rc = ReturnCode::from_raw(-6);
    /// assert_eq!(rc, ReturnCode::NotSupported);
    /// assert_eq!(rc.name(), "DCGM_ST_NOT_SUPPORTED");
    /// assert_eq!(rc.raw(), -6);
    /// assert_eq!(ReturnCode::from_raw(-1000), ReturnCode::Other(-1000));
    /// ```
    BadParam = DCGM_ST_BADPARAM,
    GenericError = DCGM_ST_GENERIC_ERROR,
    Memory = DCGM_ST_MEMORY,
    NotConfigured = DCGM_ST_NOT_CONFIGURED,
    NotSupported = DCGM_ST_NOT_SUPPORTED,
    InitError = DCGM_ST_INIT_ERROR,
    NvmlError = DCGM_ST_NVML_ERROR,
    Pending = DCGM_ST_PENDING,
    Uninitialized = DCGM_ST_UNINITIALIZED,
    Timeout = DCGM_ST_TIMEOUT,
    VerMismatch = DCGM_ST_VER_MISMATCH,
    UnknownField = DCGM_ST_UNKNOWN_FIELD,
    NoData = DCGM_ST_NO_DATA,
    StaleData = DCGM_ST_STALE_DATA,
    NotWatched = DCGM_ST_NOT_WATCHED,
    NoPermission = DCGM_ST_NO_PERMISSION,
    GpuIsLost = DCGM_ST_GPU_IS_LOST,
    ResetRequired = DCGM_ST_RESET_REQUIRED,
    FunctionNotFound = DCGM_ST_FUNCTION_NOT_FOUND,
    ConnectionNotValid = DCGM_ST_CONNECTION_NOT_VALID,
    GpuNotSupported = DCGM_ST_GPU_NOT_SUPPORTED,
    GroupIncompatible = DCGM_ST_GROUP_INCOMPATIBLE,
    MaxLimit = DCGM_ST_MAX_LIMIT,
    LibraryNotFound = DCGM_ST_LIBRARY_NOT_FOUND,
    DuplicateKey = DCGM_ST_DUPLICATE_KEY,
    GpuInSyncBoostGroup = DCGM_ST_GPU_IN_SYNC_BOOST_GROUP,
    GpuNotInSyncBoostGroup = DCGM_ST_GPU_NOT_IN_SYNC_BOOST_GROUP,
    RequiresRoot = DCGM_ST_REQUIRES_ROOT,
    NvvsError = DCGM_ST_NVVS_ERROR,
    InsufficientSize = DCGM_ST_INSUFFICIENT_SIZE,
    FieldUnsupportedByApi = DCGM_ST_FIELD_UNSUPPORTED_BY_API,
    ModuleNotLoaded = DCGM_ST_MODULE_NOT_LOADED,
    InUse = DCGM_ST_IN_USE,
    GroupIsEmpty = DCGM_ST_GROUP_IS_EMPTY,
    ProfilingNotSupported = DCGM_ST_PROFILING_NOT_SUPPORTED,
    ProfilingLibraryError = DCGM_ST_PROFILING_LIBRARY_ERROR,
    ProfilingMultiPass = DCGM_ST_PROFILING_MULTI_PASS,
    DiagAlreadyRunning = DCGM_ST_DIAG_ALREADY_RUNNING,
    DiagBadJson = DCGM_ST_DIAG_BAD_JSON,
    DiagBadLaunch = DCGM_ST_DIAG_BAD_LAUNCH,
    DiagUnused = DCGM_ST_DIAG_UNUSED,
    DiagThresholdExceeded = DCGM_ST_DIAG_THRESHOLD_EXCEEDED,
    InsufficientDriverVersion = DCGM_ST_INSUFFICIENT_DRIVER_VERSION,
    InstanceNotFound = DCGM_ST_INSTANCE_NOT_FOUND,
    ComputeInstanceNotFound = DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND,
    ChildNotKilled = DCGM_ST_CHILD_NOT_KILLED,
    ThirdPartyLibraryError = DCGM_ST_3RD_PARTY_LIBRARY_ERROR,
    InsufficientResources = DCGM_ST_INSUFFICIENT_RESOURCES,
    PluginException = DCGM_ST_PLUGIN_EXCEPTION,
    NvvsIsolateError = DCGM_ST_NVVS_ISOLATE_ERROR,
    NvvsBinaryNotFound = DCGM_ST_NVVS_BINARY_NOT_FOUND,
    NvvsKilled = DCGM_ST_NVVS_KILLED,
    Paused = DCGM_ST_PAUSED,
    AlreadyInitialized = DCGM_ST_ALREADY_INITIALIZED,
    NvmlNotLoaded = DCGM_ST_NVML_NOT_LOADED,
    NvmlDriverTimeout = DCGM_ST_NVML_DRIVER_TIMEOUT,
    NvvsNoAvailableTest = DCGM_ST_NVVS_NO_AVAILABLE_TEST,
    MndiagConnectionNotAvailable = DCGM_ST_MNDIAG_CONNECTION_NOT_AVAILABLE,
    MndiagConnectionUnauthorized = DCGM_ST_MNDIAG_CONNECTION_UNAUTHORIZED,
    RemoteSshConnectionFailed = DCGM_ST_REMOTE_SSH_CONNECTION_FAILED,
    ChildSpawnFailed = DCGM_ST_CHILD_SPAWN_FAILED,
    FileIoError = DCGM_ST_FILE_IO_ERROR,
    ChildSignalReceived = DCGM_ST_CHILD_SIGNAL_RECEIVED,
    CallerAlreadyStopped = DCGM_ST_CALLER_ALREADY_STOPPED,
    DiagStopped = DCGM_ST_DIAG_STOPPED,
    GpusDetached = DCGM_ST_GPUS_DETACHED,
}

impl ReturnCode {
    /// The C name (`DCGM_ST_BADPARAM`), or `DCGM_ST_<unknown>` for codes DCGM 4.6 does not
    /// define.
    pub fn name(self) -> &'static str {
        return_code_name(self.raw()).unwrap_or("DCGM_ST_<unknown>")
    }

    /// This crate's one-line description of the code.
    pub fn description(self) -> &'static str {
        return_code_description(self.raw()).unwrap_or("Unknown DCGM status code.")
    }

    /// Whether it is `DCGM_ST_OK`.
    pub fn is_ok(self) -> bool {
        self == Self::Ok
    }
}

impl From<dcgmReturn_t> for ReturnCode {
    fn from(v: dcgmReturn_t) -> Self {
        Self::from_raw(v)
    }
}

impl PartialEq<dcgmReturn_t> for ReturnCode {
    fn eq(&self, other: &dcgmReturn_t) -> bool {
        self.raw() == *other
    }
}

impl fmt::Display for ReturnCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.raw())
    }
}

/// One place the loader tried, and what the dynamic loader said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadAttempt {
    /// A path, or a bare soname handed to the dynamic linker.
    pub candidate: String,
    /// Where the candidate came from (`DCGM_LIB_PATH`, `explicit path`, `soname search`, ...).
    pub how: &'static str,
    /// The loader's message.
    pub error: String,
}

/// No libdcgm could be loaded: every place tried, in order. Its `source()` is the loader's
/// own error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{source}")]
pub struct LoadFailure {
    /// Every attempt, in order.
    pub attempts: Vec<LoadAttempt>,
    #[source]
    source: LoadError,
}

impl From<LoadError> for LoadFailure {
    fn from(e: LoadError) -> Self {
        Self {
            attempts: e
                .attempts
                .iter()
                .map(|a| LoadAttempt {
                    candidate: a.candidate.clone(),
                    how: a.source,
                    error: a.error.clone(),
                })
                .collect(),
            source: e,
        }
    }
}

/// Everything that can go wrong. Match on the variants you handle; new ones may be added.
/// A library that could not be loaded keeps the loader's error as the error's `source()`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The library returned an error code.
    #[error("{}", dcgm_text(*code, call, message.as_deref()))]
    Dcgm {
        /// The code.
        code: ReturnCode,
        /// What was being done (`"dcgmGroupCreate"`).
        call: &'static str,
        /// The library's own message for the code, if it has one.
        message: Option<String>,
    },
    /// No libdcgm could be loaded; lists every place tried.
    #[error(transparent)]
    LibraryNotFound(LoadFailure),
    /// The loaded libdcgm lacks a function this call needs.
    #[error(
        "`{symbol}` is not available in this libdcgm (version {}): upgrade DCGM",
        library_version.as_deref().unwrap_or("unknown")
    )]
    SymbolNotAvailable {
        /// The missing C function.
        symbol: &'static str,
        /// The loaded library's version, if known.
        library_version: Option<String>,
    },
    /// An argument was rejected before calling DCGM.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The connection to the host engine is gone (it restarted or the network dropped).
    /// Open a new handle; values read through the old one are no longer fresh.
    #[error(
        "{call}: the connection to the DCGM host engine was lost (it restarted or went away); \
         open a new handle"
    )]
    ConnectionLost {
        /// What was being done.
        call: &'static str,
    },
    /// No connection to the host engine at this address could be opened (a bad name, a
    /// closed port, a missing socket, or an engine that refused it).
    #[error("could not connect to the DCGM host engine at {address}: {reason}")]
    ConnectFailed {
        /// The address as given.
        address: String,
        /// Why, as far as a probe of the address could tell.
        reason: String,
    },
    /// The simulator was asked for but its library could not be found.
    #[error("{0}")]
    SimulatorNotFound(String),
    /// The loaded DCGM release cannot do this: the release that added it is newer. Say so to
    /// the user in one line (the tools do, with exit status 4) and carry on with the rest.
    #[error(
        "{capability}: not in this DCGM release (it needs DCGM {needs} or later; this is {have})"
    )]
    NotInRelease {
        /// What was asked for.
        capability: Capability,
        /// The first release that has it.
        needs: DcgmVersion,
        /// The loaded release.
        have: DcgmVersion,
    },
    /// The library wrote back a struct in a layout this SDK cannot decode (its version word
    /// is none this SDK knows): an error, never numbers read from the wrong offsets.
    #[error(
        "{call}: the library answered in a layout this SDK cannot decode (version word \
         {version:#010x}); please report it with the DCGM release"
    )]
    UnknownLayout {
        /// The call.
        call: &'static str,
        /// The version word the library wrote.
        version: u32,
    },
    /// The simulator did not start because its configuration is wrong (a `DCGM_SIM_CONFIG`
    /// file that does not parse or has an unknown key, an unknown preset, a bad
    /// `DCGM_SIM_FAULTS`): the simulator's reason, which names the file, the line and the key.
    #[error("the simulator did not start: {0}")]
    SimulatorConfig(String),
}

impl Error {
    pub(crate) fn library_not_found(e: LoadError) -> Self {
        Self::LibraryNotFound(e.into())
    }

    /// The DCGM return code of this error: the library's own for [`Error::Dcgm`], and for the
    /// errors this crate raises the code DCGM gives the same failure (a lost connection is
    /// `DCGM_ST_CONNECTION_NOT_VALID`, a bad argument `DCGM_ST_BADPARAM`, ...). Every error has
    /// one, so it matches directly:
    ///
    /// ```
    /// use dcgm::{Error, ReturnCode};
    ///
    /// let e = Error::InvalidArgument("no GPU 42".into());
    /// match e.code() {
    ///     ReturnCode::BadParam => {}
    ///     other => panic!("{other}"),
    /// }
    /// assert_eq!(e.code().raw(), dcgm::raw::sys::DCGM_ST_BADPARAM);
    /// ```
    pub fn code(&self) -> ReturnCode {
        match self {
            Error::Dcgm { code, .. } => *code,
            Error::ConnectionLost { .. } | Error::ConnectFailed { .. } => {
                ReturnCode::from_raw(DCGM_ST_CONNECTION_NOT_VALID)
            }
            Error::LibraryNotFound(_) => ReturnCode::from_raw(DCGM_ST_LIBRARY_NOT_FOUND),
            Error::SymbolNotAvailable { .. } => ReturnCode::from_raw(DCGM_ST_FUNCTION_NOT_FOUND),
            Error::InvalidArgument(_) => ReturnCode::from_raw(DCGM_ST_BADPARAM),
            Error::SimulatorNotFound(_) => ReturnCode::from_raw(DCGM_ST_LIBRARY_NOT_FOUND),
            Error::SimulatorConfig(_) => ReturnCode::from_raw(DCGM_ST_INIT_ERROR),
            Error::NotInRelease { .. } | Error::UnknownLayout { .. } => {
                ReturnCode::from_raw(DCGM_ST_VER_MISMATCH)
            }
        }
    }

    /// What to do about it, where the cause is known.
    pub fn hint(&self) -> Option<&'static str> {
        let Error::Dcgm { code, call, .. } = self else {
            return None;
        };
        hint_for(*code, call)
    }
}

/// What to do about a code returned by `call`, where there is something to say.
fn hint_for(code: ReturnCode, call: &str) -> Option<&'static str> {
    Some(match code.raw() {
        DCGM_ST_IN_USE | DCGM_ST_PROFILING_LIBRARY_ERROR if call.starts_with("dcgmProf") => {
            "another client (dcgm-exporter, Nsight, a CUPTI profiler or a second DCGM engine) \
                 holds the profiling module: stop it, or use dcgmProfPause/Resume in that client"
        }
        DCGM_ST_REQUIRES_ROOT | DCGM_ST_NO_PERMISSION => {
            "run as root (or connect to an nv-hostengine running as root)"
        }
        DCGM_ST_NVVS_BINARY_NOT_FOUND => {
            "diagnostics need the DCGM diagnostic package: install datacenter-gpu-manager-4-core \
             (DCGM 4), or datacenter-gpu-manager for a DCGM 3.x node"
        }
        DCGM_ST_MODULE_NOT_LOADED => {
            "the DCGM module for this call is not loaded or was denylisted"
        }
        DCGM_ST_NOT_WATCHED => {
            "watch it before reading it (Group::watch for fields, watch_pid_fields or \
             watch_job_fields for process and job statistics)"
        }
        DCGM_ST_NO_DATA => {
            "nothing recorded for it: a field with no sample yet (call update_all_fields(true) \
             or wait for the watch interval), or an id (job, process, field group) DCGM does not know"
        }
        DCGM_ST_VER_MISMATCH => {
            "this DCGM release does not accept the struct version sent for this call \
             (Handle::dcgm_version says which release answered; a remote nv-hostengine may be \
             older than the client library)"
        }
        DCGM_ST_MAX_LIMIT if call == "dcgmFieldGroupCreate" => {
            "too many field groups: a client can hold 61 (libdcgm keeps 3 of its 64 for \
             itself); drop field groups you no longer need"
        }
        DCGM_ST_MAX_LIMIT => "too many objects: drop groups or field groups you no longer need",
        DCGM_ST_DIAG_ALREADY_RUNNING => "a diagnostic is already running on these GPUs",
        DCGM_ST_INIT_ERROR => {
            "DCGM failed to start: check that the NVIDIA driver is loaded and that no other \
                 nv-hostengine owns the GPUs (two engines on one node can hang the driver)"
        }
        _ => return None,
    })
}

/// `call failed: CODE (n): message (hint: ...)`.
fn dcgm_text(code: ReturnCode, call: &str, message: Option<&str>) -> String {
    let mut s = format!(
        "{call} failed: {code}: {}",
        message.unwrap_or(code.description())
    );
    if let Some(h) = hint_for(code, call) {
        s.push_str(&format!(" (hint: {h})"));
    }
    s
}

/// Result of every fallible call in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
