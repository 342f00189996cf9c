//! Policies: per-group violation conditions and thresholds, and callback registrations. Which
//! events violate a policy is decided in `violations`; the callbacks run on `policy_thread`.

use dcgm_sys::*;

use super::modules::module_ok;
use super::{guard, guard_symbol, versioned};
use crate::engine::{PolicyRegistration, now_us};
use crate::policy_callback::PolicyCallback;
use crate::policy_thread;
use crate::sim::with_engine;
use crate::violations::policy_for;

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
        if p.condition & !DCGM_POLICY_COND_ALL != 0 || p.mode > DCGM_POLICY_MODE_MANUAL {
            return Err(DCGM_ST_BADPARAM);
        }
        let p = *p;
        with_engine(pDcgmHandle, |e| {
            module_ok(e, DcgmModuleIdPolicy)?;
            if e.group_gpus(groupId)?.is_empty() {
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
            let gpus = e.group_gpus(groupId)?;
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
    guard_symbol("dcgmPolicyRegister_v2", || {
        let callback = PolicyCallback::current(callback, userData);
        let Some(callback) = callback.filter(|_| valid_condition(condition)) else {
            return Err(DCGM_ST_BADPARAM);
        };
        register(pDcgmHandle, groupId, condition, callback)
    })
}

/// DCGM 3.x's registration (4.0 replaced it by `dcgmPolicyRegister_v2`): `beginCallback` and
/// then `finishCallback` receive each violation as a `dcgmPolicyCallbackResponse_v1`, without
/// user data. As in 3.3.9, a NULL callback is skipped and a zero condition is `BADPARAM`.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmPolicyRegister(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    condition: dcgmPolicyCondition_t,
    beginCallback: fpRecvUpdates_v1,
    finishCallback: fpRecvUpdates_v1,
) -> dcgmReturn_t {
    guard_symbol("dcgmPolicyRegister", || {
        if !valid_condition(condition) {
            return Err(DCGM_ST_BADPARAM);
        }
        let callback = PolicyCallback::legacy(beginCallback, finishCallback);
        register(pDcgmHandle, groupId, condition, callback)
    })
}

fn valid_condition(condition: dcgmPolicyCondition_t) -> bool {
    condition != 0 && condition & !DCGM_POLICY_COND_ALL == 0
}

fn register(
    handle: dcgmHandle_t,
    group: dcgmGpuGrp_t,
    condition: dcgmPolicyCondition_t,
    callback: PolicyCallback,
) -> Result<(), dcgmReturn_t> {
    with_engine(handle, |e| {
        module_ok(e, DcgmModuleIdPolicy)?;
        e.group_entities(group)?;
        // Values injected before the registration are not its violations.
        e.mark_policy_samples_heard();
        e.registrations.push(PolicyRegistration {
            group,
            condition,
            callback,
            delivered_until: now_us(),
        });
        Ok(())
    })?;
    policy_thread::ensure_running();
    Ok(())
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmPolicyUnregister(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    condition: dcgmPolicyCondition_t,
) -> dcgmReturn_t {
    guard(|| {
        if condition & !DCGM_POLICY_COND_ALL != 0 {
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
