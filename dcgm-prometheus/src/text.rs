//! The Prometheus text exposition format 0.0.4, an encoder of the [`Exposition`] model: per
//! family a `# HELP`/`# TYPE` pair and its series (`name{labels} value`, label values
//! escaped), then the `dcgm_exporter_simulated` gauge when the model says. A label set shared
//! by several series is encoded once per collection.

use std::fmt;
use std::io;
use std::sync::Arc;

use crate::exposition::{Exposition, MetricFamily};
use crate::identity::{LabelSet, labels};
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
    TextEncoder::default().write(exp, out)
}

/// Appends `exp` in the text format to any [`io::Write`] (a file, a socket, standard output),
/// as [`write_text`] does.
///
/// # Errors
///
/// The writer's.
pub fn write_text_io<W: io::Write + ?Sized>(exp: &Exposition, out: &mut W) -> io::Result<()> {
    TextEncoder::default().write_io(exp, out)
}

/// Bits of the index of [`TextEncoder`]'s table of encoded label sets.
const SLOT_BITS: u32 = 12;

/// The text encoder, with what it keeps between collections: a family's buffer, and the label
/// sets of the collection, each encoded once (`name="value",…`), found by address.
#[derive(Debug, Default)]
pub(crate) struct TextEncoder {
    /// One family's text, written whole to a [`fmt::Write`].
    buf: String,
    /// The encoded label sets of this collection, back to back.
    sets: String,
    /// Direct-mapped by a set's address: where its text is in `sets`. A slot of an earlier
    /// collection, or of another set of the same index, is encoded again.
    slots: Vec<Slot>,
    /// Counts collections, so that the slots of earlier ones (whose sets may be gone and
    /// their addresses reused) are not read.
    collection: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    address: usize,
    collection: u64,
    start: usize,
    end: usize,
}

impl TextEncoder {
    /// Starts a collection.
    fn begin(&mut self) {
        self.collection += 1;
        self.sets.clear();
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); 1 << SLOT_BITS];
        }
    }

    /// Appends `exp` in the text format to a `String`.
    pub(crate) fn encode(&mut self, exp: &Exposition, out: &mut String) {
        self.begin();
        for f in &exp.families {
            self.family(exp, f, out);
        }
        encode_simulated(exp, out);
    }

    /// Appends `exp` in the text format to any [`fmt::Write`], family by family.
    pub(crate) fn write<W: fmt::Write + ?Sized>(
        &mut self,
        exp: &Exposition,
        out: &mut W,
    ) -> fmt::Result {
        self.begin();
        let mut buf = std::mem::take(&mut self.buf);
        let mut written = Ok(());
        for f in &exp.families {
            buf.clear();
            self.family(exp, f, &mut buf);
            written = out.write_str(&buf);
            if written.is_err() {
                break;
            }
        }
        if written.is_ok() {
            buf.clear();
            encode_simulated(exp, &mut buf);
            written = out.write_str(&buf);
        }
        self.buf = buf;
        written
    }

    /// Appends `exp` in the text format to any [`io::Write`], family by family.
    pub(crate) fn write_io<W: io::Write + ?Sized>(
        &mut self,
        exp: &Exposition,
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
        match self.write(exp, &mut a) {
            Ok(()) => Ok(()),
            Err(fmt::Error) => Err(a
                .error
                .unwrap_or_else(|| io::Error::other("formatting the exposition failed"))),
        }
    }

    /// Where the text of `set` is in `self.sets`, encoding it when this collection has not.
    fn encoded(&mut self, set: &Arc<LabelSet>) -> (usize, usize) {
        let address = Arc::as_ptr(set) as usize;
        let index =
            ((address as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOT_BITS)) as usize;
        let slot = &mut self.slots[index];
        if slot.address == address && slot.collection == self.collection {
            return (slot.start, slot.end);
        }
        let start = self.sets.len();
        for (i, (name, value)) in set.iter().enumerate() {
            if i > 0 {
                self.sets.push(',');
            }
            push_label(name, value, &mut self.sets);
        }
        *slot = Slot {
            address,
            collection: self.collection,
            start,
            end: self.sets.len(),
        };
        (start, slot.end)
    }

    /// One family: its HELP and TYPE lines, then its series.
    fn family(&mut self, exp: &Exposition, f: &MetricFamily, out: &mut String) {
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
            let mut first = true;
            for set in [&s.base, &s.row, &s.workload] {
                if set.is_empty() {
                    continue;
                }
                let (start, end) = self.encoded(set);
                if !first {
                    out.push(',');
                }
                out.push_str(&self.sets[start..end]);
                first = false;
            }
            for (name, value) in &s.own {
                if !first {
                    out.push(',');
                }
                push_label(name, value, out);
                first = false;
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
