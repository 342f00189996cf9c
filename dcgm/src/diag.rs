//! Diagnostics: run a level or named tests on a group and read the typed results.

use crate::blank::NonBlank;
use std::fmt;
use std::time::Duration;

use dcgm_sys::*;

use crate::entity::{Entity, EntityGroup};
use crate::error::{Error, Result};
use crate::failure::{ErrorCategory, ErrorSeverity};
use crate::group::Group;
use crate::handle::Handle;
use crate::library::{c_buf, ffi, write_c_buf};

/// How long and thorough a diagnostic run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DiagLevel {
    /// Seconds: software and basic checks (`DCGM_DIAG_LVL_SHORT`, dcgmi `-r 1`).
    Short,
    /// About two minutes: adds short stress tests (`DCGM_DIAG_LVL_MED`, `-r 2`).
    Medium,
    /// About fifteen minutes: full stress and bandwidth tests (`DCGM_DIAG_LVL_LONG`, `-r 3`).
    Long,
    /// An hour or more: extended stress and memory tests (`DCGM_DIAG_LVL_XLONG`, `-r 4`).
    ExtraLong,
}

impl DiagLevel {
    /// The `dcgmRunDiagnostic` level.
    pub(crate) fn raw(self) -> dcgmDiagnosticLevel_t {
        match self {
            Self::Short => DCGM_DIAG_LVL_SHORT,
            Self::Medium => DCGM_DIAG_LVL_MED,
            Self::Long => DCGM_DIAG_LVL_LONG,
            Self::ExtraLong => DCGM_DIAG_LVL_XLONG,
        }
    }

    /// The `validate` value of a run request.
    fn validate(self) -> dcgmPolicyValidation_t {
        match self {
            Self::Short => DCGM_POLICY_VALID_SV_SHORT,
            Self::Medium => DCGM_POLICY_VALID_SV_MED,
            Self::Long => DCGM_POLICY_VALID_SV_LONG,
            Self::ExtraLong => DCGM_POLICY_VALID_SV_XLONG,
        }
    }
}

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

    fn rank(self) -> u8 {
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

    /// Decodes a response of the version this SDK sent (12), checking every count and index
    /// against the arrays it refers to; another version word is `UnknownLayout`, not data.
    fn decode(call: &'static str, r: &dcgmDiagResponse_v12) -> Result<Self> {
        if r.version != dcgmDiagResponse_version12 {
            return Err(Error::UnknownLayout {
                call,
                version: r.version,
            });
        }
        Ok(Self::from_raw(r))
    }

    /// Decodes a response, checking every count and index against the arrays it refers to.
    fn from_raw(r: &dcgmDiagResponse_v12) -> Self {
        let n_errors = usize::from(r.numErrors).min(r.errors.len());
        let n_info = usize::from(r.numInfo).min(r.info.len());
        let n_results = usize::from(r.numResults).min(r.results.len());
        let n_categories = usize::from(r.numCategories).min(r.categories.len());
        let n_entities = usize::from(r.numEntities).min(r.entities.len());
        let n_tests = usize::from(r.numTests).min(r.tests.len());
        let mut used_error = vec![false; n_errors];
        let tests = r.tests[..n_tests]
            .iter()
            .map(|t| {
                let ne = usize::from(t.numErrors).min(t.errorIndices.len());
                let errors = t.errorIndices[..ne]
                    .iter()
                    .map(|&i| usize::from(i))
                    .filter(|&i| i < n_errors)
                    .map(|i| {
                        used_error[i] = true;
                        diag_error(&r.errors[i])
                    })
                    .collect();
                let ni = usize::from(t.numInfo).min(t.infoIndices.len());
                let info = t.infoIndices[..ni]
                    .iter()
                    .map(|&i| usize::from(i))
                    .filter(|&i| i < n_info)
                    .map(|i| c_buf(&r.info[i].msg))
                    .collect();
                let nr = usize::from(t.numResults).min(t.resultIndices.len());
                let results = t.resultIndices[..nr]
                    .iter()
                    .map(|&i| usize::from(i))
                    .filter(|&i| i < n_results)
                    .map(|i| {
                        let x = &r.results[i];
                        (Entity::from_raw(x.entity), DiagResult::from_raw(x.result))
                    })
                    .collect();
                let ci = usize::from(t.categoryIndex);
                let category = (ci < n_categories)
                    .then(|| c_buf(&r.categories[ci]))
                    .filter(|s| !s.is_empty());
                DiagTest {
                    name: c_buf(&t.name),
                    plugin: c_buf(&t.pluginName),
                    category,
                    result: DiagResult::from_raw(t.result),
                    results,
                    errors,
                    info,
                }
            })
            .collect();
        let other_errors = r.errors[..n_errors]
            .iter()
            .zip(&used_error)
            .filter(|(_, used)| !**used)
            .map(|(e, _)| diag_error(e))
            .collect();
        let entities = r.entities[..n_entities]
            .iter()
            .map(|e| DiagEntity {
                entity: Entity::from_raw(e.entity),
                serial: non_empty(c_buf(&e.serialNum)),
                sku_device_id: non_empty(c_buf(&e.skuDeviceId)),
            })
            .collect();
        Self {
            tests,
            entities,
            other_errors,
            dcgm_version: c_buf(&r.dcgmVersion),
            driver_version: c_buf(&r.driverVersion),
        }
    }
}

