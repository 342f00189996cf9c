//! Profiling: the metric groups of the simulated (Hopper) GPUs, and pausing profiling.

use dcgm_sys::*;

use super::modules::module_ok;
use super::{guard, versioned};
use crate::sim::with_engine;

/// Metric groups as (major id, minor id, fields). On Hopper every group can be watched at the
/// same time; the grouping follows the hardware units the counters come from.
const METRIC_GROUPS: [(u16, u16, &[u16]); 5] = [
    (0, 0, &[DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO]),
    (
        0,
        1,
        &[DCGM_FI_PROF_SM_UTIL_RATIO, DCGM_FI_PROF_SM_OCCUPANCY_RATIO],
    ),
    (
        0,
        2,
        &[
            DCGM_FI_PROF_TENSOR_UTIL_RATIO,
            DCGM_FI_PROF_DRAM_UTIL_RATIO,
            DCGM_FI_PROF_FP64_UTIL_RATIO,
            DCGM_FI_PROF_FP32_UTIL_RATIO,
            DCGM_FI_PROF_FP16_UTIL_RATIO,
        ],
    ),
    (
        1,
        0,
        &[DCGM_FI_PROF_PCIE_TX_BYTES, DCGM_FI_PROF_PCIE_RX_BYTES],
    ),
    (
        2,
        0,
        &[DCGM_FI_PROF_NVLINK_TX_BYTES, DCGM_FI_PROF_NVLINK_RX_BYTES],
    ),
];

/// # Safety
///
/// `metricGroups` must be NULL or a versioned `dcgmProfGetMetricGroups_v3` with `gpuId` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmProfGetSupportedMetricGroups(
    pDcgmHandle: dcgmHandle_t,
    metricGroups: *mut dcgmProfGetMetricGroups_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let mg = unsafe { versioned(metricGroups, &[dcgmProfGetMetricGroups_version3]) }?;
        let gpu = mg.gpuId;
        // On Hopper the core answers from GPM: the profiling module is not involved.
        with_engine(pDcgmHandle, |e| {
            if e.machine.cfg.faults.profiling_in_use {
                return Err(DCGM_ST_IN_USE);
            }
            if gpu >= e.machine.gpu_count() {
                return Err(DCGM_ST_BADPARAM);
            }
            // A fake GPU has no GPM: libdcgm asks the profiling module, which cannot load.
            if e.machine.fake_gpus.contains(&gpu) {
                module_ok(e, DcgmModuleIdProfiling)?;
            }
            let faults = &e.machine.cfg.faults;
            let mut n = 0;
            for (major, minor, fields) in METRIC_GROUPS {
                let ids: Vec<u16> = fields
                    .iter()
                    .copied()
                    .filter(|f| !faults.unsupported_fields.contains(f))
                    .collect();
                if ids.is_empty() || n >= mg.metricGroups.len() {
                    continue;
                }
                let g = &mut mg.metricGroups[n];
                g.majorId = major;
                g.minorId = minor;
                g.fieldIds = [0; DCGM_PROF_MAX_FIELD_IDS_PER_GROUP_V2];
                g.fieldIds[..ids.len()].copy_from_slice(&ids);
                g.numFieldIds = ids.len() as u32;
                n += 1;
            }
            mg.numMetricGroups = n as u32;
            Ok(())
        })
    })
}

/// Pausing is the profiling module's, which does not load beside GPM GPUs: as libdcgm, a
/// module that cannot serve the request makes it `DCGM_ST_NOT_SUPPORTED`.
fn set_paused(handle: dcgmHandle_t, paused: bool) -> Result<(), dcgmReturn_t> {
    with_engine(handle, |e| {
        module_ok(e, DcgmModuleIdProfiling).map_err(|rc| {
            if rc == DCGM_ST_MODULE_NOT_LOADED {
                DCGM_ST_NOT_SUPPORTED
            } else {
                rc
            }
        })?;
        e.dynamics.prof_paused = paused;
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmProfPause(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard(|| set_paused(pDcgmHandle, true))
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmProfResume(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard(|| set_paused(pDcgmHandle, false))
}
