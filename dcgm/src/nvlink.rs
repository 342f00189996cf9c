//! NVLink: the state of every link of every GPU and NvSwitch, and GPU peer-to-peer status.

use std::fmt;

use dcgm_sys::*;

use crate::error::{Error, Result, ReturnCode};
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

/// An NVLink status of any version (v4 and v5 differ only in the GPU entries' link count),
/// checked against the version word the library wrote back.
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
    /// Asks in the loaded release's own version: `dcgmNvLinkStatus_v5` (36 links per GPU) from
    /// DCGM 4.6.0, `_v4` (18 links per GPU) from 4.0 to 4.5.3 (also after a `VER_MISMATCH`
    /// from a release that did not say its version, or an older remote engine).
    ///
    /// # Errors
    ///
    /// `NotInRelease` before DCGM 4.0; `UnknownLayout` for a version word this SDK cannot
    /// decode; `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmGetNvLinkLinkStatus")]
    pub fn nvlink_status(&self) -> Result<NvLinkStatus> {
        let lib = self.handle().lib();
        let v5_first = lib.release().is_none_or(|v| v >= DcgmVersion::new(4, 6, 0));
        if v5_first {
            match self.nvlink_status_v5() {
                Err(e) if e.code() == ReturnCode::from_raw(DCGM_ST_VER_MISMATCH) => {}
                r => return r,
            }
        }
        self.nvlink_status_v4()
    }

    fn nvlink_status_v5(&self) -> Result<NvLinkStatus> {
        let mut s = dcgmNvLinkStatus_v5::boxed_versioned();
        let lib = self.handle().lib();
        // SAFETY: a versioned struct valid for the call.
        unsafe { ffi!(lib, dcgmGetNvLinkLinkStatus(self.handle().raw(), &mut *s)) }?;
        decode!(s, dcgmNvLinkStatus_version5)
    }

    /// DCGM 4.0 to 4.5.3's layout: 18 links per GPU.
    fn nvlink_status_v4(&self) -> Result<NvLinkStatus> {
        let mut s = dcgmNvLinkStatus_v4::boxed_versioned();
        let lib = self.handle().lib();
        // The C prototype names the current struct; the library reads the version word and
        // writes the layout of that version.
        let out = (&mut *s as *mut dcgmNvLinkStatus_v4).cast::<dcgmNvLinkStatus_v5>();
        // SAFETY: a versioned version-4 struct valid for the call: the library checks the word
        // and writes at most `size_of::<dcgmNvLinkStatus_v4>()` bytes for it.
        unsafe { ffi!(lib, dcgmGetNvLinkLinkStatus(self.handle().raw(), out)) }.map_err(
            |e| match e {
                // 3.3.9 knows only version 3.
                Error::Dcgm { code, .. } if code.raw() == DCGM_ST_VER_MISMATCH => {
                    lib.release().map_or(e.clone(), |have| Error::NotInRelease {
                        capability: Capability::NvLinkStatus,
                        needs: Capability::NvLinkStatus.since(),
                        have,
                    })
                }
                e => e,
            },
        )?;
        decode!(s, dcgmNvLinkStatus_version4)
    }

    /// NVLink peer-to-peer status between every pair of GPUs.
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmGetNvLinkP2PStatus")]
    pub fn nvlink_p2p_status(&self) -> Result<Vec<GpuP2pStatus>> {
        let mut s = dcgmNvLinkP2PStatus_v1::boxed_versioned();
        s.numGpus = 0;
        let lib = self.handle().lib();
        // SAFETY: a versioned struct valid for the call (0 GPUs asks for all).
        unsafe { ffi!(lib, dcgmGetNvLinkP2PStatus(self.handle().raw(), &mut *s)) }?;
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
