//! What each simulated field reads at a given time: a training workload that cycles through
//! phases, power and temperature that follow it, monotonic energy and error counters, and
//! counters that step when a scripted event happens.

use dcgm_sys::*;

use crate::machine::{Machine, unpack_link};
use crate::sim_value::SimValue;
use crate::values::{smooth, unit};
use crate::workload::{self, Activity};

mod gpu_fields;

use gpu_fields::GpuAt;

/// A scripted incident, resolved to an absolute time.
#[derive(Debug, Clone)]
pub struct Event {
    pub ts: i64,
    pub gpu: u32,
    pub kind: String,
    pub value: i64,
    /// When the engine learnt of it: its time for a scripted event, the time of the call for
    /// an injected one (which may carry an earlier timestamp).
    pub known_at: i64,
    /// When the condition ends (µs since the epoch; the config's `duration_ms`); `None`: it
    /// lasts.
    pub ends: Option<i64>,
}

impl Event {
    /// Whether the condition holds at `ts`: it has happened and has not ended.
    pub fn holds_at(&self, ts: i64) -> bool {
        self.ts <= ts && self.ends.is_none_or(|end| ts < end)
    }

    /// How long the condition has held by `ts`, in µs (up to its end).
    pub fn held_us(&self, ts: i64) -> i64 {
        (ts.min(self.ends.unwrap_or(ts)) - self.ts).max(0)
    }

    /// When policy and health see the event: its time, or when it became known if later.
    pub fn seen_at(&self) -> i64 {
        self.ts.max(self.known_at)
    }
}

/// Time-varying state that is not a pure function of time: config changes and events.
#[derive(Debug, Clone)]
pub struct Dynamics {
    /// When the engine started (µs since the epoch).
    pub start_us: i64,
    /// Power limit per GPU, in watts (changed by `dcgmConfigSet`).
    pub power_limit_w: Vec<f64>,
    /// Application SM clock per GPU, MHz (changed by `dcgmConfigSet`).
    pub app_sm_clock: Vec<i64>,
    /// Scripted events, in time order.
    pub events: Vec<Event>,
    /// Profiling paused (`dcgmProfPause`): profiling fields read blank.
    pub prof_paused: bool,
}

impl Dynamics {
    pub fn new(m: &Machine, start_us: i64) -> Self {
        let mut events: Vec<Event> = m
            .cfg
            .events
            .iter()
            .map(|e| {
                let ts = start_us + (e.at_ms as i64) * 1000;
                Event {
                    ts,
                    gpu: e.gpu,
                    kind: e.kind.clone(),
                    value: e.value,
                    known_at: ts,
                    ends: (e.duration_ms > 0).then(|| ts + (e.duration_ms as i64) * 1000),
                }
            })
            .collect();
        events.sort_by_key(|e| e.ts);
        Self {
            start_us,
            power_limit_w: m.cfg.gpus.iter().map(|g| g.power_limit_w).collect(),
            app_sm_clock: m.cfg.gpus.iter().map(|g| g.max_sm_clock_mhz).collect(),
            events,
            prof_paused: false,
        }
    }

    /// Sum of the values (or count, when `count` is set) of events of a kind on a GPU up to `ts`.
    pub fn event_total(&self, gpu: u32, kind: &str, ts: i64, count: bool) -> i64 {
        self.events
            .iter()
            .take_while(|e| e.ts <= ts)
            .filter(|e| e.gpu == gpu && e.kind == kind)
            .map(|e| if count { 1 } else { e.value.max(1) })
            .sum()
    }

    /// Like [`Dynamics::event_total`] (values), counting only the events whose condition still
    /// holds at `ts` (a volatile count, which a GPU reset clears).
    pub fn held_total(&self, gpu: u32, kind: &str, ts: i64) -> i64 {
        self.events
            .iter()
            .filter(|e| e.gpu == gpu && e.kind == kind && e.holds_at(ts))
            .map(|e| e.value.max(1))
            .sum()
    }

