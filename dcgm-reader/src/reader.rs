//! `Reader`: every watched field of every GPU (or entity) in one call.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dcgm::{
    ConnectionKind, Entity, EntityGroup, Error, FieldGroup, FieldId, FieldValue, Group, Handle,
    HandleBuilder, LogSeverity, OperationMode, Result, Value, Watch, WatchOptions,
};

use crate::defaults::DEFAULT_FIELD_IDS;
use crate::profiling;
use crate::since::SinceTracker;
use crate::since_background::{Answer, Background, Shared, SinceCore, clamp_period, lock};

/// How the reader reaches DCGM.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Connection {
    /// Use the local nv-hostengine if one answers, otherwise start the embedded engine (two
    /// engines on one node is a known way to hang the driver, so an existing one wins).
    #[default]
    Auto,
    /// Always start (or share) the embedded engine.
    Embedded,
    /// Connect to this host engine (`host`, `host:port`, `unix:///path`, ...).
    Remote(String),
}

/// Which connection the reader ended up with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChosenMode {
    /// The embedded engine of this process.
    Embedded,
    /// The nv-hostengine at this address.
    Standalone(String),
}

/// Identity of a GPU, available alongside its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuIdentity {
    /// The GPU id.
    pub gpu: u32,
    /// Its UUID.
    pub uuid: String,
    /// Its PCI bus id.
    pub pci_bus_id: String,
    /// Its product name.
    pub name: String,
}

/// One sample of a since-last-call read.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Microseconds since the Unix epoch.
    pub timestamp_us: i64,
    /// The value, or why there is none.
    pub value: Value,
}

/// Latest values: entity → field → value.
pub type Snapshot = BTreeMap<Entity, BTreeMap<FieldId, FieldValue>>;

/// Options of a [`Reader`], named after upstream `DcgmReader`'s.
#[derive(Debug, Clone)]
pub struct ReaderBuilder {
    fields: Vec<FieldId>,
    update_frequency: Duration,
    max_keep_age: Duration,
    max_keep_samples: u32,
    ignore: BTreeSet<FieldId>,
    gpu_ids: Option<Vec<u32>>,
    entities: Option<Vec<Entity>>,
    field_intervals: Option<BTreeMap<Duration, Vec<FieldId>>>,
    ignore_blank: bool,
    connection: Connection,
    library_path: Option<PathBuf>,
    simulator: bool,
    operation_mode: OperationMode,
    field_group_name: String,
    keep_engine: bool,
    since_fast_path: bool,
    since_recheck: Duration,
    since_background: bool,
    engine_log: Option<(String, LogSeverity)>,
}

impl Default for ReaderBuilder {
    fn default() -> Self {
        Self {
            fields: DEFAULT_FIELD_IDS.iter().map(|f| FieldId(*f)).collect(),
            update_frequency: Duration::from_secs(10),
            max_keep_age: Duration::from_secs(3600),
            max_keep_samples: 0,
            ignore: BTreeSet::new(),
            gpu_ids: None,
            entities: None,
            field_intervals: None,
            ignore_blank: true,
            connection: Connection::Auto,
            library_path: None,
            simulator: false,
            operation_mode: OperationMode::Auto,
            field_group_name: "dcgm_fieldgroupData".into(),
            keep_engine: false,
            since_fast_path: true,
            since_recheck: Duration::from_secs(10),
            since_background: true,
            engine_log: None,
        }
    }
}

impl ReaderBuilder {
    /// The fields to read (default: the 30 upstream defaults).
    pub fn fields(mut self, fields: &[FieldId]) -> Self {
        self.fields = fields.to_vec();
        self
    }

    /// Fields by name, alias, tag or number (`"DCGM_FI_DEV_GPU_TEMP"`, `"power_usage"`, `"203"`).
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a name, tag or number that DCGM 4.6's field table does not know
    /// (see [`FieldId::parse`]; no library is asked).
    pub fn field_names<S: AsRef<str>>(mut self, names: &[S]) -> Result<Self> {
        self.fields = names
            .iter()
            .map(|n| FieldId::parse(n.as_ref()))
            .collect::<Result<_>>()?;
        Ok(self)
    }

