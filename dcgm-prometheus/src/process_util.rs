//! The SM utilisation DCGM's process statistics give each process on each GPU
//! (`dcgmGetPidInfo`'s `processUtilization.smUtil`, after `dcgmWatchPidFields`), summed per
//! owner for `DCGM_EXP_POD_SM_UTIL`. As for memory ([`crate::processes`]), who owns a process
//! is the caller's business.
//!
//! What the number is, from DCGM 4.6's source: DCGM stores the per-process utilisation
//! samples NVML returns (`nvmlDeviceGetProcessUtilization`, one per process with activity in
//! a sample period) in a field (`DCGM_FI_DEV_GPU_UTIL_SAMPLES`) kept for the pid watch's
//! `maxKeepAge`; `dcgmGetPidInfo` sums the samples of the process from its start on, and
//! divides by the number of samples of *every* process on the GPU in that span. The watch
//! here keeps the samples for [`pid_stats_window`] only, so for a process older than that the value is
//! over the last window, not over its life: its share of the GPU's per-process samples in
//! the window, times its mean utilisation in them. A process alone on its GPU gets its mean
//! SM utilisation; `k` processes sampled in every period each get their own divided by `k`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use dcgm::{Group, Handle, Result, ReturnCode, WatchOptions};

use crate::identity::LabelSet;
use crate::processes::GpuProcess;

/// One process's SM utilisation on one GPU, as DCGM's process statistics give it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessSmUtil {
    /// The physical GPU's id.
    pub gpu: u32,
    /// The process id (the host engine's PID namespace).
    pub pid: u32,
    /// `processUtilization.smUtil`, in percent (see this module's docs).
    pub sm_util: f64,
}

/// SM utilisation per GPU and owner: the values of every process of an owner on a GPU,
/// summed (`owner` as for [`memory_by_owner`](crate::memory_by_owner); `None` leaves a
/// process out). Sorted by GPU, then by the owner's labels.
///
/// ```
/// use dcgm_prometheus::{ProcessSmUtil, sm_util_by_owner};
/// let p = |pid, sm_util| ProcessSmUtil { gpu: 0, pid, sm_util };
/// let by = sm_util_by_owner(&[p(10, 20.0), p(12, 5.5), p(11, 7.0)], |p| {
///     Some(vec![("pod".into(), format!("pod-{}", p.pid % 2))])
/// });
/// assert_eq!(by[0], (0, vec![("pod".to_string(), "pod-0".to_string())], 25.5));
/// ```
pub fn sm_util_by_owner(
    util: &[ProcessSmUtil],
    mut owner: impl FnMut(&ProcessSmUtil) -> Option<LabelSet>,
) -> Vec<(u32, LabelSet, f64)> {
    let mut sums: BTreeMap<(u32, LabelSet), f64> = BTreeMap::new();
    for p in util {
        if let Some(owner) = owner(p) {
            *sums.entry((p.gpu, owner)).or_default() += p.sm_util;
        }
    }
    sums.into_iter().map(|((g, o), v)| (g, o, v)).collect()
}

/// How long DCGM keeps the process samples for a collection interval: one interval, at
/// least 10 s (so that a short interval still averages over several sample periods).
pub fn pid_stats_window(collect_interval: Duration) -> Duration {
    collect_interval.max(Duration::from_secs(10))
}

/// How often DCGM samples: every second, or every collection interval when shorter.
pub fn pid_stats_sample_interval(collect_interval: Duration) -> Duration {
    collect_interval.min(Duration::from_secs(1))
}

/// The pid watch of the exported GPUs, on the collector's connection.
pub(super) struct PidStatsWatch {
    pub(super) gpus: Vec<u32>,
    /// The group and the reader's reconnect count when it was made.
    pub(super) open: Option<(Group, u64)>,
}

impl PidStatsWatch {
    pub(super) fn new(gpus: Vec<u32>) -> Self {
        Self { gpus, open: None }
    }

    /// Starts the pid watch (`dcgmWatchPidFields`: accounting mode, which needs root on a
    /// real node) on `handle` if it is not running on this connection.
    fn ensure(&mut self, handle: &Handle, reconnects: u64, interval: Duration) -> Result<()> {
        if self.open.as_ref().is_some_and(|(_, r)| *r == reconnects) {
            return Ok(());
        }
        self.open = None;
        let name = format!("dcgm_exporter_pidstats_{}", std::process::id());
        let group = Group::with_gpus(handle, &name, &self.gpus)?;
        group.watch_pid_fields(WatchOptions {
            update_interval: pid_stats_sample_interval(interval),
            max_keep_age: pid_stats_window(interval),
            max_keep_samples: 0,
        })?;
        handle.update_all_fields(true)?;
        self.open = Some((group, reconnects));
        Ok(())
    }

    /// The SM utilisation of each of `processes` on its GPU. A process DCGM has no
    /// statistics for (`DCGM_ST_NO_DATA`: gone, or not seen by accounting yet) is left out.
    pub(super) fn read(
        &mut self,
        handle: &Handle,
        reconnects: u64,
        interval: Duration,
        processes: &[GpuProcess],
    ) -> Result<Vec<ProcessSmUtil>> {
        self.ensure(handle, reconnects, interval)?;
        let Some((group, _)) = &self.open else {
            return Ok(Vec::new());
        };
        let on: BTreeSet<(u32, u32)> = processes.iter().map(|p| (p.pid, p.gpu)).collect();
        let pids: BTreeSet<u32> = on.iter().map(|(pid, _)| *pid).collect();
        let mut out = Vec::new();
        for pid in pids {
            let info = match group.pid_info(pid) {
                Ok(i) => i,
                Err(e) if e.code() == ReturnCode::NoData => continue,
                Err(e) => {
                    self.open = None;
                    return Err(e);
                }
            };
            for g in &info.gpus {
                if let (Some(gpu), Some(sm_util)) = (g.gpu, g.process_sm_util)
                    && on.contains(&(pid, gpu))
                {
                    out.push(ProcessSmUtil { gpu, pid, sm_util });
                }
            }
        }
        out.sort_by_key(|p| (p.gpu, p.pid));
        Ok(out)
    }
}
