//! GPU configuration: ECC, compute mode, power limit, application clocks and sync boost, set
//! on a group and enforced by DCGM.

use crate::blank::NonBlank;
use std::ffi::c_int;

use dcgm_sys::*;

use crate::dialect::{Asked, Offer};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::library::ffi;
use crate::release::DcgmVersion;
use crate::status::Status;

/// Who may create CUDA contexts on a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComputeMode {
    /// Any number of processes.
    Default,
    /// No CUDA context at all.
    Prohibited,
    /// One process at a time.
    ExclusiveProcess,
}

impl ComputeMode {
    fn raw(self) -> u32 {
        match self {
            Self::Default => DCGM_CONFIG_COMPUTEMODE_DEFAULT,
            Self::Prohibited => DCGM_CONFIG_COMPUTEMODE_PROHIBITED,
            Self::ExclusiveProcess => DCGM_CONFIG_COMPUTEMODE_EXCLUSIVE_PROCESS,
        }
    }

    fn from_raw(v: u32) -> Option<Self> {
        match v {
            DCGM_CONFIG_COMPUTEMODE_DEFAULT => Some(Self::Default),
            DCGM_CONFIG_COMPUTEMODE_PROHIBITED => Some(Self::Prohibited),
            DCGM_CONFIG_COMPUTEMODE_EXCLUSIVE_PROCESS => Some(Self::ExclusiveProcess),
            _ => None,
        }
    }
}

/// Which configuration [`Group::config_get`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfigKind {
    /// What DCGM was asked to apply (and re-applies with [`Group::config_enforce`]).
    Target,
    /// What the GPU has now.
    Current,
}

/// A GPU configuration. `None` means "leave unchanged" when setting, and "not set / not
/// reported" when reading.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::{ConfigKind, GpuConfig, Group};
/// let gpus = Group::with_gpus(&handle, "doc-config", &[0, 1])?;
/// gpus.config_set(&GpuConfig { power_limit_w: Some(500), ..GpuConfig::default() })?;
/// for c in gpus.config_get(ConfigKind::Target)? {
///     println!("GPU {}: power limit {:?} W", c.gpu, c.power_limit_w);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GpuConfig {
    /// The GPU (ignored by [`Group::config_set`], which applies to the whole group).
    pub gpu: u32,
    /// ECC on or off (takes effect after a GPU reset).
    pub ecc_mode: Option<bool>,
    /// Compute mode.
    pub compute_mode: Option<ComputeMode>,
    /// Power limit in watts, per GPU.
    pub power_limit_w: Option<u32>,
    /// Application SM clock in MHz (set together with the memory clock).
    pub sm_app_clock_mhz: Option<u32>,
    /// Application memory clock in MHz.
    pub mem_app_clock_mhz: Option<u32>,
    /// Sync boost across the group's GPUs.
    pub sync_boost: Option<bool>,
}

/// The value DCGM stores for "unchanged".
const BLANK: u32 = DCGM_INT32_BLANK as u32;

fn opt_u32(v: u32) -> Option<u32> {
    v.non_blank()
}

fn opt_bool(v: u32) -> Option<bool> {
    opt_u32(v).map(|v| v != 0)
}

impl GpuConfig {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.ecc_mode.is_none()
            && self.compute_mode.is_none()
            && self.power_limit_w.is_none()
            && self.sm_app_clock_mhz.is_none()
            && self.mem_app_clock_mhz.is_none()
            && self.sync_boost.is_none()
    }

    fn to_raw(self) -> Result<dcgmConfig_v2> {
        let check = |what: &str, v: Option<u32>| -> Result<u32> {
            match v {
                Some(x) if x >= BLANK => Err(Error::InvalidArgument(format!(
                    "{what} {x} is out of range (DCGM reserves values from {BLANK})"
                ))),
                Some(x) => Ok(x),
                None => Ok(BLANK),
            }
        };
        let mut c = dcgmConfig_v2::new_versioned();
        c.gpuId = BLANK;
        c.eccMode = self.ecc_mode.map_or(BLANK, u32::from);
        c.computeMode = self.compute_mode.map_or(BLANK, ComputeMode::raw);
        c.perfState.syncBoost = self.sync_boost.map_or(BLANK, u32::from);
        c.perfState.targetClocks.version = dcgmClockSet_version1 as i32;
        c.perfState.targetClocks.smClock = check("SM clock", self.sm_app_clock_mhz)?;
        c.perfState.targetClocks.memClock = check("memory clock", self.mem_app_clock_mhz)?;
        c.powerLimit.type_ = DCGM_CONFIG_POWER_CAP_INDIVIDUAL;
        c.powerLimit.val = check("power limit", self.power_limit_w)?;
        c.workloadPowerProfiles = [BLANK; DCGM_POWER_PROFILE_ARRAY_SIZE];
        Ok(c)
    }

    /// The same settings in DCGM 3.x's version-1 layout (no workload power profiles).
    fn to_raw_v1(self) -> Result<dcgmConfig_v1> {
        let v2 = self.to_raw()?;
        let mut c = dcgmConfig_v1::new_versioned();
        c.gpuId = v2.gpuId;
        c.eccMode = v2.eccMode;
        c.computeMode = v2.computeMode;
        c.perfState = v2.perfState;
        c.powerLimit = v2.powerLimit;
        Ok(c)
    }
}