    /// How often DCGM samples the fields (default 10 s, as upstream).
    pub fn update_frequency(mut self, d: Duration) -> Self {
        self.update_frequency = d;
        self
    }

    /// How long samples are kept (default one hour, as upstream).
    pub fn max_keep_age(mut self, d: Duration) -> Self {
        self.max_keep_age = d;
        self
    }

    /// How many samples DCGM keeps per field (0, the default: as many as the age allows).
    pub fn max_keep_samples(mut self, n: u32) -> Self {
        self.max_keep_samples = n;
        self
    }

    /// Fields watched but left out of the results.
    pub fn ignore(mut self, fields: &[FieldId]) -> Self {
        self.ignore = fields.iter().copied().collect();
        self
    }

    /// Only these GPUs (default: all).
    pub fn gpu_ids(mut self, gpus: &[u32]) -> Self {
        self.gpu_ids = Some(gpus.to_vec());
        self
    }

    /// Arbitrary entities: MIG instances, NvSwitches, links, CPUs (takes precedence over
    /// `gpu_ids`).
    pub fn entities(mut self, entities: &[Entity]) -> Self {
        self.entities = Some(entities.to_vec());
        self
    }

    /// Fields per update interval (takes precedence over `fields`/`update_frequency`).
    pub fn field_intervals(mut self, map: BTreeMap<Duration, Vec<FieldId>>) -> Self {
        self.field_intervals = Some(map);
        self
    }

    /// Drop blank values from results (default: yes, as upstream).
    pub fn ignore_blank(mut self, yes: bool) -> Self {
        self.ignore_blank = yes;
        self
    }

    /// How to reach DCGM (default: [`Connection::Auto`]).
    pub fn connection(mut self, c: Connection) -> Self {
        self.connection = c;
        self
    }

    /// Load libdcgm from this path.
    pub fn library_path(mut self, p: impl Into<PathBuf>) -> Self {
        self.library_path = Some(p.into());
        self
    }

    /// Read from the dcgm-sim simulator (values are then labelled simulated).
    pub fn simulator(mut self) -> Self {
        self.simulator = true;
        self
    }

    /// Operation mode of an embedded engine (default AUTO).
    pub fn operation_mode(mut self, m: OperationMode) -> Self {
        self.operation_mode = m;
        self
    }

    /// Leaves an embedded engine running until the process exits instead of stopping it when
    /// the reader goes: for one-shot programs (see `dcgm::HandleBuilder::keep_engine_until_exit`
    /// for the trade-offs).
    pub fn keep_engine_until_exit(mut self, yes: bool) -> Self {
        self.keep_engine = yes;
        self
    }

    /// Answer [`Reader::since_last_call`] from one latest read when that is provably exact
    /// (default: yes). Off, every call pays the library's since-read, one request per
    /// (entity, field). See the crate's `since` module docs for when the fast path applies.
    pub fn since_fast_path(mut self, yes: bool) -> Self {
        self.since_fast_path = yes;
        self
    }

    /// How often the fast path of [`Reader::since_last_call`] reads the fields' sampling
    /// intervals again from the host engine's cache (default 10 s; one request per entity and
    /// field). A faster watch that another client adds is taken into account from then on.
    pub fn since_recheck(mut self, every: Duration) -> Self {
        self.since_recheck = every;
        self
    }

    /// Through a host engine whose sampling is faster than [`Reader::since_last_call`] is
    /// polled (another client watches the same fields faster, or the calls come slower than
    /// the watches), read the latest values on a background thread at the sampling interval,
    /// so that a poll costs a few latest reads rather than one request per (entity, field)
    /// (default: yes). Exact either way. See the crate's `since_background` module docs.
    pub fn since_background(mut self, yes: bool) -> Self {
        self.since_background = yes;
        self
    }

