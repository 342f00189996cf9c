//! Process and job statistics, computed from the simulated fields over the process's or job's
//! lifetime (sampled at evenly spaced times) and from the scripted events in it.

use std::ffi::{CStr, c_char, c_int};

use dcgm_sys::*;

use super::{guard, versioned};
use crate::engine::{Engine, Job, now_us};
use crate::sim::with_engine;
use crate::sim_value::SimValue;

/// Samples taken over a lifetime to build the summaries.
const POINTS: i64 = 64;

fn value_at(e: &Engine, gpu: u32, field: u16, ts: i64) -> Option<f64> {
    match e.generate(DCGM_FE_GPU, gpu, field, ts) {
        SimValue::Int(v) if v < DCGM_INT64_BLANK => Some(v as f64),
        SimValue::Dbl(v) if v < DCGM_FP64_BLANK => Some(v),
        _ => None,
    }
}

/// Converters from a summary to DCGM's summary structs, which differ only in the number type:
/// the three values converted by `$conv`, or all three `$blank` without a summary.
macro_rules! summary_to_c {
    ($($name:ident: $c:ident, $blank:expr, $conv:expr;)*) => {$(
        fn $name(s: Option<Summary>) -> $c {
            let [min, max, avg] = match s {
                Some(s) => [s.min, s.max, s.avg].map($conv),
                None => [$blank; 3],
            };
            $c {
                minValue: min,
                maxValue: max,
                average: avg,
            }
        }
    )*};
}

/// Minimum, maximum and average of a field over `[start, end]`.
#[derive(Debug, Clone, Copy)]
struct Summary {
    min: f64,
    max: f64,
    avg: f64,
}

impl Summary {
    fn over(e: &Engine, gpu: u32, field: u16, start: i64, end: i64) -> Option<Summary> {
        let vals: Vec<f64> = (0..POINTS)
            .filter_map(|i| value_at(e, gpu, field, start + (end - start) * i / (POINTS - 1)))
            .collect();
        if vals.is_empty() {
            return None;
        }
        Some(Summary {
            min: vals.iter().copied().fold(f64::INFINITY, f64::min),
            max: vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            avg: vals.iter().sum::<f64>() / vals.len() as f64,
        })
    }

    /// Combines per-GPU summaries into the summary over GPUs.
    fn merge(all: &[Option<Summary>]) -> Option<Summary> {
        let v: Vec<Summary> = all.iter().flatten().copied().collect();
        if v.is_empty() {
            return None;
        }
        Some(Summary {
            min: v.iter().map(|s| s.min).fold(f64::INFINITY, f64::min),
            max: v.iter().map(|s| s.max).fold(f64::NEG_INFINITY, f64::max),
            avg: v.iter().map(|s| s.avg).sum::<f64>() / v.len() as f64,
        })
    }

    summary_to_c! {
        i64: dcgmStatSummaryInt64_t, DCGM_INT64_BLANK, |v: f64| v.round() as i64;
        i32: dcgmStatSummaryInt32_t, DCGM_INT32_BLANK, |v: f64| v.round() as i32;
        f64: dcgmStatSummaryFp64_t, DCGM_FP64_BLANK, |v: f64| v;
    }
}

/// What a GPU did over `[start, end]`, shared by process and job statistics.
#[derive(Debug, Clone)]
struct Usage {
    gpu: u32,
    energy_mj: i64,
    power: Option<Summary>,
    pcie_rx: Option<Summary>,
    pcie_tx: Option<Summary>,
    replays: i64,
    sm_util: Option<Summary>,
    mem_util: Option<Summary>,
    sbe: i64,
    dbe: i64,
    mem_clock: Option<Summary>,
    sm_clock: Option<Summary>,
    xid_ts: Vec<i64>,
    power_violation: i64,
    thermal_violation: i64,
    health: dcgmHealthWatchResults_t,
    /// (system, worst result) per subsystem with incidents.
    systems: Vec<(u32, u32)>,
    incident_count: u32,
}

fn delta(e: &Engine, gpu: u32, field: u16, start: i64, end: i64) -> i64 {
    match (value_at(e, gpu, field, start), value_at(e, gpu, field, end)) {
        (Some(a), Some(b)) => (b - a).max(0.0).round() as i64,
        _ => 0,
    }
}

