//! NVML captures with running processes, for DCGM's injection NVML.
//!
//! The H200 captures beside a checkout (`../shared/fixtures/nvml-capture-*.yaml`) were taken on
//! an idle GPU: `ComputeRunningProcesses` is an empty list. DCGM's injection NVML reads that key
//! for `nvmlDeviceGetComputeRunningProcesses` (all of `_v1`, `_v2` and `_v3`) as a list of
//! `nvmlProcessInfo_t` (`pid`, `usedGpuMemory`, `gpuInstanceId`, `computeInstanceId`; DCGM
//! 4.6.0's `NvmlReturnDeserializer.cpp`), so a copy of a capture with that list filled makes
//! the real libdcgm see processes on a GPU, as on a shared node.
//!
//! The capture is YAML as NVIDIA's recorder writes it; the edit is textual (the key's two lines
//! under each `Device` entry), which keeps every other byte of the capture as recorded.

use std::path::{Path, PathBuf};

/// A process on a GPU of a capture, as `nvmlDeviceGetComputeRunningProcesses` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InjectedProcess {
    /// The GPU's index in the capture's `DeviceOrder` (its NVML index).
    pub gpu: usize,
    /// The process id.
    pub pid: u32,
    /// GPU memory the process holds, in bytes.
    pub used_bytes: u64,
}

/// NVML's "not in a MIG instance" for a process's GPU and compute instance ids.
const NO_INSTANCE: u32 = u32::MAX;

/// Writes a copy of `capture` in which each GPU runs the `processes` given for it, into
/// `dir`, and returns the copy's path.
///
/// # Errors
///
/// The capture cannot be read or the copy written; the capture has no `DeviceOrder`, a
/// process names a GPU index it lacks, or a GPU's entry has no empty `ComputeRunningProcesses`
/// list to fill (`InvalidData`).
///
/// ```
/// use dcgm::testing::{capture_with_processes, InjectedProcess};
/// let dir = std::env::temp_dir().join(format!("capture-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let base = dir.join("base.yaml");
/// std::fs::write(&base, "Device:\n  GPU-a:\n    ComputeRunningProcesses:\n      FunctionReturn: 0\n      ReturnValue: []\nGlobal:\n  DeviceOrder:\n  - GPU-a\n").unwrap();
/// let p = InjectedProcess { gpu: 0, pid: 42, used_bytes: 1 << 30 };
/// let out = capture_with_processes(&base, &[p], &dir).unwrap();
/// let text = std::fs::read_to_string(out).unwrap();
/// assert!(text.contains("      - pid: 42\n        usedGpuMemory: 1073741824\n"));
/// ```
pub fn capture_with_processes(
    capture: &Path,
    processes: &[InjectedProcess],
    dir: &Path,
) -> std::io::Result<PathBuf> {
    let text = std::fs::read_to_string(capture)?;
    let edited = with_processes(&text, processes).map_err(|why| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: {why}", capture.display()),
        )
    })?;
    let name = capture
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".into());
    let out = dir.join(format!("{name}-with-{}-processes.yaml", processes.len()));
    std::fs::write(&out, edited)?;
    Ok(out)
}

