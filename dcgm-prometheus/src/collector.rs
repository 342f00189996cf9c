//! [`Collector`]: connects to DCGM, discovers the entities, watches their fields, runs the
//! health checks and event windows, and renders.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dcgm::{Entity, EntityGroup, Error, FieldId, Group, Handle, HealthSystems, Result, Value};

use crate::counters::{Counter, CounterField, ExporterCounter, counter_fields};
use crate::events::EventWindow;
use crate::exposition::Exposition;
use crate::gpu_info::{GpuInfo, gpu_info_fields};
use crate::identity::{
    EntityIdentity, LabelOptions, LabelSet, OtherEntity, is_global_field, row_entity_group,
};
use crate::process_util::{PidStatsWatch, ProcessSmUtil};
use crate::processes::{GpuProcess, ProcessWatch};
use crate::renderer::Renderer;
use crate::selection::{
    DeviceSelection, EntitySelection, MIG_UUID_FIELD, discover_entities, discover_other_entities,
};
use crate::verdicts::GpuHealth;
use dcgm_reader::{Connection, Reader, ReaderBuilder, Snapshot};

/// What a [`Collector`] exports and how it reaches DCGM.
#[derive(Debug, Clone)]
pub struct CollectorConfig {
    /// The counters file's rows.
    pub counters: Vec<Counter>,
    /// Which GPUs or MIG instances (`-d`; default [`DeviceSelection::Flex`]). NVLink rows are
    /// exported for the links of these GPUs (none with `i`).
    pub devices: DeviceSelection,
    /// Which NvSwitches and NvSwitch links (`-s`; default [`EntitySelection::Flex`]). Looked
    /// up only when the counters have NvSwitch or NVLink rows.
    pub switches: EntitySelection,
    /// Which CPUs and CPU cores (`-p`; default [`EntitySelection::Flex`]). Looked up only when
    /// the counters have CPU or CPU-core rows.
    pub cpus: EntitySelection,
    /// How to reach DCGM (default: the embedded engine).
    pub connection: Connection,
    /// Load libdcgm from here.
    pub library_path: Option<PathBuf>,
    /// Use the dcgm-sim simulator (when `library_path` is not set).
    pub simulator: bool,
    /// How often DCGM samples the fields (default 30 s, as dcgm-exporter).
    pub collect_interval: Duration,
    /// Window of `DCGM_EXP_XID_ERRORS_COUNT` (default 5 min, as dcgm-exporter).
    pub xid_window: Duration,
    /// Window of `DCGM_EXP_CLOCK_EVENTS_COUNT` (default 5 min, as dcgm-exporter).
    pub clock_events_window: Duration,
    /// Labels.
    pub labels: LabelOptions,
    /// DCGM's own log of an embedded engine: file (`-`: standard output) and severity.
    pub engine_log: Option<(String, dcgm::LogSeverity)>,
    /// How long DCGM keeps the samples of the field watches (`maxKeepAge`; dcgm-exporter's
    /// `--watch-max-keep-age`). `None`: 4 collect intervals, at least 30 s. The watch of the
    /// XID and clock-event windows keeps at least its window.
    pub watch_keep_age: Option<Duration>,
    /// How many samples DCGM keeps per watched field (`maxKeepSamples`; 0, the default: no
    /// limit but the age). Not applied to the watch of the XID and clock-event windows,
    /// whose counts need every sample of the window.
    pub watch_keep_samples: u32,
}

impl CollectorConfig {
    /// Defaults for `counters`.
    pub fn new(counters: Vec<Counter>) -> Self {
        Self {
            counters,
            devices: DeviceSelection::Flex,
            switches: EntitySelection::Flex,
            cpus: EntitySelection::Flex,
            connection: Connection::Embedded,
            library_path: None,
            simulator: false,
            collect_interval: Duration::from_secs(30),
            xid_window: Duration::from_secs(300),
            clock_events_window: Duration::from_secs(300),
            labels: LabelOptions::default(),
            engine_log: None,
            watch_keep_age: None,
            watch_keep_samples: 0,
        }
    }

    /// `b` reading from the library, simulator and engine log this configuration names.
    fn source(&self, mut b: ReaderBuilder) -> ReaderBuilder {
        if let Some(p) = &self.library_path {
            b = b.library_path(p);
        } else if self.simulator {
            b = b.simulator();
        }
        if let Some((file, severity)) = &self.engine_log {
            b = b.engine_log(file, *severity);
        }
        b
    }
}

