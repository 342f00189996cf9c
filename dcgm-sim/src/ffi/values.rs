//! Watches and value reads.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};

use dcgm_sys::*;

use super::{guard, out};
use crate::cache::{Watch, Watcher, WatcherId, key, unkey};
use crate::engine::{Engine, now_us, with_engine};
use crate::model::{SimValue, sample};

/// A value read from the cache, before it is written into a C struct.
#[derive(Debug, Clone)]
pub struct Read {
    pub group: u32,
    pub id: u32,
    pub field: u16,
    pub status: dcgmReturn_t,
    pub ts: i64,
    pub value: SimValue,
}

/// The value of a field for an entity at `ts`, with the configured faults applied.
pub fn generate(e: &Engine, group: u32, id: u32, field: u16, ts: i64) -> SimValue {
    generate_in(&e.machine, &e.dynamics, group, id, field, ts)
}

fn generate_in(
    m: &crate::machine::Machine,
    d: &crate::model::Dynamics,
    group: u32,
    id: u32,
    field: u16,
    ts: i64,
) -> SimValue {
    let f = &m.cfg.faults;
    if f.unsupported_fields.contains(&field) {
        return SimValue::NotSupported;
    }
    if f.blank_fields.contains(&field) {
        return SimValue::Blank;
    }
    // Without the driver (`dcgmDetachDriver`), a GPU and what belongs to it read blank.
    if m.gpu_of(group, id)
        .is_some_and(|g| m.driver.gpu_detached_at(g, ts))
    {
        return SimValue::Blank;
    }
    // A GPU that stopped answering (a `lost` event) reads blank.
    if group == DCGM_FE_GPU && d.held_event(id, "lost", ts).is_some() {
        return SimValue::Blank;
    }
    sample(m, d, group, id, field, ts)
}

/// Whether the cache samples an entity: not a fake GPU (nor what belongs to one), which has no
/// device behind it, so that, as in libdcgm, it holds only what is injected.
fn sampled_entity(m: &crate::machine::Machine, group: u32, id: u32) -> bool {
    m.gpu_of(group, id)
        .is_none_or(|gpu| !m.fake_gpus.contains(&gpu))
}

/// Brings one cache entry up to date (AUTO mode only: MANUAL waits for dcgmUpdateAllFields).
fn advance(e: &mut Engine, k: u64, now: i64) {
    if e.mode != DCGM_OPERATION_MODE_AUTO {
        return;
    }
    let (g, id, f) = unkey(k);
    if !sampled_entity(&e.machine, g, id) {
        return;
    }
    // Borrow the cache and the model separately: no remove/re-insert of the entry.
    let Engine {
        cache,
        machine,
        dynamics,
        ..
    } = e;
    if let Some(w) = cache.watches.get_mut(&k).filter(|w| w.is_watched()) {
        w.advance(now, |ts| generate_in(machine, dynamics, g, id, f, ts));
    }
}

/// `dcgmUpdateAllFields`: a fresh sample of every watched field that is due (its fastest
/// watch interval has passed since its newest sample).
pub fn update_all(e: &mut Engine) {
    let now = now_us();
    let keys: Vec<u64> = e.cache.watches.keys().copied().collect();
    for k in keys {
        advance(e, k, now);
        let (g, id, f) = unkey(k);
        if !sampled_entity(&e.machine, g, id) || e.cache.watches.get(&k).is_none_or(|w| !w.due(now))
        {
            continue;
        }
        let v = generate(e, g, id, f, now);
        if let Some(w) = e.cache.watches.get_mut(&k) {
            w.force(now, v);
        }
    }
}

