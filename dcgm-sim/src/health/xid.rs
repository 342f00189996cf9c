//! XIDs: which ones libdcgm 4.6.0's health module reports, under which system, how badly.
//!
//! Some XIDs fail (or, XID 94 a contained error, warn about) a GPU whatever system is watched:
//! they are reported under `DCGM_HEALTH_WATCH_ALL` on every check from then on. Others belong
//! to one system and are reported while a group watches it. The module only hears a GPU's
//! XIDs once a group watching memory or InfoROM included that GPU (those systems watch the
//! XID field, and libdcgm never removes a health watch); a system-specific XID counts only
//! if some group watched that system when it arrived. What a GPU reported stays for the
//! engine's life.

use std::collections::{BTreeMap, BTreeSet};

use dcgm_sys::*;

use super::messages::{full, gpu_only};
use super::{Ctx, Incident};
use crate::model::Event;

/// How the health module treats one XID.
pub struct XidRule {
    pub xid: i64,
    pub system: u32,
    pub health: dcgmHealthWatchResults_t,
    pub code: dcgmError_t,
    /// DCGM's description of it (`%u` stands for the GPU in the system-specific ones).
    pub text: &'static str,
}

const fn rule(
    xid: i64,
    system: u32,
    health: dcgmHealthWatchResults_t,
    code: dcgmError_t,
    text: &'static str,
) -> XidRule {
    XidRule {
        xid,
        system,
        health,
        code,
        text,
    }
}

const W: dcgmHealthWatchResults_t = DCGM_HEALTH_RESULT_WARN;
const F: dcgmHealthWatchResults_t = DCGM_HEALTH_RESULT_FAIL;
const ALL: u32 = DCGM_HEALTH_WATCH_ALL;

/// The XIDs reported whatever is watched, in libdcgm's order.
pub const DEVASTATING: &[XidRule] = &[
    rule(48, ALL, F, DCGM_FR_XID_ERROR, "Double Bit ECC Error"),
    rule(74, ALL, F, DCGM_FR_XID_ERROR, "NVLink Critical Error"),
    rule(
        79,
        ALL,
        F,
        DCGM_FR_FALLEN_OFF_BUS,
        "GPU %d has fallen off the bus",
    ),
    rule(
        94,
        ALL,
        W,
        DCGM_FR_CONTAINED_ERROR,
        "GPU had a contained error.",
    ),
    rule(
        95,
        ALL,
        F,
        DCGM_FR_UNCONTAINED_ERROR,
        "GPU had an uncontained error (XID 95)",
    ),
    rule(119, ALL, F, DCGM_FR_XID_ERROR, "GSP RPC Timeout"),
    rule(120, ALL, F, DCGM_FR_XID_ERROR, "GSP Error"),
    rule(140, ALL, F, DCGM_FR_XID_ERROR, "ECC unrecovered error"),
];

const MEM: u32 = DCGM_HEALTH_WATCH_MEM;
const PCIE: u32 = DCGM_HEALTH_WATCH_PCIE;
const THERM: u32 = DCGM_HEALTH_WATCH_THERMAL;
const POW: u32 = DCGM_HEALTH_WATCH_POWER;
const NVL: u32 = DCGM_HEALTH_WATCH_NVLINK;

