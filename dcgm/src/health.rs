//! Health watches: which subsystems a group watches, and the incidents a check reports.

use std::fmt;
use std::time::Duration;

use dcgm_sys::*;

use crate::dialect::{Asked, Offer};
use crate::entity::Entity;
use crate::error::{Error, Result};
use crate::failure::{
    ErrorCategory, ErrorSeverity, FailureMeta, failure_meta, failure_reason_name,
};
use crate::flags::flag_set;
use crate::group::Group;
use crate::library::{c_buf, ffi};
use crate::release::DcgmVersion;

flag_set! {
    /// The subsystems a health watch covers (`DCGM_HEALTH_WATCH_*`); combine them with `|`.
    ///
    /// ```
    /// use dcgm::HealthSystems;
    /// let s = HealthSystems::MEM | HealthSystems::PCIE;
    /// assert!(s.contains(HealthSystems::MEM));
    /// assert_eq!(s.to_string(), "PCIE|MEM");
    /// ```
    pub struct HealthSystems(u32) {
        /// PCIe (needs about a minute of samples before a check says anything).
        const PCIE = DCGM_HEALTH_WATCH_PCIE;
        /// NVLink.
        const NVLINK = DCGM_HEALTH_WATCH_NVLINK;
        /// Power management unit.
        const PMU = DCGM_HEALTH_WATCH_PMU;
        /// Micro-controller unit.
        const MCU = DCGM_HEALTH_WATCH_MCU;
        /// Memory (ECC errors, retired pages, row remapping).
        const MEM = DCGM_HEALTH_WATCH_MEM;
        /// Streaming multiprocessors.
        const SM = DCGM_HEALTH_WATCH_SM;
        /// InfoROM.
        const INFOROM = DCGM_HEALTH_WATCH_INFOROM;
        /// Temperature.
        const THERMAL = DCGM_HEALTH_WATCH_THERMAL;
        /// Power.
        const POWER = DCGM_HEALTH_WATCH_POWER;
        /// Driver (XIDs of the firmware and driver).
        const DRIVER = DCGM_HEALTH_WATCH_DRIVER;
        /// Non-fatal NvSwitch errors.
        const NVSWITCH_NONFATAL = DCGM_HEALTH_WATCH_NVSWITCH_NONFATAL;
        /// Fatal NvSwitch errors.
        const NVSWITCH_FATAL = DCGM_HEALTH_WATCH_NVSWITCH_FATAL;
        /// ConnectX devices.
        const CONNECTX = DCGM_HEALTH_WATCH_CONNECTX;
        /// Every subsystem.
        const ALL = DCGM_HEALTH_WATCH_ALL;
    }
}

/// The outcome of a health check or of one incident, ordered from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum HealthResult {
    /// Healthy.
    #[default]
    Pass,
    /// Something to look at.
    Warn,
    /// Unhealthy: act on the incident.
    Fail,
}

impl HealthResult {
    pub(crate) fn raw(self) -> dcgmHealthWatchResults_t {
        self.code()
    }

    /// DCGM's number for it (`dcgmHealthWatchResults_t`): 0 pass, 10 warn, 20 fail, the value
    /// dcgm-exporter exports.
    pub fn code(self) -> u32 {
        match self {
            HealthResult::Pass => DCGM_HEALTH_RESULT_PASS,
            HealthResult::Warn => DCGM_HEALTH_RESULT_WARN,
            HealthResult::Fail => DCGM_HEALTH_RESULT_FAIL,
        }
    }

    /// From the C value; values DCGM 4.6 does not define count as the next worse result.
    pub(crate) fn from_raw(v: dcgmHealthWatchResults_t) -> Self {
        match v {
            DCGM_HEALTH_RESULT_PASS => Self::Pass,
            1..=DCGM_HEALTH_RESULT_WARN => Self::Warn,
            _ => Self::Fail,
        }
    }
}

