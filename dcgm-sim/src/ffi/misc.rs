//! Introspection, modules, host-engine settings, topology selection, NVLink peer-to-peer
//! status, field summaries and sample ranges, failure-reason metadata, and the calls the
//! simulator deliberately does not support.

use std::ffi::{CStr, c_char, c_int};
use std::sync::OnceLock;

use dcgm_sys::*;

use super::{guard, out, read_str, versioned, write_str};
use crate::cache::key;
use crate::engine::{Engine, now_us, with_engine};
use crate::model::SimValue;

// ---------------------------------------------------------------------------------------------
// Modules

/// Fails with `DCGM_ST_MODULE_NOT_LOADED` when `module` is on the engine's deny list.
pub fn module_ok(e: &Engine, module: dcgmModuleId_t) -> Result<(), dcgmReturn_t> {
    if module < 32 && e.module_denylist & (1 << module) != 0 {
        Err(DCGM_ST_MODULE_NOT_LOADED)
    } else {
        Ok(())
    }
}

/// Module names, indexed by module id.
const MODULE_NAMES: [&CStr; DcgmModuleIdCount as usize] = [
    c"Core",
    c"NvSwitch",
    c"VGPU",
    c"Introspection",
    c"Health",
    c"Policy",
    c"Config",
    c"Diag",
    c"Profiling",
    c"SysMon",
    c"MnDiag",
];

/// # Safety
///
/// `name` must be NULL or writable; the string written belongs to the library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmModuleIdToName(
    id: dcgmModuleId_t,
    name: *mut *const c_char,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let n = unsafe { out(name) }?;
        let s = MODULE_NAMES.get(id as usize).ok_or(DCGM_ST_BADPARAM)?;
        *n = s.as_ptr();
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmModuleDenylist(
    pDcgmHandle: dcgmHandle_t,
    moduleId: dcgmModuleId_t,
) -> dcgmReturn_t {
    guard(|| {
        with_engine(pDcgmHandle, |e| {
            if moduleId == DcgmModuleIdCore || moduleId >= DcgmModuleIdCount {
                return Err(DCGM_ST_BADPARAM);
            }
            e.module_denylist |= 1 << moduleId;
            Ok(())
        })
    })
}

/// # Safety
///
/// `moduleStatuses` must be NULL or a versioned `dcgmModuleGetStatuses_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmModuleGetStatuses(
    pDcgmHandle: dcgmHandle_t,
    moduleStatuses: *mut dcgmModuleGetStatuses_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let st = unsafe { versioned(moduleStatuses, &[dcgmModuleGetStatuses_version1]) }?;
        with_engine(pDcgmHandle, |e| {
            let n = (DcgmModuleIdCount as usize).min(st.statuses.len());
            for (id, slot) in st.statuses.iter_mut().take(n).enumerate() {
                slot.id = id as u32;
                slot.status = if id as u32 == DcgmModuleIdCore && e.telemetry_paused {
                    DcgmModuleStatusPaused
                } else if module_ok(e, id as u32).is_ok() {
                    DcgmModuleStatusLoaded
                } else {
                    DcgmModuleStatusDenylisted
                };
            }
            st.numStatuses = n as u32;
            Ok(())
        })
    })
}

// ---------------------------------------------------------------------------------------------
// Introspection

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

// ---------------------------------------------------------------------------------------------
// Host-engine settings

/// # Safety
///
/// `logging` must be NULL or a versioned `dcgmSettingsSetLoggingSeverity_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmHostengineSetLoggingSeverity(
    pDcgmHandle: dcgmHandle_t,
    logging: *mut dcgmSettingsSetLoggingSeverity_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let l = unsafe { versioned(logging, &[dcgmSettingsSetLoggingSeverity_version2]) }?;
        if !(0..=3).contains(&l.targetLogger)
            || !(DcgmLoggingSeverityUnspecified..=DcgmLoggingSeverityVerbose)
                .contains(&l.targetSeverity)
        {
            return Err(DCGM_ST_BADPARAM);
        }
        let sev = l.targetSeverity;
        with_engine(pDcgmHandle, |e| {
            e.log_severity = sev;
            Ok(())
        })
    })
}