fn usage(e: &Engine, gpu: u32, start: i64, end: i64) -> Usage {
    let s = |f| Summary::over(e, gpu, f, start, end);
    let found = e.health_incidents(&[gpu], DCGM_HEALTH_WATCH_ALL, start, end);
    let mut systems: Vec<(u32, u32)> = Vec::new();
    for i in &found {
        match systems.iter_mut().find(|s| s.0 == i.system) {
            Some(s) => s.1 = s.1.max(i.health),
            None => systems.push((i.system, i.health)),
        }
    }
    Usage {
        gpu,
        energy_mj: delta(e, gpu, DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, start, end),
        power: s(DCGM_FI_DEV_BOARD_POWER_WATTS),
        pcie_rx: s(DCGM_FI_DEV_PCIE_RX_THROUGHPUT),
        pcie_tx: s(DCGM_FI_DEV_PCIE_TX_THROUGHPUT),
        replays: delta(e, gpu, DCGM_FI_DEV_PCIE_REPLAY_TOTAL, start, end),
        sm_util: s(DCGM_FI_DEV_GPU_UTIL_RATIO),
        mem_util: s(DCGM_FI_DEV_MEM_COPY_UTIL),
        sbe: delta(e, gpu, DCGM_FI_DEV_ECC_SBE_VOL_TOTAL, start, end),
        dbe: delta(e, gpu, DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, start, end),
        mem_clock: s(DCGM_FI_DEV_MEM_CLOCK),
        sm_clock: s(DCGM_FI_DEV_SM_CLOCK),
        xid_ts: e
            .dynamics
            .events
            .iter()
            .filter(|ev| ev.gpu == gpu && ev.kind == "xid" && ev.ts >= start && ev.ts <= end)
            .map(|ev| ev.ts)
            .collect(),
        power_violation: delta(e, gpu, DCGM_FI_DEV_POWER_VIOLATION, start, end),
        thermal_violation: delta(e, gpu, DCGM_FI_DEV_THERMAL_VIOLATION, start, end),
        health: found
            .iter()
            .map(|i| i.health)
            .max()
            .unwrap_or(DCGM_HEALTH_RESULT_PASS),
        systems,
        incident_count: found.len() as u32,
    }
}

/// Merges per-GPU usages into the summary over GPUs.
fn merge_usage(all: &[Usage]) -> Usage {
    let m =
        |f: fn(&Usage) -> Option<Summary>| Summary::merge(&all.iter().map(f).collect::<Vec<_>>());
    let mut systems: Vec<(u32, u32)> = Vec::new();
    for (sys, h) in all.iter().flat_map(|u| u.systems.iter().copied()) {
        match systems.iter_mut().find(|s| s.0 == sys) {
            Some(s) => s.1 = s.1.max(h),
            None => systems.push((sys, h)),
        }
    }
    let mut xid_ts: Vec<i64> = all.iter().flat_map(|u| u.xid_ts.iter().copied()).collect();
    xid_ts.sort_unstable();
    Usage {
        gpu: DCGM_INT32_BLANK as u32,
        energy_mj: all.iter().map(|u| u.energy_mj).sum(),
        power: m(|u| u.power),
        pcie_rx: m(|u| u.pcie_rx),
        pcie_tx: m(|u| u.pcie_tx),
        replays: all.iter().map(|u| u.replays).sum(),
        sm_util: m(|u| u.sm_util),
        mem_util: m(|u| u.mem_util),
        sbe: all.iter().map(|u| u.sbe).sum(),
        dbe: all.iter().map(|u| u.dbe).sum(),
        mem_clock: m(|u| u.mem_clock),
        sm_clock: m(|u| u.sm_clock),
        xid_ts,
        power_violation: all.iter().map(|u| u.power_violation).sum(),
        thermal_violation: all.iter().map(|u| u.thermal_violation).sum(),
        health: all
            .iter()
            .map(|u| u.health)
            .max()
            .unwrap_or(DCGM_HEALTH_RESULT_PASS),
        systems,
        incident_count: all.iter().map(|u| u.incident_count).sum(),
    }
}

/// Copies XID timestamps (at most `DCGM_MAX_XID_INFO`) and returns their total count.
fn fill_xids(dst: &mut [i64; DCGM_MAX_XID_INFO], ts: &[i64]) -> i32 {
    for (d, s) in dst.iter_mut().zip(ts) {
        *d = *s;
    }
    ts.len() as i32
}