impl fmt::Display for HealthResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pass => "PASS",
            Self::Warn => "WARN",
            Self::Fail => "FAIL",
        })
    }
}

/// One problem a health check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incident {
    /// The subsystem.
    pub system: HealthSystems,
    /// How bad it is.
    pub result: HealthResult,
    /// The failure reason (a `DCGM_FR_*` value).
    pub error_code: u32,
    /// The C name of the failure reason (`DCGM_FR_XID_ERROR`), if DCGM 4.6 defines it.
    pub error_name: Option<&'static str>,
    /// The area, if the library describes the failure reason.
    pub category: Option<ErrorCategory>,
    /// The severity and recommended action, if the library describes the failure reason.
    pub severity: Option<ErrorSeverity>,
    /// What the library recommends doing, if it says.
    pub suggestion: Option<String>,
    /// The library's message.
    pub message: String,
    /// The entity concerned.
    pub entity: Entity,
}

impl fmt::Display for Incident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}: {}",
            self.result, self.entity, self.system, self.message
        )?;
        if let Some(n) = self.error_name {
            write!(f, " [{n}]")?;
        }
        Ok(())
    }
}

/// The result of [`Group::health_check`].
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::{Group, HealthSystems};
/// let gpus = Group::with_gpus(&handle, "doc-health", &[0, 1])?;
/// gpus.health_set(HealthSystems::MEM | HealthSystems::PCIE)?;
/// assert!(gpus.health_get()?.contains(HealthSystems::MEM));
/// let report: dcgm::HealthReport = gpus.health_check()?; // the first check starts the window
/// for incident in &report.incidents {
///     println!("{incident}");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthReport {
    /// The worst result of the incidents (`Pass` without any).
    pub overall: HealthResult,
    /// What was found since the previous check.
    pub incidents: Vec<Incident>,
}

impl HealthReport {
    /// Whether nothing was found.
    pub fn is_healthy(&self) -> bool {
        self.overall == HealthResult::Pass
    }
}

impl Group {
    /// Watches these subsystems of the group's entities, with DCGM's default sampling.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_CONFIGURED` for a group the host engine no longer has; `ConnectionLost`. Bits
    /// DCGM does not define are not an error (libdcgm 4.6.0 keeps them and reports them back).
    #[doc(alias = "dcgmHealthSet")]
    pub fn health_set(&self, systems: HealthSystems) -> Result<()> {
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: plain arguments on a live handle and group.
        unsafe { ffi!(lib, dcgmHealthSet(h.raw(), self.raw_id(), systems.bits())) }
    }

    /// Watches these subsystems, sampling every `update_interval` and keeping samples for
    /// `max_keep_age` (`dcgmHealthSet_v2`).
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a zero `update_interval` or one too long for DCGM's microsecond
    /// count; `ConnectionLost`.
    #[doc(alias = "dcgmHealthSet_v2")]
    pub fn health_set_with(
        &self,
        systems: HealthSystems,
        update_interval: Duration,
        max_keep_age: Duration,
    ) -> Result<()> {
        if update_interval.is_zero() {
            return Err(Error::InvalidArgument(
                "the health update interval must be above zero (use health_set for DCGM's default)"
                    .into(),
            ));
        }
        let interval = i64::try_from(update_interval.as_micros())
            .map_err(|_| Error::InvalidArgument("health update interval too long".into()))?;
        let mut p = dcgmHealthSetParams_v2::new_versioned();
        p.groupId = self.raw_id();
        p.systems = systems.bits();
        p.updateInterval = interval;
        p.maxKeepAge = max_keep_age.as_secs_f64();
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: a versioned params struct valid for the call.
        unsafe { ffi!(lib, dcgmHealthSet_v2(h.raw(), &mut p)) }
    }

    /// The subsystems watched.
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmHealthGet")]
    pub fn health_get(&self) -> Result<HealthSystems> {
        let mut systems: dcgmHealthSystems_t = 0;
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: a valid out-pointer.
        unsafe { ffi!(lib, dcgmHealthGet(h.raw(), self.raw_id(), &mut systems)) }?;
        Ok(HealthSystems::from_bits_retain(systems))
    }

