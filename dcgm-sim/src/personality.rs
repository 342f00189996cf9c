//! The DCGM release the simulator speaks (its personality): 4.6.0 unless `DCGM_SIM_VERSION`
//! or a config's `dcgm_version` names an older one, from 3.3.9 to 4.6.x.
//!
//! A personality decides what a client sees of the release: the version `dcgmVersionInfo`
//! reports, the struct versions each call accepts, the exported functions that answer, and
//! the field ids `DcgmFieldGetById` and `dcgmFieldGroupCreate` know. Everything else is the
//! simulator's 4.6.0 behaviour.
//!
//! The facts are read from NVIDIA's public DCGM source at each release tag (`dcgm_fields.h`,
//! `dcgm_structs.h`, `dcgmlib.linux_def`) and checked against the real libraries 3.3.9, 4.1.1,
//! 4.5.3 and 4.6.0 (their field ids, exported functions and version checks). A fact's release
//! is the first tag that has it ([`TAGS`]); 4.2's first tag is 4.2.3, and it counts from
//! 4.2.0, the release the safe layer names for diagnostics. A release between two tags
//! answers as the older tag.
//!
//! The one difference from a real older library: the simulator exports every function, so a
//! function the release lacks answers `DCGM_ST_FUNCTION_NOT_FOUND` instead of being absent
//! from the symbol table (`dlsym` finds it).

use std::fmt;
use std::sync::Mutex;

use dcgm_sys::*;

/// Environment variable naming the release to speak (`4.5.3`); it wins over a config's
/// `dcgm_version`.
pub const VERSION_ENV: &str = "DCGM_SIM_VERSION";