fn non_empty(s: String) -> Option<String> {
    s.non_blank()
}

fn diag_error(e: &dcgmDiagError_v1) -> DiagError {
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

#[derive(Debug, Clone, PartialEq, Eq)]
enum What {
    Level(DiagLevel),
    Tests(Vec<String>),
}

/// What to run, and how: a level or named tests, test parameters, flags and a timeout.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::{DiagRequest, Group};
/// let gpus = Group::with_gpus(&handle, "doc-diag-req", &[0, 1])?;
/// let request = DiagRequest::tests(["memory", "pcie"])
///     .param("pcie.test_pinned=false")
///     .verbose(true)
///     .timeout(std::time::Duration::from_secs(600));
/// let report = gpus.run_diag(&request)?;
/// println!("{} tests, overall {}", report.tests.len(), report.overall());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagRequest {
    what: What,
    params: Vec<String>,
    verbose: bool,
    fail_early: bool,
    timeout: Option<Duration>,
}

impl DiagRequest {
    /// Run a level.
    pub fn level(level: DiagLevel) -> Self {
        Self {
            what: What::Level(level),
            params: Vec::new(),
            verbose: false,
            fail_early: false,
            timeout: None,
        }
    }

    /// Run these tests (at most 20 names, each under 50 bytes).
    pub fn tests<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            what: What::Tests(names.into_iter().map(Into::into).collect()),
            ..Self::level(DiagLevel::Short)
        }
    }

    /// Adds a test parameter, `test.parameter=value` (at most 100, each under 1050 bytes).
    pub fn param(mut self, param: impl Into<String>) -> Self {
        self.params.push(param.into());
        self
    }

    /// Report information messages as well as warnings (`DCGM_RUN_FLAGS_VERBOSE`).
    pub fn verbose(mut self, yes: bool) -> Self {
        self.verbose = yes;
        self
    }

    /// Stop the stress tests at the first failure (`DCGM_RUN_FLAGS_FAIL_EARLY`).
    pub fn fail_early(mut self, yes: bool) -> Self {
        self.fail_early = yes;
        self
    }

    /// Give up after this long (whole seconds; zero means no limit).
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(t);
        self
    }

    /// Checks the request and fills a run struct for `group`.
    fn to_raw(&self, group: dcgmGpuGrp_t) -> Result<Box<dcgmRunDiag_v10>> {
        let mut rd = dcgmRunDiag_v10::boxed_versioned();
        rd.groupId = group;
        match &self.what {
            What::Level(l) => rd.validate = l.validate(),
            What::Tests(names) => {
                if names.is_empty() {
                    return Err(Error::InvalidArgument(
                        "no test named: give at least one test, or use DiagRequest::level".into(),
                    ));
                }
                if names.len() > DCGM_MAX_TEST_NAMES {
                    return Err(Error::InvalidArgument(format!(
                        "at most {DCGM_MAX_TEST_NAMES} tests per run, not {}: split them over several runs",
                        names.len()
                    )));
                }
                for (dst, n) in rd.testNames.iter_mut().zip(names) {
                    check_text("test name", n, DCGM_MAX_TEST_NAMES_LEN)?;
                    write_c_buf(dst, n);
                }
                rd.validate = DCGM_POLICY_VALID_NONE;
            }
        }
        if self.params.len() > DCGM_MAX_TEST_PARMS {
            return Err(Error::InvalidArgument(format!(
                "at most {DCGM_MAX_TEST_PARMS} test parameters per run, not {}",
                self.params.len()
            )));
        }
        for (dst, p) in rd.testParms.iter_mut().zip(&self.params) {
            check_text("test parameter", p, DCGM_MAX_TEST_PARMS_LEN_V2)?;
            let ok = p.split_once('=').is_some_and(|(k, _)| {
                k.split_once('.')
                    .is_some_and(|(t, n)| !t.trim().is_empty() && !n.trim().is_empty())
            });
            if !ok {
                return Err(Error::InvalidArgument(format!(
                    "test parameter {p:?} is not of the form test.parameter=value"
                )));
            }
            write_c_buf(dst, p);
        }
        if self.verbose {
            rd.flags |= DCGM_RUN_FLAGS_VERBOSE;
        }
        if self.fail_early {
            rd.flags |= DCGM_RUN_FLAGS_FAIL_EARLY;
        }
        if let Some(t) = self.timeout {
            rd.timeoutSeconds = u32::try_from(t.as_secs()).map_err(|_| {
                Error::InvalidArgument(format!("diagnostic timeout {t:?} is too long"))
            })?;
        }
        Ok(rd)
    }
}

