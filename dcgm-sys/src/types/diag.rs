//! Diagnostics: run parameters, results (current and legacy layouts), live status, and the
//! multi-node diagnostic.

use std::ffi::c_char;

use crate::{
    DCGM_GROUP_MAX_ENTITIES_V2, DCGM_INT8_BLANK, DCGM_MAX_NUM_DEVICES, DCGM_MAX_STR_LENGTH,
    dcgmDiagErrorDetail_t, dcgmGpuGrp_t, dcgmGroupEntityPair_t, dcgmPolicyValidation_t,
};

/// Declares the version word of a struct that has a version macro but no version member, with
/// compile-time checks of its size and word.
macro_rules! version_word_only {
    ($ty:ident, $constant:ident = $ver:literal, size = $size:literal, word = $word:literal) => {
        #[doc = concat!("Version word of [`", stringify!($ty), "`] (`", stringify!($word), "`); the struct has no version member.")]
        pub const $constant: u32 = $crate::make_version(::core::mem::size_of::<$ty>(), $ver);
        const _: () = assert!($constant == $word);
        crate::plain_struct!($ty, size = $size, align = 4);
    };
}

// ---------------------------------------------------------------------------------------------
// Levels, flags, results

/// Diagnostic level of `dcgmRunDiagnostic` (an anonymous enum in C).
pub type dcgmDiagnosticLevel_t = u32;
/// Not set.
pub const DCGM_DIAG_LVL_INVALID: dcgmDiagnosticLevel_t = 0;
/// Quick health check.
pub const DCGM_DIAG_LVL_SHORT: dcgmDiagnosticLevel_t = 10;
/// Medium run (minutes).
pub const DCGM_DIAG_LVL_MED: dcgmDiagnosticLevel_t = 20;
/// Long run.
pub const DCGM_DIAG_LVL_LONG: dcgmDiagnosticLevel_t = 30;
/// Extra-long run.
pub const DCGM_DIAG_LVL_XLONG: dcgmDiagnosticLevel_t = 40;

/// Environment variable naming the DCGM home directory.
pub const DCGM_HOME_DIR_VAR_NAME: &str = "DCGM_HOME_DIR";
/// Run flag: verbose output (information as well as warnings).
pub const DCGM_RUN_FLAGS_VERBOSE: u32 = 0x0001;
/// Run flag: write statistics only when a test fails.
pub const DCGM_RUN_FLAGS_STATSONFAIL: u32 = 0x0002;
/// Run flag: training mode (unused).
pub const DCGM_RUN_FLAGS_TRAIN: u32 = 0x0004;
/// Run flag: force training (unused).
pub const DCGM_RUN_FLAGS_FORCE_TRAIN: u32 = 0x0008;
/// Run flag: enable the fail-early checks of the stress tests.
pub const DCGM_RUN_FLAGS_FAIL_EARLY: u32 = 0x0010;
/// Run flag: stop the run unless `dcgmDiagSendHeartbeat` is called at least every 10 minutes.
pub const DCGM_RUN_FLAGS_ENABLE_HEARTBEAT: u32 = 0x0020;

/// The C enum behind [`dcgmDiagResult_t`].
pub type dcgmDiagResult_enum = u32;
/// Result of a test, or of a test on one entity.
pub type dcgmDiagResult_t = dcgmDiagResult_enum;
/// Passed.
pub const DCGM_DIAG_RESULT_PASS: dcgmDiagResult_t = 0;
/// Skipped.
pub const DCGM_DIAG_RESULT_SKIP: dcgmDiagResult_t = 1;
/// Passed with warnings.
pub const DCGM_DIAG_RESULT_WARN: dcgmDiagResult_t = 2;
/// Failed.
pub const DCGM_DIAG_RESULT_FAIL: dcgmDiagResult_t = 3;
/// Not run.
pub const DCGM_DIAG_RESULT_NOT_RUN: dcgmDiagResult_t = 4;

// ---------------------------------------------------------------------------------------------
// Lengths and limits

/// Length of the error and info messages of the diagnostic structs.
pub const DCGM_ERR_MSG_LENGTH: usize = 512;
/// Length of a test's auxiliary data.
pub const DCGM_DIAG_AUX_DATA_LEN: usize = 2048;
/// Error indices per test run.
pub const DCGM_DIAG_TEST_RUN_ERROR_INDICES_MAX: usize = 32;
/// Info indices per test run in [`dcgmDiagTestRun_v1`] (deprecated).
pub const DCGM_DIAG_TEST_RUN_INFO_INDICES_MAX: usize = 16;
/// Info indices per test run in [`dcgmDiagTestRun_v2`].
pub const DCGM_DIAG_TEST_RUN_INFO_INDICES_MAX_V2: usize = 128;
/// Result indices per test run.
pub const DCGM_DIAG_TEST_RUN_RESULTS_MAX: usize = DCGM_GROUP_MAX_ENTITIES_V2;
/// Length of a test or plugin name, NUL included.
pub const DCGM_DIAG_TEST_RUN_NAME_LEN: usize = 32;
/// Length of an SKU device id string.
pub const DCGM_DEVICE_ID_LEN: usize = 5;
/// Length of the DCGM version string.
pub const DCGM_VERSION_LEN: usize = 12;
/// Error details per legacy test result.
pub const DCGM_MAX_ERRORS: usize = 5;
/// Per-GPU tests in the v8–v10 response layouts.
pub const DCGM_PER_GPU_TEST_COUNT_V8: usize = 13;
/// Per-GPU tests in the v7 response layout.
pub const DCGM_PER_GPU_TEST_COUNT_V7: usize = 9;
/// Number of software tests.
pub const DCGM_SWTEST_COUNT: usize = 11;
/// System-wide results in the legacy response layouts.
pub const LEVEL_ONE_MAX_RESULTS: usize = 16;
/// Tests per response.
pub const DCGM_DIAG_RESPONSE_TESTS_MAX: usize = 20;
/// Marks an error as a system error (the 8-bit blank value).
pub const DCGM_DIAG_RESPONSE_SYSTEM_ERROR: u8 = DCGM_INT8_BLANK;
/// Errors per response.
pub const DCGM_DIAG_RESPONSE_ERRORS_MAX: usize = DCGM_DIAG_TEST_RUN_ERROR_INDICES_MAX;
/// Info messages per v11 response (deprecated).
pub const DCGM_DIAG_RESPONSE_INFO_MAX: usize = DCGM_DIAG_TEST_RUN_INFO_INDICES_MAX;
/// Info messages per v12 response.
pub const DCGM_DIAG_RESPONSE_INFO_MAX_V2: usize = DCGM_DIAG_TEST_RUN_INFO_INDICES_MAX_V2;
/// Entities per response.
pub const DCGM_DIAG_RESPONSE_ENTITIES_MAX: usize = DCGM_GROUP_MAX_ENTITIES_V2;
/// Per-entity results per response.
pub const DCGM_DIAG_RESPONSE_RESULTS_MAX: usize =
    DCGM_DIAG_RESPONSE_TESTS_MAX * DCGM_DIAG_RESPONSE_ENTITIES_MAX;
