//! Introspection: the host engine's own memory and CPU use.

use dcgm_sys::*;

use crate::error::{Error, Result, ReturnCode};
use crate::library::ffi;
use crate::system::System;

/// The share of the machine's CPU time the host engine used, as fractions from 0.0 to 1.0.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// let sys = handle.system();
/// let cpu = sys.hostengine_cpu_utilization()?;
/// println!("host engine: {} bytes, {:.2}% CPU", sys.hostengine_memory_bytes()?, cpu.total * 100.0);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuUtilization {
    /// Kernel plus user.
    pub total: f64,
    /// In the kernel.
    pub kernel: f64,
    /// In user space.
    pub user: f64,
}

/// The call succeeded but carried no usable figure.
fn no_figure(call: &'static str) -> Error {
    Error::Dcgm {
        code: ReturnCode::from_raw(DCGM_ST_NO_DATA),
        call,
        message: Some("the host engine has no figure yet: retry in a second".into()),
    }
}

impl System {
    /// Memory the host engine uses, in bytes (waits for a first sample if there is none).
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NO_DATA` when the host engine has no usable figure yet (this crate turns a blank or
    /// negative answer into that code); `ConnectionLost`.
    #[doc(alias = "dcgmIntrospectGetHostengineMemoryUsage")]
    pub fn hostengine_memory_bytes(&self) -> Result<u64> {
        let mut m = dcgmIntrospectMemory_v1::new_versioned();
        let lib = self.handle().lib();
        // SAFETY: a versioned struct valid for the call.
        unsafe {
            ffi!(
                lib,
                dcgmIntrospectGetHostengineMemoryUsage(self.handle().raw(), &mut m, 1)
            )
        }?;
        match int64_blank_kind(m.bytesUsed) {
            None => u64::try_from(m.bytesUsed)
                .map_err(|_| no_figure("dcgmIntrospectGetHostengineMemoryUsage")),
            Some(_) => Err(no_figure("dcgmIntrospectGetHostengineMemoryUsage")),
        }
    }

    /// CPU time the host engine uses (waits for a first sample if there is none).
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NO_DATA` when the host engine has no usable figure yet (this crate turns a blank or
    /// non-finite answer into that code); `ConnectionLost`.
    #[doc(alias = "dcgmIntrospectGetHostengineCpuUtilization")]
    pub fn hostengine_cpu_utilization(&self) -> Result<CpuUtilization> {
        let mut c = dcgmIntrospectCpuUtil_v1::new_versioned();
        let lib = self.handle().lib();
        // SAFETY: a versioned struct valid for the call.
        unsafe {
            ffi!(
                lib,
                dcgmIntrospectGetHostengineCpuUtilization(self.handle().raw(), &mut c, 1)
            )
        }?;
        if [c.total, c.kernel, c.user]
            .iter()
            .any(|v| fp64_blank_kind(*v).is_some() || !v.is_finite())
        {
            return Err(no_figure("dcgmIntrospectGetHostengineCpuUtilization"));
        }
        Ok(CpuUtilization {
            total: c.total,
            kernel: c.kernel,
            user: c.user,
        })
    }
}