    /// Where an embedded engine started by the reader writes DCGM's own log, and at which
    /// severity (a path, or `-` for standard output as DCGM reads it). Ignored when the reader
    /// connects to a host engine, whose log is its own.
    pub fn engine_log(mut self, file: &str, severity: LogSeverity) -> Self {
        self.engine_log = Some((file.to_string(), severity));
        self
    }

    /// Prefix of the field-group names the reader creates.
    pub fn field_group_name(mut self, n: &str) -> Self {
        self.field_group_name = n.to_string();
        self
    }

    /// Builds the reader. It connects on first use (or [`Reader::connect`]).
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when there is no field to read, an update interval is zero, or a
    /// field id is not in DCGM 4.6's field table. Nothing is asked of DCGM yet: the errors of
    /// the connection come from the first read (or [`Reader::connect`]).
    pub fn build(self) -> Result<Reader> {
        let intervals = match &self.field_intervals {
            Some(m) => m.clone(),
            None => BTreeMap::from([(self.update_frequency, self.fields.clone())]),
        };
        if intervals.values().all(|f| f.is_empty()) {
            return Err(Error::InvalidArgument(
                "the reader needs at least one field".into(),
            ));
        }
        for (d, fs) in &intervals {
            if d.is_zero() {
                return Err(Error::InvalidArgument(
                    "update intervals must be above zero".into(),
                ));
            }
            if let Some(bad) = fs.iter().find(|f| !f.is_known()) {
                return Err(Error::InvalidArgument(format!(
                    "unknown field id {}",
                    bad.0
                )));
            }
        }
        Ok(Reader {
            opts: self,
            intervals,
            state: None,
            reconnects: 0,
            lost: false,
        })
    }
}

struct State {
    handle: Handle,
    mode: ChosenMode,
    group: Group,
    /// Field groups of at most 127 fields each, with their watches.
    field_groups: Vec<(FieldGroup, Watch)>,
    /// What since-last-call polls delivered, shared with the background reads.
    since: Shared,
    /// The background latest reads, once a poll through a host engine found its pairs
    /// sampled faster than it polls.
    background: Option<Background>,
    gpus: Vec<GpuIdentity>,
    scratch: Vec<FieldValue>,
    /// The (entity, field) pairs the current read wrote.
    written: Vec<(Entity, FieldId)>,
    /// What the connection left out, as logged once: fields of a later release, profiling
    /// fields the engine refused.
    warnings: Vec<String>,
}

/// Reads every watched field of every GPU (or entity) in one call.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let sim = dcgm::testing::simulator_path();
/// use dcgm_reader::Reader;
/// let mut reader = Reader::builder()
///     .library_path(sim)
///     .field_names(&["gpu_temp", "power_usage", "DCGM_FI_DEV_GPU_UTIL"])?
///     .build()?;
/// for (gpu, fields) in reader.latest_by_name()? {
///     println!("GPU {gpu}: {fields:?}");
/// }
/// # Ok(()) }
/// ```
pub struct Reader {
    opts: ReaderBuilder,
    intervals: BTreeMap<Duration, Vec<FieldId>>,
    state: Option<State>,
    reconnects: u64,
    /// The connection was lost and not yet re-established.
    lost: bool,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("mode", &self.mode())
            .field("intervals", &self.intervals)
            .field("reconnects", &self.reconnects)
            .finish()
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

impl Reader {
    /// Options.
    pub fn builder() -> ReaderBuilder {
        ReaderBuilder::default()
    }

    /// The connection in use, once connected.
    pub fn mode(&self) -> Option<&ChosenMode> {
        self.state.as_ref().map(|s| &s.mode)
    }

    /// Whether the values come from the dcgm-sim simulator.
    pub fn is_simulated(&self) -> Option<bool> {
        self.state.as_ref().map(|s| s.handle.is_simulated())
    }

    /// How many times the reader re-established a lost connection.
    pub fn reconnects(&self) -> u64 {
        self.reconnects
    }

    /// The handle in use, once connected.
    pub fn handle(&self) -> Option<&Handle> {
        self.state.as_ref().map(|s| &s.handle)
    }

