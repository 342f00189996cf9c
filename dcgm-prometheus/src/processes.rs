//! The processes on the GPUs, from DCGM's running-process lists (`DCGM_FI_DEV_COMPUTE_PIDS`,
//! `DCGM_FI_DEV_GRAPHICS_PIDS`), and their GPU memory summed per owner for
//! `DCGM_EXP_POD_FB_USED`. Who owns a process (a Kubernetes pod, found through its cgroup) is
//! not this crate's business: the caller reads the processes
//! ([`Collector::running_processes`](crate::Collector::running_processes)), says who owns
//! each ([`memory_by_owner`]) and hands the sums back
//! ([`Collector::set_owner_memory`](crate::Collector::set_owner_memory)) before collecting.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use dcgm::{FieldGroup, FieldId, Group, Handle, Result, SinceCursor, Watch, WatchOptions};

use crate::identity::LabelSet;

/// One process on one GPU, as DCGM lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuProcess {
    /// The physical GPU's id.
    pub gpu: u32,
    /// The process id, in the host engine's PID namespace (the node's, for an nv-hostengine
    /// on the node or the embedded engine of an exporter sharing the host's PID namespace).
    pub pid: u32,
    /// GPU memory the process uses on this GPU, in bytes (the larger of its compute and
    /// graphics entries when it has both).
    pub memory_used_bytes: u64,
}

/// GPU memory per GPU and owner: the bytes of every process of an owner on a GPU, summed.
/// `owner` gives the labels of a process's owner (for Kubernetes: `pod`, `namespace`,
/// `container`, `pod_uid`), or `None` for a process that belongs to none (left out). Sorted
/// by GPU, then by the owner's labels.
///
/// ```
/// use dcgm_prometheus::{GpuProcess, memory_by_owner};
/// let p = |gpu, pid, mib: u64| GpuProcess { gpu, pid, memory_used_bytes: mib << 20 };
/// let procs = [p(0, 10, 100), p(0, 12, 50), p(0, 11, 7), p(0, 1, 999)];
/// let by = memory_by_owner(&procs, |p| {
///     (p.pid != 1).then(|| vec![("pod".into(), format!("pod-{}", p.pid % 2))])
/// });
/// assert_eq!(by, [
///     (0, vec![("pod".to_string(), "pod-0".to_string())], 150 << 20),
///     (0, vec![("pod".to_string(), "pod-1".to_string())], 7 << 20),
/// ]);
/// ```
pub fn memory_by_owner(
    processes: &[GpuProcess],
    mut owner: impl FnMut(&GpuProcess) -> Option<LabelSet>,
) -> Vec<(u32, LabelSet, u64)> {
    let mut sums: BTreeMap<(u32, LabelSet), u64> = BTreeMap::new();
    for p in processes {
        if let Some(owner) = owner(p) {
            *sums.entry((p.gpu, owner)).or_default() += p.memory_used_bytes;
        }
    }
    sums.into_iter().map(|((g, o), b)| (g, o, b)).collect()
}

/// One update of a process list: its time, and (pid, bytes) per process.
type ListUpdate = (i64, Vec<(u32, u64)>);

/// The latest running-process list of each GPU and list (compute, graphics), from the samples
/// of one since-read: DCGM records one sample per process, at consecutive microseconds from the
/// update's time.
#[derive(Debug, Default)]
pub(super) struct ProcessLists {
    /// (gpu, field) → (time of the latest update, its processes).
    latest: HashMap<(u32, FieldId), ListUpdate>,
}

impl ProcessLists {
    /// Takes the samples of a since-read (in any order).
    pub(super) fn take(&mut self, samples: &[dcgm::FieldValue]) {
        // Every sample of each list's latest update: libdcgm stores an update's processes at
        // consecutive microseconds (`dcgm::latest_update`); the update's time is its first.
        let mut updates: HashMap<(u32, FieldId), ListUpdate> = HashMap::new();
        for v in dcgm::latest_update(samples) {
            let u = updates
                .entry((v.entity.id, v.field))
                .or_insert((v.timestamp_us, Vec::new()));
            u.0 = u.0.min(v.timestamp_us);
            if let Some(p) = v.value.running_process() {
                u.1.push((p.pid, p.memory_used_bytes));
            }
        }
        self.latest.extend(updates);
    }

    /// The processes of the lists updated at or after `since_us` (DCGM records nothing for an
    /// empty list, so a list that has not been updated for a while has no processes).
    pub(super) fn current(&self, since_us: i64) -> Vec<GpuProcess> {
        let mut by: BTreeMap<(u32, u32), u64> = BTreeMap::new();
        for ((gpu, _), (ts, procs)) in &self.latest {
            if *ts < since_us {
                continue;
            }
            for &(pid, bytes) in procs {
                let m = by.entry((*gpu, pid)).or_default();
                *m = (*m).max(bytes);
            }
        }
        by.into_iter()
            .map(|((gpu, pid), memory_used_bytes)| GpuProcess {
                gpu,
                pid,
                memory_used_bytes,
            })
            .collect()
    }
}

