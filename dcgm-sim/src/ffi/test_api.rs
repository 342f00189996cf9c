//! DCGM's test API: fake entities, value injection, the cache-manager view of a field, cache
//! and telemetry control, single-field watches, forced NVLink states and MIG entity requests.
//!
//! Return codes follow libdcgm 4.6 as measured with its embedded engine. Where the simulator
//! differs on purpose, the function's comment says so.

use std::ffi::{c_int, c_void};

use dcgm_sys::*;

use super::values::{fill_v1, since_outputs};
use super::{guard, guard_symbol, out, versioned};
use crate::cache::{Watch, Watcher, key};
use crate::engine::{Engine, now_us};
use crate::model::Event;
use crate::sampling::Read;
use crate::sim::with_engine;
use crate::sim_value::SimValue;

/// Retention of a cache entry that holds only injected samples (DCGM's default, 30 s).
const DEFAULT_MAX_AGE_US: i64 = 30_000_000;

/// Adds a fake GPU to an engine: to the node and to the model's per-GPU state. As libdcgm,
/// its ECC mode reads enabled at once (libdcgm injects it, so that policies work on it).
fn add_fake_gpu(e: &mut Engine) -> Option<u32> {
    let id = e.machine.add_fake_gpu()?;
    let g = &e.machine.cfg.gpus[id as usize];
    e.dynamics.power_limit_w.push(g.power_limit_w);
    e.dynamics.app_sm_clock.push(g.max_sm_clock_mhz);
    let now = now_us();
    e.cache
        .watches
        .entry(key(DCGM_FE_GPU, id, DCGM_FI_DEV_ECC_MODE))
        .or_insert_with(|| Watch::new(now, DEFAULT_MAX_AGE_US, DEFAULT_MAX_AGE_US, 0))
        .inject(now, SimValue::Int(1));
    Some(id)
}

/// Creates one fake entity; its new id, or why not.
fn create_one(e: &mut Engine, info: &dcgmMigHierarchyInfo_t) -> Result<u32, dcgmReturn_t> {
    match info.entity.entityGroupId {
        DCGM_FE_GPU => add_fake_gpu(e).ok_or(DCGM_ST_GENERIC_ERROR),
        DCGM_FE_SWITCH => Ok(e.machine.add_fake_switch()),
        DCGM_FE_GPU_I => e
            .machine
            .add_fake_gpu_instance(info.parent.entityId)
            .ok_or(DCGM_ST_GENERIC_ERROR),
        DCGM_FE_GPU_CI => e
            .machine
            .mig
            .add_fake_compute_instance(info.parent.entityId)
            .ok_or(DCGM_ST_GENERIC_ERROR),
        // DCGM creates fake CPUs in its sysmon module, which runs where the node has CPUs;
        // without, the answer of a libdcgm whose sysmon module cannot load.
        DCGM_FE_CPU | DCGM_FE_CPU_CORE if e.machine.cfg.cpus.is_empty() => {
            Err(DCGM_ST_MODULE_NOT_LOADED)
        }
        DCGM_FE_CPU => e.machine.add_fake_cpu(),
        DCGM_FE_CPU_CORE => e
            .machine
            .cpus
            .add_fake_core(info.parent.entityGroupId, info.parent.entityId),
        _ => Err(DCGM_ST_NOT_SUPPORTED),
    }
}

/// Creates fake GPUs, NvSwitches and MIG instances; writes each new id into
/// `entityList[i].entity.entityId`. Stops at the first failure, keeping what it created (the
/// failed entry's id becomes `u32::MAX` for a missing parent).
///
/// # Safety
///
/// `createFakeEntities` must be NULL or a versioned `dcgmCreateFakeEntities_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmCreateFakeEntities(
    pDcgmHandle: dcgmHandle_t,
    createFakeEntities: *mut dcgmCreateFakeEntities_v2,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let req = unsafe { versioned(createFakeEntities, &[dcgmCreateFakeEntities_version2]) }?;
        if req.numToCreate as usize > req.entityList.len() {
            return Err(DCGM_ST_BADPARAM);
        }
        with_engine(pDcgmHandle, |e| {
            for info in req.entityList.iter_mut().take(req.numToCreate as usize) {
                match create_one(e, info) {
                    Ok(id) => info.entity.entityId = id,
                    Err(rc) => {
                        if rc == DCGM_ST_GENERIC_ERROR {
                            info.entity.entityId = u32::MAX;
                        }
                        return Err(rc);
                    }
                }
            }
            Ok(())
        })
    })
}

