//! Health and diagnostic failure reasons (`DCGM_FR_*`) with their severities and categories.

use std::ffi::c_char;

/// The C enum behind [`dcgmError_t`].
pub type dcgmError_enum = u32;
/// Why a health check or diagnostic failed (the `code` of an incident or diagnostic error).
pub type dcgmError_t = dcgmError_enum;

/// No error.
pub const DCGM_FR_OK: dcgmError_t = 0;
/// An unknown error.
pub const DCGM_FR_UNKNOWN: dcgmError_t = 1;
/// An error DCGM does not recognise.
pub const DCGM_FR_UNRECOGNIZED: dcgmError_t = 2;
/// PCIe replay rate above the limit.
pub const DCGM_FR_PCI_REPLAY_RATE: dcgmError_t = 3;
/// Uncorrectable (double-bit) ECC error since the last reset.
pub const DCGM_FR_VOLATILE_DBE_DETECTED: dcgmError_t = 4;
/// Correctable (single-bit) ECC error since the last reset.
pub const DCGM_FR_VOLATILE_SBE_DETECTED: dcgmError_t = 5;
/// Memory pages waiting to be retired.
pub const DCGM_FR_PENDING_PAGE_RETIREMENTS: dcgmError_t = 6;
/// Too many retired pages.
pub const DCGM_FR_RETIRED_PAGES_LIMIT: dcgmError_t = 7;
/// Too many pages retired for uncorrectable errors.
pub const DCGM_FR_RETIRED_PAGES_DBE_LIMIT: dcgmError_t = 8;
/// The inforom is corrupt.
pub const DCGM_FR_CORRUPT_INFOROM: dcgmError_t = 9;
/// Clocks lowered for thermal reasons.
pub const DCGM_FR_CLOCKS_EVENT_THERMAL: dcgmError_t = 10;
/// Power cannot be read.
pub const DCGM_FR_POWER_UNREADABLE: dcgmError_t = 11;
/// Clocks lowered for power reasons.
pub const DCGM_FR_CLOCKS_EVENT_POWER: dcgmError_t = 12;
/// NVLink error count above the threshold.
pub const DCGM_FR_NVLINK_ERROR_THRESHOLD: dcgmError_t = 13;
/// An NVLink is down.
pub const DCGM_FR_NVLINK_DOWN: dcgmError_t = 14;
/// Fatal NvSwitch error.
pub const DCGM_FR_NVSWITCH_FATAL_ERROR: dcgmError_t = 15;
/// Non-fatal NvSwitch error.
pub const DCGM_FR_NVSWITCH_NON_FATAL_ERROR: dcgmError_t = 16;
/// An NvSwitch is down.
pub const DCGM_FR_NVSWITCH_DOWN: dcgmError_t = 17;
/// A file cannot be accessed.
pub const DCGM_FR_NO_ACCESS_TO_FILE: dcgmError_t = 18;
/// An NVML call failed.
pub const DCGM_FR_NVML_API: dcgmError_t = 19;
/// NVML and /dev disagree on the number of GPUs.
pub const DCGM_FR_DEVICE_COUNT_MISMATCH: dcgmError_t = 20;
/// A bad parameter was passed.
pub const DCGM_FR_BAD_PARAMETER: dcgmError_t = 21;
/// A library cannot be opened.
pub const DCGM_FR_CANNOT_OPEN_LIB: dcgmError_t = 22;
/// The driver is on the deny list.
pub const DCGM_FR_DENYLISTED_DRIVER: dcgmError_t = 23;
/// The NVML library lacks a required function.
pub const DCGM_FR_NVML_LIB_BAD: dcgmError_t = 24;
/// Graphics processes are running.
pub const DCGM_FR_GRAPHICS_PROCESSES: dcgmError_t = 25;
/// Bad connection to the host engine.
pub const DCGM_FR_HOSTENGINE_CONN: dcgmError_t = 26;
/// A field value could not be read.
pub const DCGM_FR_FIELD_QUERY: dcgmError_t = 27;
/// The CUDA environment is bad.
pub const DCGM_FR_BAD_CUDA_ENV: dcgmError_t = 28;
/// Persistence mode is off.
pub const DCGM_FR_PERSISTENCE_MODE: dcgmError_t = 29;
/// Bandwidth below the minimum.
pub const DCGM_FR_LOW_BANDWIDTH: dcgmError_t = 30;
/// Latency above the maximum.
pub const DCGM_FR_HIGH_LATENCY: dcgmError_t = 31;
/// A field tag cannot be found.
pub const DCGM_FR_CANNOT_GET_FIELD_TAG: dcgmError_t = 32;
/// An integer field reported a violation.
pub const DCGM_FR_FIELD_VIOLATION: dcgmError_t = 33;
/// An integer field crossed its threshold.
pub const DCGM_FR_FIELD_THRESHOLD: dcgmError_t = 34;
/// A double field reported a violation.
pub const DCGM_FR_FIELD_VIOLATION_DBL: dcgmError_t = 35;
/// A double field crossed its threshold.
pub const DCGM_FR_FIELD_THRESHOLD_DBL: dcgmError_t = 36;
/// The field type is not supported here.
pub const DCGM_FR_UNSUPPORTED_FIELD_TYPE: dcgmError_t = 37;
/// An integer field crossed its threshold at a given time.
pub const DCGM_FR_FIELD_THRESHOLD_TS: dcgmError_t = 38;
/// A double field crossed its threshold at a given time.
pub const DCGM_FR_FIELD_THRESHOLD_TS_DBL: dcgmError_t = 39;
/// Thermal violations occurred.
pub const DCGM_FR_THERMAL_VIOLATIONS: dcgmError_t = 40;
/// Thermal violations occurred from a given time.
pub const DCGM_FR_THERMAL_VIOLATIONS_TS: dcgmError_t = 41;
/// Temperature above the user's maximum.
pub const DCGM_FR_TEMP_VIOLATION: dcgmError_t = 42;
/// Clock-event (throttling) violation.
pub const DCGM_FR_CLOCKS_EVENT_VIOLATION: dcgmError_t = 43;
/// Internal error.
pub const DCGM_FR_INTERNAL: dcgmError_t = 44;
/// PCIe generation below the minimum.
pub const DCGM_FR_PCIE_GENERATION: dcgmError_t = 45;
/// PCIe link width below the minimum.
pub const DCGM_FR_PCIE_WIDTH: dcgmError_t = 46;
/// The test was aborted.
pub const DCGM_FR_ABORTED: dcgmError_t = 47;
/// The test is disabled for this GPU.
pub const DCGM_FR_TEST_DISABLED: dcgmError_t = 48;
/// A statistic cannot be read.
pub const DCGM_FR_CANNOT_GET_STAT: dcgmError_t = 49;
/// The target stress level was not reached.
pub const DCGM_FR_STRESS_LEVEL: dcgmError_t = 50;
/// A CUDA call failed.
pub const DCGM_FR_CUDA_API: dcgmError_t = 51;
/// Faulty memory detected.
pub const DCGM_FR_FAULTY_MEMORY: dcgmError_t = 52;
/// Field watches cannot be set.
pub const DCGM_FR_CANNOT_SET_WATCHES: dcgmError_t = 53;
/// CUDA cannot be bound to the GPU.
pub const DCGM_FR_CUDA_UNBOUND: dcgmError_t = 54;
/// ECC is disabled.
pub const DCGM_FR_ECC_DISABLED: dcgmError_t = 55;
/// GPU memory cannot be allocated.
pub const DCGM_FR_MEMORY_ALLOC: dcgmError_t = 56;
/// CUDA reported an uncorrectable ECC error.
pub const DCGM_FR_CUDA_DBE: dcgmError_t = 57;
/// Memory contents did not match.
pub const DCGM_FR_MEMORY_MISMATCH: dcgmError_t = 58;
/// No CUDA device available.
pub const DCGM_FR_CUDA_DEVICE: dcgmError_t = 59;
/// ECC is not supported.
pub const DCGM_FR_ECC_UNSUPPORTED: dcgmError_t = 60;
/// An ECC mode change is pending.
pub const DCGM_FR_ECC_PENDING: dcgmError_t = 61;
/// Memory bandwidth below the minimum.
pub const DCGM_FR_MEMORY_BANDWIDTH: dcgmError_t = 62;
/// The target power was not reached.
pub const DCGM_FR_TARGET_POWER: dcgmError_t = 63;
/// An API call failed.
pub const DCGM_FR_API_FAIL: dcgmError_t = 64;
/// An API call failed for a GPU.
pub const DCGM_FR_API_FAIL_GPU: dcgmError_t = 65;
/// A CUDA context cannot be created.
pub const DCGM_FR_CUDA_CONTEXT: dcgmError_t = 66;
/// A DCGM call failed.
pub const DCGM_FR_DCGM_API: dcgmError_t = 67;
/// Too few GPUs for a concurrent test.
pub const DCGM_FR_CONCURRENT_GPUS: dcgmError_t = 68;
/// More errors than can be reported.
pub const DCGM_FR_TOO_MANY_ERRORS: dcgmError_t = 69;
/// NVLink CRC error rate above the threshold.
pub const DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD: dcgmError_t = 70;
/// Critical NVLink error.
pub const DCGM_FR_NVLINK_ERROR_CRITICAL: dcgmError_t = 71;
/// The enforced power limit is too low for the test.
pub const DCGM_FR_ENFORCED_POWER_LIMIT: dcgmError_t = 72;
/// Host memory cannot be allocated.
pub const DCGM_FR_MEMORY_ALLOC_HOST: dcgmError_t = 73;
/// The GPU operation mode is wrong.
pub const DCGM_FR_GPU_OP_MODE: dcgmError_t = 74;
/// No memory clocks can be set.
pub const DCGM_FR_NO_MEMORY_CLOCKS: dcgmError_t = 75;
/// No graphics clocks can be set.
pub const DCGM_FR_NO_GRAPHICS_CLOCKS: dcgmError_t = 76;
/// GPU state had to be restored.
pub const DCGM_FR_HAD_TO_RESTORE_STATE: dcgmError_t = 77;
/// The L1 tag test is not supported.
pub const DCGM_FR_L1TAG_UNSUPPORTED: dcgmError_t = 78;
/// The L1 tag test found a mismatch.
pub const DCGM_FR_L1TAG_MISCOMPARE: dcgmError_t = 79;
/// Memory row remapping failed.
pub const DCGM_FR_ROW_REMAP_FAILURE: dcgmError_t = 80;
/// An uncontained error (XID 95).
pub const DCGM_FR_UNCONTAINED_ERROR: dcgmError_t = 81;
/// No GPUs to test.
pub const DCGM_FR_EMPTY_GPU_LIST: dcgmError_t = 82;
/// Pages pending retirement after an uncorrectable error.
pub const DCGM_FR_DBE_PENDING_PAGE_RETIREMENTS: dcgmError_t = 83;
/// Uncorrectable row remapping.
pub const DCGM_FR_UNCORRECTABLE_ROW_REMAP: dcgmError_t = 84;
/// A row remapping is pending.
pub const DCGM_FR_PENDING_ROW_REMAP: dcgmError_t = 85;
/// Peer-to-peer copy into this GPU failed.
pub const DCGM_FR_BROKEN_P2P_MEMORY_DEVICE: dcgmError_t = 86;
/// Peer-to-peer copy from this GPU failed.
pub const DCGM_FR_BROKEN_P2P_WRITER_DEVICE: dcgmError_t = 87;
/// An NvSwitch NVLink is down.
pub const DCGM_FR_NVSWITCH_NVLINK_DOWN: dcgmError_t = 88;
/// The EUD binary has wrong permissions.
pub const DCGM_FR_EUD_BINARY_PERMISSIONS: dcgmError_t = 89;
/// EUD needs root.
pub const DCGM_FR_EUD_NON_ROOT_USER: dcgmError_t = 90;
/// EUD could not be started.
pub const DCGM_FR_EUD_SPAWN_FAILURE: dcgmError_t = 91;
/// EUD timed out.
pub const DCGM_FR_EUD_TIMEOUT: dcgmError_t = 92;
/// EUD became a zombie process.
pub const DCGM_FR_EUD_ZOMBIE: dcgmError_t = 93;
/// EUD exited with a non-zero code.
pub const DCGM_FR_EUD_NON_ZERO_EXIT_CODE: dcgmError_t = 94;
/// The EUD test failed.
pub const DCGM_FR_EUD_TEST_FAILED: dcgmError_t = 95;
/// A file cannot be created.
pub const DCGM_FR_FILE_CREATE_PERMISSIONS: dcgmError_t = 96;
/// Pausing or resuming DCGM failed.
pub const DCGM_FR_PAUSE_RESUME_FAILED: dcgmError_t = 97;
/// PCIe replay counter violation (host side).
pub const DCGM_FR_PCIE_H_REPLAY_VIOLATION: dcgmError_t = 98;
/// Fewer GPU NVLinks up than expected.
pub const DCGM_FR_GPU_EXPECTED_NVLINKS_UP: dcgmError_t = 99;
/// Fewer NvSwitch NVLinks up than expected.
pub const DCGM_FR_NVSWITCH_EXPECTED_NVLINKS_UP: dcgmError_t = 100;
/// An XID error occurred.
pub const DCGM_FR_XID_ERROR: dcgmError_t = 101;
/// Correctable ECC error violation.
pub const DCGM_FR_SBE_VIOLATION: dcgmError_t = 102;
/// Uncorrectable ECC error violation.
pub const DCGM_FR_DBE_VIOLATION: dcgmError_t = 103;
/// PCIe replay violation.
pub const DCGM_FR_PCIE_REPLAY_VIOLATION: dcgmError_t = 104;
/// Correctable ECC errors above the threshold.
pub const DCGM_FR_SBE_THRESHOLD_VIOLATION: dcgmError_t = 105;
/// Uncorrectable ECC errors above the threshold.
pub const DCGM_FR_DBE_THRESHOLD_VIOLATION: dcgmError_t = 106;
/// PCIe replays above the threshold.
pub const DCGM_FR_PCIE_REPLAY_THRESHOLD_VIOLATION: dcgmError_t = 107;
/// CUDA found the fabric manager not initialised.
pub const DCGM_FR_CUDA_FM_NOT_INITIALIZED: dcgmError_t = 108;
/// An NvSwitch SXID error occurred.
pub const DCGM_FR_SXID_ERROR: dcgmError_t = 109;
/// GFLOPS below the threshold.
pub const DCGM_FR_GFLOPS_THRESHOLD_VIOLATION: dcgmError_t = 110;
/// A NaN value was found.
pub const DCGM_FR_NAN_VALUE: dcgmError_t = 111;
/// Fabric manager training failed.
pub const DCGM_FR_FABRIC_MANAGER_TRAINING_ERROR: dcgmError_t = 112;
/// Peer-to-peer PCIe write into this GPU failed.
pub const DCGM_FR_BROKEN_P2P_PCIE_MEMORY_DEVICE: dcgmError_t = 113;
/// Peer-to-peer PCIe write from this GPU failed.
pub const DCGM_FR_BROKEN_P2P_PCIE_WRITER_DEVICE: dcgmError_t = 114;
/// Peer-to-peer NVLink write into this GPU failed.
pub const DCGM_FR_BROKEN_P2P_NVLINK_MEMORY_DEVICE: dcgmError_t = 115;
/// Peer-to-peer NVLink write from this GPU failed.
pub const DCGM_FR_BROKEN_P2P_NVLINK_WRITER_DEVICE: dcgmError_t = 116;
/// The test was skipped.
pub const DCGM_FR_TEST_SKIPPED: dcgmError_t = 117;
/// SRAM errors above the threshold.
pub const DCGM_FR_SRAM_THRESHOLD: dcgmError_t = 118;
/// NVLink effective bit-error rate above the threshold.
pub const DCGM_FR_NVLINK_EFFECTIVE_BER_THRESHOLD: dcgmError_t = 119;
/// The GPU fell off the bus.
pub const DCGM_FR_FALLEN_OFF_BUS: dcgmError_t = 120;
/// NVLink symbol bit-error rate above the threshold.
pub const DCGM_FR_NVLINK_SYMBOL_BER_THRESHOLD: dcgmError_t = 121;
/// IMEX is unhealthy.
pub const DCGM_FR_IMEX_UNHEALTHY: dcgmError_t = 122;
/// Fabric probe reported a bad state.
pub const DCGM_FR_FABRIC_PROBE_STATE: dcgmError_t = 123;
/// A binary has wrong permissions.
pub const DCGM_FR_BINARY_PERMISSIONS: dcgmError_t = 124;
/// The GPU needs a reset to recover.
pub const DCGM_FR_GPU_RECOVERY_RESET: dcgmError_t = 125;
/// The node needs a reboot to recover.
pub const DCGM_FR_GPU_RECOVERY_REBOOT: dcgmError_t = 126;
/// Peer-to-peer traffic must be drained.
pub const DCGM_FR_GPU_RECOVERY_DRAIN_P2P: dcgmError_t = 127;
/// Drain the GPU, then reset it.
pub const DCGM_FR_GPU_RECOVERY_DRAIN_RESET: dcgmError_t = 128;
/// An NCCL error.
pub const DCGM_FR_NCCL_ERROR: dcgmError_t = 129;
/// A rerun of the test was requested.
pub const DCGM_FR_RETEST_REQUESTED: dcgmError_t = 130;
/// A contained error (XID 94).
pub const DCGM_FR_CONTAINED_ERROR: dcgmError_t = 131;
/// Uncorrectable row remaps above the limit.
pub const DCGM_FR_UNCORRECTABLE_ROW_REMAP_LIMIT: dcgmError_t = 132;
/// One past the last code.
pub const DCGM_FR_ERROR_SENTINEL: dcgmError_t = 133;

