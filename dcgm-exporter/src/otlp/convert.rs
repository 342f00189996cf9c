//! One collection ([`Exposition`], the model that `/metrics` is encoded from too) to an
//! encoded OTLP `ExportMetricsServiceRequest`, with the names, units, instruments and
//! attributes of [`crate::otlp::mapping`], written by `otlp::wire`.
//!
//! Each resource is a host (`host.name`, and `dcgm.hostengine` with several host engines), or,
//! for the series of a GPU held by a Kubernetes pod, that pod on that host (`k8s.pod.name`,
//! `k8s.namespace.name`, `k8s.container.name`, `k8s.pod.uid`); its one scope is
//! `dcgm-exporter`. The attributes of an entity's label sets are encoded once and kept while
//! the collections share them.
//!
//! Successive collections mostly have the same series: then only the times and values differ,
//! and those are fixed 8-byte fields. The converter keeps the last request and where each of
//! its points' time and value lie; when the next collection yields the same points in the same
//! order (same label sets, own labels and metric), it rewrites those 18 bytes per point in
//! place rather than encoding the request again. Any difference (a series more or less, other
//! labels, a reload of the counters) falls back to a full encoding.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use dcgm::Value;
use dcgm_prometheus::{
    CounterField, ExporterCounter, Exposition, LabelSet, MetricFamily, MetricKind, Sample,
};
use rustc_hash::FxHashMap;

use crate::otlp::mapping::{self, Instrument, MIB, MetricMapping, Target, derived};
use crate::otlp::wire::{self, AttrValue, PointValue, fields as f};

/// The instrumentation scope's name.
pub const SCOPE: &str = "dcgm-exporter";

/// The DCGM fields the derived metrics are computed from, looked up by name once (a search
/// of DCGM's field table).
static DERIVED_FIELDS: std::sync::LazyLock<HashMap<&'static str, dcgm::FieldId>> =
    std::sync::LazyLock::new(|| {
        [
            "DCGM_FI_DEV_FB_USED",
            "DCGM_FI_DEV_FB_FREE",
            "DCGM_FI_DEV_FB_RESERVED",
            "DCGM_FI_DEV_FB_TOTAL",
            "DCGM_FI_PROF_PCIE_TX_BYTES",
            "DCGM_FI_PROF_PCIE_RX_BYTES",
        ]
        .into_iter()
        .filter_map(|n| Some((n, dcgm::FieldId::by_name(n)?)))
        .collect()
    });

/// Attributes as name and value.
type Attributes = Vec<(String, String)>;

fn unix_nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Encodes one label as a data point attribute (or, for resource labels, collects it).
fn encode_label(
    name: &str,
    value: &str,
    exp: &Exposition,
    point: &mut Vec<u8>,
    resource: &mut Attributes,
) -> bool {
    match mapping::attribute(name, &exp.hostname_label, &exp.uuid_label) {
        Target::Resource(k) => {
            resource.push((k.to_string(), value.to_string()));
            return false;
        }
        Target::Point(k) => wire::key_value(f::POINT_ATTRIBUTES, k, AttrValue::Str(value), point),
        Target::PointInt(k) => match value.parse::<i64>() {
            Ok(i) => wire::key_value(f::POINT_ATTRIBUTES, k, AttrValue::Int(i), point),
            Err(_) => wire::key_value(f::POINT_ATTRIBUTES, k, AttrValue::Str(value), point),
        },
        Target::Other => wire::key_value(
            f::POINT_ATTRIBUTES,
            &format!("dcgm.label.{name}"),
            AttrValue::Str(value),
            point,
        ),
    }
    name == exp.uuid_label
}

/// An entity's shared label sets, encoded.
struct Prepared {
    /// Held so that the pointers of the key stay theirs.
    _sets: (Arc<LabelSet>, Arc<LabelSet>, Arc<LabelSet>),
    /// Its resource's attributes (besides those of every resource).
    resource: Attributes,
    /// Its data point attributes, encoded (`NumberDataPoint.attributes` entries).
    point: Vec<u8>,
    /// Whether it is a GPU's or MIG instance's (it has the UUID label).
    gpu: bool,
    /// Used by the request being built.
    used: bool,
    /// Its resource's index in the request being built.
    resource_index: Option<usize>,
    /// Its `hw.gpu.io` totals (transmit, receive): indexes into [`Converter::io`].
    io: [Option<usize>; 2],
}

type SetsKey = (usize, usize, usize);

fn sets_key(s: &Sample) -> SetsKey {
    (
        Arc::as_ptr(&s.base) as usize,
        Arc::as_ptr(&s.row) as usize,
        Arc::as_ptr(&s.workload) as usize,
    )
}

/// A point of the last request: the series it was for, and where its time and value lie.
struct Planned {
    key: SetsKey,
    /// What yielded it ([`Origin`]).
    origin: Origin,
    /// Where its time field starts in the request ([`wire::patch_point`]).
    at: usize,
    /// Its own labels and its extra encoded attributes, where it has any.
    own: Option<Box<(LabelSet, Vec<u8>)>>,
}

impl Planned {
    fn matches(&self, key: SetsKey, origin: Origin, s: &Sample, extra: &[u8]) -> bool {
        self.key == key
            && self.origin == origin
            && match &self.own {
                None => s.own.is_empty() && extra.is_empty(),
                Some(o) => o.0 == s.own && o.1 == extra,
            }
    }
}