/// The simulated value of an injected C value, or `DCGM_ST_BADPARAM` when its type is not
/// the field's own (only int64, double and string fields take injections).
fn injected_value(v: &dcgmInjectFieldValue_t) -> Result<SimValue, dcgmReturn_t> {
    let info = match v.fieldId {
        0 => None,
        id => field_by_id(id),
    }
    .ok_or(DCGM_ST_BADPARAM)?;
    let ty = u8::try_from(v.fieldType).map_err(|_| DCGM_ST_BADPARAM)?;
    if ty != info.field_type {
        return Err(DCGM_ST_BADPARAM);
    }
    // The union member read is the one the checked type names; every bit pattern is a valid
    // integer, float or byte array.
    Ok(match ty {
        // SAFETY: as said above.
        DCGM_FT_INT64 => SimValue::Int(unsafe { v.value.i64_ }),
        // SAFETY: as said above.
        DCGM_FT_DOUBLE => SimValue::Dbl(unsafe { v.value.dbl }),
        DCGM_FT_STRING => {
            // SAFETY: as above; the string may use the whole 4096-byte union.
            let bytes = unsafe { &v.value.blob };
            SimValue::Str(super::read_str(bytes))
        }
        _ => return Err(DCGM_ST_BADPARAM),
    })
}

/// The scripted-event kind an injected field stands for, so that policy and health see an
/// injected value as they see a scripted incident, and whether the field is a running total
/// (the event is then the increase over the total so far).
fn event_kind(field: u16) -> Option<(&'static str, bool)> {
    match field {
        DCGM_FI_DEV_XID_ERROR => Some(("xid", false)),
        DCGM_FI_DEV_PCIE_REPLAY_TOTAL => Some(("pcie_replay", true)),
        DCGM_FI_DEV_ECC_DBE_VOL_TOTAL => Some(("dbe", true)),
        _ => None,
    }
}

/// Records the event an injected value of a GPU stands for, if any.
fn record_event(e: &mut Engine, gpu: u32, field: u16, value: i64, ts: i64) {
    let Some((kind, total)) = event_kind(field) else {
        return;
    };
    let value = if total {
        value - e.dynamics.event_total(gpu, kind, ts, false)
    } else {
        value
    };
    if total && value <= 0 {
        return;
    }
    let ev = Event {
        ts,
        gpu,
        kind: kind.into(),
        value,
        known_at: now_us(),
        ends: None,
    };
    let at = e.dynamics.events.partition_point(|x| x.ts <= ts);
    e.dynamics.events.insert(at, ev);
}

fn inject(
    handle: dcgmHandle_t,
    group: dcgm_field_entity_group_t,
    id: dcgm_field_eid_t,
    v: *mut dcgmInjectFieldValue_t,
) -> Result<(), dcgmReturn_t> {
    // SAFETY: the exported functions' contract: NULL or a versioned value.
    let v = unsafe { versioned(v, &[dcgmInjectFieldValue_version1]) }?;
    with_engine(handle, |e| {
        if field_by_id(v.fieldId).is_none() || !e.machine.exists(group, id) {
            return Err(DCGM_ST_BADPARAM);
        }
        let value = injected_value(v)?;
        let ts = if v.ts <= 0 { now_us() } else { v.ts };
        if let (DCGM_FE_GPU, SimValue::Int(n)) = (group, &value) {
            record_event(e, id, v.fieldId, *n, ts);
        }
        let now = now_us();
        e.cache
            .watches
            .entry(key(group, id, v.fieldId))
            .or_insert_with(|| Watch::new(now, DEFAULT_MAX_AGE_US, DEFAULT_MAX_AGE_US, 0))
            .inject(ts, value);
        Ok(())
    })
}

