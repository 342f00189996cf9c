//! Loading the counters file (`-f`), at start and on SIGHUP.

use std::io::Read as _;
use std::path::Path;

use dcgm_prometheus::{Counter, parse_counters};

use crate::regular_file;

/// The counters used without `-f`.
pub const DEFAULT_COUNTERS: &str = include_str!("../etc/default-counters.csv");

/// Reads and parses the counters file (the built-in defaults for `None`).
///
/// # Errors
///
/// A message naming the file: unreadable, not a regular file (a FIFO or a device, refused
/// without blocking on it), a bad row, or no counter at all. A file that parses to nothing
/// (empty, or only comments) is an error rather than an empty export, and so is a file whose
/// lines end with CR only: it reads as one line, and the message says so.
pub fn load(path: Option<&Path>) -> Result<Vec<Counter>, String> {
    let (text, source) = match path {
        Some(p) => (read(p)?, p.display().to_string()),
        None => (
            DEFAULT_COUNTERS.to_string(),
            "built-in default counters".into(),
        ),
    };
    if let Some(n) = cr_only_lines(&text) {
        return Err(format!(
            "{source}: its lines end with CR only (old Mac line endings), so its {n} lines read \
             as one: convert it to LF or CRLF line endings (tr '\\r' '\\n')"
        ));
    }
    let counters = parse_counters(&text).map_err(|e| format!("{source}: {e}"))?;
    if counters.is_empty() {
        return Err(format!(
            "{source}: no counters (only comments and blank lines)"
        ));
    }
    Ok(counters)
}

fn read(p: &Path) -> Result<String, String> {
    let mut text = String::new();
    regular_file::open(p)
        .and_then(|mut f| f.read_to_string(&mut text))
        .map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::InvalidInput {
                ": give the path of a regular counters file"
            } else {
                ""
            };
            format!("cannot read {}: {e}{hint}", p.display())
        })?;
    Ok(text)
}

/// How many lines a text has when its lines end with CR only (no LF at all, and CRs between
/// lines, not just a trailing one); `None` otherwise.
fn cr_only_lines(text: &str) -> Option<usize> {
    if text.contains('\n') {
        return None;
    }
    let n = text.split('\r').filter(|l| !l.trim().is_empty()).count();
    (n > 1).then_some(n)
}
