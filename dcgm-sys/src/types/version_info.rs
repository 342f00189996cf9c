//! Library and host-engine information: versions, health, logging and environment.

use std::ffi::c_char;

use crate::{DcgmLoggingSeverity_t, dcgmReturn_t};

/// Build information: `key:value;key:value` pairs (`version`, `arch`, `buildid`, `commit`,
/// `author`, `branch`, `buildtype`, `builddate`, `buildplatform`; any may be missing).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmVersionInfo_v2 {
    pub version: u32,
    pub rawBuildInfoString: [c_char; 512],
}
crate::versioned_struct!(
    dcgmVersionInfo_v2,
    dcgmVersionInfo_version2 = 2,
    size = 516,
    word = 0x0200_0204
);
/// Current version word of [`dcgmVersionInfo_t`].
pub const dcgmVersionInfo_version: u32 = dcgmVersionInfo_version2;
/// Current version of the version-info struct.
pub type dcgmVersionInfo_t = dcgmVersionInfo_v2;

/// Output of `dcgmHostengineIsHealthy`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmHostengineHealth_v1 {
    pub version: u32,
    /// 0 when the host engine is healthy, otherwise a failure code.
    pub overallHealth: u32,
}
crate::versioned_struct!(
    dcgmHostengineHealth_v1,
    dcgmHostengineHealth_version1 = 1,
    size = 8,
    word = 0x0100_0008
);
/// Current version of the host-engine health struct.
pub type dcgmHostengineHealth_t = dcgmHostengineHealth_v1;
/// Current version word of [`dcgmHostengineHealth_t`].
pub const dcgmHostengineHealth_version: u32 = dcgmHostengineHealth_version1;

/// Logging-severity request, version 1. It has no version member: the word is only checked
/// by the library.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmSettingsSetLoggingSeverity_v1 {
    pub targetLogger: i32,
    pub targetSeverity: DcgmLoggingSeverity_t,
}
crate::plain_struct!(dcgmSettingsSetLoggingSeverity_v1, size = 8, align = 4);
/// Version word of [`dcgmSettingsSetLoggingSeverity_v1`] (`0x0100_0008`).
pub const dcgmSettingsSetLoggingSeverity_version1: u32 =
    crate::make_version(size_of::<dcgmSettingsSetLoggingSeverity_v1>(), 1);
const _: () = assert!(dcgmSettingsSetLoggingSeverity_version1 == 0x0100_0008);

/// Input of `dcgmHostengineSetLoggingSeverity`: change a logger's severity at run time.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmSettingsSetLoggingSeverity_v2 {
    pub version: u32,
    /// Which logger: 0 base, 1 syslog, 2 console, 3 file.
    pub targetLogger: i32,
    pub targetSeverity: DcgmLoggingSeverity_t,
}
crate::versioned_struct!(
    dcgmSettingsSetLoggingSeverity_v2,
    dcgmSettingsSetLoggingSeverity_version2 = 2,
    size = 12,
    word = 0x0200_000C
);
/// Current version of the logging-severity request.
pub type dcgmSettingsSetLoggingSeverity_t = dcgmSettingsSetLoggingSeverity_v2;
/// Current version word of [`dcgmSettingsSetLoggingSeverity_t`].
pub const dcgmSettingsSetLoggingSeverity_version: u32 = dcgmSettingsSetLoggingSeverity_version2;

/// `dcgmHostengineEnvironmentVariableInfo`: ask the host engine for one of its environment
/// variables (only `CUDA_VISIBLE_DEVICES` is answered).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmEnvVarInfo_v1 {
    pub version: u32,
    /// Input: the variable's name.
    pub envVarName: [c_char; 256],
    /// Output: its value.
    pub envVarValue: [c_char; 256],
    /// Output: the status of the lookup.
    pub ret: dcgmReturn_t,
}
crate::versioned_struct!(
    dcgmEnvVarInfo_v1,
    dcgmEnvVarInfo_version1 = 1,
    size = 520,
    word = 0x0100_0208
);
/// Current version of the environment-variable query.
pub type dcgmEnvVarInfo_t = dcgmEnvVarInfo_v1;
/// Current version word of [`dcgmEnvVarInfo_t`].
pub const dcgmEnvVarInfo_version: u32 = dcgmEnvVarInfo_version1;