fn check_text(what: &str, s: &str, cap: usize) -> Result<()> {
    if s.trim().is_empty() {
        return Err(Error::InvalidArgument(format!("empty {what}")));
    }
    if s.len() >= cap {
        return Err(Error::InvalidArgument(format!(
            "{what} {s:?} is {} bytes; DCGM allows at most {}",
            s.len(),
            cap - 1
        )));
    }
    if s.contains('\0') {
        return Err(Error::InvalidArgument(format!(
            "{what} {s:?} contains a NUL byte"
        )));
    }
    Ok(())
}

impl Group {
    /// Runs a diagnostic level on the group and waits for it (`dcgmRunDiagnostic`). This can
    /// take minutes to hours depending on the level.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NVVS_BINARY_NOT_FOUND` where the DCGM diagnostic package is not installed;
    /// `DCGM_ST_GROUP_IS_EMPTY` for an empty group; `DCGM_ST_MODULE_NOT_LOADED` when the diag
    /// module is denylisted; `DCGM_ST_DIAG_ALREADY_RUNNING`; `ConnectionLost`.
    #[doc(alias = "dcgmRunDiagnostic")]
    pub fn run_diagnostic(&self, level: DiagLevel) -> Result<DiagResponse> {
        let mut resp = dcgmDiagResponse_v12::boxed_versioned();
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: a zeroed, versioned response valid for the call.
        unsafe {
            ffi!(
                lib,
                dcgmRunDiagnostic(h.raw(), self.raw_id(), level.raw(), &mut *resp)
            )
        }?;
        DiagResponse::decode("dcgmRunDiagnostic", &resp)
    }

