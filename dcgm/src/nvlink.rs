//! NVLink: the state of every link of every GPU and NvSwitch, and GPU peer-to-peer status.

use std::fmt;

use dcgm_sys::*;

use crate::dialect::{Asked, Offer};
use crate::error::{Error, Result};
use crate::library::ffi;
use crate::release::{Capability, DcgmVersion};
use crate::system::System;

/// The state of one NVLink.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkState {
    /// The entity has no such link (also used for states this crate does not know).
    NotSupported,
    /// The link exists but is disabled.
    Disabled,
    /// The link is enabled but down.
    Down,
    /// The link is up.
    Up,
}

impl LinkState {
    #[allow(non_upper_case_globals)] // DCGM's C names
    fn from_raw(v: dcgmNvLinkLinkState_t) -> Self {
        match v {
            DcgmNvLinkLinkStateDisabled => Self::Disabled,
            DcgmNvLinkLinkStateDown => Self::Down,
            DcgmNvLinkLinkStateUp => Self::Up,
            _ => Self::NotSupported,
        }
    }
}

impl fmt::Display for LinkState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotSupported => "-",
            Self::Disabled => "disabled",
            Self::Down => "down",
            Self::Up => "up",
        })
    }
}

/// Link states per GPU and per NvSwitch, indexed by link; trailing links the entity does not
/// have are left out.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::LinkState;
/// let status = handle.system().nvlink_status()?;
/// for (gpu, links) in &status.gpus {
///     let up = links.iter().filter(|l| **l == LinkState::Up).count();
///     println!("GPU {gpu}: {up}/{} links up", links.len());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvLinkStatus {
    /// `(GPU id, link states)`.
    pub gpus: Vec<(u32, Vec<LinkState>)>,
    /// `(NvSwitch id, link states)`.
    pub switches: Vec<(u32, Vec<LinkState>)>,
}

impl NvLinkStatus {
    /// The links that are down or disabled: `(is_switch, entity id, link index, state)`.
    pub fn unhealthy_links(&self) -> Vec<(bool, u32, usize, LinkState)> {
        let side = |sw: bool, list: &[(u32, Vec<LinkState>)]| {
            list.iter()
                .flat_map(move |(id, links)| {
                    links
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| matches!(s, LinkState::Down | LinkState::Disabled))
                        .map(move |(i, s)| (sw, *id, i, *s))
                })
                .collect::<Vec<_>>()
        };
        let mut v = side(false, &self.gpus);
        v.extend(side(true, &self.switches));
        v
    }
}

/// An NVLink status of any version (v3, v4 and v5 differ only in the GPU and NvSwitch
/// entries' link counts), checked against the version word the library wrote back.
macro_rules! decode {
    ($s:expr, $version:expr) => {{
        let s = &$s;
        if s.version != $version {
            return Err(Error::UnknownLayout {
                call: "dcgmGetNvLinkLinkStatus",
                version: s.version,
            });
        }
        let ng = (s.numGpus as usize).min(s.gpus.len());
        let ns = (s.numNvSwitches as usize).min(s.nvSwitches.len());
        Ok(NvLinkStatus {
            gpus: s.gpus[..ng]
                .iter()
                .map(|g| (g.entityId, trimmed(&g.linkState)))
                .collect(),
            switches: s.nvSwitches[..ns]
                .iter()
                .map(|w| (w.entityId, trimmed(&w.linkState)))
                .collect(),
        })
    }};
}

/// The NVLink status layouts before version 5, each decoded under its own version word.
trait OlderStatus: Versioned {
    fn decode(&self) -> Result<NvLinkStatus>;
}

impl OlderStatus for dcgmNvLinkStatus_v4 {
    fn decode(&self) -> Result<NvLinkStatus> {
        decode!(*self, dcgmNvLinkStatus_version4)
    }
}

impl OlderStatus for dcgmNvLinkStatus_v3 {
    fn decode(&self) -> Result<NvLinkStatus> {
        decode!(*self, dcgmNvLinkStatus_version3)
    }
}

/// The versions of `dcgmNvLinkStatus` this SDK sends, newest first, with the first release
/// that accepts each (each release takes exactly one).
const NVLINK_STATUS_OFFERS: [Offer; 3] = [
    Offer::new(dcgmNvLinkStatus_version5, DcgmVersion::new(4, 6, 0)),
    Offer::new(dcgmNvLinkStatus_version4, DcgmVersion::new(4, 0, 0)),
    Offer::new(dcgmNvLinkStatus_version3, DcgmVersion::new(0, 0, 0)),
];

fn trimmed(raw: &[dcgmNvLinkLinkState_t]) -> Vec<LinkState> {
    let mut v: Vec<LinkState> = raw.iter().map(|s| LinkState::from_raw(*s)).collect();
    while v.last() == Some(&LinkState::NotSupported) {
        v.pop();
    }
    v
}

