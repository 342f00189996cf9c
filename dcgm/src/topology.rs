//! GPU topology: how GPUs connect to each other (PCIe, NVLink) and to CPUs, and
//! topology-aware GPU selection.

use std::ffi::c_ulong;
use std::fmt;

use dcgm_sys::*;

use crate::error::{Error, Result};
use crate::group::Group;
use crate::library::ffi;
use crate::system::System;

/// The PCIe part of the path between two GPUs, from closest to farthest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PciPath {
    /// On the same board.
    Board,
    /// Through one PCIe switch.
    SingleSwitch,
    /// Through several PCIe switches.
    MultipleSwitches,
    /// Through a PCIe host bridge.
    HostBridge,
    /// Through a CPU (same NUMA node).
    Cpu,
    /// Through the link between CPUs (different NUMA nodes).
    System,
    /// DCGM does not know.
    Unknown,
}

impl PciPath {
    /// From a path word (its low 8 bits).
    fn from_path(p: dcgmGpuTopologyLevel_t) -> Self {
        let pci = DCGM_TOPOLOGY_PATH_PCI(p);
        // The closest relation wins if the library ever sets more than one bit.
        if pci & DCGM_TOPOLOGY_BOARD != 0 {
            Self::Board
        } else if pci & DCGM_TOPOLOGY_SINGLE != 0 {
            Self::SingleSwitch
        } else if pci & DCGM_TOPOLOGY_MULTIPLE != 0 {
            Self::MultipleSwitches
        } else if pci & DCGM_TOPOLOGY_HOSTBRIDGE != 0 {
            Self::HostBridge
        } else if pci & DCGM_TOPOLOGY_CPU != 0 {
            Self::Cpu
        } else if pci & DCGM_TOPOLOGY_SYSTEM != 0 {
            Self::System
        } else {
            Self::Unknown
        }
    }
}

impl fmt::Display for PciPath {
    /// nvidia-smi's abbreviations: PIX, PXB, PHB, NODE, SYS.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Board => "BOARD",
            Self::SingleSwitch => "PIX",
            Self::MultipleSwitches => "PXB",
            Self::HostBridge => "PHB",
            Self::Cpu => "NODE",
            Self::System => "SYS",
            Self::Unknown => "?",
        })
    }
}

/// The number of NVLinks a path word says connect two GPUs (its one-hot `NVLINKn` bit).
fn nvlink_count(p: dcgmGpuTopologyLevel_t) -> u32 {
    let nv = DCGM_TOPOLOGY_PATH_NVLINK(p) >> 8;
    if nv == 0 { 0 } else { 64 - nv.leading_zeros() }
}

/// The CPUs set in an affinity mask.
fn cpus(mask: &[c_ulong]) -> Vec<u32> {
    let bits = c_ulong::BITS;
    mask.iter()
        .enumerate()
        .flat_map(|(w, word)| {
            (0..bits)
                .filter(move |b| word >> b & 1 != 0)
                .map(move |b| w as u32 * bits + b)
        })
        .collect()
}

/// The path from a GPU to one peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuPath {
    /// The peer GPU.
    pub gpu: u32,
    /// The PCIe relation.
    pub pci: PciPath,
    /// How many NVLinks connect the two (0: none).
    pub nvlinks: u32,
    /// Bit `n` set: this GPU's NVLink `n` leads to the peer.
    pub local_links: u64,
}

/// A GPU's CPU affinity and its paths to every other GPU.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// let topo = handle.system().device_topology(0)?;
/// println!("GPU 0 is close to {} CPUs", topo.cpu_affinity.len());
/// for p in &topo.paths {
///     println!("  GPU {}: {} and {} NVLinks", p.gpu, p.pci, p.nvlinks);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceTopology {
    /// The CPUs (logical CPU numbers) close to the GPU.
    pub cpu_affinity: Vec<u32>,
    /// The paths to the other GPUs.
    pub paths: Vec<GpuPath>,
}

/// A group's common CPU affinity and slowest path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupTopology {
    /// CPUs close to every GPU of the group.
    pub cpu_affinity: Vec<u32>,
    /// Whether every GPU of the group is on one NUMA node.
    pub numa_optimal: bool,
    /// The PCIe part of the slowest path between two GPUs of the group.
    pub slowest_pci: PciPath,
    /// The NVLinks of the slowest path (0: none).
    pub slowest_nvlinks: u32,
}

