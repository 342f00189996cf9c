//! Diagnostics: run a level or named tests on a group and read the typed results.

use std::time::Duration;

use dcgm_sys::*;

use crate::diag_response::{DiagEntity, DiagResponse, DiagResult, DiagTest, diag_error, non_empty};
use crate::dialect::{Asked, Offer};
use crate::entity::Entity;
use crate::error::{Error, Result};
use crate::group::Group;
use crate::handle::Handle;
use crate::library::{c_buf, ffi, write_c_buf};
use crate::release::DcgmVersion;

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

impl DiagResponse {
    /// Decodes a response of the version this SDK sent (`asked`: 12, 11 or 10), checking
    /// every count and index against the arrays it refers to; a version word other than the
    /// one sent (the per-GPU layouts v7 to v9 included, which this SDK never asks for) is
    /// `UnknownLayout`, not data.
    fn decode(call: &'static str, r: &dcgmDiagResponse_v12, asked: u32) -> Result<Self> {
        let unknown = Error::UnknownLayout {
            call,
            version: r.version,
        };
        if r.version != asked {
            return Err(unknown);
        }
        let raw: *const dcgmDiagResponse_v12 = r;
        if asked == dcgmDiagResponse_version12 {
            Ok(Self::from_raw(r))
        } else if asked == dcgmDiagResponse_version11 {
            // SAFETY: the library wrote the version-11 layout (its word is checked above) into
            // a buffer of the same size and alignment, all of it plain integers.
            Ok(Self::from_raw_v11(unsafe {
                &*raw.cast::<dcgmDiagResponse_v11>()
            }))
        } else if asked == dcgmDiagResponse_version10 {
            // SAFETY: as above, for the version-10 layout.
            Ok(crate::diag_per_gpu::decode(unsafe {
                &*raw.cast::<dcgmDiagResponse_v10>()
            }))
        } else {
            Err(unknown)
        }
    }

    /// Decodes a version-12 response (DCGM 4.2 and later).
    fn from_raw(r: &dcgmDiagResponse_v12) -> Self {
        decode_by_test!(r)
    }

    /// Decodes a version-11 response (DCGM 4.0 and 4.1: 16 info messages, not 128).
    fn from_raw_v11(r: &dcgmDiagResponse_v11) -> Self {
        decode_by_test!(r)
    }
}

/// A response of the per-test layouts (v11 and v12 differ only in the number of info
/// messages), checking every count and index against the arrays it refers to.
macro_rules! decode_by_test {
    ($r:expr) => {{
        let r = $r;
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
        DiagResponse {
            tests,
            entities,
            other_errors,
            dcgm_version: c_buf(&r.dcgmVersion),
            driver_version: c_buf(&r.driverVersion),
        }
    }};
}
use decode_by_test;

// The three response layouts a run is asked in share one buffer.
const _: () = assert!(
    size_of::<dcgmDiagResponse_v12>() == size_of::<dcgmDiagResponse_v11>()
        && size_of::<dcgmDiagResponse_v12>() == size_of::<dcgmDiagResponse_v10>()
        && align_of::<dcgmDiagResponse_v12>() == align_of::<dcgmDiagResponse_v11>()
        && align_of::<dcgmDiagResponse_v12>() == align_of::<dcgmDiagResponse_v10>()
);

/// The response versions `dcgmRunDiagnostic` is asked in, newest first, with the first
/// release that accepts each: v12 from 4.2, v11 from 4.0, v10 in 3.3.x (3.3.7 and later).
const RESPONSE_OFFERS: [Offer; 3] = [
    Offer::new(dcgmDiagResponse_version12, DcgmVersion::new(4, 2, 0)),
    Offer::new(dcgmDiagResponse_version11, DcgmVersion::new(4, 0, 0)),
    Offer::new(dcgmDiagResponse_version10, DcgmVersion::new(0, 0, 0)),
];

/// The run-parameter and response versions `dcgmActionValidate_v2` takes together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunWords {
    /// The `dcgmRunDiag` version word.
    pub run: u32,
    /// The `dcgmDiagResponse` version word.
    pub response: u32,
}