    /// What the connection left out of its watches, one line each as logged (fields added in a
    /// later DCGM release; profiling fields the engine refused): empty when every field is
    /// watched, or before the reader connects.
    pub fn warnings(&self) -> &[String] {
        self.state.as_ref().map_or(&[], |s| &s.warnings)
    }

    /// Connects now (otherwise the first read does).
    ///
    /// Fields a library does not know (added in a later DCGM release) are left out of the
    /// watches, and profiling fields an engine refuses to watch (no profiling module, a GPU
    /// without profiling metrics, `DCGM_ST_MODULE_NOT_LOADED` and the like) are dropped from
    /// them: the other fields are read, those have no value, and a warning names them once per
    /// connection.
    ///
    /// # Errors
    ///
    /// `LibraryNotFound` (or `SimulatorNotFound`) when no libdcgm loads; `ConnectFailed` when
    /// the host engine of [`Connection::Remote`] does not answer; `SimulatorConfig` for a
    /// simulator whose configuration is wrong; DCGM's code (`Error::Dcgm`) when the engine
    /// refuses to start, or to create the reader's group, field groups or watches (too many
    /// field groups: `DCGM_ST_MAX_LIMIT`; a GPU id it does not know: `DCGM_ST_BADPARAM`).
    pub fn connect(&mut self) -> Result<()> {
        if self.state.is_none() {
            self.state = Some(self.open()?);
        }
        Ok(())
    }

    /// Drops the connection and everything the reader created in DCGM.
    pub fn shutdown(&mut self) {
        self.state = None;
    }

    fn handle_builder(&self) -> HandleBuilder {
        let mut b = Handle::builder()
            .operation_mode(self.opts.operation_mode)
            .keep_engine_until_exit(self.opts.keep_engine);
        if let Some(p) = &self.opts.library_path {
            b = b.library_path(p);
        } else if self.opts.simulator {
            b = b.simulator();
        }
        if let Some((file, severity)) = &self.opts.engine_log {
            b = b.log_file(file.clone()).log_severity(*severity);
        }
        b
    }

    fn open_handle(&self) -> Result<(Handle, ChosenMode)> {
        match &self.opts.connection {
            Connection::Embedded => Ok((self.handle_builder().embedded()?, ChosenMode::Embedded)),
            Connection::Remote(addr) => Ok((
                self.handle_builder().connect(addr)?,
                ChosenMode::Standalone(addr.clone()),
            )),
            Connection::Auto => match self.handle_builder().connect("localhost") {
                Ok(h) => Ok((h, ChosenMode::Standalone("localhost".into()))),
                Err(Error::ConnectFailed { .. }) | Err(Error::Dcgm { .. }) => {
                    Ok((self.handle_builder().embedded()?, ChosenMode::Embedded))
                }
                Err(e) => Err(e),
            },
        }
    }