/// Categories per response.
pub const DCGM_DIAG_RESPONSE_CATEGORIES_MAX: usize = 5;
/// Length of a category name, NUL included.
pub const DCGM_DIAG_RESPONSE_CATEGORY_LEN: usize = 20;
/// Padding that gives [`dcgmDiagResponse_v11`] the size of the v10 layout.
pub const DCGM_DIAG_RESPONSE_V11_UNUSED_LEN: usize = 682880;
/// Padding that gives [`dcgmDiagResponse_v12`] the size of the v10 layout.
pub const DCGM_DIAG_RESPONSE_V12_UNUSED_LEN: usize = 621952;

/// Length of the configuration file contents of a run.
pub const DCGM_MAX_CONFIG_FILE_LEN: usize = 10000;
/// Number of test names of a run.
pub const DCGM_MAX_TEST_NAMES: usize = 20;
/// Length of a test name of a run.
pub const DCGM_MAX_TEST_NAMES_LEN: usize = 50;
/// Number of test parameters of a run.
pub const DCGM_MAX_TEST_PARMS: usize = 100;
/// Length of a test parameter in [`dcgmRunDiag_v7`].
pub const DCGM_MAX_TEST_PARMS_LEN: usize = 100;
/// Length of a test parameter in [`dcgmRunDiag_v8`] and later.
pub const DCGM_MAX_TEST_PARMS_LEN_V2: usize = 1050;
/// Length of a GPU list string.
pub const DCGM_GPU_LIST_LEN: usize = 50;
/// Length of an entity id list string.
pub const DCGM_ENTITY_ID_LIST_LEN: usize = 2048;
/// Length of the expected-entities string.
pub const DCGM_EXPECTED_ENTITIES_LEN: usize = 50;
/// Length of a file name.
pub const DCGM_FILE_LEN: usize = 30;
/// Length of a path.
pub const DCGM_PATH_LEN: usize = 128;
/// Length of the clock-event mask string.
pub const DCGM_CLOCKS_EVENT_MASK_LEN: usize = 50;
/// Old name of [`DCGM_CLOCKS_EVENT_MASK_LEN`].
pub const DCGM_THROTTLE_MASK_LEN: usize = DCGM_CLOCKS_EVENT_MASK_LEN;
/// Length of the ignored-error-codes string.
pub const DCGM_IGNORE_ERROR_MAX_LEN: usize = 512;

// ---------------------------------------------------------------------------------------------
// Building blocks of the current response

/// An error with its entity, category and severity (legacy response layouts).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagErrorDetail_v2 {
    pub msg: [c_char; DCGM_ERR_MSG_LENGTH],
    pub gpuId: i32,
    /// A `DCGM_FR_*` code.
    pub code: u32,
    /// A `dcgmErrorCategory_t`.
    pub category: u32,
    /// A `dcgmErrorSeverity_t`.
    pub severity: u32,
}
crate::plain_struct!(dcgmDiagErrorDetail_v2, size = 528, align = 4);

/// An info message of a test about one entity.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagInfo_v1 {
    /// The entity; group `DCGM_FE_NONE` for global messages.
    pub entity: dcgmGroupEntityPair_t,
    pub msg: [c_char; DCGM_ERR_MSG_LENGTH],
    /// Index of the reporting test in the response's `tests`.
    pub testId: u32,
}
crate::plain_struct!(dcgmDiagInfo_v1, size = 524, align = 4);

/// An error reported by a test about one entity.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagError_v1 {
    /// The entity; group `DCGM_FE_NONE` for global errors.
    pub entity: dcgmGroupEntityPair_t,
    /// A `DCGM_FR_*` code.
    pub code: u32,
    /// A `dcgmErrorCategory_t`.
    pub category: u32,
    /// A `dcgmErrorSeverity_t`.
    pub severity: u32,
    pub msg: [c_char; DCGM_ERR_MSG_LENGTH],
    /// Index of the reporting test in the response's `tests`.
    pub testId: u32,
}
crate::plain_struct!(dcgmDiagError_v1, size = 536, align = 4);

/// The result of one test on one entity.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagEntityResult_v1 {
    pub entity: dcgmGroupEntityPair_t,
    pub result: dcgmDiagResult_t,
    /// Index of the test in the response's `tests`.
    pub testId: u32,
}
crate::plain_struct!(dcgmDiagEntityResult_v1, size = 16, align = 4);

/// Free-form auxiliary data of a test.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagTestAuxData_v1 {
    pub version: u32,
    pub data: [c_char; DCGM_DIAG_AUX_DATA_LEN],
}
crate::versioned_struct!(
    dcgmDiagTestAuxData_v1,
    dcgmDiagTestAuxData_version1 = 1,
    size = 2052,
    word = 0x0100_0804
);
/// Version word of the current [`dcgmDiagTestAuxData_v1`].
pub const dcgmDiagTestAuxData_version: u32 = dcgmDiagTestAuxData_version1;

