//! Process and job statistics: per-process accounting and named jobs recorded between a start
//! and a stop.

use crate::blank::NonBlank;
use std::ffi::{c_char, c_int};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dcgm_sys::*;

use crate::error::{Error, Result};
use crate::group::{Group, WatchOptions};
use crate::handle::Handle;
use crate::health::HealthResult;
use crate::library::ffi;

/// Minimum, maximum and average of a series; each `None` when DCGM has no value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StatSummary {
    /// Smallest value.
    pub min: Option<f64>,
    /// Largest value.
    pub max: Option<f64>,
    /// Average.
    pub average: Option<f64>,
}

impl StatSummary {
    fn i32(s: &dcgmStatSummaryInt32_t) -> Self {
        Self {
            min: int(s.minValue),
            max: int(s.maxValue),
            average: int(s.average),
        }
    }

    fn i64(s: &dcgmStatSummaryInt64_t) -> Self {
        Self {
            min: long(s.minValue).map(|v| v as f64),
            max: long(s.maxValue).map(|v| v as f64),
            average: long(s.average).map(|v| v as f64),
        }
    }

    fn f64(s: &dcgmStatSummaryFp64_t) -> Self {
        Self {
            min: dbl(s.minValue),
            max: dbl(s.maxValue),
            average: dbl(s.average),
        }
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.min.is_none() && self.max.is_none() && self.average.is_none()
    }
}

fn int(v: i32) -> Option<f64> {
    v.non_blank().map(f64::from)
}

fn long(v: i64) -> Option<i64> {
    v.non_blank()
}

fn dbl(v: f64) -> Option<f64> {
    v.non_blank()
}

fn count(v: u32) -> Option<u32> {
    v.non_blank()
}

fn time(us: i64) -> Option<SystemTime> {
    long(us)
        .filter(|t| *t > 0)
        .map(|t| UNIX_EPOCH + Duration::from_micros(t as u64))
}

fn span(us: i64) -> Option<Duration> {
    long(us)
        .filter(|t| *t >= 0)
        .map(|t| Duration::from_micros(t as u64))
}

fn energy(mj: i64) -> Option<f64> {
    long(mj).map(|v| v as f64 / 1000.0)
}

fn unsigned(v: i64) -> Option<u64> {
    long(v).and_then(|v| u64::try_from(v).ok())
}

/// Time a GPU spent at reduced clocks, per reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ViolationTimes {
    /// Held below the power limit.
    pub power: Option<Duration>,
    /// Held back for temperature.
    pub thermal: Option<Duration>,
    /// Held back for reliability.
    pub reliability: Option<Duration>,
    /// Held back by the board limit.
    pub board_limit: Option<Duration>,
    /// Clocked down for low utilisation.
    pub low_utilization: Option<Duration>,
    /// Held back by sync boost.
    pub sync_boost: Option<Duration>,
}

/// What a GPU did over a process's or a job's lifetime: the part process statistics
/// ([`PidGpuInfo`]) and job statistics ([`JobGpuStats`]) have in common.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GpuUsage {
    /// Energy the GPU used, in joules.
    pub energy_joules: Option<f64>,
    /// Most GPU memory used, in bytes.
    pub max_memory_bytes: Option<u64>,
    /// The GPU's SM utilisation, in percent.
    pub sm_util: StatSummary,
    /// The GPU's memory utilisation, in percent.
    pub mem_util: StatSummary,
    /// PCIe receive bandwidth, in bytes per second.
    pub pcie_rx: StatSummary,
    /// PCIe transmit bandwidth, in bytes per second.
    pub pcie_tx: StatSummary,
    /// SM clock, in MHz.
    pub sm_clock_mhz: StatSummary,
    /// Memory clock, in MHz.
    pub mem_clock_mhz: StatSummary,
    /// When the process or job started.
    pub start_time: Option<SystemTime>,
    /// When it ended (`None` while it runs).
    pub end_time: Option<SystemTime>,
    /// PCIe replays.
    pub pcie_replays: Option<u64>,
    /// Correctable ECC errors.
    pub ecc_single_bit: Option<u32>,
    /// Uncorrectable ECC errors.
    pub ecc_double_bit: Option<u32>,
    /// Number of critical XID errors.
    pub xid_count: u32,
    /// When the (first ten) critical XIDs happened.
    pub xid_times: Vec<SystemTime>,
    /// Time at reduced clocks.
    pub violations: ViolationTimes,
    /// The GPU's health over the lifetime.
    pub overall_health: HealthResult,
    /// Number of health incidents.
    pub incident_count: u32,
}

