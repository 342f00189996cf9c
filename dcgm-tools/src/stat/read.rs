//! The reads of one query: [`GpuStats`]'s values and processes, the fields gpustat shows that it
//! does not read, and what `/proc` says of each process.

use std::collections::BTreeMap;
use std::time::Duration;

use dcgm::raw::sys::*;
use dcgm::{FieldGroup, FieldId, Group, Handle, Value, Watch, WatchOptions};

use super::model::{Gpu, Proc, Snapshot};
use crate::gpu_stats::{GpuSample, GpuStats};
use crate::host_process;
use crate::local_time::LocalTime;

/// The fields gpustat shows that [`GpuStats`] does not read.
const EXTRA_FIELDS: [u16; 5] = [
    DCGM_FI_DEV_GPU_UUID,
    DCGM_FI_DEV_FAN_SPEED,
    DCGM_FI_DEV_ENC_UTIL,
    DCGM_FI_DEV_DEC_UTIL,
    DCGM_FI_SYSTEM_DRIVER_VERSION,
];

/// How long CPU use is measured over, as gpustat waits between its two readings.
const CPU_INTERVAL: Duration = Duration::from_millis(100);

/// The reads of every query: [`GpuStats`], and the watch of [`EXTRA_FIELDS`] on the group it
/// reads (its read updates them).
pub struct Reader<'h> {
    stats: GpuStats<'h>,
    extra_fields: FieldGroup,
    _watch: Watch,
    /// The GPUs of the node.
    gpus: Vec<u32>,
}

/// What the extra fields read: the values of each GPU, and the driver version.
#[derive(Default)]
struct ExtraValues {
    values: BTreeMap<(u32, u16), Value>,
    driver_version: Option<String>,
}

impl<'h> Reader<'h> {
    /// Watches what gpustat shows of every GPU of the node.
    pub fn open(handle: &'h Handle) -> dcgm::Result<Self> {
        let stats = GpuStats::new(handle, "stat")?;
        let ids: Vec<FieldId> = EXTRA_FIELDS.iter().map(|&f| FieldId(f)).collect();
        let extra_fields =
            FieldGroup::create(handle, &format!("stat-extra-{}", std::process::id()), &ids)?;
        let watch = stats
            .group()
            .watch(&extra_fields, WatchOptions::default())?;
        let gpus = handle.system().gpu_ids()?;
        Ok(Self {
            stats,
            extra_fields,
            _watch: watch,
            gpus,
        })
    }

    /// The GPUs of the node.
    pub fn gpus(&self) -> &[u32] {
        &self.gpus
    }

    /// One query of the GPUs in `wanted` (every GPU when empty), the CPU use of their
    /// processes measured when `cpu` (as `--json` and `-f` show it). Says on stderr when the
    /// process lists cannot be read.
    pub fn snapshot(&self, wanted: &[u32], cpu: bool) -> dcgm::Result<Snapshot> {
        let simulated = self.stats.simulated();
        // DCGM refuses to read an empty group: a node without GPUs says so, as gpustat does.
        let (samples, extra) = if self.gpus.is_empty() {
            (Vec::new(), ExtraValues::default())
        } else {
            (
                self.stats.read()?,
                read_extras(self.stats.group(), &self.extra_fields)?,
            )
        };
        if let Some(e) = self.stats.process_error() {
            eprintln!("note: the process lists are not available: {e}");
        }
        let wanted = |g: &GpuSample| wanted.is_empty() || wanted.contains(&g.index);
        let mut list: Vec<Gpu> = samples
            .into_iter()
            .filter(wanted)
            .map(|s| gpu(s, &extra, simulated))
            .collect();
        if cpu {
            measure_cpu(&mut list, simulated);
        }
        Ok(Snapshot {
            hostname: hostname(simulated),
            driver_version: extra.driver_version.clone(),
            query_time: LocalTime::now(),
            gpus: list,
        })
    }
}

