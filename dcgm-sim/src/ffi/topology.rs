//! Topology: the paths between GPUs, their CPU affinity, and choosing GPUs by topology.

use std::ffi::c_ulong;

use dcgm_sys::*;

use super::discovery::gpu_cfg;
use super::{guard, out, versioned};
use crate::machine::Machine;
use crate::personality;
use crate::sim::with_engine;

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

fn affinity(m: &Machine, socket: u32, mask: &mut [c_ulong]) {
    for c in m.cpus.cores_of_cpu(socket) {
        let bits = c_ulong::BITS;
        if let Some(w) = mask.get_mut((c / bits) as usize) {
            *w |= 1 << (c % bits);
        }
    }
}

/// The topology path between two GPUs: NVLink through the switches plus the PCIe relation.
pub fn gpu_path(m: &Machine, a: u32, b: u32) -> (dcgmGpuTopologyLevel_t, u64) {
    let pci = if m.gpu_socket(a) == m.gpu_socket(b) {
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

/// A GPU's topology, whatever the layout it is written in.
struct DeviceTopology {
    /// CPUs close to the GPU.
    mask: Vec<c_ulong>,
    /// Every other GPU: its id, the path to it and the local NVLinks leading there.
    paths: Vec<(u32, dcgmGpuTopologyLevel_t, u64)>,
}

/// A group's topology, whatever the layout it is written in.
struct GroupTopology {
    /// CPUs close to every GPU of the group.
    mask: Vec<c_ulong>,
    /// 1 when the group's GPUs share a NUMA node.
    numa_optimal: u32,
    slowest: dcgmGpuTopologyLevel_t,
}

/// A GPU's topology: its CPU affinity and the path to every other GPU.
fn device_topology(m: &Machine, gpu: u32) -> Result<DeviceTopology, dcgmReturn_t> {
    // libdcgm 4.6.0 has no topology for an unknown GPU, nor for a node's only GPU.
    gpu_cfg(m, gpu).map_err(|_| DCGM_ST_NOT_SUPPORTED)?;
    if m.gpu_count() < 2 {
        return Err(DCGM_ST_NOT_SUPPORTED);
    }
    let mut mask = vec![0; DCGM_AFFINITY_BITMASK_ARRAY_SIZE];
    affinity(m, m.gpu_socket(gpu), &mut mask);
    let paths = (0..m.gpu_count())
        .filter(|other| *other != gpu)
        .map(|other| {
            let (path, links) = gpu_path(m, gpu, other);
            (other, path, links)
        })
        .collect();
    Ok(DeviceTopology { mask, paths })
}

/// A group's topology: its common CPU affinity, whether its GPUs share a NUMA node, and the
/// slowest path between two of them.
fn group_topology(
    e: &crate::engine::Engine,
    group: dcgmGpuGrp_t,
) -> Result<GroupTopology, dcgmReturn_t> {
    let gpus: Vec<u32> = e
        .group_entities(group)?
        .iter()
        .filter(|p| p.entityGroupId == DCGM_FE_GPU)
        .map(|p| p.entityId)
        .collect();
    if gpus.is_empty() {
        return Err(DCGM_ST_GROUP_IS_EMPTY);
    }
    let m = &e.machine;
    let sockets: std::collections::BTreeSet<u32> = gpus.iter().map(|g| m.gpu_socket(*g)).collect();
    let mut mask = vec![0; DCGM_AFFINITY_BITMASK_ARRAY_SIZE];
    for s in &sockets {
        affinity(m, *s, &mut mask);
    }
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
    Ok(GroupTopology {
        mask,
        numa_optimal: u32::from(sockets.len() == 1),
        slowest,
    })
}

/// # Safety
///
/// `pDcgmDeviceTopology` must be NULL or a versioned `dcgmDeviceTopology_v2`. Speaking a
/// release before 4.6.0, the simulator does as those do: it writes a `dcgmDeviceTopology_v1`
/// (version word 1 and its layout) whatever the version word, and succeeds.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetDeviceTopology(
    pDcgmHandle: dcgmHandle_t,
    gpuId: u32,
    pDcgmDeviceTopology: *mut dcgmDeviceTopology_t,
) -> dcgmReturn_t {
    guard(|| {
        if personality::writes_topology_v1() {
            // SAFETY: per this function's contract (a v2 has room for the smaller v1).
            let t = unsafe { out(pDcgmDeviceTopology.cast::<dcgmDeviceTopology_v1>()) }?;
            let DeviceTopology { mask, paths } =
                with_engine(pDcgmHandle, |e| device_topology(&e.machine, gpuId))?;
            let mut v1 = dcgmDeviceTopology_v1::new_versioned();
            v1.cpuAffinityMask.copy_from_slice(&mask);
            for (dst, (gpu, path, links)) in v1.gpuPaths.iter_mut().zip(&paths) {
                dst.gpuId = *gpu;
                dst.path = *path as dcgmGpuTopologyLevel_v1_t;
                dst.localNvLinkIds = *links as u32;
            }
            v1.numGpus = paths.len().min(v1.gpuPaths.len()) as u32;
            *t = v1;
            return Ok(());
        }
        // SAFETY: per this function's contract.
        let t = unsafe { versioned(pDcgmDeviceTopology, &[dcgmDeviceTopology_version2]) }?;
        with_engine(pDcgmHandle, |e| {
            let DeviceTopology { mask, paths } = device_topology(&e.machine, gpuId)?;
            for (dst, src) in t.cpuAffinityMask.iter_mut().zip(&mask) {
                *dst |= *src;
            }
            for (dst, (gpu, path, links)) in t.gpuPaths.iter_mut().zip(&paths) {
                dst.gpuId = *gpu;
                dst.path = *path;
                dst.localNvLinkIds = *links;
            }
            t.numGpus = paths.len().min(t.gpuPaths.len()) as u32;
            Ok(())
        })
    })
}

/// # Safety
///
/// `pDcgmGroupTopology` must be NULL or a versioned `dcgmGroupTopology_v2`. Speaking a
/// release before 4.6.0, the simulator writes a `dcgmGroupTopology_v1` whatever the version
/// word, as those do.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetGroupTopology(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    pDcgmGroupTopology: *mut dcgmGroupTopology_t,
) -> dcgmReturn_t {
    guard(|| {
        if personality::writes_topology_v1() {
            // SAFETY: per this function's contract (a v2 has room for the smaller v1).
            let t = unsafe { out(pDcgmGroupTopology.cast::<dcgmGroupTopology_v1>()) }?;
            let GroupTopology {
                mask,
                numa_optimal,
                slowest,
            } = with_engine(pDcgmHandle, |e| group_topology(e, groupId))?;
            let mut v1 = dcgmGroupTopology_v1::new_versioned();
            v1.groupCpuAffinityMask.copy_from_slice(&mask);
            v1.numaOptimalFlag = numa_optimal;
            v1.slowestPath = slowest as dcgmGpuTopologyLevel_v1_t;
            *t = v1;
            return Ok(());
        }
        // SAFETY: per this function's contract.
        let t = unsafe { versioned(pDcgmGroupTopology, &[dcgmGroupTopology_version2]) }?;
        with_engine(pDcgmHandle, |e| {
            let GroupTopology {
                mask,
                numa_optimal,
                slowest,
            } = group_topology(e, groupId)?;
            for (dst, src) in t.groupCpuAffinityMask.iter_mut().zip(&mask) {
                *dst |= *src;
            }
            t.numaOptimalFlag = numa_optimal;
            t.slowestPath = slowest;
            Ok(())
        })
    })
}
