//! Binary (blob) fields DCGM documents, decoded into typed structs.

use dcgm_sys::*;

use crate::value::Value;

/// A process on a GPU (fields `DCGM_FI_DEV_COMPUTE_PIDS` / `DCGM_FI_DEV_GRAPHICS_PIDS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunningProcess {
    /// The process id.
    pub pid: u32,
    /// GPU memory the process uses, in bytes.
    pub memory_used_bytes: u64,
}

/// Accounting statistics of a process (field `DCGM_FI_DEV_PROCESS_ACCOUNTING_STATS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AccountingStats {
    /// The process id.
    pub pid: u32,
    /// Percent of time the GPU was busy while the process ran.
    pub gpu_utilization: u32,
    /// Percent of time the memory was busy while the process ran.
    pub memory_utilization: u32,
    /// Most memory the process used, in bytes.
    pub max_memory_bytes: u64,
    /// When it started, µs since the Unix epoch.
    pub start_time_us: u64,
    /// How long it has run (or ran), in µs.
    pub active_time_us: u64,
}

fn read<T: Zeroable + Copy>(b: &[u8]) -> Option<T> {
    if b.len() < size_of::<T>() {
        return None;
    }
    let mut v: T = zeroed();
    // SAFETY: `T` is a plain C struct valid for any bytes (Zeroable), and `b` holds at least
    // `size_of::<T>()` bytes; the copy is unaligned-safe.
    unsafe {
        std::ptr::copy_nonoverlapping(b.as_ptr(), (&mut v as *mut T).cast::<u8>(), size_of::<T>())
    };
    Some(v)
}

impl Value {
    /// The process record of a PID-list field value.
    pub fn running_process(&self) -> Option<RunningProcess> {
        let Value::Bytes(b) = self else { return None };
        let p: dcgmRunningProcess_v1 = read(b)?;
        (p.version == dcgmRunningProcess_version1).then_some(RunningProcess {
            pid: p.pid,
            memory_used_bytes: p.memoryUsed,
        })
    }

    /// The accounting record of a `DCGM_FI_DEV_PROCESS_ACCOUNTING_STATS` value.
    pub fn accounting_stats(&self) -> Option<AccountingStats> {
        let Value::Bytes(b) = self else { return None };
        let a: dcgmDevicePidAccountingStats_v1 = read(b)?;
        (a.version == dcgmDevicePidAccountingStats_version1).then_some(AccountingStats {
            pid: a.pid,
            gpu_utilization: a.gpuUtilization,
            memory_utilization: a.memoryUtilization,
            max_memory_bytes: a.maxMemoryUsage,
            start_time_us: a.startTimestamp,
            active_time_us: a.activeTimeUsec,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_process_bytes_decode_and_wrong_versions_do_not() {
        let mut b = Vec::new();
        b.extend_from_slice(&dcgmRunningProcess_version1.to_ne_bytes());
        b.extend_from_slice(&4242u32.to_ne_bytes());
        b.extend_from_slice(&(1u64 << 30).to_ne_bytes());
        let v = Value::Bytes(b.clone());
        assert_eq!(
            v.running_process(),
            Some(RunningProcess {
                pid: 4242,
                memory_used_bytes: 1 << 30
            })
        );
        b[0] ^= 0xff;
        assert_eq!(Value::Bytes(b).running_process(), None);
        assert_eq!(Value::Bytes(vec![1, 2]).running_process(), None);
    }
}
