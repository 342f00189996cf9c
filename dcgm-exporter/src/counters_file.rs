//! Loading the counters file (`-f`), at start and on SIGHUP.

use std::path::Path;

use dcgm_reader::{Counter, parse_counters};

/// The counters used without `-f`.
pub const DEFAULT_COUNTERS: &str = include_str!("../etc/default-counters.csv");

/// Reads and parses the counters file (the built-in defaults for `None`).
///
/// # Errors
///
/// A message naming the file: unreadable, a bad row, or no counter at all. A file that parses
/// to nothing (empty, only comments, or CR-only line endings that make it one comment line) is
/// an error rather than an empty export.
pub fn load(path: Option<&Path>) -> Result<Vec<Counter>, String> {
    let (text, source) = match path {
        Some(p) => (
            std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?,
            p.display().to_string(),
        ),
        None => (
            DEFAULT_COUNTERS.to_string(),
            "built-in default counters".into(),
        ),
    };
    let counters = parse_counters(&text).map_err(|e| format!("{source}: {e}"))?;
    if counters.is_empty() {
        let hint = if text.contains('\r') && !text.contains('\n') {
            " (its lines end with CR only: convert it to LF or CRLF line endings)"
        } else {
            ""
        };
        return Err(format!("{source}: no counters{hint}"));
    }
    Ok(counters)
}