/// Whether two GPUs can talk peer to peer over NVLink, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum P2pStatus {
    /// It works.
    Ok,
    /// The chipset does not support it.
    ChipsetNotSupported,
    /// The GPU does not support it.
    GpuNotSupported,
    /// The topology does not allow it.
    TopologyNotSupported,
    /// Disabled by a driver registry key.
    DisabledByRegKey,
    /// Not supported for another reason.
    NotSupported,
    /// Not known (also used for values this crate does not know).
    Unknown,
}

impl P2pStatus {
    #[allow(non_upper_case_globals)] // DCGM's C names
    fn from_raw(v: dcgmNvLinkGpuP2PStatus_t) -> Self {
        match v {
            DcgmNvLinkP2pStatusOK => Self::Ok,
            DcgmNvLinkP2pStatusChipsetNotSupported => Self::ChipsetNotSupported,
            DcgmNvLinkP2pStatusGpuNotSupported => Self::GpuNotSupported,
            DcgmNvLinkP2pStatusTopologyNotSupported => Self::TopologyNotSupported,
            DcgmNvLinkP2pStatusDisabledByRegKey => Self::DisabledByRegKey,
            DcgmNvLinkP2pStatusNotSupported => Self::NotSupported,
            _ => Self::Unknown,
        }
    }
}

/// NVLink peer-to-peer status from one GPU to the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuP2pStatus {
    /// The GPU.
    pub gpu: u32,
    /// `(peer GPU, status)` for every other GPU reported.
    pub peers: Vec<(u32, P2pStatus)>,
}

impl System {
    /// The state of every NVLink of every GPU and NvSwitch.
    ///
    /// Asks in the answering release's own version: `dcgmNvLinkStatus_v5` (36 links per GPU)
    /// from DCGM 4.6.0, `_v4` (18 links per GPU, 256 per NvSwitch) from 4.0 to 4.5.3, `_v3`
    /// (18 per GPU, 64 per NvSwitch) in 3.3.x; the version accepted is remembered per handle.
    ///
    /// # Errors
    ///
    /// `UnknownLayout` for a version word other than the one sent; `ConnectionLost` when the
    /// host engine went away.
    #[doc(alias = "dcgmGetNvLinkLinkStatus")]
    pub fn nvlink_status(&self) -> Result<NvLinkStatus> {
        self.handle()
            .ask_versioned(Asked::NvLinkStatus, &NVLINK_STATUS_OFFERS, |word| {
                if word == dcgmNvLinkStatus_version5 {
                    self.nvlink_status_v5()
                } else if word == dcgmNvLinkStatus_version4 {
                    self.nvlink_status_as::<dcgmNvLinkStatus_v4>()
                } else {
                    self.nvlink_status_as::<dcgmNvLinkStatus_v3>()
                }
            })
    }

    fn nvlink_status_v5(&self) -> Result<NvLinkStatus> {
        let mut s = dcgmNvLinkStatus_v5::boxed_versioned();
        let lib = self.handle().lib();
        // SAFETY: a versioned struct valid for the call.
        unsafe { ffi!(lib, dcgmGetNvLinkLinkStatus(self.handle().raw(), &mut *s)) }?;
        decode!(s, dcgmNvLinkStatus_version5)
    }

    /// An older layout: 4.0 to 4.5.3's (v4) or 3.x's (v3).
    fn nvlink_status_as<S: OlderStatus>(&self) -> Result<NvLinkStatus> {
        let mut s = S::boxed_versioned();
        let lib = self.handle().lib();
        // The C prototype names the current struct; the library reads the version word and
        // writes the layout of that version.
        let out = (&mut *s as *mut S).cast::<dcgmNvLinkStatus_v5>();
        // SAFETY: a versioned struct of an older version, valid for the call: the library
        // checks the word and writes at most `size_of::<S>()` bytes for it.
        unsafe { ffi!(lib, dcgmGetNvLinkLinkStatus(self.handle().raw(), out)) }?;
        s.decode()
    }