/// Builds a [`GpuUsage`] from `dcgmPidSingleInfo_t` or `dcgmGpuUsageInfo_t`: the two C structs
/// name their common fields alike, so one expansion serves both.
macro_rules! gpu_usage {
    ($c:expr) => {{
        let c = $c;
        let (xid_count, xid_times) = xids(c.numXidCriticalErrors, &c.xidCriticalErrorsTs);
        GpuUsage {
            energy_joules: energy(c.energyConsumed),
            max_memory_bytes: unsigned(c.maxGpuMemoryUsed),
            sm_util: StatSummary::i32(&c.smUtilization),
            mem_util: StatSummary::i32(&c.memoryUtilization),
            pcie_rx: StatSummary::i64(&c.pcieRxBandwidth),
            pcie_tx: StatSummary::i64(&c.pcieTxBandwidth),
            sm_clock_mhz: StatSummary::i32(&c.smClock),
            mem_clock_mhz: StatSummary::i32(&c.memoryClock),
            start_time: time(c.startTime),
            end_time: time(c.endTime),
            pcie_replays: unsigned(c.pcieReplays),
            ecc_single_bit: count(c.eccSingleBit),
            ecc_double_bit: count(c.eccDoubleBit),
            xid_count,
            xid_times,
            violations: ViolationTimes {
                power: span(c.powerViolationTime),
                thermal: span(c.thermalViolationTime),
                reliability: span(c.reliabilityViolationTime),
                board_limit: span(c.boardLimitViolationTime),
                low_utilization: span(c.lowUtilizationTime),
                sync_boost: span(c.syncBoostTime),
            },
            overall_health: HealthResult::from_raw(c.overallHealth),
            incident_count: count(c.incidentCount).unwrap_or(0),
        }
    }};
}

/// What one process did on one GPU (or, in [`PidInfo::summary`], on all of them).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PidGpuInfo {
    /// The GPU (`None` in the summary).
    pub gpu: Option<u32>,
    /// The process's own SM utilisation, in percent.
    pub process_sm_util: Option<f64>,
    /// The process's own memory utilisation, in percent.
    pub process_mem_util: Option<f64>,
    /// Other compute processes on the GPU at the same time.
    pub other_compute_pids: Vec<u32>,
    /// Other graphics processes on the GPU at the same time.
    pub other_graphics_pids: Vec<u32>,
    /// What the GPU did while the process ran.
    pub usage: GpuUsage,
}

fn pids(n: i32, list: &[u32]) -> Vec<u32> {
    list[..usize::try_from(n).unwrap_or(0).min(list.len())].to_vec()
}

fn xids(n: i32, ts: &[i64]) -> (u32, Vec<SystemTime>) {
    let n = if int32_blank_kind(n).is_none() {
        n.max(0)
    } else {
        0
    };
    let times = ts[..(n as usize).min(ts.len())]
        .iter()
        .filter_map(|t| time(*t))
        .collect();
    (n as u32, times)
}

impl PidGpuInfo {
    fn from_raw(p: &dcgmPidSingleInfo_t, summary: bool) -> Self {
        Self {
            gpu: (!summary).then_some(p.gpuId),
            process_sm_util: dbl(p.processUtilization.smUtil),
            process_mem_util: dbl(p.processUtilization.memUtil),
            other_compute_pids: pids(p.numOtherComputePids, &p.otherComputePids),
            other_graphics_pids: pids(p.numOtherGraphicsPids, &p.otherGraphicsPids),
            usage: gpu_usage!(p),
        }
    }
}

/// What a process did on the group's GPUs.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::{Group, WatchOptions};
/// let gpus = Group::all_gpus(&handle);
/// gpus.watch_pid_fields(WatchOptions::default())?;
/// handle.update_all_fields(true)?;
/// # let pid = 4242; // a process of the simulated node
/// let info = gpus.pid_info(pid)?;
/// for g in &info.gpus {
///     println!("GPU {:?}: {:?} J, max {:?} bytes", g.gpu, g.usage.energy_joules, g.usage.max_memory_bytes);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PidInfo {
    /// The process.
    pub pid: u32,
    /// Per GPU it used.
    pub gpus: Vec<PidGpuInfo>,
    /// Over all of them.
    pub summary: PidGpuInfo,
}

/// SM and memory utilisation of one process during a job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcessUtil {
    /// The process.
    pub pid: u32,
    /// Percent.
    pub sm_util: Option<f64>,
    /// Percent.
    pub mem_util: Option<f64>,
}

