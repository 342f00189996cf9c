//! The cached samples of a field over a time range: their summaries (`dcgmGetFieldSummary`)
//! and the samples themselves (`dcgmGetMultipleValuesForField`).

use std::ffi::c_int;

use dcgm_sys::*;

use super::values::{Read, fill_v1, latest};
use super::{guard, out, versioned};
use crate::cache::{Sample, key};
use crate::engine::{Engine, now_us, with_engine};
use crate::model::SimValue;

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
) -> Result<Vec<Sample>, dcgmReturn_t> {
    let now = now_us();
    // Brings the entry up to date and tells whether it is watched.
    let r = latest(e, group, id, field, now);
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