    /// NVLink peer-to-peer status between every pair of GPUs.
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away; `NotInRelease` before DCGM 4.3.1
    /// (also from an older connected nv-hostengine).
    #[doc(alias = "dcgmGetNvLinkP2PStatus")]
    pub fn nvlink_p2p_status(&self) -> Result<Vec<GpuP2pStatus>> {
        let mut s = dcgmNvLinkP2PStatus_v1::boxed_versioned();
        s.numGpus = 0;
        let lib = self.handle().lib();
        // SAFETY: a versioned struct valid for the call (0 GPUs asks for all).
        let r = unsafe { ffi!(lib, dcgmGetNvLinkP2PStatus(self.handle().raw(), &mut *s)) };
        self.handle().in_release(Capability::NvLinkP2pStatus, r)?;
        let n = (s.numGpus as usize).min(s.gpus.len());
        let ids: Vec<u32> = s.gpus[..n].iter().map(|g| g.entityId).collect();
        Ok(s.gpus[..n]
            .iter()
            .map(|g| {
                let peers = ids
                    .iter()
                    .filter(|&&p| p != g.entityId)
                    .filter_map(|&p| {
                        g.linkStatus
                            .get(p as usize)
                            .map(|st| (p, P2pStatus::from_raw(*st)))
                    })
                    .collect();
                GpuP2pStatus {
                    gpu: g.entityId,
                    peers,
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A status image written at the offsets of NVIDIA's headers (from the members' sizes, not
    /// this crate's structs): one GPU with `gpu_links` link slots, one NvSwitch with
    /// `switch_links`.
    fn image(version: u32, gpu_links: usize, switch_links: usize) -> Vec<u8> {
        let mut b = vec![0u8; 8 + 32 * (4 + 4 * gpu_links) + 4 + 12 * (4 + 4 * switch_links)];
        let mut put = |at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        put(0, version);
        put(4, 1); // numGpus
        put(8, 3); // GPU 3
        put(12, DcgmNvLinkLinkStateUp);
        put(16, DcgmNvLinkLinkStateDown);
        // The last link slot of the GPU: where v3 and v4 end and v5 goes on.
        put(8 + 4 * gpu_links, DcgmNvLinkLinkStateUp);
        let switches = 8 + 32 * (4 + 4 * gpu_links);
        put(switches, 1); // numNvSwitches
        put(switches + 4, 7); // NvSwitch 7
        put(switches + 8, DcgmNvLinkLinkStateUp);
        put(
            switches + 8 + 4 * (switch_links - 1),
            DcgmNvLinkLinkStateDisabled,
        );
        b
    }

    /// Reads an image into the layout `S`.
    fn read<S: Versioned>(bytes: &[u8]) -> Box<S> {
        assert_eq!(bytes.len(), size_of::<S>());
        let mut s = dcgm_sys::boxed_zeroed::<S>();
        // SAFETY: the image has the struct's size; its members are plain integers.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                (&mut *s as *mut S).cast::<u8>(),
                bytes.len(),
            );
        }
        s
    }

    fn check(s: &NvLinkStatus, gpu_links: usize, switch_links: usize) {
        use LinkState::*;
        let mut gpu = vec![Up, Down];
        gpu.resize(gpu_links - 1, NotSupported);
        gpu.push(Up);
        assert_eq!(s.gpus, vec![(3, gpu)]);
        let mut switch = vec![Up];
        switch.resize(switch_links - 1, NotSupported);
        switch.push(Disabled);
        assert_eq!(s.switches, vec![(7, switch)]);
        assert_eq!(s.unhealthy_links().len(), 2);
    }

    #[test]
    fn version_3_of_dcgm_3_decodes_with_64_switch_links() {
        let s = read::<dcgmNvLinkStatus_v3>(&image(dcgmNvLinkStatus_version3, 18, 64));
        check(&s.decode().unwrap(), 18, 64);
        let s = read::<dcgmNvLinkStatus_v4>(&image(dcgmNvLinkStatus_version4, 18, 256));
        check(&s.decode().unwrap(), 18, 256);
    }

    #[test]
    fn another_version_word_is_an_error_not_data() {
        for (written, decoded_as) in [
            (dcgmNvLinkStatus_version4, dcgmNvLinkStatus_version3),
            (dcgmNvLinkStatus_version2, dcgmNvLinkStatus_version3),
        ] {
            let mut b = image(dcgmNvLinkStatus_version3, 18, 64);
            b[..4].copy_from_slice(&written.to_ne_bytes());
            let s = read::<dcgmNvLinkStatus_v3>(&b);
            match s.decode() {
                Err(Error::UnknownLayout { call, version }) => {
                    assert_eq!(call, "dcgmGetNvLinkLinkStatus");
                    assert_eq!(version, written, "decoded as {decoded_as:#x}");
                }
                other => panic!("{other:?}"),
            }
        }
        let mut b = image(dcgmNvLinkStatus_version4, 18, 256);
        b[..4].copy_from_slice(&dcgmNvLinkStatus_version3.to_ne_bytes());
        assert!(read::<dcgmNvLinkStatus_v4>(&b).decode().is_err());
    }

    #[test]
    fn each_release_is_asked_the_one_version_it_takes() {
        use crate::dialect::first_offer;
        for (v, want) in [
            ((4, 6, 0), dcgmNvLinkStatus_version5),
            ((4, 5, 3), dcgmNvLinkStatus_version4),
            ((4, 0, 0), dcgmNvLinkStatus_version4),
            ((3, 3, 9), dcgmNvLinkStatus_version3),
        ] {
            let v = DcgmVersion::new(v.0, v.1, v.2);
            let i = first_offer(&NVLINK_STATUS_OFFERS, Some(v));
            assert_eq!(NVLINK_STATUS_OFFERS[i].word, want, "{v}");
        }
    }
}