/// The XIDs of one system. XID 93 (a corrupt InfoROM) counts on Volta GPUs only, which the
/// simulator does not model, so it is not listed.
pub const SUBSYSTEM: &[XidRule] = &[
    rule(31, MEM, W, DCGM_FR_XID_ERROR, "MMU Error"),
    rule(32, MEM, W, DCGM_FR_XID_ERROR, "PBDMA Error"),
    rule(43, MEM, W, DCGM_FR_XID_ERROR, "Reset Channel Verif Error"),
    rule(
        63,
        MEM,
        W,
        DCGM_FR_PENDING_PAGE_RETIREMENTS,
        "A pending retired page has been detected in GPU %u.",
    ),
    rule(
        64,
        MEM,
        F,
        DCGM_FR_ROW_REMAP_FAILURE,
        "GPU %u had uncorrectable memory errors and row remapping failed.",
    ),
    rule(38, PCIE, W, DCGM_FR_XID_ERROR, "PCIe Bus Error"),
    rule(39, PCIE, W, DCGM_FR_XID_ERROR, "PCIe Fabric Error"),
    rule(42, PCIE, W, DCGM_FR_XID_ERROR, "PCIe Replay Error"),
    rule(
        60,
        THERM,
        W,
        DCGM_FR_CLOCKS_EVENT_THERMAL,
        "Detected clocks event due to thermal violation in GPU %u.",
    ),
    rule(
        61,
        THERM,
        W,
        DCGM_FR_XID_ERROR,
        "EDPP Power Brake Thermal limit",
    ),
    rule(62, THERM, W, DCGM_FR_XID_ERROR, "Thermal Violation"),
    rule(54, POW, W, DCGM_FR_XID_ERROR, "Power state change"),
    rule(56, POW, W, DCGM_FR_XID_ERROR, "Clock change"),
    rule(
        57,
        POW,
        W,
        DCGM_FR_CLOCKS_EVENT_POWER,
        "Clock change due to power",
    ),
    rule(58, POW, W, DCGM_FR_XID_ERROR, "Clock change due to thermal"),
    rule(78, POW, W, DCGM_FR_XID_ERROR, "Power state forced change"),
    rule(67, NVL, W, DCGM_FR_XID_ERROR, "NVLink Error"),
    rule(73, NVL, W, DCGM_FR_XID_ERROR, "NVLink Flow Control Error"),
    rule(121, NVL, W, DCGM_FR_XID_ERROR, "C2C Link corrected error"),
    rule(137, NVL, W, DCGM_FR_XID_ERROR, "NVLink FLA privilege error"),
];

/// The XIDs each GPU reported to the health module.
#[derive(Debug, Default)]
pub struct History {
    /// GPUs whose XIDs the module hears.
    watched: BTreeSet<u32>,
    /// XID → GPUs that reported it.
    seen: BTreeMap<i64, BTreeSet<u32>>,
    /// Events up to this time are taken in.
    until: i64,
}

impl History {
    /// The module hears this GPU's XIDs from now on.
    pub fn watch(&mut self, gpu: u32) {
        self.watched.insert(gpu);
    }

    fn has(&self, xid: i64, gpu: u32) -> bool {
        self.seen.get(&xid).is_some_and(|g| g.contains(&gpu))
    }
}

impl History {
    /// Takes in the XIDs that arrived by `now` since the last call (scripted ones at their
    /// time, injected ones when injected, whatever their timestamp), as the module hears them
    /// when they arrive: from GPUs it watches, system-specific ones only while a group watches
    /// their system (`watching`: the systems the groups watch).
    pub fn absorb(&mut self, events: &[Event], watching: u32, now: i64) {
        let since = self.until;
        let arrived = events
            .iter()
            .filter(|ev| ev.kind == "xid" && ev.known_at > since && ev.known_at <= now);
        for ev in arrived {
            let (xid, gpu) = (ev.value, ev.gpu);
            if !self.watched.contains(&gpu) {
                continue;
            }
            let known = DEVASTATING.iter().any(|r| r.xid == xid)
                || SUBSYSTEM
                    .iter()
                    .any(|r| r.xid == xid && r.system & watching != 0);
            if known {
                self.seen.entry(xid).or_default().insert(gpu);
            }
        }
        self.until = self.until.max(now);
    }
}

fn message(r: &XidRule, gpu: u32, text: &str) -> String {
    let base = if r.code == DCGM_FR_XID_ERROR {
        format!("Detected XID {} for GPU {gpu}", r.xid)
    } else {
        gpu_only(r.code, gpu)
    };
    format!(
        "{}  (triggered by XID {}: {text})",
        full(r.code, base),
        r.xid
    )
}

/// The XIDs reported whatever is watched.
pub fn devastating(c: &Ctx, out: &mut Vec<Incident>) {
    let gpu = c.entity.entityId;
    for r in DEVASTATING {
        if c.xids.has(r.xid, gpu) {
            c.report(out, r.system, r.health, r.code, message(r, gpu, r.text));
        }
    }
}

/// The XIDs of one watched system.
pub fn subsystem(c: &Ctx, system: u32, out: &mut Vec<Incident>) {
    let gpu = c.entity.entityId;
    let mut rules: Vec<&XidRule> = SUBSYSTEM.iter().filter(|r| r.system == system).collect();
    rules.sort_by_key(|r| r.xid);
    for r in rules {
        if c.xids.has(r.xid, gpu) {
            let text = r.text.replace("%u", &gpu.to_string());
            c.report(out, r.system, r.health, r.code, message(r, gpu, &text));
        }
    }
}