/// One test of a run: its name, result, and indices into the response's errors, info and
/// results.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagTestRun_v2 {
    pub name: [c_char; DCGM_DIAG_TEST_RUN_NAME_LEN],
    pub pluginName: [c_char; DCGM_DIAG_TEST_RUN_NAME_LEN],
    pub result: dcgmDiagResult_t,
    pub numErrors: u8,
    pub numInfo: u8,
    /// Index into the response's `categories`.
    pub categoryIndex: u8,
    pub _unused: u8,
    pub numResults: u16,
    pub errorIndices: [u8; DCGM_DIAG_TEST_RUN_ERROR_INDICES_MAX],
    pub infoIndices: [u8; DCGM_DIAG_TEST_RUN_INFO_INDICES_MAX_V2],
    pub resultIndices: [u16; DCGM_DIAG_TEST_RUN_RESULTS_MAX],
    pub auxData: dcgmDiagTestAuxData_v1,
}
crate::plain_struct!(dcgmDiagTestRun_v2, size = 4336, align = 4);

/// One test of a run, v11 layout (16 info indices).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagTestRun_v1 {
    pub name: [c_char; DCGM_DIAG_TEST_RUN_NAME_LEN],
    pub pluginName: [c_char; DCGM_DIAG_TEST_RUN_NAME_LEN],
    pub result: dcgmDiagResult_t,
    pub numErrors: u8,
    pub numInfo: u8,
    pub categoryIndex: u8,
    pub _unused: u8,
    pub numResults: u16,
    pub errorIndices: [u8; DCGM_DIAG_TEST_RUN_ERROR_INDICES_MAX],
    pub infoIndices: [u8; DCGM_DIAG_TEST_RUN_INFO_INDICES_MAX],
    pub resultIndices: [u16; DCGM_DIAG_TEST_RUN_RESULTS_MAX],
    pub auxData: dcgmDiagTestAuxData_v1,
}
crate::plain_struct!(dcgmDiagTestRun_v1, size = 4224, align = 4);

/// An entity of a run with its serial number and SKU device id.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagEntity_v1 {
    pub entity: dcgmGroupEntityPair_t,
    pub serialNum: [c_char; DCGM_MAX_STR_LENGTH],
    pub skuDeviceId: [c_char; DCGM_DEVICE_ID_LEN],
}
crate::plain_struct!(dcgmDiagEntity_v1, size = 272, align = 4);

// ---------------------------------------------------------------------------------------------
// Building blocks of the legacy (v7–v10) responses

/// A legacy test result with one error.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagTestResult_v2 {
    pub status: dcgmDiagResult_t,
    pub error: dcgmDiagErrorDetail_t,
    pub info: [c_char; 1024],
}
crate::plain_struct!(dcgmDiagTestResult_v2, size = 2056, align = 4);

/// A legacy test result with up to [`DCGM_MAX_ERRORS`] errors.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagTestResult_v3 {
    pub status: dcgmDiagResult_t,
    pub error: [dcgmDiagErrorDetail_v2; DCGM_MAX_ERRORS],
    pub info: [c_char; DCGM_ERR_MSG_LENGTH],
}
crate::plain_struct!(dcgmDiagTestResult_v3, size = 3156, align = 4);

/// The C enum behind [`dcgmPerGpuTestIndices_t`].
pub type dcgmPerGpuTestIndices_enum = u32;
/// Fixed positions of the tests in the legacy per-GPU result arrays.
pub type dcgmPerGpuTestIndices_t = dcgmPerGpuTestIndices_enum;
/// Memory test.
pub const DCGM_MEMORY_INDEX: dcgmPerGpuTestIndices_t = 0;
/// Diagnostic test.
pub const DCGM_DIAGNOSTIC_INDEX: dcgmPerGpuTestIndices_t = 1;
/// PCIe test.
pub const DCGM_PCI_INDEX: dcgmPerGpuTestIndices_t = 2;
/// SM stress test.
pub const DCGM_SM_STRESS_INDEX: dcgmPerGpuTestIndices_t = 3;
/// Targeted stress test.
pub const DCGM_TARGETED_STRESS_INDEX: dcgmPerGpuTestIndices_t = 4;
/// Targeted power test.
pub const DCGM_TARGETED_POWER_INDEX: dcgmPerGpuTestIndices_t = 5;
/// Memory bandwidth test.
pub const DCGM_MEMORY_BANDWIDTH_INDEX: dcgmPerGpuTestIndices_t = 6;
/// Memtest.
pub const DCGM_MEMTEST_INDEX: dcgmPerGpuTestIndices_t = 7;
/// Pulse test.
pub const DCGM_PULSE_TEST_INDEX: dcgmPerGpuTestIndices_t = 8;
/// EUD test.
pub const DCGM_EUD_TEST_INDEX: dcgmPerGpuTestIndices_t = 9;
/// NVBandwidth test.
pub const DCGM_NVBANDWIDTH_INDEX: dcgmPerGpuTestIndices_t = 10;
/// NCCL tests.
pub const DCGM_NCCL_TESTS_INDEX: dcgmPerGpuTestIndices_t = 11;
/// Runtime in-system test.
pub const DCGM_RIST_TEST_INDEX: dcgmPerGpuTestIndices_t = 12;
/// Unused slot.
pub const DCGM_UNUSED4_TEST_INDEX: dcgmPerGpuTestIndices_t = 13;
/// Unused slot.
pub const DCGM_UNUSED5_TEST_INDEX: dcgmPerGpuTestIndices_t = 14;
/// Software test.
pub const DCGM_SOFTWARE_INDEX: dcgmPerGpuTestIndices_t = 15;
/// Context-create test.
pub const DCGM_CONTEXT_CREATE_INDEX: dcgmPerGpuTestIndices_t = 16;
/// Unknown test.
pub const DCGM_UNKNOWN_INDEX: dcgmPerGpuTestIndices_t = 17;
/// Old name of [`DCGM_SM_STRESS_INDEX`].
pub const DCGM_SM_PERF_INDEX: dcgmPerGpuTestIndices_t = DCGM_SM_STRESS_INDEX;