impl System {
    /// A GPU's CPU affinity and paths to the other GPUs.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_SUPPORTED` on a node with a single GPU, which has no path to report (libdcgm
    /// 4.6.0 answers so for every GPU id there, unknown ones included); `UnknownLayout` when the
    /// library writes back a version this SDK cannot decode; `ConnectionLost`.
    ///
    /// DCGM releases before 4.6.0 do not check the version asked for: they write the
    /// version-1 layout (12-byte path entries from offset 76) and `version = 1`. The version
    /// word written back chooses the decoding, so every release gives the same answer.
    #[doc(alias = "dcgmGetDeviceTopology")]
    pub fn device_topology(&self, gpu: u32) -> Result<DeviceTopology> {
        let mut t = dcgmDeviceTopology_v2::new_versioned();
        let lib = self.handle().lib();
        // SAFETY: a versioned struct valid for the call.
        match unsafe { ffi!(lib, dcgmGetDeviceTopology(self.handle().raw(), gpu, &mut t)) } {
            // An nv-hostengine older than the library checks the version exactly and knows
            // only version 1: ask in it, in a buffer of the larger size.
            Err(e) if e.code().raw() == DCGM_ST_VER_MISMATCH => {
                let mut t = dcgmDeviceTopology_v2::new_versioned();
                t.version = dcgmDeviceTopology_version1;
                // SAFETY: the buffer is larger than the version-1 struct the word asks for.
                unsafe { ffi!(lib, dcgmGetDeviceTopology(self.handle().raw(), gpu, &mut t)) }?;
                decode_device(&t)
            }
            r => r.and_then(|()| decode_device(&t)),
        }
    }

    /// Picks `count` of `candidates` (GPU ids below 64; empty: every GPU) with the best
    /// connections between them. Unhealthy GPUs are avoided unless `ignore_health`.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a zero `count` or a candidate id of 64 or more;
    /// `DCGM_ST_INSUFFICIENT_SIZE` when `count` exceeds the candidates; `ConnectionLost`.
    #[doc(alias = "dcgmSelectGpusByTopology")]
    pub fn select_gpus_by_topology(
        &self,
        candidates: &[u32],
        count: u32,
        ignore_health: bool,
    ) -> Result<Vec<u32>> {
        if count == 0 {
            return Err(Error::InvalidArgument("select at least one GPU".into()));
        }
        let mut mask = 0u64;
        for &g in candidates {
            if g >= 64 {
                return Err(Error::InvalidArgument(format!(
                    "GPU id {g} cannot be a candidate: the selection takes ids below 64"
                )));
            }
            mask |= 1 << g;
        }
        if candidates.is_empty() {
            mask = self
                .gpu_ids()?
                .into_iter()
                .filter(|g| *g < 64)
                .fold(0, |m, g| m | 1 << g);
        }
        let hints = if ignore_health {
            DCGM_TOPO_HINT_F_IGNOREHEALTH
        } else {
            DCGM_TOPO_HINT_F_NONE
        };
        let mut out = 0u64;
        let lib = self.handle().lib();
        // SAFETY: plain arguments and a valid out-pointer.
        unsafe {
            ffi!(
                lib,
                dcgmSelectGpusByTopology(self.handle().raw(), mask, count, &mut out, hints)
            )
        }?;
        Ok((0..64).filter(|b| out >> b & 1 != 0).collect())
    }
}

impl Group {
    /// The group's common CPU affinity and slowest path between its GPUs.
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmGetGroupTopology")]
    pub fn topology(&self) -> Result<GroupTopology> {
        let mut t = dcgmGroupTopology_v2::new_versioned();
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: a versioned struct valid for the call.
        match unsafe { ffi!(lib, dcgmGetGroupTopology(h.raw(), self.raw_id(), &mut t)) } {
            // An older nv-hostengine knows only version 1 (see `System::device_topology`).
            Err(e) if e.code().raw() == DCGM_ST_VER_MISMATCH => {
                let mut t = dcgmGroupTopology_v2::new_versioned();
                t.version = dcgmGroupTopology_version1;
                // SAFETY: the buffer is larger than the version-1 struct the word asks for.
                unsafe { ffi!(lib, dcgmGetGroupTopology(h.raw(), self.raw_id(), &mut t)) }?;
                decode_group(&t)
            }
            r => r.and_then(|()| decode_group(&t)),
        }
    }
}

/// The first `size_of::<T>()` bytes of `from`, as a `T`: the older, smaller layout a library
/// wrote into the newer struct's buffer.
fn older_layout<T: Zeroable + Copy, U: Copy>(from: &U) -> T {
    const { assert!(size_of::<T>() <= size_of::<U>()) };
    // SAFETY: `T` is a plain C struct valid for any bytes (`Zeroable`), `from` holds at least
    // `size_of::<T>()` initialised bytes (asserted above), and the read is unaligned-safe.
    unsafe { std::ptr::read_unaligned((from as *const U).cast::<T>()) }
}