    /// The most recent event of a kind on a GPU whose condition holds at `ts`.
    pub fn held_event(&self, gpu: u32, kind: &str, ts: i64) -> Option<&Event> {
        self.events
            .iter()
            .take_while(|e| e.ts <= ts)
            .filter(|e| e.gpu == gpu && e.kind == kind && e.holds_at(ts))
            .last()
    }

    /// The most recent event of a kind on a GPU at or before `ts`.
    pub fn last_event(&self, gpu: u32, kind: &str, ts: i64) -> Option<&Event> {
        self.events
            .iter()
            .take_while(|e| e.ts <= ts)
            .filter(|e| e.gpu == gpu && e.kind == kind)
            .last()
    }
}

/// What a GPU running a workload profile does at `t_s`; `None` for the training cycle.
pub fn activity(m: &Machine, gpu: u32, t_s: f64) -> Option<Activity> {
    let g = m.cfg.gpus.get(gpu as usize)?;
    workload::activity(g.workload, m.cfg.seed, gpu, t_s)
}

/// GPU utilisation in percent at time `t_s` (seconds since the epoch): the workload
/// profile's, or a 120-second training cycle of idle (10 s), compute (90 s) and checkpoint
/// (20 s), scaled by the GPU's load.
pub fn gpu_util(m: &Machine, gpu: u32, t_s: f64) -> f64 {
    if let Some(a) = activity(m, gpu, t_s) {
        return a.util;
    }
    let load = m.cfg.gpus.get(gpu as usize).map_or(0.0, |g| g.load);
    let phase = (t_s + f64::from(gpu) * 0.25).rem_euclid(120.0);
    let base = if phase < 10.0 {
        2.0
    } else if phase < 100.0 {
        94.0
    } else {
        35.0
    };
    let n = smooth(m.cfg.seed, u64::from(gpu) * 31 + 1, t_s) * 6.0 - 3.0;
    (base * load + n).clamp(0.0, 100.0)
}

/// Board power in watts: idle draw plus a share of the limit that follows utilisation.
pub fn gpu_power(m: &Machine, d: &Dynamics, gpu: u32, t_s: f64, ts: i64) -> f64 {
    let limit = d.power_limit_w.get(gpu as usize).copied().unwrap_or(700.0);
    let mut p = match activity(m, gpu, t_s) {
        Some(a) => a.power_share * limit,
        None => {
            let u = gpu_util(m, gpu, t_s) / 100.0;
            let n = smooth(m.cfg.seed, u64::from(gpu) * 31 + 2, t_s) * 12.0;
            (68.0 + u * (limit - 130.0) + n).min(limit)
        }
    };
    if let Some(e) = d.held_event(gpu, "power", ts) {
        p = p.max(e.value as f64);
    }
    p
}

/// GPU temperature in °C: follows power (a burn profile warms towards it from idle after
/// the engine starts, [`Activity::warm_up_s`]).
pub fn gpu_temp(m: &Machine, d: &Dynamics, gpu: u32, t_s: f64, ts: i64) -> i64 {
    let base = 27.0 + f64::from(gpu % 3);
    let mut t = base + gpu_power(m, d, gpu, t_s, ts) * 0.085;
    let act = activity(m, gpu, t_s);
    if let Some(held) = act.as_ref().and_then(|a| a.temp_c) {
        t = t.max(held + smooth(m.cfg.seed, u64::from(gpu) * 31 + 3, t_s));
    }
    if let Some(tau) = act.map(|a| a.warm_up_s).filter(|tau| *tau > 0.0) {
        let limit = d.power_limit_w.get(gpu as usize).copied().unwrap_or(700.0);
        let idle = base + 0.167 * limit * 0.085;
        let since_s = ((ts - d.start_us).max(0) as f64) / 1e6;
        t = idle + (t - idle) * (1.0 - (-since_s / tau).exp());
    }
    if let Some(e) = d.held_event(gpu, "thermal", ts) {
        t = t.max(e.value as f64);
    }
    t.round() as i64
}

