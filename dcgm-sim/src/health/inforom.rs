//! InfoROM: a GPU whose InfoROM reads as not valid warns.

use dcgm_sys::*;

use super::messages::{full, gpu_only};
use super::samples::latest;
use super::{Ctx, Incident};

/// Warns when the latest `DCGM_FI_DEV_INFOROM_VALID` sample is 0.
pub fn check(c: &Ctx, out: &mut Vec<Incident>) {
    if latest(c, DCGM_FI_DEV_INFOROM_VALID).is_some_and(|v| v == 0) {
        let code = DCGM_FR_CORRUPT_INFOROM;
        c.report(
            out,
            DCGM_HEALTH_WATCH_INFOROM,
            DCGM_HEALTH_RESULT_WARN,
            code,
            full(code, gpu_only(code, c.entity.entityId)),
        );
    }
}
