//! One query's answer as gpustat describes it: the host, the driver, the time, and each GPU with
//! its processes. `None` wherever DCGM (or `/proc`) has no reading.

use crate::local_time::LocalTime;

/// One query's answer: what gpustat's `GPUStatCollection` holds.
pub struct Snapshot {
    pub(crate) hostname: String,
    pub(crate) driver_version: Option<String>,
    pub(crate) query_time: LocalTime,
    pub(crate) gpus: Vec<Gpu>,
}

/// One GPU as gpustat describes it; `None` where DCGM has no reading.
#[derive(Debug, Clone)]
pub(crate) struct Gpu {
    pub(crate) index: u32,
    pub(crate) uuid: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) temperature: Option<i64>,
    pub(crate) fan_speed: Option<i64>,
    pub(crate) utilization: Option<i64>,
    pub(crate) utilization_enc: Option<i64>,
    pub(crate) utilization_dec: Option<i64>,
    pub(crate) power_draw: Option<i64>,
    pub(crate) power_limit: Option<i64>,
    pub(crate) memory_used: Option<i64>,
    pub(crate) memory_total: Option<i64>,
    /// `None` where the library could not list them.
    pub(crate) processes: Option<Vec<Proc>>,
}

/// A process on a GPU, with what the host knows of it; `None` where that cannot be read (the
/// simulator's processes are not processes of this host: only their user, command name and
/// GPU memory are known).
#[derive(Debug, Clone)]
pub(crate) struct Proc {
    pub(crate) username: Option<String>,
    pub(crate) command: Option<String>,
    pub(crate) full_command: Option<Vec<String>>,
    pub(crate) gpu_memory_usage: u64,
    pub(crate) cpu_percent: Option<f64>,
    pub(crate) cpu_memory_usage: Option<u64>,
    pub(crate) pid: u32,
}
