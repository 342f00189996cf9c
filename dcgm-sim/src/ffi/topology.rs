//! Topology: the paths between GPUs, their CPU affinity, and choosing GPUs by topology.

use std::ffi::c_ulong;

use dcgm_sys::*;

use super::discovery::gpu_cfg;
use super::{guard, out, versioned};
use crate::engine::with_engine;
use crate::machine::Machine;

/// # Safety
///
/// `outputGpuIds` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmSelectGpusByTopology(
    pDcgmHandle: dcgmHandle_t,
    inputGpuIds: u64,
    numGpus: u32,
    outputGpuIds: *mut u64,
    hintFlags: u64,
) -> dcgmReturn_t {
    let _ = hintFlags;
    guard(|| {
        // SAFETY: per this function's contract.
        let o = unsafe { out(outputGpuIds) }?;
        with_engine(pDcgmHandle, |e| {
            let count = e.machine.gpu_count().min(64);
            let candidates = if inputGpuIds == 0 {
                u64::MAX
            } else {
                inputGpuIds
            };
            // Every simulated GPU sits on the same NvSwitch fabric, so the lowest ids are as
            // good as any: pick them in order.
            let mut mask = 0u64;
            let mut picked = 0;
            for g in 0..count {
                if picked >= numGpus {
                    break;
                }
                if candidates & (1 << g) != 0 {
                    mask |= 1 << g;
                    picked += 1;
                }
            }
            *o = mask;
            // As libdcgm 4.6.0: fewer candidates than asked for is "insufficient size" (the
            // mask still names those there are).
            if picked < numGpus {
                return Err(DCGM_ST_INSUFFICIENT_SIZE);
            }
            Ok(())
        })
    })
}

/// The CPU socket a GPU hangs off: the first half of the GPUs on CPU 0, the rest on CPU 1.
pub fn gpu_socket(m: &Machine, gpu: u32) -> u32 {
    let sockets = m.cfg.cpus.len().max(1) as u32;
    let per = m.gpu_count().div_ceil(sockets).max(1);
    (gpu / per).min(sockets - 1)
}

fn affinity(m: &Machine, socket: u32, mask: &mut [c_ulong]) {
    for c in m.cores_of_cpu(socket) {
        let bits = c_ulong::BITS;
        if let Some(w) = mask.get_mut((c / bits) as usize) {
            *w |= 1 << (c % bits);
        }
    }
}

/// The topology path between two GPUs: NVLink through the switches plus the PCIe relation.
pub fn gpu_path(m: &Machine, a: u32, b: u32) -> (dcgmGpuTopologyLevel_t, u64) {
    let pci = if gpu_socket(m, a) == gpu_socket(m, b) {
        DCGM_TOPOLOGY_CPU
    } else {
        DCGM_TOPOLOGY_SYSTEM
    };
    let links = m.cfg.gpus[a as usize]
        .nvlinks
        .min(m.cfg.gpus[b as usize].nvlinks);
    if links == 0 || m.cfg.nvswitches == 0 {
        return (pci, 0);
    }
    let nv = DCGM_TOPOLOGY_NVLINK1 << (links - 1);
    (pci | nv, (1u64 << links) - 1)
}

/// # Safety
///
/// `pDcgmDeviceTopology` must be NULL or a versioned `dcgmDeviceTopology_v1` or `_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetDeviceTopology(
    pDcgmHandle: dcgmHandle_t,
    gpuId: u32,
    pDcgmDeviceTopology: *mut dcgmDeviceTopology_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let t = unsafe { versioned(pDcgmDeviceTopology, &[dcgmDeviceTopology_version2]) }?;
        with_engine(pDcgmHandle, |e| {
            let m = &e.machine;
            // libdcgm 4.6.0 has no topology for an unknown GPU, nor for a node's only GPU.
            gpu_cfg(m, gpuId).map_err(|_| DCGM_ST_NOT_SUPPORTED)?;
            if m.gpu_count() < 2 {
                return Err(DCGM_ST_NOT_SUPPORTED);
            }
            affinity(m, gpu_socket(m, gpuId), &mut t.cpuAffinityMask);
            let mut n = 0;
            for other in 0..m.gpu_count() {
                if other == gpuId || n >= t.gpuPaths.len() {
                    continue;
                }
                let (path, links) = gpu_path(m, gpuId, other);
                t.gpuPaths[n].gpuId = other;
                t.gpuPaths[n].path = path;
                t.gpuPaths[n].localNvLinkIds = links;
                n += 1;
            }
            t.numGpus = n as u32;
            Ok(())
        })
    })
}

/// # Safety
///
/// `pDcgmGroupTopology` must be NULL or a versioned `dcgmGroupTopology_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetGroupTopology(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    pDcgmGroupTopology: *mut dcgmGroupTopology_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let t = unsafe { versioned(pDcgmGroupTopology, &[dcgmGroupTopology_version2]) }?;
        with_engine(pDcgmHandle, |e| {
            let gpus: Vec<u32> = e
                .group_entities(groupId)?
                .iter()
                .filter(|p| p.entityGroupId == DCGM_FE_GPU)
                .map(|p| p.entityId)
                .collect();
            if gpus.is_empty() {
                return Err(DCGM_ST_GROUP_IS_EMPTY);
            }
            let m = &e.machine;
            let sockets: std::collections::BTreeSet<u32> =
                gpus.iter().map(|g| gpu_socket(m, *g)).collect();
            for s in &sockets {
                affinity(m, *s, &mut t.groupCpuAffinityMask);
            }
            t.numaOptimalFlag = u32::from(sockets.len() == 1);
            let mut slowest: dcgmGpuTopologyLevel_t = 0;
            for a in &gpus {
                for b in &gpus {
                    if a != b {
                        let (p, _) = gpu_path(m, *a, *b);
                        let pci = p & 0xff;
                        if pci > (slowest & 0xff) {
                            slowest = p;
                        }
                    }
                }
            }
            t.slowestPath = slowest;
            Ok(())
        })
    })
}