/// A reader of NvSwitch, NVLink, CPU or CPU-core rows, with its last values.
struct OtherReader {
    reader: Reader,
    snap: Snapshot,
    what: &'static str,
    failing: bool,
}

/// The health watch behind `DCGM_EXP_GPU_HEALTH_STATUS`: a group of the exported GPUs,
/// watching every subsystem (as dcgm-exporter), on the GPU reader's connection.
struct HealthWatch {
    gpus: Vec<u32>,
    group: Option<Group>,
    /// The reader's reconnect count when the group was made (a new connection needs a new
    /// group).
    reconnects: u64,
    failing: bool,
}

impl HealthWatch {
    fn open(&mut self, reader: &Reader) -> Result<()> {
        self.group = None;
        let handle = reader
            .handle()
            .ok_or_else(|| Error::InvalidArgument("not connected".into()))?;
        let name = format!("dcgm_exporter_health_{}", std::process::id());
        let group = Group::with_gpus(handle, &name, &self.gpus)?;
        group.health_set(HealthSystems::ALL)?;
        self.group = Some(group);
        self.reconnects = reader.reconnects();
        Ok(())
    }
}

/// The reader of `DCGM_EXP_GPU_INFO`'s fields, for the physical GPUs.
struct InfoReader {
    reader: Reader,
    snap: Snapshot,
    failing: bool,
}

/// Reads the configured fields of the configured entities and renders them; see the
/// [crate docs](crate).
pub struct Collector {
    _handle: Handle,
    reader: Reader,
    /// The GPU reader's last values.
    snap: Snapshot,
    others: Vec<OtherReader>,
    events: Option<(Reader, Vec<EventWindow>)>,
    health: Option<HealthWatch>,
    /// Whether `DCGM_EXP_P2P_STATUS` is exported, and whether reading it is failing.
    p2p: Option<bool>,
    info: Option<InfoReader>,
    processes: ProcessWatch,
    /// The pid watch of `DCGM_EXP_POD_SM_UTIL` (started on first use).
    pid_stats: PidStatsWatch,
    collect_interval: Duration,
    renderer: Renderer,
    simulated: bool,
    profiles_resolved: bool,
    ignored: Vec<Counter>,
    name_field: FieldId,
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collector")
            .field("renderer", &self.renderer)
            .field("simulated", &self.simulated)
            .finish()
    }
}

/// The entity groups other than GPUs the counters export (their rows' [`row_entity_group`]).
fn other_groups(counters: &[Counter]) -> Vec<EntityGroup> {
    let mut out = Vec::new();
    for c in counters.iter().filter(|c| !c.is_label()) {
        if let Some(f) = c.field_id() {
            let g = row_entity_group(f);
            if g != EntityGroup::Gpu && !out.contains(&g) {
                out.push(g);
            }
        }
    }
    out
}

/// The first step of [`Collector::new`]: a handle on the configured library and engine, and
/// the connection that the readers then share.
fn connect(cfg: &CollectorConfig) -> Result<(Handle, Connection)> {
    let mut hb = Handle::builder();
    if let Some(p) = &cfg.library_path {
        hb = hb.library_path(p);
    } else if cfg.simulator {
        hb = hb.simulator();
    }
    Ok(match &cfg.connection {
        Connection::Embedded => (hb.embedded()?, Connection::Embedded),
        Connection::Remote(a) => (hb.connect(a)?, Connection::Remote(a.clone())),
        Connection::Auto => match hb.clone().connect("localhost") {
            Ok(h) => (h, Connection::Remote("localhost".into())),
            Err(Error::ConnectFailed { .. }) | Err(Error::Dcgm { .. }) => {
                (hb.embedded()?, Connection::Embedded)
            }
            Err(e) => return Err(e),
        },
    })
}

/// The message of the error [`Collector::new`] returns when DCGM lists no GPU to export.
const NO_GPU: &str = "no GPU to export";

/// Whether `e`, from [`Collector::new`], says there is no GPU (or MIG instance) to export:
/// DCGM lists none, or the device selection leaves none.
pub fn is_no_gpu(e: &Error) -> bool {
    matches!(e, Error::InvalidArgument(m) if m == NO_GPU || m.starts_with(crate::selection::NO_MIG))
}

