//! The Prometheus text exposition format 0.0.4, an encoder of the [`Exposition`] model: per
//! family a `# HELP`/`# TYPE` pair and its series (`name{labels} value`, label values
//! escaped), then the `dcgm_exporter_simulated` gauge when the model says.

use std::fmt;
use std::io;

use crate::exposition::{Exposition, MetricFamily};
use crate::identity::labels;
use crate::metadata::{SIMULATED_HELP, SIMULATED_METRIC, SIMULATED_NOTE};
use crate::number::write_number;

/// Appends `exp` in the text format to any [`fmt::Write`] (a `String`, a formatter). Each
/// family is encoded in a buffer and written whole.
///
/// ```
/// use dcgm_prometheus::{Exposition, write_text};
/// let exp = Exposition { simulated: Some(true), ..Exposition::default() };
/// let mut text = String::new();
/// write_text(&exp, &mut text).unwrap();
/// assert!(text.ends_with("\ndcgm_exporter_simulated 1\n"));
/// ```
///
/// # Errors
///
/// The writer's.
pub fn write_text<W: fmt::Write + ?Sized>(exp: &Exposition, out: &mut W) -> fmt::Result {
    let mut buf = String::new();
    write_text_buffered(exp, &mut buf, out)
}

/// [`write_text`] with the caller's buffer (kept between collections, it saves allocations).
pub(crate) fn write_text_buffered<W: fmt::Write + ?Sized>(
    exp: &Exposition,
    buf: &mut String,
    out: &mut W,
) -> fmt::Result {
    for f in &exp.families {
        buf.clear();
        encode_family(exp, f, buf);
        out.write_str(buf)?;
    }
    buf.clear();
    encode_simulated(exp, buf);
    out.write_str(buf)
}

/// Appends `exp` in the text format to a `String` (what [`write_text`] writes).
pub(crate) fn encode(exp: &Exposition, out: &mut String) {
    for f in &exp.families {
        encode_family(exp, f, out);
    }
    encode_simulated(exp, out);
}

/// Appends `exp` in the text format to any [`io::Write`] (a file, a socket, standard output),
/// as [`write_text`] does.
///
/// # Errors
///
/// The writer's.
pub fn write_text_io<W: io::Write + ?Sized>(exp: &Exposition, out: &mut W) -> io::Result<()> {
    let mut buf = String::new();
    write_text_io_buffered(exp, &mut buf, out)
}

/// [`write_text_io`] with the caller's buffer.
pub(crate) fn write_text_io_buffered<W: io::Write + ?Sized>(
    exp: &Exposition,
    buf: &mut String,
    out: &mut W,
) -> io::Result<()> {
    // fmt::Write over io::Write, keeping the io error that fmt::Error cannot carry (what
    // std's own `write_fmt` does inside).
    struct Adapter<'a, W: io::Write + ?Sized> {
        out: &'a mut W,
        error: Option<io::Error>,
    }
    impl<W: io::Write + ?Sized> fmt::Write for Adapter<'_, W> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.out.write_all(s.as_bytes()).map_err(|e| {
                self.error = Some(e);
                fmt::Error
            })
        }
    }
    let mut a = Adapter { out, error: None };
    match write_text_buffered(exp, buf, &mut a) {
        Ok(()) => Ok(()),
        Err(fmt::Error) => Err(a
            .error
            .unwrap_or_else(|| io::Error::other("formatting the exposition failed"))),
    }
}

/// One family: its HELP and TYPE lines, then its series.
fn encode_family(exp: &Exposition, f: &MetricFamily, out: &mut String) {
    out.push_str("# HELP ");
    out.push_str(&f.name);
    out.push(' ');
    escape_help_into(&f.help, out);
    if exp.simulated == Some(true) {
        out.push_str(SIMULATED_NOTE);
    }
    out.push_str("\n# TYPE ");
    out.push_str(&f.name);
    out.push(' ');
    out.push_str(f.kind.exposition_type());
    out.push('\n');
    for s in &f.samples {
        let line = out.len();
        out.push_str(&f.name);
        out.push('{');
        for (i, (name, value)) in s.labels().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_label(name, value, out);
        }
        out.push_str("} ");
        if write_number(&s.value, out) {
            out.push('\n');
        } else {
            // Not a number: the model holds none, but a hand-built one might.
            out.truncate(line);
        }
    }
}

/// `name="value"`, the value escaped.
fn push_label(name: &str, value: &str, out: &mut String) {
    out.push_str(name);
    out.push_str("=\"");
    escape_label_value(value, out);
    out.push('"');
}

/// The `dcgm_exporter_simulated` gauge, when the model says whether the values are simulated.
fn encode_simulated(exp: &Exposition, out: &mut String) {
    let Some(sim) = exp.simulated else {
        return;
    };
    out.push_str("# HELP ");
    out.push_str(SIMULATED_METRIC);
    out.push(' ');
    out.push_str(SIMULATED_HELP);
    out.push_str("\n# TYPE ");
    out.push_str(SIMULATED_METRIC);
    out.push_str(" gauge\n");
    out.push_str(SIMULATED_METRIC);
    if let Some(e) = exp.hostengine.as_deref().filter(|e| !e.is_empty()) {
        out.push('{');
        push_label(labels::HOSTENGINE, e, out);
        out.push('}');
    }
    out.push_str(if sim { " 1\n" } else { " 0\n" });
}

/// Appends `s` escaped as a label value (`\` → `\\`, `"` → `\"`, newline → `\n`).
pub fn escape_label_value(s: &str, out: &mut String) {
    escape::<true>(s, out);
}

/// `s` escaped as a help text (`\` → `\\`, newline → `\n`).
pub fn escape_help(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    escape_help_into(s, &mut out);
    out
}

fn escape_help_into(s: &str, out: &mut String) {
    escape::<false>(s, out);
}

/// Appends `s` with `\` and newlines escaped, and `"` when `QUOTES`.
#[inline]
fn escape<const QUOTES: bool>(s: &str, out: &mut String) {
    let special = |c: u8| (c == b'\\') | (c == b'\n') | (QUOTES & (c == b'"'));
    // Most values have nothing to escape: a pass over the bytes without branches (which the
    // compiler vectorises), then one copy.
    if !s.bytes().fold(false, |any, c| any | special(c)) {
        out.push_str(s);
        return;
    }
    let mut start = 0;
    for (i, c) in s.bytes().enumerate() {
        let escaped = match c {
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'"' if QUOTES => "\\\"",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        out.push_str(escaped);
        start = i + 1;
    }
    out.push_str(&s[start..]);
}
