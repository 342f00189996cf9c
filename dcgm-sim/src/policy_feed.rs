//! The field values the policy manager hears, as libdcgm 4.6.0's does: each new injected
//! sample of a policy field of a GPU is judged against the GPU's policy when it arrives.
//!
//! - Counters (`DCGM_FI_DEV_ECC_DBE_VOL_DEV` for DBEs, `DCGM_FI_DEV_PCIE_REPLAY_TOTAL`, the four
//!   NVLink error totals) violate when the newest of the two latest samples up to the new
//!   one's time is larger than the other; the callback carries the newest count.
//! - An XID sample always violates, with its XID.
//! - A GPU temperature above the policy's limit, or a power draw above it, violates.
//! - Retired pages (single- plus double-bit) above the policy's limit violate.
//!
//! Only GPUs with a policy that has the condition are judged (`dcgmPolicySet`). A
//! registration hears one violation of each condition per 5 s of sample time.

use std::collections::{HashMap, HashSet};

use dcgm_sys::*;

use crate::cache::{Cache, key, unkey};
use crate::sim_value::SimValue;

/// The fields the policy manager listens to.
pub const POLICY_FIELDS: [u16; 11] = [
    DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL,
    DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL,
    DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL,
    DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_TOTAL,
    DCGM_FI_DEV_ECC_DBE_VOL_DEV,
    DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL,
    DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL,
    DCGM_FI_DEV_GPU_TEMP_CELSIUS,
    DCGM_FI_DEV_XID_ERROR,
    DCGM_FI_DEV_BOARD_POWER_WATTS,
    DCGM_FI_DEV_PCIE_REPLAY_TOTAL,
];

/// Least sample time between two callbacks of one condition to one registration.
pub const MIN_SIGNAL_INTERVAL_US: i64 = 5_000_000;

/// What the feed has heard: the samples already judged, and when each registration last
/// heard each condition.
#[derive(Debug, Default)]
pub struct Feed {
    seen: HashSet<(u64, i64)>,
    /// (group, user data, condition) → sample time of the last callback.
    last_sent: HashMap<(usize, u64, u32), i64>,
}

impl Feed {
    /// Whether a registration may hear a violation of `condition` at sample time `ts` (and
    /// notes that it does).
    pub fn may_signal(&mut self, group: usize, user: u64, condition: u32, ts: i64) -> bool {
        let k = (group, user, condition);
        if self
            .last_sent
            .get(&k)
            .is_some_and(|last| ts - last < MIN_SIGNAL_INTERVAL_US)
        {
            return false;
        }
        self.last_sent.insert(k, ts);
        true
    }
}

/// A violation heard from a sample.
pub struct Heard {
    pub gpu: u32,
    pub response: dcgmPolicyCallbackResponse_v2,
}

fn int(v: &SimValue) -> Option<i64> {
    match v {
        SimValue::Int(n) if !dcgm_int64_is_blank(*n) => Some(*n),
        _ => None,
    }
}

fn count(v: i64) -> Option<u32> {
    u32::try_from(v).ok()
}

/// The two latest integer samples of a GPU's field up to `ts`, newest first.
fn latest_two(cache: &Cache, gpu: u32, field: u16, ts: i64) -> Option<(i64, i64)> {
    let w = cache.watches.get(&key(DCGM_FE_GPU, gpu, field))?;
    let mut it = w.samples.iter().rev().filter(|s| s.ts <= ts);
    let a = int(&it.next()?.value)?;
    let b = int(&it.next()?.value)?;
    Some((a, b))
}

fn latest_int(cache: &Cache, gpu: u32, field: u16) -> Option<i64> {
    cache
        .watches
        .get(&key(DCGM_FE_GPU, gpu, field))
        .and_then(|w| w.samples.back())
        .and_then(|s| int(&s.value))
}

impl Feed {
    /// Marks every sample the cache holds now as heard, without judging it (a registration
    /// hears only what arrives after it).
    pub fn mark_heard(&mut self, cache: &Cache) {
        self.seen
            .extend(policy_samples(cache).map(|(k, ts, _)| (k, ts)));
    }

    /// Judges the samples that arrived in the cache since the last call against each GPU's
    /// policy (`policy_of`; `None`: the GPU has none).
    pub fn hear(
        &mut self,
        cache: &Cache,
        policy_of: impl Fn(u32) -> Option<dcgmPolicy_v1>,
    ) -> Vec<Heard> {
        let mut new: Vec<(u64, i64, SimValue)> = policy_samples(cache)
            .filter(|(k, ts, _)| !self.seen.contains(&(*k, *ts)))
            .collect();
        new.sort_by_key(|(_, ts, _)| *ts);
        let mut out = Vec::new();
        for (k, ts, value) in new {
            self.seen.insert((k, ts));
            let (_, gpu, field) = unkey(k);
            let Some(policy) = policy_of(gpu) else {
                continue;
            };
            if let Some(response) = judge(cache, &policy, gpu, field, ts, &value) {
                out.push(Heard { gpu, response });
            }
        }
        out
    }
}

