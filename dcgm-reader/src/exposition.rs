//! Prometheus exposition of DCGM values, compatible with NVIDIA's dcgm-exporter.
//!
//! * [`Renderer`] writes a [`Snapshot`] as Prometheus text exposition format 0.0.4: one
//!   `# HELP`/`# TYPE` pair per metric family, families sorted by name, series in a fixed
//!   entity order, label values escaped, blank values left out (never a sentinel number). It
//!   writes into a `String` you keep and reuse; in steady state it allocates nothing per
//!   value.
//! * Every series carries dcgm-exporter's labels: `gpu`, `UUID`, `pci_bus_id`, `device`
//!   (`nvidiaN`), `modelName`, `Hostname`, and for MIG GPU instances `GPU_I_PROFILE` and
//!   `GPU_I_ID`; then one label per `label` row of the counters file (`DCGM_FI_DRIVER_VERSION`,
//!   ...), named as written in the file.
//! * [`DeviceSelection`] is dcgm-exporter's `-d` syntax (`f`, `g`, `g:0,1`, `g:0-3`, `i`,
//!   `i:0,2-4`); [`discover_entities`] turns it into the entities to read, with their
//!   identities.
//! * [`EventWindow`] counts XID errors and clock events over a sliding window, for the
//!   `DCGM_EXP_XID_ERRORS_COUNT` and `DCGM_EXP_CLOCK_EVENTS_COUNT` rows.
//! * [`Collector`] ties it together: it connects, discovers, watches and renders.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let _lock = dcgm::testing::SimulatorLock::new(None)?;
//! use dcgm_reader::{Collector, CollectorConfig, parse_counters};
//! let counters = parse_counters(
//!     "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (C).\n\
//!      DCGM_FI_DRIVER_VERSION, label, Driver version.\n",
//! )?;
//! let mut collector = Collector::new(CollectorConfig {
//!     library_path: Some(dcgm::testing::simulator_path()),
//!     ..CollectorConfig::new(counters)
//! })?;
//! let mut text = String::new();
//! collector.collect(&mut text)?;
//! assert!(text.contains("# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"));
//! assert!(text.contains("DCGM_FI_DRIVER_VERSION=\""));
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dcgm::{Entity, EntityGroup, Error, FieldId, Handle, Result, Value};

use crate::counters::{Counter, CounterField, ExporterCounter, MetricKind, counter_fields};
use crate::reader::{Connection, Reader, Snapshot};

/// Name of the gauge that tells whether the values are simulated.
pub const SIMULATED_METRIC: &str = "dcgm_exporter_simulated";

/// Label used for the window size of the windowed exporter rows (as dcgm-exporter).
pub const WINDOW_LABEL: &str = "window_size_in_ms";

/// A MIG GPU instance's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigInstance {
    /// NVML's GPU-instance id within its GPU (the `GPU_I_ID` label).
    pub instance_id: u32,
    /// The profile name, e.g. `3g.40gb` (the `GPU_I_PROFILE` label).
    pub profile: String,
    /// Slices of the profile (used to name the profile when DCGM does not).
    pub slices: u32,
}

/// Who a series belongs to: an entity (a GPU or a MIG GPU instance) and the physical GPU
/// behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityIdentity {
    /// The entity the values are read from.
    pub entity: Entity,
    /// The physical GPU's id (the `gpu` label; `device` is `nvidia<gpu>`).
    pub gpu: u32,
    /// The physical GPU's UUID.
    pub uuid: String,
    /// The physical GPU's PCI bus id.
    pub pci_bus_id: String,
    /// The physical GPU's model (`modelName`).
    pub model_name: String,
    /// Set for a MIG GPU instance.
    pub mig: Option<MigInstance>,
}

impl EntityIdentity {
    /// A whole GPU.
    pub fn gpu(gpu: u32, uuid: &str, pci_bus_id: &str, model_name: &str) -> Self {
        Self {
            entity: Entity::gpu(gpu),
            gpu,
            uuid: uuid.into(),
            pci_bus_id: pci_bus_id.into(),
            model_name: model_name.into(),
            mig: None,
        }
    }

    fn sort_key(&self) -> (u32, u32, u32) {
        (
            self.gpu,
            u32::from(self.mig.is_some()),
            self.mig.as_ref().map_or(0, |m| m.instance_id),
        )
    }
}

