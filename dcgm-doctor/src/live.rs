//! Live sampling (feature `live`): the GPUs' readings through a `dcgm-reader` [`Reader`], one
//! tick at a time, with the processes on each GPU, into a [`Window`]. The `doctor` tool and
//! the Python package's `dcgm.doctor()` both sample through it; each runs its own loop (a
//! progress bar, or the interpreter's signals) around [`Live::tick`].
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let sim = dcgm::testing::simulator_path();
//! use std::time::Duration;
//! use dcgm_doctor::live::{Live, reader_builder};
//! let reader = reader_builder(Duration::from_millis(100)).library_path(sim).build()?;
//! let mut live = Live::new(reader, |_| None)?;
//! let mut window = dcgm_doctor::Window::default();
//! for _ in 0..3 {
//!     live.tick(&mut window, None)?;
//!     std::thread::sleep(Duration::from_millis(100));
//! }
//! assert_eq!(window.gpus().count(), 8);
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use dcgm::raw::sys::DCGM_FI_DEV_COMPUTE_PIDS;
use dcgm::{
    EntityGroup, FieldGroup, FieldId, Group, Handle, ReturnCode, SinceCursor, Watch, WatchOptions,
};
use dcgm_reader::{Reader, ReaderBuilder, Snapshot};

use crate::{Field, GpuProcess, Sample, Window};

/// How often the process lists are read: they change when jobs start and stop, not at the
/// sampling rate, and each read walks every GPU's PID list.
pub const PROCESS_EVERY: Duration = Duration::from_secs(1);

/// How long DCGM keeps the per-process samples its process statistics (the SM share of each
/// process) are computed from: a process's SM utilisation is over this time at most.
pub const PROCESS_STATS_KEEP: Duration = Duration::from_secs(60);

/// The processes whose SM utilisation is asked for at each read of the process lists, at most
/// (one request to the engine each).
pub const PROCESS_STATS_MAX_PIDS: usize = 64;

/// A reader of every field the doctor judges, sampled every `interval`, blanks kept (blank is
/// "unknown", never 0). Add the connection and the GPUs, then build.
pub fn reader_builder(interval: Duration) -> ReaderBuilder {
    let fields: Vec<FieldId> = Field::ALL.iter().map(|f| FieldId(f.id())).collect();
    Reader::builder()
        .fields(&fields)
        .update_frequency(interval)
        .max_keep_age(Duration::from_secs(60))
        .ignore_blank(false)
}

/// The watch of the GPUs' process lists.
struct Processes {
    handle: Handle,
    group: Group,
    pids: FieldGroup,
    _watch: Watch,
    /// DCGM's process statistics are watched (`dcgmWatchPidFields`: accounting mode, which
    /// needs root on a real node): each process's SM utilisation can be read.
    stats: bool,
}

/// Live sampling over one connection.
pub struct Live {
    reader: Reader,
    processes: Option<Processes>,
    name_of: Box<dyn Fn(u32) -> Option<String> + Send>,
    current: BTreeMap<u32, Vec<GpuProcess>>,
    last_processes: Option<Instant>,
    snap: Snapshot,
    /// GPUs that sent a reading, and those that then stopped.
    answered: BTreeSet<u32>,
    silent: BTreeSet<u32>,
    started: Instant,
    notes: Vec<String>,
}