/// What discovery found: the GPUs or MIG instances to export, and the NvSwitches, links,
/// CPUs and cores that the counters' rows ask for.
struct Discovered {
    simulated: bool,
    identities: Vec<EntityIdentity>,
    others: Vec<OtherEntity>,
}

/// The second step of [`Collector::new`]: the entities, looked up as the selections say.
fn discover(handle: &Handle, cfg: &CollectorConfig) -> Result<Discovered> {
    let identities = discover_entities(handle, &cfg.devices)?;
    if identities.is_empty() {
        return Err(Error::InvalidArgument(NO_GPU.into()));
    }
    let groups = other_groups(&cfg.counters);
    let others = if groups.is_empty() {
        Vec::new()
    } else {
        let link_gpus: &[EntityIdentity] = match cfg.devices {
            DeviceSelection::GpuInstances(_) => &[],
            _ => &identities,
        };
        discover_other_entities(handle, &groups, link_gpus, &cfg.switches, &cfg.cpus)?
    };
    Ok(Discovered {
        simulated: handle.is_simulated(),
        identities,
        others,
    })
}

/// One watch of other entities of one kind, with that kind's rows and the global labels.
struct OtherWatch {
    what: &'static str,
    name: String,
    entities: Vec<Entity>,
    fields: Vec<FieldId>,
}

/// The third step of [`Collector::new`]: what to read and watch, from the counters and what
/// discovery found, before anything is opened.
struct Plan {
    /// Every row (profiling rows leave it if DCGM refuses them).
    counters: Vec<Counter>,
    /// The rows read per GPU or GPU instance.
    gpu_rows: Vec<Counter>,
    other_watches: Vec<OtherWatch>,
    /// The event windows (XID errors, clock events) and the GPUs they count for.
    windows: Vec<EventWindow>,
    gpus: Vec<u32>,
    health: bool,
    p2p: bool,
    gpu_info: bool,
}

impl Plan {
    fn new(cfg: &CollectorConfig, found: &Discovered) -> Self {
        let counters = cfg.counters.clone();
        let gpu_rows: Vec<Counter> = counters
            .iter()
            .filter(|c| {
                c.field_id()
                    .is_some_and(|f| row_entity_group(f) == EntityGroup::Gpu)
            })
            .cloned()
            .collect();
        let mut other_watches = Vec::new();
        for (group, what) in [
            (EntityGroup::Switch, "NvSwitch"),
            (EntityGroup::Link, "NVLink"),
            (EntityGroup::Cpu, "CPU"),
            (EntityGroup::CpuCore, "CPU core"),
        ] {
            let entities: Vec<Entity> = found
                .others
                .iter()
                .filter(|o| o.group() == group)
                .map(OtherEntity::entity)
                .collect();
            if entities.is_empty() {
                continue;
            }
            let rows: Vec<Counter> = counters
                .iter()
                .filter(|c| {
                    c.field_id().is_some_and(|f| {
                        row_entity_group(f) == group || (c.is_label() && is_global_field(f))
                    })
                })
                .cloned()
                .collect();
            other_watches.push(OtherWatch {
                what,
                name: format!("dcgm_exporter_{}", group.name().to_ascii_lowercase()),
                entities,
                fields: counter_fields(&rows),
            });
        }
        let mut windows = Vec::new();
        for c in &counters {
            if let CounterField::Exporter(kind) = c.field
                && kind.source_field().is_some()
                && windows.iter().all(|w: &EventWindow| w.kind() != kind)
            {
                let window = match kind {
                    ExporterCounter::XidErrorsCount => cfg.xid_window,
                    _ => cfg.clock_events_window,
                };
                windows.push(EventWindow::new(kind, window, cfg.collect_interval));
            }
        }
        let gpus: Vec<u32> = found
            .identities
            .iter()
            .map(|i| i.gpu)
            .collect::<BTreeSet<u32>>()
            .into_iter()
            .collect();
        let has_row = |e: ExporterCounter| {
            counters
                .iter()
                .any(|c| c.field == CounterField::Exporter(e))
        };
        Self {
            health: has_row(ExporterCounter::GpuHealthStatus),
            p2p: has_row(ExporterCounter::P2pStatus),
            gpu_info: has_row(ExporterCounter::GpuInfo),
            counters,
            gpu_rows,
            other_watches,
            windows,
            gpus,
        }
    }
}