/// How series are labelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelOptions {
    /// Value of the host-name label; `None` leaves the label out (dcgm-exporter's
    /// `--no-hostname`).
    pub hostname: Option<String>,
    /// Name of the host-name label: `Hostname`, as dcgm-exporter 4.x (the unreleased
    /// dcgm-exporter main spells it `hostname`).
    pub hostname_label: String,
    /// Name of the UUID label: `UUID` (dcgm-exporter's `--use-old-namespace` uses `uuid`).
    pub uuid_label: String,
    /// Replace the blanks of model names with dashes (dcgm-exporter's
    /// `--replace-blanks-in-model-name`).
    pub replace_blanks_in_model_name: bool,
}

impl Default for LabelOptions {
    fn default() -> Self {
        Self {
            hostname: Some(default_hostname(None)),
            hostname_label: "Hostname".into(),
            uuid_label: "UUID".into(),
            replace_blanks_in_model_name: false,
        }
    }
}

/// The host name dcgm-exporter would label series with: the host of a remote host engine
/// (`host:port`) unless it is local, otherwise `NODE_NAME`, otherwise this machine's name.
pub fn default_hostname(remote_hostengine: Option<&str>) -> String {
    if let Some(r) = remote_hostengine {
        let host = split_host(r);
        if !host.is_empty() && !host.starts_with('/') && !r.starts_with("unix://") {
            return host.to_string();
        }
    }
    if let Ok(n) = std::env::var("NODE_NAME")
        && !n.is_empty()
    {
        return n;
    }
    for p in ["/proc/sys/kernel/hostname", "/etc/hostname"] {
        if let Ok(s) = std::fs::read_to_string(p) {
            let s = s.trim();
            if !s.is_empty() {
                return s.to_string();
            }
        }
    }
    std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into())
}

fn split_host(addr: &str) -> &str {
    let a = addr.strip_prefix("tcp://").unwrap_or(addr);
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match a.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) && !h.contains(':') => h,
        _ => a,
    }
}

/// Which entities to export, in dcgm-exporter's `-d` syntax.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DeviceSelection {
    /// `f`: every GPU, except that a GPU in MIG mode is replaced by its GPU instances.
    #[default]
    Flex,
    /// `g` (every GPU) or `g:0,1`, `g:0-3` (these GPU ids).
    Gpus(Option<Vec<u32>>),
    /// `i` (every MIG GPU instance) or `i:0,2-4` (these GPU-instance entity ids).
    GpuInstances(Option<Vec<u32>>),
}

impl FromStr for DeviceSelection {
    type Err = String;

    /// ```
    /// use dcgm_reader::DeviceSelection;
    /// assert_eq!("f".parse(), Ok(DeviceSelection::Flex));
    /// assert_eq!("g:0,2-3".parse(), Ok(DeviceSelection::Gpus(Some(vec![0, 2, 3]))));
    /// assert_eq!("i".parse(), Ok(DeviceSelection::GpuInstances(None)));
    /// assert!("f:1".parse::<DeviceSelection>().is_err());
    /// ```
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let s = s.trim();
        let (letter, range) = match s.split_once(':') {
            Some((l, r)) => (l, Some(r)),
            None => (s, None),
        };
        let ids = match range {
            None => None,
            Some(r) => Some(parse_id_list(r)?),
        };
        match (letter, ids) {
            ("f", None) => Ok(Self::Flex),
            ("f", Some(_)) => Err("no id list can follow 'f'".into()),
            ("g", ids) => Ok(Self::Gpus(ids)),
            ("i", ids) => Ok(Self::GpuInstances(ids)),
            _ => Err(format!(
                "invalid device option {s:?}: expected f, g, g:<ids>, i or i:<ids> (ids like 0,2-4)"
            )),
        }
    }
}

fn parse_id_list(r: &str) -> std::result::Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in r.split(',') {
        let part = part.trim();
        let num = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("{t:?} is not an id (in {r:?})"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("empty range {part:?}"));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.dedup();
    Ok(out)
}

