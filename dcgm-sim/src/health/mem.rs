//! GPU memory: volatile double-bit ECC errors, retired and pending pages, row remapping and
//! unrepairable memory.

use dcgm_sys::*;

use super::messages::{full, gpu_only};
use super::samples::{last_since, latest};
use super::{Ctx, Incident};

/// Retired pages (single- and double-bit together) from which the GPU fails.
pub const RETIRED_PAGES_LIMIT: i64 = 63;
/// Double-bit retired pages above which more than one a week fails the GPU.
pub const RETIRED_PAGES_SOFT_LIMIT: i64 = 15;
/// Uncorrectable row remaps from which the GPU warns (Ampere and newer).
pub const ROW_REMAP_UNCORRECTABLE_LIMIT: i64 = 512;
const WEEK_US: i64 = 7 * 24 * 3600 * 1_000_000;

fn fail(
    c: &Ctx,
    out: &mut Vec<Incident>,
    health: dcgmHealthWatchResults_t,
    code: dcgmError_t,
    msg: String,
) {
    c.report(out, DCGM_HEALTH_WATCH_MEM, health, code, full(code, msg));
}

/// The memory checks, in libdcgm's order.
pub fn check(c: &Ctx, out: &mut Vec<Incident>) {
    let gpu = c.entity.entityId;
    let since = c.start;
    if let Some(dbe) = last_since(c, DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, since).filter(|n| *n > 0) {
        fail(
            c,
            out,
            DCGM_HEALTH_RESULT_FAIL,
            DCGM_FR_VOLATILE_DBE_DETECTED,
            format!("Detected {dbe} volatile double-bit ECC error(s) in GPU {gpu}."),
        );
    }
    if last_since(c, DCGM_FI_DEV_PAGE_RETIRED_PENDING, since).is_some_and(|n| n != 0) {
        let code = DCGM_FR_PENDING_PAGE_RETIREMENTS;
        fail(c, out, DCGM_HEALTH_RESULT_WARN, code, gpu_only(code, gpu));
    }
    retired_pages(c, out, since);
    if last_since(c, DCGM_FI_DEV_ROW_REMAP_FAILED, since).is_some_and(|n| n > 0) {
        // libdcgm 4.6.0 formats this message without the GPU's id; it reads GPU 0
        // (recorded from it for a GPU with another id).
        let code = DCGM_FR_ROW_REMAP_FAILURE;
        fail(c, out, DCGM_HEALTH_RESULT_FAIL, code, gpu_only(code, 0));
    }
    if ampere_or_newer(c)
        && let Some(n) = latest(c, DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL)
        && n >= ROW_REMAP_UNCORRECTABLE_LIMIT
    {
        fail(
            c,
            out,
            DCGM_HEALTH_RESULT_WARN,
            DCGM_FR_UNCORRECTABLE_ROW_REMAP_LIMIT,
            format!("GPU {gpu} exceeded uncorrectable row remap limit with {n} remapped rows"),
        );
    }
    if let Some(n) = latest(c, DCGM_FI_DEV_MEMORY_UNREPAIRABLE).filter(|n| *n != 0) {
        fail(
            c,
            out,
            DCGM_HEALTH_RESULT_FAIL,
            DCGM_FR_FAULTY_MEMORY,
            format!("Found {n} faulty memory elements on GPU {gpu}"),
        );
    }
}

/// The simulated GPUs are all Ampere or newer; a fake GPU has no compute capability, so
/// libdcgm skips the uncorrectable row-remap check on it.
fn ampere_or_newer(c: &Ctx) -> bool {
    c.entity.entityGroupId == DCGM_FE_GPU && !c.src.machine.fake_gpus.contains(&c.entity.entityId)
}

fn retired_pages(c: &Ctx, out: &mut Vec<Incident>, since: i64) {
    let gpu = c.entity.entityId;
    let sbe = last_since(c, DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL, since);
    let dbe = last_since(c, DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL, since);
    if sbe.unwrap_or(0) + dbe.unwrap_or(0) >= RETIRED_PAGES_LIMIT {
        fail(
            c,
            out,
            DCGM_HEALTH_RESULT_FAIL,
            DCGM_FR_RETIRED_PAGES_LIMIT,
            format!(
                "{RETIRED_PAGES_LIMIT} or more retired pages have been detected in GPU {gpu}. "
            ),
        );
        return;
    }
    let Some(dbe) = dbe.filter(|n| *n > RETIRED_PAGES_SOFT_LIMIT) else {
        return;
    };
    // More than one page retired for double-bit errors in the past week. Without a sample
    // from a week ago libdcgm compares with 0 (its empty sample), so any count above the soft
    // limit fails then.
    let week_ago = c.end - WEEK_US;
    let before: i64 = c
        .src
        .cache
        .watches
        .get(&crate::cache::key(
            DCGM_FE_GPU,
            gpu,
            DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL,
        ))
        .and_then(|w| w.samples.iter().rev().find(|s| s.ts <= week_ago))
        .map_or(Some(0), |s| match s.value {
            crate::sim_value::SimValue::Int(n) if !dcgm_int64_is_blank(n) => Some(n),
            _ => None,
        })
        .unwrap_or(i64::MAX);
    if dbe.saturating_sub(before) > 1 {
        fail(
            c,
            out,
            DCGM_HEALTH_RESULT_FAIL,
            DCGM_FR_RETIRED_PAGES_DBE_LIMIT,
            format!(
                "An excess of {RETIRED_PAGES_SOFT_LIMIT} retired pages due to DBEs have been detected and more than one page has been retired due to DBEs in the past week in GPU {gpu}."
            ),
        );
    }
}
