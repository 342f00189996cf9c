//! The text of each incident the health engine reports: DCGM's message for the failure
//! reason, then (after a space) its next steps, as libdcgm 4.6.0 writes them (recorded from
//! it by the differential battery, `health/case/*`).

use dcgm_sys::*;

/// DCGM's next steps for a failure reason (the recorded suggestion of libdcgm 4.6.0's
/// failure-reason table for the codes not listed here).
pub fn next_steps(code: dcgmError_t) -> &'static str {
    const FIELD_DIAG: &str = "Run a field diagnostic on the GPU.";
    match code {
        DCGM_FR_PCI_REPLAY_RATE => {
            "Reconnect PCIe card. Run system side PCIE diagnostic utilities to verify hops off the GPU board. If issue is on the board, run the field diagnostic."
        }
        DCGM_FR_VOLATILE_DBE_DETECTED | DCGM_FR_UNCONTAINED_ERROR => {
            "Drain the GPU and reset it or reboot the node."
        }
        DCGM_FR_PENDING_PAGE_RETIREMENTS => "Monitor - this GPU can still perform workload",
        DCGM_FR_RETIRED_PAGES_LIMIT
        | DCGM_FR_RETIRED_PAGES_DBE_LIMIT
        | DCGM_FR_FAULTY_MEMORY
        | DCGM_FR_UNCORRECTABLE_ROW_REMAP_LIMIT
        | DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD
        | DCGM_FR_NVLINK_ERROR_CRITICAL
        | DCGM_FR_NVSWITCH_FATAL_ERROR => FIELD_DIAG,
        DCGM_FR_NVSWITCH_NON_FATAL_ERROR => "Monitor the NVSwitch. It can still perform workload.",
        DCGM_FR_ROW_REMAP_FAILURE => {
            "Row remapping failure indicates unrecoverable memory hardware damage. Reset the GPU or reboot the node immediately."
        }
        DCGM_FR_CORRUPT_INFOROM => "Flash the InfoROM to clear this corruption.",
        DCGM_FR_CLOCKS_EVENT_THERMAL => {
            "Verify that the cooling on this machine is functional, including external, thermal material interface, fans, and any other components."
        }
        DCGM_FR_CLOCKS_EVENT_POWER => {
            "Monitor the power conditions. This GPU can still perform workload."
        }
        DCGM_FR_POWER_UNREADABLE | DCGM_FR_NVLINK_DOWN | DCGM_FR_FIELD_VIOLATION => {
            "Check DCGM and system logs for errors. Reset GPU. Restart DCGM. Rerun diagnostics."
        }
        DCGM_FR_NVLINK_ERROR_THRESHOLD => "Monitor the NVLink. It can still perform workload.",
        DCGM_FR_XID_ERROR => "Please consult the documentation for details of this XID.",
        DCGM_FR_FABRIC_PROBE_STATE => "Ensure that the FabricManager is running without errors.",
        DCGM_FR_FALLEN_OFF_BUS => {
            "Please re-seat the GPU, check for thermal and power issues, and verify that there is no outstanding bug against your driver or BIOS versions. If the issue persists, please run a field diagnostic on the GPU."
        }
        DCGM_FR_CONTAINED_ERROR => {
            "Restart the application that encountered the error. Other applications on the GPU can continue running. GPU reset can be deferred until a convenient time."
        }
        DCGM_FR_GPU_RECOVERY_RESET => "Terminate all GPU processes and reset the GPU.",
        DCGM_FR_GPU_RECOVERY_REBOOT => "Reboot the operating system to restore a consistent state.",
        DCGM_FR_GPU_RECOVERY_DRAIN_P2P => {
            "Terminate GPU processes conducting peer-to-peer traffic and disable UVM persistence mode. Check GPU health status again after draining."
        }
        DCGM_FR_GPU_RECOVERY_DRAIN_RESET => {
            "Do not schedule new work on this GPU. Reset the GPU after existing work has drained."
        }
        _ => crate::failure_reasons::error_info(code)
            .and_then(|e| e.suggestion.to_str().ok())
            .unwrap_or(""),
    }
}

/// A message followed by its failure reason's next steps.
pub fn full(code: dcgmError_t, message: String) -> String {
    match next_steps(code) {
        "" => message,
        next => format!("{message} {next}"),
    }
}

/// The message of a failure reason about GPU `gpu`, for the reasons that take only the GPU.
pub fn gpu_only(code: dcgmError_t, gpu: u32) -> String {
    match code {
        DCGM_FR_PENDING_PAGE_RETIREMENTS => {
            format!("A pending retired page has been detected in GPU {gpu}.")
        }
        DCGM_FR_ROW_REMAP_FAILURE => {
            format!("GPU {gpu} had uncorrectable memory errors and row remapping failed.")
        }
        DCGM_FR_CORRUPT_INFOROM => format!("A corrupt InfoROM has been detected in GPU {gpu}."),
        DCGM_FR_CLOCKS_EVENT_THERMAL => {
            format!("Detected clocks event due to thermal violation in GPU {gpu}.")
        }
        DCGM_FR_CLOCKS_EVENT_POWER => {
            format!("Detected clocks event due to power violation in GPU {gpu}.")
        }
        DCGM_FR_POWER_UNREADABLE => format!("Cannot reliably read the power usage for GPU {gpu}."),
        DCGM_FR_FALLEN_OFF_BUS => format!("GPU {gpu} has fallen off the bus"),
        DCGM_FR_CONTAINED_ERROR => "GPU had a contained error.".to_string(),
        DCGM_FR_UNCONTAINED_ERROR => "GPU had an uncontained error (XID 95)".to_string(),
        _ => format!("GPU {gpu}"),
    }
}