/// What yields a point: the index of its family in its collection, or one of the derived
/// metrics ([`origin`]). As the families are checked to be the same ([`FamilyKey`], so metric
/// name, unit, instrument and description) in the same order, a point of the same origin at
/// the same place is a point of the same metric.
type Origin = u32;

/// The origins of the derived metrics.
mod origin {
    pub const MEMORY_LIMIT: u32 = u32::MAX;
    pub const MEMORY_UTILIZATION: u32 = u32::MAX - 1;
    /// Minus the direction (0 transmit, 1 receive).
    pub const IO: u32 = u32::MAX - 2;
    pub const STATUS: u32 = u32::MAX - 4;
}

/// What a family's metric is made from ([`mapping::metric`], the help text): its
/// name, help text, field and type.
type FamilyKey = (String, String, Option<CounterField>, MetricKind);

/// The last request and its points, in the order the conversion yields them.
struct Plan {
    points: Vec<Planned>,
    /// The families (what their metrics are made from), in order.
    families: Vec<FamilyKey>,
    /// How many collections it was made of.
    collections: usize,
    request: Bytes,
}

/// A point of the request being built, before the request's layout is known.
struct Recorded {
    resource: usize,
    metric: usize,
    origin: Origin,
    /// Where its time field starts in its metric's points.
    at: usize,
    key: SetsKey,
    own: Option<Box<(LabelSet, Vec<u8>)>>,
}

/// The last request being rewritten in place.
struct Patch {
    points: Vec<Planned>,
    families: Vec<FamilyKey>,
    /// The next family expected.
    next_family: usize,
    buf: BytesMut,
    /// The next point expected.
    next: usize,
    /// No point has differed from the plan yet.
    ok: bool,
}

/// A pass over the collections: building a new request, or patching the last one.
enum Pass {
    Build(Builder),
    Patch(Patch),
}

/// One metric of a resource being built.
struct MetricOut {
    name: String,
    description: String,
    unit: &'static str,
    instrument: Instrument,
    /// Encoded `data_points` entries.
    points: Vec<u8>,
}

/// One resource of the request being built.
struct ResourceOut {
    attributes: Attributes,
    metrics: Vec<MetricOut>,
    index: HashMap<String, usize>,
}

/// Turns collections into encoded OTLP requests. It keeps what cumulative metrics computed
/// here need between collections (the start time, the bytes of `hw.gpu.io` so far), and the
/// encoded attributes of the label sets the collections share.
pub struct Converter {
    /// Attributes of every resource (`service.name`, `OTEL_RESOURCE_ATTRIBUTES`).
    resource: Attributes,
    /// `host.name` where the series carry no host-name label (`--no-hostname`).
    host_name: String,
    /// The start of every cumulative sum: when the converter was made.
    start: u64,
    /// `hw.gpu.io` so far, per series and direction: bytes and the time of the last rate.
    io: Vec<(f64, u64)>,
    /// The index in `io` of each series and direction (its encoded attributes).
    io_index: HashMap<Vec<u8>, usize>,
    prepared: FxHashMap<SetsKey, Prepared>,
    /// Points buffers of earlier requests, cleared, for the next ones.
    pool: Vec<Vec<u8>>,
    /// The last request, for patching in place.
    plan: Option<Plan>,
    /// Requests patched in place rather than encoded.
    patched: u64,
}

impl std::fmt::Debug for Converter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Converter")
            .field("resource", &self.resource)
            .field("host_name", &self.host_name)
            .finish_non_exhaustive()
    }
}

/// A value times `scale`: an integer where both are, a double otherwise.
fn scaled(v: &Value, scale: f64) -> Option<PointValue> {
    match *v {
        Value::Int(i) if scale == 1.0 => Some(PointValue::Int(i)),
        Value::Int(i) if scale.fract() == 0.0 && scale.abs() < 1e12 => Some(
            i.checked_mul(scale as i64)
                .map_or(PointValue::Double(i as f64 * scale), PointValue::Int),
        ),
        Value::Int(i) => Some(PointValue::Double(i as f64 * scale)),
        Value::Double(d) => Some(PointValue::Double(d * scale)),
        _ => None,
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match *v {
        Value::Int(i) => Some(i as f64),
        Value::Double(d) => Some(d),
        _ => None,
    }
}

/// The encoded fixed attributes of a mapping.
fn fixed_attributes(m: &MetricMapping) -> Vec<u8> {
    let mut out = Vec::new();
    for (k, v) in m.attributes {
        wire::key_value(f::POINT_ATTRIBUTES, k, AttrValue::Str(v), &mut out);
    }
    out
}

fn derived_metric(
    name: &str,
    unit: &'static str,
    instrument: Instrument,
    attributes: &'static [(&'static str, &'static str)],
) -> MetricMapping {
    MetricMapping {
        name: name.to_string(),
        unit,
        instrument,
        scale: 1.0,
        attributes,
    }
}

/// The values of a family by series (each series once in a family, as the renderer writes
/// them), looked up at the index of the same series in another family first.
struct Aligned<'a> {
    fam: &'a MetricFamily,
    map: Option<FxHashMap<SetsKey, f64>>,
}

impl<'a> Aligned<'a> {
    fn new(fam: &'a MetricFamily) -> Self {
        Self { fam, map: None }
    }

