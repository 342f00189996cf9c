//! The diagnostic response of DCGM 3.3.x (`dcgmDiagResponse_v10`): software sub-test results
//! for the whole system, then per GPU one slot per test at a fixed position, read into the
//! same [`DiagResponse`] as the per-test layouts of DCGM 4.
//!
//! What this layout does not carry stays absent: no test category, no per-entity result of
//! the software test (its sub-tests are system-wide), no entity of an error reported as
//! system-wide.

use dcgm_sys::*;

use crate::blank::NonBlank;
use crate::diag_response::{DiagEntity, DiagError, DiagResponse, DiagResult, DiagTest, non_empty};
use crate::entity::Entity;
use crate::failure::{ErrorCategory, ErrorSeverity, failure_reason_name};
use crate::library::c_buf;

/// The test at each position of a GPU's result slots, as DCGM 3.3.9 numbers them (its
/// diagnostic plugins' names); `None` for the positions 3.3.9 leaves unused.
const PER_GPU_TESTS: [Option<&str>; DCGM_PER_GPU_TEST_COUNT_V8] = [
    Some("memory"),
    Some("diagnostic"),
    Some("pcie"),
    Some("sm_stress"),
    Some("targeted_stress"),
    Some("targeted_power"),
    Some("memory_bandwidth"),
    Some("memtest"),
    Some("pulse_test"),
    Some("eud"),
    None,
    Some("cpu_eud"),
    None,
];

/// Decodes a version-10 response, every count checked against its array.
pub(crate) fn decode(r: &dcgmDiagResponse_v10) -> DiagResponse {
    let n_gpus = (r.gpuCount as usize).min(r.perGpuResponses.len());
    let gpus = &r.perGpuResponses[..n_gpus];
    let mut tests = Vec::new();
    let n_level_one = (r.levelOneTestCount as usize).min(r.levelOneResults.len());
    let software = &r.levelOneResults[..n_level_one];
    if let Some(t) = software_test(software) {
        tests.push(t);
    }
    for (slot, name) in PER_GPU_TESTS.iter().enumerate() {
        if let Some(t) = per_gpu_test(gpus, slot, *name) {
            tests.push(t);
        }
    }
    let entities = gpus
        .iter()
        .enumerate()
        .filter_map(|(pos, g)| {
            let id = gpu_id(g.gpuId)?;
            // The SKU ids are in run order, the serials by GPU id (3.3.9's diag module).
            Some(DiagEntity {
                entity: Entity::gpu(id),
                serial: r
                    .devSerials
                    .get(id as usize)
                    .and_then(|s| non_empty(c_buf(s))),
                sku_device_id: r.devIds.get(pos).and_then(|s| non_empty(c_buf(s))),
            })
        })
        .collect();
    let other_errors = reported(&r.systemError)
        .then(|| legacy_error(&r.systemError, None))
        .into_iter()
        .collect();
    DiagResponse {
        tests,
        entities,
        other_errors,
        dcgm_version: c_buf(&r.dcgmVersion),
        driver_version: c_buf(&r.driverVersion),
    }
}

/// A GPU id of the layout; `None` for the out-of-range id 3.3.9 writes into unused slots.
fn gpu_id(id: u32) -> Option<u32> {
    ((id as usize) < DCGM_MAX_NUM_DEVICES).then_some(id)
}

/// Whether an error slot holds an error (a code or a message).
fn reported(e: &dcgmDiagErrorDetail_v2) -> bool {
    e.code != DCGM_FR_OK || e.msg[0] != 0
}

/// An error of the layout: its own GPU id where it names one, else `gpu`.
fn legacy_error(e: &dcgmDiagErrorDetail_v2, gpu: Option<u32>) -> DiagError {
    let own = u32::try_from(e.gpuId).ok().and_then(gpu_id);
    DiagError {
        entity: own.or(gpu).map(Entity::gpu),
        code: e.code,
        code_name: failure_reason_name(e.code),
        category: ErrorCategory::from_raw(e.category),
        severity: ErrorSeverity::from_raw(e.severity),
        message: c_buf(&e.msg),
    }
}

/// The worst of `results`, ranked as [`DiagResponse::overall`] ranks tests.
fn worst(results: impl Iterator<Item = DiagResult>) -> DiagResult {
    results
        .max_by_key(|r| r.rank())
        .unwrap_or(DiagResult::NotRun)
}

/// The software sub-tests as one `software` test (as DCGM 4 reports it), if any ran.
fn software_test(results: &[dcgmDiagTestResult_v3]) -> Option<DiagTest> {
    let ran: Vec<&dcgmDiagTestResult_v3> = results
        .iter()
        .filter(|t| DiagResult::from_raw(t.status) != DiagResult::NotRun)
        .collect();
    if ran.is_empty() {
        return None;
    }
    Some(DiagTest {
        name: "software".into(),
        plugin: "software".into(),
        category: None,
        result: worst(ran.iter().map(|t| DiagResult::from_raw(t.status))),
        results: Vec::new(),
        errors: ran
            .iter()
            .flat_map(|t| t.error.iter().filter(|e| reported(e)))
            .map(|e| legacy_error(e, None))
            .collect(),
        info: ran
            .iter()
            .filter_map(|t| c_buf(&t.info).non_blank())
            .collect(),
    })
}

/// The test at `slot` of every GPU, if it ran on any.
fn per_gpu_test(
    gpus: &[dcgmDiagResponsePerGpu_v5],
    slot: usize,
    name: Option<&str>,
) -> Option<DiagTest> {
    let ran: Vec<(Option<u32>, &dcgmDiagTestResult_v3)> = gpus
        .iter()
        .filter_map(|g| Some((gpu_id(g.gpuId), g.results.get(slot)?)))
        .filter(|(_, t)| DiagResult::from_raw(t.status) != DiagResult::NotRun)
        .collect();
    if ran.is_empty() {
        return None;
    }
    let name = name.map_or_else(|| format!("test {slot}"), str::to_owned);
    Some(DiagTest {
        plugin: name.clone(),
        name,
        category: None,
        result: worst(ran.iter().map(|(_, t)| DiagResult::from_raw(t.status))),
        results: ran
            .iter()
            .filter_map(|(id, t)| Some((Entity::gpu((*id)?), DiagResult::from_raw(t.status))))
            .collect(),
        errors: ran
            .iter()
            .flat_map(|(id, t)| {
                t.error
                    .iter()
                    .filter(|e| reported(e))
                    .map(|e| legacy_error(e, *id))
            })
            .collect(),
        info: ran
            .iter()
            .filter_map(|(_, t)| c_buf(&t.info).non_blank())
            .collect(),
    })
}
