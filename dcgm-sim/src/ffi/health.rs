//! Health watches: which systems a group watches, and the health check, decided by the
//! health engine (`crate::health`) as libdcgm 4.6.0 decides it.

use dcgm_sys::*;

use super::modules::module_ok;
use super::{guard, out, version_word, versioned, write_str};
use crate::personality::Struct;
use crate::sim::with_engine;

/// `dcgmHealthSet`'s update interval and age (libdcgm 4.6.0's defaults for the legacy call).
const LEGACY_INTERVAL_US: i64 = 30_000_000;
const LEGACY_MAX_AGE_S: f64 = 600.0;

fn set(
    handle: dcgmHandle_t,
    group: dcgmGpuGrp_t,
    systems: u32,
    interval_us: i64,
    max_age_s: f64,
) -> Result<(), dcgmReturn_t> {
    with_engine(handle, |e| {
        module_ok(e, DcgmModuleIdHealth)?;
        e.health_set(group, systems, interval_us, max_age_s)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmHealthSet(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    systems: dcgmHealthSystems_t,
) -> dcgmReturn_t {
    guard(|| {
        set(
            pDcgmHandle,
            groupId,
            systems,
            LEGACY_INTERVAL_US,
            LEGACY_MAX_AGE_S,
        )
    })
}

/// # Safety
///
/// `params` must be NULL or a versioned `dcgmHealthSetParams_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmHealthSet_v2(
    pDcgmHandle: dcgmHandle_t,
    params: *mut dcgmHealthSetParams_v2,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let p = unsafe { versioned(params, &[dcgmHealthSetParams_version2]) }?;
        // libdcgm 4.6.0 accepts any update interval and age (zero and negative ones too:
        // recorded, `health/set_v2/*`). The simulator samples a watch with no positive
        // interval or age at the legacy call's 30 s and keeps 600 s (a zero interval would
        // mean sampling without pause).
        let interval = if p.updateInterval > 0 {
            p.updateInterval
        } else {
            LEGACY_INTERVAL_US
        };
        let age = if p.maxKeepAge > 0.0 {
            p.maxKeepAge
        } else {
            LEGACY_MAX_AGE_S
        };
        set(pDcgmHandle, p.groupId, p.systems, interval, age)
    })
}

/// # Safety
///
/// `systems` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmHealthGet(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    systems: *mut dcgmHealthSystems_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let s = unsafe { out(systems) }?;
        with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdHealth)?;
            e.group_entities(groupId)?;
            *s = e.health.get(&groupId).copied().unwrap_or(0);
            Ok(())
        })
    })
}

/// Fills a health response of either layout (they differ in the room for incidents only).
macro_rules! fill_health_response {
    ($r:expr, $found:expr) => {{
        let (r, found) = ($r, $found);
        let n = found.len().min(r.incidents.len());
        let mut overall = DCGM_HEALTH_RESULT_PASS;
        for (dst, inc) in r.incidents.iter_mut().zip(found) {
            dst.system = inc.system;
            dst.health = inc.health;
            dst.error.code = inc.code;
            write_str(&mut dst.error.msg, &inc.message);
            dst.entityInfo = inc.entity;
            overall = overall.max(inc.health);
        }
        r.incidentCount = n as u32;
        r.overallHealth = overall;
    }};
}

/// # Safety
///
/// `results` must be NULL or a versioned `dcgmHealthResponse_v5`, or (for DCGM 3.3.9, when the
/// simulator speaks it) `_v4`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmHealthCheck(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    results: *mut dcgmHealthResponse_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let version = unsafe { version_word(results, Struct::HealthResponse) }?;
        let found = with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdHealth)?;
            e.health_check(groupId)
        })?;
        // SAFETY: the version word names the layout, which the caller allocated.
        unsafe {
            if version == dcgmHealthResponse_version5 {
                fill_health_response!(&mut *results, &found);
            } else {
                fill_health_response!(&mut *results.cast::<dcgmHealthResponse_v4>(), &found);
            }
        }
        Ok(())
    })
}