/// A DCGM release number, `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Release {
    /// `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }

    /// The release the simulator implements, and speaks by default.
    pub const LATEST: Release = Release::new(4, 6, 0);
    /// The oldest release it speaks (the only 3.x).
    pub const OLDEST: Release = Release::new(3, 3, 9);

    /// A release number as a user writes it (`4.5.3`): three numbers, within the releases the
    /// simulator speaks (3.3.9, and 4.0.0 to 4.6.x). The error says which form or which
    /// releases.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        let numbers: Vec<Option<u32>> = t
            .split('.')
            .map(|p| {
                (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| p.parse().ok())
                    .flatten()
            })
            .collect();
        let r = match numbers[..] {
            [Some(major), Some(minor), Some(patch)] => Release::new(major, minor, patch),
            _ => {
                return Err(format!(
                    "{t:?} is not a DCGM release number (MAJOR.MINOR.PATCH, such as 4.5.3)"
                ));
            }
        };
        if !r.is_spoken() {
            return Err(format!(
                "the simulator does not speak DCGM {r}: it speaks 3.3.9 and 4.0.0 to 4.6.x \
                 (its facts are read from {})",
                TAGS.map(|t| t.to_string()).join(", ")
            ));
        }
        Ok(r)
    }

    /// 3.3.9, or a 4.x up to 4.6.x.
    fn is_spoken(self) -> bool {
        self == Self::OLDEST || (Release::new(4, 0, 0)..Release::new(4, 7, 0)).contains(&self)
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The release tags of NVIDIA's DCGM repository the facts are read from.
pub const TAGS: [Release; 12] = [
    Release::new(3, 3, 9),
    Release::new(4, 0, 0),
    Release::new(4, 1, 0),
    Release::new(4, 1, 1),
    Release::new(4, 2, 3),
    Release::new(4, 3, 1),
    Release::new(4, 4, 1),
    Release::new(4, 4, 2),
    Release::new(4, 5, 0),
    Release::new(4, 5, 2),
    Release::new(4, 5, 3),
    Release::new(4, 6, 0),
];

const R4_0: Release = Release::new(4, 0, 0);
const R4_1: Release = Release::new(4, 1, 0);
const R4_2: Release = Release::new(4, 2, 0);
const R4_3_1: Release = Release::new(4, 3, 1);
const R4_4_1: Release = Release::new(4, 4, 1);
const R4_4_2: Release = Release::new(4, 4, 2);
const R4_5: Release = Release::new(4, 5, 0);
const R4_6: Release = Release::new(4, 6, 0);

/// Exported functions newer than 3.3.9, with the first release that exports each.
pub const SYMBOLS: [(&str, Release); 16] = [
    ("dcgmGetCpuHierarchy_v2", R4_0),
    ("dcgmGetDeviceWorkloadPowerProfileInfo", R4_0),
    ("dcgmPolicyRegister_v2", R4_0),
    ("dcgmGetGpuChipArchitecture", R4_2),
    ("dcgmGetNvLinkP2PStatus", R4_3_1),
    ("dcgmRunMnDiagnostic", R4_3_1),
    ("dcgmStopMnDiagnostic", R4_3_1),
    ("dcgmConfigSetWorkloadPowerProfile", R4_4_1),
    ("dcgmPowerProfileIdToName", R4_4_1),
    ("dcgmDiagSendHeartbeat", R4_4_2),
    ("dcgmHostengineEnvironmentVariableInfo", R4_4_2),
    ("dcgmAttachDriver", R4_5),
    ("dcgmConnect_v3", R4_5),
    ("dcgmDetachDriver", R4_5),
    ("dcgmEmptyCache", R4_5),
    ("dcgmMarkModulesReloadable", R4_5),
];

/// Exported functions a later release dropped, with the first release that no longer exports
/// each (4.0 replaced 3.x's `dcgmPolicyRegister` by `dcgmPolicyRegister_v2`).
pub const DROPPED_SYMBOLS: [(&str, Release); 1] = [("dcgmPolicyRegister", R4_0)];

/// Field ids newer than 3.3.9 (first, last, first release that knows them). Every other id
/// of the simulator's table is known to every release.
pub const FIELDS: [(u16, u16, Release); 33] = [
    (94, 94, R4_0),
    (165, 167, R4_0),
    (170, 173, R4_0),
    (350, 362, R4_0),
    (497, 499, R4_0),
    (817, 824, R4_0),
    (1034, 1034, R4_0),
    (1200, 1215, R4_0),
    (153, 153, R4_1),
    (334, 345, R4_1),
    (571, 577, R4_1),
    (825, 843, R4_1),
    (879, 897, R4_1),
    (1076, 1079, R4_1),
    (1300, 1310, R4_1),
    // 1216 was in 4.0.0's header only, and came back with 4.2.
    (346, 346, R4_2),
    (1216, 1219, R4_2),
    (1400, 1425, R4_2),
    (64, 64, R4_3_1),
    (580, 592, R4_4_1),
    (1080, 1083, R4_4_1),
    (1426, 1442, R4_4_1),
    (174, 174, R4_4_2),
    (1501, 1503, R4_4_2),
    (6, 6, R4_5),
    (363, 363, R4_5),
    (1220, 1220, R4_5),
    (1507, 1509, R4_5),
    (1523, 1523, R4_5),
    (175, 175, R4_6),
    (1084, 1096, R4_6),
    (1524, 1533, R4_6),
    (1600, 1612, Release::new(4, 6, 1)),
];

/// A versioned struct whose accepted versions changed between the releases spoken here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Struct {
    /// `dcgmGroupGetInfo`'s `dcgmGroupInfo`.
    GroupInfo,
    /// `dcgmHealthCheck`'s `dcgmHealthResponse`.
    HealthResponse,
    /// `dcgmConfigGet`'s and `dcgmConfigSet`'s `dcgmConfig`.
    Config,
    /// `dcgmGetNvLinkLinkStatus`'s `dcgmNvLinkStatus`.
    NvLinkStatus,
    /// `dcgmStartEmbedded_v2`'s params.
    StartEmbeddedParams,
    /// `dcgmActionValidate_v2`'s run request.
    RunDiag,
    /// The diagnostic calls' `dcgmDiagResponse`.
    DiagResponse,
}

