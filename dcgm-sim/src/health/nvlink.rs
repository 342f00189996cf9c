//! NVLink: error counters over the last minute (CRC errors warn, or fail at 100 a second or
//! more; replay and recovery errors fail from the first one), then the NVLink5 counters and
//! bit error rates ([`super::nvlink5`]), then the system's XIDs, then each link that is down
//! fails the GPU (not in MIG mode, where NVML reports its links down), then the fabric's
//! health and the fabric manager's state, then the link error totals of the GPU's generation
//! ([`super::nvlink5::error_totals`]).

use dcgm_sys::*;

use super::messages::full;
use super::samples::{first_last, latest};
use super::{Ctx, Incident};

/// Errors in the window from which a counter is reported.
pub const ERROR_LIMIT: i64 = 1;
/// CRC errors a second from which they fail the GPU.
pub const CRC_PER_SECOND_LIMIT: f64 = 100.0;

/// The counters checked (their field tags name them in the messages), and whether any error
/// fails the GPU.
const COUNTERS: [(u16, bool); 4] = [
    (DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL, false),
    (DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL, false),
    (DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL, true),
    (DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_TOTAL, true),
];

/// Links a GPU may have.
pub const LINKS_PER_GPU: u32 = DCGM_NVLINK_MAX_LINKS_PER_GPU as u32;

/// The NVLink checks, in libdcgm's order.
pub fn check(c: &Ctx, out: &mut Vec<Incident>) {
    counters(c, out);
    super::nvlink5::check(c, out);
    super::xid::subsystem(c, DCGM_HEALTH_WATCH_NVLINK, out);
    links_down(c, out);
    fabric_health(c, out);
    fabric_manager(c, out);
    super::nvlink5::error_totals(c, out);
}

/// The parts of NVML's fabric health mask (`DCGM_FI_DEV_FABRIC_HEALTH_MASK`, latest sample)
/// that fail the GPU: (shift, value meaning "bad", name). Each part is 2 bits wide.
const FABRIC_HEALTH: [(u32, i64, &str); 4] = [
    (4, 1, "Route Unhealthy"),
    (0, 1, "Bandwidth Degraded"),
    (2, 1, "Route Recovery"),
    (6, 1, "Access Timeout Recovery"),
];

/// Fails the GPU for each unhealthy part of its fabric health mask, and for a configuration
/// (bits 8–11) that is neither "not supported" (0) nor "none" (1).
fn fabric_health(c: &Ctx, out: &mut Vec<Incident>) {
    let Some(mask) = latest(c, DCGM_FI_DEV_FABRIC_HEALTH_MASK) else {
        return;
    };
    let gpu = c.entity.entityId;
    let mut report = |name: &str| {
        let code = DCGM_FR_FIELD_VIOLATION;
        let msg = full(
            code,
            format!("Detected {mask} Fabric Health: {name} for GPU {gpu}"),
        );
        c.report(
            out,
            DCGM_HEALTH_WATCH_NVLINK,
            DCGM_HEALTH_RESULT_FAIL,
            code,
            format!("{msg} {name}"),
        );
    };
    for (shift, bad, name) in FABRIC_HEALTH {
        if (mask >> shift) & 0x3 == bad {
            report(name);
        }
    }
    if !matches!((mask >> 8) & 0xf, 0 | 1) {
        report("Incorrect Configuration");
    }
}

/// The fabric manager's training state (`DCGM_FI_DEV_FABRIC_MANAGER_STATUS`, latest sample):
/// in progress warns; not started, failed, unrecognized, NVML too old or an unknown value
/// fails; success and not supported pass.
fn fabric_manager(c: &Ctx, out: &mut Vec<Incident>) {
    let Some(v) = latest(c, DCGM_FI_DEV_FABRIC_MANAGER_STATUS) else {
        return;
    };
    let unknown;
    let (state, detail, health) = match v {
        DCGM_FM_SUCCESS | DCGM_FM_NOT_SUPPORTED => return,
        DCGM_FM_IN_PROGRESS => (
            "In Progress",
            "Fabric Manager training in progress.",
            DCGM_HEALTH_RESULT_WARN,
        ),
        DCGM_FM_NOT_STARTED => (
            "Not Started",
            "Fabric Manager training has not started.",
            DCGM_HEALTH_RESULT_FAIL,
        ),
        DCGM_FM_FAILURE => (
            "Failed",
            "Fabric Manager training failed.",
            DCGM_HEALTH_RESULT_FAIL,
        ),
        DCGM_FM_UNRECOGNIZED => (
            "Unrecognized",
            "Fabric Manager status is unrecognized.",
            DCGM_HEALTH_RESULT_FAIL,
        ),
        DCGM_FM_NVML_TOO_OLD => (
            "NvmlTooOld",
            "NVML version is too old to query Fabric Manager status.",
            DCGM_HEALTH_RESULT_FAIL,
        ),
        _ => {
            unknown = format!("Unknown Fabric Manager status code: {v}");
            ("Unknown", unknown.as_str(), DCGM_HEALTH_RESULT_FAIL)
        }
    };
    let gpu = c.entity.entityId;
    let code = DCGM_FR_FABRIC_PROBE_STATE;
    let msg = full(code, format!("GPU {gpu}: Fabric State is {state} ({v})."));
    c.report(
        out,
        DCGM_HEALTH_WATCH_NVLINK,
        health,
        code,
        format!("{msg} {detail}"),
    );
}