/// Injects a value of a field of a GPU. The value is what the next reads return, with its
/// timestamp (0 or less: now); no watch is needed. The model stops sampling that (GPU, field)
/// until `dcgmEmptyCache`, so the injected value stays the latest (libdcgm lets newer samples
/// of a watched field of a real GPU replace it). An injected XID, PCIe replay total or
/// volatile double-bit ECC total is also an incident for policy callbacks and health checks,
/// as a scripted event is.
///
/// # Safety
///
/// `dcgmInjectFieldValue` must be NULL or a versioned `dcgmInjectFieldValue_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmInjectFieldValue(
    pDcgmHandle: dcgmHandle_t,
    gpuId: u32,
    dcgmInjectFieldValue: *mut dcgmInjectFieldValue_t,
) -> dcgmReturn_t {
    guard(|| inject(pDcgmHandle, DCGM_FE_GPU, gpuId, dcgmInjectFieldValue))
}

/// Injects a value of a field of any entity, as [`dcgmInjectFieldValue`] does for GPUs.
///
/// # Safety
///
/// As for [`dcgmInjectFieldValue`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmInjectEntityFieldValue(
    pDcgmHandle: dcgmHandle_t,
    entityGroupId: dcgm_field_entity_group_t,
    entityId: dcgm_field_eid_t,
    dcgmInjectFieldValue: *mut dcgmInjectFieldValue_t,
) -> dcgmReturn_t {
    guard(|| inject(pDcgmHandle, entityGroupId, entityId, dcgmInjectFieldValue))
}

/// The cache manager's view of one (entity, field). Like libdcgm, it accepts any version in
/// the caller's struct (the client library sets version 4 itself).
///
/// # Safety
///
/// `fieldInfo` must be NULL or point to a `dcgmCacheManagerFieldInfo_v4_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetCacheManagerFieldInfo(
    pDcgmHandle: dcgmHandle_t,
    fieldInfo: *mut dcgmCacheManagerFieldInfo_v4_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let fi = unsafe { out(fieldInfo) }?;
        if fi.fieldId == 0 || field_by_id(fi.fieldId).is_none() {
            return Err(DCGM_ST_BADPARAM);
        }
        let (group, id, field) = (fi.entityGroupId, fi.entityId, fi.fieldId);
        with_engine(pDcgmHandle, |e| {
            let now = now_us();
            // Brings the entry up to date first, as a read would.
            let _ = e.latest(group, id, field, now);
            let w = e
                .cache
                .watches
                .get(&key(group, id, field))
                .ok_or(DCGM_ST_NOT_WATCHED)?;
            let mut info: dcgmCacheManagerFieldInfo_v4_t = zeroed();
            info.version = dcgmCacheManagerFieldInfo_version4;
            info.entityGroupId = group;
            info.entityId = id;
            info.fieldId = field;
            let watched = w.is_watched();
            info.flags = if watched { DCGM_CMI_F_WATCHED } else { 0 };
            info.oldestTimestamp = w.samples.front().map_or(0, |s| s.ts);
            info.newestTimestamp = w.samples.back().map_or(0, |s| s.ts);
            info.monitorIntervalUsec = if watched { w.freq_us } else { 0 };
            info.maxAgeUsec = w.max_age_us;
            info.numSamples = i32::try_from(w.samples.len()).unwrap_or(i32::MAX);
            let n = w.watchers.len().min(DCGM_CM_FIELD_INFO_NUM_WATCHERS);
            info.numWatchers = n as i32;
            for (slot, watcher) in info.watchers.iter_mut().zip(&w.watchers) {
                *slot = dcgm_cm_field_info_watcher_t {
                    watcherType: watcher.id.kind,
                    connectionId: watcher.id.connection,
                    monitorIntervalUsec: watcher.freq_us,
                    maxAgeUsec: watcher.max_age_us,
                };
            }
            *fi = info;
            Ok(())
        })
    })
}

/// Drops every cached sample and every watch (as libdcgm does); nothing is sampled afterwards
/// until something is watched again. The emptied entries stay, unwatched, as in libdcgm.
/// Injected XIDs stay in the incident history.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmEmptyCache(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard_symbol("dcgmEmptyCache", || {
        with_engine(pDcgmHandle, |e| {
            e.empty_cache();
            Ok(())
        })
    })
}

/// Pauses the core and the loaded modules, as libdcgm does (`dcgmModuleGetStatuses` reports
/// them paused); sampling goes on, since no diagnostic competes with it in the simulator.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmPauseTelemetryForDiag(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard(|| {
        with_engine(pDcgmHandle, |e| {
            e.modules.pause();
            Ok(())
        })
    })
}

