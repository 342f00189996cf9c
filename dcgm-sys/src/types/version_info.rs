//! Library and host-engine version information.

use std::ffi::c_char;

/// Build information: `key:value;key:value` pairs (`version`, `arch`, `buildid`, `commit`,
/// `author`, `branch`, `buildtype`, `builddate`, `buildplatform`; any may be missing).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmVersionInfo_v2 {
    pub version: u32,
    pub rawBuildInfoString: [c_char; 512],
}
crate::versioned_struct!(dcgmVersionInfo_v2, dcgmVersionInfo_version2 = 2, size = 516, word = 0x0200_0204);
/// Current version word of [`dcgmVersionInfo_t`].
pub const dcgmVersionInfo_version: u32 = dcgmVersionInfo_version2;
/// Current version of the version-info struct.
pub type dcgmVersionInfo_t = dcgmVersionInfo_v2;