impl Live {
    /// Connects `reader` (if it is not yet) and watches the process lists of its GPUs.
    /// `name_of` names a pid (DCGM lists only pids): `/proc/PID/comm` on a real node, the
    /// simulator's description of its node when simulated. A library that refuses the
    /// process lists leaves them unknown, with a note (the shared-GPU rule then says it could
    /// not judge).
    pub fn new(
        mut reader: Reader,
        name_of: impl Fn(u32) -> Option<String> + Send + 'static,
    ) -> dcgm::Result<Self> {
        reader.connect()?;
        // Fields the engine could not watch (a later release's, refused profiling fields):
        // the rules that need them say they could not judge; the note says why.
        let mut notes: Vec<String> = reader.warnings().to_vec();
        let processes = match reader.handle() {
            Some(h) => match watch_processes(h) {
                Ok(mut p) => {
                    match p.group.watch_pid_fields(WatchOptions {
                        update_interval: PROCESS_EVERY,
                        max_keep_age: PROCESS_STATS_KEEP,
                        max_keep_samples: 0,
                    }) {
                        Ok(()) => p.stats = true,
                        Err(e) => notes.push(format!(
                            "the processes' SM utilisation is not available (DCGM's process \
                             statistics need accounting mode, which needs root): {e}"
                        )),
                    }
                    Some(p)
                }
                Err(e) => {
                    notes.push(format!("the process lists are not available: {e}"));
                    None
                }
            },
            None => None,
        };
        Ok(Self {
            reader,
            processes,
            name_of: Box::new(name_of),
            current: BTreeMap::new(),
            last_processes: None,
            snap: Snapshot::new(),
            answered: BTreeSet::new(),
            silent: BTreeSet::new(),
            started: Instant::now(),
            notes,
        })
    }

    /// The same sampling with pids named by `name_of` from now on (for instance none at all
    /// once the reader turned out to read the simulator, whose pids are not this machine's).
    pub fn with_names(mut self, name_of: impl Fn(u32) -> Option<String> + Send + 'static) -> Self {
        self.name_of = Box::new(name_of);
        self.last_processes = None;
        self
    }

    /// Whether the reader reads from the simulator.
    pub fn simulated(&self) -> bool {
        self.reader.is_simulated().unwrap_or(false)
    }

    /// The processes on each GPU now (read again when [`PROCESS_EVERY`] has passed).
    pub fn processes(&mut self) -> &BTreeMap<u32, Vec<GpuProcess>> {
        if self
            .last_processes
            .is_none_or(|t| t.elapsed() >= PROCESS_EVERY)
        {
            self.read_processes();
        }
        &self.current
    }

    /// One reading of every GPU (only those of `focus`, if given) into `window`, at the
    /// wall-clock time of the read. A GPU with no reading at all is left out, and one that
    /// answered before and then stops is noted once (and again when it comes back).
    pub fn tick(&mut self, window: &mut Window, focus: Option<&[u32]>) -> dcgm::Result<()> {
        self.reader.latest_into(&mut self.snap)?;
        self.processes();
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let mut heard = BTreeSet::new();
        for (entity, values) in &self.snap {
            if entity.group != EntityGroup::Gpu || focus.is_some_and(|f| !f.contains(&entity.id)) {
                continue;
            }
            let mut s = Sample::new(now_ms, entity.id);
            let mut any = false;
            for f in Field::ALL {
                let v = values.get(&FieldId(f.id())).and_then(|v| v.value.as_f64());
                any |= v.is_some();
                s.set(f, v);
            }
            if !any {
                continue;
            }
            heard.insert(entity.id);
            if self.processes.is_some() {
                s.processes = Some(self.current.get(&entity.id).cloned().unwrap_or_default());
            }
            window.push(s);
        }
        let after = self.started.elapsed().as_secs_f64();
        for &gpu in self.answered.difference(&heard) {
            if self.silent.insert(gpu) {
                self.notes.push(format!(
                    "GPU {gpu} stopped sending readings after {after:.1} s: judged up to then"
                ));
            }
        }
        for &gpu in &heard {
            if self.silent.remove(&gpu) {
                self.notes
                    .push(format!("GPU {gpu} sent readings again after {after:.1} s"));
            }
        }
        self.answered.extend(heard);
        Ok(())
    }

    /// What the sampling met that the findings do not say: refused process lists, GPUs that
    /// went silent.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Stops the reader (an embedded engine it started stops with it).
    pub fn shutdown(mut self) {
        self.processes = None;
        self.reader.shutdown();
    }