/// Undoes [`dcgmPauseTelemetryForDiag`].
#[unsafe(no_mangle)]
pub extern "C" fn dcgmResumeTelemetryForDiag(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard(|| {
        with_engine(pDcgmHandle, |e| {
            e.modules.resume();
            Ok(())
        })
    })
}

/// Marks the modules of the mask reloadable and writes back the mask of the modules that
/// were loaded (see [`crate::module_state::ModuleTable::mark_reloadable`]).
///
/// # Safety
///
/// `msg` must be NULL or a versioned `dcgmModulesReloadable_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmMarkModulesReloadable(
    pDcgmHandle: dcgmHandle_t,
    msg: *mut dcgmModulesReloadable_v1,
) -> dcgmReturn_t {
    guard_symbol("dcgmMarkModulesReloadable", || {
        // SAFETY: per this function's contract.
        let m = unsafe { versioned(msg, &[dcgmModulesReloadable_version1]) }?;
        m.moduleMask = with_engine(pDcgmHandle, |e| Ok(e.modules.mark_reloadable(m.moduleMask)))?;
        Ok(())
    })
}

/// Starts sampling one field of one GPU (a global field is sampled for that GPU too).
pub(crate) fn watch_one(
    e: &mut Engine,
    gpu: c_int,
    field: u16,
    freq_us: i64,
    max_age_s: f64,
    max_samples: c_int,
) -> Result<(), dcgmReturn_t> {
    let gpu = u32::try_from(gpu).map_err(|_| DCGM_ST_BADPARAM)?;
    if !e.machine.exists(DCGM_FE_GPU, gpu) {
        return Err(DCGM_ST_GENERIC_ERROR);
    }
    let now = now_us();
    let max_age_us = if max_age_s > 0.0 {
        (max_age_s * 1e6) as i64
    } else {
        0
    };
    let max_samples = max_samples.max(0) as usize;
    // The client's watcher of the entry: the same one its group watches use.
    let id = e.client();
    e.cache
        .watches
        .entry(key(DCGM_FE_GPU, gpu, field))
        .or_insert_with(|| Watch::new(now, freq_us, max_age_us, max_samples))
        .add_watcher(
            now,
            Watcher {
                id,
                freq_us,
                max_age_us,
                max_samples,
            },
        );
    Ok(())
}

/// Starts sampling one field of one GPU (interval in µs, age in s). A negative GPU id is
/// `DCGM_ST_BADPARAM` here; libdcgm 4.6 crashes on it.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmWatchFieldValue(
    pDcgmHandle: dcgmHandle_t,
    gpuId: c_int,
    fieldId: u16,
    updateFreq: i64,
    maxKeepAge: f64,
    maxKeepSamples: c_int,
) -> dcgmReturn_t {
    guard(|| {
        if fieldId == 0 || field_by_id(fieldId).is_none() || updateFreq <= 0 {
            return Err(DCGM_ST_BADPARAM);
        }
        if maxKeepSamples <= 0 && maxKeepAge <= 0.0 {
            return Err(DCGM_ST_BADPARAM);
        }
        with_engine(pDcgmHandle, |e| {
            watch_one(e, gpuId, fieldId, updateFreq, maxKeepAge, maxKeepSamples)
        })
    })
}

/// Stops the `dcgmWatchFieldValue` watch of one field of one GPU. The samples stay cached
/// (libdcgm keeps them even when `clearCache` is set).
#[unsafe(no_mangle)]
pub extern "C" fn dcgmUnwatchFieldValue(
    pDcgmHandle: dcgmHandle_t,
    gpuId: c_int,
    fieldId: u16,
    clearCache: c_int,
) -> dcgmReturn_t {
    let _ = clearCache;
    guard(|| {
        if fieldId == 0 || field_by_id(fieldId).is_none() {
            return Err(DCGM_ST_BADPARAM);
        }
        let gpu = u32::try_from(gpuId).map_err(|_| DCGM_ST_BADPARAM)?;
        with_engine(pDcgmHandle, |e| {
            if !e.machine.exists(DCGM_FE_GPU, gpu) {
                return if crate::personality::unwatch_accepts_unknown_gpu() {
                    Ok(())
                } else {
                    Err(DCGM_ST_BADPARAM)
                };
            }
            let id = e.client();
            let w = e
                .cache
                .watches
                .get_mut(&key(DCGM_FE_GPU, gpu, fieldId))
                .ok_or(DCGM_ST_NOT_WATCHED)?;
            w.remove_watcher(id);
            Ok(())
        })
    })
}

