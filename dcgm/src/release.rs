//! Which DCGM release a handle talks to, and what that release can do.
//!
//! A fleet runs whatever DCGM its operators installed (Ubuntu 24.04 ships 3.3.9; NVIDIA's
//! repositories went 4.0 → 4.6 in 2025–2026). Each release accepts the struct versions and
//! symbols of its own headers and refuses newer ones with `DCGM_ST_VER_MISMATCH`, or lacks the
//! symbol. The facts here are read from NVIDIA's public DCGM source at each release tag (the
//! version checks of `dcgmlib/src/DcgmApi.cpp`, `dcgm_structs.h`, `dcgm_agent.h`) and checked
//! on the real libraries 3.3.9, 4.1.1, 4.5.3 and 4.6.0: a call the loaded release cannot
//! answer is [`Error::NotInRelease`](crate::Error::NotInRelease), which names the release
//! it needs, never a bare `VER_MISMATCH`.

use std::fmt;

use dcgm_sys::{DCGM_ST_FUNCTION_NOT_FOUND, DCGM_ST_VER_MISMATCH};

use crate::{ConnectionKind, Error, Handle, Result};

/// A DCGM release number, `major.minor.patch`.
///
/// ```
/// use dcgm::DcgmVersion;
/// let v = DcgmVersion::parse("4.5.3").unwrap();
/// assert!(v < DcgmVersion::new(4, 6, 0));
/// assert_eq!(v.to_string(), "4.5.3");
/// assert_eq!(DcgmVersion::parse("3.3"), Some(DcgmVersion::new(3, 3, 0)));
/// assert_eq!(DcgmVersion::parse("unknown"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DcgmVersion {
    /// 4 in 4.6.0.
    pub major: u32,
    /// 6 in 4.6.0.
    pub minor: u32,
    /// 0 in 4.6.0.
    pub patch: u32,
}

impl DcgmVersion {
    /// The oldest release this SDK speaks: 3.3.9, the last 3.x release (Ubuntu 24.04's).
    pub const OLDEST: DcgmVersion = DcgmVersion::new(3, 3, 9);

    /// `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }

    /// From a version string as `dcgmVersionInfo` reports it (`4.6.0`, `3.3.9`, `4.2`); a
    /// suffix after the numbers (`4.6.0-1`, `4.6.0rc1`) is ignored.
    pub fn parse(s: &str) -> Option<Self> {
        let mut parts = s.trim().split('.').map(|p| {
            let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        });
        let major = parts.next()??;
        let minor = parts.next().flatten().unwrap_or(0);
        let patch = parts.next().flatten().unwrap_or(0);
        Some(Self::new(major, minor, patch))
    }
}

impl fmt::Display for DcgmVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Something a DCGM release may or may not do; [`Handle::supports`](crate::Handle::supports)
/// says whether the loaded one does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Capability {
    /// Group information with entity lists (`dcgmGroupGetInfo`): every release this SDK
    /// speaks (`dcgmGroupInfo_v3` from 4.0, `_v2` in 3.x, each decoded).
    GroupInfo,
    /// Health checks (`dcgmHealthCheck`): every release this SDK speaks
    /// (`dcgmHealthResponse_v5` from 4.0, `_v4` in 3.x, each decoded).
    HealthCheck,
    /// GPU configuration get and set: every release this SDK speaks (`dcgmConfig_v2` from
    /// 4.0, `_v1` in 3.x).
    Config,
    /// Policy violation callbacks: every release this SDK speaks (`dcgmPolicyRegister_v2`
    /// from 4.0; on 3.x `dcgmPolicyRegister`, one registration per GPU so that each violation
    /// names its GPU).
    PolicyCallbacks,
    /// Diagnostics: every release this SDK speaks (`dcgmDiagResponse_v12` from 4.2, `_v11`
    /// in 4.0 and 4.1, `_v10` in 3.3.x, each decoded; run parameters v10, v9 in 4.0, v8 in
    /// 3.3.x).
    Diagnostics,
    /// The GPU chip architecture (`dcgmGetGpuChipArchitecture`): 4.2.
    ChipArchitecture,
    /// NVLink peer-to-peer status (`dcgmGetNvLinkP2PStatus`): 4.3.1.
    NvLinkP2pStatus,
    /// Connections by URL (`tcp://`, `unix://`, `vsock://`: `dcgmConnect_v3`): 4.5.
    ConnectUrl,
    /// Emptying the field cache (`dcgmEmptyCache`): 4.5.
    EmptyCache,
    /// NVLink link states: every release this SDK speaks (`dcgmNvLinkStatus_v5` with 36 links
    /// per GPU from 4.6, `_v4` from 4.0, `_v3` in 3.x, each decoded).
    NvLinkStatus,
    /// Topology with 64-bit paths (NVLink 19–36) and link masks (`dcgmDeviceTopology_v2`):
    /// 4.6. Older releases answer in the version-1 layout, which this crate decodes.
    TopologyV2,
}

