//! Policies: per-group violation conditions and thresholds, callback registrations, and the
//! matching of scripted events against them (the deliveries run on `policy_thread`).
//!
//! A registration receives each event that happens after it was registered, on the GPUs of its
//! group, once, when the event's condition is in the registration's mask. When a policy is set
//! for the group (or, failing that, for another group holding the GPU), the condition must also
//! be in the policy's mask and the event must cross the policy's threshold (temperature and
//! power above the limit, retired pages at or above the limit); without any policy every
//! matching event is delivered.

use dcgm_sys::*;

use super::health::group_gpus;
use super::modules::module_ok;
use super::{guard, versioned};
use crate::engine::{Engine, PolicyRegistration, Sim, now_us, with_engine};
use crate::model::Event;
use crate::policy_thread;

/// Every condition bit.
const ALL_CONDITIONS: u32 = DCGM_POLICY_COND_DBE
    | DCGM_POLICY_COND_PCI
    | DCGM_POLICY_COND_MAX_PAGES_RETIRED
    | DCGM_POLICY_COND_THERMAL
    | DCGM_POLICY_COND_POWER
    | DCGM_POLICY_COND_NVLINK
    | DCGM_POLICY_COND_XID;

type Callback = unsafe extern "C" fn(*mut dcgmPolicyCallbackResponse_t, u64) -> std::ffi::c_int;

/// A callback to make, collected under the simulator lock and made without it.
pub struct Delivery {
    engine: String,
    group: usize,
    condition: u32,
    callback: Callback,
    user_data: u64,
    response: dcgmPolicyCallbackResponse_v2,
}

impl Delivery {
    /// Calls the client's callback with a copy of the response.
    pub fn deliver(&self) {
        let mut r = self.response;
        // SAFETY: the client registered this callback with this signature; the response lives
        // for the duration of the call.
        unsafe { (self.callback)(&mut r, self.user_data) };
    }
}

fn same_registration(r: &PolicyRegistration, group: usize, cb: Callback, user_data: u64) -> bool {
    r.group == group
        && r.user_data == user_data
        && r.callback.is_some_and(|c| std::ptr::fn_addr_eq(c, cb))
}

/// The value of a policy parameter, whichever member its tag names.
fn param(p: &dcgmPolicy_v1, idx: dcgmPolicyConditionIdx_t) -> u64 {
    let c = &p.parms[idx as usize];
    // SAFETY: both union members are plain integers; the tag says which one was written.
    unsafe {
        if c.tag == LLONG {
            c.val.llval
        } else {
            u64::from(c.val.boolean)
        }
    }
}

/// The policy that applies to a GPU of `group`: the group's own, else the first one (by group
/// id) of a group holding the GPU.
fn policy_for(e: &Engine, group: usize, gpu: u32) -> Option<dcgmPolicy_v1> {
    if let Some(p) = e.policies.get(&group) {
        return Some(*p);
    }
    let mut ids: Vec<usize> = e.policies.keys().copied().collect();
    ids.sort_unstable();
    ids.into_iter()
        .find(|g| group_gpus(e, *g).is_ok_and(|v| v.contains(&gpu)))
        .and_then(|g| e.policies.get(&g).copied())
}