/// The latest cached value of one (entity, field).
pub fn latest(e: &mut Engine, group: u32, id: u32, field: u16, now: i64) -> Read {
    let mut r = Read {
        group,
        id,
        field,
        status: DCGM_ST_OK,
        ts: 0,
        value: SimValue::Blank,
    };
    if field_by_id(field).is_none() {
        r.status = DCGM_ST_UNKNOWN_FIELD;
        return r;
    }
    if !e.machine.exists(group, id) {
        // libdcgm 4.6.0 has no cache entry for an unknown entity: "not watched".
        r.status = DCGM_ST_NOT_WATCHED;
        return r;
    }
    let k = key(group, id, field);
    advance(e, k, now);
    match e.cache.watches.get(&k) {
        None => r.status = DCGM_ST_NOT_WATCHED,
        Some(w) => match w.samples.back() {
            // Watched but not sampled yet, or an entry left empty by an unwatch.
            None if w.is_watched() => r.status = DCGM_ST_NO_DATA,
            None => r.status = DCGM_ST_NOT_WATCHED,
            Some(s) => {
                r.ts = s.ts;
                r.value = s.value.clone();
            }
        },
    }
    r
}

/// Writes a read into a C field value.
pub fn fill_v1(dst: &mut dcgmFieldValue_v1, r: &Read) {
    dst.version = dcgmFieldValue_version1;
    dst.fieldId = r.field;
    dst.ts = r.ts;
    let (ty, status) = write_value(&mut dst.value, r);
    dst.fieldType = u16::from(ty);
    dst.status = status;
}

/// Writes a read into a C field value with its entity.
pub fn fill_v2(dst: &mut dcgmFieldValue_v2, r: &Read) {
    dst.version = dcgmFieldValue_version2;
    dst.entityGroupId = r.group;
    dst.entityId = r.id;
    dst.fieldId = r.field;
    dst.unused = 0;
    dst.ts = r.ts;
    let (ty, status) = write_value(&mut dst.value, r);
    dst.fieldType = u16::from(ty);
    dst.status = status;
}

fn write_value(dst: &mut dcgmFieldValue_v1__bindgen_ty_1, r: &Read) -> (u8, dcgmReturn_t) {
    let ty = field_by_id(r.field).map_or(DCGM_FT_INT64, |f| f.field_type);
    let mut status = r.status;
    let blank_kind = match &r.value {
        SimValue::NotSupported => Some(2),
        SimValue::Blank => Some(0),
        _ => None,
    };
    match (&r.value, blank_kind) {
        (SimValue::Int(v), _) => dst.i64_ = *v,
        (SimValue::Dbl(v), _) => dst.dbl = *v,
        (SimValue::Str(s), _) => write_c(dst, s.as_bytes()),
        (SimValue::Blob(b), _) => {
            let n = b.len().min(DCGM_MAX_BLOB_LENGTH);
            // SAFETY: writing plain bytes into the union's byte array.
            let blob = unsafe { &mut dst.blob };
            for (d, s) in blob.iter_mut().zip(&b[..n]) {
                *d = *s as std::ffi::c_char;
            }
        }
        (_, Some(k)) => match ty {
            DCGM_FT_DOUBLE => dst.dbl = DCGM_FP64_BLANK + f64::from(k),
            DCGM_FT_STRING => write_c(
                dst,
                if k == 2 {
                    DCGM_STR_NOT_SUPPORTED
                } else {
                    DCGM_STR_BLANK
                }
                .as_bytes(),
            ),
            DCGM_FT_BINARY => {
                if status == DCGM_ST_OK {
                    status = if k == 2 {
                        DCGM_ST_NOT_SUPPORTED
                    } else {
                        DCGM_ST_NO_DATA
                    };
                }
            }
            _ => dst.i64_ = DCGM_INT64_BLANK + i64::from(k),
        },
        _ => dst.i64_ = DCGM_INT64_BLANK,
    }
    (ty, status)
}

fn write_c(dst: &mut dcgmFieldValue_v1__bindgen_ty_1, s: &[u8]) {
    // SAFETY: writing plain bytes into the union's string array.
    let buf = unsafe { &mut dst.str_ };
    let n = s.len().min(buf.len() - 1);
    for (d, b) in buf.iter_mut().zip(&s[..n]) {
        *d = *b as std::ffi::c_char;
    }
    buf[n] = 0;
}

thread_local! {
    static BUF: RefCell<Vec<dcgmFieldValue_v1>> = const { RefCell::new(Vec::new()) };
}