/// Fills the fields the pid and job structs share (they have the same names, not the same
/// struct).
macro_rules! fill_common {
    ($dst:expr, $u:expr) => {{
        let d = $dst;
        let u: &Usage = $u;
        d.gpuId = u.gpu;
        d.energyConsumed = u.energy_mj;
        d.pcieRxBandwidth = Summary::i64(u.pcie_rx);
        d.pcieTxBandwidth = Summary::i64(u.pcie_tx);
        d.pcieReplays = u.replays;
        d.smUtilization = Summary::i32(u.sm_util);
        d.memoryUtilization = Summary::i32(u.mem_util);
        d.eccSingleBit = u.sbe.clamp(0, u32::MAX as i64) as u32;
        d.eccDoubleBit = u.dbe.clamp(0, u32::MAX as i64) as u32;
        d.memoryClock = Summary::i32(u.mem_clock);
        d.smClock = Summary::i32(u.sm_clock);
        d.numXidCriticalErrors = fill_xids(&mut d.xidCriticalErrorsTs, &u.xid_ts);
        d.powerViolationTime = u.power_violation;
        d.thermalViolationTime = u.thermal_violation;
        d.reliabilityViolationTime = 0;
        d.boardLimitViolationTime = 0;
        d.lowUtilizationTime = 0;
        d.syncBoostTime = 0;
        d.overallHealth = u.health;
        d.incidentCount = u.incident_count;
        for s in d.systems.iter_mut() {
            s.system = 0;
            s.health = DCGM_HEALTH_RESULT_PASS;
        }
        for (s, (sys, h)) in d.systems.iter_mut().zip(&u.systems) {
            s.system = *sys;
            s.health = *h;
        }
    }};
}

/// `dcgmWatchPidFields` and `dcgmWatchJobFields`: the group must exist; then the engine keeps
/// that kind of statistics.
fn watch_stats(handle: dcgmHandle_t, group: dcgmGpuGrp_t, start: fn(&mut Engine)) -> dcgmReturn_t {
    guard(|| {
        with_engine(handle, |e| {
            e.group_entities(group)?;
            start(e);
            Ok(())
        })
    })
}

// ---------------------------------------------------------------------------------------------
// Processes

#[unsafe(no_mangle)]
pub extern "C" fn dcgmWatchPidFields(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    updateFreq: i64,
    maxKeepAge: f64,
    maxKeepSamples: c_int,
) -> dcgmReturn_t {
    // libdcgm 4.6.0 accepts any frequency, age and sample count here. The samples are kept
    // for the longest age any watcher asked for.
    let _ = (updateFreq, maxKeepSamples);
    let age_us = if maxKeepAge.is_finite() && maxKeepAge > 0.0 {
        (maxKeepAge * 1e6).min(i64::MAX as f64) as i64
    } else {
        0
    };
    guard(|| {
        with_engine(pDcgmHandle, |e| {
            e.group_entities(groupId)?;
            e.pid_keep_age_us = if !e.pid_watch {
                age_us
            } else if e.pid_keep_age_us == 0 || age_us == 0 {
                0
            } else {
                e.pid_keep_age_us.max(age_us)
            };
            e.pid_watch = true;
            Ok(())
        })
    })
}

/// When a configured process started: before the engine, by an amount that depends on the pid.
fn process_start(e: &Engine, pid: u32) -> i64 {
    let offset_s = 600 + crate::values::mix(e.machine.cfg.seed, u64::from(pid), 0x5715) % 3000;
    e.dynamics.start_us - offset_s as i64 * 1_000_000
}

/// What DCGM 4.6 reports as the SM utilisation of a process with a utilisation of its own
/// (`sm_util_percent`) on `gpu` at `now`: the sum of its samples over the number of samples
/// of every such process on the GPU, in the window the samples are kept (the pid watch's
/// keep age, back to the process's start). Every process is sampled once per round while it
/// runs, so each process's samples are counted by the time it ran in the window.
fn own_sm_util(e: &Engine, pid: u32, util: f64, gpu: u32, now: i64) -> f64 {
    let start = process_start(e, pid);
    let from = if e.pid_keep_age_us > 0 {
        start.max(now - e.pid_keep_age_us)
    } else {
        start
    };
    let ran = |q: u32| (now - process_start(e, q).max(from)).max(0) as f64;
    let all: f64 = e
        .machine
        .cfg
        .processes
        .iter()
        .filter(|q| q.gpus.contains(&gpu) && q.sm_util_percent.is_some_and(|v| v > 0.0))
        .map(|q| ran(q.pid))
        .sum();
    if util <= 0.0 || all <= 0.0 {
        0.0
    } else {
        util * ran(pid) / all
    }
}

