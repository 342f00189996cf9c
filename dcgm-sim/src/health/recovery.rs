//! The driver's GPU recovery action (`DCGM_FI_DEV_GPU_RECOVERY_ACTION`, NVML's
//! `nvmlDeviceGpuRecoveryAction_t`), reported under the driver system: a reset, a reboot or a
//! drain-and-reset fails the GPU, draining peer-to-peer traffic warns, none passes.

use dcgm_sys::*;

use super::messages::full;
use super::samples::latest;
use super::{Ctx, Incident};

/// The incident of a recovery action: severity, code and message, or `None` for no action
/// or a value NVML does not define.
pub fn action(gpu: u32, action: i64) -> Option<(dcgmHealthWatchResults_t, dcgmError_t, String)> {
    let (health, code, text) = match action {
        1 => (
            DCGM_HEALTH_RESULT_FAIL,
            DCGM_FR_GPU_RECOVERY_RESET,
            format!(
                "GPU {gpu} requires a reset to recover from a fault. Recovery action: 1 (GPU_RESET)."
            ),
        ),
        2 => (
            DCGM_HEALTH_RESULT_FAIL,
            DCGM_FR_GPU_RECOVERY_REBOOT,
            format!(
                "GPU {gpu} fault may have left the OS in an inconsistent state. Recovery action: 2 (NODE_REBOOT)."
            ),
        ),
        3 => (
            DCGM_HEALTH_RESULT_WARN,
            DCGM_FR_GPU_RECOVERY_DRAIN_P2P,
            format!(
                "GPU {gpu} requires peer-to-peer traffic to be quiesced. Recovery action: 3 (DRAIN_P2P)."
            ),
        ),
        4 => (
            DCGM_HEALTH_RESULT_FAIL,
            DCGM_FR_GPU_RECOVERY_DRAIN_RESET,
            format!(
                "GPU {gpu} operating at reduced capacity due to a fault. Recovery action: 4 (DRAIN_AND_RESET)."
            ),
        ),
        _ => return None,
    };
    Some((health, code, full(code, text)))
}

/// Reports the latest recovery action the GPU asks for.
pub fn check(c: &Ctx, out: &mut Vec<Incident>) {
    let Some(a) = latest(c, DCGM_FI_DEV_GPU_RECOVERY_ACTION) else {
        return;
    };
    if let Some((health, code, message)) = action(c.entity.entityId, a) {
        c.report(out, DCGM_HEALTH_WATCH_DRIVER, health, code, message);
    }
}
