//! Counters files in dcgm-exporter's format: which DCGM fields to export, under which metric
//! name, with which Prometheus type and help text.
//!
//! One record per line, three comma-separated columns:
//!
//! ```text
//! # comment
//! DCGM_FI_DEV_GPU_TEMP,      gauge,   GPU temperature in degrees Celsius.
//! DCGM_FI_DEV_POWER_USAGE,   gauge,   Board power draw in watts.
//! DCGM_FI_DRIVER_VERSION,    label,   Driver version, added as a label to every series.
//! DCGM_EXP_XID_ERRORS_COUNT, counter, XID errors seen over the last window, by XID.
//! ```
//!
//! * The first column is a `DCGM_FI_*` name, either the DCGM 4.6 name or a pre-4.6 alias
//!   (`DCGM_FI_DEV_GPU_TEMP` and `DCGM_FI_DEV_GPU_TEMP_CELSIUS` are the same field). The metric
//!   is named exactly as written, so an existing dashboard keeps working whichever spelling its
//!   file uses. dcgm-exporter's own rows (`DCGM_EXP_*`) are accepted too.
//! * The type is `gauge`, `counter`, `label` (the value becomes a label on every other series
//!   of the entity), or, as dcgm-exporter accepts them, `histogram` and `summary`.
//! * The help text is the rest of the record; it may be quoted (`"…"`, with `""` for a quote)
//!   when it contains a comma.
//! * Lines whose first non-blank character is `#` and blank lines are skipped; spaces and tabs
//!   around each column are ignored.
//!
//! ```
//! use dcgm_prometheus::{CounterField, MetricKind, parse_counters};
//! let counters = parse_counters("DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (C).\n")?;
//! assert_eq!(counters[0].metric_name, "DCGM_FI_DEV_GPU_TEMP");
//! assert_eq!(counters[0].field, CounterField::Dcgm(dcgm::FieldId(150)));
//! assert_eq!(counters[0].kind, MetricKind::Gauge);
//! assert!(parse_counters("DCGM_FI_DEV_GPU_TEMP, gauge\n").unwrap_err().line == 1);
//! # Ok::<(), dcgm_prometheus::CountersError>(())
//! ```

use std::fmt;

use dcgm::FieldId;

/// The Prometheus type of a counters-file row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetricKind {
    /// A value that goes up and down.
    Gauge,
    /// A value that only grows.
    Counter,
    /// Accepted for compatibility with dcgm-exporter; a single DCGM value cannot make a
    /// histogram's buckets, so such rows are exposed as `untyped`.
    Histogram,
    /// Accepted for compatibility with dcgm-exporter; exposed as `untyped` (see `Histogram`).
    Summary,
    /// Not a metric: the field's value becomes a label, named after the row, on every series
    /// of the same entity.
    Label,
}

impl MetricKind {
    /// Parses a type column (case-insensitive).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.to_ascii_lowercase().as_str() {
            "gauge" => Self::Gauge,
            "counter" => Self::Counter,
            "histogram" => Self::Histogram,
            "summary" => Self::Summary,
            "label" => Self::Label,
            _ => return None,
        })
    }

    /// The name used in counters files.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Gauge => "gauge",
            Self::Counter => "counter",
            Self::Histogram => "histogram",
            Self::Summary => "summary",
            Self::Label => "label",
        }
    }

    /// The type written on the `# TYPE` line of the exposition.
    pub fn exposition_type(self) -> &'static str {
        match self {
            Self::Gauge => "gauge",
            Self::Counter => "counter",
            Self::Histogram | Self::Summary | Self::Label => "untyped",
        }
    }
}

impl fmt::Display for MetricKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The rows dcgm-exporter computes itself rather than reading one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExporterCounter {
    /// `DCGM_EXP_XID_ERRORS_COUNT`: XID errors over a time window, one series per XID
    /// (label `xid`), computed from `DCGM_FI_DEV_XID_ERRORS`.
    XidErrorsCount,
    /// `DCGM_EXP_CLOCK_EVENTS_COUNT`: clock events (throttling reasons) over a time window,
    /// one series per reason (label `clock_event`), computed from
    /// `DCGM_FI_DEV_CLOCKS_EVENT_REASONS`.
    ClockEventsCount,
    /// `DCGM_EXP_GPU_HEALTH_STATUS`: DCGM's health-watch verdicts, one series per GPU and
    /// health watch (labels `health_watch`, `health_error_code`; 0 pass, 10 warn, 20 fail).
    GpuHealthStatus,
    /// `DCGM_EXP_P2P_STATUS`: NVLink peer-to-peer status, one series per GPU and peer GPU
    /// (labels `peer_gpu`, `link_status`; 0 is OK).
    P2pStatus,
    /// `DCGM_EXP_GPU_INFO`: value 1, one series per GPU or MIG instance, labelled with its
    /// identity, driver and VBIOS versions, CUDA compute capability and MIG mode
    /// ([`GpuInfo`](crate::GpuInfo)), for PromQL joins.
    GpuInfo,
    /// `DCGM_EXP_POD_FB_USED`: GPU memory (MiB) used by the processes of each owner (a
    /// Kubernetes pod) on each GPU, from DCGM's running-process lists; the owners come from
    /// the caller ([`Collector::set_owner_memory`](crate::Collector::set_owner_memory); until
    /// then, no series).
    PodFbUsed,
    /// `DCGM_EXP_POD_SM_UTIL`: the SM utilisation DCGM's process statistics give the
    /// processes of each owner (a Kubernetes pod) on each GPU, summed, in percent; the values
    /// come from the caller ([`Collector::process_sm_util`](crate::Collector::process_sm_util),
    /// [`Collector::set_owner_sm_util`](crate::Collector::set_owner_sm_util); until then, no
    /// series).
    PodSmUtil,
}

