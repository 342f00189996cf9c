//! Connecting to a host engine and starting the embedded one: parameter structs, logging
//! severities and listener types.

use std::ffi::c_char;

use crate::{dcgmHandle_t, dcgmOperationMode_t};

/// Log severity of the host engine (a C enum with a negative value, hence `i32`).
pub type DcgmLoggingSeverity_t = i32;
/// Use the `__DCGM_DBG_LVL` environment variable, else the build default.
pub const DcgmLoggingSeverityUnspecified: DcgmLoggingSeverity_t = -1;
/// No logging.
pub const DcgmLoggingSeverityNone: DcgmLoggingSeverity_t = 0;
/// Fatal errors only.
pub const DcgmLoggingSeverityFatal: DcgmLoggingSeverity_t = 1;
/// Errors and worse.
pub const DcgmLoggingSeverityError: DcgmLoggingSeverity_t = 2;
/// Warnings and worse.
pub const DcgmLoggingSeverityWarning: DcgmLoggingSeverity_t = 3;
/// Informational messages and worse.
pub const DcgmLoggingSeverityInfo: DcgmLoggingSeverity_t = 4;
/// Debug messages and worse.
pub const DcgmLoggingSeverityDebug: DcgmLoggingSeverity_t = 5;
/// Everything.
pub const DcgmLoggingSeverityVerbose: DcgmLoggingSeverity_t = 6;

/// Listener kind for `dcgmEngineRun` (declared in DCGM's internal header).
pub type dcgmConnectionType_t = u32;
/// Listen on a unix domain socket.
pub const DcgmConnectionTypeDomainSocket: dcgmConnectionType_t = 0;
/// Listen on TCP.
pub const DcgmConnectionTypeTcp: dcgmConnectionType_t = 1;
/// Listen on vsock.
pub const DcgmConnectionTypeVsock: dcgmConnectionType_t = 2;

/// `dcgmConnect_v2` parameters, version 1.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmConnectV2Params_v1 {
    pub version: u32,
    /// Keep the client's watches and groups after it disconnects (1) or drop them (0).
    pub persistAfterDisconnect: u32,
}
crate::versioned_struct!(
    dcgmConnectV2Params_v1,
    dcgmConnectV2Params_version1 = 1,
    size = 8,
    word = 0x0100_0008
);

/// `dcgmConnect_v2` parameters, version 2.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmConnectV2Params_v2 {
    pub version: u32,
    /// Keep the client's watches and groups after it disconnects (1) or drop them (0).
    pub persistAfterDisconnect: u32,
    /// Connection timeout in milliseconds; 0 means the library default (5 s).
    pub timeoutMs: u32,
    /// 1 if the address is a unix socket path, 0 for a TCP address.
    pub addressIsUnixSocket: u32,
}
crate::versioned_struct!(
    dcgmConnectV2Params_v2,
    dcgmConnectV2Params_version2 = 2,
    size = 16,
    word = 0x0200_0010
);
/// Current version of the `dcgmConnect_v2` parameters.
pub type dcgmConnectV2Params_t = dcgmConnectV2Params_v2;
/// Current version word of [`dcgmConnectV2Params_t`].
pub const dcgmConnectV2Params_version: u32 = dcgmConnectV2Params_version2;

/// `dcgmConnect_v3` parameters, version 1.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmConnectV3Params_v1 {
    pub version: u32,
    /// Keep the client's watches and groups after it disconnects (1) or drop them (0).
    pub persistAfterDisconnect: u32,
    /// Connection timeout in milliseconds; 0 means the library default (5 s).
    pub timeoutMs: u32,
}
crate::versioned_struct!(
    dcgmConnectV3Params_v1,
    dcgmConnectV3Params_version1 = 1,
    size = 12,
    word = 0x0100_000C
);
/// Current version of the `dcgmConnect_v3` parameters.
pub type dcgmConnectV3Params_t = dcgmConnectV3Params_v1;
/// Current version word of [`dcgmConnectV3Params_t`].
pub const dcgmConnectV3Params_version: u32 = dcgmConnectV3Params_version1;

/// `dcgmStartEmbedded_v2` parameters, version 1.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmStartEmbeddedV2Params_v1 {
    pub version: u32,
    pub opMode: dcgmOperationMode_t,
    /// Output: the handle of the embedded engine.
    pub dcgmHandle: dcgmHandle_t,
    /// Log file path, `"-"` for stdout, NULL for the default. Must outlive the call.
    pub logFile: *const c_char,
    pub severity: DcgmLoggingSeverity_t,
    /// Number of used entries of `denyList`.
    pub denyListCount: u32,
    /// Module ids (`DcgmModuleId*`) not to load.
    pub denyList: [u32; 10],
}
crate::versioned_struct!(
    dcgmStartEmbeddedV2Params_v1,
    dcgmStartEmbeddedV2Params_version1 = 1,
    size = 72,
    word = 0x0100_0048
);

/// `dcgmStartEmbedded_v2` parameters, version 2 (adds the service account).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmStartEmbeddedV2Params_v2 {
    pub version: u32,
    pub opMode: dcgmOperationMode_t,
    /// Output: the handle of the embedded engine.
    pub dcgmHandle: dcgmHandle_t,
    /// Log file path, `"-"` for stdout, NULL for the default. Must outlive the call.
    pub logFile: *const c_char,
    pub severity: DcgmLoggingSeverity_t,
    /// Number of used entries of `denyList`.
    pub denyListCount: u32,
    /// User the diagnostic runs as, or NULL. Must outlive the call.
    pub serviceAccount: *const c_char,
    /// Module ids (`DcgmModuleId*`) not to load.
    pub denyList: [u32; 10],
}
crate::versioned_struct!(
    dcgmStartEmbeddedV2Params_v2,
    dcgmStartEmbeddedV2Params_version2 = 2,
    size = 80,
    word = 0x0200_0050
);

/// `dcgmStartEmbedded_v2` parameters, version 3 (room for 16 denied modules).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmStartEmbeddedV2Params_v3 {
    pub version: u32,
    pub opMode: dcgmOperationMode_t,
    /// Output: the handle of the embedded engine.
    pub dcgmHandle: dcgmHandle_t,
    /// Log file path, `"-"` for stdout, NULL for the default. Must outlive the call.
    pub logFile: *const c_char,
    pub severity: DcgmLoggingSeverity_t,
    /// Number of used entries of `denyList`.
    pub denyListCount: u32,
    /// User the diagnostic runs as, or NULL. Must outlive the call.
    pub serviceAccount: *const c_char,
    /// Module ids (`DcgmModuleId*`) not to load.
    pub denyList: [u32; 16],
}
crate::versioned_struct!(
    dcgmStartEmbeddedV2Params_v3,
    dcgmStartEmbeddedV2Params_version3 = 3,
    size = 104,
    word = 0x0300_0068
);
/// Current version of the `dcgmStartEmbedded_v2` parameters.
pub type dcgmStartEmbeddedV2Params_t = dcgmStartEmbeddedV2Params_v3;
/// Current version word of [`dcgmStartEmbeddedV2Params_t`].
pub const dcgmStartEmbeddedV2Params_version: u32 = dcgmStartEmbeddedV2Params_version3;
