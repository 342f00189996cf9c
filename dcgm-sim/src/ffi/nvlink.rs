//! NVLink: the state of each link, and the peer-to-peer status between GPUs.

use dcgm_sys::*;

use super::{guard, guard_symbol, version_word, versioned};
use crate::personality::Struct;
use crate::sim::with_engine;

/// Fills an NVLink status struct of any layout (they differ in their array sizes only): the
/// node's GPUs and NvSwitches, each with the state of as many links as the layout has room
/// for.
macro_rules! fill_link_status {
    ($s:expr, $m:expr) => {{
        let (s, m) = ($s, $m);
        let gpus = (m.gpu_count() as usize).min(s.gpus.len());
        s.numGpus = gpus as u32;
        for (i, g) in s.gpus.iter_mut().enumerate().take(gpus) {
            g.entityId = i as u32;
            for (l, st) in g.linkState.iter_mut().enumerate() {
                *st = m.link_state(DCGM_FE_GPU, i as u32, l as u32);
            }
        }
        let switches = (m.cfg.nvswitches as usize).min(s.nvSwitches.len());
        s.numNvSwitches = switches as u32;
        for (i, w) in s.nvSwitches.iter_mut().enumerate().take(switches) {
            w.entityId = i as u32;
            for (l, st) in w.linkState.iter_mut().enumerate() {
                *st = m.link_state(DCGM_FE_SWITCH, i as u32, l as u32);
            }
        }
    }};
}

/// # Safety
///
/// `linkStatus` must be NULL or a versioned `dcgmNvLinkStatus_v5`, or (for an older release
/// the simulator speaks) `_v4` or `_v3`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetNvLinkLinkStatus(
    dcgmHandle: dcgmHandle_t,
    linkStatus: *mut dcgmNvLinkStatus_v5,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let version = unsafe { version_word(linkStatus, Struct::NvLinkStatus) }?;
        with_engine(dcgmHandle, |e| {
            let m = &e.machine;
            // SAFETY: the version word names the layout, which the caller allocated.
            unsafe {
                if version == dcgmNvLinkStatus_version5 {
                    fill_link_status!(&mut *linkStatus, m);
                } else if version == dcgmNvLinkStatus_version4 {
                    fill_link_status!(&mut *linkStatus.cast::<dcgmNvLinkStatus_v4>(), m);
                } else {
                    fill_link_status!(&mut *linkStatus.cast::<dcgmNvLinkStatus_v3>(), m);
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
    guard_symbol("dcgmGetNvLinkP2PStatus", || {
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