/// Which struct versions each call accepts: (struct, version word, from, until). Versions the
/// simulator never accepted are left out, so that 4.6.0 answers as it always has.
const VERSIONS: [(Struct, u32, Release, Option<Release>); 19] = [
    (
        Struct::GroupInfo,
        dcgmGroupInfo_version2,
        Release::OLDEST,
        Some(R4_0),
    ),
    (Struct::GroupInfo, dcgmGroupInfo_version3, R4_0, None),
    (
        Struct::HealthResponse,
        dcgmHealthResponse_version4,
        Release::OLDEST,
        Some(R4_0),
    ),
    (
        Struct::HealthResponse,
        dcgmHealthResponse_version5,
        R4_0,
        None,
    ),
    (
        Struct::Config,
        dcgmConfig_version1,
        Release::OLDEST,
        Some(R4_0),
    ),
    (Struct::Config, dcgmConfig_version2, R4_0, None),
    (
        Struct::NvLinkStatus,
        dcgmNvLinkStatus_version3,
        Release::OLDEST,
        Some(R4_0),
    ),
    (
        Struct::NvLinkStatus,
        dcgmNvLinkStatus_version4,
        R4_0,
        Some(R4_6),
    ),
    (Struct::NvLinkStatus, dcgmNvLinkStatus_version5, R4_6, None),
    (
        Struct::StartEmbeddedParams,
        dcgmStartEmbeddedV2Params_version1,
        Release::OLDEST,
        None,
    ),
    (
        Struct::StartEmbeddedParams,
        dcgmStartEmbeddedV2Params_version2,
        Release::OLDEST,
        None,
    ),
    (
        Struct::StartEmbeddedParams,
        dcgmStartEmbeddedV2Params_version3,
        R4_3_1,
        None,
    ),
    (Struct::RunDiag, dcgmRunDiag_version7, Release::OLDEST, None),
    (Struct::RunDiag, dcgmRunDiag_version8, Release::OLDEST, None),
    (Struct::RunDiag, dcgmRunDiag_version9, R4_0, None),
    (Struct::RunDiag, dcgmRunDiag_version10, R4_1, None),
    (
        Struct::DiagResponse,
        dcgmDiagResponse_version10,
        Release::OLDEST,
        None,
    ),
    (Struct::DiagResponse, dcgmDiagResponse_version11, R4_0, None),
    (Struct::DiagResponse, dcgmDiagResponse_version12, R4_2, None),
];

/// The run-request versions `dcgmActionValidate_v2` takes with each response version: v7 and
/// v8 fill a v10 response, v9 and v10 a v11 or v12 one (every release's `DcgmApi.cpp`; each
/// version on its own only where [`VERSIONS`] has it, so 4.0 pairs v9 with v11 alone and 3.3.9
/// v7 and v8 with v10). Any other pair is `DCGM_ST_VER_MISMATCH`.
const DIAG_PAIRS: [(u32, u32); 6] = [
    (dcgmRunDiag_version7, dcgmDiagResponse_version10),
    (dcgmRunDiag_version8, dcgmDiagResponse_version10),
    (dcgmRunDiag_version9, dcgmDiagResponse_version11),
    (dcgmRunDiag_version10, dcgmDiagResponse_version11),
    (dcgmRunDiag_version9, dcgmDiagResponse_version12),
    (dcgmRunDiag_version10, dcgmDiagResponse_version12),
];

/// Whether the release in force runs a diagnostic asked with run request `run` into response
/// `response` (both version words).
pub fn accepts_diag_pair(run: u32, response: u32) -> bool {
    accepts_diag_pair_in(current(), run, response)
}

/// Whether release `r` runs a diagnostic asked with run request `run` into `response`.
pub fn accepts_diag_pair_in(r: Release, run: u32, response: u32) -> bool {
    accepts_in(r, Struct::RunDiag, run)
        && accepts_in(r, Struct::DiagResponse, response)
        && DIAG_PAIRS.contains(&(run, response))
}

/// Whether the release in force marks the serial slots of a v10 diagnostic response from the
/// GPU count on as blank (`<<<NULL>>>`) before writing each GPU's serial at its id: 3.3.9's diag
/// module did; from 4.0 the response starts zeroed.
pub fn blanks_unused_diag_serials() -> bool {
    current() < R4_0
}

