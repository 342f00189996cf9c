//! What the screen shows: the GPU and MIG instance rows, their latest values and history, the
//! processes, and what the keys have chosen (selection, focus, sort, interval, the kill menu).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use dcgm::{Entity, FieldId, HealthResult, Value};

/// A GPU or MIG instance shown in the view.
pub struct GpuRow {
    pub(crate) entity: Entity,
    pub(crate) label: String,
    pub(crate) name: String,
    pub(crate) power_limit_w: Option<u32>,
    /// The GPU it belongs to (itself for a GPU).
    pub(crate) gpu: u32,
    /// For a GPU instance: its GPU's UUID and NVML's id of the instance, the names a process's
    /// `CUDA_VISIBLE_DEVICES` gives it by.
    pub(crate) mig: Option<(String, u32)>,
}

/// Which of DCGM's running-process lists a process is on.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Kind {
    pub(crate) compute: bool,
    pub(crate) graphics: bool,
}

impl Kind {
    pub(crate) fn label(self) -> &'static str {
        match (self.compute, self.graphics) {
            (true, true) => "C+G",
            (false, true) => "G",
            _ => "C",
        }
    }
}

#[derive(Clone)]
pub(crate) struct Process {
    pub(crate) pid: u32,
    pub(crate) user: String,
    pub(crate) name: String,
    pub(crate) gpu: u32,
    pub(crate) mem_mib: u64,
    pub(crate) kind: Kind,
    /// The process's own SM and memory utilisation on this GPU (DCGM's process statistics).
    pub(crate) sm_util: Option<f64>,
    pub(crate) mem_util: Option<f64>,
    /// `Some` for a process on this host: its start time (`/proc/PID/stat`, in clock ticks
    /// since boot), which tells it from a later process that got the same pid.
    pub(crate) host: Option<u64>,
    pub(crate) cpu_percent: Option<f64>,
    pub(crate) host_mem_mib: Option<u64>,
    pub(crate) container: Option<String>,
    /// The GPU instance (its entity id) the process's environment gives it, where it does.
    pub(crate) instance: Option<u32>,
}

pub(crate) const SORT_COLUMNS: [&str; 11] = [
    "PID",
    "USER",
    "NAME",
    "GPU",
    "TYPE",
    "SM%",
    "MEM%",
    "CPU%",
    "HOST MEM",
    "CONTAINER",
    "GPU MEM",
];

/// The samples the history chart and the sparklines keep.
pub(crate) const HISTORY: usize = 240;

/// What ↑/↓ move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Focus {
    Gpus,
    Processes,
}

/// The open signal menu: the process it is for and the signal chosen.
pub(crate) struct KillMenu {
    pub(crate) target: Process,
    pub(crate) choice: usize,
}

/// Everything the screen shows, refreshed every interval.
pub struct State {
    pub(crate) rows: Vec<GpuRow>,
    pub(crate) values: HashMap<(Entity, FieldId), Value>,
    pub(crate) util_history: HashMap<Entity, VecDeque<u64>>,
    /// Framebuffer use in percent of the total, per sample.
    pub(crate) mem_history: HashMap<Entity, VecDeque<u64>>,
    pub(crate) health: BTreeMap<u32, HealthResult>,
    pub(crate) processes: Vec<Process>,
    pub(crate) selected: usize,
    pub(crate) focus: Focus,
    /// The selected row of the sorted process table.
    pub(crate) proc_selected: usize,
    pub(crate) menu: Option<KillMenu>,
    /// What the last kill did, or why it did nothing.
    pub(crate) message: Option<String>,
    pub(crate) interval: Duration,
    pub(crate) paused: bool,
    pub(crate) sort: usize,
    pub(crate) reverse: bool,
    pub(crate) source: String,
    pub(crate) error: Option<String>,
    /// Why the process list could not be read, if it could not.
    pub(crate) proc_error: Option<String>,
}