/// The entities a [`DeviceSelection`] names, with their identities, in export order.
///
/// A MIG instance's profile starts as `<slices>g`; [`Collector`] replaces it with the name
/// DCGM reports for the instance (`DCGM_FI_DEV_NAME` of the GPU instance, as dcgm-exporter
/// does), when DCGM reports one.
pub fn discover_entities(
    handle: &Handle,
    selection: &DeviceSelection,
) -> Result<Vec<EntityIdentity>> {
    let sys = handle.system();
    let mut gpus = BTreeMap::new();
    for gpu in sys.gpu_ids()? {
        let a = sys.device_attributes(gpu)?;
        gpus.insert(
            gpu,
            EntityIdentity::gpu(gpu, &a.uuid, &a.pci_bus_id, &a.name),
        );
    }
    let needs_mig = !matches!(selection, DeviceSelection::Gpus(_));
    let mig = if needs_mig {
        match sys.mig_hierarchy() {
            Ok(m) => m,
            Err(e) if *selection == DeviceSelection::Flex => {
                log::warn!("MIG hierarchy unavailable ({e}); exporting whole GPUs");
                Vec::new()
            }
            Err(e) => return Err(e),
        }
    } else {
        Vec::new()
    };
    let mut instances = Vec::new();
    for m in &mig {
        let Some(parent) = gpus.get(&m.gpu) else {
            continue;
        };
        for gi in &m.instances {
            instances.push(EntityIdentity {
                entity: Entity::new(EntityGroup::GpuInstance, gi.entity_id),
                mig: Some(MigInstance {
                    instance_id: gi.nvml_instance_id,
                    profile: format!("{}g", gi.slices),
                    slices: gi.slices,
                }),
                ..parent.clone()
            });
        }
    }
    let mut out: Vec<EntityIdentity> = match selection {
        DeviceSelection::Flex => gpus
            .values()
            .flat_map(|g| {
                let mine: Vec<_> = instances
                    .iter()
                    .filter(|i| i.gpu == g.gpu)
                    .cloned()
                    .collect();
                if mine.is_empty() {
                    vec![g.clone()]
                } else {
                    mine
                }
            })
            .collect(),
        DeviceSelection::Gpus(None) => gpus.values().cloned().collect(),
        DeviceSelection::Gpus(Some(ids)) => ids
            .iter()
            .map(|id| {
                gpus.get(id)
                    .cloned()
                    .ok_or_else(|| Error::InvalidArgument(format!("GPU {id} does not exist")))
            })
            .collect::<Result<_>>()?,
        DeviceSelection::GpuInstances(None) => {
            if instances.is_empty() {
                return Err(Error::InvalidArgument(
                    "no MIG GPU instances: 'i' needs a GPU in MIG mode".into(),
                ));
            }
            instances
        }
        DeviceSelection::GpuInstances(Some(ids)) => ids
            .iter()
            .map(|id| {
                instances
                    .iter()
                    .find(|i| i.entity.id == *id)
                    .cloned()
                    .ok_or_else(|| {
                        Error::InvalidArgument(format!("GPU instance {id} does not exist"))
                    })
            })
            .collect::<Result<_>>()?,
    };
    out.sort_by_key(EntityIdentity::sort_key);
    Ok(out)
}

/// Names of the clock-event (clock throttling) reason bits, as dcgm-exporter labels them.
pub const CLOCK_EVENT_REASONS: [(i64, &str); 9] = [
    (0x1, "gpu_idle"),
    (0x2, "clocks_setting"),
    (0x4, "power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal"),
    (0x40, "hw_thermal"),
    (0x80, "hw_power_brake"),
    (0x100, "display_clocks"),
];

/// Counts events of one kind per GPU over a sliding window, for the windowed exporter rows.
///
/// * XID errors (`DCGM_FI_DEV_XID_ERRORS` holds the last XID): a sample is a new event when
///   it is non-zero and differs from the GPU's previous sample, or follows it after more than
///   twice the sampling interval (DCGM records an XID sample per error; a host engine that
///   re-samples the field every interval repeats the last XID, which is not a new error).
/// * Clock events (`DCGM_FI_DEV_CLOCKS_EVENT_REASONS` is a bit mask): an event is a reason
///   bit that is set in a sample and was not in the GPU's previous sample.
///
/// Counts are by key (the XID number, or the reason bit) and cover the events whose sample
/// time is within the window.
#[derive(Debug, Clone)]
pub struct EventWindow {
    kind: ExporterCounter,
    window: Duration,
    interval_us: i64,
    gpus: BTreeMap<u32, GpuEvents>,
}

