//! Introspection: the host engine's own memory and CPU use.

/// Output of `dcgmIntrospectGetHostengineMemoryUsage`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmIntrospectMemory_v1 {
    pub version: u32,
    /// Memory the host engine uses, in bytes.
    pub bytesUsed: i64,
}
crate::versioned_struct!(
    dcgmIntrospectMemory_v1,
    dcgmIntrospectMemory_version1 = 1,
    size = 16,
    word = 0x0100_0010
);
/// Current version of the memory introspection.
pub type dcgmIntrospectMemory_t = dcgmIntrospectMemory_v1;
/// Current version word of [`dcgmIntrospectMemory_t`].
pub const dcgmIntrospectMemory_version: u32 = dcgmIntrospectMemory_version1;

/// Output of `dcgmIntrospectGetHostengineCpuUtilization`: fractions (0.0–1.0) of the machine's
/// CPU time the host engine used.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmIntrospectCpuUtil_v1 {
    pub version: u32,
    /// Kernel plus user.
    pub total: f64,
    pub kernel: f64,
    pub user: f64,
}
crate::versioned_struct!(
    dcgmIntrospectCpuUtil_v1,
    dcgmIntrospectCpuUtil_version1 = 1,
    size = 32,
    word = 0x0100_0020
);
/// Current version of the CPU introspection.
pub type dcgmIntrospectCpuUtil_t = dcgmIntrospectCpuUtil_v1;
/// Current version word of [`dcgmIntrospectCpuUtil_t`].
pub const dcgmIntrospectCpuUtil_version: u32 = dcgmIntrospectCpuUtil_version1;
