//! Health watches: which subsystems a group watches, and the incidents the scripted events
//! raise between two checks.

use dcgm_sys::*;

use super::modules::module_ok;
use super::{guard, out, versioned, write_str};
use crate::engine::{Engine, now_us, with_engine};
use crate::model::{Dynamics, Event};

/// Slowdown temperature of the simulated GPUs, in °C: thermal events at or above it fail.
pub const SLOWDOWN_TEMP_C: i64 = 90;

/// An incident a scripted event raises.
#[derive(Debug, Clone)]
pub struct Incident {
    pub system: dcgmHealthSystems_t,
    pub health: dcgmHealthWatchResults_t,
    pub code: dcgmError_t,
    pub gpu: u32,
    pub message: String,
}

/// XIDs that point at GPU memory (uncorrectable ECC, row remapping, contained or uncontained
/// memory errors).
const MEMORY_XIDS: [i64; 6] = [48, 63, 64, 92, 94, 95];
/// XIDs usually caused by the application rather than the GPU.
const APPLICATION_XIDS: [i64; 5] = [13, 31, 43, 45, 68];
/// XIDs of the GPU's firmware or driver (GSP errors and timeouts).
const DRIVER_XIDS: [i64; 3] = [119, 120, 121];

/// The incident an event raises, with the subsystem it belongs to.
pub fn incident_for(d: &Dynamics, ev: &Event) -> Option<Incident> {
    use DCGM_HEALTH_RESULT_FAIL as FAIL;
    use DCGM_HEALTH_RESULT_WARN as WARN;
    let g = ev.gpu;
    let v = ev.value;
    let (system, health, code, message) = match ev.kind.as_str() {
        "xid" => {
            if v == 79 {
                (
                    DCGM_HEALTH_WATCH_PCIE,
                    FAIL,
                    DCGM_FR_FALLEN_OFF_BUS,
                    format!(
                        "GPU {g} reported XID 79: it dropped off the PCIe bus and needs a node reboot"
                    ),
                )
            } else if MEMORY_XIDS.contains(&v) {
                let code = match v {
                    94 => DCGM_FR_CONTAINED_ERROR,
                    95 => DCGM_FR_UNCONTAINED_ERROR,
                    _ => DCGM_FR_XID_ERROR,
                };
                (
                    DCGM_HEALTH_WATCH_MEM,
                    FAIL,
                    code,
                    format!(
                        "GPU {g} reported XID {v}, a GPU memory error; drain the GPU and reset it"
                    ),
                )
            } else if v == 74 {
                (
                    DCGM_HEALTH_WATCH_NVLINK,
                    FAIL,
                    DCGM_FR_XID_ERROR,
                    format!(
                        "GPU {g} reported XID 74, an NVLink error; reset the GPU to retrain its links"
                    ),
                )
            } else if DRIVER_XIDS.contains(&v) {
                (
                    DCGM_HEALTH_WATCH_DRIVER,
                    FAIL,
                    DCGM_FR_XID_ERROR,
                    format!("GPU {g} reported XID {v}: its firmware stopped answering the driver"),
                )
            } else if APPLICATION_XIDS.contains(&v) {
                (
                    DCGM_HEALTH_WATCH_SM,
                    WARN,
                    DCGM_FR_XID_ERROR,
                    format!("GPU {g} reported XID {v}, usually a fault of the running application"),
                )
            } else {
                (
                    DCGM_HEALTH_WATCH_SM,
                    FAIL,
                    DCGM_FR_XID_ERROR,
                    format!(
                        "GPU {g} reported XID {v}; see the driver's XID catalogue for the recovery action"
                    ),
                )
            }
        }
        "dbe" => (
            DCGM_HEALTH_WATCH_MEM,
            FAIL,
            DCGM_FR_VOLATILE_DBE_DETECTED,
            format!(
                "GPU {g} reported {} uncorrectable (double-bit) ECC error(s); drain the GPU and reset it",
                v.max(1)
            ),
        ),
        "sbe" => (
            DCGM_HEALTH_WATCH_MEM,
            WARN,
            DCGM_FR_VOLATILE_SBE_DETECTED,
            format!("GPU {g} corrected {} single-bit ECC error(s)", v.max(1)),
        ),
        "retired_pages" => (
            DCGM_HEALTH_WATCH_MEM,
            FAIL,
            DCGM_FR_RETIRED_PAGES_LIMIT,
            format!(
                "GPU {g} retired {} more memory page(s), {} in total",
                v.max(1),
                d.event_total(g, "retired_pages", ev.ts, false)
            ),
        ),
        "pcie_replay" => (
            DCGM_HEALTH_WATCH_PCIE,
            WARN,
            DCGM_FR_PCI_REPLAY_RATE,
            format!(
                "GPU {g} saw {} PCIe replay(s) ({} in total); the link may be marginal",
                v.max(1),
                d.event_total(g, "pcie_replay", ev.ts, false)
            ),
        ),
        "thermal" => (
            DCGM_HEALTH_WATCH_THERMAL,
            if v >= SLOWDOWN_TEMP_C { FAIL } else { WARN },
            DCGM_FR_TEMP_VIOLATION,
            if v >= SLOWDOWN_TEMP_C {
                format!(
                    "GPU {g} reached {v} C, at or above its slowdown temperature of {SLOWDOWN_TEMP_C} C"
                )
            } else {
                format!("GPU {g} ran hot at {v} C")
            },
        ),
        "power" => (
            DCGM_HEALTH_WATCH_POWER,
            WARN,
            DCGM_FR_CLOCKS_EVENT_POWER,
            format!("GPU {g} drew {v} W and lowered its clocks to stay within its power limit"),
        ),
        "nvlink" => (
            DCGM_HEALTH_WATCH_NVLINK,
            FAIL,
            DCGM_FR_NVLINK_ERROR_CRITICAL,
            format!(
                "GPU {g} reported {} NVLink error(s) the link could not recover from",
                v.max(1)
            ),
        ),
        _ => return None,
    };
    Some(Incident {
        system,
        health,
        code,
        gpu: g,
        message,
    })
}

