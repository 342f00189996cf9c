//! NVLink: the state of each link, and the peer-to-peer status between GPUs.

use dcgm_sys::*;

use super::{guard, versioned};
use crate::engine::with_engine;

/// # Safety
///
/// `linkStatus` must be NULL or a versioned `dcgmNvLinkStatus_v5`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetNvLinkLinkStatus(
    dcgmHandle: dcgmHandle_t,
    linkStatus: *mut dcgmNvLinkStatus_v5,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let s = unsafe { versioned(linkStatus, &[dcgmNvLinkStatus_version5]) }?;
        with_engine(dcgmHandle, |e| {
            let m = &e.machine;
            s.numGpus = m.gpu_count().min(DCGM_MAX_NUM_DEVICES as u32);
            for i in 0..(m.gpu_count() as usize).min(DCGM_MAX_NUM_DEVICES) {
                s.gpus[i].entityId = i as u32;
                for (l, st) in s.gpus[i].linkState.iter_mut().enumerate() {
                    *st = m.link_state(DCGM_FE_GPU, i as u32, l as u32);
                }
            }
            s.numNvSwitches = m.cfg.nvswitches.min(DCGM_MAX_NUM_SWITCHES as u32);
            for i in 0..s.numNvSwitches as usize {
                s.nvSwitches[i].entityId = i as u32;
                for (l, st) in s.nvSwitches[i].linkState.iter_mut().enumerate() {
                    *st = m.link_state(DCGM_FE_SWITCH, i as u32, l as u32);
                }
            }
            Ok(())
        })
    })
}

/// # Safety
///
/// `linkStatus` must be NULL or a versioned `dcgmNvLinkP2PStatus_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetNvLinkP2PStatus(
    dcgmHandle: dcgmHandle_t,
    linkStatus: *mut dcgmNvLinkP2PStatus_v1,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let st = unsafe { versioned(linkStatus, &[dcgmNvLinkP2PStatus_version1]) }?;
        with_engine(dcgmHandle, |e| {
            let count = e.machine.gpu_count();
            let ids: Vec<u32> = if st.numGpus == 0 {
                (0..count.min(st.gpus.len() as u32)).collect()
            } else {
                if st.numGpus as usize > st.gpus.len() {
                    return Err(DCGM_ST_BADPARAM);
                }
                let ids: Vec<u32> = st.gpus[..st.numGpus as usize]
                    .iter()
                    .map(|g| g.entityId)
                    .collect();
                if ids.iter().any(|&g| g >= count) {
                    return Err(DCGM_ST_BADPARAM);
                }
                ids
            };
            let links = |g: u32| e.machine.cfg.gpus.get(g as usize).map_or(0, |c| c.nvlinks);
            let fabric = e.machine.cfg.nvswitches > 0;
            for (slot, &g) in st.gpus.iter_mut().zip(&ids) {
                slot.entityId = g;
                for (j, s) in slot.linkStatus.iter_mut().enumerate() {
                    let j = j as u32;
                    *s = if j >= count {
                        DcgmNvLinkP2pStatusUnknown
                    } else if links(g) == 0 || links(j) == 0 {
                        DcgmNvLinkP2pStatusGpuNotSupported
                    } else if !fabric && g != j {
                        DcgmNvLinkP2pStatusTopologyNotSupported
                    } else {
                        DcgmNvLinkP2pStatusOK
                    };
                }
            }
            st.numGpus = ids.len() as u32;
            Ok(())
        })
    })
}
