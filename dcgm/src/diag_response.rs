//! What a diagnostic run answers: the result of each test, per entity, with its errors and
//! messages, whichever response layout the release wrote it in (decoded in `diag` and
//! `diag_per_gpu`).

use std::fmt;

use dcgm_sys::*;

use crate::blank::NonBlank;
use crate::entity::{Entity, EntityGroup};
use crate::failure::{ErrorCategory, ErrorSeverity, failure_reason_name};
use crate::library::c_buf;

/// The result of a test, or of a test on one entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiagResult {
    /// Passed.
    Pass,
    /// Skipped (not applicable, or disabled).
    Skip,
    /// Passed with warnings.
    Warn,
    /// Failed.
    Fail,
    /// Not run (also used for result codes this crate does not know).
    NotRun,
}

impl DiagResult {
    /// From the C value.
    pub(crate) fn from_raw(v: dcgmDiagResult_t) -> Self {
        match v {
            DCGM_DIAG_RESULT_PASS => Self::Pass,
            DCGM_DIAG_RESULT_SKIP => Self::Skip,
            DCGM_DIAG_RESULT_WARN => Self::Warn,
            DCGM_DIAG_RESULT_FAIL => Self::Fail,
            _ => Self::NotRun,
        }
    }

    /// The C value (`NotRun` for codes this crate does not know).
    pub(crate) fn raw(self) -> dcgmDiagResult_t {
        match self {
            Self::Pass => DCGM_DIAG_RESULT_PASS,
            Self::Skip => DCGM_DIAG_RESULT_SKIP,
            Self::Warn => DCGM_DIAG_RESULT_WARN,
            Self::Fail => DCGM_DIAG_RESULT_FAIL,
            Self::NotRun => DCGM_DIAG_RESULT_NOT_RUN,
        }
    }

    pub(crate) fn rank(self) -> u8 {
        match self {
            Self::NotRun => 0,
            Self::Skip => 1,
            Self::Pass => 2,
            Self::Warn => 3,
            Self::Fail => 4,
        }
    }
}

impl fmt::Display for DiagResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pass => "PASS",
            Self::Skip => "SKIP",
            Self::Warn => "WARN",
            Self::Fail => "FAIL",
            Self::NotRun => "NOT RUN",
        })
    }
}

/// An error a test reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagError {
    /// The entity, or `None` for a system-wide error.
    pub entity: Option<Entity>,
    /// The failure reason (a `DCGM_FR_*` value).
    pub code: u32,
    /// The C name of the failure reason, if DCGM 4.6 defines it.
    pub code_name: Option<&'static str>,
    /// The area, if the code is one DCGM 4.6 defines.
    pub category: Option<ErrorCategory>,
    /// The severity and recommended action, if the code is one DCGM 4.6 defines.
    pub severity: Option<ErrorSeverity>,
    /// The message.
    pub message: String,
}

impl fmt::Display for DiagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.entity {
            Some(e) => write!(f, "{e}: {}", self.message)?,
            None => f.write_str(&self.message)?,
        }
        if let Some(n) = self.code_name {
            write!(f, " [{n}]")?;
        }
        Ok(())
    }
}

/// One test of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagTest {
    /// The test (`memory`, `pcie`, `software`, ...).
    pub name: String,
    /// The plugin that ran it.
    pub plugin: String,
    /// The test's category (`Deployment`, `Hardware`, ...), if reported.
    pub category: Option<String>,
    /// The overall result.
    pub result: DiagResult,
    /// The result per entity.
    pub results: Vec<(Entity, DiagResult)>,
    /// The errors it reported.
    pub errors: Vec<DiagError>,
    /// Its information messages.
    pub info: Vec<String>,
}

/// An entity a run covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagEntity {
    /// The entity.
    pub entity: Entity,
    /// Its serial number, if reported.
    pub serial: Option<String>,
    /// Its SKU device id, if reported.
    pub sku_device_id: Option<String>,
}

/// The typed result of a diagnostic run.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::{DiagLevel, DiagResult, Group};
/// let gpus = Group::with_gpus(&handle, "doc-diag", &[0])?;
/// let report = gpus.run_diagnostic(DiagLevel::Short)?;
/// for test in &report.tests {
///     println!("{:<20} {}", test.name, test.result);
///     for e in &test.errors {
///         println!("    {e}");
///     }
/// }
/// assert_ne!(report.overall(), DiagResult::Fail);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagResponse {
    /// The tests, in run order.
    pub tests: Vec<DiagTest>,
    /// The entities covered.
    pub entities: Vec<DiagEntity>,
    /// Errors not attributed to any test (a run that failed to start, for example).
    pub other_errors: Vec<DiagError>,
    /// Version of the DCGM that ran the diagnostic.
    pub dcgm_version: String,
    /// Version of the driver.
    pub driver_version: String,
}

impl DiagResponse {
    /// The worst result of the run: `Fail` if a test failed, then `Warn`, then `Pass`;
    /// `Skip` or `NotRun` if nothing passed or failed. Unattributed errors count as `Fail`.
    pub fn overall(&self) -> DiagResult {
        let worst = self.tests.iter().map(|t| t.result).max_by_key(|r| r.rank());
        if !self.other_errors.is_empty() {
            return DiagResult::Fail;
        }
        worst.unwrap_or(DiagResult::NotRun)
    }

    /// A test by name.
    pub fn test(&self, name: &str) -> Option<&DiagTest> {
        self.tests
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
    }
}

pub(crate) fn non_empty(s: String) -> Option<String> {
    s.non_blank()
}

pub(crate) fn diag_error(e: &dcgmDiagError_v1) -> DiagError {
    let entity = Entity::from_raw(e.entity);
    DiagError {
        entity: (entity.group != EntityGroup::None).then_some(entity),
        code: e.code,
        code_name: failure_reason_name(e.code),
        category: ErrorCategory::from_raw(e.category),
        severity: ErrorSeverity::from_raw(e.severity),
        message: c_buf(&e.msg),
    }
}
