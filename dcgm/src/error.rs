//! The one error type of the safe layer.

use std::fmt;

use dcgm_sys::*;

/// A `dcgmReturn_t` status code.
///
/// ```
/// use dcgm::ReturnCode;
/// let rc = ReturnCode(dcgm_sys::DCGM_ST_NOT_SUPPORTED);
/// assert_eq!(rc.name(), "DCGM_ST_NOT_SUPPORTED");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReturnCode(pub dcgmReturn_t);

impl ReturnCode {
    /// The C name (`DCGM_ST_BADPARAM`), or `DCGM_ST_UNKNOWN(n)` style text for codes DCGM 4.6
    /// does not define.
    pub fn name(self) -> &'static str {
        return_code_name(self.0).unwrap_or("DCGM_ST_<unknown>")
    }

    /// This crate's one-line description of the code.
    pub fn description(self) -> &'static str {
        return_code_description(self.0).unwrap_or("Unknown DCGM status code.")
    }
}

impl fmt::Display for ReturnCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.0)
    }
}

/// Everything that can go wrong. Match on the variants you handle; new ones may be added.
/// A library that could not be loaded keeps its [`LoadError`] as the error's `source()`.
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
    #[error("{0}")]
    LibraryNotFound(#[from] LoadError),
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
}

impl Error {
    /// The DCGM return code behind this error, if there is one.
    pub fn code(&self) -> Option<ReturnCode> {
        match self {
            Error::Dcgm { code, .. } => Some(*code),
            Error::ConnectionLost { .. } | Error::ConnectFailed { .. } => {
                Some(ReturnCode(DCGM_ST_CONNECTION_NOT_VALID))
            }
            Error::LibraryNotFound(_) => Some(ReturnCode(DCGM_ST_LIBRARY_NOT_FOUND)),
            Error::SymbolNotAvailable { .. } => Some(ReturnCode(DCGM_ST_FUNCTION_NOT_FOUND)),
            Error::InvalidArgument(_) => Some(ReturnCode(DCGM_ST_BADPARAM)),
            Error::SimulatorNotFound(_) => Some(ReturnCode(DCGM_ST_LIBRARY_NOT_FOUND)),
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
    Some(match code.0 {
        DCGM_ST_IN_USE | DCGM_ST_PROFILING_LIBRARY_ERROR if call.starts_with("dcgmProf") => {
            "another client (dcgm-exporter, Nsight, a CUPTI profiler or a second DCGM engine) \
                 holds the profiling module: stop it, or use dcgmProfPause/Resume in that client"
        }
        DCGM_ST_REQUIRES_ROOT | DCGM_ST_NO_PERMISSION => {
            "run as root (or connect to an nv-hostengine running as root)"
        }
        DCGM_ST_NVVS_BINARY_NOT_FOUND => {
            "diagnostics need the DCGM diagnostic package: install datacenter-gpu-manager-4-core"
        }
        DCGM_ST_MODULE_NOT_LOADED => {
            "the DCGM module for this call is not loaded or was denylisted"
        }
        DCGM_ST_NOT_WATCHED => "watch the field (Group::watch) before reading it",
        DCGM_ST_NO_DATA => {
            "no sample yet: call update_all_fields(true) or wait for the watch interval"
        }
        DCGM_ST_VER_MISMATCH => {
            "the library and this SDK disagree on a struct version: use a DCGM 4.x library"
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