/// A device topology as the library wrote it: version 2, or version 1 (releases before 4.6.0).
fn decode_device(t: &dcgmDeviceTopology_v2) -> Result<DeviceTopology> {
    let path = |gpu, word: dcgmGpuTopologyLevel_t, links| GpuPath {
        gpu,
        pci: PciPath::from_path(word),
        nvlinks: nvlink_count(word),
        local_links: links,
    };
    match t.version {
        v if v == dcgmDeviceTopology_version2 => {
            let n = (t.numGpus as usize).min(t.gpuPaths.len());
            Ok(DeviceTopology {
                cpu_affinity: cpus(&t.cpuAffinityMask),
                paths: t.gpuPaths[..n]
                    .iter()
                    .map(|p| path(p.gpuId, p.path, p.localNvLinkIds))
                    .collect(),
            })
        }
        v if v == dcgmDeviceTopology_version1 => {
            let v1: dcgmDeviceTopology_v1 = older_layout(t);
            let n = (v1.numGpus as usize).min(v1.gpuPaths.len());
            Ok(DeviceTopology {
                cpu_affinity: cpus(&v1.cpuAffinityMask),
                paths: v1.gpuPaths[..n]
                    .iter()
                    .map(|p| {
                        let word = dcgmGpuTopologyLevel_t::from(p.path);
                        path(p.gpuId, word, u64::from(p.localNvLinkIds))
                    })
                    .collect(),
            })
        }
        version => Err(Error::UnknownLayout {
            call: "dcgmGetDeviceTopology",
            version,
        }),
    }
}

/// A group topology as the library wrote it: version 2, or version 1 (before 4.6.0).
fn decode_group(t: &dcgmGroupTopology_v2) -> Result<GroupTopology> {
    let (mask, numa, slowest) = match t.version {
        v if v == dcgmGroupTopology_version2 => {
            (t.groupCpuAffinityMask, t.numaOptimalFlag, t.slowestPath)
        }
        v if v == dcgmGroupTopology_version1 => {
            let v1: dcgmGroupTopology_v1 = older_layout(t);
            (
                v1.groupCpuAffinityMask,
                v1.numaOptimalFlag,
                dcgmGpuTopologyLevel_t::from(v1.slowestPath),
            )
        }
        version => {
            return Err(Error::UnknownLayout {
                call: "dcgmGetGroupTopology",
                version,
            });
        }
    };
    Ok(GroupTopology {
        cpu_affinity: cpus(&mask),
        numa_optimal: numa != 0,
        slowest_pci: PciPath::from_path(slowest),
        slowest_nvlinks: nvlink_count(slowest),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_words_decode() {
        assert_eq!(nvlink_count(DCGM_TOPOLOGY_NVLINK18 | DCGM_TOPOLOGY_CPU), 18);
        assert_eq!(nvlink_count(DCGM_TOPOLOGY_NVLINK1), 1);
        assert_eq!(nvlink_count(DCGM_TOPOLOGY_SYSTEM), 0);
        assert_eq!(
            PciPath::from_path(DCGM_TOPOLOGY_NVLINK4 | DCGM_TOPOLOGY_SYSTEM),
            PciPath::System
        );
        assert_eq!(PciPath::from_path(0), PciPath::Unknown);
        assert_eq!(cpus(&[0b101, 1]), vec![0, 2, c_ulong::BITS]);
    }

    /// What DCGM 4.5.3 and older write into a version-2 buffer: the version-1 layout.
    #[test]
    fn a_version_1_answer_decodes_and_an_unknown_version_is_an_error() {
        let mut v1 = dcgmDeviceTopology_v1::new_versioned();
        v1.cpuAffinityMask[0] = 0b11;
        v1.numGpus = 2;
        v1.gpuPaths[0].gpuId = 1;
        v1.gpuPaths[0].path = (DCGM_TOPOLOGY_MULTIPLE | DCGM_TOPOLOGY_NVLINK4) as u32;
        v1.gpuPaths[0].localNvLinkIds = 0b1111;
        v1.gpuPaths[1].gpuId = 2;
        v1.gpuPaths[1].path = DCGM_TOPOLOGY_SYSTEM as u32;
        let mut t = dcgmDeviceTopology_v2::new_versioned();
        // SAFETY: both are plain C structs; the smaller one is copied into the larger one's
        // first bytes, as the library does.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&v1 as *const dcgmDeviceTopology_v1).cast::<u8>(),
                (&mut t as *mut dcgmDeviceTopology_v2).cast::<u8>(),
                size_of::<dcgmDeviceTopology_v1>(),
            );
        }
        let d = decode_device(&t).unwrap();
        assert_eq!(d.cpu_affinity, [0, 1]);
        assert_eq!(
            d.paths,
            [
                GpuPath {
                    gpu: 1,
                    pci: PciPath::MultipleSwitches,
                    nvlinks: 4,
                    local_links: 0b1111
                },
                GpuPath {
                    gpu: 2,
                    pci: PciPath::System,
                    nvlinks: 0,
                    local_links: 0
                }
            ]
        );
        // Read as version 2, the same bytes would be garbage: the word decides.
        t.version = 0x0300_0338;
        assert!(matches!(
            decode_device(&t),
            Err(Error::UnknownLayout {
                version: 0x0300_0338,
                ..
            })
        ));
        let mut g = dcgmGroupTopology_v2::new_versioned();
        g.version = dcgmGroupTopology_version1;
        assert!(decode_group(&g).is_ok());
        g.version = 7;
        assert!(decode_group(&g).is_err());
    }
}
