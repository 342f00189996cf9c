//! Reading `dmon --json` output back: one JSON object per line, keyed by field tag, `null`
//! for a blank; and the phases file that names stretches of it.

use std::collections::BTreeSet;
use std::io::BufRead;

use crate::field::Field;
use crate::sample::Sample;
use crate::window::Window;

/// Why a replay file or a phases file could not be read. Every error about the content names
/// its line (counted from 1).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The file could not be read.
    #[error("cannot read {what}: {source}")]
    Io {
        /// Which file.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The last line stops mid-object: the file was cut short (a recording still running, or
    /// a disk that filled up).
    #[error(
        "line {line}: the sample is cut short (the file ends mid-object); drop that line or \
         replay the finished file"
    )]
    Truncated {
        /// The line.
        line: usize,
    },
    /// A line is not JSON.
    #[error("line {line}: not JSON: {source} (dmon --json writes one JSON object per line)")]
    Json {
        /// The line.
        line: usize,
        /// The parser's complaint.
        #[source]
        source: serde_json::Error,
    },
    /// A line is JSON, but not an object.
    #[error("line {line}: expected a JSON object (one sample per line, as dmon --json writes)")]
    NotObject {
        /// The line.
        line: usize,
    },
    /// A key every sample has is missing.
    #[error("line {line}: no \"{key}\" (every dmon --json sample has it)")]
    MissingKey {
        /// The line.
        line: usize,
        /// The key.
        key: &'static str,
    },
    /// A value has the wrong type.
    #[error("line {line}: \"{key}\" is {found}, expected {expected}")]
    BadValue {
        /// The line.
        line: usize,
        /// The key.
        key: String,
        /// What was there.
        found: String,
        /// What was expected.
        expected: &'static str,
    },
    /// No line holds a GPU sample.
    #[error("no GPU samples in the file (it is empty, or holds other entities only)")]
    Empty,
    /// A phases-file line is not `PHASE <name> <unix seconds>`.
    #[error("phases file line {line}: expected `PHASE <name> <unix seconds>`, found {text:?}")]
    BadPhase {
        /// The line.
        line: usize,
        /// Its text.
        text: String,
    },
    /// The phase asked for is not in the phases file.
    #[error("no phase {name:?} in the phases file; it has: {known}")]
    NoSuchPhase {
        /// The name asked for.
        name: String,
        /// The names it has.
        known: String,
    },
    /// The selection holds no sample.
    #[error("the selection {what} holds no sample (the trace runs {trace})")]
    EmptySelection {
        /// The selection.
        what: String,
        /// The trace's span.
        trace: String,
    },
}

/// A replayed recording.
#[derive(Debug, Clone)]
pub struct Trace {
    /// Its GPU samples.
    pub window: Window,
    /// The fields the doctor knows that the file carries.
    pub fields: BTreeSet<Field>,
    /// Keys the doctor does not read (other fields).
    pub ignored_keys: BTreeSet<String>,
    /// Lines of entities other than GPUs (MIG instances, switches), skipped.
    pub skipped_lines: usize,
}

/// The keys of a sample's identity, not fields.
const META_KEYS: [&str; 4] = ["timestamp_ms", "entity_group", "entity_id", "simulated"];

/// Reads `dmon --json` output. Blank lines are skipped; anything else that is not a sample is
/// an error naming its line.
///
/// ```
/// let text = r#"{"timestamp_ms":1000,"entity_group":"GPU","entity_id":0,"gpu_utilization":null}"#;
/// let trace = dcgm_doctor::replay::read(text.as_bytes()).unwrap();
/// assert_eq!(trace.window.len(), 1);
/// // A blank stays unknown: never 0.
/// assert_eq!(trace.window.gpu(0)[0].get(dcgm_doctor::Field::GpuUtil), None);
/// ```
///
/// # Errors
///
/// [`ReplayError`]: the line that is not a sample, or the read that failed.
pub fn read(input: impl BufRead) -> Result<Trace, ReplayError> {
    let mut samples = Vec::new();
    let mut fields = BTreeSet::new();
    let mut ignored = BTreeSet::new();
    let mut skipped = 0;
    let mut simulated = false;
    let mut lines = input.lines().enumerate().peekable();
    while let Some((i, line)) = lines.next() {
        let line_no = i + 1;
        let text = line.map_err(|source| ReplayError::Io {
            what: format!("line {line_no}"),
            source,
        })?;
        if text.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) if e.is_eof() && lines.peek().is_none() => {
                return Err(ReplayError::Truncated { line: line_no });
            }
            Err(source) => {
                return Err(ReplayError::Json {
                    line: line_no,
                    source,
                });
            }
        };
        let serde_json::Value::Object(obj) = value else {
            return Err(ReplayError::NotObject { line: line_no });
        };
        let group = obj
            .get("entity_group")
            .ok_or(ReplayError::MissingKey {
                line: line_no,
                key: "entity_group",
            })?
            .as_str()
            .ok_or_else(|| bad(line_no, "entity_group", &obj["entity_group"], "a string"))?;
        if group != "GPU" {
            skipped += 1;
            continue;
        }
        let int = |key: &'static str| -> Result<i64, ReplayError> {
            let v = obj
                .get(key)
                .ok_or(ReplayError::MissingKey { line: line_no, key })?;
            v.as_i64()
                .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                .ok_or_else(|| bad(line_no, key, v, "a whole number"))
        };
        let ts = int("timestamp_ms")?;
        let id = int("entity_id")?;
        let gpu = u32::try_from(id)
            .map_err(|_| bad(line_no, "entity_id", &obj["entity_id"], "a GPU id"))?;
        let mut s = Sample::new(ts, gpu);
        for (k, v) in &obj {
            if META_KEYS.contains(&k.as_str()) {
                if k == "simulated" && v.as_bool() == Some(true) {
                    simulated = true;
                }
                continue;
            }
            let Some(f) = Field::from_key(k) else {
                ignored.insert(k.clone());
                continue;
            };
            let x = match v {
                serde_json::Value::Null => None,
                serde_json::Value::Number(n) => n.as_f64(),
                other => return Err(bad(line_no, k, other, "a number or null")),
            };
            if x.is_some() {
                fields.insert(f);
            }
            s.set(f, x);
        }
        samples.push(s);
    }
    if samples.is_empty() {
        return Err(ReplayError::Empty);
    }
    let mut window = Window::from_samples(samples);
    window.simulated = simulated;
    Ok(Trace {
        window,
        fields,
        ignored_keys: ignored,
        skipped_lines: skipped,
    })
}