#[derive(Debug, Clone, Default)]
struct GpuEvents {
    last: Option<(i64, i64)>,
    events: VecDeque<(i64, i64)>,
}

impl EventWindow {
    /// A window for `kind` ([`ExporterCounter::XidErrorsCount`] or
    /// [`ExporterCounter::ClockEventsCount`]), whose source field is sampled every
    /// `sample_interval`.
    pub fn new(kind: ExporterCounter, window: Duration, sample_interval: Duration) -> Self {
        Self {
            kind,
            window,
            interval_us: sample_interval.as_micros().min(i64::MAX as u128) as i64,
            gpus: BTreeMap::new(),
        }
    }

    /// Which row this window feeds.
    pub fn kind(&self) -> ExporterCounter {
        self.kind
    }

    /// The window.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// Takes one sample of the source field of `gpu` (samples of a GPU in time order).
    pub fn observe(&mut self, gpu: u32, timestamp_us: i64, value: i64) {
        let g = self.gpus.entry(gpu).or_default();
        match self.kind {
            ExporterCounter::XidErrorsCount => {
                let new = value != 0
                    && match g.last {
                        None => true,
                        Some((ts, v)) => v != value || timestamp_us - ts > 2 * self.interval_us,
                    };
                if new {
                    g.events.push_back((timestamp_us, value));
                }
            }
            ExporterCounter::ClockEventsCount => {
                let before = g.last.map_or(0, |(_, v)| v);
                for (bit, _) in CLOCK_EVENT_REASONS {
                    if value & bit != 0 && before & bit == 0 {
                        g.events.push_back((timestamp_us, bit));
                    }
                }
            }
            ExporterCounter::GpuHealthStatus | ExporterCounter::P2pStatus => {}
        }
        g.last = Some((timestamp_us, value));
    }

    /// Forgets the events older than the window, as of `now_us` (µs since the epoch).
    pub fn prune(&mut self, now_us: i64) {
        let start = now_us - self.window.as_micros().min(i64::MAX as u128) as i64;
        for g in self.gpus.values_mut() {
            while g.events.front().is_some_and(|(ts, _)| *ts < start) {
                g.events.pop_front();
            }
        }
    }

    /// The counts of `gpu`'s events by key, sorted by key, into `out` (cleared first).
    pub fn counts_into(&self, gpu: u32, out: &mut Vec<(i64, u64)>) {
        out.clear();
        let Some(g) = self.gpus.get(&gpu) else {
            return;
        };
        for (_, key) in &g.events {
            match out.iter_mut().find(|(k, _)| k == key) {
                Some((_, n)) => *n += 1,
                None => out.push((*key, 1)),
            }
        }
        out.sort_unstable_by_key(|(k, _)| *k);
    }

    fn write_key_label(&self, key: i64, out: &mut String) {
        match self.kind {
            ExporterCounter::ClockEventsCount => {
                let name = CLOCK_EVENT_REASONS
                    .iter()
                    .find(|(b, _)| *b == key)
                    .map_or("unknown", |(_, n)| n);
                let _ = write!(out, ",clock_event=\"{name}\"");
            }
            _ => {
                let _ = write!(out, ",xid=\"{key}\"");
            }
        }
    }
}

struct Family {
    name: String,
    /// Escaped help text.
    help: String,
    kind: MetricKind,
    field: CounterField,
}