/// # Safety
///
/// `pEnvVarInfo` must be NULL or a versioned `dcgmEnvVarInfo_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmHostengineEnvironmentVariableInfo(
    pDcgmHandle: dcgmHandle_t,
    pEnvVarInfo: *mut dcgmEnvVarInfo_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let info = unsafe { versioned(pEnvVarInfo, &[dcgmEnvVarInfo_version1]) }?;
        with_engine(pDcgmHandle, |_| Ok(()))?;
        let name = read_str(&info.envVarName);
        let rc = if name.is_empty() {
            DCGM_ST_BADPARAM
        } else if name != "CUDA_VISIBLE_DEVICES" {
            DCGM_ST_NOT_SUPPORTED
        } else {
            match std::env::var(&name) {
                Ok(v) => {
                    write_str(&mut info.envVarValue, &v);
                    DCGM_ST_OK
                }
                Err(_) => {
                    write_str(&mut info.envVarValue, "");
                    DCGM_ST_NO_DATA
                }
            }
        };
        info.ret = rc;
        if rc == DCGM_ST_OK { Ok(()) } else { Err(rc) }
    })
}

// ---------------------------------------------------------------------------------------------
// Topology and NVLink

/// # Safety
///
/// `outputGpuIds` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmSelectGpusByTopology(
    pDcgmHandle: dcgmHandle_t,
    inputGpuIds: u64,
    numGpus: u32,
    outputGpuIds: *mut u64,
    hintFlags: u64,
) -> dcgmReturn_t {
    let _ = hintFlags;
    guard(|| {
        // SAFETY: per this function's contract.
        let o = unsafe { out(outputGpuIds) }?;
        with_engine(pDcgmHandle, |e| {
            let count = e.machine.gpu_count().min(64);
            let candidates = if inputGpuIds == 0 {
                u64::MAX
            } else {
                inputGpuIds
            };
            // Every simulated GPU sits on the same NvSwitch fabric, so the lowest ids are as
            // good as any: pick them in order.
            let mut mask = 0u64;
            let mut picked = 0;
            for g in 0..count {
                if picked >= numGpus {
                    break;
                }
                if candidates & (1 << g) != 0 {
                    mask |= 1 << g;
                    picked += 1;
                }
            }
            *o = mask;
            // As libdcgm 4.6.0: fewer candidates than asked for is "insufficient size" (the
            // mask still names those there are).
            if picked < numGpus {
                return Err(DCGM_ST_INSUFFICIENT_SIZE);
            }
            Ok(())
        })
    })
}

/// # Safety
///
/// `linkStatus` must be NULL or a versioned `dcgmNvLinkP2PStatus_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetNvLinkP2PStatus(
    dcgmHandle: dcgmHandle_t,
    linkStatus: *mut dcgmNvLinkP2PStatus_v1,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let st = unsafe { versioned(linkStatus, &[dcgmNvLinkP2PStatus_version1]) }?;
        with_engine(dcgmHandle, |e| {
            let count = e.machine.gpu_count();
            let ids: Vec<u32> = if st.numGpus == 0 {
                (0..count.min(st.gpus.len() as u32)).collect()
            } else {
                if st.numGpus as usize > st.gpus.len() {
                    return Err(DCGM_ST_BADPARAM);
                }
                let ids: Vec<u32> = st.gpus[..st.numGpus as usize]
                    .iter()
                    .map(|g| g.entityId)
                    .collect();
                if ids.iter().any(|&g| g >= count) {
                    return Err(DCGM_ST_BADPARAM);
                }
                ids
            };
            let links = |g: u32| e.machine.cfg.gpus.get(g as usize).map_or(0, |c| c.nvlinks);
            let fabric = e.machine.cfg.nvswitches > 0;
            for (slot, &g) in st.gpus.iter_mut().zip(&ids) {
                slot.entityId = g;
                for (j, s) in slot.linkStatus.iter_mut().enumerate() {
                    let j = j as u32;
                    *s = if j >= count {
                        DcgmNvLinkP2pStatusUnknown
                    } else if links(g) == 0 || links(j) == 0 {
                        DcgmNvLinkP2pStatusGpuNotSupported
                    } else if !fabric && g != j {
                        DcgmNvLinkP2pStatusTopologyNotSupported
                    } else {
                        DcgmNvLinkP2pStatusOK
                    };
                }
            }
            st.numGpus = ids.len() as u32;
            Ok(())
        })
    })
}

// ---------------------------------------------------------------------------------------------
// Field summaries and sample ranges