    /// What the watches found since the previous check. The first check after
    /// [`Group::health_set`] only starts the window and reports nothing.
    ///
    /// Asks in the answering release's own version: `dcgmHealthResponse_v5` (up to 1024
    /// incidents) from DCGM 4.0, `_v4` (up to 64) before; the version accepted is remembered
    /// per handle.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_CONFIGURED` for a destroyed group; `DCGM_ST_MODULE_NOT_LOADED` when the
    /// health module is denylisted or absent; `UnknownLayout` when the library writes back a
    /// version word this SDK cannot decode.
    #[doc(alias = "dcgmHealthCheck")]
    pub fn health_check(&self) -> Result<HealthReport> {
        let h = self.handle();
        h.ask_versioned(Asked::HealthResponse, &HEALTH_RESPONSE_OFFERS, |word| {
            if word == dcgmHealthResponse_version4 {
                self.health_check_v4()
            } else {
                self.health_check_v5()
            }
        })
    }

    fn health_check_v5(&self) -> Result<HealthReport> {
        let mut r = dcgmHealthResponse_v5::boxed_versioned();
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: a zeroed, versioned response valid for the call.
        unsafe { ffi!(lib, dcgmHealthCheck(h.raw(), self.raw_id(), &mut *r)) }?;
        decode_health_v5(&r, &|code| failure_meta(lib, code))
    }

    /// DCGM 3.x's layout: up to 64 incidents.
    fn health_check_v4(&self) -> Result<HealthReport> {
        let mut r = dcgmHealthResponse_v4::boxed_versioned();
        let (h, lib) = (self.handle(), self.handle().lib());
        // The C prototype names the current struct; the library reads the version word and
        // writes the layout of that version.
        let out = (&mut *r as *mut dcgmHealthResponse_v4).cast::<dcgmHealthResponse_v5>();
        // SAFETY: a zeroed, versioned version-4 response valid for the call: a library that
        // accepts the word writes at most `size_of::<dcgmHealthResponse_v4>()` bytes; one that
        // does not refuses it before writing.
        unsafe { ffi!(lib, dcgmHealthCheck(h.raw(), self.raw_id(), out)) }?;
        decode_health_v4(&r, &|code| failure_meta(lib, code))
    }
}

/// The versions of `dcgmHealthResponse` this SDK sends, newest first, with the first release
/// that accepts each (3.3.9 accepts only version 4, 4.x only version 5).
const HEALTH_RESPONSE_OFFERS: [Offer; 2] = [
    Offer::new(dcgmHealthResponse_version5, DcgmVersion::new(4, 0, 0)),
    Offer::new(dcgmHealthResponse_version4, DcgmVersion::new(0, 0, 0)),
];

/// A health response of either version (v4 and v5 differ only in the incident list's
/// length), checked against the version word the library wrote back.
macro_rules! decode_health {
    ($r:expr, $meta:expr, $version:expr) => {{
        let r = $r;
        if r.version != $version {
            return Err(Error::UnknownLayout {
                call: "dcgmHealthCheck",
                version: r.version,
            });
        }
        let n = (r.incidentCount as usize).min(r.incidents.len());
        Ok(report(
            r.overallHealth,
            r.incidents[..n]
                .iter()
                .map(|i| incident($meta, i))
                .collect(),
        ))
    }};
}

/// DCGM 4.x's health response.
fn decode_health_v5(r: &dcgmHealthResponse_v5, meta: &Meta<'_>) -> Result<HealthReport> {
    decode_health!(r, meta, dcgmHealthResponse_version5)
}

/// DCGM 3.x's health response: up to 64 incidents.
fn decode_health_v4(r: &dcgmHealthResponse_v4, meta: &Meta<'_>) -> Result<HealthReport> {
    decode_health!(r, meta, dcgmHealthResponse_version4)
}

