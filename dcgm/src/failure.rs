//! Failure reasons (`DCGM_FR_*`): what a health incident or a diagnostic error means, how
//! serious it is and what to do about it.

use std::ffi::CStr;
use std::fmt;

use dcgm_sys::*;

use crate::library::Lib;

/// The `DCGM_FR_*` name of a failure-reason code (`DCGM_FR_VOLATILE_DBE_DETECTED` for 4),
/// if DCGM 4.6 defines it.
pub fn failure_reason_name(code: u32) -> Option<&'static str> {
    dcgm_sys::failure_reason_name(code)
}

/// How serious a failure reason is, and the action DCGM recommends (`DCGM_ERROR_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorSeverity {
    /// No error.
    None,
    /// Keep watching; no action needed yet.
    Monitor,
    /// Take the GPU out of service.
    Isolate,
    /// The library does not know.
    Unknown,
    /// Needs investigation.
    Triage,
    /// A configuration problem: fix the configuration.
    Config,
    /// Reset the GPU.
    Reset,
}

impl ErrorSeverity {
    /// From the C value (`None` for values DCGM 4.6 does not define).
    pub fn from_raw(v: u32) -> Option<Self> {
        Some(match v {
            DCGM_ERROR_NONE => Self::None,
            DCGM_ERROR_MONITOR => Self::Monitor,
            DCGM_ERROR_ISOLATE => Self::Isolate,
            DCGM_ERROR_UNKNOWN => Self::Unknown,
            DCGM_ERROR_TRIAGE => Self::Triage,
            DCGM_ERROR_CONFIG => Self::Config,
            DCGM_ERROR_RESET => Self::Reset,
            _ => return None,
        })
    }
}

impl fmt::Display for ErrorSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::Monitor => "monitor",
            Self::Isolate => "isolate",
            Self::Unknown => "unknown",
            Self::Triage => "triage",
            Self::Config => "config",
            Self::Reset => "reset",
        })
    }
}

/// The area a failure reason belongs to (`DCGM_FR_EC_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCategory {
    /// No category.
    None,
    /// A performance threshold was not met.
    PerfThreshold,
    /// A performance violation.
    PerfViolation,
    /// Software configuration.
    SoftwareConfig,
    /// A software library.
    SoftwareLibrary,
    /// An XID reported by the driver.
    SoftwareXid,
    /// CUDA.
    SoftwareCuda,
    /// The EUD diagnostic.
    SoftwareEud,
    /// Other software.
    SoftwareOther,
    /// Hardware: thermal.
    HardwareThermal,
    /// Hardware: memory.
    HardwareMemory,
    /// Hardware: NVLink.
    HardwareNvlink,
    /// Hardware: NvSwitch.
    HardwareNvswitch,
    /// Hardware: PCIe.
    HardwarePcie,
    /// Hardware: power.
    HardwarePower,
    /// Other hardware.
    HardwareOther,
    /// Internal to DCGM.
    Internal,
}

impl ErrorCategory {
    /// From the C value (`None` for values DCGM 4.6 does not define).
    pub fn from_raw(v: u32) -> Option<Self> {
        Some(match v {
            DCGM_FR_EC_NONE => Self::None,
            DCGM_FR_EC_PERF_THRESHOLD => Self::PerfThreshold,
            DCGM_FR_EC_PERF_VIOLATION => Self::PerfViolation,
            DCGM_FR_EC_SOFTWARE_CONFIG => Self::SoftwareConfig,
            DCGM_FR_EC_SOFTWARE_LIBRARY => Self::SoftwareLibrary,
            DCGM_FR_EC_SOFTWARE_XID => Self::SoftwareXid,
            DCGM_FR_EC_SOFTWARE_CUDA => Self::SoftwareCuda,
            DCGM_FR_EC_SOFTWARE_EUD => Self::SoftwareEud,
            DCGM_FR_EC_SOFTWARE_OTHER => Self::SoftwareOther,
            DCGM_FR_EC_HARDWARE_THERMAL => Self::HardwareThermal,
            DCGM_FR_EC_HARDWARE_MEMORY => Self::HardwareMemory,
            DCGM_FR_EC_HARDWARE_NVLINK => Self::HardwareNvlink,
            DCGM_FR_EC_HARDWARE_NVSWITCH => Self::HardwareNvswitch,
            DCGM_FR_EC_HARDWARE_PCIE => Self::HardwarePcie,
            DCGM_FR_EC_HARDWARE_POWER => Self::HardwarePower,
            DCGM_FR_EC_HARDWARE_OTHER => Self::HardwareOther,
            DCGM_FR_EC_INTERNAL_OTHER => Self::Internal,
            _ => return None,
        })
    }
}

/// What the library says about a failure reason (`dcgmGetErrorMeta`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FailureMeta {
    pub severity: Option<ErrorSeverity>,
    pub category: Option<ErrorCategory>,
    pub suggestion: Option<String>,
}

/// Looks a failure reason up in the library; everything is `None` when the library lacks
/// `dcgmGetErrorMeta` or does not know the code.
pub(crate) fn failure_meta(lib: &Lib, code: u32) -> FailureMeta {
    let Ok(f) = lib.raw.dcgmGetErrorMeta() else {
        return FailureMeta::default();
    };
    // SAFETY: a plain argument; the result is NULL or points into the library's static table.
    let p = unsafe { f(code) };
    // SAFETY: non-null pointers point to a static `dcgm_error_meta_t` of the loaded library,
    // which the caller's handle keeps loaded.
    let Some(m) = (unsafe { p.as_ref() }) else {
        return FailureMeta::default();
    };
    let suggestion = (!m.suggestion.is_null())
        .then(|| {
            // SAFETY: a non-null suggestion is a NUL-terminated static string of the library.
            unsafe { CStr::from_ptr(m.suggestion) }
                .to_string_lossy()
                .into_owned()
        })
        .filter(|s| !s.is_empty());
    FailureMeta {
        severity: u32::try_from(m.severity)
            .ok()
            .and_then(ErrorSeverity::from_raw),
        category: u32::try_from(m.category)
            .ok()
            .and_then(ErrorCategory::from_raw),
        suggestion,
    }
}