/// Return codes whose `errorString` text came after 3.3.9, with the first release that has it
/// (`dcgm_errors.c` at each tag); before it the text is NULL.
const ERROR_TEXTS: [(dcgmReturn_t, Release); 13] = [
    (DCGM_ST_NVVS_NO_AVAILABLE_TEST, R4_0),
    (DCGM_ST_MNDIAG_CONNECTION_NOT_AVAILABLE, R4_3_1),
    (DCGM_ST_MNDIAG_CONNECTION_UNAUTHORIZED, R4_3_1),
    (DCGM_ST_REMOTE_SSH_CONNECTION_FAILED, R4_3_1),
    (DCGM_ST_CHILD_SPAWN_FAILED, R4_3_1),
    (DCGM_ST_FILE_IO_ERROR, R4_3_1),
    (DCGM_ST_CHILD_SIGNAL_RECEIVED, R4_3_1),
    (DCGM_ST_CALLER_ALREADY_STOPPED, R4_4_2),
    (DCGM_ST_DIAG_STOPPED, R4_5),
    (DCGM_ST_GPUS_DETACHED, R4_5),
    (DCGM_ST_INSTANCE_NOT_FOUND, R4_6),
    (DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND, R4_6),
    (DCGM_ST_PAUSED, R4_6),
];

/// Whether release `r`'s `errorString` has a text for `code` (the simulator's table holds
/// 4.6.0's texts).
pub fn has_error_text_in(r: Release, code: dcgmReturn_t) -> bool {
    ERROR_TEXTS
        .iter()
        .find(|(c, _)| *c == code)
        .is_none_or(|(_, since)| r >= *since)
}

/// Whether the release in force's `errorString` has a text for `code`.
pub fn has_error_text(code: dcgmReturn_t) -> bool {
    has_error_text_in(current(), code)
}

/// How many groups a client can create: the engine's two default groups (all GPUs, all
/// NvSwitches) count against the 64 from 4.2 on; before, the limit was 64 beside them
/// (`DcgmGroupManager.cpp`: `DCGM_MAX_NUM_GROUPS + 2` up to 4.1.1).
pub fn client_group_limit() -> usize {
    if current() >= R4_2 {
        DCGM_MAX_NUM_GROUPS - 2
    } else {
        DCGM_MAX_NUM_GROUPS
    }
}

/// How many modules the release has (`DcgmModuleIdCount`): the multi-node diagnostic module
/// (id 10) came with 4.3.1.
pub fn module_count() -> usize {
    if current() >= R4_3_1 {
        DcgmModuleIdCount as usize
    } else {
        DcgmModuleIdMnDiag as usize
    }
}

/// How many entity groups the release knows (`DCGM_FE_COUNT`): ConnectX cards
/// (`DCGM_FE_CONNECTX`, 9) came with 4.1; an older release answers `NOT_SUPPORTED` for them.
pub fn entity_group_count() -> dcgm_field_entity_group_t {
    if current() >= R4_1 {
        DCGM_FE_COUNT
    } else {
        DCGM_FE_CONNECTX
    }
}

/// Failure reasons (`dcgmError_t`) newer than 3.3.9 (first, last, first release whose
/// failure-reason table has them: `dcgm_errors.c` at each tag). The failure-reason calls of an
/// older release answer them as unknown codes: no metadata or format, severity and category
/// (3, 3).
const FAILURE_REASONS: [(u32, u32, Release); 8] = [
    (112, 113, R4_0),
    (117, 117, R4_0),
    (118, 118, R4_2),
    (119, 119, R4_3_1),
    (120, 120, R4_4_1),
    (121, 129, R4_5),
    (130, 130, Release::new(4, 5, 3)),
    (131, 132, R4_6),
];

/// Whether release `r` has failure reason `code` in its table.
pub fn knows_failure_reason_in(r: Release, code: u32) -> bool {
    FAILURE_REASONS
        .iter()
        .find(|(first, last, _)| (*first..=*last).contains(&code))
        .is_none_or(|(_, _, since)| r >= *since)
}

/// Whether the release in force has failure reason `code` in its table.
pub fn knows_failure_reason(code: u32) -> bool {
    knows_failure_reason_in(current(), code)
}

/// Where the real 4.1.1 and 4.5.3 were measured to answer differently and the public source
/// of the tags between them was not traced to the change: the simulator takes 4.5.0 as the
/// first release with 4.5.3's answer.
const MEASURED_BY_4_5_3: Release = R4_5;

/// Whether `dcgmEntitiesGetLatestValues` from the cache answers a field id the library does
/// not know (or 0) per value (`UNKNOWN_FIELD`, the call `OK`), as 3.3.9 and 4.1.1 do, rather
/// than failing the whole call as 4.5.3 and 4.6.0 do.
pub fn unknown_field_per_value() -> bool {
    current() < MEASURED_BY_4_5_3
}