/// Legacy per-GPU results, v8/v9 layout (13 tests, one error each).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagResponsePerGpu_v4 {
    pub gpuId: u32,
    pub hwDiagnosticReturn: u32,
    pub results: [dcgmDiagTestResult_v2; DCGM_PER_GPU_TEST_COUNT_V8],
}
crate::plain_struct!(dcgmDiagResponsePerGpu_v4, size = 26736, align = 4);

/// Legacy per-GPU results, v9/v10 layout (13 tests, several errors each).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagResponsePerGpu_v5 {
    pub gpuId: u32,
    pub hwDiagnosticReturn: u32,
    pub results: [dcgmDiagTestResult_v3; DCGM_PER_GPU_TEST_COUNT_V8],
}
crate::plain_struct!(dcgmDiagResponsePerGpu_v5, size = 41036, align = 4);

/// Legacy per-GPU results, v7 layout (9 tests).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagResponsePerGpu_v3 {
    pub gpuId: u32,
    pub hwDiagnosticReturn: u32,
    pub results: [dcgmDiagTestResult_v2; DCGM_PER_GPU_TEST_COUNT_V7],
}
crate::plain_struct!(dcgmDiagResponsePerGpu_v3, size = 18512, align = 4);

/// The C enum behind [`dcgmSoftwareTest_t`].
pub type dcgmSoftwareTest_enum = u32;
/// The software sub-tests.
pub type dcgmSoftwareTest_t = dcgmSoftwareTest_enum;
/// Denylisted drivers present.
pub const DCGM_SWTEST_DENYLIST: dcgmSoftwareTest_t = 0;
/// NVML library present.
pub const DCGM_SWTEST_NVML_LIBRARY: dcgmSoftwareTest_t = 1;
/// CUDA library present.
pub const DCGM_SWTEST_CUDA_MAIN_LIBRARY: dcgmSoftwareTest_t = 2;
/// CUDA runtime library present.
pub const DCGM_SWTEST_CUDA_RUNTIME_LIBRARY: dcgmSoftwareTest_t = 3;
/// Device node permissions.
pub const DCGM_SWTEST_PERMISSIONS: dcgmSoftwareTest_t = 4;
/// Persistence mode.
pub const DCGM_SWTEST_PERSISTENCE_MODE: dcgmSoftwareTest_t = 5;
/// Environment variables.
pub const DCGM_SWTEST_ENVIRONMENT: dcgmSoftwareTest_t = 6;
/// Pending page retirement.
pub const DCGM_SWTEST_PAGE_RETIREMENT: dcgmSoftwareTest_t = 7;
/// Graphics processes running.
pub const DCGM_SWTEST_GRAPHICS_PROCESSES: dcgmSoftwareTest_t = 8;
/// InfoROM integrity.
pub const DCGM_SWTEST_INFOROM: dcgmSoftwareTest_t = 9;
/// Fabric Manager running.
pub const DCGM_SWTEST_FABRIC_MANAGER: dcgmSoftwareTest_t = 10;

// ---------------------------------------------------------------------------------------------
// Responses

/// Result of a diagnostic run (current layout, about 1.4 MB; allocate it with
/// `boxed_versioned`).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagResponse_v12 {
    pub version: u32,
    pub numTests: u8,
    pub numErrors: u8,
    pub numInfo: u8,
    pub numCategories: u8,
    pub numEntities: u16,
    pub numResults: u16,
    pub tests: [dcgmDiagTestRun_v2; DCGM_DIAG_RESPONSE_TESTS_MAX],
    pub entities: [dcgmDiagEntity_v1; DCGM_DIAG_RESPONSE_ENTITIES_MAX],
    pub errors: [dcgmDiagError_v1; DCGM_DIAG_RESPONSE_ERRORS_MAX],
    pub info: [dcgmDiagInfo_v1; DCGM_DIAG_RESPONSE_INFO_MAX_V2],
    pub results: [dcgmDiagEntityResult_v1; DCGM_DIAG_RESPONSE_RESULTS_MAX],
    pub categories: [[c_char; DCGM_DIAG_RESPONSE_CATEGORY_LEN]; DCGM_DIAG_RESPONSE_CATEGORIES_MAX],
    pub dcgmVersion: [c_char; DCGM_VERSION_LEN],
    pub driverVersion: [c_char; DCGM_MAX_STR_LENGTH],
    pub _unused: [c_char; DCGM_DIAG_RESPONSE_V12_UNUSED_LEN],
}
crate::versioned_struct!(
    dcgmDiagResponse_v12,
    dcgmDiagResponse_version12 = 12,
    size = 1399484,
    word = 0x0C15_5ABC
);

/// Result of a diagnostic run, v11 layout (deprecated).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagResponse_v11 {
    pub version: u32,
    pub numTests: u8,
    pub numErrors: u8,
    pub numInfo: u8,
    pub numCategories: u8,
    pub numEntities: u16,
    pub numResults: u16,
    pub tests: [dcgmDiagTestRun_v1; DCGM_DIAG_RESPONSE_TESTS_MAX],
    pub entities: [dcgmDiagEntity_v1; DCGM_DIAG_RESPONSE_ENTITIES_MAX],
    pub errors: [dcgmDiagError_v1; DCGM_DIAG_RESPONSE_ERRORS_MAX],
    pub info: [dcgmDiagInfo_v1; DCGM_DIAG_RESPONSE_INFO_MAX],
    pub results: [dcgmDiagEntityResult_v1; DCGM_DIAG_RESPONSE_RESULTS_MAX],
    pub categories: [[c_char; DCGM_DIAG_RESPONSE_CATEGORY_LEN]; DCGM_DIAG_RESPONSE_CATEGORIES_MAX],
    pub dcgmVersion: [c_char; DCGM_VERSION_LEN],
    pub driverVersion: [c_char; DCGM_MAX_STR_LENGTH],
    pub _unused: [c_char; DCGM_DIAG_RESPONSE_V11_UNUSED_LEN],
}
crate::versioned_struct!(
    dcgmDiagResponse_v11,
    dcgmDiagResponse_version11 = 11,
    size = 1399484,
    word = 0x0B15_5ABC
);

