//! Health and diagnostic failure reasons (`DCGM_FR_*`) with their severities and categories.

use std::ffi::c_char;

/// The C enum behind [`dcgmError_t`].
pub type dcgmError_enum = u32;
/// Why a health check or diagnostic failed (the `code` of an incident or diagnostic error).
pub type dcgmError_t = dcgmError_enum;

macro_rules! failure_reasons {
    ($( $name:ident = $value:literal, $text:literal; )*) => {
        $(
            #[doc = $text]
            pub const $name: dcgmError_t = $value;
        )*

        /// Every `dcgmError_t` value of DCGM 4.6 (aliases excluded): `(code, C name)`.
        pub static FAILURE_REASONS: &[(dcgmError_t, &str)] = &[
            $( ($value, stringify!($name)), )*
        ];
    };
}

failure_reasons! {
    DCGM_FR_OK = 0, "No error.";
    DCGM_FR_UNKNOWN = 1, "An unknown error.";
    DCGM_FR_UNRECOGNIZED = 2, "An error DCGM does not recognise.";
    DCGM_FR_PCI_REPLAY_RATE = 3, "PCIe replay rate above the limit.";
    DCGM_FR_VOLATILE_DBE_DETECTED = 4, "Uncorrectable (double-bit) ECC error since the last reset.";
    DCGM_FR_VOLATILE_SBE_DETECTED = 5, "Correctable (single-bit) ECC error since the last reset.";
    DCGM_FR_PENDING_PAGE_RETIREMENTS = 6, "Memory pages waiting to be retired.";
    DCGM_FR_RETIRED_PAGES_LIMIT = 7, "Too many retired pages.";
    DCGM_FR_RETIRED_PAGES_DBE_LIMIT = 8, "Too many pages retired for uncorrectable errors.";
    DCGM_FR_CORRUPT_INFOROM = 9, "The inforom is corrupt.";
    DCGM_FR_CLOCKS_EVENT_THERMAL = 10, "Clocks lowered for thermal reasons.";
    DCGM_FR_POWER_UNREADABLE = 11, "Power cannot be read.";
    DCGM_FR_CLOCKS_EVENT_POWER = 12, "Clocks lowered for power reasons.";
    DCGM_FR_NVLINK_ERROR_THRESHOLD = 13, "NVLink error count above the threshold.";
    DCGM_FR_NVLINK_DOWN = 14, "An NVLink is down.";
    DCGM_FR_NVSWITCH_FATAL_ERROR = 15, "Fatal NvSwitch error.";
    DCGM_FR_NVSWITCH_NON_FATAL_ERROR = 16, "Non-fatal NvSwitch error.";
    DCGM_FR_NVSWITCH_DOWN = 17, "An NvSwitch is down.";
    DCGM_FR_NO_ACCESS_TO_FILE = 18, "A file cannot be accessed.";
    DCGM_FR_NVML_API = 19, "An NVML call failed.";
    DCGM_FR_DEVICE_COUNT_MISMATCH = 20, "NVML and /dev disagree on the number of GPUs.";
    DCGM_FR_BAD_PARAMETER = 21, "A bad parameter was passed.";
    DCGM_FR_CANNOT_OPEN_LIB = 22, "A library cannot be opened.";
    DCGM_FR_DENYLISTED_DRIVER = 23, "The driver is on the deny list.";
    DCGM_FR_NVML_LIB_BAD = 24, "The NVML library lacks a required function.";
    DCGM_FR_GRAPHICS_PROCESSES = 25, "Graphics processes are running.";
    DCGM_FR_HOSTENGINE_CONN = 26, "Bad connection to the host engine.";
    DCGM_FR_FIELD_QUERY = 27, "A field value could not be read.";
    DCGM_FR_BAD_CUDA_ENV = 28, "The CUDA environment is bad.";
    DCGM_FR_PERSISTENCE_MODE = 29, "Persistence mode is off.";
    DCGM_FR_LOW_BANDWIDTH = 30, "Bandwidth below the minimum.";
    DCGM_FR_HIGH_LATENCY = 31, "Latency above the maximum.";
    DCGM_FR_CANNOT_GET_FIELD_TAG = 32, "A field tag cannot be found.";
    DCGM_FR_FIELD_VIOLATION = 33, "An integer field reported a violation.";
    DCGM_FR_FIELD_THRESHOLD = 34, "An integer field crossed its threshold.";
    DCGM_FR_FIELD_VIOLATION_DBL = 35, "A double field reported a violation.";
    DCGM_FR_FIELD_THRESHOLD_DBL = 36, "A double field crossed its threshold.";
    DCGM_FR_UNSUPPORTED_FIELD_TYPE = 37, "The field type is not supported here.";
    DCGM_FR_FIELD_THRESHOLD_TS = 38, "An integer field crossed its threshold at a given time.";
    DCGM_FR_FIELD_THRESHOLD_TS_DBL = 39, "A double field crossed its threshold at a given time.";
    DCGM_FR_THERMAL_VIOLATIONS = 40, "Thermal violations occurred.";
    DCGM_FR_THERMAL_VIOLATIONS_TS = 41, "Thermal violations occurred from a given time.";
    DCGM_FR_TEMP_VIOLATION = 42, "Temperature above the user's maximum.";
    DCGM_FR_CLOCKS_EVENT_VIOLATION = 43, "Clock-event (throttling) violation.";
    DCGM_FR_INTERNAL = 44, "Internal error.";
    DCGM_FR_PCIE_GENERATION = 45, "PCIe generation below the minimum.";
    DCGM_FR_PCIE_WIDTH = 46, "PCIe link width below the minimum.";
    DCGM_FR_ABORTED = 47, "The test was aborted.";
    DCGM_FR_TEST_DISABLED = 48, "The test is disabled for this GPU.";
    DCGM_FR_CANNOT_GET_STAT = 49, "A statistic cannot be read.";
    DCGM_FR_STRESS_LEVEL = 50, "The target stress level was not reached.";
    DCGM_FR_CUDA_API = 51, "A CUDA call failed.";
    DCGM_FR_FAULTY_MEMORY = 52, "Faulty memory detected.";
    DCGM_FR_CANNOT_SET_WATCHES = 53, "Field watches cannot be set.";
    DCGM_FR_CUDA_UNBOUND = 54, "CUDA cannot be bound to the GPU.";
    DCGM_FR_ECC_DISABLED = 55, "ECC is disabled.";
    DCGM_FR_MEMORY_ALLOC = 56, "GPU memory cannot be allocated.";
    DCGM_FR_CUDA_DBE = 57, "CUDA reported an uncorrectable ECC error.";
    DCGM_FR_MEMORY_MISMATCH = 58, "Memory contents did not match.";
    DCGM_FR_CUDA_DEVICE = 59, "No CUDA device available.";
    DCGM_FR_ECC_UNSUPPORTED = 60, "ECC is not supported.";
    DCGM_FR_ECC_PENDING = 61, "An ECC mode change is pending.";
    DCGM_FR_MEMORY_BANDWIDTH = 62, "Memory bandwidth below the minimum.";
    DCGM_FR_TARGET_POWER = 63, "The target power was not reached.";
    DCGM_FR_API_FAIL = 64, "An API call failed.";
    DCGM_FR_API_FAIL_GPU = 65, "An API call failed for a GPU.";
    DCGM_FR_CUDA_CONTEXT = 66, "A CUDA context cannot be created.";
    DCGM_FR_DCGM_API = 67, "A DCGM call failed.";
    DCGM_FR_CONCURRENT_GPUS = 68, "Too few GPUs for a concurrent test.";
    DCGM_FR_TOO_MANY_ERRORS = 69, "More errors than can be reported.";
    DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD = 70, "NVLink CRC error rate above the threshold.";
    DCGM_FR_NVLINK_ERROR_CRITICAL = 71, "Critical NVLink error.";
    DCGM_FR_ENFORCED_POWER_LIMIT = 72, "The enforced power limit is too low for the test.";
    DCGM_FR_MEMORY_ALLOC_HOST = 73, "Host memory cannot be allocated.";
    DCGM_FR_GPU_OP_MODE = 74, "The GPU operation mode is wrong.";
    DCGM_FR_NO_MEMORY_CLOCKS = 75, "No memory clocks can be set.";
    DCGM_FR_NO_GRAPHICS_CLOCKS = 76, "No graphics clocks can be set.";
    DCGM_FR_HAD_TO_RESTORE_STATE = 77, "GPU state had to be restored.";
    DCGM_FR_L1TAG_UNSUPPORTED = 78, "The L1 tag test is not supported.";
    DCGM_FR_L1TAG_MISCOMPARE = 79, "The L1 tag test found a mismatch.";
    DCGM_FR_ROW_REMAP_FAILURE = 80, "Memory row remapping failed.";
    DCGM_FR_UNCONTAINED_ERROR = 81, "An uncontained error (XID 95).";
    DCGM_FR_EMPTY_GPU_LIST = 82, "No GPUs to test.";
    DCGM_FR_DBE_PENDING_PAGE_RETIREMENTS = 83, "Pages pending retirement after an uncorrectable error.";
    DCGM_FR_UNCORRECTABLE_ROW_REMAP = 84, "Uncorrectable row remapping.";
    DCGM_FR_PENDING_ROW_REMAP = 85, "A row remapping is pending.";
    DCGM_FR_BROKEN_P2P_MEMORY_DEVICE = 86, "Peer-to-peer copy into this GPU failed.";
    DCGM_FR_BROKEN_P2P_WRITER_DEVICE = 87, "Peer-to-peer copy from this GPU failed.";
    DCGM_FR_NVSWITCH_NVLINK_DOWN = 88, "An NvSwitch NVLink is down.";
    DCGM_FR_EUD_BINARY_PERMISSIONS = 89, "The EUD binary has wrong permissions.";
    DCGM_FR_EUD_NON_ROOT_USER = 90, "EUD needs root.";
    DCGM_FR_EUD_SPAWN_FAILURE = 91, "EUD could not be started.";
    DCGM_FR_EUD_TIMEOUT = 92, "EUD timed out.";
    DCGM_FR_EUD_ZOMBIE = 93, "EUD became a zombie process.";
    DCGM_FR_EUD_NON_ZERO_EXIT_CODE = 94, "EUD exited with a non-zero code.";
    DCGM_FR_EUD_TEST_FAILED = 95, "The EUD test failed.";
    DCGM_FR_FILE_CREATE_PERMISSIONS = 96, "A file cannot be created.";
    DCGM_FR_PAUSE_RESUME_FAILED = 97, "Pausing or resuming DCGM failed.";
    DCGM_FR_PCIE_H_REPLAY_VIOLATION = 98, "PCIe replay counter violation (host side).";
    DCGM_FR_GPU_EXPECTED_NVLINKS_UP = 99, "Fewer GPU NVLinks up than expected.";
    DCGM_FR_NVSWITCH_EXPECTED_NVLINKS_UP = 100, "Fewer NvSwitch NVLinks up than expected.";
    DCGM_FR_XID_ERROR = 101, "An XID error occurred.";
    DCGM_FR_SBE_VIOLATION = 102, "Correctable ECC error violation.";
    DCGM_FR_DBE_VIOLATION = 103, "Uncorrectable ECC error violation.";
    DCGM_FR_PCIE_REPLAY_VIOLATION = 104, "PCIe replay violation.";
    DCGM_FR_SBE_THRESHOLD_VIOLATION = 105, "Correctable ECC errors above the threshold.";
    DCGM_FR_DBE_THRESHOLD_VIOLATION = 106, "Uncorrectable ECC errors above the threshold.";
    DCGM_FR_PCIE_REPLAY_THRESHOLD_VIOLATION = 107, "PCIe replays above the threshold.";
    DCGM_FR_CUDA_FM_NOT_INITIALIZED = 108, "CUDA found the fabric manager not initialised.";
    DCGM_FR_SXID_ERROR = 109, "An NvSwitch SXID error occurred.";
    DCGM_FR_GFLOPS_THRESHOLD_VIOLATION = 110, "GFLOPS below the threshold.";
    DCGM_FR_NAN_VALUE = 111, "A NaN value was found.";
    DCGM_FR_FABRIC_MANAGER_TRAINING_ERROR = 112, "Fabric manager training failed.";
    DCGM_FR_BROKEN_P2P_PCIE_MEMORY_DEVICE = 113, "Peer-to-peer PCIe write into this GPU failed.";
    DCGM_FR_BROKEN_P2P_PCIE_WRITER_DEVICE = 114, "Peer-to-peer PCIe write from this GPU failed.";
    DCGM_FR_BROKEN_P2P_NVLINK_MEMORY_DEVICE = 115, "Peer-to-peer NVLink write into this GPU failed.";
    DCGM_FR_BROKEN_P2P_NVLINK_WRITER_DEVICE = 116, "Peer-to-peer NVLink write from this GPU failed.";
    DCGM_FR_TEST_SKIPPED = 117, "The test was skipped.";
    DCGM_FR_SRAM_THRESHOLD = 118, "SRAM errors above the threshold.";
    DCGM_FR_NVLINK_EFFECTIVE_BER_THRESHOLD = 119, "NVLink effective bit-error rate above the threshold.";
    DCGM_FR_FALLEN_OFF_BUS = 120, "The GPU fell off the bus.";
    DCGM_FR_NVLINK_SYMBOL_BER_THRESHOLD = 121, "NVLink symbol bit-error rate above the threshold.";
    DCGM_FR_IMEX_UNHEALTHY = 122, "IMEX is unhealthy.";
    DCGM_FR_FABRIC_PROBE_STATE = 123, "Fabric probe reported a bad state.";
    DCGM_FR_BINARY_PERMISSIONS = 124, "A binary has wrong permissions.";
    DCGM_FR_GPU_RECOVERY_RESET = 125, "The GPU needs a reset to recover.";
    DCGM_FR_GPU_RECOVERY_REBOOT = 126, "The node needs a reboot to recover.";
    DCGM_FR_GPU_RECOVERY_DRAIN_P2P = 127, "Peer-to-peer traffic must be drained.";
    DCGM_FR_GPU_RECOVERY_DRAIN_RESET = 128, "Drain the GPU, then reset it.";
    DCGM_FR_NCCL_ERROR = 129, "An NCCL error.";
    DCGM_FR_RETEST_REQUESTED = 130, "A rerun of the test was requested.";
    DCGM_FR_CONTAINED_ERROR = 131, "A contained error (XID 94).";
    DCGM_FR_UNCORRECTABLE_ROW_REMAP_LIMIT = 132, "Uncorrectable row remaps above the limit.";
    DCGM_FR_ERROR_SENTINEL = 133, "One past the last code.";
}
/// Old name of [`DCGM_FR_CLOCKS_EVENT_THERMAL`].
pub const DCGM_FR_CLOCK_THROTTLE_THERMAL: dcgmError_t = DCGM_FR_CLOCKS_EVENT_THERMAL;
/// Old name of [`DCGM_FR_CLOCKS_EVENT_POWER`].
pub const DCGM_FR_CLOCK_THROTTLE_POWER: dcgmError_t = DCGM_FR_CLOCKS_EVENT_POWER;
/// Old name of [`DCGM_FR_CLOCKS_EVENT_VIOLATION`].
pub const DCGM_FR_THROTTLING_VIOLATION: dcgmError_t = DCGM_FR_CLOCKS_EVENT_VIOLATION;