/// Energy in mJ since an arbitrary origin: strictly increasing in time.
pub fn gpu_energy_mj(m: &Machine, gpu: u32, t_s: f64) -> i64 {
    let load = m.cfg.gpus.get(gpu as usize).map_or(0.0, |g| g.load);
    let avg_w = 70.0 + 400.0 * load;
    // d/dt = avg_w + 50·cos(t/10) > 0 since avg_w > 50.
    let e_j = avg_w * t_s + 500.0 * (t_s / 10.0).sin();
    let origin = 1.0e9 + unit(m.cfg.seed, u64::from(gpu), 77) * 1.0e8;
    ((origin + e_j) * 1000.0) as i64
}

/// A profiling ratio of a workload profile, scaled to a MIG instance's share.
fn profile_ratio(a: &Activity, field: u16, share: f64) -> Option<f64> {
    let r = match field {
        DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO => a.gr,
        DCGM_FI_PROF_SM_UTIL_RATIO => a.sm,
        DCGM_FI_PROF_SM_OCCUPANCY_RATIO => a.occupancy,
        DCGM_FI_PROF_TENSOR_UTIL_RATIO => a.tensor,
        DCGM_FI_PROF_DRAM_UTIL_RATIO => a.dram,
        DCGM_FI_PROF_FP64_UTIL_RATIO => a.fp64,
        DCGM_FI_PROF_FP32_UTIL_RATIO => a.fp32,
        DCGM_FI_PROF_FP16_UTIL_RATIO => a.fp16,
        _ => return None,
    };
    Some(r * share.min(1.0))
}

/// Nanoseconds the clocks were held down by a reason in `mask` since the engine started, for
/// a workload profile: the share of the time the reason is set, times the time (DCGM's
/// violation counters count the wall time a reason holds, in ns).
fn profile_violation_ns(m: &Machine, d: &Dynamics, gpu: u32, ts: i64, mask: i64) -> i64 {
    let Some(g) = m.cfg.gpus.get(gpu as usize) else {
        return 0;
    };
    let share = workload::reason_share(g.workload, mask);
    ((ts - d.start_us).max(0) as f64 * 1e3 * share) as i64
}

/// Single-bit ECC errors a workload profile threw since the engine started.
fn load_sbe(d: &Dynamics, g: &crate::config::GpuConfig, ts: i64) -> i64 {
    let since_s = ((ts - d.start_us).max(0) as f64) / 1e6;
    (workload::sbe_per_s(g.workload) * since_s) as i64
}

fn ratio_fields(u: f64, field: u16, share: f64) -> Option<f64> {
    let r = (u / 100.0) * share.min(1.0);
    Some(match field {
        DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO => r,
        DCGM_FI_PROF_SM_UTIL_RATIO => r * 0.92,
        DCGM_FI_PROF_SM_OCCUPANCY_RATIO => r * 0.55,
        DCGM_FI_PROF_TENSOR_UTIL_RATIO => r * 0.61,
        DCGM_FI_PROF_DRAM_UTIL_RATIO => r * 0.48,
        DCGM_FI_PROF_FP64_UTIL_RATIO => r * 0.01,
        DCGM_FI_PROF_FP32_UTIL_RATIO => r * 0.22,
        DCGM_FI_PROF_FP16_UTIL_RATIO => r * 0.34,
        _ => return None,
    })
}