/// The latest values of the extra fields of every GPU of `group`.
fn read_extras(group: &Group, fields: &FieldGroup) -> dcgm::Result<ExtraValues> {
    let mut values = BTreeMap::new();
    for v in group.latest_values(fields)? {
        if !v.value.is_blank() {
            values.insert((v.entity.id, v.field.0), v.value);
        }
    }
    // A global field: every GPU's answer is the same.
    let driver_version = values
        .iter()
        .find(|((_, f), _)| *f == DCGM_FI_SYSTEM_DRIVER_VERSION)
        .and_then(|(_, v)| v.as_str().map(str::to_owned));
    Ok(ExtraValues {
        values,
        driver_version,
    })
}

/// A GPU sample in gpustat's terms (whole watts and MiB, as gpustat floors NVML's readings).
fn gpu(s: GpuSample, extra: &ExtraValues, simulated: bool) -> Gpu {
    let int = |f: u16| extra.values.get(&(s.index, f)).and_then(Value::as_i64);
    Gpu {
        index: s.index,
        uuid: extra
            .values
            .get(&(s.index, DCGM_FI_DEV_GPU_UUID))
            .and_then(|v| v.as_str().map(str::to_owned)),
        name: s.name,
        temperature: s.temperature_c,
        fan_speed: int(DCGM_FI_DEV_FAN_SPEED),
        utilization: s.utilization_pct,
        utilization_enc: int(DCGM_FI_DEV_ENC_UTIL),
        utilization_dec: int(DCGM_FI_DEV_DEC_UTIL),
        power_draw: s.power_w.map(|w| w.floor() as i64),
        power_limit: s.power_limit_w.map(|w| w.floor() as i64),
        memory_used: s.memory_used_mib,
        memory_total: s.memory_total_mib,
        processes: s.processes.map(|ps| {
            ps.into_iter()
                .map(|p| {
                    // The simulator names a process by its command line.
                    let words: Option<Vec<String>> = p
                        .name
                        .map(|n| n.split_whitespace().map(str::to_owned).collect());
                    let mut q = Proc {
                        username: p.user,
                        command: words.as_ref().and_then(|w| w.first()).map(|w| base_name(w)),
                        full_command: words,
                        gpu_memory_usage: p.memory_mib,
                        cpu_percent: None,
                        cpu_memory_usage: None,
                        pid: p.pid,
                    };
                    if !simulated {
                        host_details(&mut q);
                    }
                    q
                })
                .collect()
        }),
    }
}

/// The command line and host memory of a process of this host, as gpustat reads them: the
/// command is the base name of the first word of the command line, `?` when that is empty
/// (a kernel thread, a zombie); where `/proc` has no such process the name DCGM's caller
/// found (its `comm`) stays.
fn host_details(p: &mut Proc) {
    if let Some(words) = host_process::cmdline(p.pid) {
        let words = if words.is_empty() {
            vec!["?".to_string()]
        } else {
            words
        };
        p.command = Some(base_name(&words[0]));
        p.full_command = Some(words);
    }
    p.cpu_memory_usage = host_process::rss_bytes(p.pid);
}

/// The last part of a path (`python3` of `/usr/bin/python3`).
fn base_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// The CPU use of every host process on the GPUs, measured together over [`CPU_INTERVAL`].
fn measure_cpu(gpus: &mut [Gpu], simulated: bool) {
    if simulated {
        return;
    }
    let pids: Vec<u32> = gpus
        .iter()
        .flat_map(|g| g.processes.iter().flatten().map(|p| p.pid))
        .collect();
    if pids.is_empty() {
        return;
    }
    let cpu = host_process::cpu_percent(&pids, CPU_INTERVAL);
    for p in gpus
        .iter_mut()
        .flat_map(|g| g.processes.iter_mut().flatten())
    {
        p.cpu_percent = cpu.get(&p.pid).copied();
    }
}

/// The host name (`uname -n`, what Python's `platform.node()` gives); the simulated node's
/// name when simulated.
fn hostname(simulated: bool) -> String {
    if simulated && let Ok(cfg) = dcgm_sim::config::SimConfig::from_env() {
        return cfg.hostname;
    }
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}
