//! Configuration (power limits and application clocks applied to the simulated GPUs), status
//! objects, and workload power profiles.

use std::ffi::{CStr, c_char, c_int};

use dcgm_sys::*;

use super::modules::module_ok;
use super::{guard, guard_symbol, out, version_word, versioned};
use crate::engine::Engine;
use crate::personality::Struct;
use crate::sim::{lock, with_engine};

/// Lowest power limit the simulated GPUs accept, in watts.
pub const MIN_POWER_LIMIT_W: u32 = 200;

const BLANK: u32 = DCGM_INT32_BLANK as u32;

/// `DCGM_FI_SYSTEM_GPU_SYNC_BOOST` (deprecated; the field the sync-boost status names).
const DCGM_FI_SYSTEM_GPU_SYNC_BOOST: i16 = 91;

fn is_blank(v: u32) -> bool {
    v >= BLANK
}

/// A configuration with every member blank ("not set").
fn blank_config(gpu: u32) -> dcgmConfig_v2 {
    dcgmConfig_v2 {
        version: dcgmConfig_version2,
        gpuId: gpu,
        eccMode: BLANK,
        computeMode: BLANK,
        perfState: dcgmConfigPerfStateSettings_t {
            syncBoost: BLANK,
            targetClocks: dcgmClockSet_v1 {
                version: dcgmClockSet_version1 as i32,
                memClock: BLANK,
                smClock: BLANK,
            },
        },
        powerLimit: dcgmConfigPowerLimit_t {
            type_: DCGM_CONFIG_POWER_CAP_INDIVIDUAL,
            val: BLANK,
        },
        workloadPowerProfiles: [BLANK; DCGM_POWER_PROFILE_ARRAY_SIZE],
    }
}

/// The configuration a GPU has now.
fn current_config(e: &Engine, gpu: u32) -> dcgmConfig_v2 {
    if e.machine.cfg.faults.blank_structs {
        return blank_config(gpu);
    }
    let g = &e.machine.cfg.gpus[gpu as usize];
    let target = e.config_targets.get(&gpu);
    let mut c = blank_config(gpu);
    c.eccMode = 1;
    let mode = target.map_or(0, |t| t.computeMode);
    c.computeMode = if is_blank(mode) { 0 } else { mode };
    c.perfState.syncBoost = 0;
    c.perfState.targetClocks.memClock = g.mem_clock_mhz as u32;
    c.perfState.targetClocks.smClock = e.dynamics.app_sm_clock[gpu as usize] as u32;
    c.powerLimit.val = e.dynamics.power_limit_w[gpu as usize].round() as u32;
    c.workloadPowerProfiles = [0; DCGM_POWER_PROFILE_ARRAY_SIZE];
    c
}

/// Checks a requested configuration for one GPU: the errors it would cause, as
/// (field, status) pairs.
fn validate(e: &Engine, gpu: u32, req: &dcgmConfig_v2, power_w: u32) -> Vec<(u16, dcgmReturn_t)> {
    let g = &e.machine.cfg.gpus[gpu as usize];
    let mut errs = Vec::new();
    if !is_blank(req.eccMode) && req.eccMode != 1 {
        // ECC cannot be turned off on the simulated GPUs.
        errs.push((DCGM_FI_DEV_ECC_MODE, DCGM_ST_NOT_SUPPORTED));
    }
    if !is_blank(req.computeMode) && req.computeMode > 3 {
        errs.push((DCGM_FI_DEV_GPU_COMPUTE_MODE, DCGM_ST_BADPARAM));
    }
    let clocks = req.perfState.targetClocks;
    if !is_blank(clocks.memClock) && i64::from(clocks.memClock) != g.mem_clock_mhz {
        errs.push((DCGM_FI_DEV_APP_MEM_CLOCK, DCGM_ST_BADPARAM));
    }
    if !is_blank(clocks.smClock)
        && (clocks.smClock < 210 || i64::from(clocks.smClock) > g.max_sm_clock_mhz)
    {
        errs.push((DCGM_FI_DEV_APP_SM_CLOCK, DCGM_ST_BADPARAM));
    }
    if !is_blank(power_w) && (power_w < MIN_POWER_LIMIT_W || f64::from(power_w) > g.power_limit_w) {
        errs.push((
            DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS,
            DCGM_ST_BADPARAM,
        ));
    }
    errs
}

