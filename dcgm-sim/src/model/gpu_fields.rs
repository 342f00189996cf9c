//! The GPU-level fields of a GPU at one time (a MIG instance reads its GPU's), by concern:
//! identity and modes, clocks, temperature and power, traffic and utilisation, violation
//! times, error counters, processes.

use dcgm_sys::*;

use super::{
    Dynamics, gpu_energy_mj, gpu_power, gpu_temp, load_sbe, profile_violation_ns, running_process,
};
use crate::config::GpuConfig;
use crate::machine::Machine;
use crate::sim_value::SimValue::{self, *};
use crate::workload::{self, Activity};

/// One GPU at one time, as its GPU-level fields read it.
pub(super) struct GpuAt<'a> {
    pub m: &'a Machine,
    pub d: &'a Dynamics,
    pub g: &'a GpuConfig,
    pub gpu: u32,
    /// The time, in µs since the epoch and in seconds.
    pub ts: i64,
    pub t_s: f64,
    /// What the GPU's workload profile does now (`None`: the plain training cycle).
    pub act: Option<&'a Activity>,
    /// The GPU's utilisation now, in %.
    pub util: f64,
}

impl GpuAt<'_> {
    /// The value of a GPU-level field; not supported for a field none of them knows.
    pub(super) fn read(&self, field: u16) -> SimValue {
        self.identity(field)
            .or_else(|| self.clocks(field))
            .or_else(|| self.thermal_power(field))
            .or_else(|| self.traffic(field))
            .or_else(|| self.violations(field))
            .or_else(|| self.error_counters(field))
            .or_else(|| self.processes(field))
            .unwrap_or(NotSupported)
    }

    /// A GPU is busy above 20 % utilisation: its clocks and P-state are raised.
    fn busy(&self) -> bool {
        self.util > 20.0
    }

    /// What the GPU is and the modes it is in.
    fn identity(&self, field: u16) -> Option<SimValue> {
        let (m, g, gpu) = (self.m, self.g, self.gpu);
        Some(match field {
            DCGM_FI_DEV_GPU_BRAND => Str("NVIDIA".into()),
            // The CPUs close to the GPU, 64 per field (NVML's nvmlDeviceGetCpuAffinity words,
            // as libdcgm 4.6.0 reads them): the cores of the GPU's socket, the mask that the
            // topology calls give. go-dcgm's deviceInfo reads these four.
            DCGM_FI_DEV_CPU_AFFINITY_0..=DCGM_FI_DEV_CPU_AFFINITY_3 => {
                let word = u32::from(field - DCGM_FI_DEV_CPU_AFFINITY_0);
                let socket = m.gpu_socket(gpu);
                Int(m
                    .cpus
                    .cores_of_cpu(socket)
                    .into_iter()
                    .filter(|c| c / 64 == word)
                    .fold(0u64, |w, c| w | 1 << (c % 64))
                    .cast_signed())
            }
            DCGM_FI_DEV_NVML_INDEX | DCGM_FI_DEV_GPU_MINOR_NUMBER => Int(i64::from(gpu)),
            DCGM_FI_DEV_BOARD_SERIAL => Str(g.serial.clone()),
            DCGM_FI_DEV_PCI_BUS_ID => Str(g.pci_bus_id.clone()),
            DCGM_FI_DEV_PCI_COMBINED_ID => Int(0x2330_10de),
            DCGM_FI_DEV_PCI_SUBSYS_ID => Int(0x16c1_10de),
            DCGM_FI_DEV_VBIOS_VERSION => Str("96.00.99.00.01".into()),
            DCGM_FI_DEV_INFOROM_IMAGE_VERSION => Str("G520.0200.00.05".into()),
            DCGM_FI_CUDA_GPU_COMPUTE_CAPABILITY => Int(0x0009_0000),
            DCGM_FI_DEV_GPU_COMPUTE_MODE => Int(0),
            DCGM_FI_DEV_GPU_PERSISTENCE_MODE => Int(1),
            DCGM_FI_DEV_MIG_MODE => Int(i64::from(m.mig.enabled(gpu))),
            DCGM_FI_DEV_MIG_MAX_SLICES => Int(7),
            DCGM_FI_DEV_CC_MODE => Int(0),
            DCGM_FI_DEV_GPM_SUPPORT => Int(1),
            _ => return None,
        })
    }

    /// Clocks, and why they are held back.
    fn clocks(&self, field: u16) -> Option<SimValue> {
        let (d, g, gpu, ts) = (self.d, self.g, self.gpu, self.ts);
        let busy = self.busy();
        Some(Int(match field {
            DCGM_FI_DEV_SM_CLOCK => match self.act {
                Some(a) => (d.app_sm_clock[gpu as usize] as f64 * a.clock_share).round() as i64,
                None if busy => d.app_sm_clock[gpu as usize],
                None => 345,
            },
            DCGM_FI_DEV_MEM_CLOCK => g.mem_clock_mhz,
            DCGM_FI_DEV_VIDEO_CLOCK => {
                if busy {
                    1755
                } else {
                    765
                }
            }
            DCGM_FI_DEV_APP_SM_CLOCK => d.app_sm_clock[gpu as usize],
            DCGM_FI_DEV_APP_MEM_CLOCK | DCGM_FI_DEV_MAX_MEM_CLOCK => g.mem_clock_mhz,
            DCGM_FI_DEV_MAX_SM_CLOCK => g.max_sm_clock_mhz,
            DCGM_FI_DEV_MAX_VIDEO_CLOCK => 1980,
            DCGM_FI_DEV_CLOCKS_EVENT_REASONS => {
                let mut r = match self.act {
                    Some(a) => a.reasons,
                    None if busy => 0,
                    None => 0x1,
                };
                if d.held_event(gpu, "thermal", ts).is_some() {
                    r |= 0x20 | 0x40;
                }
                if d.held_event(gpu, "power", ts).is_some() {
                    r |= 0x4;
                }
                r
            }
            _ => return None,
        }))
    }

    /// Temperatures, power, energy and the performance state.
    fn thermal_power(&self, field: u16) -> Option<SimValue> {
        let (m, d, g, gpu, t_s, ts) = (self.m, self.d, self.g, self.gpu, self.t_s, self.ts);
        Some(match field {
            DCGM_FI_DEV_GPU_TEMP_CELSIUS => Int(gpu_temp(m, d, gpu, t_s, ts)),
            DCGM_FI_DEV_MEMORY_TEMP_CELSIUS => Int(gpu_temp(m, d, gpu, t_s, ts) + 6),
            DCGM_FI_DEV_GPU_TEMP_SLOWDOWN_CELSIUS => Int(90),
            DCGM_FI_DEV_GPU_TEMP_SHUTDOWN_CELSIUS => Int(92),
            DCGM_FI_DEV_GPU_MAX_OP_TEMP_CELSIUS => Int(87),
            DCGM_FI_DEV_MEMORY_MAX_OP_TEMP_CELSIUS => Int(95),
            DCGM_FI_DEV_GPU_TEMP_MARGIN_CELSIUS => Int(87 - gpu_temp(m, d, gpu, t_s, ts)),
            DCGM_FI_DEV_BOARD_POWER_WATTS | DCGM_FI_DEV_BOARD_POWER_RAW_WATTS => {
                Dbl((gpu_power(m, d, gpu, t_s, ts) * 1000.0).round() / 1000.0)
            }
            DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION => Int(gpu_energy_mj(m, gpu, t_s)),
            DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS
            | DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS => Dbl(d.power_limit_w[gpu as usize]),
            DCGM_FI_DEV_BOARD_POWER_LIMIT_MIN_WATTS => Dbl(200.0),
            DCGM_FI_DEV_BOARD_POWER_LIMIT_MAX_WATTS
            | DCGM_FI_DEV_BOARD_POWER_LIMIT_DEFAULT_WATTS => Dbl(g.power_limit_w),
            DCGM_FI_DEV_GPU_PSTATE => Int(if self.busy() { 0 } else { 8 }),
            DCGM_FI_DEV_FAN_SPEED => NotSupported,
            _ => return None,
        })
    }

    /// PCIe and NVLink traffic, link widths, and how busy the engines are.
    fn traffic(&self, field: u16) -> Option<SimValue> {
        let (d, gpu, ts, util) = (self.d, self.gpu, self.ts, self.util);
        Some(Int(match field {
            DCGM_FI_DEV_PCIE_TX_THROUGHPUT => (util * 2400.0) as i64 + 1200,
            DCGM_FI_DEV_PCIE_RX_THROUGHPUT => (util * 5200.0) as i64 + 3100,
            DCGM_FI_DEV_PCIE_REPLAY_TOTAL => d.event_total(gpu, "pcie_replay", ts, false),
            DCGM_FI_DEV_PCIE_CORRECTABLE_ERROR_TOTAL => {
                d.event_total(gpu, "pcie_replay", ts, false) * 3
            }
            DCGM_FI_DEV_GPU_UTIL_RATIO => util.round() as i64,
            DCGM_FI_DEV_MEM_COPY_UTIL => match self.act {
                Some(a) => a.mem_copy.round() as i64,
                None => (util * 0.45).round() as i64,
            },
            DCGM_FI_DEV_ENC_UTIL | DCGM_FI_DEV_DEC_UTIL => 0,
            DCGM_FI_DEV_PCIE_MAX_LINK_GEN | DCGM_FI_DEV_PCIE_LINK_GEN => 5,
            DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH | DCGM_FI_DEV_PCIE_LINK_WIDTH => 16,
            DCGM_FI_DEV_NVLINK_THROUGHPUT_TOTAL => (util * 3100.0) as i64,
            DCGM_FI_PROF_PCIE_TX_BYTES => match self.act {
                Some(a) => a.pcie_tx as i64,
                None => (util * 2.4e7) as i64 + 1_200_000,
            },
            DCGM_FI_PROF_PCIE_RX_BYTES => match self.act {
                Some(a) => a.pcie_rx as i64,
                None => (util * 5.2e7) as i64 + 3_100_000,
            },
            DCGM_FI_PROF_NVLINK_TX_BYTES | DCGM_FI_PROF_NVLINK_RX_BYTES => {
                if d.prof_paused {
                    return Some(Blank);
                }
                (util * 3.1e9) as i64
            }
            _ => return None,
        }))
    }

    /// The time spent held back, per reason, in ns.
    fn violations(&self, field: u16) -> Option<SimValue> {
        let (m, d, gpu, ts) = (self.m, self.d, self.gpu, self.ts);
        Some(Int(match field {
            DCGM_FI_DEV_POWER_VIOLATION => {
                d.last_event(gpu, "power", ts)
                    .map_or(0, |e| e.held_us(ts) / 2)
                    + profile_violation_ns(m, d, gpu, ts, workload::REASON_SW_POWER_CAP)
            }
            DCGM_FI_DEV_THERMAL_VIOLATION => {
                d.last_event(gpu, "thermal", ts)
                    .map_or(0, |e| e.held_us(ts) / 2)
                    + profile_violation_ns(m, d, gpu, ts, workload::REASON_SW_THERMAL)
            }
            DCGM_FI_DEV_SYNC_BOOST_VIOLATION
            | DCGM_FI_DEV_BOARD_LIMIT_VIOLATION
            | DCGM_FI_DEV_LOW_UTIL_VIOLATION
            | DCGM_FI_DEV_RELIABILITY_VIOLATION
            | DCGM_FI_DEV_TOTAL_APP_CLOCKS_VIOLATION
            | DCGM_FI_DEV_TOTAL_BASE_CLOCKS_VIOLATION => 0,
            _ => return None,
        }))
    }

    /// ECC, retired pages, remapped rows and NVLink errors.
    fn error_counters(&self, field: u16) -> Option<SimValue> {
        let (d, g, gpu, ts) = (self.d, self.g, self.gpu, self.ts);
        Some(Int(match field {
            DCGM_FI_DEV_ECC_MODE => 1,
            DCGM_FI_DEV_ECC_PENDING => 0,
            DCGM_FI_DEV_ECC_SBE_VOL_TOTAL => d.held_total(gpu, "sbe", ts) + load_sbe(d, g, ts),
            DCGM_FI_DEV_ECC_SBE_AGG_TOTAL => {
                d.event_total(gpu, "sbe", ts, false) + load_sbe(d, g, ts)
            }
            DCGM_FI_DEV_ECC_DBE_VOL_TOTAL => d.held_total(gpu, "dbe", ts),
            DCGM_FI_DEV_ECC_DBE_AGG_TOTAL => d.event_total(gpu, "dbe", ts, false),
            DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL => 0,
            DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL => d.event_total(gpu, "retired_pages", ts, false),
            DCGM_FI_DEV_PAGE_RETIRED_PENDING => 0,
            DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL => d.event_total(gpu, "dbe", ts, true),
            DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL
            | DCGM_FI_DEV_ROW_REMAP_FAILED
            | DCGM_FI_DEV_ROW_REMAP_PENDING => 0,
            DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL | DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL => {
                d.event_total(gpu, "nvlink", ts, false)
            }
            DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL | DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_TOTAL => {
                d.event_total(gpu, "nvlink", ts, true)
            }
            _ => return None,
        }))
    }

    /// The processes running on the GPU.
    fn processes(&self, field: u16) -> Option<SimValue> {
        match field {
            DCGM_FI_DEV_COMPUTE_PIDS => Some(Multi(
                self.m
                    .cfg
                    .processes
                    .iter()
                    .filter(|p| p.gpus.contains(&self.gpu))
                    .map(|p| Blob(running_process(p.pid, p.memory_mib)))
                    .collect(),
            )),
            DCGM_FI_DEV_GRAPHICS_PIDS => Some(Multi(Vec::new())),
            _ => None,
        }
    }
}