/// Where the collector's readers read from: the configured library, engine log and
/// connection, each watch kept `keep_age`.
struct Source<'a> {
    cfg: &'a CollectorConfig,
    connection: Connection,
    keep_age: Duration,
}

impl Source<'_> {
    fn reader(&self, fields: &[FieldId], entities: &[Entity], name: &str) -> Result<Reader> {
        let b = Reader::builder()
            .fields(fields)
            .entities(entities)
            .update_frequency(self.cfg.collect_interval)
            .max_keep_age(self.keep_age)
            .max_keep_samples(self.cfg.watch_keep_samples)
            .connection(self.connection.clone())
            .field_group_name(name);
        let mut r = self.cfg.source(b).build()?;
        r.connect()?;
        Ok(r)
    }

    /// The reader of the windows' source fields: kept as long as the longest window.
    fn events_reader(&self, windows: &[EventWindow], gpus: &[u32]) -> Result<Reader> {
        let fields: Vec<FieldId> = windows
            .iter()
            .filter_map(|w| w.kind().source_field())
            .collect();
        let longest = windows
            .iter()
            .map(EventWindow::window)
            .max()
            .unwrap_or_default();
        let b = Reader::builder()
            .fields(&fields)
            .gpu_ids(gpus)
            .update_frequency(self.cfg.collect_interval)
            .max_keep_age(
                (longest + self.cfg.collect_interval * 2)
                    .max(self.cfg.watch_keep_age.unwrap_or_default()),
            )
            .connection(self.connection.clone())
            .field_group_name("dcgm_exporter_events");
        let mut r = self.cfg.source(b).build()?;
        r.connect()?;
        Ok(r)
    }
}

impl Collector {
    /// Connects, discovers the entities and starts watching. Rows that cannot be exported
    /// are listed by [`Collector::ignored`]: profiling (`DCGM_FI_PROF_*`) rows when DCGM
    /// refuses to watch them (no profiling support, or the profiling module is in use), as
    /// dcgm-exporter skips them.
    ///
    /// NvSwitch, NVLink, CPU and CPU-core rows are read for the entities of
    /// [`CollectorConfig::switches`], [`CollectorConfig::cpus`] and [`CollectorConfig::devices`]
    /// (see [`discover_other_entities`]), each kind through its own watch; nothing is looked up
    /// when the counters have no such row. `DCGM_EXP_GPU_HEALTH_STATUS` sets a health watch of
    /// every subsystem on the exported GPUs and reports each check; `DCGM_EXP_P2P_STATUS`
    /// reports the NVLink peer-to-peer status between them and every other GPU.
    pub fn new(cfg: CollectorConfig) -> Result<Self> {
        let (handle, connection) = connect(&cfg)?;
        let found = discover(&handle, &cfg)?;
        let plan = Plan::new(&cfg, &found);
        Self::open(&cfg, handle, connection, found, plan)
    }

