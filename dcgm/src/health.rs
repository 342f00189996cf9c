//! Health watches: which subsystems a group watches, and the incidents a check reports.

use std::fmt;
use std::time::Duration;

use dcgm_sys::*;

use crate::entity::Entity;
use crate::error::{Error, Result};
use crate::failure::{ErrorCategory, ErrorSeverity, failure_meta};
use crate::flags::flag_set;
use crate::group::Group;
use crate::library::{c_buf, ffi};

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
    /// # Errors
    ///
    /// `DCGM_ST_NOT_CONFIGURED` for a destroyed group; `DCGM_ST_MODULE_NOT_LOADED` when the
    /// health module is denylisted or absent.
    #[doc(alias = "dcgmHealthCheck")]
    pub fn health_check(&self) -> Result<HealthReport> {
        let mut r = dcgmHealthResponse_v5::boxed_versioned();
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: a zeroed, versioned response valid for the call.
        unsafe { ffi!(lib, dcgmHealthCheck(h.raw(), self.raw_id(), &mut *r)) }?;
        let n = (r.incidentCount as usize).min(r.incidents.len());
        let incidents: Vec<Incident> = r.incidents[..n]
            .iter()
            .map(|i| {
                let meta = failure_meta(lib, i.error.code);
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
            })
            .collect();
        let worst = incidents
            .iter()
            .map(|i| i.result)
            .max()
            .unwrap_or(HealthResult::Pass);
        Ok(HealthReport {
            overall: HealthResult::from_raw(r.overallHealth).max(worst),
            incidents,
        })
    }
}
