//! gpustat's `--json`: its schema, its keys in its order, written as Python's
//! `json.dump(indent=4)` writes it.

use super::model::{Gpu, Proc, Snapshot};

impl Snapshot {
    /// gpustat's `--json` document, its keys in its order.
    pub(crate) fn to_json(&self) -> Json {
        Json::Object(vec![
            ("hostname", Json::Str(self.hostname.clone())),
            (
                "driver_version",
                Json::opt_str(self.driver_version.as_deref()),
            ),
            ("query_time", Json::Str(self.query_time.iso())),
            (
                "gpus",
                Json::List(self.gpus.iter().map(Gpu::to_json).collect()),
            ),
        ])
    }
}

impl Gpu {
    pub(crate) fn to_json(&self) -> Json {
        Json::Object(vec![
            ("index", Json::Int(i64::from(self.index))),
            ("uuid", Json::opt_str(self.uuid.as_deref())),
            ("name", Json::opt_str(self.name.as_deref())),
            ("temperature.gpu", Json::opt_int(self.temperature)),
            ("fan.speed", Json::opt_int(self.fan_speed)),
            ("utilization.gpu", Json::opt_int(self.utilization)),
            ("utilization.enc", Json::opt_int(self.utilization_enc)),
            ("utilization.dec", Json::opt_int(self.utilization_dec)),
            ("power.draw", Json::opt_int(self.power_draw)),
            ("enforced.power.limit", Json::opt_int(self.power_limit)),
            ("memory.used", Json::opt_int(self.memory_used)),
            ("memory.total", Json::opt_int(self.memory_total)),
            (
                "processes",
                match &self.processes {
                    None => Json::Null,
                    Some(ps) => Json::List(ps.iter().map(Proc::to_json).collect()),
                },
            ),
        ])
    }
}

impl Proc {
    pub(crate) fn to_json(&self) -> Json {
        Json::Object(vec![
            ("username", Json::opt_str(self.username.as_deref())),
            ("command", Json::opt_str(self.command.as_deref())),
            (
                "full_command",
                match &self.full_command {
                    None => Json::Null,
                    Some(w) => Json::List(w.iter().map(|a| Json::Str(a.clone())).collect()),
                },
            ),
            (
                "gpu_memory_usage",
                Json::Int(i64::try_from(self.gpu_memory_usage).unwrap_or(i64::MAX)),
            ),
            (
                "cpu_percent",
                self.cpu_percent.map_or(Json::Null, Json::Float),
            ),
            (
                "cpu_memory_usage",
                Json::opt_int(
                    self.cpu_memory_usage
                        .map(|b| i64::try_from(b).unwrap_or(i64::MAX)),
                ),
            ),
            ("pid", Json::Int(i64::from(self.pid))),
        ])
    }
}

/// A JSON value whose objects keep their keys in the order given, written as Python's
/// `json.dump(indent=4)` writes it (gpustat's `--json`): four-space indents, non-ASCII
/// characters escaped.
pub(crate) enum Json {
    Null,
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Json>),
    Object(Vec<(&'static str, Json)>),
}

impl Json {
    fn opt_int(v: Option<i64>) -> Self {
        v.map_or(Json::Null, Json::Int)
    }

    fn opt_str(v: Option<&str>) -> Self {
        v.map_or(Json::Null, |s| Json::Str(s.to_string()))
    }

    pub(crate) fn write(&self, out: &mut String, depth: usize) {
        let indent = |out: &mut String, d: usize| {
            out.push('\n');
            out.push_str(&"    ".repeat(d));
        };
        match self {
            Json::Null => out.push_str("null"),
            Json::Int(i) => out.push_str(&i.to_string()),
            // `{:?}` keeps the `.0` of a whole number, as Python's repr does.
            Json::Float(f) if f.is_finite() => out.push_str(&format!("{f:?}")),
            Json::Float(_) => out.push_str("null"),
            Json::Str(s) => write_str(out, s),
            Json::List(items) if items.is_empty() => out.push_str("[]"),
            Json::List(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    v.write(out, depth + 1);
                }
                indent(out, depth);
                out.push(']');
            }
            Json::Object(members) if members.is_empty() => out.push_str("{}"),
            Json::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    write_str(out, k);
                    out.push_str(": ");
                    v.write(out, depth + 1);
                }
                indent(out, depth);
                out.push('}');
            }
        }
    }
}

/// A JSON string with Python's `ensure_ascii` escapes.
fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_ascii() && c >= ' ' => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    out.push('"');
}