/// The value of `field` for an entity at `ts` (µs since the epoch).
pub fn sample(
    m: &Machine,
    d: &Dynamics,
    group: dcgm_field_entity_group_t,
    id: u32,
    field: u16,
    ts: i64,
) -> SimValue {
    use SimValue::*;
    let t_s = ts as f64 / 1e6;
    let cfg = &m.cfg;

    // Global fields, for any entity.
    match field {
        DCGM_FI_SYSTEM_DRIVER_VERSION => return Str(cfg.driver_version.clone()),
        DCGM_FI_SYSTEM_NVML_VERSION => return Str(format!("12.{}", cfg.driver_version)),
        DCGM_FI_SYSTEM_GPU_QUANTITY => return Int(i64::from(m.gpu_count())),
        DCGM_FI_CUDA_DRIVER_VERSION => return Int(cfg.cuda_driver_version),
        DCGM_FI_IMEX_DOMAIN_STATUS | DCGM_FI_IMEX_DAEMON_STATUS => {
            return crate::imex::sample(field).unwrap_or(NotSupported);
        }
        _ => {}
    }

    match group {
        DCGM_FE_GPU | DCGM_FE_GPU_I | DCGM_FE_GPU_CI => {}
        DCGM_FE_SWITCH => return switch_sample(m, id, field, t_s),
        DCGM_FE_CPU | DCGM_FE_CPU_CORE => return cpu_sample(m, group, id, field, t_s),
        DCGM_FE_LINK => return link_sample(m, id, field, t_s),
        _ => return NotSupported,
    }
    let Some(gpu) = m.gpu_of(group, id) else {
        return NotSupported;
    };
    // DCGM reads a GPU-level field of a MIG instance from the instance's GPU (its watch's
    // "practical entity"), through NVML; a fake GPU has no NVML device, so such a watch never
    // gets a sample (libdcgm 4.6.0: NO_DATA from the cache, a blank live read).
    if group != DCGM_FE_GPU
        && m.fake_gpus.contains(&gpu)
        && field_by_id(field).is_some_and(|f| f.entity_level == DCGM_FE_GPU)
    {
        return Multi(Vec::new());
    }
    let g = &cfg.gpus[gpu as usize];
    let share = m.mig.compute_share(group, id);
    // What a Hopper GPU does not report, as the real H200 capture answers through libdcgm
    // 4.6.0: retired pages (Hopper remaps rows instead) and the legacy PCIe throughput.
    let hopper = g.model.contains("H100") || g.model.contains("H200");
    if hopper
        && matches!(
            field,
            DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL
                | DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL
                | DCGM_FI_DEV_PAGE_RETIRED_PENDING
                | DCGM_FI_DEV_PCIE_TX_THROUGHPUT
                | DCGM_FI_DEV_PCIE_RX_THROUGHPUT
        )
    {
        return NotSupported;
    }

    // Fields readable on GPUs and MIG instances.
    let act = activity(m, gpu, t_s);
    let ratio = match &act {
        Some(a) => profile_ratio(a, field, share),
        None => ratio_fields(gpu_util(m, gpu, t_s), field, share),
    };
    if let Some(r) = ratio {
        if d.prof_paused {
            return Blank;
        }
        return Dbl(r);
    }
    let used_mib = |gpu: u32| -> i64 {
        cfg.processes
            .iter()
            .filter(|p| p.gpus.contains(&gpu))
            .map(|p| p.memory_mib)
            .sum::<i64>()
            .max(
                (cfg.gpus[gpu as usize].memory_mib as f64
                    * act.as_ref().map_or(0.0, |a| a.memory_share)) as i64,
            )
            + 610
    };
    match field {
        DCGM_FI_DEV_GPU_NAME => {
            // A MIG instance reports its profile name, as DCGM does.
            return Str(match group {
                DCGM_FE_GPU_I => m
                    .mig
                    .gpu_instance(id)
                    .map_or(String::new(), |i| i.profile.clone()),
                DCGM_FE_GPU_CI => m.mig.compute_instance(id).map_or(String::new(), |c| {
                    c.profile.clone().unwrap_or_else(|| {
                        m.mig
                            .gpu_instance(c.instance)
                            .map_or(String::new(), |i| i.profile.clone())
                    })
                }),
                _ => g.model.clone(),
            });
        }
        DCGM_FI_DEV_GPU_UUID => {
            return Str(match group {
                DCGM_FE_GPU => g.uuid.clone(),
                _ => format!("MIG-{}-{}-{}", &g.uuid[4..], group, id),
            });
        }
        // No sample at all until the first XID, as libdcgm 4.6.0 (reads say NO_DATA).
        DCGM_FI_DEV_XID_ERROR => {
            return d
                .last_event(gpu, "xid", ts)
                .map_or(Multi(Vec::new()), |e| Int(e.value));
        }
        DCGM_FI_DEV_FB_TOTAL
        | DCGM_FI_DEV_FB_USED
        | DCGM_FI_DEV_FB_FREE
        | DCGM_FI_DEV_FB_RESERVED
        | DCGM_FI_DEV_FB_USED_RATIO => {
            let total = ((g.memory_mib as f64) * share) as i64;
            let reserved = (total / 150).max(64);
            let used = if group == DCGM_FE_GPU {
                used_mib(gpu)
            } else {
                ((used_mib(gpu) as f64) * share) as i64
            }
            .min(total - reserved);
            return match field {
                DCGM_FI_DEV_FB_TOTAL => Int(total),
                DCGM_FI_DEV_FB_USED => Int(used),
                DCGM_FI_DEV_FB_RESERVED => Int(reserved),
                DCGM_FI_DEV_FB_FREE => Int(total - used - reserved),
                _ => Dbl(used as f64 / total as f64),
            };
        }
        _ => {}
    }
    // Below: GPU-level fields. A MIG instance reads its parent GPU's value, as DCGM does;
    // the fields that only make sense for the whole board are not supported on instances.
    if group != DCGM_FE_GPU
        && matches!(
            field,
            DCGM_FI_DEV_NVML_INDEX
                | DCGM_FI_DEV_GPU_MINOR_NUMBER
                | DCGM_FI_DEV_BOARD_SERIAL
                | DCGM_FI_DEV_COMPUTE_PIDS
                | DCGM_FI_DEV_GRAPHICS_PIDS
        )
    {
        return NotSupported;
    }

    GpuAt {
        m,
        d,
        g,
        gpu,
        ts,
        t_s,
        act: act.as_ref(),
        util: gpu_util(m, gpu, t_s),
    }
    .read(field)
}