/// The capture's text with the processes filled in.
fn with_processes(text: &str, processes: &[InjectedProcess]) -> Result<String, String> {
    let order = device_order(text)?;
    if let Some(p) = processes.iter().find(|p| p.gpu >= order.len()) {
        return Err(format!(
            "process {} names GPU {} but the capture has {}",
            p.pid,
            p.gpu,
            order.len()
        ));
    }
    let mut out = String::with_capacity(text.len() + processes.len() * 128);
    let mut current: Option<usize> = None;
    let mut filled = vec![false; order.len()];
    let mut lines = text.split_inclusive('\n').peekable();
    let mut in_device = false;
    while let Some(line) = lines.next() {
        let bare = line.trim_end_matches(['\n', '\r']);
        if !line.starts_with(' ') {
            in_device = bare == "Device:";
            current = None;
        } else if in_device && bare.starts_with("  ") && !bare.starts_with("   ") {
            let uuid = bare.trim().trim_end_matches(':');
            current = order.iter().position(|u| u == uuid);
        }
        out.push_str(line);
        let Some(gpu) = current else { continue };
        if bare != "    ComputeRunningProcesses:" {
            continue;
        }
        // The two lines that follow: `FunctionReturn: 0` and `ReturnValue: []`.
        let ret = lines.next().unwrap_or_default();
        let value = lines.next().unwrap_or_default();
        if ret.trim_end() != "      FunctionReturn: 0"
            || value.trim_end() != "      ReturnValue: []"
        {
            return Err(format!(
                "GPU {gpu}'s ComputeRunningProcesses is not an empty list that succeeds"
            ));
        }
        out.push_str(ret);
        let mine: Vec<&InjectedProcess> = processes.iter().filter(|p| p.gpu == gpu).collect();
        if mine.is_empty() {
            out.push_str(value);
        } else {
            out.push_str("      ReturnValue:\n");
            for p in mine {
                out.push_str(&format!(
                    "      - pid: {}\n        usedGpuMemory: {}\n        gpuInstanceId: {NO_INSTANCE}\n        computeInstanceId: {NO_INSTANCE}\n",
                    p.pid, p.used_bytes
                ));
            }
        }
        filled[gpu] = true;
    }
    match filled.iter().position(|f| !f) {
        Some(gpu) if processes.iter().any(|p| p.gpu == gpu) => Err(format!(
            "GPU {gpu} ({}) has no ComputeRunningProcesses entry",
            order[gpu]
        )),
        _ => Ok(out),
    }
}

/// The UUIDs of `Global: DeviceOrder:`, in NVML index order.
fn device_order(text: &str) -> Result<Vec<String>, String> {
    let mut lines = text.lines().skip_while(|l| *l != "Global:");
    if lines.next().is_none() {
        return Err("no Global section".into());
    }
    let mut order = lines.skip_while(|l| *l != "  DeviceOrder:");
    if order.next().is_none() {
        return Err("no Global DeviceOrder".into());
    }
    let uuids: Vec<String> = order
        .map_while(|l| l.strip_prefix("  - "))
        .map(|u| u.trim().to_string())
        .collect();
    if uuids.is_empty() {
        return Err("an empty DeviceOrder".into());
    }
    Ok(uuids)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "Device:\n  GPU-a:\n    ComputeRunningProcesses:\n      FunctionReturn: 0\n      ReturnValue: []\n    MPSComputeRunningProcesses:\n      FunctionReturn: 0\n      ReturnValue: []\n  GPU-b:\n    ComputeRunningProcesses:\n      FunctionReturn: 0\n      ReturnValue: []\nGlobal:\n  DeviceOrder:\n  - GPU-b\n  - GPU-a\n  DriverVersion: x\n";

    #[test]
    fn processes_land_under_the_gpu_of_their_nvml_index() {
        let p = |gpu, pid| InjectedProcess {
            gpu,
            pid,
            used_bytes: 7,
        };
        let out = with_processes(TWO, &[p(0, 10), p(0, 11), p(1, 20)]).unwrap();
        let b = out.find("  GPU-b:").unwrap();
        let (under_a, under_b) = out.split_at(b);
        assert!(under_b.contains("- pid: 10\n") && under_b.contains("- pid: 11\n"));
        assert!(under_a.contains("- pid: 20\n") && !under_a.contains("pid: 10"));
        // MPS stays empty; the rest is byte for byte the same.
        assert!(under_a.contains(
            "    MPSComputeRunningProcesses:\n      FunctionReturn: 0\n      ReturnValue: []\n"
        ));
        assert!(out.ends_with("  DriverVersion: x\n"));
    }

    #[test]
    fn no_processes_is_the_capture_itself_and_a_bad_index_is_refused() {
        assert_eq!(with_processes(TWO, &[]).unwrap(), TWO);
        let bad = InjectedProcess {
            gpu: 2,
            pid: 1,
            used_bytes: 0,
        };
        assert!(
            with_processes(TWO, &[bad])
                .unwrap_err()
                .contains("the capture has 2")
        );
        assert!(
            with_processes("Device: {}\n", &[])
                .unwrap_err()
                .contains("Global")
        );
    }
}