    /// The last step of [`Collector::new`]: opens the planned readers and watches (dropping
    /// the profiling rows if DCGM refuses them) and the renderer.
    fn open(
        cfg: &CollectorConfig,
        handle: Handle,
        connection: Connection,
        found: Discovered,
        mut plan: Plan,
    ) -> Result<Self> {
        let source = Source {
            cfg,
            connection,
            keep_age: cfg
                .watch_keep_age
                .unwrap_or_else(|| (cfg.collect_interval * 4).max(Duration::from_secs(30))),
        };
        let name_field = FieldId::by_name("DCGM_FI_DEV_NAME").unwrap_or(FieldId(50));
        let entities: Vec<Entity> = found.identities.iter().map(|i| i.entity).collect();
        let has_mig = found.identities.iter().any(|i| i.mig.is_some());
        let gpu_reader = |rows: &[Counter]| -> Result<Reader> {
            let mut fields = counter_fields(rows);
            // The GPU instances' names are their MIG profiles; a reader needs a field anyway.
            if (has_mig || fields.is_empty()) && !fields.contains(&name_field) {
                fields.push(name_field);
            }
            // ... and their MIG device UUIDs, for workload attribution.
            if has_mig && !fields.contains(&MIG_UUID_FIELD) {
                fields.push(MIG_UUID_FIELD);
            }
            source.reader(&fields, &entities, "dcgm_exporter")
        };
        let mut ignored = Vec::new();
        let reader = match gpu_reader(&plan.gpu_rows) {
            Ok(r) => r,
            Err(e) if is_profiling_refusal(&e) && plan.gpu_rows.iter().any(is_profiling) => {
                log::warn!("cannot watch the profiling fields ({e}); exporting without them");
                let (prof, rest): (Vec<Counter>, Vec<Counter>) = std::mem::take(&mut plan.gpu_rows)
                    .into_iter()
                    .partition(is_profiling);
                let prof_names: BTreeSet<String> =
                    prof.iter().map(|c| c.metric_name.clone()).collect();
                plan.counters.retain(|c| {
                    if prof_names.contains(&c.metric_name) {
                        ignored.push(c.clone());
                        false
                    } else {
                        true
                    }
                });
                gpu_reader(&rest)?
            }
            Err(e) => return Err(e),
        };
        let mut others = Vec::new();
        for watch in &plan.other_watches {
            for chunk in watch.entities.chunks(dcgm::MAX_ENTITIES_PER_GROUP) {
                others.push(OtherReader {
                    reader: source.reader(&watch.fields, chunk, &watch.name)?,
                    snap: Snapshot::new(),
                    what: watch.what,
                    failing: false,
                });
            }
        }
        let events = match std::mem::take(&mut plan.windows) {
            windows if windows.is_empty() => None,
            windows => Some((source.events_reader(&windows, &plan.gpus)?, windows)),
        };
        let health = if plan.health {
            let mut hw = HealthWatch {
                gpus: plan.gpus.clone(),
                group: None,
                reconnects: 0,
                failing: false,
            };
            hw.open(&reader)?;
            Some(hw)
        } else {
            None
        };
        let info = if plan.gpu_info {
            let gpus: Vec<Entity> = plan.gpus.iter().map(|&g| Entity::gpu(g)).collect();
            Some(InfoReader {
                reader: source.reader(&gpu_info_fields(), &gpus, "dcgm_exporter_info")?,
                snap: Snapshot::new(),
                failing: false,
            })
        } else {
            None
        };
        let processes = ProcessWatch::new(plan.gpus.clone());
        let pid_stats = PidStatsWatch::new(plan.gpus.clone());
        let mut renderer = Renderer::new(&plan.counters, found.identities, cfg.labels.clone());
        renderer.set_other_entities(found.others);
        renderer.mark_simulated(found.simulated);
        let mut collector = Self {
            _handle: handle,
            reader,
            snap: Snapshot::new(),
            others,
            events,
            health,
            p2p: plan.p2p.then_some(false),
            info,
            processes,
            pid_stats,
            collect_interval: cfg.collect_interval,
            renderer,
            simulated: found.simulated,
            profiles_resolved: !has_mig,
            ignored,
            name_field,
        };
        // MIG profile names and UUIDs come from a first read, so that they are known before
        // the first collection (workload attribution needs the UUIDs).
        if has_mig && collector.reader.latest_into(&mut collector.snap).is_ok() {
            resolve_profiles(&mut collector.renderer, &collector.snap, name_field);
            collector.profiles_resolved = true;
        }
        Ok(collector)
    }

    /// Whether the values come from the dcgm-sim simulator.
    pub fn is_simulated(&self) -> bool {
        self.simulated
    }

    /// Labels of the workloads on each GPU or GPU instance; see
    /// [`Renderer::set_workload_labels`]. Call it before [`Collector::collect`] whenever the
    /// attribution changes.
    pub fn set_workload_labels(&mut self, labels: impl Fn(&EntityIdentity) -> Vec<LabelSet>) {
        self.renderer.set_workload_labels(labels);
    }

    /// The processes on the exported GPUs now, from DCGM's running-process lists (compute and
    /// graphics), one entry per GPU and process. The first call starts watching the lists
    /// (every collect interval) on the collector's connection, and a call after a reconnection
    /// watches them again. A list DCGM has not updated for two intervals and a second is taken
    /// as empty: DCGM records nothing for a GPU without processes.
    ///
    /// # Errors
    ///
    /// DCGM's, when the lists cannot be watched or read.
    pub fn running_processes(&mut self) -> Result<Vec<GpuProcess>> {
        let pw = &mut self.processes;
        let reconnects = self.reader.reconnects();
        if pw.open.as_ref().is_none_or(|o| o.reconnects != reconnects) {
            let h = self
                .reader
                .handle()
                .ok_or_else(|| Error::InvalidArgument("not connected".into()))?;
            pw.open(h, self.collect_interval, reconnects)?;
        }
        if let Err(e) = pw.read() {
            pw.open = None;
            return Err(e);
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i64);
        let window = (self.collect_interval * 2 + Duration::from_secs(1)).as_micros() as i64;
        Ok(pw.lists.current(now - window))
    }