impl ExporterCounter {
    /// Every exporter row, in name order.
    pub const ALL: [ExporterCounter; 7] = [
        Self::ClockEventsCount,
        Self::GpuHealthStatus,
        Self::GpuInfo,
        Self::P2pStatus,
        Self::PodFbUsed,
        Self::PodSmUtil,
        Self::XidErrorsCount,
    ];

    /// The row name (`DCGM_EXP_XID_ERRORS_COUNT`).
    pub fn name(self) -> &'static str {
        match self {
            Self::XidErrorsCount => "DCGM_EXP_XID_ERRORS_COUNT",
            Self::ClockEventsCount => "DCGM_EXP_CLOCK_EVENTS_COUNT",
            Self::GpuHealthStatus => "DCGM_EXP_GPU_HEALTH_STATUS",
            Self::P2pStatus => "DCGM_EXP_P2P_STATUS",
            Self::GpuInfo => "DCGM_EXP_GPU_INFO",
            Self::PodFbUsed => "DCGM_EXP_POD_FB_USED",
            Self::PodSmUtil => "DCGM_EXP_POD_SM_UTIL",
        }
    }

    /// The row by name.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == s)
    }

    /// The DCGM field the row is computed from, if it is computed from one.
    pub fn source_field(self) -> Option<FieldId> {
        let name = match self {
            Self::XidErrorsCount => "DCGM_FI_DEV_XID_ERRORS",
            Self::ClockEventsCount => "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
            Self::GpuHealthStatus
            | Self::P2pStatus
            | Self::GpuInfo
            | Self::PodFbUsed
            | Self::PodSmUtil => {
                return None;
            }
        };
        FieldId::by_name(name)
    }
}

impl fmt::Display for ExporterCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a row reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CounterField {
    /// A DCGM field.
    Dcgm(FieldId),
    /// A row the exporter computes (`DCGM_EXP_*`).
    Exporter(ExporterCounter),
}

/// One row of a counters file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    /// The field (or exporter row) the metric reads.
    pub field: CounterField,
    /// The metric (or, for `label` rows, label) name: the first column exactly as written.
    pub metric_name: String,
    /// The Prometheus type.
    pub kind: MetricKind,
    /// The help text (may be empty).
    pub help: String,
    /// The 1-based line of the file it came from (0 if it was made in code).
    pub line: usize,
}

impl Counter {
    /// The DCGM field, for a field row.
    pub fn field_id(&self) -> Option<FieldId> {
        match self.field {
            CounterField::Dcgm(f) => Some(f),
            CounterField::Exporter(_) => None,
        }
    }

    /// Whether the row makes a label rather than a metric.
    pub fn is_label(&self) -> bool {
        self.kind == MetricKind::Label
    }
}

/// Why a counters file was rejected, with the 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct CountersError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: CountersErrorKind,
}

/// What is wrong with a line of a counters file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CountersErrorKind {
    /// Not three columns.
    #[error(
        "expected 3 comma-separated columns (field, type, help), found {found} (quote a help text that contains commas)"
    )]
    ColumnCount {
        /// How many columns the line had.
        found: usize,
    },
    /// A quoted column without its closing quote.
    #[error("a quoted column has no closing quote")]
    UnterminatedQuote,
    /// Text after a quoted column's closing quote.
    #[error("text after the closing quote of a quoted column")]
    TextAfterQuote,
    /// A quote inside an unquoted column.
    #[error("a quote inside an unquoted column")]
    BareQuote,
    /// The field column is empty.
    #[error("the field column is empty")]
    EmptyField,
    /// Not a DCGM field name (4.6 or pre-4.6) nor an exporter row.
    #[error("unknown DCGM field {0:?} (not a DCGM 4.6 name, a pre-4.6 alias or a DCGM_EXP_* row)")]
    UnknownField(String),
    /// A DCGM field given by its tag or number: the metric needs a `DCGM_FI_*` name.
    #[error("{given:?} is not a field name: write {name}")]
    NotAFieldName {
        /// What the line said.
        given: String,
        /// The field's `DCGM_FI_*` name to write instead.
        name: String,
    },
    /// Not gauge, counter, histogram, summary or label.
    #[error("unknown metric type {0:?} (expected gauge, counter, histogram, summary or label)")]
    UnknownType(String),
    /// An exporter row (`DCGM_EXP_*`) given the type `label`.
    #[error("{0} cannot be a label")]
    ExporterRowAsLabel(ExporterCounter),
    /// The name cannot be a Prometheus metric or label name.
    #[error("{0:?} is not a valid Prometheus name")]
    InvalidName(String),
    /// The same metric name on two lines.
    #[error("{name} is already defined on line {first_line}")]
    Duplicate {
        /// The metric name.
        name: String,
        /// Where it first appeared.
        first_line: usize,
    },
}