/// The versions of `dcgmConfig` this SDK sends, newest first, with the first release that
/// accepts each (3.3.9 accepts only version 1, 4.x only version 2).
const CONFIG_OFFERS: [Offer; 2] = [
    Offer::new(dcgmConfig_version2, DcgmVersion::new(4, 0, 0)),
    Offer::new(dcgmConfig_version1, DcgmVersion::new(0, 0, 0)),
];

/// A configuration of either version (v1 lacks v2's workload power profiles, which
/// [`GpuConfig`] does not carry), checked against the version word the library wrote back;
/// `None` for an entry the library left unfilled (its GPU id blank).
macro_rules! decode_config {
    ($c:expr, $version:expr) => {{
        let c = $c;
        if c.version != $version {
            return Err(Error::UnknownLayout {
                call: "dcgmConfigGet",
                version: c.version,
            });
        }
        Ok(opt_u32(c.gpuId).map(|_| GpuConfig {
            gpu: c.gpuId,
            ecc_mode: opt_bool(c.eccMode),
            compute_mode: opt_u32(c.computeMode).and_then(ComputeMode::from_raw),
            power_limit_w: opt_u32(c.powerLimit.val),
            sm_app_clock_mhz: opt_u32(c.perfState.targetClocks.smClock),
            mem_app_clock_mhz: opt_u32(c.perfState.targetClocks.memClock),
            sync_boost: opt_bool(c.perfState.syncBoost),
        }))
    }};
}

/// DCGM 4.x's configuration.
fn decode_config_v2(c: &dcgmConfig_v2) -> Result<Option<GpuConfig>> {
    decode_config!(c, dcgmConfig_version2)
}

/// DCGM 3.x's configuration.
fn decode_config_v1(c: &dcgmConfig_v1) -> Result<Option<GpuConfig>> {
    decode_config!(c, dcgmConfig_version1)
}

impl Group {
    /// Applies the settings that are `Some` to every GPU of the group. Errors for single GPUs
    /// are listed in the returned error's message.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when the configuration sets nothing or a value lies in the range DCGM
    /// reserves for blanks; a GPU that refuses a setting fails the call with that GPU's code,
    /// every GPU's error listed in the message; `ConnectionLost`.
    #[doc(alias = "dcgmConfigSet")]
    pub fn config_set(&self, config: &GpuConfig) -> Result<()> {
        if config.is_empty() {
            return Err(Error::InvalidArgument(
                "the configuration sets nothing: fill at least one field".into(),
            ));
        }
        let h = self.handle();
        h.ask_versioned(Asked::Config, &CONFIG_OFFERS, |word| {
            if word == dcgmConfig_version1 {
                let mut raw = config.to_raw_v1()?;
                // The C prototype names the current struct; the library reads the version
                // word and the layout of that version.
                self.config_set_raw((&mut raw as *mut dcgmConfig_v1).cast())
            } else {
                let mut raw = config.to_raw()?;
                self.config_set_raw(&mut raw)
            }
        })
    }

    /// `dcgmConfigSet` with a versioned config of any version.
    fn config_set_raw(&self, raw: *mut dcgmConfig_v2) -> Result<()> {
        let (h, lib) = (self.handle(), self.handle().lib());
        let status = Status::new(lib)?;
        // SAFETY: `raw` points at a versioned config whose layout is that of its version word
        // (a library that does not accept the word refuses it before reading further), and the
        // status handle is live.
        let r = unsafe {
            ffi!(
                lib,
                dcgmConfigSet(h.raw(), self.raw_id(), raw, status.raw())
            )
        };
        status.finish("dcgmConfigSet", r)
    }

