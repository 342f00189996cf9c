//! Policy violations: which scripted events and injected values violate which group's
//! policy, and the callbacks they are due (collected here under the simulator lock, made by
//! `policy_thread` without it). Injected values are judged as libdcgm judges field values
//! (`policy_feed`); what follows is about scripted events.
//!
//! A registration receives each event that happens after it was registered, on the GPUs of its
//! group, once, when the event's condition is in the registration's mask. When a policy is set
//! for the group (or, failing that, for another group holding the GPU), the condition must also
//! be in the policy's mask and the event must cross the policy's threshold (temperature and
//! power above the limit, retired pages at or above the limit); without any policy every
//! matching event is delivered.

use dcgm_sys::*;

use crate::engine::{Engine, now_us};
use crate::model::Event;
use crate::policy_callback::PolicyCallback;
use crate::sim::Sim;

/// A callback to make, collected under the simulator lock and made without it.
pub struct Delivery {
    engine: String,
    group: usize,
    condition: u32,
    callback: PolicyCallback,
    response: dcgmPolicyCallbackResponse_v2,
}

impl Delivery {
    /// Calls the client's callback with a copy of the response.
    pub fn deliver(&self) {
        self.callback.deliver(&self.response);
    }
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
pub fn policy_for(e: &Engine, group: usize, gpu: u32) -> Option<dcgmPolicy_v1> {
    if let Some(p) = e.policies.get(&group) {
        return Some(*p);
    }
    let mut ids: Vec<usize> = e.policies.keys().copied().collect();
    ids.sort_unstable();
    ids.into_iter()
        .find(|g| e.group_gpus(*g).is_ok_and(|v| v.contains(&gpu)))
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
        if e.registrations.is_empty() || (e.mode() != DCGM_OPERATION_MODE_AUTO && !manual) {
            continue;
        }
        let heard = e.hear_policy_samples(gpu_policy);
        for i in 0..e.registrations.len() {
            let reg = e.registrations[i].clone();
            let cb = reg.callback;
            let gpus = e.group_gpus(reg.group).unwrap_or_default();
            for h in heard.iter().filter(|h| gpus.contains(&h.gpu)) {
                let cond = h.response.condition;
                if reg.condition & cond == 0 {
                    continue;
                }
                // SAFETY: every member of the union starts with the sample time.
                let ts = unsafe { h.response.val.xid.timestamp };
                if !e.policy_may_signal(reg.group, cb.key(), cond, ts) {
                    continue;
                }
                out.push(Delivery {
                    engine: name.clone(),
                    group: reg.group,
                    condition: cond,
                    callback: cb,
                    response: h.response,
                });
            }
            for ev in e.dynamics.events.iter().filter(|ev| {
                ev.seen_at() > reg.delivered_until
                    && ev.seen_at() <= now
                    && gpus.contains(&ev.gpu)
                    && !heard_from_injection(e, ev)
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
                        response: resp,
                    });
                }
            }
            e.registrations[i].delivered_until = now;
        }
    }
    out
}

/// The policy a GPU is judged by: that of the newest group (highest id) holding it.
fn gpu_policy(e: &Engine, gpu: u32) -> Option<dcgmPolicy_v1> {
    let mut ids: Vec<usize> = e.policies.keys().copied().collect();
    ids.sort_unstable();
    ids.into_iter()
        .rev()
        .find(|g| e.group_gpus(*g).is_ok_and(|v| v.contains(&gpu)))
        .and_then(|g| e.policies.get(&g).copied())
}

/// Whether an event stands for an injected sample of a field the policy feed hears (the
/// feed judges it; the event would deliver it twice).
fn heard_from_injection(e: &Engine, ev: &Event) -> bool {
    let field = match ev.kind.as_str() {
        "xid" => DCGM_FI_DEV_XID_ERROR,
        "pcie_replay" => DCGM_FI_DEV_PCIE_REPLAY_TOTAL,
        _ => return false,
    };
    e.cache
        .watches
        .get(&crate::cache::key(DCGM_FE_GPU, ev.gpu, field))
        .is_some_and(|w| w.injected && w.samples.iter().any(|s| s.ts == ev.ts))
}

/// Whether the registration a delivery came from still wants it (it may have been
/// unregistered since the delivery was collected).
pub fn still_registered(s: &Sim, d: &Delivery) -> bool {
    s.initialized
        && s.engines.get(&d.engine).is_some_and(|e| {
            e.registrations.iter().any(|r| {
                r.group == d.group
                    && r.callback.same_as(&d.callback)
                    && r.condition & d.condition != 0
            })
        })
}