/// Result of a diagnostic run, v10 layout (deprecated).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagResponse_v10 {
    pub version: u32,
    pub gpuCount: u32,
    pub levelOneTestCount: u32,
    pub levelOneResults: [dcgmDiagTestResult_v3; LEVEL_ONE_MAX_RESULTS],
    pub perGpuResponses: [dcgmDiagResponsePerGpu_v5; DCGM_MAX_NUM_DEVICES],
    pub systemError: dcgmDiagErrorDetail_v2,
    pub devIds: [[c_char; DCGM_DEVICE_ID_LEN]; DCGM_MAX_NUM_DEVICES],
    pub devSerials: [[c_char; DCGM_MAX_STR_LENGTH]; DCGM_MAX_NUM_DEVICES],
    pub dcgmVersion: [c_char; DCGM_VERSION_LEN],
    pub driverVersion: [c_char; DCGM_MAX_STR_LENGTH],
    pub auxDataPerTest: [dcgmDiagTestAuxData_v1; DCGM_PER_GPU_TEST_COUNT_V8],
}
crate::versioned_struct!(
    dcgmDiagResponse_v10,
    dcgmDiagResponse_version10 = 10,
    size = 1399484,
    word = 0x0A15_5ABC
);

/// Result of a diagnostic run, v9 layout (deprecated).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagResponse_v9 {
    pub version: u32,
    pub gpuCount: u32,
    pub levelOneTestCount: u32,
    pub levelOneResults: [dcgmDiagTestResult_v3; LEVEL_ONE_MAX_RESULTS],
    pub perGpuResponses: [dcgmDiagResponsePerGpu_v5; DCGM_MAX_NUM_DEVICES],
    pub systemError: dcgmDiagErrorDetail_v2,
    pub devIds: [[c_char; DCGM_DEVICE_ID_LEN]; DCGM_MAX_NUM_DEVICES],
    pub devSerials: [[c_char; DCGM_MAX_STR_LENGTH]; DCGM_MAX_NUM_DEVICES],
    pub dcgmVersion: [c_char; DCGM_VERSION_LEN],
    pub driverVersion: [c_char; DCGM_MAX_STR_LENGTH],
    pub _unused: [c_char; 596],
}
crate::versioned_struct!(
    dcgmDiagResponse_v9,
    dcgmDiagResponse_version9 = 9,
    size = 1373404,
    word = 0x0914_F4DC
);

/// Result of a diagnostic run, v8 layout (deprecated).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagResponse_v8 {
    pub version: u32,
    pub gpuCount: u32,
    pub levelOneTestCount: u32,
    pub levelOneResults: [dcgmDiagTestResult_v2; LEVEL_ONE_MAX_RESULTS],
    pub perGpuResponses: [dcgmDiagResponsePerGpu_v4; DCGM_MAX_NUM_DEVICES],
    pub systemError: dcgmDiagErrorDetail_t,
    pub devIds: [[c_char; DCGM_DEVICE_ID_LEN]; DCGM_MAX_NUM_DEVICES],
    pub dcgmVersion: [c_char; DCGM_VERSION_LEN],
    pub driverVersion: [c_char; DCGM_MAX_STR_LENGTH],
    pub _unused: [c_char; 596],
}
crate::versioned_struct!(
    dcgmDiagResponse_v8,
    dcgmDiagResponse_version8 = 8,
    size = 890512,
    word = 0x080D_9690
);

/// Result of a diagnostic run, v7 layout (deprecated).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagResponse_v7 {
    pub version: u32,
    pub gpuCount: u32,
    pub levelOneTestCount: u32,
    pub levelOneResults: [dcgmDiagTestResult_v2; LEVEL_ONE_MAX_RESULTS],
    pub perGpuResponses: [dcgmDiagResponsePerGpu_v3; DCGM_MAX_NUM_DEVICES],
    pub systemError: dcgmDiagErrorDetail_t,
    pub _unused: [c_char; 1024],
}
crate::versioned_struct!(
    dcgmDiagResponse_v7,
    dcgmDiagResponse_version7 = 7,
    size = 627344,
    word = 0x0709_9290
);

/// The current diagnostic response struct.
pub type dcgmDiagResponse_t = dcgmDiagResponse_v12;
/// Version word of [`dcgmDiagResponse_t`].
pub const dcgmDiagResponse_version: u32 = dcgmDiagResponse_version12;

/// Live progress of a running diagnostic.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDiagStatus_v1 {
    pub version: u32,
    pub totalTests: u32,
    pub completedTests: u32,
    /// Name of the last completed test.
    pub testName: [c_char; 128],
    /// First error code of the last completed test (`DCGM_FR_OK` on success).
    pub errorCode: u32,
}
crate::versioned_struct!(
    dcgmDiagStatus_v1,
    dcgmDiagStatus_version1 = 1,
    size = 144,
    word = 0x0100_0090
);
/// The current diagnostic status struct.
pub type dcgmDiagStatus_t = dcgmDiagStatus_v1;
/// Version word of [`dcgmDiagStatus_t`].
pub const dcgmDiagStatus_version: u32 = dcgmDiagStatus_version1;

// ---------------------------------------------------------------------------------------------
// Run parameters