/// The DCGM objects of a [`ProcessWatch`], made on one connection.
pub(super) struct OpenWatch {
    group: Group,
    fields: FieldGroup,
    _watch: Watch,
    /// The reader's reconnect count when made (a new connection needs new objects).
    pub(super) reconnects: u64,
}

/// A watch of the running-process lists of the exported GPUs, on the collector's connection.
pub(super) struct ProcessWatch {
    pub(super) gpus: Vec<u32>,
    pub(super) open: Option<OpenWatch>,
    pub(super) cursor: SinceCursor,
    pub(super) lists: ProcessLists,
}

/// `DCGM_FI_DEV_COMPUTE_PIDS` and `DCGM_FI_DEV_GRAPHICS_PIDS`.
fn pid_fields() -> Vec<FieldId> {
    ["DCGM_FI_DEV_COMPUTE_PIDS", "DCGM_FI_DEV_GRAPHICS_PIDS"]
        .iter()
        .filter_map(|n| FieldId::by_name(n))
        .collect()
}

impl ProcessWatch {
    pub(super) fn new(gpus: Vec<u32>) -> Self {
        Self {
            gpus,
            open: None,
            cursor: SinceCursor::default(),
            lists: ProcessLists::default(),
        }
    }

    /// Watches the lists every `interval` (and takes a first sample).
    pub(super) fn open(
        &mut self,
        handle: &Handle,
        interval: Duration,
        reconnects: u64,
    ) -> Result<()> {
        self.open = None;
        let name = format!("dcgm_exporter_pids_{}", std::process::id());
        let group = Group::with_gpus(handle, &name, &self.gpus)?;
        let fields = FieldGroup::create(handle, &name, &pid_fields())?;
        let watch = group.watch(
            &fields,
            WatchOptions {
                update_interval: interval,
                max_keep_age: (interval * 4).max(Duration::from_secs(30)),
                max_keep_samples: 0,
            },
        )?;
        handle.update_all_fields(true)?;
        self.cursor = SinceCursor::default();
        self.lists = ProcessLists::default();
        self.open = Some(OpenWatch {
            group,
            fields,
            _watch: watch,
            reconnects,
        });
        Ok(())
    }

    /// Reads the samples since the last read.
    pub(super) fn read(&mut self) -> Result<()> {
        let Some(open) = &self.open else {
            return Err(dcgm::Error::InvalidArgument("no process watch".into()));
        };
        let samples = open.group.values_since(&open.fields, &mut self.cursor)?;
        self.lists.take(&samples);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcgm::{Entity, FieldValue, ReturnCode, Value};

    fn sample(gpu: u32, field: FieldId, ts: i64, pid: u32, mib: u64) -> FieldValue {
        let mut b = Vec::new();
        b.extend_from_slice(&dcgm::raw::sys::dcgmRunningProcess_version1.to_ne_bytes());
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&(mib << 20).to_ne_bytes());
        FieldValue {
            entity: Entity::gpu(gpu),
            field,
            timestamp_us: ts,
            value: Value::Bytes(b),
            status: ReturnCode::Ok,
        }
    }

    #[test]
    fn only_the_latest_update_of_each_list_counts_and_old_lists_go() {
        let f = pid_fields();
        let (compute, graphics) = (f[0], f[1]);
        let mut lists = ProcessLists::default();
        lists.take(&[
            sample(0, compute, 10, 100, 1),
            sample(0, compute, 10, 101, 2),
            sample(0, compute, 20, 100, 3),
            sample(1, compute, 20, 200, 4),
            // A process in both lists counts once, with its larger entry.
            sample(1, graphics, 20, 200, 5),
        ]);
        let mib = |v: Vec<GpuProcess>| -> Vec<(u32, u32, u64)> {
            v.into_iter()
                .map(|p| (p.gpu, p.pid, p.memory_used_bytes >> 20))
                .collect()
        };
        assert_eq!(mib(lists.current(0)), [(0, 100, 3), (1, 200, 5)]);
        // GPU 1's lists are updated again without process 200: it is gone.
        lists.take(&[
            sample(0, compute, 30, 100, 3),
            sample(1, compute, 30, 201, 6),
        ]);
        assert_eq!(mib(lists.current(25)), [(0, 100, 3), (1, 201, 6)]);
        // No update since: no processes (DCGM records nothing for an empty list).
        assert_eq!(mib(lists.current(31)), []);
        // An update of three processes as libdcgm stores it (40, 41 and 42 µs): all three.
        lists.take(&[
            sample(0, compute, 42, 102, 3),
            sample(0, compute, 40, 100, 1),
            sample(0, compute, 41, 101, 2),
        ]);
        assert_eq!(
            mib(lists.current(40)),
            [(0, 100, 1), (0, 101, 2), (0, 102, 3)]
        );
    }
}