/// The C name of a failure reason (`"DCGM_FR_XID_ERROR"`), or `None` for an unknown value.
///
/// ```
/// assert_eq!(dcgm_sys::failure_reason_name(dcgm_sys::DCGM_FR_XID_ERROR), Some("DCGM_FR_XID_ERROR"));
/// assert_eq!(dcgm_sys::failure_reason_name(9999), None);
/// ```
pub fn failure_reason_name(code: dcgmError_t) -> Option<&'static str> {
    FAILURE_REASONS
        .get(code as usize)
        .filter(|r| r.0 == code)
        .map(|r| r.1)
}

/// The C enum behind [`dcgmErrorSeverity_t`].
pub type dcgmErrorSeverity_enum = u32;
/// How serious a failure reason is, and what to do about it.
pub type dcgmErrorSeverity_t = dcgmErrorSeverity_enum;
/// No error.
pub const DCGM_ERROR_NONE: dcgmErrorSeverity_t = 0;
/// Keep an eye on it; no action needed yet.
pub const DCGM_ERROR_MONITOR: dcgmErrorSeverity_t = 1;
/// Take the GPU out of service.
pub const DCGM_ERROR_ISOLATE: dcgmErrorSeverity_t = 2;
/// Severity unknown.
pub const DCGM_ERROR_UNKNOWN: dcgmErrorSeverity_t = 3;
/// Needs investigation.
pub const DCGM_ERROR_TRIAGE: dcgmErrorSeverity_t = 4;
/// A configuration problem.
pub const DCGM_ERROR_CONFIG: dcgmErrorSeverity_t = 5;
/// Reset the GPU.
pub const DCGM_ERROR_RESET: dcgmErrorSeverity_t = 6;

