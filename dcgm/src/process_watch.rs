//! Every process on a GPU: DCGM's running-process lists, read as libdcgm writes them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dcgm_sys::{DCGM_FI_DEV_COMPUTE_PIDS, DCGM_FI_DEV_GRAPHICS_PIDS};

use crate::{
    Entity, Error, FieldGroup, FieldId, Group, Handle, Result, RunningProcess, SinceCursor, System,
    Watch, WatchOptions, latest_update, running_processes_of,
};

/// A watch of the running-process lists (`DCGM_FI_DEV_COMPUTE_PIDS` and
/// `DCGM_FI_DEV_GRAPHICS_PIDS`) of a set of GPUs. [`ProcessWatch::read`] gives every process of
/// each list's latest update ([`crate::latest_update`]: libdcgm stores an update's processes at
/// consecutive microseconds, and a reader of the newest time alone sees one process).
///
/// ```
/// # let h = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded().unwrap();
/// let gpus = h.system().gpu_ids()?;
/// let watch = dcgm::ProcessWatch::new(&h, &gpus, std::time::Duration::from_secs(1))?;
/// for (gpu, processes) in watch.read()? {
///     for p in processes {
///         println!("GPU {gpu}: pid {} uses {} MiB", p.pid, p.memory_used_bytes >> 20);
///     }
/// }
/// # Ok::<(), dcgm::Error>(())
/// ```
#[derive(Debug)]
pub struct ProcessWatch {
    handle: Handle,
    group: Group,
    fields: FieldGroup,
    _watch: Watch,
    interval: Duration,
    /// The watched GPUs (each gets a list, empty without processes).
    gpus: Vec<u32>,
}

/// A number for each watch's DCGM object names (names are per host engine).
static NEXT: AtomicU64 = AtomicU64::new(0);

impl ProcessWatch {
    /// Watches the process lists of `gpus` every `interval`.
    ///
    /// # Errors
    ///
    /// DCGM's, when a GPU is unknown or the lists cannot be watched; `InvalidArgument` for an
    /// empty `gpus` or a zero interval.
    pub fn new(handle: &Handle, gpus: &[u32], interval: Duration) -> Result<Self> {
        if gpus.is_empty() {
            return Err(Error::InvalidArgument(
                "no GPU to watch the processes of".into(),
            ));
        }
        if interval.is_zero() {
            return Err(Error::InvalidArgument(
                "a process watch needs an interval above zero".into(),
            ));
        }
        let name = format!(
            "dcgm-rs-processes-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let group = Group::with_gpus(handle, &name, gpus)?;
        let fields = FieldGroup::create(
            handle,
            &name,
            &[
                FieldId(DCGM_FI_DEV_COMPUTE_PIDS),
                FieldId(DCGM_FI_DEV_GRAPHICS_PIDS),
            ],
        )?;
        let watch = group.watch(
            &fields,
            WatchOptions {
                update_interval: interval,
                max_keep_age: (interval * 4).max(Duration::from_secs(30)),
                max_keep_samples: 0,
            },
        )?;
        Ok(Self {
            handle: handle.clone(),
            group,
            fields,
            _watch: watch,
            interval,
            gpus: gpus.to_vec(),
        })
    }

    /// The processes on each watched GPU now, by GPU id, in pid order; a GPU without a process
    /// has an empty list. DCGM records nothing for an empty list, so a list whose latest
    /// update is older than two intervals and a second counts as empty. Asks the engine for
    /// an update first (`dcgmUpdateAllFields`), so a watch just made has its first lists.
    ///
    /// # Errors
    ///
    /// DCGM's, when the lists cannot be read (`ConnectionLost` when the engine went away).
    pub fn read(&self) -> Result<BTreeMap<u32, Vec<RunningProcess>>> {
        self.handle.update_all_fields(true)?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64);
        let window = (self.interval * 2 + Duration::from_secs(1)).as_micros() as i64;
        // Only the recent past is read (not the watch's whole kept history): from one more
        // interval and a second before the freshness window, so that an update whose
        // consecutive-microsecond run straddles the window's start is read whole.
        let lead = (self.interval + Duration::from_secs(1)).as_micros() as i64;
        let mut cursor = SinceCursor((now - window - lead).max(0));
        let latest = latest_update(&self.group.values_since(&self.fields, &mut cursor)?);
        let mut newest: BTreeMap<(Entity, FieldId), i64> = BTreeMap::new();
        for v in &latest {
            let t = newest.entry((v.entity, v.field)).or_insert(v.timestamp_us);
            *t = (*t).max(v.timestamp_us);
        }
        let fresh: Vec<_> = latest
            .into_iter()
            .filter(|v| newest[&(v.entity, v.field)] >= now - window)
            .collect();
        let mut out: BTreeMap<u32, Vec<RunningProcess>> =
            self.gpus.iter().map(|&g| (g, Vec::new())).collect();
        for (entity, list) in running_processes_of(&fresh) {
            out.insert(entity.id, list);
        }
        Ok(out)
    }
}

impl Group {
    /// The processes running on this group's GPUs now (see [`ProcessWatch`]): a watch of the
    /// process lists is made for the call and removed after it. A program that asks often
    /// keeps a [`ProcessWatch`] instead.
    ///
    /// # Errors
    ///
    /// As [`ProcessWatch::new`] and [`ProcessWatch::read`].
    pub fn running_processes(&self) -> Result<BTreeMap<u32, Vec<RunningProcess>>> {
        ProcessWatch::new(self.handle(), &self.gpu_ids()?, Duration::from_secs(1))?.read()
    }
}

impl System {
    /// The processes running on GPU `gpu` now (see [`Group::running_processes`]).
    ///
    /// # Errors
    ///
    /// DCGM's for an unknown GPU, and as [`ProcessWatch::read`].
    pub fn running_processes(&self, gpu: u32) -> Result<Vec<RunningProcess>> {
        let by = ProcessWatch::new(self.handle(), &[gpu], Duration::from_secs(1))?.read()?;
        Ok(by.into_values().flatten().collect())
    }
}