    fn read_processes(&mut self) {
        self.last_processes = Some(Instant::now());
        let Some(p) = &self.processes else {
            return;
        };
        match latest_processes(p) {
            Ok(list) => {
                let sm = if p.stats {
                    let pids: BTreeSet<u32> =
                        list.values().flatten().map(|(pid, _)| *pid).collect();
                    match sm_utilisation(&p.group, pids) {
                        Ok(sm) => sm,
                        Err(e) => {
                            let note =
                                format!("the processes' SM utilisation could not be read: {e}");
                            if !self.notes.contains(&note) {
                                self.notes.push(note);
                            }
                            BTreeMap::new()
                        }
                    }
                } else {
                    BTreeMap::new()
                };
                self.current = list
                    .into_iter()
                    .map(|(gpu, ps)| {
                        let named = ps
                            .into_iter()
                            .map(|(pid, bytes)| GpuProcess {
                                pid,
                                name: (self.name_of)(pid),
                                memory_mib: Some(bytes >> 20),
                                sm_util: sm.get(&(gpu, pid)).copied(),
                            })
                            .collect();
                        (gpu, named)
                    })
                    .collect();
            }
            Err(e) => {
                let note = format!("the process lists are not available: {e}");
                if !self.notes.contains(&note) {
                    self.notes.push(note);
                }
            }
        }
    }
}

fn watch_processes(h: &Handle) -> dcgm::Result<Processes> {
    let pid = std::process::id();
    let gpus = h.system().gpu_ids()?;
    let group = Group::with_gpus(h, &format!("doctor-{pid}"), &gpus)?;
    let pids = FieldGroup::create(
        h,
        &format!("doctor-pids-{pid}"),
        &[FieldId(DCGM_FI_DEV_COMPUTE_PIDS)],
    )?;
    let watch = group.watch(&pids, WatchOptions::default())?;
    Ok(Processes {
        handle: h.clone(),
        group,
        pids,
        _watch: watch,
        stats: false,
    })
}

/// The SM utilisation DCGM's process statistics give each of `pids` on each GPU of `group`
/// (at most [`PROCESS_STATS_MAX_PIDS`] of them); a pid DCGM has no statistics for (gone, or
/// not seen yet) is left out.
fn sm_utilisation(group: &Group, pids: BTreeSet<u32>) -> dcgm::Result<BTreeMap<(u32, u32), f64>> {
    let mut out = BTreeMap::new();
    for pid in pids.into_iter().take(PROCESS_STATS_MAX_PIDS) {
        let info = match group.pid_info(pid) {
            Ok(i) => i,
            Err(e) if e.code() == ReturnCode::NoData => continue,
            Err(e) => return Err(e),
        };
        for g in &info.gpus {
            if let (Some(gpu), Some(sm)) = (g.gpu, g.process_sm_util) {
                out.insert((gpu, pid), sm);
            }
        }
    }
    Ok(out)
}

/// Each GPU's running processes (pid, GPU memory in bytes): every sample of the latest update
/// of its PID list.
fn latest_processes(p: &Processes) -> dcgm::Result<BTreeMap<u32, Vec<(u32, u64)>>> {
    let mut samples = p.group.values_since(&p.pids, &mut SinceCursor::default())?;
    if samples.is_empty() {
        // A watch just made has no sample until the engine's next update: ask for it now.
        p.handle.update_all_fields(true)?;
        samples = p.group.values_since(&p.pids, &mut SinceCursor::default())?;
    }
    // Every sample of the latest update (libdcgm stores them at consecutive microseconds).
    Ok(dcgm::running_processes_of(&samples)
        .into_iter()
        .map(|(e, list)| {
            let procs = list.iter().map(|p| (p.pid, p.memory_used_bytes)).collect();
            (e.id, procs)
        })
        .collect())
}