/// Applies a GPU's target configuration to the simulation.
fn apply(e: &mut Engine, gpu: u32) {
    let Some(t) = e.config_targets.get(&gpu).copied() else {
        return;
    };
    let i = gpu as usize;
    if !is_blank(t.perfState.targetClocks.smClock) {
        e.dynamics.app_sm_clock[i] = i64::from(t.perfState.targetClocks.smClock);
    }
    if !is_blank(t.powerLimit.val) {
        e.dynamics.power_limit_w[i] = f64::from(t.powerLimit.val);
    }
}

/// Records errors in a status object (if it exists).
fn record(status: dcgmStatus_t, errors: &[dcgmErrorInfo_t]) {
    if status == 0 || errors.is_empty() {
        return;
    }
    if let Some(list) = lock().statuses.get_mut(&status) {
        list.extend_from_slice(errors);
    }
}

/// A version-1 configuration as version 2, without workload power profiles (blank).
fn from_v1(c: &dcgmConfig_v1) -> dcgmConfig_v2 {
    dcgmConfig_v2 {
        version: dcgmConfig_version2,
        gpuId: c.gpuId,
        eccMode: c.eccMode,
        computeMode: c.computeMode,
        perfState: c.perfState,
        powerLimit: c.powerLimit,
        workloadPowerProfiles: [BLANK; DCGM_POWER_PROFILE_ARRAY_SIZE],
    }
}

/// A configuration in the version-1 layout (DCGM 3.3.9's): version 2 without the workload
/// power profiles.
fn to_v1(c: &dcgmConfig_v2) -> dcgmConfig_v1 {
    dcgmConfig_v1 {
        version: dcgmConfig_version1,
        gpuId: c.gpuId,
        eccMode: c.eccMode,
        computeMode: c.computeMode,
        perfState: c.perfState,
        powerLimit: c.powerLimit,
    }
}

/// # Safety
///
/// `pDeviceConfig` must be NULL or a versioned `dcgmConfig_v2`, or (for DCGM 3.3.9, when the
/// simulator speaks it) `_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmConfigSet(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    pDeviceConfig: *mut dcgmConfig_t,
    statusHandle: dcgmStatus_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let version = unsafe { version_word(pDeviceConfig, Struct::Config) }?;
        // SAFETY: the version word names the layout, which the caller allocated.
        let req = unsafe {
            if version == dcgmConfig_version2 {
                *pDeviceConfig
            } else {
                from_v1(&*pDeviceConfig.cast::<dcgmConfig_v1>())
            }
        };
        if !is_blank(req.powerLimit.val)
            && req.powerLimit.type_ != DCGM_CONFIG_POWER_CAP_INDIVIDUAL
            && req.powerLimit.type_ != DCGM_CONFIG_POWER_BUDGET_GROUP
        {
            return Err(DCGM_ST_BADPARAM);
        }
        let errors = with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdConfig)?;
            let gpus = e.group_gpus(groupId)?;
            if gpus.is_empty() {
                return Err(DCGM_ST_GROUP_IS_EMPTY);
            }
            let power_w = if is_blank(req.powerLimit.val)
                || req.powerLimit.type_ == DCGM_CONFIG_POWER_CAP_INDIVIDUAL
            {
                req.powerLimit.val
            } else {
                // A group budget is shared evenly.
                req.powerLimit.val / gpus.len() as u32
            };
            let mut errors = Vec::new();
            let mut failed = false;
            for &gpu in &gpus {
                let errs = validate(e, gpu, &req, power_w);
                if !errs.is_empty() {
                    failed = true;
                    errors.extend(errs.into_iter().map(|(field, status)| dcgmErrorInfo_t {
                        gpuId: gpu,
                        fieldId: field as i16,
                        status,
                    }));
                    continue;
                }
                let t = e
                    .config_targets
                    .entry(gpu)
                    .or_insert_with(|| blank_config(gpu));
                let set = |dst: &mut u32, v: u32| {
                    if !is_blank(v) {
                        *dst = v;
                    }
                };
                set(&mut t.eccMode, req.eccMode);
                set(&mut t.computeMode, req.computeMode);
                set(&mut t.perfState.syncBoost, req.perfState.syncBoost);
                set(
                    &mut t.perfState.targetClocks.memClock,
                    req.perfState.targetClocks.memClock,
                );
                set(
                    &mut t.perfState.targetClocks.smClock,
                    req.perfState.targetClocks.smClock,
                );
                if !is_blank(power_w) {
                    t.powerLimit = dcgmConfigPowerLimit_t {
                        type_: DCGM_CONFIG_POWER_CAP_INDIVIDUAL,
                        val: power_w,
                    };
                }
                apply(e, gpu);
            }
            // Sync boost is a setting of the group: libdcgm 4.6.0 wants two GPUs or more
            // (a failure of the call), then reports in the status list only that it is no
            // longer supported.
            if !is_blank(req.perfState.syncBoost) {
                let single = gpus.len() <= 1;
                failed |= single;
                errors.push(dcgmErrorInfo_t {
                    gpuId: BLANK,
                    fieldId: DCGM_FI_SYSTEM_GPU_SYNC_BOOST,
                    status: if single {
                        DCGM_ST_BADPARAM
                    } else {
                        DCGM_ST_NOT_SUPPORTED
                    },
                });
            }
            Ok((errors, failed))
        })?;
        let (errors, failed) = errors;
        record(statusHandle, &errors);
        if !failed {
            return Ok(());
        }
        // As libdcgm: the error every status shares, or a generic one.
        let first = errors.first().map_or(DCGM_ST_GENERIC_ERROR, |e| e.status);
        if errors.iter().all(|e| e.status == first) {
            Err(first)
        } else {
            Err(DCGM_ST_GENERIC_ERROR)
        }
    })
}