/// What the latest values of an empty group answer: `GENERIC_ERROR` on 3.3.9,
/// `GROUP_IS_EMPTY` from 4.0 (measured on 4.1.1; 4.0.0 taken to answer as 4.1.1).
pub fn empty_group_latest() -> dcgmReturn_t {
    if current() < R4_0 {
        DCGM_ST_GENERIC_ERROR
    } else {
        DCGM_ST_GROUP_IS_EMPTY
    }
}

/// Whether `dcgmUnwatchFieldValue` of a GPU the engine does not have succeeds (3.3.9 and
/// 4.1.1) rather than being `BADPARAM` (4.5.3, 4.6.0).
pub fn unwatch_accepts_unknown_gpu() -> bool {
    current() < MEASURED_BY_4_5_3
}

/// Whether `dcgmGetVgpuInstanceAttributes` of an instance without samples answers empty strings
/// and zeros (3.3.9 and 4.1.1) rather than the blank values of its fields (4.5.3, 4.6.0).
pub fn vgpu_attributes_zeroed() -> bool {
    current() < MEASURED_BY_4_5_3
}

/// What a MIG request on a fake instance (one `dcgmCreateFakeEntities` made, no driver has)
/// answers: 4.5.3 and 4.6.0 `NVML_NOT_LOADED`; 3.3.9 and 4.1.1 `BADPARAM` for a compute
/// instance created in it and `NOT_SUPPORTED` for deleting it.
pub fn fake_mig_instance_answer(create: bool) -> dcgmReturn_t {
    if current() >= MEASURED_BY_4_5_3 {
        DCGM_ST_NVML_NOT_LOADED
    } else if create {
        DCGM_ST_BADPARAM
    } else {
        DCGM_ST_NOT_SUPPORTED
    }
}

/// The release in force: chosen by `dcgmInit`, kept until `dcgmShutdown`.
static ACTIVE: Mutex<Option<Release>> = Mutex::new(None);

fn lock() -> std::sync::MutexGuard<'static, Option<Release>> {
    ACTIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The release a `dcgmInit` would speak with this config key: `DCGM_SIM_VERSION` when set
/// (it wins), else the key, else [`Release::LATEST`]. An error names where the bad value
/// came from.
pub fn choose(key: Option<&str>) -> Result<Release, String> {
    if let Some(v) = std::env::var_os(VERSION_ENV).filter(|v| !v.is_empty()) {
        let v = v.to_string_lossy();
        return Release::parse(&v).map_err(|e| format!("{VERSION_ENV}={v}: {e}"));
    }
    match key {
        Some(k) => Release::parse(k).map_err(|e| format!("dcgm_version = {k:?}: {e}")),
        None => Ok(Release::LATEST),
    }
}

/// Makes `r` the release in force (`dcgmInit`).
pub fn activate(r: Release) {
    *lock() = Some(r);
}

/// No release in force any more (`dcgmShutdown`).
pub fn deactivate() {
    *lock() = None;
}

/// The release in force, if `dcgmInit` chose one.
pub fn active() -> Option<Release> {
    *lock()
}

/// The release in force; before `dcgmInit`, the one `DCGM_SIM_VERSION` names (or 4.6.0).
pub fn current() -> Release {
    active().unwrap_or_else(|| choose(None).unwrap_or(Release::LATEST))
}

/// Whether the release in force exports `symbol`.
pub fn has_symbol(symbol: &str) -> bool {
    has_symbol_in(current(), symbol)
}

/// Whether release `r` exports `symbol`.
pub fn has_symbol_in(r: Release, symbol: &str) -> bool {
    let since = SYMBOLS.iter().find(|(s, _)| *s == symbol);
    let until = DROPPED_SYMBOLS.iter().find(|(s, _)| *s == symbol);
    since.is_none_or(|(_, since)| r >= *since) && until.is_none_or(|(_, until)| r < *until)
}

/// Whether the release in force knows field `id`.
pub fn knows_field(id: u16) -> bool {
    knows_field_in(current(), id)
}