/// Writes snapshots in Prometheus text format; see the [module docs](self).
///
/// ```
/// use dcgm::{Entity, FieldId, FieldValue, Value};
/// use dcgm_reader::{EntityIdentity, LabelOptions, Renderer, Snapshot, parse_counters};
/// let counters = parse_counters("DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (C).").unwrap();
/// let gpu0 = EntityIdentity::gpu(0, "GPU-1234", "00000000:18:00.0", "NVIDIA H100 80GB HBM3");
/// let opts = LabelOptions { hostname: Some("node-1".into()), ..LabelOptions::default() };
/// let mut r = Renderer::new(&counters, vec![gpu0], opts);
/// let mut snap = Snapshot::new();
/// let v = FieldValue { entity: Entity::gpu(0), field: FieldId(150), timestamp_us: 0,
///                      value: Value::Int(41), status: 0 };
/// snap.entry(Entity::gpu(0)).or_default().insert(FieldId(150), v);
/// let mut text = String::new();
/// r.render(&snap, &[], &mut text);
/// assert!(text.contains(
///     "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-1234\",pci_bus_id=\"00000000:18:00.0\",\
///      device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-1\"} 41\n"));
/// ```
pub struct Renderer {
    families: Vec<Family>,
    /// `label` rows: field and label name, sorted by name.
    labels: Vec<(FieldId, String)>,
    identities: Vec<EntityIdentity>,
    opts: LabelOptions,
    /// Per identity: its fixed labels, without braces.
    base: Vec<String>,
    /// Per identity: the labels of `label` rows, rebuilt each render (the buffers are kept).
    row: Vec<String>,
    simulated: Option<bool>,
    xid_field: Option<FieldId>,
    scratch: Vec<(i64, u64)>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field(
                "families",
                &self.families.iter().map(|x| &x.name).collect::<Vec<_>>(),
            )
            .field("identities", &self.identities.len())
            .finish()
    }
}

impl Renderer {
    /// A renderer of `counters` for `identities` (which are sorted into export order).
    pub fn new(
        counters: &[Counter],
        mut identities: Vec<EntityIdentity>,
        opts: LabelOptions,
    ) -> Self {
        let mut families: Vec<Family> = counters
            .iter()
            .filter(|c| !c.is_label())
            .map(|c| Family {
                name: c.metric_name.clone(),
                help: escape_help(&c.help),
                kind: c.kind,
                field: c.field,
            })
            .collect();
        families.sort_by(|a, b| a.name.cmp(&b.name));
        let mut labels: Vec<(FieldId, String)> = counters
            .iter()
            .filter(|c| c.is_label())
            .filter_map(|c| Some((c.field_id()?, c.metric_name.clone())))
            .collect();
        labels.sort_by(|a, b| a.1.cmp(&b.1));
        identities.sort_by_key(EntityIdentity::sort_key);
        let mut r = Self {
            families,
            labels,
            identities: Vec::new(),
            opts,
            base: Vec::new(),
            row: Vec::new(),
            simulated: None,
            xid_field: ExporterCounter::XidErrorsCount.source_field(),
            scratch: Vec::new(),
        };
        r.set_identities(identities);
        r
    }

    /// Adds the `dcgm_exporter_simulated` gauge (1 when `simulated`), and, when simulated,
    /// a note on every help text.
    pub fn mark_simulated(&mut self, simulated: bool) {
        if simulated && self.simulated != Some(true) {
            for f in &mut self.families {
                f.help
                    .push_str(" [simulated: values come from dcgm-sim, not from a GPU]");
            }
        }
        self.simulated = Some(simulated);
    }

    /// The identities, in export order.
    pub fn identities(&self) -> &[EntityIdentity] {
        &self.identities
    }

    /// Replaces the identities (e.g. once MIG profile names are known).
    pub fn set_identities(&mut self, mut identities: Vec<EntityIdentity>) {
        identities.sort_by_key(EntityIdentity::sort_key);
        self.base = identities
            .iter()
            .map(|i| base_labels(i, &self.opts))
            .collect();
        self.row = vec![String::new(); identities.len()];
        self.identities = identities;
    }