    /// What the `DCGM_EXP_POD_FB_USED` row writes from the next collection on: per physical
    /// GPU and owner, the owner's labels and its processes' GPU memory in bytes (see
    /// [`memory_by_owner`](crate::memory_by_owner)); `None` leaves the row out.
    pub fn set_owner_memory(&mut self, memory: Option<Vec<(u32, LabelSet, u64)>>) {
        self.renderer.set_owner_memory(memory);
    }

    /// The SM utilisation DCGM's process statistics give each of `processes` (from
    /// [`Collector::running_processes`]) on its GPU; see [`ProcessSmUtil`]. The first call
    /// starts DCGM's pid watch (`dcgmWatchPidFields`: accounting mode, root on a real node)
    /// on the collector's connection, keeping samples for
    /// [`pid_stats_window`](crate::pid_stats_window) of the collect interval; a call
    /// after a reconnection starts it again.
    ///
    /// # Errors
    ///
    /// DCGM's, when the pid watch cannot start (`DCGM_ST_REQUIRES_ROOT`) or a process's
    /// statistics cannot be read for another reason than having none.
    pub fn process_sm_util(&mut self, processes: &[GpuProcess]) -> Result<Vec<ProcessSmUtil>> {
        let reconnects = self.reader.reconnects();
        let h = self
            .reader
            .handle()
            .ok_or_else(|| Error::InvalidArgument("not connected".into()))?;
        self.pid_stats
            .read(h, reconnects, self.collect_interval, processes)
    }

    /// What the `DCGM_EXP_POD_SM_UTIL` row writes from the next collection on: per physical
    /// GPU and owner, the owner's labels and its processes' SM utilisation in percent (see
    /// [`sm_util_by_owner`](crate::sm_util_by_owner)); `None` leaves the row out.
    pub fn set_owner_sm_util(&mut self, util: Option<Vec<(u32, LabelSet, f64)>>) {
        self.renderer.set_owner_sm_util(util);
    }

    /// Per-workload values of the GPU series of `field`; see
    /// [`Renderer::set_workload_values`](crate::Renderer::set_workload_values).
    pub fn set_workload_values(
        &mut self,
        field: FieldId,
        values: Option<Vec<(dcgm::Entity, LabelSet, f64)>>,
    ) {
        self.renderer.set_workload_values(field, values);
    }

    /// Whether the counters have a row (`DCGM_EXP_*`) computed by the exporter.
    pub fn has_row(&self, row: ExporterCounter) -> bool {
        self.renderer.has_row(row)
    }

    /// A family of value-1 series per identity, written with every collection until set
    /// again; see [`Renderer::set_info_family`].
    pub fn set_info_family(
        &mut self,
        name: &str,
        help: &str,
        labels: impl Fn(&EntityIdentity) -> Vec<LabelSet>,
    ) {
        self.renderer.set_info_family(name, help, labels);
    }

    /// Stops writing a family of [`Collector::set_info_family`].
    pub fn remove_info_family(&mut self, name: &str) {
        self.renderer.remove_info_family(name);
    }

    /// The exported GPUs and MIG instances, in export order.
    pub fn identities(&self) -> &[EntityIdentity] {
        self.renderer.identities()
    }