fn as_f64(v: &SimValue) -> Option<f64> {
    match v {
        SimValue::Int(i) if *i < DCGM_INT64_BLANK => Some(*i as f64),
        SimValue::Dbl(d) if *d < DCGM_FP64_BLANK => Some(*d),
        _ => None,
    }
}

/// The cached samples of a watched (entity, field) in `[start, end]` (0 = open), oldest first.
pub fn cached_samples(
    e: &mut Engine,
    group: u32,
    id: u32,
    field: u16,
    start: i64,
    end: i64,
) -> Result<Vec<crate::cache::Sample>, dcgmReturn_t> {
    let now = now_us();
    // Brings the entry up to date and tells whether it is watched.
    let r = crate::ffi::values::latest(e, group, id, field, now);
    if r.status == DCGM_ST_NOT_WATCHED || r.status == DCGM_ST_UNKNOWN_FIELD {
        return Err(r.status);
    }
    let end = if end <= 0 { i64::MAX } else { end };
    Ok(e.cache
        .watches
        .get(&key(group, id, field))
        .map(|w| {
            w.samples
                .iter()
                .filter(|s| s.ts >= start && s.ts <= end)
                .cloned()
                .collect()
        })
        .unwrap_or_default())
}

/// # Safety
///
/// `request` must be NULL or a versioned `dcgmFieldSummaryRequest_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetFieldSummary(
    pDcgmHandle: dcgmHandle_t,
    request: *mut dcgmFieldSummaryRequest_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let req = unsafe { versioned(request, &[dcgmFieldSummaryRequest_version1]) }?;
        let meta = field_by_id(req.fieldId).ok_or(DCGM_ST_UNKNOWN_FIELD)?;
        let ty = meta.field_type;
        if ty != DCGM_FT_INT64 && ty != DCGM_FT_DOUBLE {
            return Err(DCGM_ST_FIELD_UNSUPPORTED_BY_API);
        }
        let mask = req.summaryTypeMask & ((1 << DCGM_SUMMARY_SIZE) - 1);
        if mask == 0 {
            return Err(DCGM_ST_BADPARAM);
        }
        let (field, group, id) = (req.fieldId, req.entityGroupId, req.entityId);
        let (start, end) = (req.startTime as i64, req.endTime as i64);
        let samples = with_engine(pDcgmHandle, |e| {
            if !e.machine.exists(group, id) {
                return Err(DCGM_ST_BADPARAM);
            }
            cached_samples(e, group, id, field, start, end)
        })?;
        let pts: Vec<(i64, f64)> = samples
            .iter()
            .filter_map(|s| as_f64(&s.value).map(|v| (s.ts, v)))
            .collect();
        if pts.is_empty() {
            return Err(DCGM_ST_NO_DATA);
        }
        let n = pts.len() as f64;
        let sum: f64 = pts.iter().map(|p| p.1).sum();
        let min = pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let max = pts.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        // Trapezoids over time, in value-seconds.
        let integral: f64 = pts
            .windows(2)
            .map(|w| (w[0].1 + w[1].1) / 2.0 * ((w[1].0 - w[0].0) as f64 / 1e6))
            .sum();
        let diff = pts[pts.len() - 1].1 - pts[0].1;
        let all = [min, max, sum / n, sum, n, integral, diff];
        req.response.fieldType = u32::from(ty);
        let mut k = 0;
        for (bit, v) in all.iter().enumerate() {
            if mask & (1 << bit) == 0 {
                continue;
            }
            if ty == DCGM_FT_INT64 {
                req.response.values[k].i64_ = v.round() as i64;
            } else {
                req.response.values[k].fp64 = *v;
            }
            k += 1;
        }
        req.response.summaryCount = k as u32;
        Ok(())
    })
}