    /// Writes the exposition of `snap` into `out` (cleared first). `windows` feed the
    /// `DCGM_EXP_XID_ERRORS_COUNT` / `DCGM_EXP_CLOCK_EVENTS_COUNT` rows; a windowed row
    /// without its window is left out.
    pub fn render(&mut self, snap: &Snapshot, windows: &[EventWindow], out: &mut String) {
        out.clear();
        // Labels from `label` rows, per entity.
        for (i, id) in self.identities.iter().enumerate() {
            let row = &mut self.row[i];
            row.clear();
            let Some(values) = snap.get(&id.entity) else {
                continue;
            };
            for (field, name) in &self.labels {
                let Some(v) = values.get(field) else {
                    continue;
                };
                let start = row.len();
                let _ = write!(row, ",{name}=\"");
                let ok = match &v.value {
                    Value::String(s) => {
                        escape_label_value(s, row);
                        true
                    }
                    Value::Int(_) | Value::Double(_) => write_number(&v.value, row),
                    _ => false,
                };
                if ok {
                    row.push('"');
                } else {
                    row.truncate(start);
                }
            }
        }
        for f in &self.families {
            let start = out.len();
            let _ = write!(
                out,
                "# HELP {} {}\n# TYPE {} {}\n",
                f.name,
                f.help,
                f.name,
                f.kind.exposition_type()
            );
            let header_end = out.len();
            match f.field {
                CounterField::Dcgm(field) => {
                    for (i, id) in self.identities.iter().enumerate() {
                        let Some(v) = snap.get(&id.entity).and_then(|m| m.get(&field)) else {
                            continue;
                        };
                        if !matches!(v.value, Value::Int(_) | Value::Double(_)) {
                            continue;
                        }
                        let line = out.len();
                        let _ = write!(out, "{}{{{}{}", f.name, self.base[i], self.row[i]);
                        if Some(field) == self.xid_field
                            && let Value::Int(x) = v.value
                        {
                            let _ = write!(out, ",err_code=\"{x}\"");
                        }
                        out.push_str("} ");
                        if write_number(&v.value, out) {
                            out.push('\n');
                        } else {
                            out.truncate(line);
                        }
                    }
                }
                CounterField::Exporter(kind) => {
                    if let Some(w) = windows.iter().find(|w| w.kind() == kind) {
                        let window_ms = w.window().as_millis();
                        for (i, id) in self.identities.iter().enumerate() {
                            w.counts_into(id.gpu, &mut self.scratch);
                            if self.scratch.is_empty() {
                                let _ = writeln!(
                                    out,
                                    "{}{{{}{},{WINDOW_LABEL}=\"{window_ms}\"}} 0",
                                    f.name, self.base[i], self.row[i]
                                );
                            }
                            for &(key, n) in &self.scratch {
                                let _ = write!(out, "{}{{{}{}", f.name, self.base[i], self.row[i]);
                                w.write_key_label(key, out);
                                let _ = writeln!(out, ",{WINDOW_LABEL}=\"{window_ms}\"}} {n}");
                            }
                        }
                    }
                }
            }
            if out.len() == header_end {
                out.truncate(start);
            }
        }
        if let Some(sim) = self.simulated {
            let _ = write!(
                out,
                "# HELP {SIMULATED_METRIC} 1 when the values come from dcgm-sim, a DCGM simulator, \
                 instead of real GPUs.\n# TYPE {SIMULATED_METRIC} gauge\n{SIMULATED_METRIC} {}\n",
                u8::from(sim)
            );
        }
    }
}

fn base_labels(id: &EntityIdentity, opts: &LabelOptions) -> String {
    let mut s = String::new();
    let _ = write!(s, "gpu=\"{}\",{}=\"", id.gpu, opts.uuid_label);
    escape_label_value(&id.uuid, &mut s);
    s.push_str("\",pci_bus_id=\"");
    escape_label_value(&id.pci_bus_id, &mut s);
    let _ = write!(s, "\",device=\"nvidia{}\",modelName=\"", id.gpu);
    if opts.replace_blanks_in_model_name {
        let model = id
            .model_name
            .split_whitespace()
            .collect::<Vec<_>>()
            .join("-");
        escape_label_value(&model, &mut s);
    } else {
        escape_label_value(&id.model_name, &mut s);
    }
    s.push('"');
    if let Some(m) = &id.mig {
        s.push_str(",GPU_I_PROFILE=\"");
        escape_label_value(&m.profile, &mut s);
        let _ = write!(s, "\",GPU_I_ID=\"{}\"", m.instance_id);
    }
    if let Some(h) = opts.hostname.as_deref().filter(|h| !h.is_empty()) {
        let _ = write!(s, ",{}=\"", opts.hostname_label);
        escape_label_value(h, &mut s);
        s.push('"');
    }
    s
}

