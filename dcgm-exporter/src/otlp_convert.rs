//! One collection ([`Exposition`], the structured form that `/metrics` is written from) to an
//! encoded OTLP `ExportMetricsServiceRequest`, with the names, units, instruments and
//! attributes of [`crate::otlp_mapping`], written by [`crate::otlp_wire`].
//!
//! Each resource is a host (`host.name`, and `dcgm.hostengine` with several host engines), or,
//! for the series of a GPU held by a Kubernetes pod, that pod on that host (`k8s.pod.name`,
//! `k8s.namespace.name`, `k8s.container.name`, `k8s.pod.uid`); its one scope is
//! `dcgm-exporter`. The attributes of an entity's label sets are encoded once and kept while
//! the collections share them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use dcgm::Value;
use dcgm_prometheus::{CounterField, ExporterCounter, Exposition, LabelSet, MetricFamily, Sample};

use crate::otlp_mapping::{self, Instrument, MIB, MetricMapping, Target, derived};
use crate::otlp_wire::{self as wire, AttrValue, PointValue, fields as f};

/// The instrumentation scope's name.
pub const SCOPE: &str = "dcgm-exporter";

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
    match otlp_mapping::attribute(name, &exp.hostname_label, &exp.uuid_label) {
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
}

type SetsKey = (usize, usize, usize);

fn sets_key(s: &Sample) -> SetsKey {
    (
        Arc::as_ptr(&s.base) as usize,
        Arc::as_ptr(&s.row) as usize,
        Arc::as_ptr(&s.workload) as usize,
    )
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
    io: HashMap<Vec<u8>, (f64, u64)>,
    prepared: HashMap<SetsKey, Prepared>,
    /// Points buffers of earlier requests, cleared, for the next ones.
    pool: Vec<Vec<u8>>,
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

/// The request being built.
#[derive(Default)]
struct Builder {
    resources: Vec<ResourceOut>,
    by_attributes: HashMap<Attributes, usize>,
    /// The metric the last point went to: resource, name, index.
    last: Option<(usize, String, usize)>,
    /// Points buffers to reuse.
    pool: Vec<Vec<u8>>,
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

    fn metric(&mut self, resource: usize, m: &MetricMapping, help: &str) -> &mut Vec<u8> {
        // Consecutive points mostly go to the same metric of the same resource.
        if let Some((lr, ln, li)) = &self.last
            && *lr == resource
            && *ln == m.name
        {
            let li = *li;
            return &mut self.resources[resource].metrics[li].points;
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
        &mut self.resources[resource].metrics[i].points
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
            io: HashMap::new(),
            prepared: HashMap::new(),
            pool: Vec::new(),
        }
    }

    /// The encoded `ExportMetricsServiceRequest` for `collections` (one per host engine),
    /// collected at `at`.
    pub fn request(&mut self, collections: &[&Exposition], at: SystemTime) -> Vec<u8> {
        let now = unix_nanos(at);
        for p in self.prepared.values_mut() {
            p.used = false;
        }
        let mut b = Builder {
            pool: std::mem::take(&mut self.pool),
            ..Builder::default()
        };
        for exp in collections {
            self.add(exp, now, &mut b);
        }
        // Label sets no collection holds any more are forgotten.
        self.prepared.retain(|_, p| p.used);
        self.encode(b)
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
        b: &mut Builder,
        exp: &Exposition,
        s: &Sample,
        m: &MetricMapping,
        help: &str,
        fixed: &[u8],
        extra: &[u8],
        v: PointValue,
        now: u64,
    ) {
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
        let out = b.metric(r, m, help);
        wire::data_point(&[point, &own, extra, fixed], start, now, v, out);
    }

    fn add(&mut self, exp: &Exposition, now: u64, b: &mut Builder) {
        for fam in &exp.families {
            let m = otlp_mapping::metric(fam);
            let fixed = fixed_attributes(&m);
            for s in &fam.samples {
                let Some(v) = scaled(&s.value, m.scale) else {
                    continue;
                };
                self.point(b, exp, s, &m, &fam.help, &fixed, &[], v, now);
            }
        }
        self.add_derived(exp, now, b);
    }

    /// `hw.gpu.memory.limit`, `hw.gpu.memory.utilization`, `hw.gpu.io` and `hw.status`
    /// ([`derived`]).
    fn add_derived(&mut self, exp: &Exposition, now: u64, b: &mut Builder) {
        let field = |name: &str| -> Option<&MetricFamily> {
            let want = dcgm::FieldId::by_name(name)?;
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
            let by_sets = |fam: &MetricFamily| -> HashMap<SetsKey, f64> {
                fam.samples
                    .iter()
                    .filter_map(|s| Some((sets_key(s), as_f64(&s.value)?)))
                    .collect()
            };
            let (free, reserved) = (by_sets(free), by_sets(reserved));
            let limit_m =
                derived_metric(derived::MEMORY_LIMIT, "By", Instrument::UpDownCounter, &[]);
            let util_m = derived_metric(derived::MEMORY_UTILIZATION, "1", Instrument::Gauge, &[]);
            for u in &used.samples {
                let key = sets_key(u);
                let (Some(uv), Some(&fv), Some(&rv)) =
                    (as_f64(&u.value), free.get(&key), reserved.get(&key))
                else {
                    continue;
                };
                let limit = uv + fv + rv;
                if !has_total {
                    let v = PointValue::Int((limit * MIB) as i64);
                    let help = "Size of the GPU memory (used + free + reserved).";
                    self.point(b, exp, u, &limit_m, help, &[], &[], v, now);
                }
                if limit > 0.0 {
                    let v = PointValue::Double(uv / limit);
                    self.point(
                        b,
                        exp,
                        u,
                        &util_m,
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
                let p = self.prepare(s, exp);
                let mut key = vec![direction];
                key.extend_from_slice(&p.point);
                for (k, v) in &p.resource {
                    key.extend_from_slice(k.as_bytes());
                    key.push(0);
                    key.extend_from_slice(v.as_bytes());
                    key.push(0);
                }
                let entry = self.io.entry(key).or_insert((0.0, now));
                let dt = now.saturating_sub(entry.1) as f64 / 1e9;
                entry.0 += rate.max(0.0) * dt;
                entry.1 = now;
                let total = PointValue::Int(entry.0 as i64);
                let help = "Bytes through PCIe, from DCGM's PCIe byte rates times the time between collections.";
                self.point(b, exp, s, &m, help, &fixed, &[], total, now);
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
                let mut base = s.clone();
                base.own.clear();
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
                    self.point(b, exp, &base, &m, help, &[], &extra, v, now);
                }
            }
        }
    }

    /// The request's bytes, written once into a buffer of the exact size (the sizes of the
    /// nested messages are added up first, so that the points are copied once); the points'
    /// buffers go back to the pool.
    fn encode(&mut self, b: Builder) -> Vec<u8> {
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
        for (r, z) in resources.into_iter().zip(sized) {
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
                    Instrument::Gauge => wire::bytes_field(f::METRIC_GAUGE, &m.points, &mut out),
                    Instrument::Counter | Instrument::UpDownCounter => {
                        wire::len_header(f::METRIC_SUM, data, &mut out);
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
        out
    }
}