    /// The target or current configuration of each GPU of the group.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_CONFIGURED` for a group the host engine no longer has (an empty group is `Ok`
    /// with no entry); a GPU whose configuration cannot be read fails the call with its code, every
    /// GPU's error listed in the message; `ConnectionLost`.
    #[doc(alias = "dcgmConfigGet")]
    pub fn config_get(&self, kind: ConfigKind) -> Result<Vec<GpuConfig>> {
        let n = self.gpu_ids()?.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let kind = match kind {
            ConfigKind::Target => DCGM_CONFIG_TARGET_STATE,
            ConfigKind::Current => DCGM_CONFIG_CURRENT_STATE,
        };
        let h = self.handle();
        let list = h.ask_versioned(Asked::Config, &CONFIG_OFFERS, |word| {
            if word == dcgmConfig_version1 {
                let mut list: Vec<dcgmConfig_v1> = (0..n)
                    .map(|_| {
                        let mut c = dcgmConfig_v1::new_versioned();
                        c.gpuId = BLANK;
                        c
                    })
                    .collect();
                // The library steps through the list by the size of the version it accepts.
                self.config_get_raw(kind, n, list.as_mut_ptr().cast())?;
                list.iter()
                    .map(decode_config_v1)
                    .collect::<Result<Vec<_>>>()
            } else {
                let mut list: Vec<dcgmConfig_v2> = (0..n)
                    .map(|_| {
                        let mut c = dcgmConfig_v2::new_versioned();
                        c.gpuId = BLANK;
                        c
                    })
                    .collect();
                self.config_get_raw(kind, n, list.as_mut_ptr())?;
                list.iter()
                    .map(decode_config_v2)
                    .collect::<Result<Vec<_>>>()
            }
        })?;
        Ok(list.into_iter().flatten().collect())
    }

    /// `dcgmConfigGet` into `n` versioned configs of one version.
    fn config_get_raw(
        &self,
        kind: dcgmConfigType_t,
        n: usize,
        list: *mut dcgmConfig_v2,
    ) -> Result<()> {
        let (h, lib) = (self.handle(), self.handle().lib());
        let status = Status::new(lib)?;
        // SAFETY: `list` holds `n` versioned configs of the layout of their version word; the
        // status handle is live.
        let r = unsafe {
            ffi!(
                lib,
                dcgmConfigGet(h.raw(), self.raw_id(), kind, n as c_int, list, status.raw())
            )
        };
        status.finish("dcgmConfigGet", r)
    }

    /// Re-applies the target configuration (after a GPU reset, for example).
    ///
    /// # Errors
    ///
    /// A GPU that refuses the target configuration fails the call with its code, every GPU's error
    /// listed in the message; `ConnectionLost`.
    #[doc(alias = "dcgmConfigEnforce")]
    pub fn config_enforce(&self) -> Result<()> {
        let (h, lib) = (self.handle(), self.handle().lib());
        let status = Status::new(lib)?;
        // SAFETY: plain arguments and a live status handle.
        let r = unsafe { ffi!(lib, dcgmConfigEnforce(h.raw(), self.raw_id(), status.raw())) };
        status.finish("dcgmConfigEnforce", r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_1_config_round_trips_like_version_2() {
        let want = GpuConfig {
            gpu: 3,
            ecc_mode: Some(true),
            compute_mode: Some(ComputeMode::ExclusiveProcess),
            power_limit_w: Some(450),
            sm_app_clock_mhz: Some(1980),
            mem_app_clock_mhz: Some(2619),
            sync_boost: None,
        };
        // DCGM 3.3.9's layout, filled as the library fills it.
        let mut v1 = want.to_raw_v1().unwrap();
        assert_eq!(v1.version, dcgmConfig_version1);
        v1.gpuId = 3;
        assert_eq!(decode_config_v1(&v1).unwrap(), Some(want));
        let mut v2 = want.to_raw().unwrap();
        v2.gpuId = 3;
        assert_eq!(decode_config_v2(&v2).unwrap(), Some(want));
        // An entry the library left unfilled.
        v1.gpuId = BLANK;
        assert_eq!(decode_config_v1(&v1).unwrap(), None);
    }

    #[test]
    fn a_config_in_another_version_is_an_error_not_data() {
        let mut v1 = dcgmConfig_v1::new_versioned();
        v1.gpuId = 0;
        v1.version = dcgmConfig_version2;
        match decode_config_v1(&v1) {
            Err(Error::UnknownLayout { call, version }) => {
                assert_eq!(call, "dcgmConfigGet");
                assert_eq!(version, dcgmConfig_version2);
            }
            other => panic!("{other:?}"),
        }
        let mut v2 = dcgmConfig_v2::new_versioned();
        v2.version = dcgmConfig_version1;
        assert!(matches!(
            decode_config_v2(&v2),
            Err(Error::UnknownLayout { .. })
        ));
    }
}