impl State {
    /// The view of `rows` before the first refresh, read every `interval` from `source` (the
    /// engine's name in the header: `dcgm-sim`, `host ADDRESS` or `embedded`).
    pub fn new(rows: Vec<GpuRow>, interval: Duration, source: String) -> Self {
        Self {
            rows,
            values: HashMap::new(),
            util_history: HashMap::new(),
            mem_history: HashMap::new(),
            health: BTreeMap::new(),
            processes: Vec::new(),
            selected: 0,
            focus: Focus::Gpus,
            proc_selected: 0,
            menu: None,
            message: None,
            interval,
            paused: false,
            sort: SORT_COLUMNS.len() - 1,
            reverse: false,
            source,
            error: None,
            proc_error: None,
        }
    }

    /// The refresh interval (the keys + and - change it).
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Whether the refreshes are paused (the key p).
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The process table's rows in the order shown.
    pub(crate) fn sorted_processes(&self) -> Vec<Process> {
        let mut v = self.processes.clone();
        let f = |x: Option<f64>| x.unwrap_or(-1.0);
        v.sort_by(|a, b| {
            let o = match self.sort {
                0 => a.pid.cmp(&b.pid),
                1 => a.user.cmp(&b.user),
                2 => a.name.cmp(&b.name),
                3 => a.gpu.cmp(&b.gpu),
                4 => a.kind.label().cmp(b.kind.label()),
                5 => f(b.sm_util).total_cmp(&f(a.sm_util)),
                6 => f(b.mem_util).total_cmp(&f(a.mem_util)),
                7 => f(b.cpu_percent).total_cmp(&f(a.cpu_percent)),
                8 => b.host_mem_mib.cmp(&a.host_mem_mib),
                9 => a.container.cmp(&b.container),
                _ => b.mem_mib.cmp(&a.mem_mib),
            };
            let o = o.then(a.pid.cmp(&b.pid)).then(a.gpu.cmp(&b.gpu));
            if self.reverse { o.reverse() } else { o }
        });
        v
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A simulated process (not of this host) with nothing but its pid, name, GPU and memory.
    pub(crate) fn process(pid: u32, name: &str, gpu: u32, mem_mib: u64) -> Process {
        Process {
            pid,
            user: "root".into(),
            name: name.into(),
            gpu,
            mem_mib,
            kind: Kind {
                compute: true,
                graphics: false,
            },
            sm_util: None,
            mem_util: None,
            host: None,
            cpu_percent: None,
            host_mem_mib: None,
            container: None,
            instance: None,
        }
    }

    /// GPU `gpu`, an H200 with a 700 W limit.
    pub(crate) fn gpu_row(gpu: u32) -> GpuRow {
        GpuRow {
            entity: Entity::gpu(gpu),
            label: format!("GPU {gpu}"),
            name: "NVIDIA H200".into(),
            power_limit_w: Some(700),
            gpu,
            mig: None,
        }
    }

    #[test]
    fn kind_labels_are_nvtops() {
        let k = |compute, graphics| Kind { compute, graphics }.label();
        assert_eq!(
            [
                k(true, false),
                k(false, true),
                k(true, true),
                k(false, false)
            ],
            ["C", "G", "C+G", "C"]
        );
    }

    #[test]
    fn processes_sort_by_gpu_memory_first_then_by_the_chosen_column() {
        let mut s = State::new(vec![gpu_row(0)], Duration::from_secs(1), "dcgm-sim".into());
        s.processes = vec![
            process(30, "b", 0, 100),
            process(10, "c", 1, 900),
            process(20, "a", 0, 500),
        ];
        let pids = |s: &State| {
            s.sorted_processes()
                .iter()
                .map(|p| p.pid)
                .collect::<Vec<_>>()
        };
        // GPU MEM, the default: the largest first.
        assert_eq!(pids(&s), [10, 20, 30]);
        s.reverse = true;
        assert_eq!(pids(&s), [30, 20, 10]);
        s.reverse = false;
        s.sort = 2; // NAME
        assert_eq!(pids(&s), [20, 30, 10]);
        s.sort = 0; // PID
        assert_eq!(pids(&s), [10, 20, 30]);
        // Equal GPUs: by pid.
        s.sort = 3;
        assert_eq!(pids(&s), [20, 30, 10]);
    }
}