/// The bytes of a `dcgmRunningProcess_v1` (the sample type of the PID-list fields).
fn running_process(pid: u32, memory_mib: i64) -> Vec<u8> {
    let mut b = Vec::with_capacity(16);
    b.extend_from_slice(&dcgmRunningProcess_version1.to_ne_bytes());
    b.extend_from_slice(&pid.to_ne_bytes());
    b.extend_from_slice(&((memory_mib.max(0) as u64) << 20).to_ne_bytes());
    b
}

fn switch_sample(m: &Machine, id: u32, field: u16, t_s: f64) -> SimValue {
    use SimValue::*;
    // A fake NvSwitch has no NSCQ device behind it: libdcgm 4.6.0 leaves its fields blank.
    if m.fake_switches.contains(&id) {
        return NotSupported;
    }
    let n = smooth(m.cfg.seed, 1000 + u64::from(id), t_s);
    match field {
        DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS => Int(44 + (n * 6.0) as i64),
        DCGM_FI_DEV_NVSWITCH_TEMP_SLOWDOWN_CELSIUS => Int(100),
        DCGM_FI_DEV_NVSWITCH_TEMP_SHUTDOWN_CELSIUS => Int(110),
        DCGM_FI_DEV_NVSWITCH_VOLTAGE_MVOLT => Int(850 + (n * 10.0) as i64),
        DCGM_FI_DEV_NVSWITCH_POWER_VDD_WATTS => Int(38 + (n * 8.0) as i64),
        DCGM_FI_DEV_NVSWITCH_POWER_DVDD_WATTS => Int(11),
        DCGM_FI_DEV_NVSWITCH_POWER_HVDD_WATTS => Int(7),
        DCGM_FI_DEV_SXID_FATAL_ERROR | DCGM_FI_DEV_SXID_NON_FATAL_ERROR => Int(0),
        _ => NotSupported,
    }
}

/// The utilisation fields, which DCGM reads for cores and CPUs alike.
const CPU_UTIL_FIELDS: [u16; 5] = [
    DCGM_FI_DEV_CPU_UTIL_TOTAL,
    DCGM_FI_DEV_CPU_UTIL_USER,
    DCGM_FI_DEV_CPU_UTIL_NICE,
    DCGM_FI_DEV_CPU_UTIL_SYS,
    DCGM_FI_DEV_CPU_UTIL_IRQ,
];