/// Parses a counters file (see the [module docs](self)).
///
/// Every row is checked: a malformed line, an unknown field or type, an invalid or repeated
/// name is an error carrying the line number.
pub fn parse_counters(text: &str) -> Result<Vec<Counter>, CountersError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out: Vec<Counter> = Vec::new();
    let mut cols: Vec<String> = Vec::with_capacity(3);
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let err = |reason| CountersError { line, reason };
        split_record(trimmed, &mut cols).map_err(err)?;
        if cols.len() != 3 {
            return Err(err(CountersErrorKind::ColumnCount { found: cols.len() }));
        }
        let name = cols[0].as_str();
        if name.is_empty() {
            return Err(err(CountersErrorKind::EmptyField));
        }
        let kind = MetricKind::parse(&cols[1])
            .ok_or_else(|| err(CountersErrorKind::UnknownType(cols[1].clone())))?;
        let field = resolve_field(name).map_err(err)?;
        if let CounterField::Exporter(c) = field
            && kind == MetricKind::Label
        {
            return Err(err(CountersErrorKind::ExporterRowAsLabel(c)));
        }
        let valid = if kind == MetricKind::Label {
            is_label_name(name)
        } else {
            is_metric_name(name)
        };
        if !valid {
            return Err(err(CountersErrorKind::InvalidName(name.to_string())));
        }
        if let Some(first) = out.iter().find(|c| c.metric_name == name) {
            return Err(err(CountersErrorKind::Duplicate {
                name: name.to_string(),
                first_line: first.line,
            }));
        }
        out.push(Counter {
            field,
            metric_name: name.to_string(),
            kind,
            help: std::mem::take(&mut cols[2]),
            line,
        });
    }
    Ok(out)
}

/// The DCGM fields a set of counters reads (field rows, label rows and the fields exporter rows
/// are computed from), each once, in first-use order.
pub fn counter_fields(counters: &[Counter]) -> Vec<FieldId> {
    let mut out = Vec::new();
    for c in counters {
        let f = match c.field {
            CounterField::Dcgm(f) => Some(f),
            CounterField::Exporter(e) => e.source_field(),
        };
        if let Some(f) = f
            && !out.contains(&f)
        {
            out.push(f);
        }
    }
    out
}

fn resolve_field(name: &str) -> Result<CounterField, CountersErrorKind> {
    if let Some(f) = FieldId::by_name(name) {
        return Ok(CounterField::Dcgm(f));
    }
    if let Some(c) = ExporterCounter::from_name(name) {
        return Ok(CounterField::Exporter(c));
    }
    let by_other = name
        .parse::<u16>()
        .ok()
        .map(FieldId)
        .filter(|f| f.is_known())
        .or_else(|| FieldId::by_tag(name));
    match by_other {
        Some(f) => Err(CountersErrorKind::NotAFieldName {
            given: name.to_string(),
            name: f.name(),
        }),
        None => Err(CountersErrorKind::UnknownField(name.to_string())),
    }
}

/// Splits one CSV record into trimmed columns (RFC 4180 quoting, within one line).
fn split_record(line: &str, cols: &mut Vec<String>) -> Result<(), CountersErrorKind> {
    cols.clear();
    let mut rest = line;
    loop {
        let field = rest.trim_start_matches([' ', '\t']);
        if let Some(q) = field.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = q.char_indices();
            let after = loop {
                match chars.next() {
                    None => return Err(CountersErrorKind::UnterminatedQuote),
                    Some((i, '"')) => {
                        if q[i + 1..].starts_with('"') {
                            value.push('"');
                            chars.next();
                        } else {
                            break &q[i + 1..];
                        }
                    }
                    Some((_, c)) => value.push(c),
                }
            };
            cols.push(value.trim().to_string());
            let after = after.trim_start_matches([' ', '\t']);
            if after.is_empty() {
                return Ok(());
            }
            match after.strip_prefix(',') {
                Some(r) => rest = r,
                None => return Err(CountersErrorKind::TextAfterQuote),
            }
        } else {
            let (value, next) = match field.find(',') {
                Some(i) => (&field[..i], Some(&field[i + 1..])),
                None => (field, None),
            };
            if value.contains('"') {
                return Err(CountersErrorKind::BareQuote);
            }
            cols.push(value.trim().to_string());
            match next {
                Some(r) => rest = r,
                None => return Ok(()),
            }
        }
    }
}

/// Whether `s` is a valid Prometheus metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`).
pub fn is_metric_name(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_' || c == b':')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':')
}

/// Whether `s` is a valid Prometheus label name (`[a-zA-Z_][a-zA-Z0-9_]*`, not starting with
/// `__`, which Prometheus reserves).
pub fn is_label_name(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
        && !s.starts_with("__")
}