fn procs(n: i32, list: &[dcgmProcessUtilInfo_t]) -> Vec<ProcessUtil> {
    list[..usize::try_from(n).unwrap_or(0).min(list.len())]
        .iter()
        .map(|p| ProcessUtil {
            pid: p.pid,
            sm_util: dbl(p.smUtil),
            mem_util: dbl(p.memUtil),
        })
        .collect()
}

/// What a job did on one GPU (or, in [`JobStats::summary`], on all of them).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobGpuStats {
    /// The GPU (`None` in the summary).
    pub gpu: Option<u32>,
    /// Power draw, in watts.
    pub power_w: StatSummary,
    /// Compute processes that ran.
    pub compute_processes: Vec<ProcessUtil>,
    /// Graphics processes that ran.
    pub graphics_processes: Vec<ProcessUtil>,
    /// What the GPU did during the job.
    pub usage: GpuUsage,
}

impl JobGpuStats {
    fn from_raw(g: &dcgmGpuUsageInfo_t, summary: bool) -> Self {
        Self {
            gpu: (!summary).then_some(g.gpuId),
            power_w: StatSummary::f64(&g.powerUsage),
            compute_processes: procs(g.numComputePids, &g.computePidInfo),
            graphics_processes: procs(g.numGraphicsPids, &g.graphicsPidInfo),
            usage: gpu_usage!(g),
        }
    }
}

/// What a job did, per GPU and over all of them.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::{Group, WatchOptions};
/// let gpus = Group::with_gpus(&handle, "doc-job", &[0, 1])?;
/// gpus.watch_job_fields(WatchOptions::default())?;
/// gpus.job_start("doc-job-1")?;
/// handle.update_all_fields(true)?;
/// handle.job_stop("doc-job-1")?;
/// let stats = handle.job_stats("doc-job-1")?;
/// println!("{} GPUs, {:?} J", stats.gpus.len(), stats.summary.usage.energy_joules);
/// handle.job_remove("doc-job-1")?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct JobStats {
    /// Per GPU.
    pub gpus: Vec<JobGpuStats>,
    /// Over all of them.
    pub summary: JobGpuStats,
}

/// Longest job id DCGM accepts, in bytes.
pub const MAX_JOB_ID_LEN: usize = 63;

fn job_id(id: &str) -> Result<[c_char; 64]> {
    if id.is_empty() {
        return Err(Error::InvalidArgument("the job id is empty".into()));
    }
    if id.len() > MAX_JOB_ID_LEN {
        return Err(Error::InvalidArgument(format!(
            "job id {id:?} is {} bytes; DCGM allows at most {MAX_JOB_ID_LEN}",
            id.len()
        )));
    }
    if id.contains('\0') {
        return Err(Error::InvalidArgument(format!(
            "job id {id:?} contains a NUL byte"
        )));
    }
    let mut buf = [0 as c_char; 64];
    crate::library::write_c_buf(&mut buf, id);
    Ok(buf)
}

fn watch_args(o: WatchOptions) -> Result<(i64, f64, c_int)> {
    if o.update_interval.is_zero() {
        return Err(Error::InvalidArgument(
            "the update interval must be above zero".into(),
        ));
    }
    let freq = i64::try_from(o.update_interval.as_micros())
        .map_err(|_| Error::InvalidArgument("update interval too long".into()))?;
    let samples = c_int::try_from(o.max_keep_samples)
        .map_err(|_| Error::InvalidArgument("max_keep_samples too large".into()))?;
    Ok((freq, o.max_keep_age.as_secs_f64(), samples))
}

impl Group {
    /// Starts the watches process statistics need (`dcgmWatchPidFields`). Needs root on a
    /// real node, to enable accounting mode.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a zero or overlong update interval, or `max_keep_samples` above
    /// `i32::MAX`; `DCGM_ST_REQUIRES_ROOT` when accounting mode cannot be enabled (not root);
    /// `ConnectionLost`.
    #[doc(alias = "dcgmWatchPidFields")]
    pub fn watch_pid_fields(&self, options: WatchOptions) -> Result<()> {
        let (freq, age, samples) = watch_args(options)?;
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: plain arguments.
        unsafe {
            ffi!(
                lib,
                dcgmWatchPidFields(h.raw(), self.raw_id(), freq, age, samples)
            )
        }
    }

