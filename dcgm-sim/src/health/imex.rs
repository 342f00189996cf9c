//! IMEX: a node-wide check, made once per health check before the entities' checks when the
//! group watches NVLink and one of its GPUs has NVLinks. It reads the latest IMEX domain
//! status (a string) and daemon status (an integer) of the node (entity `DCGM_FE_NONE` 0, where
//! they are injected and sampled): a domain that is neither `UP`, `NOT_INSTALLED`,
//! `NOT_CONFIGURED` nor `UNAVAILABLE` fails, and so does a daemon that is neither READY (5),
//! UNAVAILABLE (7), NOT_INSTALLED (-1) nor NOT_CONFIGURED (-2). Incidents are about entity
//! `DCGM_FE_NONE` 0, under the NVLink system.

use dcgm_sys::*;

use super::messages::full;
use super::samples::latest_value;
use super::{Ctx, Incident};
use crate::machine::Machine;
use crate::sim_value::SimValue;

/// Domain states that pass.
const HEALTHY_DOMAIN: [&str; 4] = ["UP", "NOT_INSTALLED", "NOT_CONFIGURED", "UNAVAILABLE"];
/// Daemon states that pass: READY, UNAVAILABLE, NOT_INSTALLED, NOT_CONFIGURED.
const HEALTHY_DAEMON: [i64; 4] = [5, 7, -1, -2];

/// Whether one of the group's GPUs has a link in a state other than "not supported".
pub fn has_nvlinks(m: &Machine, entities: &[dcgmGroupEntityPair_t]) -> bool {
    entities
        .iter()
        .filter(|p| p.entityGroupId == DCGM_FE_GPU)
        .any(|p| {
            (0..super::nvlink::LINKS_PER_GPU).any(|l| {
                m.link_state(DCGM_FE_GPU, p.entityId, l) != DcgmNvLinkLinkStateNotSupported
            })
        })
}

/// The IMEX check of the node (`c` is about entity `DCGM_FE_NONE` 0).
pub fn check(c: &Ctx, out: &mut Vec<Incident>) {
    if let Some(SimValue::Str(s)) = latest_value(c, DCGM_FI_IMEX_DOMAIN_STATUS)
        && !dcgm_str_is_blank(&s)
        && !HEALTHY_DOMAIN.contains(&s.as_str())
    {
        report(c, out, "domain", &s, "unhealthy");
    }
    if let Some(SimValue::Int(n)) = latest_value(c, DCGM_FI_IMEX_DAEMON_STATUS)
        && !dcgm_int64_is_blank(n)
        && !HEALTHY_DAEMON.contains(&n)
    {
        report(c, out, "daemon", &n.to_string(), "not READY");
    }
}

fn report(c: &Ctx, out: &mut Vec<Incident>, what: &str, status: &str, verdict: &str) {
    let code = DCGM_FR_IMEX_UNHEALTHY;
    let msg = full(code, format!("IMEX {what} status is {status} ({verdict})"));
    c.report(
        out,
        DCGM_HEALTH_WATCH_NVLINK,
        DCGM_HEALTH_RESULT_FAIL,
        code,
        msg,
    );
}