    /// The value of the series with label sets `key`, probably the `i`-th.
    fn get(&mut self, i: usize, key: SetsKey) -> Option<f64> {
        if let Some(s) = self.fam.samples.get(i)
            && sets_key(s) == key
        {
            return as_f64(&s.value);
        }
        let fam = self.fam;
        self.map
            .get_or_insert_with(|| {
                fam.samples
                    .iter()
                    .filter_map(|s| Some((sets_key(s), as_f64(&s.value)?)))
                    .collect()
            })
            .get(&key)
            .copied()
    }
}

/// The request being built.
#[derive(Default)]
struct Builder {
    resources: Vec<ResourceOut>,
    by_attributes: HashMap<Attributes, usize>,
    /// The metric the last point went to: resource, name, index.
    last: Option<(usize, String, usize)>,
    /// Points buffers to reuse.
    pool: Vec<Vec<u8>>,
    /// The points, in the order they were added.
    recorded: Vec<Recorded>,
    /// The families (what their metrics are made from), in order.
    families: Vec<FamilyKey>,
}

impl Builder {
    fn resource(&mut self, attributes: &Attributes) -> usize {
        if let Some(&i) = self.by_attributes.get(attributes) {
            return i;
        }
        self.resources.push(ResourceOut {
            attributes: attributes.clone(),
            metrics: Vec::new(),
            index: HashMap::new(),
        });
        self.by_attributes
            .insert(attributes.clone(), self.resources.len() - 1);
        self.resources.len() - 1
    }

    /// The points buffer of metric `m` of resource `resource`, and the metric's index.
    fn metric(&mut self, resource: usize, m: &MetricMapping, help: &str) -> (usize, &mut Vec<u8>) {
        // Consecutive points mostly go to the same metric of the same resource.
        if let Some((lr, ln, li)) = &self.last
            && *lr == resource
            && *ln == m.name
        {
            let li = *li;
            return (li, &mut self.resources[resource].metrics[li].points);
        }
        let r = &mut self.resources[resource];
        let i = match r.index.get(&m.name) {
            Some(&i) => i,
            None => {
                r.metrics.push(MetricOut {
                    name: m.name.clone(),
                    description: help.to_string(),
                    unit: m.unit,
                    instrument: m.instrument,
                    points: self.pool.pop().unwrap_or_default(),
                });
                r.index.insert(m.name.clone(), r.metrics.len() - 1);
                r.metrics.len() - 1
            }
        };
        self.last = Some((resource, m.name.clone(), i));
        (i, &mut self.resources[resource].metrics[i].points)
    }
}

impl Converter {
    /// A converter whose resources all carry `resource` (besides `host.name` and the rest),
    /// naming the host `host_name` where the series do not.
    pub fn new(resource: Vec<(String, String)>, host_name: String) -> Self {
        Self {
            resource,
            host_name,
            start: unix_nanos(SystemTime::now()),
            io: Vec::new(),
            io_index: HashMap::new(),
            prepared: FxHashMap::default(),
            pool: Vec::new(),
            plan: None,
            patched: 0,
        }
    }

    /// The encoded `ExportMetricsServiceRequest` for `collections` (one per host engine),
    /// collected at `at`.
    pub fn request(&mut self, collections: &[&Exposition], at: SystemTime) -> Vec<u8> {
        self.request_bytes(collections, at).to_vec()
    }

    /// Like [`Converter::request`], as [`Bytes`]: the last request patched in place where
    /// the collections have the same series as the last ones (see the [module docs](self)),
    /// in the same buffer where nothing else holds it any more (the push sent it), else in
    /// a copy.
    pub fn request_bytes(&mut self, collections: &[&Exposition], at: SystemTime) -> Bytes {
        let now = unix_nanos(at);
        if let Some(plan) = self.plan.take()
            && plan.collections == collections.len()
        {
            let buf = plan
                .request
                .try_into_mut()
                .unwrap_or_else(|shared| BytesMut::from(&shared[..]));
            let mut pass = Pass::Patch(Patch {
                points: plan.points,
                families: plan.families,
                next_family: 0,
                buf,
                next: 0,
                ok: true,
            });
            for exp in collections {
                self.add(exp, now, &mut pass);
            }
            if let Pass::Patch(p) = pass
                && p.ok
                && p.next == p.points.len()
                && p.next_family == p.families.len()
            {
                let request = p.buf.freeze();
                self.plan = Some(Plan {
                    points: p.points,
                    families: p.families,
                    collections: collections.len(),
                    request: request.clone(),
                });
                self.patched += 1;
                return request;
            }
            // Another layout: the request is encoded again. The pass has already brought
            // the `hw.gpu.io` totals up to `now`; the second pass adds nothing to them.
        }
        for p in self.prepared.values_mut() {
            p.used = false;
        }
        let mut pass = Pass::Build(Builder {
            pool: std::mem::take(&mut self.pool),
            ..Builder::default()
        });
        for exp in collections {
            self.add(exp, now, &mut pass);
        }
        // Label sets no collection holds any more are forgotten.
        self.prepared.retain(|_, p| p.used);
        let Pass::Build(mut b) = pass else {
            unreachable!("the pass was made a build")
        };
        let families = std::mem::take(&mut b.families);
        let (request, points) = self.encode(b);
        let request = Bytes::from(request);
        self.plan = Some(Plan {
            points,
            families,
            collections: collections.len(),
            request: request.clone(),
        });
        request
    }