/// What the library says about a failure reason (`dcgmGetErrorMeta` on a live library).
type Meta<'a> = dyn Fn(u32) -> FailureMeta + 'a;

fn incident(meta: &Meta<'_>, i: &dcgmIncidentInfo_t) -> Incident {
    let meta = meta(i.error.code);
    Incident {
        system: HealthSystems::from_bits_retain(i.system),
        result: HealthResult::from_raw(i.health),
        error_code: i.error.code,
        error_name: failure_reason_name(i.error.code),
        category: meta.category,
        severity: meta.severity,
        suggestion: meta.suggestion,
        message: c_buf(&i.error.msg),
        entity: Entity::from_raw(i.entityInfo),
    }
}

fn report(overall: dcgmHealthWatchResults_t, incidents: Vec<Incident>) -> HealthReport {
    let worst = incidents
        .iter()
        .map(|i| i.result)
        .max()
        .unwrap_or(HealthResult::Pass);
    HealthReport {
        overall: HealthResult::from_raw(overall).max(worst),
        incidents,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_meta(_: u32) -> FailureMeta {
        FailureMeta::default()
    }

    fn incident_raw(msg: &str, code: u32, gpu: u32) -> dcgmIncidentInfo_t {
        let mut i: dcgmIncidentInfo_t = zeroed();
        i.system = DCGM_HEALTH_WATCH_MEM;
        i.health = DCGM_HEALTH_RESULT_FAIL;
        i.error.code = code;
        crate::library::write_c_buf(&mut i.error.msg, msg);
        i.entityInfo = Entity::gpu(gpu).raw();
        i
    }

    #[test]
    fn a_version_4_health_response_decodes_like_version_5() {
        // DCGM 3.3.9's layout: version 4, room for 64 incidents.
        let mut v4 = dcgmHealthResponse_v4::boxed_versioned();
        v4.overallHealth = DCGM_HEALTH_RESULT_WARN;
        v4.incidentCount = 1;
        v4.incidents[0] = incident_raw("row remap pending", 4, 1);
        let old = decode_health_v4(&v4, &no_meta).unwrap();

        let mut v5 = dcgmHealthResponse_v5::boxed_versioned();
        v5.overallHealth = DCGM_HEALTH_RESULT_WARN;
        v5.incidentCount = 1;
        v5.incidents[0] = incident_raw("row remap pending", 4, 1);
        assert_eq!(old, decode_health_v5(&v5, &no_meta).unwrap());

        assert_eq!(old.overall, HealthResult::Fail);
        assert_eq!(old.incidents.len(), 1);
        let i = &old.incidents[0];
        assert_eq!(i.message, "row remap pending");
        assert_eq!(i.entity, Entity::gpu(1));
        assert_eq!(i.system, HealthSystems::MEM);
        assert_eq!(i.error_name, Some("DCGM_FR_VOLATILE_DBE_DETECTED"));

        // A count past the list's capacity reads the capacity, no further.
        v4.incidentCount = 5000;
        assert_eq!(decode_health_v4(&v4, &no_meta).unwrap().incidents.len(), 64);
    }

    #[test]
    fn a_health_response_in_another_version_is_an_error_not_data() {
        let mut v4 = dcgmHealthResponse_v4::boxed_versioned();
        v4.incidentCount = 1;
        v4.version = dcgmHealthResponse_version5;
        match decode_health_v4(&v4, &no_meta) {
            Err(Error::UnknownLayout { call, version }) => {
                assert_eq!(call, "dcgmHealthCheck");
                assert_eq!(version, dcgmHealthResponse_version5);
            }
            other => panic!("{other:?}"),
        }
        let mut v5 = dcgmHealthResponse_v5::boxed_versioned();
        v5.version = dcgmHealthResponse_version4;
        assert!(matches!(
            decode_health_v5(&v5, &no_meta),
            Err(Error::UnknownLayout { .. })
        ));
    }
}