fn bad(line: usize, key: &str, v: &serde_json::Value, expected: &'static str) -> ReplayError {
    let mut found = v.to_string();
    if found.len() > 40 {
        found.truncate(40);
        found.push('…');
    }
    ReplayError::BadValue {
        line,
        key: key.to_string(),
        found,
        expected,
    }
}

/// A named stretch of a recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Its name.
    pub name: String,
    /// When it started, ms since the Unix epoch.
    pub start_ms: i64,
    /// When the next phase started (`None` for the last: it runs to the trace's end).
    pub end_ms: Option<i64>,
}

/// Reads a phases file: lines `PHASE <name> <unix seconds>`, each phase lasting until the next
/// one starts. A phase named `end` only marks where the one before it ends. Blank lines and
/// lines starting with `#` are skipped.
///
/// ```
/// let p = dcgm_doctor::replay::phases("PHASE idle 10.0\nPHASE busy 12.5\nPHASE end 20\n").unwrap();
/// assert_eq!(p.len(), 2);
/// assert_eq!((p[1].start_ms, p[1].end_ms), (12_500, Some(20_000)));
/// ```
///
/// # Errors
///
/// [`ReplayError::BadPhase`] naming the first line that is not a phase.
pub fn phases(text: &str) -> Result<Vec<Phase>, ReplayError> {
    let mut marks: Vec<(String, i64)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = t.split_whitespace().collect();
        let secs = match parts.as_slice() {
            ["PHASE", _, s] => s.parse::<f64>().ok().filter(|s| s.is_finite()),
            _ => None,
        };
        let Some(secs) = secs else {
            return Err(ReplayError::BadPhase {
                line: i + 1,
                text: t.to_string(),
            });
        };
        marks.push((parts[1].to_string(), (secs * 1e3).round() as i64));
    }
    marks.sort_by_key(|m| m.1);
    let mut out: Vec<Phase> = Vec::new();
    for (k, (name, start)) in marks.iter().enumerate() {
        if name == "end" {
            continue;
        }
        out.push(Phase {
            name: name.clone(),
            start_ms: *start,
            end_ms: marks.get(k + 1).map(|m| m.1),
        });
    }
    Ok(out)
}

/// How long after a phase starts its samples are left out when the phase is judged alone: the
/// engine's sampling and the workload's ramp (a watch's first samples are blank; a job takes
/// a moment to fill the GPU).
pub const PHASE_SETTLE_S: f64 = 1.5;

/// Which part of a trace to judge.
#[derive(Debug, Clone, PartialEq)]
pub enum Selection {
    /// All of it.
    All,
    /// A phase of the phases file, from `settle_s` after its start to its end.
    Phase {
        /// The phase's name.
        name: String,
        /// Seconds left out at its start.
        settle_s: f64,
    },
    /// Seconds from the trace's first sample: `from` up to `to` (either end open).
    Range {
        /// Start, seconds from the first sample.
        from_s: Option<f64>,
        /// End, seconds from the first sample.
        to_s: Option<f64>,
    },
}

/// The part of `window` a selection names.
///
/// # Errors
///
/// [`ReplayError::NoSuchPhase`] when the phase is not in `phases`;
/// [`ReplayError::EmptySelection`] when the selection holds no sample.
pub fn select(window: &Window, phases: &[Phase], sel: &Selection) -> Result<Window, ReplayError> {
    let Some((first, last)) = window.span() else {
        return Err(ReplayError::Empty);
    };
    let (from, to, what) = match sel {
        Selection::All => return Ok(window.clone()),
        Selection::Phase { name, settle_s } => {
            let p = phases.iter().find(|p| &p.name == name).ok_or_else(|| {
                ReplayError::NoSuchPhase {
                    name: name.clone(),
                    known: phases
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                }
            })?;
            (
                p.start_ms + (settle_s * 1e3) as i64,
                p.end_ms.unwrap_or(i64::MAX),
                format!("phase {name}"),
            )
        }
        Selection::Range { from_s, to_s } => (
            from_s.map_or(i64::MIN, |s| first + (s * 1e3) as i64),
            to_s.map_or(i64::MAX, |s| first + (s * 1e3) as i64),
            format!(
                "{}..{} s",
                from_s.map(|s| s.to_string()).unwrap_or_default(),
                to_s.map(|s| s.to_string()).unwrap_or_default()
            ),
        ),
    };
    let w = window.between(from, to);
    if w.is_empty() {
        return Err(ReplayError::EmptySelection {
            what,
            trace: format!("0..{:.1} s", (last - first) as f64 / 1e3),
        });
    }
    Ok(w)
}