    /// What process `pid` did on the group's GPUs. Call [`Group::watch_pid_fields`] first.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_WATCHED` before [`Group::watch_pid_fields`]; `DCGM_ST_NO_DATA` for a pid that
    /// never ran on the group's GPUs; `ConnectionLost`.
    #[doc(alias = "dcgmGetPidInfo")]
    pub fn pid_info(&self, pid: u32) -> Result<PidInfo> {
        let mut info = dcgmPidInfo_v2::boxed_versioned();
        info.pid = pid;
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: a versioned struct valid for the call.
        unsafe { ffi!(lib, dcgmGetPidInfo(h.raw(), self.raw_id(), &mut *info)) }?;
        let n = usize::try_from(info.numGpus)
            .unwrap_or(0)
            .min(info.gpus.len());
        Ok(PidInfo {
            pid,
            gpus: info.gpus[..n]
                .iter()
                .map(|g| PidGpuInfo::from_raw(g, false))
                .collect(),
            summary: PidGpuInfo::from_raw(&info.summary, true),
        })
    }

    /// Starts the watches job statistics need (`dcgmWatchJobFields`).
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a zero or overlong update interval, or `max_keep_samples` above
    /// `i32::MAX`; `ConnectionLost`.
    #[doc(alias = "dcgmWatchJobFields")]
    pub fn watch_job_fields(&self, options: WatchOptions) -> Result<()> {
        let (freq, age, samples) = watch_args(options)?;
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: plain arguments.
        unsafe {
            ffi!(
                lib,
                dcgmWatchJobFields(h.raw(), self.raw_id(), freq, age, samples)
            )
        }
    }

    /// Starts recording job `id` (at most 63 bytes) on the group's GPUs.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for an id that is empty, longer than [`MAX_JOB_ID_LEN`] bytes or holds a
    /// NUL byte; `DCGM_ST_DUPLICATE_KEY` for an id already started; `ConnectionLost`.
    #[doc(alias = "dcgmJobStartStats")]
    pub fn job_start(&self, id: &str) -> Result<()> {
        let mut buf = job_id(id)?;
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: a NUL-terminated buffer valid for the call.
        unsafe {
            ffi!(
                lib,
                dcgmJobStartStats(h.raw(), self.raw_id(), buf.as_mut_ptr())
            )
        }
    }
}

impl Handle {
    /// Stops recording job `id`; its statistics stay until removed.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for an id that is empty, longer than [`MAX_JOB_ID_LEN`] bytes or holds a
    /// NUL byte; `ConnectionLost`.
    #[doc(alias = "dcgmJobStopStats")]
    pub fn job_stop(&self, id: &str) -> Result<()> {
        let mut buf = job_id(id)?;
        let lib = self.lib();
        // SAFETY: a NUL-terminated buffer valid for the call.
        unsafe { ffi!(lib, dcgmJobStopStats(self.raw(), buf.as_mut_ptr())) }
    }

    /// The statistics of job `id` (running or stopped).
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for an id as [`Handle::job_stop`] rejects it; `DCGM_ST_NO_DATA` for an
    /// unknown or removed job; `ConnectionLost`.
    #[doc(alias = "dcgmJobGetStats")]
    pub fn job_stats(&self, id: &str) -> Result<JobStats> {
        let mut buf = job_id(id)?;
        let mut info = dcgmJobInfo_v3::boxed_versioned();
        let lib = self.lib();
        // SAFETY: a NUL-terminated buffer and a versioned struct, both valid for the call.
        unsafe {
            ffi!(
                lib,
                dcgmJobGetStats(self.raw(), buf.as_mut_ptr(), &mut *info)
            )
        }?;
        let n = usize::try_from(info.numGpus)
            .unwrap_or(0)
            .min(info.gpus.len());
        Ok(JobStats {
            gpus: info.gpus[..n]
                .iter()
                .map(|g| JobGpuStats::from_raw(g, false))
                .collect(),
            summary: JobGpuStats::from_raw(&info.summary, true),
        })
    }

    /// Forgets job `id`.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for an id as [`Handle::job_stop`] rejects it; `DCGM_ST_NO_DATA` for an
    /// unknown or already removed job; `ConnectionLost`.
    #[doc(alias = "dcgmJobRemove")]
    pub fn job_remove(&self, id: &str) -> Result<()> {
        let mut buf = job_id(id)?;
        let lib = self.lib();
        // SAFETY: a NUL-terminated buffer valid for the call.
        unsafe { ffi!(lib, dcgmJobRemove(self.raw(), buf.as_mut_ptr())) }
    }

    /// Forgets every job.
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmJobRemoveAll")]
    pub fn job_remove_all(&self) -> Result<()> {
        let lib = self.lib();
        // SAFETY: a plain argument on a live handle.
        unsafe { ffi!(lib, dcgmJobRemoveAll(self.raw())) }
    }
}