    /// The index in `io` of the `hw.gpu.io` total of sample `s`'s series in `direction` (0
    /// transmit, 1 receive), a new one at 0 bytes when there is none.
    fn io_slot(&mut self, s: &Sample, exp: &Exposition, direction: u8, now: u64) -> usize {
        let d = usize::from(direction);
        let p = self.prepare(s, exp);
        if let Some(i) = p.io[d] {
            return i;
        }
        // Keyed by the series' attributes, so that the total survives new label sets of
        // the same series (a reload of the counters).
        let mut key = vec![direction];
        key.extend_from_slice(&p.point);
        for (k, v) in &p.resource {
            key.extend_from_slice(k.as_bytes());
            key.push(0);
            key.extend_from_slice(v.as_bytes());
            key.push(0);
        }
        let i = match self.io_index.get(&key) {
            Some(&i) => i,
            None => {
                self.io.push((0.0, now));
                self.io_index.insert(key, self.io.len() - 1);
                self.io.len() - 1
            }
        };
        if let Some(p) = self.prepared.get_mut(&sets_key(s)) {
            p.io[d] = Some(i);
        }
        i
    }

    /// How many requests were patched in place rather than encoded again.
    pub fn patched(&self) -> u64 {
        self.patched
    }

    /// The prepared form of a sample's shared label sets.
    fn prepare(&mut self, s: &Sample, exp: &Exposition) -> &mut Prepared {
        let key = sets_key(s);
        let p = self.prepared.entry(key).or_insert_with(|| {
            let mut point = Vec::with_capacity(256);
            let mut resource = Vec::new();
            let mut gpu = false;
            for (n, v) in s.base.iter().chain(s.row.iter()).chain(s.workload.iter()) {
                gpu |= encode_label(n, v, exp, &mut point, &mut resource);
            }
            if gpu {
                wire::key_value(
                    f::POINT_ATTRIBUTES,
                    "hw.type",
                    AttrValue::Str("gpu"),
                    &mut point,
                );
                wire::key_value(
                    f::POINT_ATTRIBUTES,
                    "hw.vendor",
                    AttrValue::Str("NVIDIA"),
                    &mut point,
                );
            }
            if !resource.iter().any(|(k, _)| k == "host.name") {
                resource.push(("host.name".into(), self.host_name.clone()));
            }
            if exp.simulated == Some(true) {
                resource.push(("dcgm.simulated".into(), "true".into()));
            }
            Prepared {
                _sets: (s.base.clone(), s.row.clone(), s.workload.clone()),
                resource,
                point,
                gpu,
                used: false,
                resource_index: None,
                io: [None; 2],
            }
        });
        if !p.used {
            p.used = true;
            p.resource_index = None;
        }
        p
    }

    /// Adds one point of `m` for sample `s` (with `extra`, encoded attributes of its own).
    #[allow(clippy::too_many_arguments)]
    fn point(
        &mut self,
        pass: &mut Pass,
        exp: &Exposition,
        s: &Sample,
        (m, origin): (&MetricMapping, Origin),
        help: &str,
        fixed: &[u8],
        extra: &[u8],
        v: PointValue,
        now: u64,
    ) {
        let b = match pass {
            Pass::Build(b) => b,
            Pass::Patch(p) => {
                if !p.ok {
                    return;
                }
                match p.points.get(p.next) {
                    Some(e) if e.matches(sets_key(s), origin, s, extra) => {
                        wire::patch_point(&mut p.buf, e.at, now, v);
                        p.next += 1;
                    }
                    _ => p.ok = false,
                }
                return;
            }
        };
        let start = if m.instrument == Instrument::Gauge {
            0
        } else {
            self.start
        };
        // The sample's own labels: attributes, or (an owner's pod labels) its resource.
        let mut own = Vec::new();
        let mut own_resource = Attributes::new();
        for (n, val) in &s.own {
            encode_label(n, val, exp, &mut own, &mut own_resource);
        }
        let p = self.prepare(s, exp);
        let r = if own_resource.is_empty() {
            match p.resource_index {
                Some(r) => r,
                None => {
                    let r = b.resource(&p.resource);
                    p.resource_index = Some(r);
                    r
                }
            }
        } else {
            let mut attrs = p.resource.clone();
            attrs.extend(own_resource);
            b.resource(&attrs)
        };
        let point = &p.point;
        let (i, out) = b.metric(r, m, help);
        let at = wire::data_point(&[point, &own, extra, fixed], start, now, v, out);
        b.recorded.push(Recorded {
            resource: r,
            metric: i,
            origin,
            at,
            key: sets_key(s),
            own: (!s.own.is_empty() || !extra.is_empty())
                .then(|| Box::new((s.own.clone(), extra.to_vec()))),
        });
    }

    fn add(&mut self, exp: &Exposition, now: u64, b: &mut Pass) {
        for (i, fam) in exp.families.iter().enumerate() {
            // The family as the last time.
            match b {
                Pass::Build(b) => {
                    b.families
                        .push((fam.name.clone(), fam.help.clone(), fam.field, fam.kind));
                }
                Pass::Patch(p) => {
                    let same = p.families.get(p.next_family).is_some_and(|(n, h, f, k)| {
                        *f == fam.field && *k == fam.kind && *n == fam.name && *h == fam.help
                    });
                    p.ok &= same;
                    p.next_family += 1;
                }
            }
            let m = mapping::metric(fam);
            let fixed = fixed_attributes(&m);
            for s in &fam.samples {
                let Some(v) = scaled(&s.value, m.scale) else {
                    continue;
                };
                self.point(b, exp, s, (&m, i as Origin), &fam.help, &fixed, &[], v, now);
            }
        }
        self.add_derived(exp, now, b);
    }