    /// Runs what `request` describes on the group and waits for it (`dcgmActionValidate_v2`).
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NVVS_BINARY_NOT_FOUND` where the DCGM diagnostic package is not installed;
    /// `DCGM_ST_DIAG_ALREADY_RUNNING`; `DCGM_ST_GROUP_IS_EMPTY` for an empty group.
    #[doc(alias = "dcgmActionValidate_v2")]
    pub fn run_diag(&self, request: &DiagRequest) -> Result<DiagResponse> {
        let mut rd = request.to_raw(self.raw_id())?;
        let mut resp = dcgmDiagResponse_v12::boxed_versioned();
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: a filled, versioned run request and a zeroed, versioned response, both valid
        // for the call.
        unsafe { ffi!(lib, dcgmActionValidate_v2(h.raw(), &mut *rd, &mut *resp)) }?;
        DiagResponse::decode("dcgmActionValidate_v2", &resp)
    }
}

impl Handle {
    /// Stops the diagnostic running on this host engine (its `run_*` call then returns).
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmStopDiagnostic")]
    pub fn stop_diagnostic(&self) -> Result<()> {
        let lib = self.lib();
        // SAFETY: a plain argument on a live handle.
        unsafe { ffi!(lib, dcgmStopDiagnostic(self.raw())) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_indices_are_ignored() {
        let mut r = dcgm_sys::boxed_zeroed::<dcgmDiagResponse_v12>();
        r.numTests = 1;
        r.numErrors = 1;
        r.numResults = 1;
        r.results[0].entity = Entity::gpu(3).raw();
        r.results[0].result = DCGM_DIAG_RESULT_FAIL;
        r.errors[0].entity = Entity::gpu(3).raw();
        r.errors[0].code = DCGM_FR_FAULTY_MEMORY;
        r.tests[0].result = DCGM_DIAG_RESULT_FAIL;
        r.tests[0].numErrors = 3;
        r.tests[0].errorIndices[..3].copy_from_slice(&[0, 7, 200]);
        r.tests[0].numResults = 2;
        r.tests[0].resultIndices[..2].copy_from_slice(&[0, 9000]);
        r.tests[0].categoryIndex = 4;
        r.tests[0].numInfo = 255;
        let d = DiagResponse::from_raw(&r);
        assert_eq!(d.tests.len(), 1);
        let t = &d.tests[0];
        assert_eq!(t.errors.len(), 1);
        assert_eq!(t.errors[0].code_name, Some("DCGM_FR_FAULTY_MEMORY"));
        assert_eq!(t.results, vec![(Entity::gpu(3), DiagResult::Fail)]);
        assert_eq!(t.category, None);
        assert!(t.info.is_empty());
        assert!(d.other_errors.is_empty());
        assert_eq!(d.overall(), DiagResult::Fail);
    }

    #[test]
    fn a_response_in_another_version_is_an_error_not_data() {
        let mut r = dcgmDiagResponse_v12::boxed_versioned();
        r.numTests = 1;
        assert!(DiagResponse::decode("dcgmRunDiagnostic", &r).is_ok());
        // DCGM 4.1's layout has the same size and another version word.
        r.version = dcgmDiagResponse_version11;
        match DiagResponse::decode("dcgmRunDiagnostic", &r) {
            Err(Error::UnknownLayout { call, version }) => {
                assert_eq!(call, "dcgmRunDiagnostic");
                assert_eq!(version, dcgmDiagResponse_version11);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn requests_are_checked() {
        assert!(DiagRequest::tests(Vec::<String>::new()).to_raw(1).is_err());
        assert!(DiagRequest::tests(["x".repeat(50)]).to_raw(1).is_err());
        assert!(
            DiagRequest::level(DiagLevel::Short)
                .param("nodot=1")
                .to_raw(1)
                .is_err()
        );
        let rd = DiagRequest::level(DiagLevel::Long)
            .param("memory.is_allowed=true")
            .to_raw(1)
            .unwrap();
        assert_eq!(rd.validate, DCGM_POLICY_VALID_SV_LONG);
    }
}