/// Field `id`'s metadata, if the release in force knows it: a read of a field newer than the
/// release is `UNKNOWN_FIELD`, as on the real older library.
pub fn known_field(id: u16) -> Option<&'static FieldInfo> {
    field_by_id(id).filter(|_| knows_field(id))
}

/// Whether release `r` knows field `id`.
pub fn knows_field_in(r: Release, id: u16) -> bool {
    FIELDS
        .iter()
        .find(|(first, last, _)| (*first..=*last).contains(&id))
        .is_none_or(|(_, _, since)| r >= *since)
}

/// Whether the release in force accepts version word `word` of struct `s`.
pub fn accepts(s: Struct, word: u32) -> bool {
    accepts_in(current(), s, word)
}

/// Whether release `r` accepts version word `word` of struct `s`.
pub fn accepts_in(r: Release, s: Struct, word: u32) -> bool {
    VERSIONS.iter().any(|(vs, w, from, until)| {
        *vs == s && *w == word && r >= *from && until.is_none_or(|u| r < u)
    })
}

/// Whether the release in force answers the topology calls without checking the struct's
/// version, in the version-1 layout (every release before 4.6.0).
pub fn writes_topology_v1() -> bool {
    current() < R4_6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_in_the_symbol_table_enters_through_its_release_check() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ffi");
        let sources: String = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        for (symbol, since) in SYMBOLS.into_iter().chain(DROPPED_SYMBOLS) {
            let start = sources
                .find(&format!("fn {symbol}("))
                .unwrap_or_else(|| panic!("{symbol} is not exported"));
            let body = &sources[start..];
            let end = body.find("\n}\n").unwrap();
            assert!(
                body[..end].contains(&format!("guard_symbol(\"{symbol}\"")),
                "{symbol} (from {since}) does not check the release"
            );
            assert!(since > Release::OLDEST);
        }
    }

    #[test]
    fn policy_registration_is_exported_as_each_release_names_it() {
        // dcgmlib.linux_def: dcgmPolicyRegister up to 3.3.9, dcgmPolicyRegister_v2 from 4.0.0.
        let r400 = Release::new(4, 0, 0);
        assert!(has_symbol_in(Release::OLDEST, "dcgmPolicyRegister"));
        assert!(!has_symbol_in(Release::OLDEST, "dcgmPolicyRegister_v2"));
        for r in [r400, Release::new(4, 1, 1), Release::LATEST] {
            assert!(!has_symbol_in(r, "dcgmPolicyRegister"), "{r}");
            assert!(has_symbol_in(r, "dcgmPolicyRegister_v2"), "{r}");
        }
    }

    #[test]
    fn diagnostics_take_the_run_and_response_versions_in_pairs() {
        let (r7, r8, r9, r10) = (
            dcgmRunDiag_version7,
            dcgmRunDiag_version8,
            dcgmRunDiag_version9,
            dcgmRunDiag_version10,
        );
        let (d10, d11, d12) = (
            dcgmDiagResponse_version10,
            dcgmDiagResponse_version11,
            dcgmDiagResponse_version12,
        );
        let all = [r7, r8, r9, r10]
            .into_iter()
            .flat_map(|run| [d10, d11, d12].map(|resp| (run, resp)));
        let cases = [
            (Release::OLDEST, vec![(r7, d10), (r8, d10)]),
            (Release::new(4, 0, 0), vec![(r7, d10), (r8, d10), (r9, d11)]),
            (
                Release::new(4, 1, 1),
                vec![(r7, d10), (r8, d10), (r9, d11), (r10, d11)],
            ),
            (
                Release::new(4, 2, 0),
                vec![
                    (r7, d10),
                    (r8, d10),
                    (r9, d11),
                    (r10, d11),
                    (r9, d12),
                    (r10, d12),
                ],
            ),
            (
                Release::LATEST,
                vec![
                    (r7, d10),
                    (r8, d10),
                    (r9, d11),
                    (r10, d11),
                    (r9, d12),
                    (r10, d12),
                ],
            ),
        ];
        for (r, taken) in cases {
            for pair in all.clone() {
                assert_eq!(
                    accepts_diag_pair_in(r, pair.0, pair.1),
                    taken.contains(&pair),
                    "{r}: {pair:x?}"
                );
            }
        }
    }

    #[test]
    fn error_texts_follow_each_release() {
        // Measured with errorString on the real 3.3.9, 4.1.1 and 4.5.3 (NULL for these).
        let r339 = Release::OLDEST;
        let r411 = Release::new(4, 1, 1);
        let r453 = Release::new(4, 5, 3);
        let newer = |r: Release| -> Vec<i32> {
            (-99..=0)
                .rev()
                .filter(|c| !has_error_text_in(r, *c))
                .map(|c| -c)
                .collect()
        };
        assert_eq!(
            newer(r339),
            [45, 46, 54, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67]
        );
        assert_eq!(
            newer(r411),
            [45, 46, 54, 59, 60, 61, 62, 63, 64, 65, 66, 67]
        );
        assert_eq!(newer(r453), [45, 46, 54]);
        assert!(newer(Release::LATEST).is_empty());
    }

    #[test]
    fn failure_reasons_follow_each_release() {
        // Measured with dcgmErrorGetFormatMsgByCode on the real 3.3.9, 4.1.1 and 4.5.3.
        let known = |r: Release| -> Vec<u32> {
            [119, 120, 121, 122, 130, 132]
                .into_iter()
                .filter(|c| knows_failure_reason_in(r, *c))
                .collect()
        };
        assert_eq!(known(Release::OLDEST), Vec::<u32>::new());
        assert_eq!(known(Release::new(4, 1, 1)), Vec::<u32>::new());
        assert_eq!(known(Release::new(4, 5, 3)), [119, 120, 121, 122, 130]);
        assert_eq!(known(Release::LATEST), [119, 120, 121, 122, 130, 132]);
        assert!(knows_failure_reason_in(Release::OLDEST, 70));
    }

    #[test]
    fn release_numbers_parse_within_the_spoken_releases() {
        assert_eq!(Release::parse("4.5.3"), Ok(Release::new(4, 5, 3)));
        assert_eq!(Release::parse(" 3.3.9 "), Ok(Release::OLDEST));
        assert_eq!(Release::parse("4.6.1"), Ok(Release::new(4, 6, 1)));
        for bad in ["4.5", "4.5.3.1", "v4.5.3", "4.x.3", "", "4..3", "-4.5.3"] {
            let e = Release::parse(bad).unwrap_err();
            assert!(e.contains("MAJOR.MINOR.PATCH"), "{bad}: {e}");
        }
        for outside in ["3.3.8", "3.4.0", "4.7.0", "5.0.0", "2.4.7"] {
            let e = Release::parse(outside).unwrap_err();
            assert!(e.contains("3.3.9 and 4.0.0 to 4.6.x"), "{outside}: {e}");
            assert!(e.contains("4.5.3, 4.6.0"), "{outside}: {e}");
        }
    }

    #[test]
    fn the_tables_are_ordered_and_disjoint() {
        assert!(TAGS.windows(2).all(|w| w[0] < w[1]));
        let mut ranges: Vec<_> = FIELDS.iter().map(|(a, b, _)| (*a, *b)).collect();
        ranges.sort();
        assert!(ranges.iter().all(|(a, b)| a <= b));
        assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0), "{ranges:?}");
        assert!(SYMBOLS.iter().all(|(_, since)| *since > Release::OLDEST));
    }

    #[test]
    fn fields_follow_the_real_libraries() {
        // Measured with DcgmFieldGetById on the real 3.3.9, 4.1.1 and 4.5.3.
        let r339 = Release::OLDEST;
        let r411 = Release::new(4, 1, 1);
        let r453 = Release::new(4, 5, 3);
        for id in [165, 166, 170, 153, 1501, 1507, 175, 1524] {
            assert!(!knows_field_in(r339, id), "{id}");
        }
        for id in [165, 166, 170, 153] {
            assert!(knows_field_in(r411, id), "{id}");
        }
        for id in [346, 174, 1501, 1507, 175, 1524] {
            assert!(!knows_field_in(r411, id), "{id}");
        }
        for id in [346, 174, 1501, 1507] {
            assert!(knows_field_in(r453, id), "{id}");
        }
        assert!(!knows_field_in(r453, 175) && knows_field_in(Release::LATEST, 175));
        assert!(knows_field_in(r339, 150) && knows_field_in(r339, 1002));
    }
}