    /// `hw.gpu.memory.limit`, `hw.gpu.memory.utilization`, `hw.gpu.io` and `hw.status`
    /// ([`derived`]).
    fn add_derived(&mut self, exp: &Exposition, now: u64, b: &mut Pass) {
        let field = |name: &str| -> Option<&MetricFamily> {
            let want = *DERIVED_FIELDS.get(name)?;
            exp.families
                .iter()
                .find(|f| f.field == Some(CounterField::Dcgm(want)))
        };
        // Memory: the three parts of one series (same label sets) add up to the limit.
        if let (Some(used), Some(free), Some(reserved)) = (
            field("DCGM_FI_DEV_FB_USED"),
            field("DCGM_FI_DEV_FB_FREE"),
            field("DCGM_FI_DEV_FB_RESERVED"),
        ) {
            let has_total = field("DCGM_FI_DEV_FB_TOTAL").is_some();
            // The three families list the entities in the same order (the renderer's): the
            // same index is tried first, a map of the family only when it differs.
            let mut free = Aligned::new(free);
            let mut reserved = Aligned::new(reserved);
            let limit_m =
                derived_metric(derived::MEMORY_LIMIT, "By", Instrument::UpDownCounter, &[]);
            let util_m = derived_metric(derived::MEMORY_UTILIZATION, "1", Instrument::Gauge, &[]);
            for (i, u) in used.samples.iter().enumerate() {
                let key = sets_key(u);
                let (Some(uv), Some(fv), Some(rv)) =
                    (as_f64(&u.value), free.get(i, key), reserved.get(i, key))
                else {
                    continue;
                };
                let limit = uv + fv + rv;
                if !has_total {
                    let v = PointValue::Int((limit * MIB) as i64);
                    let help = "Size of the GPU memory (used + free + reserved).";
                    let m = (&limit_m, origin::MEMORY_LIMIT);
                    self.point(b, exp, u, m, help, &[], &[], v, now);
                }
                if limit > 0.0 {
                    let v = PointValue::Double(uv / limit);
                    self.point(
                        b,
                        exp,
                        u,
                        (&util_m, origin::MEMORY_UTILIZATION),
                        "Fraction of GPU memory used.",
                        &[],
                        &[],
                        v,
                        now,
                    );
                }
            }
        }
        // PCIe bytes: the rate times the time since the last collection, summed.
        for (name, direction, attrs) in [
            (
                "DCGM_FI_PROF_PCIE_TX_BYTES",
                0u8,
                &[("network.io.direction", "transmit")],
            ),
            (
                "DCGM_FI_PROF_PCIE_RX_BYTES",
                1u8,
                &[("network.io.direction", "receive")],
            ),
        ] {
            let Some(fam) = field(name) else {
                continue;
            };
            let m = derived_metric(derived::IO, "By", Instrument::Counter, attrs);
            let fixed = fixed_attributes(&m);
            for s in &fam.samples {
                let Some(rate) = as_f64(&s.value) else {
                    continue;
                };
                let slot = self.io_slot(s, exp, direction, now);
                let entry = &mut self.io[slot];
                let dt = now.saturating_sub(entry.1) as f64 / 1e9;
                entry.0 += rate.max(0.0) * dt;
                entry.1 = now;
                let total = PointValue::Int(entry.0 as i64);
                let help = "Bytes through PCIe, from DCGM's PCIe byte rates times the time between collections.";
                let m = (&m, origin::IO - u32::from(direction));
                self.point(b, exp, s, m, help, &fixed, &[], total, now);
            }
        }
        // hw.status from the ALL health watch: 0 pass, 10 warn, 20 fail.
        let health = CounterField::Exporter(ExporterCounter::GpuHealthStatus);
        if let Some(fam) = exp.families.iter().find(|f| f.field == Some(health)) {
            let m = derived_metric(derived::STATUS, "1", Instrument::UpDownCounter, &[]);
            let help = "Operational status: 1 for the GPU's state, 0 for the others (DCGM's health check of every subsystem).";
            for s in fam
                .samples
                .iter()
                .filter(|s| s.label("health_watch") == Some("ALL"))
            {
                let Some(v) = as_f64(&s.value) else {
                    continue;
                };
                let state = if v >= 20.0 {
                    "failed"
                } else if v >= 10.0 {
                    "degraded"
                } else {
                    "ok"
                };
                // The GPU's labels without the watch's own.
                let base = Sample {
                    base: s.base.clone(),
                    row: s.row.clone(),
                    workload: s.workload.clone(),
                    own: LabelSet::new(),
                    value: s.value.clone(),
                    entity: s.entity,
                };
                if !self.prepare(&base, exp).gpu {
                    continue;
                }
                for st in ["ok", "degraded", "failed"] {
                    let mut extra = Vec::new();
                    wire::key_value(
                        f::POINT_ATTRIBUTES,
                        "hw.state",
                        AttrValue::Str(st),
                        &mut extra,
                    );
                    let v = PointValue::Int(i64::from(st == state));
                    self.point(
                        b,
                        exp,
                        &base,
                        (&m, origin::STATUS),
                        help,
                        &[],
                        &extra,
                        v,
                        now,
                    );
                }
            }
        }
    }