/// The reads of `dcgmGetFieldValuesSince`, and the error that ended them early, if any.
fn collect_since(
    e: &mut Engine,
    group: dcgmGpuGrp_t,
    since: i64,
    fields: &[u16],
    now: i64,
) -> Result<(Vec<Read>, Option<dcgmReturn_t>), dcgmReturn_t> {
    let entities = e.group_entities(group)?;
    if entities
        .iter()
        .any(|p| p.entityGroupId != DCGM_FE_GPU && p.entityGroupId != DCGM_FE_NONE)
    {
        return Err(DCGM_ST_NOT_SUPPORTED);
    }
    let mut reads = Vec::new();
    for p in &entities {
        for &f in fields {
            if field_by_id(f).is_none() {
                return Ok((reads, Some(DCGM_ST_UNKNOWN_FIELD)));
            }
            // Brings the entry up to date.
            let _ = e.latest(p.entityGroupId, p.entityId, f, now);
            let Some(w) = e.cache.watches.get(&key(p.entityGroupId, p.entityId, f)) else {
                return Ok((reads, Some(DCGM_ST_NOT_WATCHED)));
            };
            let read = |status, ts, value| Read {
                group: p.entityGroupId,
                id: p.entityId,
                field: f,
                status,
                ts,
                value,
            };
            let before = reads.len();
            for s in w.samples.iter().filter(|s| s.ts >= since && s.ts <= now) {
                reads.push(read(DCGM_ST_OK, s.ts, s.value.clone()));
            }
            if reads.len() == before {
                reads.push(read(DCGM_ST_NO_DATA, 0, SimValue::Blank));
            }
        }
    }
    Ok((reads, None))
}

/// Samples of a list of fields of a group's GPUs since a time, in time order per (GPU,
/// field), one callback per value. A field without cache entry ends the call with
/// `DCGM_ST_NOT_WATCHED` after the values before it were delivered, as in libdcgm.
///
/// # Safety
///
/// `fieldIds` must hold `numFieldIds` ids and `nextSinceTimestamp` be writable; `enumCB` is
/// called with pointers valid only during the call.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dcgmGetFieldValuesSince(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    sinceTimestamp: i64,
    fieldIds: *mut u16,
    numFieldIds: c_int,
    nextSinceTimestamp: *mut i64,
    enumCB: dcgmFieldValueEnumeration_f,
    userData: *mut c_void,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let (cb, next) = unsafe { since_outputs(enumCB, nextSinceTimestamp) }?;
        if fieldIds.is_null() || numFieldIds < 1 {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: the caller provides `numFieldIds` readable ids.
        let fields = unsafe { std::slice::from_raw_parts(fieldIds, numFieldIds as usize) };
        let now = now_us();
        let (reads, failed) = with_engine(pDcgmHandle, |e| {
            collect_since(e, groupId, sinceTimestamp, fields, now)
        })?;
        // The callbacks run without the simulator lock.
        for r in &reads {
            let mut v: dcgmFieldValue_v1 = zeroed();
            fill_v1(&mut v, r);
            // SAFETY: the client's callback, called as its type says, with one valid value.
            if unsafe { cb(r.id, &mut v, 1, userData) } != 0 {
                return Ok(());
            }
        }
        match failed {
            Some(rc) => Err(rc),
            None => {
                *next = now + 1;
                Ok(())
            }
        }
    })
}