/// # Safety
///
/// `count` must be readable and writable; `values` must have room for `*count` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetMultipleValuesForField(
    pDcgmHandle: dcgmHandle_t,
    gpuId: c_int,
    fieldId: u16,
    count: *mut c_int,
    startTs: i64,
    endTs: i64,
    order: dcgmOrder_t,
    values: *mut dcgmFieldValue_v1,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let n = unsafe { out(count) }?;
        if values.is_null() || *n <= 0 || gpuId < 0 {
            return Err(DCGM_ST_BADPARAM);
        }
        if order != DCGM_ORDER_ASCENDING && order != DCGM_ORDER_DESCENDING {
            *n = 0;
            return Err(DCGM_ST_BADPARAM);
        }
        if field_by_id(fieldId).is_none() {
            return Err(DCGM_ST_UNKNOWN_FIELD);
        }
        let cap = *n as usize;
        // SAFETY: room for `cap` values per the contract.
        let outv = unsafe { std::slice::from_raw_parts_mut(values, cap) };
        let gpu = gpuId as u32;
        let samples = with_engine(pDcgmHandle, |e| {
            // An unknown GPU has no cache entry in libdcgm 4.6.0.
            if !e.machine.exists(DCGM_FE_GPU, gpu) {
                return Err(DCGM_ST_NOT_WATCHED);
            }
            cached_samples(e, DCGM_FE_GPU, gpu, fieldId, startTs, endTs)
        });
        let mut samples = match samples {
            Ok(s) => s,
            Err(rc) => {
                *n = 0;
                return Err(rc);
            }
        };
        if order == DCGM_ORDER_DESCENDING {
            samples.reverse();
        }
        samples.truncate(cap);
        for (dst, s) in outv.iter_mut().zip(&samples) {
            let r = crate::ffi::values::Read {
                group: DCGM_FE_GPU,
                id: gpu,
                field: fieldId,
                status: DCGM_ST_OK,
                ts: s.ts,
                value: s.value.clone(),
            };
            crate::ffi::values::fill_v1(dst, &r);
        }
        *n = samples.len() as c_int;
        if samples.is_empty() {
            return Err(DCGM_ST_NO_DATA);
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Not supported by the simulator

/// Running a host-engine listener needs the real nv-hostengine: not supported.
///
/// # Safety
///
/// `socketPath` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmEngineRun(
    portNumber: u16,
    socketPath: *const c_char,
    connectionType: u32,
) -> dcgmReturn_t {
    let _ = (portNumber, socketPath, connectionType);
    DCGM_ST_NOT_SUPPORTED
}

/// Simulated GPUs have no driver to attach: not supported.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmAttachDriver(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard(|| {
        with_engine(pDcgmHandle, |_| Ok(()))?;
        Err(DCGM_ST_NOT_SUPPORTED)
    })
}

/// Simulated GPUs have no driver to detach: not supported.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmDetachDriver(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard(|| {
        with_engine(pDcgmHandle, |_| Ok(()))?;
        Err(DCGM_ST_NOT_SUPPORTED)
    })
}

/// The MIG layout comes from the simulator's config: fake instances are not supported.
///
/// # Safety
///
/// `hierarchy` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmAddFakeInstances(
    pDcgmHandle: dcgmHandle_t,
    hierarchy: *mut dcgmMigHierarchy_v2,
) -> dcgmReturn_t {
    let _ = hierarchy;
    guard(|| {
        with_engine(pDcgmHandle, |_| Ok(()))?;
        Err(DCGM_ST_NOT_SUPPORTED)
    })
}

// ---------------------------------------------------------------------------------------------
// Failure-reason metadata

/// What the simulator knows about a failure reason it reports.
#[derive(Debug, Clone, Copy)]
pub struct ErrorInfo {
    pub code: dcgmError_t,
    /// printf-style template.
    pub format: &'static CStr,
    pub suggestion: &'static CStr,
}

const fn info(code: dcgmError_t, format: &'static CStr, suggestion: &'static CStr) -> ErrorInfo {
    ErrorInfo {
        code,
        format,
        suggestion,
    }
}