/// The condition an event violates under the policy of `group`, with the filled response.
fn violation(e: &Engine, group: usize, ev: &Event) -> Option<dcgmPolicyCallbackResponse_v2> {
    let d = &e.dynamics;
    let policy = policy_for(e, group, ev.gpu);
    let limit = |idx| policy.as_ref().map_or(0, |p| param(p, idx));
    let mut r: dcgmPolicyCallbackResponse_v2 = zeroed();
    r.version = dcgmPolicyCallbackResponse_version2;
    r.gpuId = ev.gpu;
    let ts = ev.ts;
    let total = |kind: &str| {
        d.event_total(ev.gpu, kind, ts, false)
            .clamp(0, u32::MAX as i64) as u32
    };
    let value = ev.value.clamp(0, u32::MAX as i64) as u32;
    r.condition = match ev.kind.as_str() {
        "dbe" => {
            r.val.dbe = dcgmPolicyConditionDbe_t {
                timestamp: ts,
                location: DEVICE,
                numerrors: value.max(1),
            };
            DCGM_POLICY_COND_DBE
        }
        "pcie_replay" => {
            r.val.pci = dcgmPolicyConditionPci_t {
                timestamp: ts,
                counter: total("pcie_replay"),
            };
            DCGM_POLICY_COND_PCI
        }
        "retired_pages" => {
            let pages = total("retired_pages");
            if u64::from(pages) < limit(DCGM_POLICY_COND_IDX_MAX_PAGES_RETIRED) {
                return None;
            }
            r.val.mpr = dcgmPolicyConditionMpr_t {
                timestamp: ts,
                sbepages: 0,
                dbepages: pages,
            };
            DCGM_POLICY_COND_MAX_PAGES_RETIRED
        }
        "thermal" => {
            let max = limit(DCGM_POLICY_COND_IDX_THERMAL);
            if max > 0 && u64::from(value) <= max {
                return None;
            }
            r.val.thermal = dcgmPolicyConditionThermal_t {
                timestamp: ts,
                thermalViolation: value,
            };
            DCGM_POLICY_COND_THERMAL
        }
        "power" => {
            let max = limit(DCGM_POLICY_COND_IDX_POWER);
            if max > 0 && u64::from(value) <= max {
                return None;
            }
            r.val.power = dcgmPolicyConditionPower_t {
                timestamp: ts,
                powerViolation: value,
            };
            DCGM_POLICY_COND_POWER
        }
        "nvlink" => {
            r.val.nvlink = dcgmPolicyConditionNvlink_t {
                timestamp: ts,
                fieldId: DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL,
                counter: total("nvlink"),
            };
            DCGM_POLICY_COND_NVLINK
        }
        "xid" => {
            r.val.xid = dcgmPolicyConditionXID_t {
                timestamp: ts,
                errnum: value,
            };
            DCGM_POLICY_COND_XID
        }
        _ => return None,
    };
    if policy.is_some_and(|p| p.condition & r.condition == 0) {
        return None;
    }
    Some(r)
}

/// Collects the callbacks due for events that happened since each registration's last pass, on
/// AUTO engines (and on every engine when `manual`, for `dcgmPolicyTrigger`).
pub fn collect(s: &mut Sim, manual: bool) -> Vec<Delivery> {
    if !s.initialized {
        return Vec::new();
    }
    let now = now_us();
    let mut names: Vec<String> = s.engines.keys().cloned().collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let Some(e) = s.engines.get_mut(&name) else {
            continue;
        };
        if e.registrations.is_empty() || (e.mode != DCGM_OPERATION_MODE_AUTO && !manual) {
            continue;
        }
        for i in 0..e.registrations.len() {
            let reg = e.registrations[i].clone();
            if let Some(cb) = reg.callback {
                let gpus = group_gpus(e, reg.group).unwrap_or_default();
                for ev in e.dynamics.events.iter().filter(|ev| {
                    ev.seen_at() > reg.delivered_until
                        && ev.seen_at() <= now
                        && gpus.contains(&ev.gpu)
                }) {
                    let Some(resp) = violation(e, reg.group, ev) else {
                        continue;
                    };
                    if reg.condition & resp.condition != 0 {
                        out.push(Delivery {
                            engine: name.clone(),
                            group: reg.group,
                            condition: resp.condition,
                            callback: cb,
                            user_data: reg.user_data,
                            response: resp,
                        });
                    }
                }
            }
            e.registrations[i].delivered_until = now;
        }
    }
    out
}