/// The GPUs behind a group's entities (MIG instances count as their GPU), in order, once each.
pub fn group_gpus(e: &Engine, group: usize) -> Result<Vec<u32>, dcgmReturn_t> {
    let mut gpus: Vec<u32> = Vec::new();
    for p in e.group_entities(group)? {
        if let Some(g) = e.machine.gpu_of(p.entityGroupId, p.entityId)
            && p.entityGroupId != DCGM_FE_LINK
            && !gpus.contains(&g)
        {
            gpus.push(g);
        }
    }
    Ok(gpus)
}

/// The incidents of the events of `gpus` in `(since, until]`, restricted to `systems`.
pub fn incidents(e: &Engine, gpus: &[u32], systems: u32, since: i64, until: i64) -> Vec<Incident> {
    e.dynamics
        .events
        .iter()
        .filter(|ev| ev.seen_at() > since && ev.seen_at() <= until && gpus.contains(&ev.gpu))
        .filter_map(|ev| incident_for(&e.dynamics, ev))
        .filter(|i| systems & i.system != 0)
        .collect()
}

fn set(handle: dcgmHandle_t, group: dcgmGpuGrp_t, systems: u32) -> Result<(), dcgmReturn_t> {
    with_engine(handle, |e| {
        module_ok(e, DcgmModuleIdHealth)?;
        e.group_entities(group)?;
        e.health.insert(group, systems);
        // The first check reports what happened from now on.
        e.health_checked.insert(group, now_us());
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmHealthSet(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    systems: dcgmHealthSystems_t,
) -> dcgmReturn_t {
    guard(|| set(pDcgmHandle, groupId, systems))
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
        if p.updateInterval < 0 || p.maxKeepAge < 0.0 {
            return Err(DCGM_ST_BADPARAM);
        }
        set(pDcgmHandle, p.groupId, p.systems)
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

/// # Safety
///
/// `results` must be NULL or a versioned `dcgmHealthResponse_v5`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmHealthCheck(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    results: *mut dcgmHealthResponse_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let r = unsafe { versioned(results, &[dcgmHealthResponse_version5]) }?;
        let found = with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdHealth)?;
            let gpus = group_gpus(e, groupId)?;
            let systems = e.health.get(&groupId).copied().unwrap_or(0);
            let now = now_us();
            let since = e.health_checked.get(&groupId).copied().unwrap_or(now);
            e.health_checked.insert(groupId, now);
            Ok(incidents(e, &gpus, systems, since, now))
        })?;
        let n = found.len().min(r.incidents.len());
        let mut overall = DCGM_HEALTH_RESULT_PASS;
        for (dst, inc) in r.incidents.iter_mut().zip(&found) {
            dst.system = inc.system;
            dst.health = inc.health;
            dst.error.code = inc.code;
            write_str(&mut dst.error.msg, &inc.message);
            dst.entityInfo = dcgmGroupEntityPair_t {
                entityGroupId: DCGM_FE_GPU,
                entityId: inc.gpu,
            };
            overall = overall.max(inc.health);
        }
        r.incidentCount = n as u32;
        r.overallHealth = overall;
        Ok(())
    })
}