/// The failure reasons the simulator's health checks and diagnostics emit.
pub const ERRORS: &[ErrorInfo] = &[
    info(DCGM_FR_OK, c"Everything is fine", c""),
    info(
        DCGM_FR_PCI_REPLAY_RATE,
        c"GPU %u saw %d PCIe replays, more than expected for its link",
        c"Reseat the GPU or try another slot; check the riser and cabling if it keeps happening",
    ),
    info(
        DCGM_FR_VOLATILE_DBE_DETECTED,
        c"GPU %u reported %d uncorrectable (double-bit) ECC errors",
        c"Drain the GPU and reset it; replace it if the errors come back",
    ),
    info(
        DCGM_FR_VOLATILE_SBE_DETECTED,
        c"GPU %u corrected %d single-bit ECC errors",
        c"No action needed; keep watching the rate",
    ),
    info(
        DCGM_FR_RETIRED_PAGES_LIMIT,
        c"GPU %u has retired %d memory pages",
        c"Have the GPU inspected by its vendor; it may need replacing",
    ),
    info(
        DCGM_FR_CLOCKS_EVENT_POWER,
        c"GPU %u lowered its clocks to stay under its power limit (%d W)",
        c"Check the configured power limit and the node's power delivery",
    ),
    info(
        DCGM_FR_TEMP_VIOLATION,
        c"GPU %u reached %d C",
        c"Check airflow, fans and the room temperature around the node",
    ),
    info(
        DCGM_FR_NVLINK_ERROR_CRITICAL,
        c"GPU %u reported %d NVLink errors that the link could not recover from",
        c"Reset the GPU; if the link stays unhealthy, check the baseboard and NvSwitch trays",
    ),
    info(
        DCGM_FR_FAULTY_MEMORY,
        c"The memory test found bad memory on GPU %u",
        c"Take the GPU out of service and have it replaced",
    ),
    info(
        DCGM_FR_PCIE_REPLAY_VIOLATION,
        c"GPU %u's PCIe replay counter rose to %d during the test",
        c"Reseat the GPU and check the PCIe slot",
    ),
    info(
        DCGM_FR_XID_ERROR,
        c"GPU %u reported XID %d",
        c"Look the XID up in the driver documentation and follow its recovery action",
    ),
    info(
        DCGM_FR_FALLEN_OFF_BUS,
        c"GPU %u is no longer reachable on the PCIe bus",
        c"Reboot the node; reseat or replace the GPU if it happens again",
    ),
    info(
        DCGM_FR_CONTAINED_ERROR,
        c"GPU %u had an uncorrectable memory error that the driver contained",
        c"Restart the affected applications and reset the GPU when it is idle",
    ),
    info(
        DCGM_FR_UNCONTAINED_ERROR,
        c"GPU %u had an uncorrectable memory error that could not be contained",
        c"Drain the GPU and reset it",
    ),
];

/// The simulator's metadata of a failure reason, if it emits it.
pub fn error_info(code: dcgmError_t) -> Option<&'static ErrorInfo> {
    ERRORS.iter().find(|e| e.code == code)
}

/// Severity and category of a failure reason as libdcgm 4.6.0 reports them (recorded in
/// `data/failure-reasons.tsv`); unknown codes answer (3, 3) there too.
pub fn recorded_class(code: u32) -> (dcgmErrorSeverity_t, dcgmErrorCategory_t) {
    static T: OnceLock<Vec<(u32, u32, u32)>> = OnceLock::new();
    T.get_or_init(|| {
        include_str!("../../data/failure-reasons.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut it = l.split('\t').map(|v| v.trim().parse::<u32>());
                Some((it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?))
            })
            .collect()
    })
    .iter()
    .find(|r| r.0 == code)
    .map_or((3, 3), |r| (r.1 as _, r.2 as _))
}

struct MetaTable(Vec<dcgm_error_meta_t>);
// SAFETY: the table is immutable and its pointers point at 'static C string literals.
unsafe impl Sync for MetaTable {}
// SAFETY: as above.
unsafe impl Send for MetaTable {}

fn meta_table() -> &'static [dcgm_error_meta_t] {
    static T: OnceLock<MetaTable> = OnceLock::new();
    &T.get_or_init(|| {
        MetaTable(
            ERRORS
                .iter()
                .map(|e| dcgm_error_meta_t {
                    errorId: e.code,
                    msgFormat: e.format.as_ptr(),
                    suggestion: e.suggestion.as_ptr(),
                    severity: recorded_class(e.code).0 as i32,
                    category: recorded_class(e.code).1 as i32,
                })
                .collect(),
        )
    })
    .0
}

/// The library's description of a failure reason the simulator emits, or NULL.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmGetErrorMeta(error: dcgmError_t) -> *const dcgm_error_meta_t {
    meta_table()
        .iter()
        .find(|m| m.errorId == error)
        .map_or(std::ptr::null(), |m| m as *const dcgm_error_meta_t)
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetPriorityByCode(code: u32) -> dcgmErrorSeverity_t {
    recorded_class(code).0
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetCategoryByCode(code: u32) -> dcgmErrorCategory_t {
    recorded_class(code).1
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetFormatMsgByCode(code: u32) -> *const c_char {
    error_info(code).map_or(std::ptr::null(), |e| e.format.as_ptr())
}