const DCGM_FM_NOT_SUPPORTED: i64 = DcgmFMStatusNotSupported as i64;
const DCGM_FM_NOT_STARTED: i64 = DcgmFMStatusNotStarted as i64;
const DCGM_FM_IN_PROGRESS: i64 = DcgmFMStatusInProgress as i64;
const DCGM_FM_SUCCESS: i64 = DcgmFMStatusSuccess as i64;
const DCGM_FM_FAILURE: i64 = DcgmFMStatusFailure as i64;
const DCGM_FM_UNRECOGNIZED: i64 = DcgmFMStatusUnrecognized as i64;
const DCGM_FM_NVML_TOO_OLD: i64 = DcgmFMStatusNvmlTooOld as i64;

/// Fails the GPU for each of its links that is down, unless it is in MIG mode.
fn links_down(c: &Ctx, out: &mut Vec<Incident>) {
    if c.entity.entityGroupId != DCGM_FE_GPU {
        return;
    }
    let gpu = c.entity.entityId;
    // The GPU's MIG mode as its latest `DCGM_FI_DEV_MIG_MODE` sample says.
    if latest(c, DCGM_FI_DEV_MIG_MODE).is_some_and(|m| m != 0) {
        return;
    }
    for link in 0..LINKS_PER_GPU {
        if c.src.machine.link_state(DCGM_FE_GPU, gpu, link) == DcgmNvLinkLinkStateDown {
            let code = DCGM_FR_NVLINK_DOWN;
            c.report(
                out,
                DCGM_HEALTH_WATCH_NVLINK,
                DCGM_HEALTH_RESULT_FAIL,
                code,
                full(
                    code,
                    format!("GPU {gpu}'s NvLink link {link} is currently down"),
                ),
            );
        }
    }
}

/// Reports each counter that grew in the last minute.
fn counters(c: &Ctx, out: &mut Vec<Incident>) {
    let gpu = c.entity.entityId;
    for (field, critical) in COUNTERS {
        let tag = field_by_id(field).map_or("", |f| f.tag);
        let Some((first, last)) = first_last(c, field, c.start) else {
            continue;
        };
        let errors = (last - first).abs();
        if errors < ERROR_LIMIT {
            continue;
        }
        let per_second = errors as f64 / c.window_s();
        let (health, code, message) = if critical {
            (
                DCGM_HEALTH_RESULT_FAIL,
                DCGM_FR_NVLINK_ERROR_CRITICAL,
                format!(
                    "Detected {errors} {tag} NvLink errors on GPU {gpu}'s NVLink (should be 0)"
                ),
            )
        } else if per_second >= CRC_PER_SECOND_LIMIT {
            (
                DCGM_HEALTH_RESULT_FAIL,
                DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD,
                format!(
                    "{per_second:.1} {tag} NvLink errors found occuring per second on GPU {gpu}, exceeding the limit of 100 per second."
                ),
            )
        } else {
            (
                DCGM_HEALTH_RESULT_WARN,
                DCGM_FR_NVLINK_ERROR_THRESHOLD,
                format!(
                    "Detected {errors} {tag} NvLink errors on GPU {gpu}'s NVLink which exceeds threshold of {ERROR_LIMIT}"
                ),
            )
        };
        c.report(
            out,
            DCGM_HEALTH_WATCH_NVLINK,
            health,
            code,
            full(code, message),
        );
    }
}