/// The injected samples of the policy fields of GPUs. (Scripted events reach the policy
/// manager as events, `violations`; a watched field's model samples are not judged again.)
fn policy_samples(cache: &Cache) -> impl Iterator<Item = (u64, i64, SimValue)> + '_ {
    cache.watches.iter().flat_map(|(k, w)| {
        let (group, _, field) = unkey(*k);
        let wanted = w.injected && group == DCGM_FE_GPU && POLICY_FIELDS.contains(&field);
        w.samples
            .iter()
            .filter(move |_| wanted)
            .map(move |s| (*k, s.ts, s.value.clone()))
    })
}

fn limit(p: &dcgmPolicy_v1, idx: dcgmPolicyConditionIdx_t) -> u64 {
    // SAFETY: both members are plain integers; limits are written as `llval`.
    unsafe { p.parms[idx as usize].val.llval }
}

/// The violation one new sample makes under a GPU's policy, if any.
fn judge(
    cache: &Cache,
    p: &dcgmPolicy_v1,
    gpu: u32,
    field: u16,
    ts: i64,
    value: &SimValue,
) -> Option<dcgmPolicyCallbackResponse_v2> {
    let mut r: dcgmPolicyCallbackResponse_v2 = zeroed();
    r.version = dcgmPolicyCallbackResponse_version2;
    r.gpuId = gpu;
    let has = |c: u32| p.condition & c != 0;
    let grew = || {
        latest_two(cache, gpu, field, ts)
            .and_then(|(cur, prev)| Some((count(cur)?, count(prev)?)))
            .filter(|(cur, prev)| cur > prev)
            .map(|(cur, _)| cur)
    };
    r.condition = match field {
        DCGM_FI_DEV_ECC_DBE_VOL_DEV if has(DCGM_POLICY_COND_DBE) => {
            r.val.dbe = dcgmPolicyConditionDbe_t {
                timestamp: ts,
                location: DEVICE,
                numerrors: grew()?,
            };
            DCGM_POLICY_COND_DBE
        }
        DCGM_FI_DEV_PCIE_REPLAY_TOTAL if has(DCGM_POLICY_COND_PCI) => {
            r.val.pci = dcgmPolicyConditionPci_t {
                timestamp: ts,
                counter: grew()?,
            };
            DCGM_POLICY_COND_PCI
        }
        DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL
        | DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL
        | DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL
        | DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_TOTAL
            if has(DCGM_POLICY_COND_NVLINK) =>
        {
            r.val.nvlink = dcgmPolicyConditionNvlink_t {
                timestamp: ts,
                fieldId: field,
                counter: grew()?,
            };
            DCGM_POLICY_COND_NVLINK
        }
        DCGM_FI_DEV_XID_ERROR if has(DCGM_POLICY_COND_XID) => {
            r.val.xid = dcgmPolicyConditionXID_t {
                timestamp: ts,
                errnum: count(int(value)?)?,
            };
            DCGM_POLICY_COND_XID
        }
        DCGM_FI_DEV_GPU_TEMP_CELSIUS if has(DCGM_POLICY_COND_THERMAL) => {
            let t = int(value)? as u32;
            if u64::from(t) <= limit(p, DCGM_POLICY_COND_IDX_THERMAL) {
                return None;
            }
            r.val.thermal = dcgmPolicyConditionThermal_t {
                timestamp: ts,
                thermalViolation: t,
            };
            DCGM_POLICY_COND_THERMAL
        }
        DCGM_FI_DEV_BOARD_POWER_WATTS if has(DCGM_POLICY_COND_POWER) => {
            let SimValue::Dbl(w) = value else {
                return None;
            };
            if dcgm_fp64_is_blank(*w) {
                return None;
            }
            let w = *w as u32;
            if u64::from(w) <= limit(p, DCGM_POLICY_COND_IDX_POWER) {
                return None;
            }
            r.val.power = dcgmPolicyConditionPower_t {
                timestamp: ts,
                powerViolation: w,
            };
            DCGM_POLICY_COND_POWER
        }
        DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL | DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL
            if has(DCGM_POLICY_COND_MAX_PAGES_RETIRED) =>
        {
            let this = count(int(value)?)?;
            let other_field = if field == DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL {
                DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL
            } else {
                DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL
            };
            let other = count(latest_int(cache, gpu, other_field)?)?;
            let (sbe, dbe) = if field == DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL {
                (other, this)
            } else {
                (this, other)
            };
            if u64::from(sbe) + u64::from(dbe) <= limit(p, DCGM_POLICY_COND_IDX_MAX_PAGES_RETIRED) {
                return None;
            }
            r.val.mpr = dcgmPolicyConditionMpr_t {
                timestamp: ts,
                sbepages: sbe,
                dbepages: dbe,
            };
            DCGM_POLICY_COND_MAX_PAGES_RETIRED
        }
        _ => return None,
    };
    Some(r)
}