/// The pairs `dcgmActionValidate_v2` is asked in, newest first, with the first release that
/// accepts each: each release pairs a response version with particular run versions (4.1
/// takes RunDiag v10 or v9 with response v11, 4.0 only v9; 3.3.9 takes v8 with v10).
const RUN_OFFERS: [Offer<RunWords>; 4] = [
    Offer::new(
        RunWords {
            run: dcgmRunDiag_version10,
            response: dcgmDiagResponse_version12,
        },
        DcgmVersion::new(4, 2, 0),
    ),
    Offer::new(
        RunWords {
            run: dcgmRunDiag_version10,
            response: dcgmDiagResponse_version11,
        },
        DcgmVersion::new(4, 1, 0),
    ),
    Offer::new(
        RunWords {
            run: dcgmRunDiag_version9,
            response: dcgmDiagResponse_version11,
        },
        DcgmVersion::new(4, 0, 0),
    ),
    Offer::new(
        RunWords {
            run: dcgmRunDiag_version8,
            response: dcgmDiagResponse_version10,
        },
        DcgmVersion::new(0, 0, 0),
    ),
];

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

    /// Checks the request and fills a version-10 run struct for `group`.
    fn to_raw(&self, group: dcgmGpuGrp_t) -> Result<Box<dcgmRunDiag_v10>> {
        fill_run!(dcgmRunDiag_v10, self, group)
    }

    /// Checks the request and fills a version-9 run struct (DCGM 4.0).
    fn to_raw_v9(&self, group: dcgmGpuGrp_t) -> Result<Box<dcgmRunDiag_v9>> {
        fill_run!(dcgmRunDiag_v9, self, group)
    }

    /// Checks the request and fills a version-8 run struct (DCGM 3.3.9).
    fn to_raw_v8(&self, group: dcgmGpuGrp_t) -> Result<Box<dcgmRunDiag_v8>> {
        fill_run!(dcgmRunDiag_v8, self, group)
    }
}