impl Capability {
    /// Every capability.
    pub const ALL: [Capability; 11] = [
        Capability::GroupInfo,
        Capability::HealthCheck,
        Capability::Config,
        Capability::PolicyCallbacks,
        Capability::Diagnostics,
        Capability::ChipArchitecture,
        Capability::NvLinkP2pStatus,
        Capability::ConnectUrl,
        Capability::EmptyCache,
        Capability::NvLinkStatus,
        Capability::TopologyV2,
    ];

    /// The first release that has it; [`DcgmVersion::OLDEST`] for what every release this
    /// SDK speaks has (in that release's own struct versions).
    pub const fn since(self) -> DcgmVersion {
        match self {
            Capability::GroupInfo
            | Capability::HealthCheck
            | Capability::Config
            | Capability::PolicyCallbacks
            | Capability::Diagnostics
            | Capability::NvLinkStatus => DcgmVersion::OLDEST,
            Capability::ChipArchitecture => DcgmVersion::new(4, 2, 0),
            Capability::NvLinkP2pStatus => DcgmVersion::new(4, 3, 1),
            Capability::ConnectUrl | Capability::EmptyCache => DcgmVersion::new(4, 5, 0),
            Capability::TopologyV2 => DcgmVersion::new(4, 6, 0),
        }
    }

