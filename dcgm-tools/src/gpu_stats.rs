//! The everyday numbers of every GPU and the processes on it, read through one set of watches
//! (what `stat` prints and `top` draws).

use std::collections::BTreeMap;

use dcgm::raw::sys::*;
use dcgm::{FieldGroup, FieldId, Group, Handle, SinceCursor, Value, Watch, WatchOptions};

use super::process;

/// The fields of a sample, in the order they are read.
const FIELDS: [u16; 12] = [
    DCGM_FI_DEV_GPU_NAME,
    DCGM_FI_DEV_GPU_TEMP_CELSIUS,
    DCGM_FI_DEV_GPU_UTIL_RATIO,
    DCGM_FI_DEV_FB_USED,
    DCGM_FI_DEV_FB_TOTAL,
    DCGM_FI_DEV_BOARD_POWER_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS,
    DCGM_FI_DEV_SM_CLOCK,
    DCGM_FI_DEV_MEM_CLOCK,
    DCGM_FI_DEV_PCIE_TX_THROUGHPUT,
    DCGM_FI_DEV_PCIE_RX_THROUGHPUT,
    DCGM_FI_DEV_NVLINK_THROUGHPUT_TOTAL,
];

/// A process on a GPU.
#[derive(Debug, Clone)]
pub struct Process {
    /// The GPU's id.
    pub gpu: u32,
    /// The process id.
    pub pid: u32,
    /// Its user, where `/proc` tells (a simulated process: the simulator's).
    pub user: Option<String>,
    /// Its command name.
    pub name: Option<String>,
    /// GPU memory it uses, MiB.
    pub memory_mib: u64,
}

/// One GPU at one moment; `None` where DCGM has no value (shown as `N/A`).
#[derive(Debug, Clone)]
pub struct GpuSample {
    /// The GPU's id.
    pub index: u32,
    /// Its product name.
    pub name: Option<String>,
    /// Temperature, °C.
    pub temperature_c: Option<i64>,
    /// Utilisation, %.
    pub utilization_pct: Option<i64>,
    /// Framebuffer memory used, MiB.
    pub memory_used_mib: Option<i64>,
    /// Framebuffer memory in all, MiB.
    pub memory_total_mib: Option<i64>,
    /// Power draw, W.
    pub power_w: Option<f64>,
    /// The enforced power limit, W.
    pub power_limit_w: Option<f64>,
    /// SM clock, MHz.
    pub sm_clock_mhz: Option<i64>,
    /// Memory clock, MHz.
    pub mem_clock_mhz: Option<i64>,
    /// PCIe transmit throughput, KB/s.
    pub pcie_tx_kbs: Option<i64>,
    /// PCIe receive throughput, KB/s.
    pub pcie_rx_kbs: Option<i64>,
    /// NVLink throughput of all links, MB/s.
    pub nvlink_mbs: Option<i64>,
    /// `None` where the library could not list them (see [`GpuStats::process_error`]).
    pub processes: Option<Vec<Process>>,
}

/// The watches the samples are read through; kept for the whole run.
pub struct GpuStats<'h> {
    handle: &'h Handle,
    group: Group,
    gpus: Vec<u32>,
    values: FieldGroup,
    pids: FieldGroup,
    _watches: [Watch; 2],
    simulated: bool,
    process_error: std::cell::RefCell<Option<String>>,
}

impl<'h> GpuStats<'h> {
    /// Watches every GPU of the handle.
    pub fn new(handle: &'h Handle, tool: &str) -> dcgm::Result<Self> {
        let gpus = handle.system().gpu_ids()?;
        let pid = std::process::id();
        let group = Group::with_gpus(handle, &format!("{tool}-{pid}"), &gpus)?;
        let ids: Vec<FieldId> = FIELDS.iter().map(|&f| FieldId(f)).collect();
        let values = FieldGroup::create(handle, &format!("{tool}-values-{pid}"), &ids)?;
        let pids = FieldGroup::create(
            handle,
            &format!("{tool}-pids-{pid}"),
            &[FieldId(DCGM_FI_DEV_COMPUTE_PIDS)],
        )?;
        let watches = [
            group.watch(&values, WatchOptions::default())?,
            group.watch(&pids, WatchOptions::default())?,
        ];
        Ok(Self {
            handle,
            group,
            gpus,
            values,
            pids,
            _watches: watches,
            simulated: handle.is_simulated(),
            process_error: Default::default(),
        })
    }