/// Checks a request and fills a run struct of any version v8 to v10 (what this SDK sets,
/// the group, level or tests, parameters, flags and timeout, is in each of them under the
/// same name and size).
macro_rules! fill_run {
    ($ty:ty, $req:expr, $group:expr) => {{
        let req: &DiagRequest = $req;
        let mut rd = <$ty>::boxed_versioned();
        rd.groupId = $group;
        match &req.what {
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
        if req.params.len() > DCGM_MAX_TEST_PARMS {
            return Err(Error::InvalidArgument(format!(
                "at most {DCGM_MAX_TEST_PARMS} test parameters per run, not {}",
                req.params.len()
            )));
        }
        for (dst, p) in rd.testParms.iter_mut().zip(&req.params) {
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
        if req.verbose {
            rd.flags |= DCGM_RUN_FLAGS_VERBOSE;
        }
        if req.fail_early {
            rd.flags |= DCGM_RUN_FLAGS_FAIL_EARLY;
        }
        if let Some(t) = req.timeout {
            rd.timeoutSeconds = u32::try_from(t.as_secs()).map_err(|_| {
                Error::InvalidArgument(format!("diagnostic timeout {t:?} is too long"))
            })?;
        }
        Ok(rd)
    }};
}
use fill_run;

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
    /// Asks in the answering release's own version: `dcgmDiagResponse_v12` from DCGM 4.2,
    /// `_v11` in 4.0 and 4.1, `_v10` (per-GPU results) in 3.3.x, each decoded into the same
    /// [`DiagResponse`]; the version accepted is remembered per handle.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NVVS_BINARY_NOT_FOUND` where the DCGM diagnostic package is not installed;
    /// `DCGM_ST_GROUP_IS_EMPTY` for an empty group; `DCGM_ST_MODULE_NOT_LOADED` when the diag
    /// module is denylisted; `DCGM_ST_DIAG_ALREADY_RUNNING`; `ConnectionLost`;
    /// `UnknownLayout` when the library writes back a version word other than the one sent.
    #[doc(alias = "dcgmRunDiagnostic")]
    pub fn run_diagnostic(&self, level: DiagLevel) -> Result<DiagResponse> {
        let h = self.handle();
        h.ask_versioned(Asked::DiagResponse, &RESPONSE_OFFERS, |word| {
            let mut resp = response_buffer(word);
            let lib = h.lib();
            // SAFETY: a zeroed response of the size of every layout, its version word set;
            // the library writes the layout that word names.
            unsafe {
                ffi!(
                    lib,
                    dcgmRunDiagnostic(h.raw(), self.raw_id(), level.raw(), &mut *resp)
                )
            }?;
            DiagResponse::decode("dcgmRunDiagnostic", &resp, word)
        })
    }

    /// Runs what `request` describes on the group and waits for it (`dcgmActionValidate_v2`).
    ///
    /// Asks in the answering release's own versions: run parameters v10 with response v12
    /// from DCGM 4.2, v10 with v11 in 4.1, v9 with v11 in 4.0, v8 with v10 in 3.3.x.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NVVS_BINARY_NOT_FOUND` where the DCGM diagnostic package is not installed;
    /// `DCGM_ST_DIAG_ALREADY_RUNNING`; `DCGM_ST_GROUP_IS_EMPTY` for an empty group;
    /// `UnknownLayout` when the library writes back a version word other than the one sent.
    #[doc(alias = "dcgmActionValidate_v2")]
    pub fn run_diag(&self, request: &DiagRequest) -> Result<DiagResponse> {
        // A bad request is refused before any call, in every dialect.
        request.to_raw(self.raw_id())?;
        let h = self.handle();
        h.ask_versioned(Asked::RunDiag, &RUN_OFFERS, |words| {
            let group = self.raw_id();
            if words.run == dcgmRunDiag_version10 {
                self.validate(&mut *request.to_raw(group)?, words.response)
            } else if words.run == dcgmRunDiag_version9 {
                self.validate(&mut *request.to_raw_v9(group)?, words.response)
            } else {
                self.validate(&mut *request.to_raw_v8(group)?, words.response)
            }
        })
    }

    /// `dcgmActionValidate_v2` with run parameters of any version and a response of version
    /// `response`.
    fn validate<R: RunParams>(&self, rd: &mut R, response: u32) -> Result<DiagResponse> {
        let mut resp = response_buffer(response);
        let (h, lib) = (self.handle(), self.handle().lib());
        let rd = (rd as *mut R).cast::<dcgmRunDiag_v10>();
        // SAFETY: `rd` is a filled, versioned run struct (v8, v9 or v10: the library reads
        // its version word and then only that version's size) and `resp` a zeroed response
        // of the size of every layout with its version word set, both valid for the call.
        unsafe { ffi!(lib, dcgmActionValidate_v2(h.raw(), rd, &mut *resp)) }?;
        DiagResponse::decode("dcgmActionValidate_v2", &resp, response)
    }
}

/// The run-parameter layouts `dcgmActionValidate_v2` takes (its prototype names v10; the
/// library reads the version word first).
trait RunParams {}
impl RunParams for dcgmRunDiag_v10 {}
impl RunParams for dcgmRunDiag_v9 {}
impl RunParams for dcgmRunDiag_v8 {}

/// A zeroed response buffer (the v10 to v12 layouts have one size) with version word `word`.
fn response_buffer(word: u32) -> Box<dcgmDiagResponse_v12> {
    let mut r = dcgm_sys::boxed_zeroed::<dcgmDiagResponse_v12>();
    r.version = word;
    r
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

    /// A response image written byte by byte at the offsets of NVIDIA's headers (computed
    /// here from the members' sizes, not taken from this crate's structs).
    struct Image(Vec<u8>);

    impl Image {
        fn new(version: u32) -> Self {
            let mut i = Self(vec![0; size_of::<dcgmDiagResponse_v12>()]);
            i.u32(0, version);
            i
        }
        fn u8(&mut self, at: usize, v: u8) {
            self.0[at] = v;
        }
        fn u16(&mut self, at: usize, v: u16) {
            self.0[at..at + 2].copy_from_slice(&v.to_ne_bytes());
        }
        fn u32(&mut self, at: usize, v: u32) {
            self.0[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        }
        fn str(&mut self, at: usize, v: &str) {
            self.0[at..at + v.len()].copy_from_slice(v.as_bytes());
        }
        /// A GPU as a `dcgmGroupEntityPair_t`.
        fn gpu(&mut self, at: usize, id: u32) {
            self.u32(at, 1);
            self.u32(at + 4, id);
        }
        fn decode(&self, asked: u32) -> Result<DiagResponse> {
            let mut r = dcgm_sys::boxed_zeroed::<dcgmDiagResponse_v12>();
            // SAFETY: the image has the struct's size; every byte pattern is a valid value of
            // its plain-integer members.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.0.as_ptr(),
                    (&mut *r as *mut dcgmDiagResponse_v12).cast::<u8>(),
                    self.0.len(),
                );
            }
            DiagResponse::decode("dcgmActionValidate_v2", &r, asked)
        }
    }

    /// Offsets of the per-test layouts: the size of a test run (it holds the info indices)
    /// and where the info messages end.
    struct PerTest {
        test_size: usize,
        info_count: usize,
    }

    /// One failed memory test on GPU 0 with an error, an info message, a category and an
    /// entity, in the v11 (`info_count` 16) or v12 (128) layout.
    fn per_test_image(version: u32, l: &PerTest) -> Image {
        let mut i = Image::new(version);
        for (at, n) in [(4, 1), (5, 1), (6, 1), (7, 1)] {
            i.u8(at, n);
        }
        i.u16(8, 1);
        i.u16(10, 1);
        let t = 12;
        i.str(t, "memory");
        i.str(t + 32, "memory");
        i.u32(t + 64, DCGM_DIAG_RESULT_FAIL);
        i.u8(t + 68, 1); // numErrors
        i.u8(t + 69, 1); // numInfo
        i.u8(t + 70, 0); // categoryIndex
        i.u16(t + 72, 1); // numResults
        i.u8(t + 74, 0); // errorIndices[0]
        i.u8(t + 106, 0); // infoIndices[0]
        i.u16(t + 106 + l.info_count, 0); // resultIndices[0]
        let entities = t + 20 * l.test_size;
        i.gpu(entities, 0);
        i.str(entities + 8, "1650924060039");
        i.str(entities + 264, "2335");
        let errors = entities + 1024 * 272;
        i.gpu(errors, 0);
        i.u32(errors + 8, DCGM_FR_FAULTY_MEMORY);
        i.str(errors + 20, "a faulty row");
        let info = errors + 32 * 536;
        i.gpu(info, 0);
        i.str(info + 8, "ran for 5 s");
        let results = info + l.info_count * 524;
        i.gpu(results, 0);
        i.u32(results + 8, DCGM_DIAG_RESULT_FAIL);
        let categories = results + 20 * 1024 * 16;
        i.str(categories, "Hardware");
        i.str(categories + 100, "4.1.1");
        i.str(categories + 112, "580.159.04");
        i
    }

    fn check_per_test(d: &DiagResponse) {
        assert_eq!(d.tests.len(), 1);
        let t = &d.tests[0];
        assert_eq!((t.name.as_str(), t.plugin.as_str()), ("memory", "memory"));
        assert_eq!(t.category.as_deref(), Some("Hardware"));
        assert_eq!(t.result, DiagResult::Fail);
        assert_eq!(t.results, vec![(Entity::gpu(0), DiagResult::Fail)]);
        assert_eq!(t.errors.len(), 1);
        assert_eq!(t.errors[0].entity, Some(Entity::gpu(0)));
        assert_eq!(t.errors[0].code_name, Some("DCGM_FR_FAULTY_MEMORY"));
        assert_eq!(t.errors[0].message, "a faulty row");
        assert_eq!(t.info, vec!["ran for 5 s".to_string()]);
        assert_eq!(
            d.entities,
            vec![DiagEntity {
                entity: Entity::gpu(0),
                serial: Some("1650924060039".into()),
                sku_device_id: Some("2335".into()),
            }]
        );
        assert!(d.other_errors.is_empty());
        assert_eq!(d.dcgm_version, "4.1.1");
        assert_eq!(d.driver_version, "580.159.04");
        assert_eq!(d.overall(), DiagResult::Fail);
    }

    #[test]
    fn a_version_11_response_decodes_as_version_12_does() {
        let v11 = PerTest {
            test_size: 4224,
            info_count: 16,
        };
        let v12 = PerTest {
            test_size: 4336,
            info_count: 128,
        };
        let d11 = per_test_image(dcgmDiagResponse_version11, &v11)
            .decode(dcgmDiagResponse_version11)
            .unwrap();
        check_per_test(&d11);
        let d12 = per_test_image(dcgmDiagResponse_version12, &v12)
            .decode(dcgmDiagResponse_version12)
            .unwrap();
        assert_eq!(d11, d12);
        // The v11 image read as v12 would put its info and results elsewhere: the version
        // word decides, and a word other than the one asked is an error.
        match per_test_image(dcgmDiagResponse_version11, &v11).decode(dcgmDiagResponse_version12) {
            Err(Error::UnknownLayout { version, .. }) => {
                assert_eq!(version, dcgmDiagResponse_version11)
            }
            other => panic!("{other:?}"),
        }
    }

    /// DCGM 3.3.9's per-GPU layout: ten software sub-tests (one warned), GPU 0 and 1 with
    /// memory (GPU 1 failed) and pcie run, the rest not run.
    fn per_gpu_image() -> Image {
        let mut i = Image::new(dcgmDiagResponse_version10);
        i.u32(4, 2); // gpuCount
        i.u32(8, 10); // levelOneTestCount
        let result = |base: usize, k: usize| base + k * 3156;
        let level_one = 12;
        for k in 0..16 {
            i.u32(result(level_one, k), DCGM_DIAG_RESULT_NOT_RUN);
        }
        for k in 0..10 {
            i.u32(result(level_one, k), DCGM_DIAG_RESULT_PASS);
        }
        let warned = result(level_one, 3);
        i.u32(warned, DCGM_DIAG_RESULT_WARN);
        i.str(warned + 4, "the CUDA runtime library is old");
        i.u32(warned + 4 + 512, u32::MAX); // gpuId -1: system-wide
        i.u32(warned + 4 + 516, DCGM_FR_CUDA_UNBOUND);
        i.str(warned + 2644, "checked 3 libraries");
        let per_gpu = level_one + 16 * 3156;
        for g in 0..32 {
            let at = per_gpu + g * 41036;
            i.u32(at, if g < 2 { g as u32 } else { 32 });
            for slot in 0..13 {
                i.u32(result(at + 8, slot), DCGM_DIAG_RESULT_NOT_RUN);
            }
        }
        let gpu1 = per_gpu + 41036;
        i.u32(result(per_gpu + 8, 0), DCGM_DIAG_RESULT_PASS);
        let failed = result(gpu1 + 8, 0);
        i.u32(failed, DCGM_DIAG_RESULT_FAIL);
        i.str(failed + 4, "a faulty row");
        i.u32(failed + 4 + 512, 1);
        i.u32(failed + 4 + 516, DCGM_FR_FAULTY_MEMORY);
        i.u32(result(per_gpu + 8, 2), DCGM_DIAG_RESULT_PASS);
        i.u32(result(gpu1 + 8, 2), DCGM_DIAG_RESULT_PASS);
        let system_error = per_gpu + 32 * 41036;
        let dev_ids = system_error + 528;
        i.str(dev_ids, "2335");
        let serials = dev_ids + 32 * 5;
        i.str(serials + 256, "1650924060039");
        for g in 2..32 {
            i.str(serials + g * 256, "<<<NULL>>>");
        }
        let versions = serials + 32 * 256;
        i.str(versions, "3.3.9");
        i.str(versions + 12, "580.159.04");
        i
    }

    #[test]
    fn a_version_10_response_of_dcgm_3_decodes_per_test() {
        let d = per_gpu_image().decode(dcgmDiagResponse_version10).unwrap();
        let names: Vec<&str> = d.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["software", "memory", "pcie"]);
        let sw = d.test("software").unwrap();
        assert_eq!(sw.result, DiagResult::Warn);
        assert_eq!(sw.category, None, "the layout has no categories");
        assert!(
            sw.results.is_empty(),
            "software results are system-wide here"
        );
        assert_eq!(sw.errors.len(), 1);
        assert_eq!(sw.errors[0].entity, None);
        assert_eq!(sw.errors[0].code_name, Some("DCGM_FR_CUDA_UNBOUND"));
        assert_eq!(sw.info, vec!["checked 3 libraries".to_string()]);
        let mem = d.test("memory").unwrap();
        assert_eq!(mem.result, DiagResult::Fail);
        assert_eq!(
            mem.results,
            vec![
                (Entity::gpu(0), DiagResult::Pass),
                (Entity::gpu(1), DiagResult::Fail)
            ]
        );
        assert_eq!(mem.errors.len(), 1);
        assert_eq!(mem.errors[0].entity, Some(Entity::gpu(1)));
        assert_eq!(mem.errors[0].message, "a faulty row");
        assert_eq!(d.test("pcie").unwrap().result, DiagResult::Pass);
        assert_eq!(
            d.entities,
            vec![
                DiagEntity {
                    entity: Entity::gpu(0),
                    serial: None,
                    sku_device_id: Some("2335".into()),
                },
                DiagEntity {
                    entity: Entity::gpu(1),
                    serial: Some("1650924060039".into()),
                    sku_device_id: None,
                },
            ]
        );
        assert!(d.other_errors.is_empty());
        assert_eq!(d.dcgm_version, "3.3.9");
        assert_eq!(d.driver_version, "580.159.04");
        assert_eq!(d.overall(), DiagResult::Fail);
    }

    #[test]
    fn a_system_error_of_the_per_gpu_layout_is_reported_and_fails_the_run() {
        let mut i = per_gpu_image();
        let system_error = 12 + 16 * 3156 + 32 * 41036;
        i.str(system_error, "nvvs could not start");
        i.u32(system_error + 512, u32::MAX);
        let d = i.decode(dcgmDiagResponse_version10).unwrap();
        assert_eq!(d.other_errors.len(), 1);
        assert_eq!(d.other_errors[0].entity, None);
        assert_eq!(d.other_errors[0].message, "nvvs could not start");
    }

    #[test]
    fn a_response_in_another_version_is_an_error_not_data() {
        let mut r = dcgmDiagResponse_v12::boxed_versioned();
        r.numTests = 1;
        assert!(DiagResponse::decode("dcgmRunDiagnostic", &r, dcgmDiagResponse_version12).is_ok());
        // DCGM 4.1's layout has the same size and another version word.
        r.version = dcgmDiagResponse_version11;
        match DiagResponse::decode("dcgmRunDiagnostic", &r, dcgmDiagResponse_version12) {
            Err(Error::UnknownLayout { call, version }) => {
                assert_eq!(call, "dcgmRunDiagnostic");
                assert_eq!(version, dcgmDiagResponse_version11);
            }
            other => panic!("{other:?}"),
        }
        // The per-GPU layouts v7 to v9 are never asked for: written back, they are errors,
        // also where the asked word matches.
        for old in [
            dcgmDiagResponse_version9,
            dcgmDiagResponse_version8,
            dcgmDiagResponse_version7,
        ] {
            let mut i = per_gpu_image();
            i.u32(0, old);
            for asked in [dcgmDiagResponse_version10, old] {
                match i.decode(asked) {
                    Err(Error::UnknownLayout { version, .. }) => assert_eq!(version, old),
                    other => panic!("{old:#x} asked {asked:#x}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn each_release_is_asked_the_newest_versions_it_accepts() {
        use crate::dialect::first_offer;
        let words = |v: DcgmVersion| {
            let run = RUN_OFFERS[first_offer(&RUN_OFFERS, Some(v))].word;
            let response = RESPONSE_OFFERS[first_offer(&RESPONSE_OFFERS, Some(v))].word;
            (run.run, run.response, response)
        };
        for (release, want) in [
            (
                (4, 6, 0),
                (dcgmRunDiag_version10, dcgmDiagResponse_version12),
            ),
            (
                (4, 2, 0),
                (dcgmRunDiag_version10, dcgmDiagResponse_version12),
            ),
            (
                (4, 1, 1),
                (dcgmRunDiag_version10, dcgmDiagResponse_version11),
            ),
            (
                (4, 0, 0),
                (dcgmRunDiag_version9, dcgmDiagResponse_version11),
            ),
            (
                (3, 3, 9),
                (dcgmRunDiag_version8, dcgmDiagResponse_version10),
            ),
        ] {
            let v = DcgmVersion::new(release.0, release.1, release.2);
            assert_eq!(words(v), (want.0, want.1, want.1), "{v}");
        }
        // The version-8 and -9 run structs carry the request as version 10 does.
        let req = DiagRequest::tests(["memory"]).param("memory.minimum_allocation_percentage=70");
        let (v8, v9) = (req.to_raw_v8(7).unwrap(), req.to_raw_v9(7).unwrap());
        assert_eq!(
            (v8.version, v9.version),
            (dcgmRunDiag_version8, dcgmRunDiag_version9)
        );
        assert_eq!((v8.groupId, v9.groupId), (7, 7));
        assert_eq!(c_buf(&v8.testNames[0]), "memory");
        assert_eq!(
            c_buf(&v9.testParms[0]),
            "memory.minimum_allocation_percentage=70"
        );
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