/// # Safety
///
/// `deviceConfigList` must be NULL or point to `count` configurations, the first with its
/// version set (2, or 1 for DCGM 3.3.9 when the simulator speaks it: the list is then one of
/// `dcgmConfig_v1`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmConfigGet(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    type_: dcgmConfigType_t,
    count: c_int,
    deviceConfigList: *mut dcgmConfig_t,
    statusHandle: dcgmStatus_t,
) -> dcgmReturn_t {
    let _ = statusHandle;
    guard(|| {
        if count <= 0 || (type_ != DCGM_CONFIG_TARGET_STATE && type_ != DCGM_CONFIG_CURRENT_STATE) {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: per this function's contract.
        let version = unsafe { version_word(deviceConfigList, Struct::Config) }?;
        let configs = with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdConfig)?;
            let gpus = e.group_gpus(groupId)?;
            Ok(gpus
                .iter()
                .take(count as usize)
                .map(|&gpu| {
                    if type_ == DCGM_CONFIG_TARGET_STATE {
                        e.config_targets
                            .get(&gpu)
                            .copied()
                            .unwrap_or_else(|| blank_config(gpu))
                    } else {
                        current_config(e, gpu)
                    }
                })
                .collect::<Vec<_>>())
        })?;
        // SAFETY: `count` configurations of the layout the version word names, per the
        // contract.
        unsafe {
            if version == dcgmConfig_version2 {
                let list = std::slice::from_raw_parts_mut(deviceConfigList, count as usize);
                list[..configs.len()].copy_from_slice(&configs);
            } else {
                let list = std::slice::from_raw_parts_mut(
                    deviceConfigList.cast::<dcgmConfig_v1>(),
                    count as usize,
                );
                for (dst, c) in list.iter_mut().zip(&configs) {
                    *dst = to_v1(c);
                }
            }
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmConfigEnforce(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    statusHandle: dcgmStatus_t,
) -> dcgmReturn_t {
    let _ = statusHandle;
    guard(|| {
        with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdConfig)?;
            for gpu in e.group_gpus(groupId)? {
                apply(e, gpu);
            }
            Ok(())
        })
    })
}

// ---------------------------------------------------------------------------------------------
// Status objects (process-wide, no connection needed)

/// # Safety
///
/// `statusHandle` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmStatusCreate(statusHandle: *mut dcgmStatus_t) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let h = unsafe { out(statusHandle) }?;
        let mut s = lock();
        let id = s.next_status.max(1);
        s.next_status = id + 1;
        s.statuses.insert(id, Vec::new());
        *h = id;
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmStatusDestroy(statusHandle: dcgmStatus_t) -> dcgmReturn_t {
    guard(|| {
        lock()
            .statuses
            .remove(&statusHandle)
            .map(|_| ())
            .ok_or(DCGM_ST_BADPARAM)
    })
}

/// # Safety
///
/// `count` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmStatusGetCount(
    statusHandle: dcgmStatus_t,
    count: *mut u32,
) -> dcgmReturn_t {
    guard(|| {
        let s = lock();
        let list = s.statuses.get(&statusHandle).ok_or(DCGM_ST_BADPARAM)?;
        // SAFETY: per this function's contract.
        let c = unsafe { out(count) }?;
        *c = list.len() as u32;
        Ok(())
    })
}