/// The C enum behind [`dcgmErrorCategory_t`].
pub type dcgmErrorCategory_enum = u32;
/// The area a failure reason belongs to.
pub type dcgmErrorCategory_t = dcgmErrorCategory_enum;
/// No category.
pub const DCGM_FR_EC_NONE: dcgmErrorCategory_t = 0;
/// A performance threshold.
pub const DCGM_FR_EC_PERF_THRESHOLD: dcgmErrorCategory_t = 1;
/// A performance violation.
pub const DCGM_FR_EC_PERF_VIOLATION: dcgmErrorCategory_t = 2;
/// Software configuration.
pub const DCGM_FR_EC_SOFTWARE_CONFIG: dcgmErrorCategory_t = 3;
/// A software library.
pub const DCGM_FR_EC_SOFTWARE_LIBRARY: dcgmErrorCategory_t = 4;
/// An XID reported by the driver.
pub const DCGM_FR_EC_SOFTWARE_XID: dcgmErrorCategory_t = 5;
/// CUDA.
pub const DCGM_FR_EC_SOFTWARE_CUDA: dcgmErrorCategory_t = 6;
/// The EUD diagnostic.
pub const DCGM_FR_EC_SOFTWARE_EUD: dcgmErrorCategory_t = 7;
/// Other software.
pub const DCGM_FR_EC_SOFTWARE_OTHER: dcgmErrorCategory_t = 8;
/// Hardware: thermal.
pub const DCGM_FR_EC_HARDWARE_THERMAL: dcgmErrorCategory_t = 9;
/// Hardware: memory.
pub const DCGM_FR_EC_HARDWARE_MEMORY: dcgmErrorCategory_t = 10;
/// Hardware: NVLink.
pub const DCGM_FR_EC_HARDWARE_NVLINK: dcgmErrorCategory_t = 11;
/// Hardware: NvSwitch.
pub const DCGM_FR_EC_HARDWARE_NVSWITCH: dcgmErrorCategory_t = 12;
/// Hardware: PCIe.
pub const DCGM_FR_EC_HARDWARE_PCIE: dcgmErrorCategory_t = 13;
/// Hardware: power.
pub const DCGM_FR_EC_HARDWARE_POWER: dcgmErrorCategory_t = 14;
/// Other hardware.
pub const DCGM_FR_EC_HARDWARE_OTHER: dcgmErrorCategory_t = 15;
/// Internal to DCGM.
pub const DCGM_FR_EC_INTERNAL_OTHER: dcgmErrorCategory_t = 16;

/// The library's description of a failure reason (`dcgmGetErrorMeta`). The strings belong to
/// the library.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgm_error_meta_t {
    pub errorId: dcgmError_t,
    /// printf-style message template.
    pub msgFormat: *const c_char,
    /// What to do about it.
    pub suggestion: *const c_char,
    /// A `DCGM_ERROR_*` value.
    pub severity: i32,
    /// A `DCGM_FR_EC_*` value.
    pub category: i32,
}
crate::plain_struct!(dcgm_error_meta_t, size = 32, align = 8);