fn cpu_sample(m: &Machine, group: u32, id: u32, field: u16, t_s: f64) -> SimValue {
    use SimValue::*;
    let n = smooth(
        m.cfg.seed,
        2000 + u64::from(group) * 4096 + u64::from(id),
        t_s,
    );
    if group == DCGM_FE_CPU {
        // A CPU's utilisation is the mean of its cores' (DCGM's sysmon module averages them).
        if CPU_UTIL_FIELDS.contains(&field) {
            let cores = m.cpus.cores_of_cpu(id);
            if cores.is_empty() {
                return Blank;
            }
            let sum: f64 = cores
                .iter()
                .filter_map(|c| match cpu_sample(m, DCGM_FE_CPU_CORE, *c, field, t_s) {
                    Dbl(v) => Some(v),
                    _ => None,
                })
                .sum();
            return Dbl(sum / cores.len() as f64);
        }
        let cpu = &m.cfg.cpus[id as usize];
        return match field {
            DCGM_FI_DEV_CPU_TEMP_CELSIUS => Dbl(48.0 + n * 12.0),
            DCGM_FI_DEV_CPU_TEMP_WARNING_CELSIUS => Dbl(95.0),
            DCGM_FI_DEV_CPU_TEMP_CRITICAL_CELSIUS => Dbl(105.0),
            DCGM_FI_DEV_CPU_POWER_WATTS => Dbl(180.0 + n * 90.0),
            DCGM_FI_DEV_CPU_POWER_LIMIT_WATTS => Dbl(350.0),
            DCGM_FI_DEV_CPU_VENDOR => Str("Intel".into()),
            DCGM_FI_DEV_CPU_MODEL => Str(cpu.model.clone()),
            _ => NotSupported,
        };
    }
    match field {
        DCGM_FI_DEV_CPU_UTIL_TOTAL => Dbl(0.2 + n * 0.6),
        DCGM_FI_DEV_CPU_UTIL_USER => Dbl(0.15 + n * 0.5),
        DCGM_FI_DEV_CPU_UTIL_SYS => Dbl(0.05 + n * 0.1),
        DCGM_FI_DEV_CPU_UTIL_NICE | DCGM_FI_DEV_CPU_UTIL_IRQ => Dbl(0.0),
        DCGM_FI_DEV_CPU_CLOCK_CURRENT => Int(2_000_000 + (n * 1_800_000.0) as i64),
        _ => NotSupported,
    }
}

