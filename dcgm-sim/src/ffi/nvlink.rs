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
///
/// As libdcgm 4.6.0: `numGpus == 0` asks for every GPU (ids and count written back); otherwise
/// the first `numGpus` entries name the GPUs (at most the node's GPU count of them are served,
/// `numGpus` is left as given). Each served row gets one status per GPU of the node, "not
/// supported" towards the GPU itself; the columns past the node's GPU count, and the rows past
/// what is served, keep what the caller put there. An id with no GPU behind it fails the whole
/// call with `DCGM_ST_NVML_NOT_LOADED` (the driver refuses the pair) and leaves the struct as it
/// was.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetNvLinkP2PStatus(
    dcgmHandle: dcgmHandle_t,
    linkStatus: *mut dcgmNvLinkP2PStatus_v1,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let st = unsafe { versioned(linkStatus, &[dcgmNvLinkP2PStatus_version1]) }?;
        with_engine(dcgmHandle, |e| {
            let m = &e.machine;
            let count = m.gpu_count().min(DCGM_MAX_NUM_DEVICES as u32);
            let all = st.numGpus == 0;
            let served = if all { count } else { st.numGpus.min(count) } as usize;
            let mut rows = Vec::with_capacity(served);
            for i in 0..served {
                let g = if all { i as u32 } else { st.gpus[i].entityId };
                if g as usize >= DCGM_MAX_NUM_DEVICES {
                    return Err(DCGM_ST_BADPARAM);
                }
                if g >= count {
                    return Err(DCGM_ST_NVML_NOT_LOADED);
                }
                let row: Vec<dcgmNvLinkGpuP2PStatus_t> =
                    (0..count).map(|j| p2p_status(m, g, j)).collect();
                rows.push((g, row));
            }
            for (slot, (g, row)) in st.gpus.iter_mut().zip(rows) {
                slot.entityId = g;
                slot.linkStatus[..row.len()].copy_from_slice(&row);
            }
            if all {
                st.numGpus = count;
            }
            Ok(())
        })
    })
}

/// The NVLink peer-to-peer status from GPU `g` to GPU `j`, as the driver would answer it:
/// never towards itself; needs NVLinks on both ends, and an NvSwitch fabric between them.
fn p2p_status(m: &crate::machine::Machine, g: u32, j: u32) -> dcgmNvLinkGpuP2PStatus_t {
    let links = |g: u32| m.cfg.gpus.get(g as usize).map_or(0, |c| c.nvlinks);
    if g == j {
        DcgmNvLinkP2pStatusNotSupported
    } else if links(g) == 0 || links(j) == 0 {
        DcgmNvLinkP2pStatusGpuNotSupported
    } else if m.cfg.nvswitches == 0 {
        DcgmNvLinkP2pStatusTopologyNotSupported
    } else {
        DcgmNvLinkP2pStatusOK
    }
}