    fn open(&self) -> Result<State> {
        let (handle, mode) = self.open_handle()?;
        let n = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let group = match (&self.opts.entities, &self.opts.gpu_ids) {
            (Some(ents), _) => {
                Group::with_entities(&handle, &format!("dcgmreader_{pid}_{n}"), ents)?
            }
            (None, Some(gpus)) => {
                Group::with_gpus(&handle, &format!("dcgmreader_{pid}_{n}"), gpus)?
            }
            (None, None) => Group::all_gpus(&handle),
        };
        let mut field_groups = Vec::new();
        let mut warnings = Vec::new();
        for (i, (interval, fields)) in self.intervals.iter().enumerate() {
            for (j, chunk) in fields.chunks(dcgm::MAX_FIELDS_PER_FIELD_GROUP).enumerate() {
                let name = format!("{}_{pid}_{n}_{i}_{j}", self.opts.field_group_name);
                let fg = FieldGroup::create(&handle, &name, chunk)?;
                if !fg.left_out().is_empty() {
                    // Added in a later DCGM release: no value for them, said once per connection.
                    let w = format!(
                        "fields not in this DCGM release ({}), left out: {}",
                        handle
                            .dcgm_version()
                            .map_or_else(|| "version unknown".into(), |v| v.to_string()),
                        fg.left_out()
                            .iter()
                            .map(|f| f.0.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                    log::warn!("{w}");
                    warnings.push(w);
                }
                let opts = WatchOptions {
                    update_interval: *interval,
                    max_keep_age: self.opts.max_keep_age,
                    max_keep_samples: self.opts.max_keep_samples,
                };
                match group.watch(&fg, opts) {
                    Ok(w) => field_groups.push((fg, w)),
                    Err(e)
                        if profiling::is_refusal(&e)
                            && chunk.iter().any(|f| profiling::is_profiling(*f)) =>
                    {
                        // The engine has no profiling module (or cannot serve it): the other
                        // fields are read without them; theirs stay unread (no value).
                        let (prof, rest): (Vec<FieldId>, Vec<FieldId>) =
                            chunk.iter().partition(|f| profiling::is_profiling(**f));
                        let w = format!(
                            "the profiling fields cannot be watched here ({e}); reading without \
                             them: {}",
                            prof.iter()
                                .map(|f| f.0.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        );
                        log::warn!("{w}");
                        warnings.push(w);
                        drop(fg);
                        if !rest.is_empty() {
                            let fg = FieldGroup::create(&handle, &format!("{name}_np"), &rest)?;
                            let w = group.watch(&fg, opts)?;
                            field_groups.push((fg, w));
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        // Take a first sample now, so the first read has data (upstream's first since-read is
        // empty).
        handle.update_all_fields(true)?;
        let sys = handle.system();
        let gpu_ids: Vec<u32> = match (&self.opts.entities, &self.opts.gpu_ids) {
            (Some(ents), _) => ents
                .iter()
                .filter(|e| e.group == EntityGroup::Gpu)
                .map(|e| e.id)
                .collect(),
            (None, Some(g)) => g.clone(),
            (None, None) => sys.gpu_ids()?,
        };
        let mut gpus = Vec::new();
        for gpu in gpu_ids {
            let a = sys.device_attributes(gpu)?;
            gpus.push(GpuIdentity {
                gpu,
                uuid: a.uuid,
                pci_bus_id: a.pci_bus_id,
                name: a.name,
            });
        }
        Ok(State {
            handle,
            mode,
            group,
            field_groups,
            since: Arc::new(Mutex::new(SinceCore::new(SinceTracker::new(
                self.intervals.keys().max().copied().unwrap_or_default(),
            )))),
            background: None,
            gpus,
            scratch: Vec::new(),
            written: Vec::new(),
            warnings,
        })
    }

    /// Runs `f` on the connected state; a lost connection is dropped, logged, re-established
    /// once, and `f` retried on the fresh connection. Nothing read before the loss is returned
    /// as fresh.
    fn with_state<T>(
        &mut self,
        mut f: impl FnMut(&mut State, &BTreeSet<FieldId>, bool) -> Result<T>,
    ) -> Result<T> {
        let mut retried = false;
        loop {
            if self.state.is_none() {
                match self.open() {
                    Ok(s) => {
                        if self.lost {
                            self.lost = false;
                            self.reconnects += 1;
                            log::info!("dcgm-reader: reconnected ({:?})", s.mode);
                        }
                        self.state = Some(s);
                    }
                    Err(e) => {
                        if self.lost {
                            log::warn!("dcgm-reader: reconnect failed: {e}");
                        }
                        return Err(e);
                    }
                }
            }
            let st = self.state.as_mut().expect("just opened");
            match f(st, &self.opts.ignore, self.opts.ignore_blank) {
                Err(Error::ConnectionLost { call }) if !retried => {
                    log::warn!("dcgm-reader: connection lost in {call}; reconnecting");
                    self.state = None;
                    self.lost = true;
                    retried = true;
                }
                r => return r,
            }
        }
    }

    /// GPUs read, with UUID and PCI bus id.
    ///
    /// # Errors
    ///
    /// Those of [`Reader::connect`] when the reader is not connected yet, or reconnects after
    /// losing its connection; `ConnectionLost` when the connection is lost again on the fresh
    /// connection (a lost connection is re-established once per call); DCGM's code
    /// (`Error::Dcgm`) for a read the library refuses.
    pub fn gpus(&mut self) -> Result<Vec<GpuIdentity>> {
        self.with_state(|s, _, _| Ok(s.gpus.clone()))
    }

    /// Latest value of every field for every entity.
    ///
    /// # Errors
    ///
    /// Those of [`Reader::connect`] when the reader is not connected yet, or reconnects after
    /// losing its connection; `ConnectionLost` when the connection is lost again on the fresh
    /// connection (a lost connection is re-established once per call); DCGM's code
    /// (`Error::Dcgm`) for a read the library refuses.
    pub fn latest(&mut self) -> Result<Snapshot> {
        let mut snap = Snapshot::new();
        self.latest_into(&mut snap)?;
        Ok(snap)
    }

    /// Like [`Reader::latest`], updating `snap` in place: entries whose entity and field are
    /// already there are overwritten without allocating, entries with no value this time are
    /// removed. In a polling loop this keeps the reader allocation-free in steady state (apart
    /// from string values).
    ///
    /// # Errors
    ///
    /// As [`Reader::latest`]; `snap` may then hold part of this read.
    pub fn latest_into(&mut self, snap: &mut Snapshot) -> Result<()> {
        self.with_state(|s, ignore, ignore_blank| {
            s.written.clear();
            for (fg, _) in &s.field_groups {
                s.group.latest_values_into(fg, &mut s.scratch)?;
                for v in s.scratch.drain(..) {
                    if ignore.contains(&v.field) || (ignore_blank && v.value.is_blank()) {
                        continue;
                    }
                    let (entity, field) = (v.entity, v.field);
                    s.written.push((entity, field));
                    match snap.get_mut(&entity).and_then(|m| m.get_mut(&field)) {
                        Some(slot) => *slot = v,
                        None => {
                            snap.entry(entity).or_default().insert(field, v);
                        }
                    }
                }
            }
            // Entries this read did not write (now blank, or no longer watched) go away.
            let total: usize = snap.values().map(BTreeMap::len).sum();
            if total != s.written.len() {
                s.written.sort_unstable();
                let written = &s.written;
                for (e, fields) in snap.iter_mut() {
                    fields.retain(|f, _| written.binary_search(&(*e, *f)).is_ok());
                }
                snap.retain(|_, fields| !fields.is_empty());
            }
            Ok(())
        })
    }

    /// The latest value of every field for every entity, as the library returned them, into
    /// `out` (cleared first; fields of the ignore list, and blanks when the reader ignores
    /// them, left out). Values come entity by entity. The cheapest read: no map is built,
    /// and `out` keeps its capacity from call to call.
    ///
    /// # Errors
    ///
    /// As [`Reader::latest`]; `out` may then hold part of this read.
    pub fn latest_values_into(&mut self, out: &mut Vec<FieldValue>) -> Result<()> {
        out.clear();
        self.with_state(|s, ignore, ignore_blank| {
            out.clear();
            for (fg, _) in &s.field_groups {
                s.group.latest_values_into(fg, &mut s.scratch)?;
                out.extend(s.scratch.drain(..).filter(|v| {
                    !ignore.contains(&v.field) && (!ignore_blank || !v.value.is_blank())
                }));
            }
            Ok(())
        })
    }

    /// `{gpu: {field id: value}}` (upstream `GetLatestGpuValuesAsFieldIdDict`).
    ///
    /// # Errors
    ///
    /// As [`Reader::latest`].
    pub fn latest_by_id(&mut self) -> Result<BTreeMap<u32, BTreeMap<FieldId, Value>>> {
        Ok(gpu_only(self.latest()?, |f| f))
    }

    /// `{gpu: {tag: value}}` (upstream `GetLatestGpuValuesAsFieldNameDict`).
    ///
    /// # Errors
    ///
    /// As [`Reader::latest`].
    pub fn latest_by_name(&mut self) -> Result<BTreeMap<u32, BTreeMap<String, Value>>> {
        Ok(gpu_only(self.latest()?, |f| f.tag()))
    }

    /// Every sample since the previous call (the first call: every sample kept so far), per
    /// entity and field, oldest first. Nothing is lost or repeated between calls.
    ///
    /// When polled at the fields' update interval, most calls cost one latest read rather
    /// than the library's since-read (one request per entity and field): see
    /// [`ReaderBuilder::since_fast_path`].
    ///
    /// # Errors
    ///
    /// As [`Reader::latest`], and the error a background read of this connection met since
    /// the previous call (it is returned once).
    pub fn since_last_call(&mut self) -> Result<BTreeMap<Entity, BTreeMap<FieldId, Vec<Sample>>>> {
        let (fast, recheck) = (self.opts.since_fast_path, self.opts.since_recheck);
        let background = self.opts.since_background;
        self.with_state(|s, ignore, ignore_blank| {
            let mut out: BTreeMap<Entity, BTreeMap<FieldId, Vec<Sample>>> = BTreeMap::new();
            let mut keep = |v: &FieldValue| {
                if ignore.contains(&v.field) || (ignore_blank && v.value.is_blank()) {
                    return;
                }
                out.entry(v.entity)
                    .or_default()
                    .entry(v.field)
                    .or_default()
                    .push(Sample {
                        timestamp_us: v.timestamp_us,
                        value: v.value.clone(),
                    });
            };
            let shared = Arc::clone(&s.since);
            let mut core = lock(&shared);
            if let Some(e) = core.failed.take() {
                return Err(e);
            }
            // What the background reads delivered since the previous poll comes first.
            let waiting = std::mem::take(&mut core.pending);
            let had_waiting = !waiting.is_empty();
            waiting.iter().for_each(&mut keep);
            let mut crowded = false;
            if fast {
                // A background read of less than one of its intervals ago stands for this
                // poll's own latest read: its pairs left waiting are answered from it.
                let period = core.background_period;
                let recent = core
                    .background_latest
                    .take()
                    .is_some_and(|t| t.elapsed() < period);
                if !recent {
                    let mut latest = std::mem::take(&mut core.latest);
                    latest.clear();
                    for (fg, _) in &s.field_groups {
                        s.group.latest_values_into(fg, &mut s.scratch)?;
                        latest.append(&mut s.scratch);
                    }
                    core.latest = latest;
                }
                if core.tracker.stale(recheck) {
                    let SinceCore {
                        tracker, latest, ..
                    } = &mut *core;
                    tracker.check_intervals(&s.handle, latest);
                    if let Some(fastest) = tracker.fastest_interval() {
                        core.background_period = clamp_period(fastest);
                    }
                    core.background_gave_up = false;
                } else {
                    match core.answer(&s.handle, false)? {
                        Answer::Delivered(vals) => {
                            vals.iter().for_each(&mut keep);
                            core.tracker.fast_polls += 1;
                            if had_waiting {
                                sort_samples(&mut out);
                            }
                            return Ok(out);
                        }
                        Answer::Crowded => crowded = true,
                        Answer::Slow => {}
                    }
                }
            }
            // The library's since-read from the floor, less what earlier polls delivered.
            let mut vals = Vec::new();
            for (fg, _) in &s.field_groups {
                vals.extend(s.group.values_since(fg, &mut core.tracker.cursor())?);
            }
            core.tracker.take_new(&vals).iter().for_each(&mut keep);
            if had_waiting {
                sort_samples(&mut out);
            }
            let SinceCore {
                tracker,
                latest,
                background_gave_up,
                ..
            } = &mut *core;
            tracker.seen(&vals);
            tracker.seen(latest);
            tracker.slow_polls += 1;
            // Sampled faster than this poll's rate, through a host engine: read the latest
            // values in the background at the sampling interval from now on.
            let start = crowded
                && background
                && matches!(s.mode, ChosenMode::Standalone(_))
                && !s.background.as_ref().is_some_and(Background::running);
            // The pairs are listed only when the reads start, not on every slow poll.
            let plan = tracker
                .fastest_interval()
                .filter(|_| start && !*background_gave_up)
                .map(|period| {
                    let entities = unique(latest.iter().map(|v| v.entity));
                    let fields = unique(latest.iter().map(|v| v.field));
                    (period, entities, fields)
                });
            drop(core);
            if let Some((period, entities, fields)) = plan {
                s.background = None;
                match Background::start(&s.handle, &s.since, entities, fields, period) {
                    Ok(b) => s.background = Some(b),
                    Err(e) => log::warn!("since: no background reads (thread not started: {e})"),
                }
            }
            Ok(out)
        })
    }

    /// How [`Reader::since_last_call`] answered so far on this connection: polls served by
    /// one latest read, and polls that took the library's since-read.
    pub fn since_path_counts(&self) -> (u64, u64) {
        self.state.as_ref().map_or((0, 0), |s| {
            let core = lock(&s.since);
            (core.tracker.fast_polls, core.tracker.slow_polls)
        })
    }

    /// The background latest reads of [`Reader::since_last_call`] on this connection (see
    /// [`ReaderBuilder::since_background`]): how many delivered samples, and the time they
    /// spent reading and judging, requests included.
    pub fn since_background_counts(&self) -> (u64, Duration) {
        self.state.as_ref().map_or((0, Duration::ZERO), |s| {
            let core = lock(&s.since);
            (core.background_reads, core.background_busy)
        })
    }

    /// Calls `handler` with a fresh snapshot every `interval`, `count` times (or forever with
    /// `None`), like upstream's `Process` with a custom data handler. Stops at the first error
    /// the reader cannot recover from, or when the handler returns `false`.
    ///
    /// # Errors
    ///
    /// The first error of a read (as [`Reader::latest`]); the handler has seen every snapshot
    /// before it.
    pub fn run(
        &mut self,
        interval: Duration,
        count: Option<u64>,
        mut handler: impl FnMut(&Snapshot) -> bool,
    ) -> Result<()> {
        let mut n = 0;
        loop {
            let snap = self.latest()?;
            n += 1;
            if !handler(&snap) || count.is_some_and(|c| n >= c) {
                return Ok(());
            }
            std::thread::sleep(interval);
        }
    }

    /// An iterator of snapshots, one every `interval` (the first at once).
    pub fn snapshots(&mut self, interval: Duration) -> Snapshots<'_> {
        Snapshots {
            reader: self,
            interval,
            first: true,
        }
    }
}

/// Snapshots at a fixed interval; see [`Reader::snapshots`].
pub struct Snapshots<'a> {
    reader: &'a mut Reader,
    interval: Duration,
    first: bool,
}

impl Iterator for Snapshots<'_> {
    type Item = Result<Snapshot>;
    fn next(&mut self) -> Option<Self::Item> {
        if !self.first {
            std::thread::sleep(self.interval);
        }
        self.first = false;
        Some(self.reader.latest())
    }
}

/// Puts every pair's samples in time order (background reads and a since-read can deliver a
/// late-stored sample after a newer one).
fn sort_samples(out: &mut BTreeMap<Entity, BTreeMap<FieldId, Vec<Sample>>>) {
    for samples in out.values_mut().flat_map(|f| f.values_mut()) {
        samples.sort_by_key(|s| s.timestamp_us);
    }
}

/// The distinct items, in first-seen order.
fn unique<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

fn gpu_only<K: Ord>(
    snap: Snapshot,
    key: impl Fn(FieldId) -> K,
) -> BTreeMap<u32, BTreeMap<K, Value>> {
    snap.into_iter()
        .filter(|(e, _)| e.group == EntityGroup::Gpu)
        .map(|(e, fields)| {
            (
                e.id,
                fields.into_iter().map(|(f, v)| (key(f), v.value)).collect(),
            )
        })
        .collect()
}

impl From<&ConnectionKind> for ChosenMode {
    fn from(k: &ConnectionKind) -> Self {
        match k {
            ConnectionKind::Embedded => ChosenMode::Embedded,
            ConnectionKind::Standalone(a) => ChosenMode::Standalone(a.clone()),
        }
    }
}
