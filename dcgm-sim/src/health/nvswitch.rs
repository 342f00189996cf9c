//! NvSwitches: a fatal SXID in the last minute fails the switch, a non-fatal one warns; each
//! switch link that is down fails it (under the fatal system).

use dcgm_sys::*;

use super::messages::full;
use super::samples::last_since;
use super::{Ctx, Incident};

/// Links an NvSwitch may have.
pub const LINKS_PER_SWITCH: u32 = DCGM_NVLINK_MAX_LINKS_PER_NVSWITCH as u32;

/// The fatal (`fatal`) or non-fatal check of one switch.
pub fn check(c: &Ctx, fatal: bool, out: &mut Vec<Incident>) {
    let id = c.entity.entityId;
    let (field, system, health, code, kind) = if fatal {
        (
            DCGM_FI_DEV_SXID_FATAL_ERROR,
            DCGM_HEALTH_WATCH_NVSWITCH_FATAL,
            DCGM_HEALTH_RESULT_FAIL,
            DCGM_FR_NVSWITCH_FATAL_ERROR,
            "fatal",
        )
    } else {
        (
            DCGM_FI_DEV_SXID_NON_FATAL_ERROR,
            DCGM_HEALTH_WATCH_NVSWITCH_NONFATAL,
            DCGM_HEALTH_RESULT_WARN,
            DCGM_FR_NVSWITCH_NON_FATAL_ERROR,
            "nonfatal",
        )
    };
    if last_since(c, field, c.start).is_some_and(|n| n > 0) {
        // One error field per kind, so the link named is always 0 (libdcgm 4.6.0 names the
        // field's index in its list).
        let msg = format!("Detected {kind} errors on NvSwitch {id} link 0");
        c.report(out, system, health, code, full(code, msg));
    }
    if fatal {
        for link in 0..LINKS_PER_SWITCH {
            if c.src.machine.link_state(DCGM_FE_SWITCH, id, link) == DcgmNvLinkLinkStateDown {
                let code = DCGM_FR_NVLINK_DOWN;
                let msg = format!("GPU {id}'s NvLink link {link} is currently down");
                c.report(out, system, health, code, full(code, msg));
            }
        }
    }
}