/// Appends `s` escaped as a label value (`\` → `\\`, `"` → `\"`, newline → `\n`).
pub fn escape_label_value(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// `s` escaped as a help text (`\` → `\\`, newline → `\n`).
pub fn escape_help(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Appends a number as Prometheus writes sample values (`NaN`, `+Inf`, `-Inf`, integers
/// without a fraction, exponents for very large or small magnitudes). Returns `false`, writing
/// nothing, for anything that is not a number.
pub fn write_number(v: &Value, out: &mut String) -> bool {
    match v {
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Double(d) => {
            let d = *d;
            if d.is_nan() {
                out.push_str("NaN");
            } else if d.is_infinite() {
                out.push_str(if d > 0.0 { "+Inf" } else { "-Inf" });
            } else if d != 0.0 && (d.abs() >= 1e15 || d.abs() < 1e-4) {
                let _ = write!(out, "{d:e}");
            } else {
                let _ = write!(out, "{d}");
            }
        }
        _ => return false,
    }
    true
}

/// What a [`Collector`] exports and how it reaches DCGM.
#[derive(Debug, Clone)]
pub struct CollectorConfig {
    /// The counters file's rows.
    pub counters: Vec<Counter>,
    /// Which entities (default [`DeviceSelection::Flex`]).
    pub devices: DeviceSelection,
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
}

impl CollectorConfig {
    /// Defaults for `counters`.
    pub fn new(counters: Vec<Counter>) -> Self {
        Self {
            counters,
            devices: DeviceSelection::Flex,
            connection: Connection::Embedded,
            library_path: None,
            simulator: false,
            collect_interval: Duration::from_secs(30),
            xid_window: Duration::from_secs(300),
            clock_events_window: Duration::from_secs(300),
            labels: LabelOptions::default(),
        }
    }
}

/// Reads the configured fields of the configured entities and renders them; see the
/// [module docs](self).
pub struct Collector {
    _handle: Handle,
    reader: Reader,
    events: Option<(Reader, Vec<EventWindow>)>,
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

impl Collector {
    /// Connects, discovers the entities and starts watching. Rows that cannot be exported
    /// are listed by [`Collector::ignored`]: exporter rows this crate does not compute, and
    /// profiling (`DCGM_FI_PROF_*`) rows when DCGM refuses to watch them (no profiling
    /// support, or the profiling module is in use), as dcgm-exporter skips them.
    pub fn new(cfg: CollectorConfig) -> Result<Self> {
        let mut hb = Handle::builder();
        if let Some(p) = &cfg.library_path {
            hb = hb.library_path(p);
        } else if cfg.simulator {
            hb = hb.simulator();
        }
        let (handle, connection) = match &cfg.connection {
            Connection::Embedded => (hb.embedded()?, Connection::Embedded),
            Connection::Remote(a) => (hb.connect(a)?, Connection::Remote(a.clone())),
            Connection::Auto => match hb.clone().connect("localhost") {
                Ok(h) => (h, Connection::Remote("localhost".into())),
                Err(Error::ConnectionLost { .. }) | Err(Error::Dcgm { .. }) => {
                    (hb.embedded()?, Connection::Embedded)
                }
                Err(e) => return Err(e),
            },
        };
        let simulated = handle.is_simulated();
        let identities = discover_entities(&handle, &cfg.devices)?;
        if identities.is_empty() {
            return Err(Error::InvalidArgument("no GPU to export".into()));
        }
        let name_field = FieldId(dcgm::sys::field_by_name("DCGM_FI_DEV_NAME").map_or(50, |f| f.id));
        let mut ignored = Vec::new();
        let mut counters = Vec::new();
        for c in cfg.counters {
            match c.field {
                CounterField::Exporter(e) if e.source_field().is_none() => ignored.push(c),
                _ => counters.push(c),
            }
        }
        let entities: Vec<Entity> = identities.iter().map(|i| i.entity).collect();
        let has_mig = identities.iter().any(|i| i.mig.is_some());
        let plain: Vec<Counter> = counters
            .iter()
            .filter(|c| matches!(c.field, CounterField::Dcgm(_)))
            .cloned()
            .collect();
        let keep_age = (cfg.collect_interval * 4).max(Duration::from_secs(30));
        let build = |counters: &[Counter]| -> Result<Reader> {
            let mut fields = counter_fields(counters);
            // The GPU instances' names are their MIG profiles; a reader needs a field anyway.
            if (has_mig || fields.is_empty()) && !fields.contains(&name_field) {
                fields.push(name_field);
            }
            let mut b = Reader::builder()
                .fields(&fields)
                .entities(&entities)
                .update_frequency(cfg.collect_interval)
                .max_keep_age(keep_age)
                .connection(connection.clone())
                .field_group_name("dcgm_exporter");
            if let Some(p) = &cfg.library_path {
                b = b.library_path(p);
            } else if cfg.simulator {
                b = b.simulator();
            }
            let mut r = b.build()?;
            r.connect()?;
            Ok(r)
        };
        let reader = match build(&plain) {
            Ok(r) => r,
            Err(e) if plain.iter().any(is_profiling) => {
                log::warn!("cannot watch the profiling fields ({e}); exporting without them");
                let (prof, rest): (Vec<Counter>, Vec<Counter>) =
                    plain.into_iter().partition(is_profiling);
                let prof_names: BTreeSet<String> =
                    prof.iter().map(|c| c.metric_name.clone()).collect();
                counters.retain(|c| {
                    if prof_names.contains(&c.metric_name) {
                        ignored.push(c.clone());
                        false
                    } else {
                        true
                    }
                });
                build(&rest)?
            }
            Err(e) => return Err(e),
        };
        let mut windows = Vec::new();
        for c in &counters {
            if let CounterField::Exporter(kind) = c.field
                && windows.iter().all(|w: &EventWindow| w.kind() != kind)
            {
                let window = match kind {
                    ExporterCounter::XidErrorsCount => cfg.xid_window,
                    _ => cfg.clock_events_window,
                };
                windows.push(EventWindow::new(kind, window, cfg.collect_interval));
            }
        }
        let events = if windows.is_empty() {
            None
        } else {
            let gpus: BTreeSet<u32> = identities.iter().map(|i| i.gpu).collect();
            let gpus: Vec<u32> = gpus.into_iter().collect();
            let fields: Vec<FieldId> = windows
                .iter()
                .filter_map(|w| w.kind().source_field())
                .collect();
            let longest = windows
                .iter()
                .map(EventWindow::window)
                .max()
                .unwrap_or_default();
            let mut b = Reader::builder()
                .fields(&fields)
                .gpu_ids(&gpus)
                .update_frequency(cfg.collect_interval)
                .max_keep_age(longest + cfg.collect_interval * 2)
                .connection(connection.clone())
                .field_group_name("dcgm_exporter_events");
            if let Some(p) = &cfg.library_path {
                b = b.library_path(p);
            } else if cfg.simulator {
                b = b.simulator();
            }
            let mut r = b.build()?;
            r.connect()?;
            Some((r, windows))
        };
        let mut renderer = Renderer::new(&counters, identities, cfg.labels);
        renderer.mark_simulated(simulated);
        Ok(Self {
            _handle: handle,
            reader,
            events,
            renderer,
            simulated,
            profiles_resolved: !has_mig,
            ignored,
            name_field,
        })
    }

    /// Whether the values come from the dcgm-sim simulator.
    pub fn is_simulated(&self) -> bool {
        self.simulated
    }

    /// The exported entities, in export order.
    pub fn identities(&self) -> &[EntityIdentity] {
        self.renderer.identities()
    }

    /// Rows left out (see [`Collector::new`]).
    pub fn ignored(&self) -> &[Counter] {
        &self.ignored
    }

    /// Reads the latest values and writes their exposition into `out` (cleared first).
    pub fn collect(&mut self, out: &mut String) -> Result<()> {
        let snap = self.reader.latest()?;
        if !self.profiles_resolved {
            self.resolve_profiles(&snap);
        }
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
        self.renderer.render(&snap, windows, out);
        Ok(())
    }

    /// Names MIG profiles after `DCGM_FI_DEV_NAME` of each GPU instance, when DCGM reports a
    /// name other than the GPU's model.
    fn resolve_profiles(&mut self, snap: &Snapshot) {
        let mut ids = self.renderer.identities().to_vec();
        for id in &mut ids {
            let Some(m) = id.mig.as_mut() else {
                continue;
            };
            if let Some(Value::String(name)) = snap
                .get(&id.entity)
                .and_then(|f| f.get(&self.name_field))
                .map(|v| &v.value)
            {
                let name = name.trim();
                if !name.is_empty() && name != id.model_name {
                    m.profile = name.to_string();
                }
            }
        }
        self.renderer.set_identities(ids);
        self.profiles_resolved = true;
    }
}

fn is_profiling(c: &Counter) -> bool {
    c.field_id()
        .and_then(|f| f.info())
        .is_some_and(|i| i.name.starts_with("DCGM_FI_PROF_"))
}