/// Delivers reads to a client callback, one call per entity run, outside the lock.
fn deliver(reads: &[Read], mut call: impl FnMut(u32, u32, *mut dcgmFieldValue_v1, c_int) -> c_int) {
    BUF.with(|b| {
        let mut buf = b.borrow_mut();
        let mut i = 0;
        while i < reads.len() {
            let (g, id) = (reads[i].group, reads[i].id);
            let mut j = i;
            while j < reads.len() && reads[j].group == g && reads[j].id == id {
                j += 1;
            }
            let n = j - i;
            while buf.len() < n {
                buf.push(dcgm_sys::zeroed());
            }
            for (dst, r) in buf.iter_mut().zip(&reads[i..j]) {
                fill_v1(dst, r);
            }
            if call(g, id, buf.as_mut_ptr(), n as c_int) < 0 {
                return;
            }
            i = j;
        }
    });
}

fn collect_latest(
    handle: dcgmHandle_t,
    group: dcgmGpuGrp_t,
    fg: dcgmFieldGrp_t,
    gpus_only: bool,
) -> Result<Vec<Read>, dcgmReturn_t> {
    with_engine(handle, |e| {
        let entities = e.group_entities(group)?;
        if gpus_only && entities.iter().any(|p| p.entityGroupId != DCGM_FE_GPU) {
            return Err(DCGM_ST_NOT_SUPPORTED);
        }
        if entities.is_empty() {
            return Err(DCGM_ST_GROUP_IS_EMPTY);
        }
        let fields = e
            .field_group(fg)
            .map_err(|_| DCGM_ST_NO_DATA)?
            .fields
            .clone();
        let now = now_us();
        let mut out = Vec::with_capacity(entities.len() * fields.len());
        for p in &entities {
            for &f in &fields {
                out.push(latest(e, p.entityGroupId, p.entityId, f, now));
            }
        }
        Ok(out)
    })
}

/// # Safety
///
/// `enumCB` is called with pointers valid only during the call; `userData` is passed through.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetLatestValues(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    fieldGroupId: dcgmFieldGrp_t,
    enumCB: dcgmFieldValueEnumeration_f,
    userData: *mut c_void,
) -> dcgmReturn_t {
    guard(|| {
        let cb = enumCB.ok_or(DCGM_ST_BADPARAM)?;
        let reads = collect_latest(pDcgmHandle, groupId, fieldGroupId, true)?;
        // SAFETY: the client's callback, called as its type says.
        deliver(&reads, |_, id, v, n| unsafe { cb(id, v, n, userData) });
        Ok(())
    })
}

/// # Safety
///
/// As for [`dcgmGetLatestValues`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetLatestValues_v2(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    fieldGroupId: dcgmFieldGrp_t,
    enumCB: dcgmFieldValueEntityEnumeration_f,
    userData: *mut c_void,
) -> dcgmReturn_t {
    guard(|| {
        let cb = enumCB.ok_or(DCGM_ST_BADPARAM)?;
        let reads = collect_latest(pDcgmHandle, groupId, fieldGroupId, false)?;
        // SAFETY: the client's callback, called as its type says.
        deliver(&reads, |g, id, v, n| unsafe { cb(g, id, v, n, userData) });
        Ok(())
    })
}

/// What every since-read checks first: the client's callback and where to write the next
/// timestamp (`DCGM_ST_BADPARAM` for either missing).
///
/// # Safety
///
/// `next` must be NULL or valid for writes for the duration of the call.
pub unsafe fn since_outputs<'a, C>(
    callback: Option<C>,
    next: *mut i64,
) -> Result<(C, &'a mut i64), dcgmReturn_t> {
    let callback = callback.ok_or(DCGM_ST_BADPARAM)?;
    // SAFETY: per this function's contract.
    let next = unsafe { out(next) }?;
    Ok((callback, next))
}