/// Whether the registration a delivery came from still wants it (it may have been
/// unregistered since the delivery was collected).
pub fn still_registered(s: &Sim, d: &Delivery) -> bool {
    s.initialized
        && s.engines.get(&d.engine).is_some_and(|e| {
            e.registrations.iter().any(|r| {
                same_registration(r, d.group, d.callback, d.user_data)
                    && r.condition & d.condition != 0
            })
        })
}

/// # Safety
///
/// `policy` must be NULL or a versioned `dcgmPolicy_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmPolicySet(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    policy: *mut dcgmPolicy_t,
    statusHandle: dcgmStatus_t,
) -> dcgmReturn_t {
    let _ = statusHandle;
    guard(|| {
        // SAFETY: per this function's contract.
        let p = unsafe { versioned(policy, &[dcgmPolicy_version1]) }?;
        if p.condition & !ALL_CONDITIONS != 0 || p.mode > DCGM_POLICY_MODE_MANUAL {
            return Err(DCGM_ST_BADPARAM);
        }
        let p = *p;
        with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdPolicy)?;
            if group_gpus(e, groupId)?.is_empty() {
                return Err(DCGM_ST_GROUP_IS_EMPTY);
            }
            e.policies.insert(groupId, p);
            Ok(())
        })
    })
}

/// # Safety
///
/// `policy` must be NULL or point to `count` policies, the first with its version set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmPolicyGet(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    count: std::ffi::c_int,
    policy: *mut dcgmPolicy_t,
    statusHandle: dcgmStatus_t,
) -> dcgmReturn_t {
    let _ = statusHandle;
    guard(|| {
        if count <= 0 {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: per this function's contract.
        unsafe { versioned(policy, &[dcgmPolicy_version1]) }?;
        // SAFETY: `count` policies per the contract.
        let list = unsafe { std::slice::from_raw_parts_mut(policy, count as usize) };
        with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdPolicy)?;
            let gpus = group_gpus(e, groupId)?;
            for (dst, &gpu) in list.iter_mut().zip(&gpus) {
                *dst = policy_for(e, groupId, gpu).unwrap_or_else(|| {
                    let mut p: dcgmPolicy_v1 = zeroed();
                    p.version = dcgmPolicy_version1;
                    p
                });
            }
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmPolicyRegister_v2(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    condition: dcgmPolicyCondition_t,
    callback: fpRecvUpdates,
    userData: u64,
) -> dcgmReturn_t {
    guard(|| {
        if callback.is_none() || condition == 0 || condition & !ALL_CONDITIONS != 0 {
            return Err(DCGM_ST_BADPARAM);
        }
        with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdPolicy)?;
            e.group_entities(groupId)?;
            e.registrations.push(PolicyRegistration {
                group: groupId,
                condition,
                callback,
                user_data: userData,
                delivered_until: now_us(),
            });
            Ok(())
        })?;
        policy_thread::ensure_running();
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmPolicyUnregister(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    condition: dcgmPolicyCondition_t,
) -> dcgmReturn_t {
    guard(|| {
        if condition & !ALL_CONDITIONS != 0 {
            return Err(DCGM_ST_BADPARAM);
        }
        with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdPolicy)?;
            e.group_entities(groupId)?;
            for r in e.registrations.iter_mut().filter(|r| r.group == groupId) {
                r.condition &= !condition;
            }
            e.registrations.retain(|r| r.condition != 0);
            Ok(())
        })?;
        // A callback collected before the removal may still be running: wait for it, so that
        // none arrives after this returns (a callback unregistering itself cannot wait).
        if !policy_thread::on_worker_thread()
            && !policy_thread::wait_idle(policy_thread::WAIT_LIMIT)
        {
            return Err(DCGM_ST_IN_USE);
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmPolicyTrigger(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard(|| {
        with_engine(pDcgmHandle, |e| module_ok(e, DcgmModuleIdPolicy))?;
        policy_thread::trigger();
        Ok(())
    })
}
