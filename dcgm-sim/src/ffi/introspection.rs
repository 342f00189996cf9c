//! Introspection: the host engine's own memory and CPU use.

use std::ffi::c_int;

use dcgm_sys::*;

use super::modules::module_ok;
use super::{guard, versioned};
use crate::sim::with_engine;

/// # Safety
///
/// `memoryInfo` must be NULL or a versioned `dcgmIntrospectMemory_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmIntrospectGetHostengineMemoryUsage(
    pDcgmHandle: dcgmHandle_t,
    memoryInfo: *mut dcgmIntrospectMemory_t,
    waitIfNoData: c_int,
) -> dcgmReturn_t {
    let _ = waitIfNoData;
    guard(|| {
        // SAFETY: per this function's contract.
        let m = unsafe { versioned(memoryInfo, &[dcgmIntrospectMemory_version1]) }?;
        with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdIntrospect)?;
            // A resident core of about 40 MiB, plus the watch table and the cached samples.
            let watches = e.cache.watches.len() as i64;
            let samples: i64 = e
                .cache
                .watches
                .values()
                .map(|w| w.samples.len() as i64)
                .sum();
            m.bytesUsed =
                41_943_040 + watches * 1_536 + samples * 96 + e.groups.len() as i64 * 8_192;
            Ok(())
        })
    })
}

/// # Safety
///
/// `cpuUtil` must be NULL or a versioned `dcgmIntrospectCpuUtil_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmIntrospectGetHostengineCpuUtilization(
    pDcgmHandle: dcgmHandle_t,
    cpuUtil: *mut dcgmIntrospectCpuUtil_t,
    waitIfNoData: c_int,
) -> dcgmReturn_t {
    let _ = waitIfNoData;
    guard(|| {
        // SAFETY: per this function's contract.
        let c = unsafe { versioned(cpuUtil, &[dcgmIntrospectCpuUtil_version1]) }?;
        with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdIntrospect)?;
            // Sampling cost grows with the number of watches and their frequency.
            let load: f64 = e
                .cache
                .watches
                .values()
                .map(|w| 1.0 / (w.freq_us.max(1_000) as f64 / 1e6))
                .sum();
            let total = (0.0015 + load * 2.0e-6).min(0.9);
            c.total = total;
            c.kernel = total * 0.35;
            c.user = total - c.kernel;
            Ok(())
        })
    })
}