/// Forces the state a link of a GPU or NvSwitch reports in `dcgmGetNvLinkLinkStatus`. Like
/// libdcgm, a well-formed request always returns OK; a request for an entity or link that
/// does not exist changes nothing.
///
/// # Safety
///
/// `linkState` must be NULL or a versioned `dcgmSetNvLinkLinkState_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmSetEntityNvLinkLinkState(
    pDcgmHandle: dcgmHandle_t,
    linkState: *mut dcgmSetNvLinkLinkState_v1,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let s = unsafe { versioned(linkState, &[dcgmSetNvLinkLinkState_version1]) }?;
        let (group, id, link, state) = (s.entityGroupId, s.entityId, s.linkId, s.linkState);
        with_engine(pDcgmHandle, |e| {
            let links = match group {
                DCGM_FE_GPU => DCGM_NVLINK_MAX_LINKS_PER_GPU as u32,
                DCGM_FE_SWITCH => DCGM_NVLINK_MAX_LINKS_PER_NVSWITCH as u32,
                _ => 0,
            };
            if e.machine.exists(group, id) && link < links && state <= DcgmNvLinkLinkStateUp {
                e.machine.link_states.insert((group, id, link), state);
            }
            Ok(())
        })
    })
}

/// Creates a MIG GPU instance (on GPU `parentId`) or compute instance (in GPU instance
/// entity `parentId`) in the simulated driver, as libdcgm 4.6.0 asks NVML to (see
/// `crate::mig` for the profiles, the errors and the sources). The new instance shows in the
/// hierarchy, the entity lists and groups at once, unless `flags` holds
/// `DCGM_MIG_RECONFIG_DELAY_PROCESSING` (then at the next request without it). An unknown
/// `createOption` is accepted and does nothing, as in libdcgm.
///
/// # Safety
///
/// `cme` must be NULL or a versioned `dcgmCreateMigEntity_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmCreateMigEntity(
    pDcgmHandle: dcgmHandle_t,
    cme: *mut dcgmCreateMigEntity_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let c = unsafe { versioned(cme, &[dcgmCreateMigEntity_version1]) }?;
        let gi_profiles = DcgmMigProfileGpuInstanceSlice1..=DcgmMigProfileGpuInstanceSlice1Rev2;
        let ci_profiles =
            DcgmMigProfileComputeInstanceSlice1..=DcgmMigProfileComputeInstanceSlice1Rev1;
        let (gi, ci) = (
            c.createOption == DcgmMigCreateGpuInstance,
            c.createOption == DcgmMigCreateComputeInstance,
        );
        if (gi && !gi_profiles.contains(&c.profile)) || (ci && !ci_profiles.contains(&c.profile)) {
            return Err(DCGM_ST_BADPARAM);
        }
        let (parent, profile, flags) = (c.parentId, c.profile, c.flags);
        with_engine(pDcgmHandle, |e| {
            if gi {
                let index = profile - DcgmMigProfileGpuInstanceSlice1;
                e.machine
                    .mig
                    .create_gpu_instance(&e.machine.cfg.gpus, parent, index, flags)
            } else if ci {
                let index = profile - DcgmMigProfileComputeInstanceSlice1;
                e.machine
                    .mig
                    .create_compute_instance(&e.machine.cfg.gpus, parent, index, flags)
            } else {
                Ok(())
            }
        })
    })
}

/// Deletes a MIG GPU instance or compute instance from the simulated driver, as libdcgm
/// 4.6.0 does (`crate::mig`): an unknown one is `DCGM_ST_INSTANCE_NOT_FOUND` /
/// `DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND`, a GPU instance that still has compute instances or
/// a compute instance a process runs in `DCGM_ST_NVML_ERROR` (NVML's `IN_USE`). `flags` as
/// for [`dcgmCreateMigEntity`].
///
/// # Safety
///
/// `dme` must be NULL or a versioned `dcgmDeleteMigEntity_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmDeleteMigEntity(
    pDcgmHandle: dcgmHandle_t,
    dme: *mut dcgmDeleteMigEntity_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let d = unsafe { versioned(dme, &[dcgmDeleteMigEntity_version1]) }?;
        let (group, id, flags) = (d.entityGroupId, d.entityId, d.flags);
        if !matches!(group, DCGM_FE_GPU_I | DCGM_FE_GPU_CI) {
            return Err(DCGM_ST_BADPARAM);
        }
        if id as usize >= DCGM_MAX_INSTANCES {
            return Err(DCGM_ST_BADPARAM);
        }
        with_engine(pDcgmHandle, |e| {
            if group == DCGM_FE_GPU_I {
                e.machine
                    .mig
                    .delete_gpu_instance(&e.machine.cfg.gpus, id, flags)
            } else {
                e.machine
                    .mig
                    .delete_compute_instance(&e.machine.cfg.gpus, id, flags)
            }
        })
    })
}