/// The samples since `since` of a group's entities and a field group's fields; on success the
/// timestamp to ask from next time goes to `next_since`.
fn collect_since(
    handle: dcgmHandle_t,
    group: dcgmGpuGrp_t,
    fg: dcgmFieldGrp_t,
    since: i64,
    gpus_only: bool,
    next_since: &mut i64,
) -> Result<Vec<Read>, dcgmReturn_t> {
    with_engine(handle, |e| {
        let entities = e.group_entities(group)?;
        if gpus_only && entities.iter().any(|p| p.entityGroupId != DCGM_FE_GPU) {
            return Err(DCGM_ST_NOT_SUPPORTED);
        }
        let fields = e.field_group(fg)?.fields.clone();
        let now = now_us();
        let mut out = Vec::new();
        let mut next = since;
        let mut any_entry = false;
        for p in &entities {
            for &f in &fields {
                let k = key(p.entityGroupId, p.entityId, f);
                advance(e, k, now);
                let Some(w) = e.cache.watches.get(&k) else {
                    continue;
                };
                any_entry = true;
                // As libdcgm 4.6.0: a field with nothing new gets one NO_DATA record.
                if !w.samples.iter().any(|s| s.ts >= since) {
                    out.push(Read {
                        group: p.entityGroupId,
                        id: p.entityId,
                        field: f,
                        status: DCGM_ST_NO_DATA,
                        ts: 0,
                        value: SimValue::Blank,
                    });
                }
                for s in w.samples.iter().filter(|s| s.ts >= since) {
                    next = next.max(s.ts + 1);
                    out.push(Read {
                        group: p.entityGroupId,
                        id: p.entityId,
                        field: f,
                        status: DCGM_ST_OK,
                        ts: s.ts,
                        value: s.value.clone(),
                    });
                }
            }
        }
        if !any_entry {
            return Err(DCGM_ST_NOT_WATCHED);
        }
        *next_since = next;
        Ok(out)
    })
}

/// Both versions of `dcgmGetValuesSince`, which differ only in the callback's type (`call`
/// makes the client's callback) and in whether the group may hold entities other than GPUs.
///
/// # Safety
///
/// As for [`dcgmGetValuesSince`].
#[allow(clippy::too_many_arguments)]
unsafe fn values_since<C>(
    handle: dcgmHandle_t,
    group: dcgmGpuGrp_t,
    fg: dcgmFieldGrp_t,
    since: i64,
    next: *mut i64,
    callback: Option<C>,
    gpus_only: bool,
    call: impl Fn(&C, u32, u32, *mut dcgmFieldValue_v1, c_int) -> c_int,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let (cb, next) = unsafe { since_outputs(callback, next) }?;
        let reads = collect_since(handle, group, fg, since, gpus_only, next)?;
        deliver(&reads, |g, id, v, n| call(&cb, g, id, v, n));
        Ok(())
    })
}

/// # Safety
///
/// `nextSinceTimestamp` must be writable; the callback as for [`dcgmGetLatestValues`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetValuesSince(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    fieldGroupId: dcgmFieldGrp_t,
    sinceTimestamp: i64,
    nextSinceTimestamp: *mut i64,
    enumCB: dcgmFieldValueEnumeration_f,
    userData: *mut c_void,
) -> dcgmReturn_t {
    // SAFETY: per this function's contract; the client's callback is called as its type says.
    unsafe {
        values_since(
            pDcgmHandle,
            groupId,
            fieldGroupId,
            sinceTimestamp,
            nextSinceTimestamp,
            enumCB,
            true,
            |cb, _, id, v, n| cb(id, v, n, userData),
        )
    }
}

/// # Safety
///
/// As for [`dcgmGetValuesSince`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetValuesSince_v2(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    fieldGroupId: dcgmFieldGrp_t,
    sinceTimestamp: i64,
    nextSinceTimestamp: *mut i64,
    enumCB: dcgmFieldValueEntityEnumeration_f,
    userData: *mut c_void,
) -> dcgmReturn_t {
    // SAFETY: per this function's contract; the client's callback is called as its type says.
    unsafe {
        values_since(
            pDcgmHandle,
            groupId,
            fieldGroupId,
            sinceTimestamp,
            nextSinceTimestamp,
            enumCB,
            false,
            |cb, g, id, v, n| cb(g, id, v, n, userData),
        )
    }
}