fn link_sample(m: &Machine, id: u32, field: u16, t_s: f64) -> SimValue {
    let (t, idx, parent) = unpack_link(id);
    let info = field_by_id(field);
    if !m.link_present(id) || info.is_none_or(|f| f.entity_level != DCGM_FE_LINK) {
        return SimValue::NotSupported;
    }
    if field == DCGM_FI_DEV_NVLINK_GET_STATE {
        // The driver's link state as an enabled flag: 1 for a link that is up, 0 otherwise.
        let up = m.link_state(t, parent, idx) == DcgmNvLinkLinkStateUp;
        return SimValue::Int(i64::from(up));
    }
    let util = if t == DCGM_FE_GPU {
        gpu_util(m, parent, t_s)
    } else {
        60.0
    };
    match info.map(|f| f.field_type) {
        Some(DCGM_FT_DOUBLE) => SimValue::Dbl(0.0),
        Some(DCGM_FT_INT64) => {
            let name = info.map_or("", |f| f.name);
            if name.contains("BYTES") || name.contains("THROUGHPUT") || name.contains("PACKETS") {
                SimValue::Int((util * 1.7e8 * t_s.fract().max(0.5)) as i64)
            } else {
                SimValue::Int(0)
            }
        }
        _ => SimValue::NotSupported,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SimConfig;

    const START_US: i64 = 1_700_000_000_000_000;

    #[test]
    fn same_seed_and_time_give_the_same_values() {
        let m = Machine::new(SimConfig::default());
        let d = Dynamics::new(&m, 0);
        let ts = 1_700_000_000_000_000;
        for f in [
            DCGM_FI_DEV_GPU_TEMP_CELSIUS,
            DCGM_FI_DEV_BOARD_POWER_WATTS,
            DCGM_FI_DEV_GPU_UTIL_RATIO,
        ] {
            assert_eq!(
                sample(&m, &d, DCGM_FE_GPU, 3, f, ts),
                sample(&m, &d, DCGM_FE_GPU, 3, f, ts)
            );
        }
        let other = SimConfig {
            seed: 43,
            ..SimConfig::default()
        };
        let m2 = Machine::new(other);
        let differs = (0..50).any(|i| {
            let t = ts + i * 1_000_000;
            sample(&m, &d, DCGM_FE_GPU, 3, DCGM_FI_DEV_BOARD_POWER_WATTS, t)
                != sample(&m2, &d, DCGM_FE_GPU, 3, DCGM_FI_DEV_BOARD_POWER_WATTS, t)
        });
        assert!(differs, "the seed changes the values");
    }

    /// Two idle GPUs (cool, far from 85 °C): GPU 0 at 91 °C from 1 s to 6 s, GPU 1 with two
    /// double-bit errors from 2 s to 5 s and 95 °C for good from 3 s.
    fn node() -> (Machine, Dynamics) {
        let cfg = SimConfig::parse(
            r#"
            [[gpus]]
            load = 0.0
            [[gpus]]
            load = 0.0
            [[events]]
            at_ms = 1000
            gpu = 0
            kind = "thermal"
            value = 91
            duration_ms = 5000
            [[events]]
            at_ms = 2000
            gpu = 1
            kind = "dbe"
            value = 2
            duration_ms = 3000
            [[events]]
            at_ms = 3000
            gpu = 1
            kind = "thermal"
            value = 95
            "#,
        )
        .unwrap();
        let m = Machine::new(cfg);
        let d = Dynamics::new(&m, START_US);
        (m, d)
    }

    fn int(m: &Machine, d: &Dynamics, gpu: u32, field: u16, at_ms: i64) -> i64 {
        match sample(m, d, DCGM_FE_GPU, gpu, field, START_US + at_ms * 1000) {
            SimValue::Int(v) => v,
            other => panic!("field {field} of GPU {gpu} at {at_ms} ms: {other:?}"),
        }
    }

    #[test]
    fn a_thermal_event_with_a_duration_holds_its_temperature_then_clears() {
        let (m, d) = node();
        let temp = |at_ms| int(&m, &d, 0, DCGM_FI_DEV_GPU_TEMP_CELSIUS, at_ms);
        let reasons = |at_ms| int(&m, &d, 0, DCGM_FI_DEV_CLOCKS_EVENT_REASONS, at_ms) & 0x60;
        assert!(temp(500) < 85, "{}", temp(500));
        assert_eq!((temp(1000), temp(3500), temp(5999)), (91, 91, 91));
        assert!(temp(6000) < 85, "{}", temp(6000));
        assert!(temp(60_000) < 85, "{}", temp(60_000));
        assert_eq!((reasons(500), reasons(3500), reasons(6000)), (0, 0x60, 0));
        // The violation counter grows while the condition holds and keeps its total after.
        let violation = |at_ms| int(&m, &d, 0, DCGM_FI_DEV_THERMAL_VIOLATION, at_ms);
        assert!(violation(2000) < violation(5000));
        assert_eq!(violation(6000), 2_500_000);
        assert_eq!(violation(60_000), 2_500_000);
    }

    #[test]
    fn an_ecc_event_with_a_duration_leaves_the_volatile_count_and_stays_in_the_aggregate() {
        let (m, d) = node();
        let vol = |at_ms| int(&m, &d, 1, DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, at_ms);
        let agg = |at_ms| int(&m, &d, 1, DCGM_FI_DEV_ECC_DBE_AGG_TOTAL, at_ms);
        assert_eq!((vol(1999), vol(2000), vol(4999), vol(5000)), (0, 2, 2, 0));
        assert_eq!((agg(1999), agg(2000), agg(5000), agg(60_000)), (0, 2, 2, 2));
    }

    #[test]
    fn an_event_without_a_duration_lasts() {
        let (m, d) = node();
        assert_eq!(int(&m, &d, 1, DCGM_FI_DEV_GPU_TEMP_CELSIUS, 3000), 95);
        assert_eq!(int(&m, &d, 1, DCGM_FI_DEV_GPU_TEMP_CELSIUS, 3_600_000), 95);
        assert!(int(&m, &d, 1, DCGM_FI_DEV_GPU_TEMP_CELSIUS, 2999) < 85);
    }
}