/// # Safety
///
/// `pDcgmErrorInfo` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmStatusPopError(
    statusHandle: dcgmStatus_t,
    pDcgmErrorInfo: *mut dcgmErrorInfo_t,
) -> dcgmReturn_t {
    guard(|| {
        let mut s = lock();
        let list = s.statuses.get_mut(&statusHandle).ok_or(DCGM_ST_BADPARAM)?;
        // SAFETY: per this function's contract.
        let dst = unsafe { out(pDcgmErrorInfo) }?;
        if list.is_empty() {
            return Err(DCGM_ST_NO_DATA);
        }
        *dst = list.remove(0);
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmStatusClear(statusHandle: dcgmStatus_t) -> dcgmReturn_t {
    guard(|| {
        lock()
            .statuses
            .get_mut(&statusHandle)
            .map(Vec::clear)
            .ok_or(DCGM_ST_BADPARAM)
    })
}

// ---------------------------------------------------------------------------------------------
// Workload power profiles

/// The simulated GPUs have no workload power profiles: not supported (after the usual checks).
///
/// # Safety
///
/// `workloadPowerProfile` must be NULL or a versioned `dcgmWorkloadPowerProfile_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmConfigSetWorkloadPowerProfile(
    pDcgmHandle: dcgmHandle_t,
    workloadPowerProfile: *mut dcgmWorkloadPowerProfile_t,
) -> dcgmReturn_t {
    guard_symbol("dcgmConfigSetWorkloadPowerProfile", || {
        // SAFETY: per this function's contract.
        let p = unsafe { versioned(workloadPowerProfile, &[dcgmWorkloadPowerProfile_version1]) }?;
        let group = p.groupId;
        with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdConfig)?;
            e.group_entities(group)?;
            Err(DCGM_ST_NOT_SUPPORTED)
        })
    })
}

/// The simulated GPUs have no workload power profiles: not supported.
///
/// # Safety
///
/// Both pointers must be NULL or versioned structs of their type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetDeviceWorkloadPowerProfileInfo(
    pDcgmHandle: dcgmHandle_t,
    gpuId: u32,
    profilesInfo: *mut dcgmWorkloadPowerProfileProfilesInfo_v1,
    profilesStatus: *mut dcgmDeviceWorkloadPowerProfilesStatus_v1,
) -> dcgmReturn_t {
    guard_symbol("dcgmGetDeviceWorkloadPowerProfileInfo", || {
        // SAFETY: per this function's contract.
        unsafe {
            versioned(
                profilesInfo,
                &[dcgmWorkloadPowerProfileProfilesInfo_version1],
            )?;
            versioned(
                profilesStatus,
                &[dcgmDeviceWorkloadPowerProfilesStatus_version1],
            )?;
        }
        with_engine(pDcgmHandle, |e| {
            if gpuId >= e.machine.gpu_count() {
                return Err(DCGM_ST_BADPARAM);
            }
            Err(DCGM_ST_NOT_SUPPORTED)
        })
    })
}

/// Names of the workload power profiles, indexed by profile id.
const PROFILE_NAMES: [&CStr; DCGM_POWER_PROFILE_MAX as usize] = [
    c"POWER_PROFILE_MAX_P",
    c"POWER_PROFILE_MAX_Q",
    c"POWER_PROFILE_COMPUTE",
    c"POWER_PROFILE_MEMORY_BOUND",
    c"POWER_PROFILE_NETWORK",
    c"POWER_PROFILE_BALANCED",
    c"POWER_PROFILE_LLM_INFERENCE",
    c"POWER_PROFILE_LLM_TRAINING",
    c"POWER_PROFILE_RBM",
    c"POWER_PROFILE_DCPCIE",
    c"POWER_PROFILE_HMMA_SPARSE",
    c"POWER_PROFILE_HMMA_DENSE",
    c"POWER_PROFILE_SYNC_BALANCED",
    c"POWER_PROFILE_HPC",
    c"POWER_PROFILE_MIG",
];

/// # Safety
///
/// `name` must be NULL or writable; the string written belongs to the library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmPowerProfileIdToName(
    id: dcgmPowerProfileType_t,
    name: *mut *const c_char,
) -> dcgmReturn_t {
    guard_symbol("dcgmPowerProfileIdToName", || {
        // SAFETY: per this function's contract.
        let n = unsafe { out(name) }?;
        *n = PROFILE_NAMES
            .get(id as usize)
            .ok_or(DCGM_ST_BADPARAM)?
            .as_ptr();
        Ok(())
    })
}
