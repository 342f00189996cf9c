//! Thermal and power: clocks held back by a thermal or power violation in the last minute
//! (the violation-time counters grew) warn; so does a GPU whose power cannot be read.

use dcgm_sys::*;

use super::messages::{full, gpu_only};
use super::samples::{first_last, latest_value};
use super::{Ctx, Incident};
use crate::sim_value::SimValue;

fn violated(c: &Ctx, field: u16) -> bool {
    first_last(c, field, c.start).is_some_and(|(a, b)| a != b)
}

fn warn(c: &Ctx, out: &mut Vec<Incident>, system: u32, code: dcgmError_t) {
    c.report(
        out,
        system,
        DCGM_HEALTH_RESULT_WARN,
        code,
        full(code, gpu_only(code, c.entity.entityId)),
    );
}

/// The thermal check.
pub fn thermal(c: &Ctx, out: &mut Vec<Incident>) {
    if violated(c, DCGM_FI_DEV_THERMAL_VIOLATION) {
        warn(
            c,
            out,
            DCGM_HEALTH_WATCH_THERMAL,
            DCGM_FR_CLOCKS_EVENT_THERMAL,
        );
    }
}

/// The power check: an unreadable power draw (a blank that is not "not supported"), then the
/// power violation.
pub fn power(c: &Ctx, out: &mut Vec<Incident>) {
    if c.entity.entityGroupId == DCGM_FE_GPU {
        let unreadable = match latest_value(c, DCGM_FI_DEV_BOARD_POWER_WATTS) {
            Some(SimValue::Dbl(w)) => dcgm_fp64_is_blank(w) && w != DCGM_FP64_NOT_SUPPORTED,
            Some(SimValue::Blank) => true,
            _ => false,
        };
        if unreadable {
            warn(c, out, DCGM_HEALTH_WATCH_POWER, DCGM_FR_POWER_UNREADABLE);
        }
    }
    if violated(c, DCGM_FI_DEV_POWER_VIOLATION) {
        warn(c, out, DCGM_HEALTH_WATCH_POWER, DCGM_FR_CLOCKS_EVENT_POWER);
    }
}