    /// The request's bytes, written once into a buffer of the exact size (the sizes of the
    /// nested messages are added up first, so that the points are copied once), with its
    /// its points' places; the points' buffers go back to the pool.
    fn encode(&mut self, b: Builder) -> (Vec<u8>, Vec<Planned>) {
        use wire::len_field_size as field;
        let mut scope = Vec::new();
        wire::bytes_field(f::SCOPE_NAME, SCOPE.as_bytes(), &mut scope);
        wire::bytes_field(
            f::SCOPE_VERSION,
            env!("CARGO_PKG_VERSION").as_bytes(),
            &mut scope,
        );
        // Sizes: per resource its attributes, per metric its body.
        struct Sized {
            res: Vec<u8>,
            metrics: Vec<usize>,
            sm: usize,
            rm: usize,
        }
        let data_len = |m: &MetricOut| match m.instrument {
            Instrument::Gauge => m.points.len(),
            Instrument::UpDownCounter => m.points.len() + 2,
            Instrument::Counter => m.points.len() + 4,
        };
        let Builder {
            resources,
            mut pool,
            recorded,
            ..
        } = b;
        let mut sized = Vec::with_capacity(resources.len());
        let mut total = 0;
        for r in &resources {
            let mut res = Vec::new();
            for (k, v) in &self.resource {
                wire::key_value(f::RESOURCE_ATTRIBUTES, k, AttrValue::Str(v), &mut res);
            }
            for (k, v) in &r.attributes {
                let value = if k == "dcgm.simulated" {
                    AttrValue::Bool(v == "true")
                } else {
                    AttrValue::Str(v)
                };
                wire::key_value(f::RESOURCE_ATTRIBUTES, k, value, &mut res);
            }
            let metrics: Vec<usize> = r
                .metrics
                .iter()
                .map(|m| {
                    field(m.name.len())
                        + if m.description.is_empty() {
                            0
                        } else {
                            field(m.description.len())
                        }
                        + if m.unit.is_empty() {
                            0
                        } else {
                            field(m.unit.len())
                        }
                        + field(data_len(m))
                })
                .collect();
            let sm = field(scope.len()) + metrics.iter().map(|&m| field(m)).sum::<usize>();
            let rm = field(res.len()) + field(sm);
            total += field(rm);
            sized.push(Sized {
                res,
                metrics,
                sm,
                rm,
            });
        }
        let mut out = Vec::with_capacity(total);
        // Per resource, the index of its first metric in `points_at`; per metric, where its
        // points start in `out`.
        let mut first_metric = Vec::with_capacity(resources.len());
        let mut points_at = Vec::new();
        for (r, z) in resources.into_iter().zip(sized) {
            first_metric.push(points_at.len());
            wire::len_header(f::REQUEST_RESOURCE_METRICS, z.rm, &mut out);
            wire::bytes_field(f::RESOURCE_METRICS_RESOURCE, &z.res, &mut out);
            wire::len_header(f::RESOURCE_METRICS_SCOPE_METRICS, z.sm, &mut out);
            wire::bytes_field(f::SCOPE_METRICS_SCOPE, &scope, &mut out);
            for (mut m, len) in r.metrics.into_iter().zip(z.metrics) {
                wire::len_header(f::SCOPE_METRICS_METRICS, len, &mut out);
                wire::bytes_field(f::METRIC_NAME, m.name.as_bytes(), &mut out);
                if !m.description.is_empty() {
                    wire::bytes_field(f::METRIC_DESCRIPTION, m.description.as_bytes(), &mut out);
                }
                if !m.unit.is_empty() {
                    wire::bytes_field(f::METRIC_UNIT, m.unit.as_bytes(), &mut out);
                }
                let data = data_len(&m);
                match m.instrument {
                    Instrument::Gauge => {
                        wire::len_header(f::METRIC_GAUGE, data, &mut out);
                        points_at.push(out.len());
                        out.extend_from_slice(&m.points);
                    }
                    Instrument::Counter | Instrument::UpDownCounter => {
                        wire::len_header(f::METRIC_SUM, data, &mut out);
                        points_at.push(out.len());
                        out.extend_from_slice(&m.points);
                        wire::varint_field(f::SUM_TEMPORALITY, 2, &mut out);
                        if m.instrument == Instrument::Counter {
                            wire::varint_field(f::SUM_MONOTONIC, 1, &mut out);
                        }
                    }
                }
                m.points.clear();
                pool.push(std::mem::take(&mut m.points));
            }
        }
        debug_assert_eq!(out.len(), total);
        self.pool = pool;
        let planned = recorded
            .into_iter()
            .map(|p| {
                let metric = first_metric[p.resource] + p.metric;
                Planned {
                    key: p.key,
                    origin: p.origin,
                    at: points_at[metric] + p.at,
                    own: p.own,
                }
            })
            .collect();
        (out, planned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
    use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
    use prost::Message as _;

    fn gpu_labels(i: u32) -> Arc<LabelSet> {
        Arc::new(
            [
                ("gpu", i.to_string()),
                ("UUID", format!("GPU-{i}")),
                ("pci_bus_id", format!("0:{i}")),
                ("device", format!("nvidia{i}")),
                ("modelName", "H100".into()),
                ("hostname", "n1".into()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        )
    }

    /// Two GPUs' label sets, shared by every collection as the renderer shares them.
    struct Node {
        gpus: Vec<Arc<LabelSet>>,
        empty: Arc<LabelSet>,
    }

    impl Node {
        fn new() -> Self {
            Self {
                gpus: (0..2).map(gpu_labels).collect(),
                empty: Arc::new(Vec::new()),
            }
        }

        fn sample(&self, gpu: usize, value: Value, own: &[(&str, &str)]) -> Sample {
            Sample {
                base: self.gpus[gpu].clone(),
                row: self.empty.clone(),
                workload: self.empty.clone(),
                own: own
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                value,
                entity: None,
            }
        }

        /// Temperature, power, memory (used, free, reserved: the derived memory metrics),
        /// PCIe TX (`hw.gpu.io`), XID errors (own labels) and the health status (`hw.status`).
        fn collection(&self, k: i64) -> Exposition {
            let fam = |name: &str, kind, samples: Vec<Sample>| MetricFamily {
                name: name.into(),
                help: format!("help of {name}"),
                kind,
                field: Some(match dcgm::FieldId::by_name(name) {
                    Some(f) => CounterField::Dcgm(f),
                    None => CounterField::Exporter(ExporterCounter::GpuHealthStatus),
                }),
                samples,
            };
            let per_gpu = |f: &dyn Fn(usize) -> Value| -> Vec<Sample> {
                (0..2).map(|g| self.sample(g, f(g), &[])).collect()
            };
            let g = |g: usize| g as i64;
            Exposition {
                families: vec![
                    fam(
                        "DCGM_FI_DEV_GPU_TEMP",
                        MetricKind::Gauge,
                        per_gpu(&|i| Value::Int(40 + k + g(i))),
                    ),
                    fam(
                        "DCGM_FI_DEV_POWER_USAGE",
                        MetricKind::Gauge,
                        per_gpu(&|i| Value::Double(100.5 * (k + 1) as f64 + g(i) as f64)),
                    ),
                    fam(
                        "DCGM_FI_DEV_FB_USED",
                        MetricKind::Gauge,
                        per_gpu(&|i| Value::Int(1000 * k + g(i))),
                    ),
                    fam(
                        "DCGM_FI_DEV_FB_FREE",
                        MetricKind::Gauge,
                        per_gpu(&|_| Value::Int(80_000 - 1000 * k)),
                    ),
                    fam(
                        "DCGM_FI_DEV_FB_RESERVED",
                        MetricKind::Gauge,
                        per_gpu(&|_| Value::Int(500)),
                    ),
                    fam(
                        "DCGM_FI_PROF_PCIE_TX_BYTES",
                        MetricKind::Gauge,
                        per_gpu(&|_| Value::Double(1e6)),
                    ),
                    fam(
                        "DCGM_FI_DEV_XID_ERRORS",
                        MetricKind::Gauge,
                        vec![self.sample(1, Value::Int(k), &[("err_code", "79")])],
                    ),
                    fam(
                        "DCGM_EXP_GPU_HEALTH_STATUS",
                        MetricKind::Gauge,
                        (0..2)
                            .map(|i| {
                                self.sample(
                                    i,
                                    Value::Int(if k > 0 && i == 0 { 20 } else { 0 }),
                                    &[("health_watch", "ALL")],
                                )
                            })
                            .collect(),
                    ),
                ],
                simulated: Some(true),
                hostname_label: "hostname".into(),
                uuid_label: "UUID".into(),
                hostengine: None,
            }
        }
    }

    fn at(ms: u64) -> SystemTime {
        UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_000 + ms)
    }

    /// A converter like `c` that has made no request yet (same start time).
    fn fresh_like(c: &Converter) -> Converter {
        let mut f = Converter::new(c.resource.clone(), c.host_name.clone());
        f.start = c.start;
        f
    }

    /// Every point's (metric, attributes, time, value), in order.
    fn points(request: &[u8]) -> Vec<(String, String, u64, String)> {
        let r = ExportMetricsServiceRequest::decode(request).expect("the request decodes");
        let mut out = Vec::new();
        for rm in &r.resource_metrics {
            for sm in &rm.scope_metrics {
                for m in &sm.metrics {
                    let pts = match &m.data {
                        Some(metric::Data::Gauge(g)) => &g.data_points,
                        Some(metric::Data::Sum(s)) => &s.data_points,
                        other => panic!("unexpected data {other:?}"),
                    };
                    for p in pts {
                        let v = match p.value {
                            Some(number_data_point::Value::AsInt(i)) => format!("int {i}"),
                            Some(number_data_point::Value::AsDouble(d)) => format!("double {d}"),
                            None => "none".into(),
                        };
                        out.push((
                            m.name.clone(),
                            format!("{:?}", p.attributes),
                            p.time_unix_nano,
                            v,
                        ));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn the_same_series_are_patched_in_place_and_decode_to_the_new_values() {
        let node = Node::new();
        let mut c = Converter::new(vec![("service.name".into(), "t".into())], "h".into());
        let first = c.request_bytes(&[&node.collection(0)], at(0));
        assert_eq!(c.patched(), 0);
        let ptr = first.as_ptr();
        let first_points = points(&first);
        // The push has sent it and let it go: the next one is written over it.
        drop(first);
        let next = node.collection(1);
        let second = c.request_bytes(&[&next], at(100));
        assert_eq!(c.patched(), 1);
        assert_eq!(second.as_ptr(), ptr, "patched in the same buffer");
        // What a full encoding of the same collection at the same time gives, byte for byte
        // (but for `hw.gpu.io`, whose total depends on the collections before).
        let mut full = fresh_like(&c);
        full.io = c.io.clone();
        full.io_index = c.io_index.clone();
        let got = points(&second);
        let want = points(&full.request(&[&next], at(100)));
        assert_eq!(got.len(), first_points.len());
        let not_io = |v: &Vec<(String, String, u64, String)>| -> Vec<_> {
            v.iter().filter(|p| p.0 != derived::IO).cloned().collect()
        };
        assert_eq!(not_io(&got), not_io(&want));
        assert!(got.iter().all(|p| p.2 == 1_700_000_000_100_000_000));
        // The values did change: temperature 41, the failed state of GPU 0, the XID.
        let find = |name: &str, attr: &str| {
            got.iter()
                .filter(|p| p.0 == name && p.1.contains(attr))
                .map(|p| p.3.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(find("dcgm.gpu.temperature", "GPU-0"), ["int 41"]);
        assert_ne!(
            first_points
                .iter()
                .find(|p| p.0 == "dcgm.gpu.temperature")
                .unwrap()
                .3,
            "int 41"
        );
        assert_eq!(
            find(derived::STATUS, "failed").first().map(String::as_str),
            Some("int 1")
        );
        // `hw.gpu.io` went on adding up: 1e6 B/s for 0.1 s.
        assert_eq!(find(derived::IO, "GPU-0"), ["int 100000"]);
        // Held elsewhere (still queued): patched in a copy, the held one untouched.
        let held = second;
        let third = c.request_bytes(&[&node.collection(2)], at(200));
        assert_eq!(c.patched(), 2);
        assert_ne!(third.as_ptr(), held.as_ptr());
        assert_eq!(points(&held), got);
        assert_eq!(
            find_in(&points(&third), "dcgm.gpu.temperature", "GPU-1"),
            ["int 43"]
        );
    }

    fn find_in(v: &[(String, String, u64, String)], name: &str, attr: &str) -> Vec<String> {
        v.iter()
            .filter(|p| p.0 == name && p.1.contains(attr))
            .map(|p| p.3.clone())
            .collect()
    }

    #[test]
    fn other_series_are_encoded_again() {
        let node = Node::new();
        let mut c = Converter::new(Vec::new(), "h".into());
        let _ = c.request_bytes(&[&node.collection(0)], at(0));
        // The request for `exp` is what a full encoding gives; whether it was patched.
        let check = |c: &mut Converter, exp: &Exposition, t: u64| -> bool {
            let mut full = fresh_like(c);
            full.io = c.io.clone();
            full.io_index = c.io_index.clone();
            let before = c.patched();
            let got = c.request_bytes(&[exp], at(t));
            let want = full.request(&[exp], at(t));
            assert_eq!(points(&got), points(&want), "at {t}");
            c.patched() > before
        };
        let mut t = 0;
        // Each change after collections with the usual series (the second one patched):
        // encoded again, or patched.
        let mut after_usual = |c: &mut Converter, change: &dyn Fn(&mut Exposition), again: bool| {
            t += 100;
            check(c, &node.collection(1), t);
            t += 100;
            assert!(check(c, &node.collection(2), t), "the usual series at {t}");
            let mut exp = node.collection(3);
            change(&mut exp);
            t += 100;
            assert_eq!(check(c, &exp, t), !again, "at {t}");
        };
        // A series less.
        after_usual(&mut c, &|e| drop(e.families[0].samples.pop()), true);
        // A series of one family less and one of the next more, the same number in all, in
        // the same order of label sets.
        after_usual(
            &mut c,
            &|e| {
                let moved = e.families[0].samples.pop().expect("GPU 1's temperature");
                e.families[1].samples.insert(0, moved);
            },
            true,
        );
        // Other own labels.
        after_usual(
            &mut c,
            &|e| e.families[6].samples[0].own[0].1 = "13".into(),
            true,
        );
        // An entity's new label sets (a reload: same labels, new sets).
        after_usual(
            &mut c,
            &|e| {
                for f in &mut e.families {
                    for s in &mut f.samples {
                        if s.base.iter().any(|(k, v)| k == "UUID" && v == "GPU-0") {
                            s.base = gpu_labels(0);
                        }
                    }
                }
            },
            true,
        );
        // No memory at all: the utilization point goes (its limit is 0).
        after_usual(
            &mut c,
            &|e| {
                for f in &mut e.families[2..5] {
                    for s in &mut f.samples {
                        s.value = Value::Int(0);
                    }
                }
            },
            true,
        );
        // A metric's other help text (its description).
        after_usual(&mut c, &|e| e.families[1].help = "other".into(), true);
        // A family of another type (a counter: a sum rather than a gauge), same name and help.
        after_usual(&mut c, &|e| e.families[1].kind = MetricKind::Counter, true);
        // An integer that becomes a double keeps the layout: patched, with the new type.
        after_usual(
            &mut c,
            &|e| e.families[0].samples[0].value = Value::Double(42.5),
            false,
        );
        // Two collections (host engines) where there was one.
        let two = node.collection(9);
        let mut full = fresh_like(&c);
        full.io = c.io.clone();
        full.io_index = c.io_index.clone();
        let before = c.patched();
        let got = c.request_bytes(&[&two, &two], at(9000));
        assert_eq!(c.patched(), before);
        assert_eq!(points(&got), points(&full.request(&[&two, &two], at(9000))));
    }
}