/// Parameters of a diagnostic run, v7 layout (deprecated).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmRunDiag_v7 {
    pub version: u32,
    /// `DCGM_RUN_FLAGS_*` bits.
    pub flags: u32,
    /// Log level of the diagnostic, 0–5.
    pub debugLevel: u32,
    pub groupId: dcgmGpuGrp_t,
    pub validate: dcgmPolicyValidation_t,
    pub testNames: [[c_char; DCGM_MAX_TEST_NAMES_LEN]; DCGM_MAX_TEST_NAMES],
    pub testParms: [[c_char; DCGM_MAX_TEST_PARMS_LEN]; DCGM_MAX_TEST_PARMS],
    pub fakeGpuList: [c_char; DCGM_GPU_LIST_LEN],
    pub gpuList: [c_char; DCGM_GPU_LIST_LEN],
    pub debugLogFile: [c_char; DCGM_PATH_LEN],
    pub statsPath: [c_char; DCGM_PATH_LEN],
    pub configFileContents: [c_char; DCGM_MAX_CONFIG_FILE_LEN],
    pub clocksEventMask: [c_char; DCGM_CLOCKS_EVENT_MASK_LEN],
    /// No longer supported.
    pub pluginPath: [c_char; DCGM_PATH_LEN],
    pub currentIteration: u32,
    pub totalIterations: u32,
    pub timeoutSeconds: u32,
    pub _unusedBuf: [c_char; DCGM_PATH_LEN],
    pub failCheckInterval: u32,
}
crate::versioned_struct!(
    dcgmRunDiag_v7,
    dcgmRunDiag_version7 = 7,
    size = 21712,
    word = 0x0700_54D0
);

/// Parameters of a diagnostic run, v8 layout (deprecated).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmRunDiag_v8 {
    pub version: u32,
    pub flags: u32,
    pub debugLevel: u32,
    pub groupId: dcgmGpuGrp_t,
    pub validate: dcgmPolicyValidation_t,
    pub testNames: [[c_char; DCGM_MAX_TEST_NAMES_LEN]; DCGM_MAX_TEST_NAMES],
    pub testParms: [[c_char; DCGM_MAX_TEST_PARMS_LEN_V2]; DCGM_MAX_TEST_PARMS],
    pub fakeGpuList: [c_char; DCGM_GPU_LIST_LEN],
    pub gpuList: [c_char; DCGM_GPU_LIST_LEN],
    pub debugLogFile: [c_char; DCGM_PATH_LEN],
    pub statsPath: [c_char; DCGM_PATH_LEN],
    pub configFileContents: [c_char; DCGM_MAX_CONFIG_FILE_LEN],
    pub clocksEventMask: [c_char; DCGM_CLOCKS_EVENT_MASK_LEN],
    pub pluginPath: [c_char; DCGM_PATH_LEN],
    pub currentIteration: u32,
    pub totalIterations: u32,
    pub timeoutSeconds: u32,
    pub _unusedBuf: [c_char; DCGM_PATH_LEN],
    pub failCheckInterval: u32,
    pub expectedNumEntities: [c_char; DCGM_EXPECTED_ENTITIES_LEN],
}
crate::versioned_struct!(
    dcgmRunDiag_v8,
    dcgmRunDiag_version8 = 8,
    size = 116760,
    word = 0x0801_C818
);

/// Parameters of a diagnostic run, v9 layout (deprecated).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmRunDiag_v9 {
    pub version: u32,
    pub flags: u32,
    pub debugLevel: u32,
    pub groupId: dcgmGpuGrp_t,
    pub validate: dcgmPolicyValidation_t,
    pub testNames: [[c_char; DCGM_MAX_TEST_NAMES_LEN]; DCGM_MAX_TEST_NAMES],
    pub testParms: [[c_char; DCGM_MAX_TEST_PARMS_LEN_V2]; DCGM_MAX_TEST_PARMS],
    pub fakeGpuList: [c_char; DCGM_GPU_LIST_LEN],
    pub debugLogFile: [c_char; DCGM_PATH_LEN],
    pub statsPath: [c_char; DCGM_PATH_LEN],
    pub configFileContents: [c_char; DCGM_MAX_CONFIG_FILE_LEN],
    pub clocksEventMask: [c_char; DCGM_CLOCKS_EVENT_MASK_LEN],
    pub pluginPath: [c_char; DCGM_PATH_LEN],
    pub currentIteration: u32,
    pub totalIterations: u32,
    pub timeoutSeconds: u32,
    pub _unusedBuf: [c_char; DCGM_PATH_LEN],
    pub failCheckInterval: u32,
    pub expectedNumEntities: [c_char; DCGM_EXPECTED_ENTITIES_LEN],
    pub entityIds: [c_char; DCGM_ENTITY_ID_LIST_LEN],
    pub watchFrequency: u32,
}
crate::versioned_struct!(
    dcgmRunDiag_v9,
    dcgmRunDiag_version9 = 9,
    size = 118760,
    word = 0x0901_CFE8
);

/// Parameters of `dcgmActionValidate_v2`: which entities (a group, or `groupId` =
/// `DCGM_GROUP_NULL` plus the `entityIds` string), which tests, with which parameters.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmRunDiag_v10 {
    pub version: u32,
    /// `DCGM_RUN_FLAGS_*` bits.
    pub flags: u32,
    /// Log level of the diagnostic, 0–5.
    pub debugLevel: u32,
    pub groupId: dcgmGpuGrp_t,
    /// Run level when no test names are given.
    pub validate: dcgmPolicyValidation_t,
    pub testNames: [[c_char; DCGM_MAX_TEST_NAMES_LEN]; DCGM_MAX_TEST_NAMES],
    /// `test.parameter=value` strings.
    pub testParms: [[c_char; DCGM_MAX_TEST_PARMS_LEN_V2]; DCGM_MAX_TEST_PARMS],
    pub fakeGpuList: [c_char; DCGM_GPU_LIST_LEN],
    pub debugLogFile: [c_char; DCGM_PATH_LEN],
    pub statsPath: [c_char; DCGM_PATH_LEN],
    pub configFileContents: [c_char; DCGM_MAX_CONFIG_FILE_LEN],
    /// Clock-event reasons to ignore: an integer mask or a comma-separated list.
    pub clocksEventMask: [c_char; DCGM_CLOCKS_EVENT_MASK_LEN],
    /// No longer supported.
    pub pluginPath: [c_char; DCGM_PATH_LEN],
    pub currentIteration: u32,
    pub totalIterations: u32,
    pub timeoutSeconds: u32,
    pub _unusedBuf: [c_char; DCGM_PATH_LEN],
    pub failCheckInterval: u32,
    pub expectedNumEntities: [c_char; DCGM_EXPECTED_ENTITIES_LEN],
    /// Comma-separated entity list, used when `groupId` is `DCGM_GROUP_NULL`.
    pub entityIds: [c_char; DCGM_ENTITY_ID_LIST_LEN],
    pub watchFrequency: u32,
    pub ignoreErrorCodes: [c_char; DCGM_IGNORE_ERROR_MAX_LEN],
}
crate::versioned_struct!(
    dcgmRunDiag_v10,
    dcgmRunDiag_version10 = 10,
    size = 119272,
    word = 0x0A01_D1E8
);
/// The current run-parameters struct (the C typedef lives in DCGM's internal header).
pub type dcgmRunDiag_t = dcgmRunDiag_v10;
/// Version word of [`dcgmRunDiag_t`] (the C macro lives in DCGM's internal header).
pub const dcgmRunDiag_version: u32 = dcgmRunDiag_version10;

