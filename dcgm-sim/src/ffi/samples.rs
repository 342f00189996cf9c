//! The cached samples of a field over a time range: their summaries (`dcgmGetFieldSummary`)
//! and the samples themselves (`dcgmGetMultipleValuesForField`).

use std::ffi::c_int;

use dcgm_sys::*;

use super::values::fill_v1;
use super::{guard, out, versioned};
use crate::cache::{Sample, key};
use crate::engine::{Engine, now_us};
use crate::sampling::Read;
use crate::sim::with_engine;
use crate::sim_value::SimValue;

/// The seven summaries of `dcgmGetFieldSummary` (minimum, maximum, average, sum, count,
/// integral, difference), computed as libdcgm 4.6.0's cache manager does: a blank sample
/// counts in the count and in the average's divisor but in nothing else; a summary stays
/// blank until a non-blank sample is seen; the integral is in value × microseconds, from the
/// second sample on (trapezoids); the difference is the latest non-blank value less the
/// first. `T` is the field's arithmetic: integers divide and halve as integers.
fn summaries<T: Copy>(
    samples: &[Sample],
    value: impl Fn(&SimValue) -> Option<T>,
    blank: T,
    ops: SummaryOps<T>,
) -> Option<[T; 7]> {
    let mut out = [blank; 7];
    let mut seen: i64 = 0;
    let mut sum = (ops.from_i64)(0);
    let mut first: Option<T> = None;
    let mut prev: Option<(i64, T)> = None;
    for s in samples {
        seen += 1;
        let Some(v) = value(&s.value) else {
            prev = Some((s.ts, blank));
            continue;
        };
        let first = *first.get_or_insert(v);
        sum = (ops.add)(sum, v);
        if (ops.is_blank)(out[0]) || (ops.lt)(v, out[0]) {
            out[0] = v;
        }
        if (ops.is_blank)(out[1]) || (ops.lt)(out[1], v) {
            out[1] = v;
        }
        out[2] = (ops.div)(sum, (ops.from_i64)(seen));
        out[3] = sum;
        out[4] = (ops.from_i64)(seen);
        out[5] = match prev {
            None => (ops.from_i64)(0),
            Some((pts, pv)) => {
                let avg = (ops.div)((ops.add)(v, pv), (ops.from_i64)(2));
                (ops.add)(out[5], (ops.mul)(avg, (ops.from_i64)(s.ts - pts)))
            }
        };
        out[6] = (ops.sub)(v, first);
        prev = Some((s.ts, v));
    }
    (seen > 0).then_some(out)
}

/// The arithmetic of one field type, for [`summaries`].
struct SummaryOps<T> {
    from_i64: fn(i64) -> T,
    add: fn(T, T) -> T,
    sub: fn(T, T) -> T,
    mul: fn(T, T) -> T,
    div: fn(T, T) -> T,
    lt: fn(T, T) -> bool,
    is_blank: fn(T) -> bool,
}

/// Integer summaries wrap on overflow, as the C arithmetic they reproduce does in practice.
const INT_OPS: SummaryOps<i64> = SummaryOps {
    from_i64: |v| v,
    add: i64::wrapping_add,
    sub: i64::wrapping_sub,
    mul: i64::wrapping_mul,
    div: |a, b| a.checked_div(b).unwrap_or(0),
    lt: |a, b| a < b,
    is_blank: |v| v >= DCGM_INT64_BLANK,
};

const FP_OPS: SummaryOps<f64> = SummaryOps {
    from_i64: |v| v as f64,
    add: |a, b| a + b,
    sub: |a, b| a - b,
    mul: |a, b| a * b,
    div: |a, b| a / b,
    lt: |a, b| a < b,
    is_blank: |v| v >= DCGM_FP64_BLANK,
};

/// The cached samples of a watched (entity, field) in `[start, end]` (0 = open), oldest first.
pub fn cached_samples(
    e: &mut Engine,
    group: u32,
    id: u32,
    field: u16,
    start: i64,
    end: i64,
) -> Result<Vec<Sample>, dcgmReturn_t> {
    let now = now_us();
    // Brings the entry up to date and tells whether it is watched.
    let r = e.latest(group, id, field, now);
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
        req.response.fieldType = u32::from(ty);
        let mut k = 0;
        if ty == DCGM_FT_INT64 {
            let int = |v: &SimValue| match v {
                SimValue::Int(i) if *i < DCGM_INT64_BLANK => Some(*i),
                _ => None,
            };
            let all = summaries(&samples, int, DCGM_INT64_BLANK, INT_OPS).ok_or(DCGM_ST_NO_DATA)?;
            for (bit, v) in all.iter().enumerate() {
                if mask & (1 << bit) != 0 {
                    req.response.values[k].i64_ = *v;
                    k += 1;
                }
            }
        } else {
            let dbl = |v: &SimValue| match v {
                SimValue::Dbl(d) if *d < DCGM_FP64_BLANK => Some(*d),
                SimValue::Int(i) if *i < DCGM_INT64_BLANK => Some(*i as f64),
                _ => None,
            };
            let all = summaries(&samples, dbl, DCGM_FP64_BLANK, FP_OPS).ok_or(DCGM_ST_NO_DATA)?;
            for (bit, v) in all.iter().enumerate() {
                if mask & (1 << bit) != 0 {
                    req.response.values[k].fp64 = *v;
                    k += 1;
                }
            }
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
        if crate::personality::known_field(fieldId).is_none() {
            *n = 0;
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
            let r = Read {
                group: DCGM_FE_GPU,
                id: gpu,
                field: fieldId,
                status: DCGM_ST_OK,
                ts: s.ts,
                value: s.value.clone(),
            };
            fill_v1(dst, &r);
        }
        *n = samples.len() as c_int;
        if samples.is_empty() {
            return Err(DCGM_ST_NO_DATA);
        }
        Ok(())
    })
}
