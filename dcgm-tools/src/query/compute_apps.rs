//! `--query-compute-apps=...`: the running processes as CSV.

use std::time::SystemTime;

use dcgm::raw::sys::*;
use dcgm::{FieldGroup, FieldId, Group, Handle, SinceCursor, WatchOptions};

use super::format::Format;
use super::out::Out;
use crate::nvsmi_properties as nvsmi;

/// `--query-compute-apps=...`: the header (when `header`) and a line per running process.
pub(crate) fn query_apps(
    handle: &Handle,
    group: &Group,
    props: &[&nvsmi::AppProperty],
    fmt: &Format,
    header: bool,
    out: &mut Out,
) -> crate::Result<()> {
    let fg = FieldGroup::create(
        handle,
        &format!("query-apps-{}", std::process::id()),
        &[FieldId(DCGM_FI_DEV_COMPUTE_PIDS)],
    )?;
    let _w = group.watch(&fg, WatchOptions::default())?;
    handle.update_all_fields(true)?;
    let mut cursor = SinceCursor::default();
    // libdcgm answers BADPARAM for the whole read when the driver refused the process list
    // (NVML's `nvmlDeviceGetComputeRunningProcesses` failed, as DCGM's injection NVML does):
    // say what is missing rather than the bare code.
    let samples = group
        .values_since(&fg, &mut cursor)
        .map_err(|e| match e.code() {
            dcgm::ReturnCode::BadParam => format!(
                "process lists are not available: the driver did not give DCGM the running \
                 processes (DCGM_FI_DEV_COMPUTE_PIDS read as {e})"
            )
            .into(),
            _ => Box::<dyn std::error::Error>::from(e),
        })?;
    // The running processes are the samples of each GPU's latest update (libdcgm stores them
    // at consecutive microseconds: `dcgm::running_processes_of` groups them back).
    let processes = dcgm::running_processes_of(&samples);
    if header && fmt.header {
        let cols: Vec<String> = props.iter().map(|p| p.header()).collect();
        out.line(&cols.join(", "))?;
    }
    let sys = handle.system();
    for (entity, p) in processes
        .iter()
        .flat_map(|(e, list)| list.iter().map(move |p| (e, p)))
    {
        let attrs = sys.device_attributes(entity.id)?;
        let now = nvsmi::timestamp(SystemTime::now());
        let cells: Vec<String> = props
            .iter()
            .map(|prop| match prop.name {
                "timestamp" => now.clone(),
                "pid" => p.pid.to_string(),
                "process_name" => crate::process::owner(p.pid, handle.is_simulated())
                    .name
                    .unwrap_or_else(|| "[Not Found]".into()),
                "gpu_uuid" => attrs.uuid.clone(),
                "gpu_bus_id" => attrs.pci_bus_id.clone(),
                "gpu_serial" => attrs
                    .serial
                    .clone()
                    .unwrap_or_else(|| nvsmi::NA.to_string()),
                "gpu_index" => entity.id.to_string(),
                "gpu_name" => attrs.name.clone(),
                _ => {
                    let mib = p.memory_used_bytes >> 20;
                    if fmt.units {
                        format!("{mib} MiB")
                    } else {
                        mib.to_string()
                    }
                }
            })
            .collect();
        out.line(&cells.join(", "))?;
    }
    Ok(())
}