macro_rules! failure_reason_table {
    ($($name:ident),* $(,)?) => {
        /// Every `dcgmError_t` value of DCGM 4.6 (aliases excluded): `(code, C name)`.
        pub static FAILURE_REASONS: &[(dcgmError_t, &str)] = &[$(($name, stringify!($name))),*];
    };
}

failure_reason_table![
    DCGM_FR_OK,
    DCGM_FR_UNKNOWN,
    DCGM_FR_UNRECOGNIZED,
    DCGM_FR_PCI_REPLAY_RATE,
    DCGM_FR_VOLATILE_DBE_DETECTED,
    DCGM_FR_VOLATILE_SBE_DETECTED,
    DCGM_FR_PENDING_PAGE_RETIREMENTS,
    DCGM_FR_RETIRED_PAGES_LIMIT,
    DCGM_FR_RETIRED_PAGES_DBE_LIMIT,
    DCGM_FR_CORRUPT_INFOROM,
    DCGM_FR_CLOCKS_EVENT_THERMAL,
    DCGM_FR_POWER_UNREADABLE,
    DCGM_FR_CLOCKS_EVENT_POWER,
    DCGM_FR_NVLINK_ERROR_THRESHOLD,
    DCGM_FR_NVLINK_DOWN,
    DCGM_FR_NVSWITCH_FATAL_ERROR,
    DCGM_FR_NVSWITCH_NON_FATAL_ERROR,
    DCGM_FR_NVSWITCH_DOWN,
    DCGM_FR_NO_ACCESS_TO_FILE,
    DCGM_FR_NVML_API,
    DCGM_FR_DEVICE_COUNT_MISMATCH,
    DCGM_FR_BAD_PARAMETER,
    DCGM_FR_CANNOT_OPEN_LIB,
    DCGM_FR_DENYLISTED_DRIVER,
    DCGM_FR_NVML_LIB_BAD,
    DCGM_FR_GRAPHICS_PROCESSES,
    DCGM_FR_HOSTENGINE_CONN,
    DCGM_FR_FIELD_QUERY,
    DCGM_FR_BAD_CUDA_ENV,
    DCGM_FR_PERSISTENCE_MODE,
    DCGM_FR_LOW_BANDWIDTH,
    DCGM_FR_HIGH_LATENCY,
    DCGM_FR_CANNOT_GET_FIELD_TAG,
    DCGM_FR_FIELD_VIOLATION,
    DCGM_FR_FIELD_THRESHOLD,
    DCGM_FR_FIELD_VIOLATION_DBL,
    DCGM_FR_FIELD_THRESHOLD_DBL,
    DCGM_FR_UNSUPPORTED_FIELD_TYPE,
    DCGM_FR_FIELD_THRESHOLD_TS,
    DCGM_FR_FIELD_THRESHOLD_TS_DBL,
    DCGM_FR_THERMAL_VIOLATIONS,
    DCGM_FR_THERMAL_VIOLATIONS_TS,
    DCGM_FR_TEMP_VIOLATION,
    DCGM_FR_CLOCKS_EVENT_VIOLATION,
    DCGM_FR_INTERNAL,
    DCGM_FR_PCIE_GENERATION,
    DCGM_FR_PCIE_WIDTH,
    DCGM_FR_ABORTED,
    DCGM_FR_TEST_DISABLED,
    DCGM_FR_CANNOT_GET_STAT,
    DCGM_FR_STRESS_LEVEL,
    DCGM_FR_CUDA_API,
    DCGM_FR_FAULTY_MEMORY,
    DCGM_FR_CANNOT_SET_WATCHES,
    DCGM_FR_CUDA_UNBOUND,
    DCGM_FR_ECC_DISABLED,
    DCGM_FR_MEMORY_ALLOC,
    DCGM_FR_CUDA_DBE,
    DCGM_FR_MEMORY_MISMATCH,
    DCGM_FR_CUDA_DEVICE,
    DCGM_FR_ECC_UNSUPPORTED,
    DCGM_FR_ECC_PENDING,
    DCGM_FR_MEMORY_BANDWIDTH,
    DCGM_FR_TARGET_POWER,
    DCGM_FR_API_FAIL,
    DCGM_FR_API_FAIL_GPU,
    DCGM_FR_CUDA_CONTEXT,
    DCGM_FR_DCGM_API,
    DCGM_FR_CONCURRENT_GPUS,
    DCGM_FR_TOO_MANY_ERRORS,
    DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD,
    DCGM_FR_NVLINK_ERROR_CRITICAL,
    DCGM_FR_ENFORCED_POWER_LIMIT,
    DCGM_FR_MEMORY_ALLOC_HOST,
    DCGM_FR_GPU_OP_MODE,
    DCGM_FR_NO_MEMORY_CLOCKS,
    DCGM_FR_NO_GRAPHICS_CLOCKS,
    DCGM_FR_HAD_TO_RESTORE_STATE,
    DCGM_FR_L1TAG_UNSUPPORTED,
    DCGM_FR_L1TAG_MISCOMPARE,
    DCGM_FR_ROW_REMAP_FAILURE,
    DCGM_FR_UNCONTAINED_ERROR,
    DCGM_FR_EMPTY_GPU_LIST,
    DCGM_FR_DBE_PENDING_PAGE_RETIREMENTS,
    DCGM_FR_UNCORRECTABLE_ROW_REMAP,
    DCGM_FR_PENDING_ROW_REMAP,
    DCGM_FR_BROKEN_P2P_MEMORY_DEVICE,
    DCGM_FR_BROKEN_P2P_WRITER_DEVICE,
    DCGM_FR_NVSWITCH_NVLINK_DOWN,
    DCGM_FR_EUD_BINARY_PERMISSIONS,
    DCGM_FR_EUD_NON_ROOT_USER,
    DCGM_FR_EUD_SPAWN_FAILURE,
    DCGM_FR_EUD_TIMEOUT,
    DCGM_FR_EUD_ZOMBIE,
    DCGM_FR_EUD_NON_ZERO_EXIT_CODE,
    DCGM_FR_EUD_TEST_FAILED,
    DCGM_FR_FILE_CREATE_PERMISSIONS,
    DCGM_FR_PAUSE_RESUME_FAILED,
    DCGM_FR_PCIE_H_REPLAY_VIOLATION,
    DCGM_FR_GPU_EXPECTED_NVLINKS_UP,
    DCGM_FR_NVSWITCH_EXPECTED_NVLINKS_UP,
    DCGM_FR_XID_ERROR,
    DCGM_FR_SBE_VIOLATION,
    DCGM_FR_DBE_VIOLATION,
    DCGM_FR_PCIE_REPLAY_VIOLATION,
    DCGM_FR_SBE_THRESHOLD_VIOLATION,
    DCGM_FR_DBE_THRESHOLD_VIOLATION,
    DCGM_FR_PCIE_REPLAY_THRESHOLD_VIOLATION,
    DCGM_FR_CUDA_FM_NOT_INITIALIZED,
    DCGM_FR_SXID_ERROR,
    DCGM_FR_GFLOPS_THRESHOLD_VIOLATION,
    DCGM_FR_NAN_VALUE,
    DCGM_FR_FABRIC_MANAGER_TRAINING_ERROR,
    DCGM_FR_BROKEN_P2P_PCIE_MEMORY_DEVICE,
    DCGM_FR_BROKEN_P2P_PCIE_WRITER_DEVICE,
    DCGM_FR_BROKEN_P2P_NVLINK_MEMORY_DEVICE,
    DCGM_FR_BROKEN_P2P_NVLINK_WRITER_DEVICE,
    DCGM_FR_TEST_SKIPPED,
    DCGM_FR_SRAM_THRESHOLD,
    DCGM_FR_NVLINK_EFFECTIVE_BER_THRESHOLD,
    DCGM_FR_FALLEN_OFF_BUS,
    DCGM_FR_NVLINK_SYMBOL_BER_THRESHOLD,
    DCGM_FR_IMEX_UNHEALTHY,
    DCGM_FR_FABRIC_PROBE_STATE,
    DCGM_FR_BINARY_PERMISSIONS,
    DCGM_FR_GPU_RECOVERY_RESET,
    DCGM_FR_GPU_RECOVERY_REBOOT,
    DCGM_FR_GPU_RECOVERY_DRAIN_P2P,
    DCGM_FR_GPU_RECOVERY_DRAIN_RESET,
    DCGM_FR_NCCL_ERROR,
    DCGM_FR_RETEST_REQUESTED,
    DCGM_FR_CONTAINED_ERROR,
    DCGM_FR_UNCORRECTABLE_ROW_REMAP_LIMIT,
    DCGM_FR_ERROR_SENTINEL,
];
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