    /// Its name in snake case (`"topology_v2"`), as the Python package and JSON outputs
    /// spell it; [`Capability::from_name`] reads it back.
    pub const fn name(self) -> &'static str {
        match self {
            Capability::GroupInfo => "group_info",
            Capability::HealthCheck => "health_check",
            Capability::Config => "config",
            Capability::PolicyCallbacks => "policy_callbacks",
            Capability::Diagnostics => "diagnostics",
            Capability::ChipArchitecture => "chip_architecture",
            Capability::NvLinkP2pStatus => "nvlink_p2p_status",
            Capability::ConnectUrl => "connect_url",
            Capability::EmptyCache => "empty_cache",
            Capability::NvLinkStatus => "nvlink_status",
            Capability::TopologyV2 => "topology_v2",
        }
    }

    /// The capability named `name` ([`Capability::name`]); `None` for an unknown name.
    ///
    /// ```
    /// use dcgm::Capability;
    /// assert_eq!(Capability::from_name("diagnostics"), Some(Capability::Diagnostics));
    /// assert_eq!(Capability::from_name("warp_drive"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// What it is, in words (`"diagnostics"`).
    pub const fn describe(self) -> &'static str {
        match self {
            Capability::GroupInfo => "group information",
            Capability::HealthCheck => "health checks",
            Capability::Config => "GPU configuration",
            Capability::PolicyCallbacks => "policy callbacks",
            Capability::Diagnostics => "diagnostics",
            Capability::ChipArchitecture => "the GPU chip architecture",
            Capability::NvLinkP2pStatus => "NVLink peer-to-peer status",
            Capability::ConnectUrl => "tcp://, unix:// and vsock:// addresses",
            Capability::EmptyCache => "emptying the field cache",
            Capability::NvLinkStatus => "NVLink link status",
            Capability::TopologyV2 => "topology with 64-bit NVLink paths",
        }
    }

    /// The capability a libdcgm call needs, for the calls whose struct versions or symbols
    /// are newer than the oldest release supported (3.3.9), and for the calls every release
    /// has but in versions of its own (a refusal there is not a missing capability but a
    /// release older than 3.3.9).
    pub(crate) fn of_call(call: &str) -> Option<Self> {
        Some(match call {
            "dcgmGroupGetInfo" => Capability::GroupInfo,
            "dcgmHealthCheck" => Capability::HealthCheck,
            "dcgmConfigGet" | "dcgmConfigSet" | "dcgmConfigEnforce" => Capability::Config,
            "dcgmPolicyRegister_v2" | "dcgmPolicyUnregister" => Capability::PolicyCallbacks,
            "dcgmActionValidate_v2" | "dcgmRunDiagnostic" => Capability::Diagnostics,
            "dcgmGetGpuChipArchitecture" => Capability::ChipArchitecture,
            "dcgmGetNvLinkP2PStatus" => Capability::NvLinkP2pStatus,
            "dcgmConnect_v3" => Capability::ConnectUrl,
            "dcgmEmptyCache" => Capability::EmptyCache,
            _ => return None,
        })
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

impl Handle {
    /// The DCGM release answering this handle: the loaded library's, or for a connection to
    /// an nv-hostengine the older of the library and the engine (`dcgmHostengineVersionInfo`):
    /// both check struct versions, the library before it sends and the engine's modules on
    /// arrival, so each call is asked in this release's dialect. `None` when neither reports
    /// a version (an old or unusual build).
    ///
    /// ```
    /// # let h = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded().unwrap();
    /// if let Some(v) = h.dcgm_version() {
    ///     println!("DCGM {v}");
    /// }
    /// ```
    pub fn dcgm_version(&self) -> Option<DcgmVersion> {
        let lib = self.lib().release();
        match (lib, self.engine_release()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The release of the nv-hostengine this handle is connected to (`dcgmHostengineVersionInfo`);
    /// `None` for the embedded engine (it is the library) or where the engine does not say.
    pub(crate) fn engine_release(&self) -> Option<DcgmVersion> {
        match self.kind() {
            ConnectionKind::Embedded => None,
            ConnectionKind::Standalone(_) => match self.inner.engine_release.get() {
                Some(v) => Some(*v),
                // Asked once per handle (a round trip to the engine); a failed ask is not
                // remembered, so the next call asks again.
                None => {
                    let v = self
                        .system()
                        .hostengine_version()
                        .ok()
                        .and_then(|v| v.version)
                        .and_then(|v| DcgmVersion::parse(&v));
                    if let Some(v) = v {
                        let _ = self.inner.engine_release.set(v);
                    }
                    v
                }
            },
        }
    }

    /// Whether the release answering this handle has `capability` (true where the release is
    /// unknown: the call then says so itself if it cannot be answered).
    ///
    /// ```
    /// # let h = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded().unwrap();
    /// if !h.supports(dcgm::Capability::TopologyV2) {
    ///     eprintln!("64-bit NVLink paths need DCGM {} or later", dcgm::Capability::TopologyV2.since());
    /// }
    /// ```
    pub fn supports(&self, capability: Capability) -> bool {
        self.dcgm_version().is_none_or(|v| v >= capability.since())
    }

    /// `r`, with a refusal that the answering release is too old for `capability` turned into
    /// `NotInRelease` naming that release: for a connection to an older nv-hostengine the
    /// client library has the call, and the engine refuses it (`VER_MISMATCH` or
    /// `FUNCTION_NOT_FOUND`).
    pub(crate) fn in_release<T>(&self, capability: Capability, r: Result<T>) -> Result<T> {
        r.map_err(|e| {
            let refused = matches!(&e, Error::Dcgm { code, .. }
                if code.raw() == DCGM_ST_VER_MISMATCH || code.raw() == DCGM_ST_FUNCTION_NOT_FOUND);
            match self.dcgm_version() {
                Some(have) if refused && have < capability.since() => Error::NotInRelease {
                    capability,
                    needs: capability.since(),
                    have,
                },
                _ => e,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_order() {
        assert_eq!(
            DcgmVersion::parse("4.6.0-1"),
            Some(DcgmVersion::new(4, 6, 0))
        );
        assert_eq!(
            DcgmVersion::parse(" 3.3.9 "),
            Some(DcgmVersion::new(3, 3, 9))
        );
        assert!(DcgmVersion::new(4, 1, 1) < DcgmVersion::new(4, 2, 0));
        assert!(DcgmVersion::new(3, 3, 9) < Capability::ChipArchitecture.since());
        assert_eq!(Capability::GroupInfo.since(), DcgmVersion::OLDEST);
        assert_eq!(DcgmVersion::parse(""), None);
    }

    #[test]
    fn every_capability_name_reads_back() {
        for c in Capability::ALL {
            assert_eq!(Capability::from_name(c.name()), Some(c));
        }
        let mut names: Vec<_> = Capability::ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Capability::ALL.len());
    }

    #[test]
    fn every_gated_call_names_a_capability_newer_than_the_oldest_release() {
        for call in ["dcgmGetGpuChipArchitecture", "dcgmConnect_v3"] {
            let c = Capability::of_call(call).unwrap();
            assert!(c.since() > DcgmVersion::new(3, 3, 9), "{call}");
            assert!(Capability::ALL.contains(&c));
        }
        assert_eq!(Capability::of_call("dcgmGroupCreate"), None);
        // Asked in each release's own version: every release this SDK speaks has them.
        for call in [
            "dcgmGroupGetInfo",
            "dcgmHealthCheck",
            "dcgmConfigGet",
            "dcgmPolicyRegister_v2",
            "dcgmActionValidate_v2",
            "dcgmRunDiagnostic",
        ] {
            let c = Capability::of_call(call).unwrap();
            assert_eq!(c.since(), DcgmVersion::OLDEST, "{call}");
        }
    }
}