    /// The exported NvSwitches, NVLinks, CPUs and CPU cores, in export order (none unless the
    /// counters have rows for them).
    pub fn other_entities(&self) -> impl ExactSizeIterator<Item = &OtherEntity> + '_ {
        self.renderer.other_entities()
    }

    /// Rows left out (see [`Collector::new`]).
    pub fn ignored(&self) -> &[Counter] {
        &self.ignored
    }

    /// Reads the latest values and writes their exposition into `out` (cleared first).
    ///
    /// A failure of the GPU reader is an error; a failure of the NvSwitch / NVLink / CPU
    /// readers, of the health check or of the P2P status is logged (once until it works
    /// again) and leaves those rows out.
    pub fn collect(&mut self, out: &mut String) -> Result<()> {
        self.collect_inner(out, None)
    }

    /// Like [`Collector::collect`], and also keeps in `structured` the collection's model,
    /// built once, that the text is encoded from ([`Renderer::render_structured`]), for other
    /// encodings (OTLP).
    ///
    /// # Errors
    ///
    /// As [`Collector::collect`].
    pub fn collect_structured(
        &mut self,
        out: &mut String,
        structured: &mut Exposition,
    ) -> Result<()> {
        self.collect_inner(out, Some(structured))
    }

    fn collect_inner(
        &mut self,
        out: &mut String,
        structured: Option<&mut Exposition>,
    ) -> Result<()> {
        self.reader.latest_into(&mut self.snap)?;
        if !self.profiles_resolved {
            resolve_profiles(&mut self.renderer, &self.snap, self.name_field);
            self.profiles_resolved = true;
        }
        for o in &mut self.others {
            match o.reader.latest_into(&mut o.snap) {
                Ok(()) => {
                    if std::mem::take(&mut o.failing) {
                        log::info!("reading the {} rows works again", o.what);
                    }
                }
                Err(e) => {
                    if !std::mem::replace(&mut o.failing, true) {
                        log::warn!("reading the {} rows failed: {e}", o.what);
                    }
                    o.snap.clear();
                }
            }
        }
        self.check_health();
        self.read_p2p();
        self.read_info();
        let windows: &[EventWindow] = match &mut self.events {
            Some((reader, windows)) => {
                match reader.since_last_call() {
                    Ok(samples) => {
                        for (entity, fields) in &samples {
                            for w in windows.iter_mut() {
                                let Some(src) = w.kind().source_field() else {
                                    continue;
                                };
                                for s in fields.get(&src).into_iter().flatten() {
                                    if let Value::Int(v) = s.value {
                                        w.observe(entity.id, s.timestamp_us, v);
                                    }
                                }
                            }
                        }
                    }
                    Err(e) => log::warn!("reading XID / clock-event samples failed: {e}"),
                }
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_micros() as i64);
                for w in windows.iter_mut() {
                    w.prune(now);
                }
                windows
            }
            None => &[],
        };
        let mut snaps: Vec<&Snapshot> = Vec::with_capacity(1 + self.others.len());
        snaps.push(&self.snap);
        snaps.extend(self.others.iter().map(|o| &o.snap));
        match structured {
            Some(s) => self.renderer.render_structured(&snaps, windows, out, s),
            None => self.renderer.render_snapshots(&snaps, windows, out),
        }
        Ok(())
    }

    /// Runs the health check of `DCGM_EXP_GPU_HEALTH_STATUS` (making the health watch again
    /// after a reconnection or a failure).
    fn check_health(&mut self) {
        let Some(hw) = &mut self.health else {
            return;
        };
        let result = if hw.group.is_none() || hw.reconnects != self.reader.reconnects() {
            hw.open(&self.reader)
        } else {
            Ok(())
        }
        .and_then(|()| match &hw.group {
            Some(g) => g.health_check(),
            None => Err(Error::InvalidArgument("no health watch".into())),
        });
        let status = self.renderer.health_mut();
        match result {
            Ok(report) => {
                status
                    .get_or_insert_with(|| GpuHealth::new(hw.gpus.iter().copied()))
                    .apply(&report);
                if std::mem::take(&mut hw.failing) {
                    log::info!("the GPU health check works again");
                }
            }
            Err(e) => {
                *status = None;
                hw.group = None;
                if !std::mem::replace(&mut hw.failing, true) {
                    log::warn!("the GPU health check failed: {e}");
                }
            }
        }
    }

    /// Reads the fields of `DCGM_EXP_GPU_INFO`.
    fn read_info(&mut self) {
        let Some(info) = &mut self.info else {
            return;
        };
        match info.reader.latest_into(&mut info.snap) {
            Ok(()) => {
                let map = info
                    .snap
                    .iter()
                    .filter(|(e, _)| e.group == EntityGroup::Gpu)
                    .map(|(e, values)| (e.id, GpuInfo::from_values(values)))
                    .collect();
                self.renderer.set_gpu_info(Some(map));
                if std::mem::take(&mut info.failing) {
                    log::info!("reading the GPU info fields works again");
                }
            }
            Err(e) => {
                self.renderer.set_gpu_info(None);
                if !std::mem::replace(&mut info.failing, true) {
                    log::warn!("reading the GPU info fields failed: {e}");
                }
            }
        }
    }

    /// Reads the NVLink peer-to-peer status of `DCGM_EXP_P2P_STATUS`.
    fn read_p2p(&mut self) {
        let Some(failing) = &mut self.p2p else {
            return;
        };
        let result = match self.reader.handle() {
            Some(h) => h.system().nvlink_p2p_status(),
            None => Err(Error::InvalidArgument("not connected".into())),
        };
        match result {
            Ok(mut st) => {
                st.retain(|s| self.renderer.physical_gpus().any(|g| g == s.gpu));
                self.renderer.set_p2p(Some(st));
                if std::mem::take(failing) {
                    log::info!("reading the NVLink P2P status works again");
                }
            }
            Err(e) => {
                self.renderer.set_p2p(None);
                if !std::mem::replace(failing, true) {
                    log::warn!("reading the NVLink P2P status failed: {e}");
                }
            }
        }
    }
}

