//! Failure-reason metadata: the messages, suggestions, severities and categories of the
//! `DCGM_FR_*` codes the simulator reports.

use std::ffi::{CStr, c_char};
use std::sync::OnceLock;

use dcgm_sys::*;

/// What the simulator knows about a failure reason it reports.
#[derive(Debug, Clone, Copy)]
pub struct ErrorInfo {
    pub code: dcgmError_t,
    /// printf-style template.
    pub format: &'static CStr,
    pub suggestion: &'static CStr,
}

const fn info(code: dcgmError_t, format: &'static CStr, suggestion: &'static CStr) -> ErrorInfo {
    ErrorInfo {
        code,
        format,
        suggestion,
    }
}

/// The failure reasons the simulator's health checks and diagnostics emit.
pub const ERRORS: &[ErrorInfo] = &[
    info(DCGM_FR_OK, c"Everything is fine", c""),
    info(
        DCGM_FR_PCI_REPLAY_RATE,
        c"GPU %u saw %d PCIe replays, more than expected for its link",
        c"Reseat the GPU or try another slot; check the riser and cabling if it keeps happening",
    ),
    info(
        DCGM_FR_VOLATILE_DBE_DETECTED,
        c"GPU %u reported %d uncorrectable (double-bit) ECC errors",
        c"Drain the GPU and reset it; replace it if the errors come back",
    ),
    info(
        DCGM_FR_VOLATILE_SBE_DETECTED,
        c"GPU %u corrected %d single-bit ECC errors",
        c"No action needed; keep watching the rate",
    ),
    info(
        DCGM_FR_RETIRED_PAGES_LIMIT,
        c"GPU %u has retired %d memory pages",
        c"Have the GPU inspected by its vendor; it may need replacing",
    ),
    info(
        DCGM_FR_CLOCKS_EVENT_POWER,
        c"GPU %u lowered its clocks to stay under its power limit (%d W)",
        c"Check the configured power limit and the node's power delivery",
    ),
    info(
        DCGM_FR_TEMP_VIOLATION,
        c"GPU %u reached %d C",
        c"Check airflow, fans and the room temperature around the node",
    ),
    info(
        DCGM_FR_NVLINK_ERROR_CRITICAL,
        c"GPU %u reported %d NVLink errors that the link could not recover from",
        c"Reset the GPU; if the link stays unhealthy, check the baseboard and NvSwitch trays",
    ),
    info(
        DCGM_FR_FAULTY_MEMORY,
        c"The memory test found bad memory on GPU %u",
        c"Take the GPU out of service and have it replaced",
    ),
    info(
        DCGM_FR_PCIE_REPLAY_VIOLATION,
        c"GPU %u's PCIe replay counter rose to %d during the test",
        c"Reseat the GPU and check the PCIe slot",
    ),
    info(
        DCGM_FR_XID_ERROR,
        c"GPU %u reported XID %d",
        c"Look the XID up in the driver documentation and follow its recovery action",
    ),
    info(
        DCGM_FR_FALLEN_OFF_BUS,
        c"GPU %u is no longer reachable on the PCIe bus",
        c"Reboot the node; reseat or replace the GPU if it happens again",
    ),
    info(
        DCGM_FR_CONTAINED_ERROR,
        c"GPU %u had an uncorrectable memory error that the driver contained",
        c"Restart the affected applications and reset the GPU when it is idle",
    ),
    info(
        DCGM_FR_UNCONTAINED_ERROR,
        c"GPU %u had an uncorrectable memory error that could not be contained",
        c"Drain the GPU and reset it",
    ),
];

/// The simulator's metadata of a failure reason, if it emits it.
pub fn error_info(code: dcgmError_t) -> Option<&'static ErrorInfo> {
    ERRORS.iter().find(|e| e.code == code)
}

/// Severity and category of a failure reason as libdcgm 4.6.0 reports them (recorded in
/// `data/failure-reasons.tsv`); unknown codes answer (3, 3) there too.
pub fn recorded_class(code: u32) -> (dcgmErrorSeverity_t, dcgmErrorCategory_t) {
    static T: OnceLock<Vec<(u32, u32, u32)>> = OnceLock::new();
    T.get_or_init(|| {
        include_str!("../../data/failure-reasons.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut it = l.split('\t').map(|v| v.trim().parse::<u32>());
                Some((it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?))
            })
            .collect()
    })
    .iter()
    .find(|r| r.0 == code)
    .map_or((3, 3), |r| (r.1 as _, r.2 as _))
}

struct MetaTable(Vec<dcgm_error_meta_t>);
// SAFETY: the table is immutable and its pointers point at 'static C string literals.
unsafe impl Sync for MetaTable {}
// SAFETY: as above.
unsafe impl Send for MetaTable {}

fn meta_table() -> &'static [dcgm_error_meta_t] {
    static T: OnceLock<MetaTable> = OnceLock::new();
    &T.get_or_init(|| {
        MetaTable(
            ERRORS
                .iter()
                .map(|e| dcgm_error_meta_t {
                    errorId: e.code,
                    msgFormat: e.format.as_ptr(),
                    suggestion: e.suggestion.as_ptr(),
                    severity: recorded_class(e.code).0 as i32,
                    category: recorded_class(e.code).1 as i32,
                })
                .collect(),
        )
    })
    .0
}

/// The library's description of a failure reason the simulator emits, or NULL.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmGetErrorMeta(error: dcgmError_t) -> *const dcgm_error_meta_t {
    meta_table()
        .iter()
        .find(|m| m.errorId == error)
        .map_or(std::ptr::null(), |m| m as *const dcgm_error_meta_t)
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetPriorityByCode(code: u32) -> dcgmErrorSeverity_t {
    recorded_class(code).0
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetCategoryByCode(code: u32) -> dcgmErrorCategory_t {
    recorded_class(code).1
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmErrorGetFormatMsgByCode(code: u32) -> *const c_char {
    error_info(code).map_or(std::ptr::null(), |e| e.format.as_ptr())
}