    /// The group of the watched GPUs (for health checks).
    pub fn group(&self) -> &Group {
        &self.group
    }

    /// Why the last read has no process lists, if it has none: some libdcgm builds refuse
    /// the PID-list read; the rest of a sample is still good.
    pub fn process_error(&self) -> Option<String> {
        self.process_error.borrow().clone()
    }

    /// Whether the values come from the simulator.
    pub fn simulated(&self) -> bool {
        self.simulated
    }

    /// Samples every GPU now.
    pub fn read(&self) -> dcgm::Result<Vec<GpuSample>> {
        self.handle.update_all_fields(true)?;
        let mut values: BTreeMap<(u32, u16), Value> = BTreeMap::new();
        for v in self.group.latest_values(&self.values)? {
            if !v.value.is_blank() {
                values.insert((v.entity.id, v.field.0), v.value);
            }
        }
        let mut processes = match self.processes() {
            Ok(p) => {
                *self.process_error.borrow_mut() = None;
                Some(p)
            }
            Err(e) => {
                *self.process_error.borrow_mut() = Some(e.to_string());
                None
            }
        };
        let int = |g: u32, f: u16| values.get(&(g, f)).and_then(Value::as_i64);
        let float = |g: u32, f: u16| values.get(&(g, f)).and_then(Value::as_f64);
        Ok(self
            .gpus
            .iter()
            .map(|&g| GpuSample {
                index: g,
                name: values
                    .get(&(g, DCGM_FI_DEV_GPU_NAME))
                    .and_then(|v| v.as_str().map(str::to_owned)),
                temperature_c: int(g, DCGM_FI_DEV_GPU_TEMP_CELSIUS),
                utilization_pct: int(g, DCGM_FI_DEV_GPU_UTIL_RATIO),
                memory_used_mib: int(g, DCGM_FI_DEV_FB_USED),
                memory_total_mib: int(g, DCGM_FI_DEV_FB_TOTAL),
                power_w: float(g, DCGM_FI_DEV_BOARD_POWER_WATTS),
                power_limit_w: float(g, DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS),
                sm_clock_mhz: int(g, DCGM_FI_DEV_SM_CLOCK),
                mem_clock_mhz: int(g, DCGM_FI_DEV_MEM_CLOCK),
                pcie_tx_kbs: int(g, DCGM_FI_DEV_PCIE_TX_THROUGHPUT),
                pcie_rx_kbs: int(g, DCGM_FI_DEV_PCIE_RX_THROUGHPUT),
                nvlink_mbs: int(g, DCGM_FI_DEV_NVLINK_THROUGHPUT_TOTAL),
                processes: processes.as_mut().map(|p| p.remove(&g).unwrap_or_default()),
            })
            .collect())
    }

    /// The running processes of each GPU: every sample of its latest update of the PID list
    /// (`dcgm::running_processes_of`: libdcgm stores them at consecutive microseconds).
    fn processes(&self) -> dcgm::Result<BTreeMap<u32, Vec<Process>>> {
        let samples = self
            .group
            .values_since(&self.pids, &mut SinceCursor::default())?;
        let mut out: BTreeMap<u32, Vec<Process>> = BTreeMap::new();
        for (entity, list) in dcgm::running_processes_of(&samples) {
            for p in list {
                let owner = process::owner(p.pid, self.simulated);
                out.entry(entity.id).or_default().push(Process {
                    gpu: entity.id,
                    pid: p.pid,
                    user: owner.user,
                    name: owner.name,
                    memory_mib: p.memory_used_bytes >> 20,
                });
            }
        }
        Ok(out)
    }
}
