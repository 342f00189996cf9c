//! Watches and value reads.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};

use dcgm_sys::*;

use super::{guard, out};
use crate::engine::now_us;
use crate::sampling::Read;
use crate::sim::with_engine;
use crate::sim_value::SimValue;

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
            return Err(crate::personality::empty_group_latest());
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
                out.push(e.latest(p.entityGroupId, p.entityId, f, now));
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
        let (out, next) = e
            .samples_since(&entities, &fields, since, now_us())
            .ok_or(DCGM_ST_NOT_WATCHED)?;
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
                fill_v1(dst, &e.latest(entityGroup, id, f, now));
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
        // UNKNOWN_FIELD per value (as every read of 3.3.9 and 4.1.1 does).
        if !live
            && !crate::personality::unknown_field_per_value()
            && ids.iter().any(|f| field_by_id(*f).is_none())
        {
            return Err(DCGM_ST_GENERIC_ERROR);
        }
        with_engine(pDcgmHandle, |e| {
            let now = now_us();
            let mut i = 0;
            for p in ents {
                for &f in ids {
                    let r = if live {
                        e.live_read(p.entityGroupId, p.entityId, f, now)
                    } else {
                        e.latest(p.entityGroupId, p.entityId, f, now)
                    };
                    fill_v2(&mut outv[i], &r);
                    i += 1;
                }
            }
            Ok(())
        })
    })
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
            e.watch(
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
            e.unwatch(groupId, fieldGroupId)
        })
    })
}