/// # Safety
///
/// `pidInfo` must be NULL or a versioned `dcgmPidInfo_v2` with its pid set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetPidInfo(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    pidInfo: *mut dcgmPidInfo_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let info = unsafe { versioned(pidInfo, &[dcgmPidInfo_version2]) }?;
        let pid = info.pid;
        with_engine(pDcgmHandle, |e| {
            let group = e.group_gpus(groupId)?;
            if !e.pid_watch {
                return Err(DCGM_ST_NOT_WATCHED);
            }
            let cfg = &e.machine.cfg;
            let proc_ = cfg
                .processes
                .iter()
                .find(|p| p.pid == pid)
                .ok_or(DCGM_ST_NO_DATA)?;
            let gpus: Vec<u32> = proc_
                .gpus
                .iter()
                .copied()
                .filter(|g| group.contains(g))
                .collect();
            if gpus.is_empty() {
                return Err(DCGM_ST_NO_DATA);
            }
            let start = process_start(e, pid);
            let now = now_us();
            let usages: Vec<Usage> = gpus.iter().map(|&g| usage(e, g, start, now)).collect();
            let mem_bytes = proc_.memory_mib * 1024 * 1024;
            let own: Vec<f64> = match proc_.sm_util_percent {
                Some(util) => gpus
                    .iter()
                    .map(|&g| own_sm_util(e, pid, util, g, now))
                    .collect(),
                None => Vec::new(),
            };
            let fill = |d: &mut dcgmPidSingleInfo_t, u: &Usage, gpus_of_u: &[u32]| {
                fill_common!(&mut *d, u);
                d.startTime = start;
                d.endTime = 0;
                let sm_util = if own.is_empty() {
                    u.sm_util.map_or(0.0, |s| s.avg)
                } else {
                    gpus_of_u
                        .iter()
                        .filter_map(|g| gpus.iter().position(|x| x == g).map(|i| own[i]))
                        .sum::<f64>()
                        / gpus_of_u.len().max(1) as f64
                };
                d.processUtilization = dcgmProcessUtilInfo_t {
                    pid,
                    smUtil: sm_util,
                    memUtil: u.mem_util.map_or(0.0, |s| s.avg),
                };
                let others: Vec<u32> = cfg
                    .processes
                    .iter()
                    .filter(|p| p.pid != pid && p.gpus.iter().any(|g| gpus_of_u.contains(g)))
                    .map(|p| p.pid)
                    .collect();
                for (dst, p) in d.otherComputePids.iter_mut().zip(&others) {
                    *dst = *p;
                }
                d.numOtherComputePids = others.len().min(DCGM_MAX_PID_INFO_NUM) as i32;
                d.numOtherGraphicsPids = 0;
                d.maxGpuMemoryUsed = mem_bytes;
            };
            let n = usages.len().min(info.gpus.len());
            for (i, u) in usages.iter().take(n).enumerate() {
                fill(&mut info.gpus[i], u, &[u.gpu]);
            }
            let total = merge_usage(&usages);
            fill(&mut info.summary, &total, &gpus);
            info.summary.maxGpuMemoryUsed = mem_bytes;
            info.numGpus = n as i32;
            Ok(())
        })
    })
}

// ---------------------------------------------------------------------------------------------
// Jobs