// ---------------------------------------------------------------------------------------------
// Multi-node diagnostic

/// Maximum hosts of a multi-node run.
pub const DCGM_MAX_NUM_HOSTS: usize = 72;

/// Parameters of `dcgmRunMnDiagnostic`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmRunMnDiag_v1 {
    pub version: u32,
    pub hostList: [[c_char; DCGM_MAX_STR_LENGTH]; DCGM_MAX_NUM_HOSTS],
    pub testName: [c_char; DCGM_MAX_STR_LENGTH],
    pub testParms: [[c_char; DCGM_MAX_TEST_PARMS_LEN_V2]; DCGM_MAX_TEST_PARMS],
}
crate::versioned_struct!(
    dcgmRunMnDiag_v1,
    dcgmRunMnDiag_version1 = 1,
    size = 123692,
    word = 0x0101_E32C
);
/// The current multi-node run struct.
pub type dcgmRunMnDiag_t = dcgmRunMnDiag_v1;
/// Version word of [`dcgmRunMnDiag_t`].
pub const dcgmRunMnDiag_version: u32 = dcgmRunMnDiag_version1;

/// Tests per multi-node response.
pub const DCGM_MN_DIAG_RESPONSE_TESTS_MAX: usize = 4;
/// Entities per host in a multi-node response.
pub const DCGM_MN_DIAG_RESPONSE_ENTITIES_PER_HOST_MAX: usize = 16;
/// Hosts per multi-node response.
pub const DCGM_MN_DIAG_RESPONSE_HOSTS_MAX: usize = 72;
/// Entities per multi-node response.
pub const DCGM_MN_DIAG_RESPONSE_ENTITIES_MAX: usize =
    DCGM_MN_DIAG_RESPONSE_HOSTS_MAX * DCGM_MN_DIAG_RESPONSE_ENTITIES_PER_HOST_MAX;
/// Error indices per multi-node test run.
pub const DCGM_MN_DIAG_TEST_RUN_ERROR_INDICES_MAX: usize = 32;
/// Info indices per multi-node test run.
pub const DCGM_MN_DIAG_TEST_RUN_INFO_INDICES_MAX: usize = 128;
/// Errors per multi-node response.
pub const DCGM_MN_DIAG_RESPONSE_ERRORS_MAX: usize = DCGM_MN_DIAG_TEST_RUN_ERROR_INDICES_MAX;
/// Info messages per multi-node response.
pub const DCGM_MN_DIAG_RESPONSE_INFO_MAX: usize = DCGM_MN_DIAG_TEST_RUN_INFO_INDICES_MAX;
/// Per-entity results per multi-node response.
pub const DCGM_MN_DIAG_RESPONSE_RESULTS_MAX: usize =
    DCGM_MN_DIAG_RESPONSE_TESTS_MAX * DCGM_MN_DIAG_RESPONSE_ENTITIES_MAX;
/// Length of a multi-node test or plugin name, NUL included.
pub const DCGM_MN_DIAG_TEST_RUN_NAME_LEN: usize = 32;
/// Length of a multi-node test's auxiliary data.
pub const DCGM_MN_DIAG_AUX_DATA_LEN: usize = 2048;

/// One host of a multi-node run.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMnDiagHosts_v1 {
    pub hostname: [c_char; DCGM_MAX_STR_LENGTH],
    pub dcgmVersion: [c_char; DCGM_VERSION_LEN],
    pub driverVersion: [c_char; DCGM_MAX_STR_LENGTH],
    pub numEntities: u32,
    /// Indices into the response's `entities`.
    pub entityIndices: [u32; DCGM_MN_DIAG_RESPONSE_ENTITIES_PER_HOST_MAX],
}
version_word_only!(
    dcgmMnDiagHosts_v1,
    dcgmMnDiagHosts_version1 = 1,
    size = 592,
    word = 0x0100_0250
);
/// The current multi-node host struct.
pub type dcgmMnDiagHosts_t = dcgmMnDiagHosts_v1;
/// Version word of [`dcgmMnDiagHosts_t`].
pub const dcgmMnDiagHosts_version: u32 = dcgmMnDiagHosts_version1;

/// Free-form auxiliary data of a multi-node test.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMnDiagTestAuxData_v1 {
    pub version: u32,
    pub data: [c_char; DCGM_MN_DIAG_AUX_DATA_LEN],
}
crate::versioned_struct!(
    dcgmMnDiagTestAuxData_v1,
    dcgmMnDiagTestAuxData_version1 = 1,
    size = 2052,
    word = 0x0100_0804
);
/// The current multi-node auxiliary data struct.
pub type dcgmMnDiagTestAuxData_t = dcgmMnDiagTestAuxData_v1;
/// Version word of [`dcgmMnDiagTestAuxData_t`].
pub const dcgmMnDiagTestAuxData_version: u32 = dcgmMnDiagTestAuxData_version1;