/// Names MIG profiles after `DCGM_FI_DEV_NAME` of each GPU instance, when DCGM reports a name
/// other than the GPU's model.
fn resolve_profiles(renderer: &mut Renderer, snap: &Snapshot, name_field: FieldId) {
    let mut ids = renderer.identities().to_vec();
    for id in &mut ids {
        let Some(m) = id.mig.as_mut() else {
            continue;
        };
        if let Some(Value::String(name)) = snap
            .get(&id.entity)
            .and_then(|f| f.get(&name_field))
            .map(|v| &v.value)
        {
            let name = name.trim();
            if !name.is_empty() && name != id.model_name {
                m.profile = name.to_string();
            }
        }
        if m.uuid.is_none()
            && let Some(Value::String(uuid)) = snap
                .get(&id.entity)
                .and_then(|f| f.get(&MIG_UUID_FIELD))
                .map(|v| &v.value)
            && uuid.starts_with("MIG-")
        {
            m.uuid = Some(uuid.clone());
        }
    }
    renderer.set_identities(ids);
}

/// Whether DCGM refused a watch the way it refuses profiling fields it cannot serve (no
/// profiling module or support, not root, the module held by another client). Any other
/// failure (a lost connection, a timeout, an argument rejected before DCGM is called) is not
/// a reason to export without the profiling rows: the start fails and is retried with them,
/// rather than dropping them for the life of the collector.
fn is_profiling_refusal(e: &Error) -> bool {
    use dcgm::ReturnCode as R;
    matches!(
        e,
        Error::Dcgm {
            code: R::NotSupported
                | R::RequiresRoot
                | R::NoPermission
                | R::ModuleNotLoaded
                | R::InUse
                | R::ProfilingNotSupported
                | R::ProfilingLibraryError
                | R::ProfilingMultiPass
                | R::GpuNotSupported
                | R::InsufficientDriverVersion
                | R::FieldUnsupportedByApi,
            ..
        }
    )
}

fn is_profiling(c: &Counter) -> bool {
    c.field_id()
        .is_some_and(|f| f.is_known() && f.name().starts_with("DCGM_FI_PROF_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_refusal_by_dcgm_drops_the_profiling_rows() {
        let dcgm = |code| Error::Dcgm {
            code,
            call: "dcgmWatchFields",
            message: None,
        };
        assert!(is_profiling_refusal(&dcgm(dcgm::ReturnCode::InUse)));
        assert!(is_profiling_refusal(&dcgm(dcgm::ReturnCode::RequiresRoot)));
        assert!(is_profiling_refusal(&dcgm(
            dcgm::ReturnCode::ProfilingNotSupported
        )));
        // A stopped host engine, a restart, or an interval DCGM cannot take: the start fails
        // and is retried with every row, rather than going on without them.
        assert!(!is_profiling_refusal(&dcgm(dcgm::ReturnCode::Timeout)));
        assert!(!is_profiling_refusal(&Error::ConnectionLost {
            call: "dcgmWatchFields"
        }));
        assert!(!is_profiling_refusal(&Error::InvalidArgument(
            "update interval too long".into()
        )));
    }
}