/// # Safety
///
/// `fields` must hold `count` ids and `values` room for `count` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetLatestValuesForFields(
    pDcgmHandle: dcgmHandle_t,
    gpuId: c_int,
    fields: *mut u16,
    count: u32,
    values: *mut dcgmFieldValue_v1,
) -> dcgmReturn_t {
    // SAFETY: forwarded contract.
    unsafe { dcgmEntityGetLatestValues(pDcgmHandle, DCGM_FE_GPU, gpuId, fields, count, values) }
}

/// # Safety
///
/// `fields` must hold `count` ids and `values` room for `count` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmEntityGetLatestValues(
    pDcgmHandle: dcgmHandle_t,
    entityGroup: dcgm_field_entity_group_t,
    entityId: c_int,
    fields: *mut u16,
    count: u32,
    values: *mut dcgmFieldValue_v1,
) -> dcgmReturn_t {
    guard(|| {
        if fields.is_null() || values.is_null() || count == 0 || entityId < 0 {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: the caller provides `count` readable ids.
        let ids = unsafe { std::slice::from_raw_parts(fields, count as usize) };
        // SAFETY: the caller provides room for `count` values.
        let outv = unsafe { std::slice::from_raw_parts_mut(values, count as usize) };
        let id = entityId as u32;
        // An unknown entity is not an error in libdcgm 4.6.0: each value says NOT_WATCHED.
        with_engine(pDcgmHandle, |e| {
            let now = now_us();
            for (dst, &f) in outv.iter_mut().zip(ids) {
                fill_v1(dst, &latest(e, entityGroup, id, f, now));
            }
            Ok(())
        })
    })
}

/// # Safety
///
/// `entities` must hold `entityCount` pairs, `fields` `fieldCount` ids, and `values` room for
/// `entityCount * fieldCount` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmEntitiesGetLatestValues(
    pDcgmHandle: dcgmHandle_t,
    entities: *mut dcgmGroupEntityPair_t,
    entityCount: u32,
    fields: *mut u16,
    fieldCount: u32,
    flags: u32,
    values: *mut dcgmFieldValue_v2,
) -> dcgmReturn_t {
    let live = flags & DCGM_FV_FLAG_LIVE_DATA != 0;
    guard(|| {
        if entities.is_null() || fields.is_null() || values.is_null() {
            return Err(DCGM_ST_BADPARAM);
        }
        if entityCount == 0 || fieldCount == 0 {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: sizes per the caller's contract.
        let ents = unsafe { std::slice::from_raw_parts(entities, entityCount as usize) };
        // SAFETY: sizes per the caller's contract.
        let ids = unsafe { std::slice::from_raw_parts(fields, fieldCount as usize) };
        let total = entityCount as usize * fieldCount as usize;
        // SAFETY: sizes per the caller's contract.
        let outv = unsafe { std::slice::from_raw_parts_mut(values, total) };
        // As libdcgm 4.6.0 (recorded: the battery's reads/entities_unknown_field*): from the
        // cache, a field id it does not know fails the whole call; a live read marks it
        // UNKNOWN_FIELD per value.
        if !live && ids.iter().any(|f| field_by_id(*f).is_none()) {
            return Err(DCGM_ST_GENERIC_ERROR);
        }
        with_engine(pDcgmHandle, |e| {
            let now = now_us();
            let mut i = 0;
            for p in ents {
                for &f in ids {
                    let r = if live {
                        live_read(e, p.entityGroupId, p.entityId, f, now)
                    } else {
                        latest(e, p.entityGroupId, p.entityId, f, now)
                    };
                    fill_v2(&mut outv[i], &r);
                    i += 1;
                }
            }
            Ok(())
        })
    })
}

/// A read of the model now, bypassing the cache (`DCGM_FV_FLAG_LIVE_DATA`). As libdcgm 4.6.0:
/// an unknown GPU is a bad parameter per value, other unknown entities are not served.
fn live_read(e: &Engine, group: u32, id: u32, field: u16, now: i64) -> Read {
    let mut r = Read {
        group,
        id,
        field,
        status: DCGM_ST_OK,
        ts: now,
        value: SimValue::Blank,
    };
    if field_by_id(field).is_none() {
        r.status = DCGM_ST_UNKNOWN_FIELD;
    } else if !e.machine.exists(group, id) {
        r.status = if group == DCGM_FE_GPU {
            DCGM_ST_BADPARAM
        } else {
            DCGM_ST_FIELD_UNSUPPORTED_BY_API
        };
    } else {
        r.value = generate(e, group, id, field, now);
    }
    r
}

/// Adds a watch of every (entity, field) of a group and field group.
pub fn watch(
    e: &mut Engine,
    group: dcgmGpuGrp_t,
    fg: dcgmFieldGrp_t,
    freq_us: i64,
    max_age_s: f64,
    max_samples: i32,
) -> Result<(), dcgmReturn_t> {
    // libdcgm 4.6.0 accepts zero and negative arguments: a frequency of 0 or less is taken
    // as one second here, a negative age or sample count as no limit.
    let freq_us = if freq_us <= 0 { 1_000_000 } else { freq_us };
    let entities = e.group_entities(group)?;
    // An unknown field group reads as "no data" in libdcgm 4.6.0.
    let fields = e
        .field_group(fg)
        .map_err(|_| DCGM_ST_NO_DATA)?
        .fields
        .clone();
    let now = now_us();
    let max_age_us = (max_age_s.max(0.0) * 1e6) as i64;
    let max_samples = max_samples.max(0) as usize;
    let client = WatcherId::client(e.caller);
    let mut first_watch = false;
    for p in &entities {
        for &f in &fields {
            let k = key(p.entityGroupId, p.entityId, f);
            let w = e
                .cache
                .watches
                .entry(k)
                .or_insert_with(|| Watch::new(now, freq_us, max_age_us, max_samples));
            first_watch |= w.samples.is_empty() && !w.is_watched();
            w.add_watcher(
                now,
                Watcher {
                    id: client,
                    freq_us,
                    max_age_us,
                    max_samples,
                },
            );
        }
    }
    e.watch_sets
        .push((group, fg, freq_us, max_age_us, max_samples));
    // As libdcgm: a group watch that starts watching a field updates every due field at once,
    // so its first value is readable right after the watch.
    if first_watch {
        update_all(e);
    }
    Ok(())
}

/// Removes the watches a (group, field group) pair added.
pub fn unwatch(
    e: &mut Engine,
    group: dcgmGpuGrp_t,
    fg: dcgmFieldGrp_t,
) -> Result<(), dcgmReturn_t> {
    let Some(pos) = e.watch_sets.iter().position(|w| w.0 == group && w.1 == fg) else {
        return Err(DCGM_ST_NOT_WATCHED);
    };
    e.watch_sets.remove(pos);
    let client = WatcherId::client(e.caller);
    let entities = e.group_entities(group).unwrap_or_default();
    let fields = e
        .field_group(fg)
        .map(|f| f.fields.clone())
        .unwrap_or_default();
    for p in &entities {
        for &f in &fields {
            let k = key(p.entityGroupId, p.entityId, f);
            // As libdcgm 4.6.0: the samples stay readable after the last watcher leaves;
            // the entry just stops being sampled.
            // One unwatch ends the client's watch of the entry, whatever else it watched
            // the entry through (a client is one watcher per entry in libdcgm).
            if let Some(w) = e.cache.watches.get_mut(&k) {
                w.remove_watcher(client);
            }
        }
    }
    Ok(())
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmWatchFields(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    fieldGroupId: dcgmFieldGrp_t,
    updateFreq: i64,
    maxKeepAge: f64,
    maxKeepSamples: c_int,
) -> dcgmReturn_t {
    guard(|| {
        with_engine(pDcgmHandle, |e| {
            watch(
                e,
                groupId,
                fieldGroupId,
                updateFreq,
                maxKeepAge,
                maxKeepSamples,
            )
        })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmUnwatchFields(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    fieldGroupId: dcgmFieldGrp_t,
) -> dcgmReturn_t {
    guard(|| {
        with_engine(pDcgmHandle, |e| {
            e.group_entities(groupId)?;
            e.field_group(fieldGroupId)?;
            unwatch(e, groupId, fieldGroupId)
        })
    })
}