/// One test of a multi-node run.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMnDiagTestRun_v1 {
    pub name: [c_char; DCGM_MN_DIAG_TEST_RUN_NAME_LEN],
    pub pluginName: [c_char; DCGM_MN_DIAG_TEST_RUN_NAME_LEN],
    pub result: dcgmDiagResult_t,
    pub numErrors: u8,
    pub numInfo: u8,
    pub categoryIndex: u8,
    pub _unused1: u8,
    pub numResults: u16,
    pub _unused2: [u8; 2],
    pub errorIndices: [u8; DCGM_MN_DIAG_TEST_RUN_ERROR_INDICES_MAX],
    pub infoIndices: [u8; DCGM_MN_DIAG_TEST_RUN_INFO_INDICES_MAX],
    pub resultIndices: [u16; DCGM_MN_DIAG_RESPONSE_ENTITIES_MAX],
    pub _unused3: [u8; 4],
    pub auxData: dcgmMnDiagTestAuxData_v1,
}
version_word_only!(
    dcgmMnDiagTestRun_v1,
    dcgmMnDiagTestRun_version1 = 1,
    size = 4596,
    word = 0x0100_11F4
);
/// The current multi-node test-run struct.
pub type dcgmMnDiagTestRun_t = dcgmMnDiagTestRun_v1;
/// Version word of [`dcgmMnDiagTestRun_t`].
pub const dcgmMnDiagTestRun_version: u32 = dcgmMnDiagTestRun_version1;

/// An entity of a multi-node run.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMnDiagEntity_v1 {
    pub entity: dcgmGroupEntityPair_t,
    /// Index of the entity's host in the response's `hosts`.
    pub hostId: u32,
    pub serialNum: [c_char; DCGM_MAX_STR_LENGTH],
    pub skuDeviceId: [c_char; DCGM_DEVICE_ID_LEN],
    pub _unusedPad1: [c_char; 3],
}
version_word_only!(
    dcgmMnDiagEntity_v1,
    dcgmMnDiagEntity_version1 = 1,
    size = 276,
    word = 0x0100_0114
);
/// The current multi-node entity struct.
pub type dcgmMnDiagEntity_t = dcgmMnDiagEntity_v1;
/// Version word of [`dcgmMnDiagEntity_t`].
pub const dcgmMnDiagEntity_version: u32 = dcgmMnDiagEntity_version1;

/// An error of a multi-node run.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMnDiagError_v1 {
    pub entity: dcgmGroupEntityPair_t,
    pub hostId: u32,
    pub testId: u32,
    /// A `DCGM_FR_*` code.
    pub code: u32,
    pub category: u32,
    pub severity: u32,
    pub msg: [c_char; DCGM_ERR_MSG_LENGTH],
}
version_word_only!(
    dcgmMnDiagError_v1,
    dcgmMnDiagError_version1 = 1,
    size = 540,
    word = 0x0100_021C
);
/// The current multi-node error struct.
pub type dcgmMnDiagError_t = dcgmMnDiagError_v1;
/// Version word of [`dcgmMnDiagError_t`].
pub const dcgmMnDiagError_version: u32 = dcgmMnDiagError_version1;

/// An info message of a multi-node run.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMnDiagInfo_v1 {
    pub entity: dcgmGroupEntityPair_t,
    pub hostId: u32,
    pub testId: u32,
    pub msg: [c_char; DCGM_ERR_MSG_LENGTH],
}
version_word_only!(
    dcgmMnDiagInfo_v1,
    dcgmMnDiagInfo_version1 = 1,
    size = 528,
    word = 0x0100_0210
);
/// The current multi-node info struct.
pub type dcgmMnDiagInfo_t = dcgmMnDiagInfo_v1;
/// Version word of [`dcgmMnDiagInfo_t`].
pub const dcgmMnDiagInfo_version: u32 = dcgmMnDiagInfo_version1;

/// The result of one multi-node test on one entity.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMnDiagEntityResult_v1 {
    pub entity: dcgmGroupEntityPair_t,
    pub result: dcgmDiagResult_t,
    pub hostId: u32,
    pub testId: u32,
}
version_word_only!(
    dcgmMnDiagEntityResult_v1,
    dcgmMnDiagEntityResult_version1 = 1,
    size = 20,
    word = 0x0100_0014
);
/// The current multi-node entity-result struct.
pub type dcgmMnDiagEntityResult_t = dcgmMnDiagEntityResult_v1;
/// Version word of [`dcgmMnDiagEntityResult_t`].
pub const dcgmMnDiagEntityResult_version: u32 = dcgmMnDiagEntityResult_version1;

/// Result of `dcgmRunMnDiagnostic` (about 550 kB; allocate it with `boxed_versioned`).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmMnDiagResponse_v1 {
    pub version: u32,
    pub numHosts: u8,
    pub numTests: u8,
    pub numErrors: u16,
    pub numInfos: u16,
    pub numEntities: u16,
    pub numResults: u16,
    pub _unusedPad1: [c_char; 2],
    pub hosts: [dcgmMnDiagHosts_v1; DCGM_MN_DIAG_RESPONSE_HOSTS_MAX],
    pub tests: [dcgmMnDiagTestRun_v1; DCGM_MN_DIAG_RESPONSE_TESTS_MAX],
    pub entities: [dcgmMnDiagEntity_v1; DCGM_MN_DIAG_RESPONSE_ENTITIES_MAX],
    pub errors: [dcgmMnDiagError_v1; DCGM_MN_DIAG_RESPONSE_ERRORS_MAX],
    pub info: [dcgmMnDiagInfo_v1; DCGM_MN_DIAG_RESPONSE_INFO_MAX],
    pub results: [dcgmMnDiagEntityResult_v1; DCGM_MN_DIAG_RESPONSE_RESULTS_MAX],
}
crate::versioned_struct!(
    dcgmMnDiagResponse_v1,
    dcgmMnDiagResponse_version1 = 1,
    size = 556000,
    word = 0x0108_7BE0
);
/// The current multi-node response struct.
pub type dcgmMnDiagResponse_t = dcgmMnDiagResponse_v1;
/// Version word of [`dcgmMnDiagResponse_t`].
pub const dcgmMnDiagResponse_version: u32 = dcgmMnDiagResponse_version1;