/// Reads a job id (`char[64]`, NUL-terminated within its 64 bytes, not empty).
///
/// # Safety
///
/// `p` must be NULL or point to 64 readable bytes, or to a shorter NUL-terminated string.
unsafe fn job_id(p: *const c_char) -> Result<String, dcgmReturn_t> {
    if p.is_null() {
        return Err(DCGM_ST_BADPARAM);
    }
    let mut len = 0;
    // SAFETY: reads stop at the first NUL, within the 64 bytes of the contract.
    while len < 64 && unsafe { *p.add(len) } != 0 {
        len += 1;
    }
    if len == 0 || len == 64 {
        return Err(DCGM_ST_BADPARAM);
    }
    // SAFETY: NUL-terminated at `len`.
    let s = unsafe { CStr::from_ptr(p) };
    Ok(s.to_string_lossy().into_owned())
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmWatchJobFields(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    updateFreq: i64,
    maxKeepAge: f64,
    maxKeepSamples: c_int,
) -> dcgmReturn_t {
    let _ = (updateFreq, maxKeepAge, maxKeepSamples);
    watch_stats(pDcgmHandle, groupId, |e| e.job_watch = true)
}

/// # Safety
///
/// `jobId` must be a job id string of at most 63 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmJobStartStats(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    jobId: *mut c_char,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let id = unsafe { job_id(jobId) }?;
        with_engine(pDcgmHandle, |e| {
            e.group_entities(groupId)?;
            if e.jobs.contains_key(&id) {
                return Err(DCGM_ST_DUPLICATE_KEY);
            }
            e.jobs.insert(
                id,
                Job {
                    group: groupId,
                    start: now_us(),
                    end: None,
                },
            );
            Ok(())
        })
    })
}

/// # Safety
///
/// As for [`dcgmJobStartStats`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmJobStopStats(
    pDcgmHandle: dcgmHandle_t,
    jobId: *mut c_char,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let id = unsafe { job_id(jobId) }?;
        with_engine(pDcgmHandle, |e| {
            let job = e.jobs.get_mut(&id).ok_or(DCGM_ST_NO_DATA)?;
            if job.end.is_none() {
                job.end = Some(now_us());
            }
            Ok(())
        })
    })
}

/// # Safety
///
/// `jobId` as for [`dcgmJobStartStats`]; `pJobInfo` NULL or a versioned `dcgmJobInfo_v3`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmJobGetStats(
    pDcgmHandle: dcgmHandle_t,
    jobId: *mut c_char,
    pJobInfo: *mut dcgmJobInfo_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let id = unsafe { job_id(jobId) }?;
        // SAFETY: per this function's contract.
        let info = unsafe { versioned(pJobInfo, &[dcgmJobInfo_version3]) }?;
        with_engine(pDcgmHandle, |e| {
            let job = e.jobs.get(&id).cloned().ok_or(DCGM_ST_NO_DATA)?;
            let gpus = e.group_gpus(job.group)?;
            let end = job.end.unwrap_or_else(now_us);
            let usages: Vec<Usage> = gpus.iter().map(|&g| usage(e, g, job.start, end)).collect();
            let cfg = &e.machine.cfg;
            let fill = |d: &mut dcgmGpuUsageInfo_t, u: &Usage, on: &[u32]| {
                fill_common!(&mut *d, u);
                d.powerUsage = Summary::f64(u.power);
                d.startTime = job.start;
                d.endTime = job.end.unwrap_or(0);
                let procs: Vec<_> = cfg
                    .processes
                    .iter()
                    .filter(|p| p.gpus.iter().any(|g| on.contains(g)))
                    .collect();
                for (dst, p) in d.computePidInfo.iter_mut().zip(&procs) {
                    *dst = dcgmProcessUtilInfo_t {
                        pid: p.pid,
                        smUtil: u.sm_util.map_or(0.0, |s| s.avg),
                        memUtil: u.mem_util.map_or(0.0, |s| s.avg),
                    };
                }
                d.numComputePids = procs.len().min(DCGM_MAX_PID_INFO_NUM) as i32;
                d.numGraphicsPids = 0;
                d.maxGpuMemoryUsed =
                    procs.iter().map(|p| p.memory_mib).max().unwrap_or(0) * 1024 * 1024;
            };
            let n = usages.len().min(info.gpus.len());
            for (i, u) in usages.iter().take(n).enumerate() {
                fill(&mut info.gpus[i], u, &[u.gpu]);
            }
            fill(&mut info.summary, &merge_usage(&usages), &gpus);
            info.numGpus = n as i32;
            Ok(())
        })
    })
}

/// # Safety
///
/// As for [`dcgmJobStartStats`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmJobRemove(
    pDcgmHandle: dcgmHandle_t,
    jobId: *mut c_char,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let id = unsafe { job_id(jobId) }?;
        with_engine(pDcgmHandle, |e| {
            e.jobs.remove(&id).map(|_| ()).ok_or(DCGM_ST_NO_DATA)
        })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmJobRemoveAll(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard(|| {
        with_engine(pDcgmHandle, |e| {
            e.jobs.clear();
            Ok(())
        })
    })
}
