//! The real things beside a checkout (`../shared`: real libdcgm releases, NVIDIA's bindings, an
//! H200's captures and recordings), found in one place for every test that reads them.
//!
//! A user's fresh clone has no `../shared`: a test that needs it skips, says why, and is
//! counted as skipped by `scripts/test.sh`. CI has it and sets `DCGM_REQUIRE_REAL=1`, under
//! which its absence fails the test instead. `DCGM_SHARED_DIR` points the lookup elsewhere;
//! `.ci/run` sets it to an empty folder to prove that every such test skips cleanly.

use std::io::Write;
use std::path::PathBuf;

/// The folder of real things: `DCGM_SHARED_DIR` when set, else `shared` beside the workspace.
///
/// ```
/// let dir = dcgm::testing::shared_dir();
/// assert!(dir.ends_with("shared") || std::env::var_os("DCGM_SHARED_DIR").is_some());
/// ```
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("DCGM_SHARED_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    }
}

/// `rel` inside [`shared_dir`] when it exists. Where it is absent, the calling test is
/// reported skipped with the reason ([`skip`]) and `None` comes back; the caller returns.
///
/// # Panics
///
/// Under `DCGM_REQUIRE_REAL=1` (CI), when the path is absent.
///
/// ```
/// if let Some(capture) = dcgm::testing::shared_path("fixtures/nvml-capture-h200.yaml") {
///     assert!(capture.is_file());
/// }
/// ```
pub fn shared_path(rel: &str) -> Option<PathBuf> {
    let p = shared_dir().join(rel);
    if p.exists() {
        return Some(p);
    }
    skip(&format!(
        "{} is absent (a clone without ../shared)",
        p.display()
    ));
    None
}

/// Reports the calling test as skipped: one line `SKIPPED[test] <test>: <why>` written to the
/// process's standard output, past libtest's capture, which `scripts/test.sh` counts as a skip
/// and takes off the passes (libtest has no run-time skip: the test itself returns and passes).
///
/// # Panics
///
/// Under `DCGM_REQUIRE_REAL=1` (CI), where nothing the tests read may be missing.
pub fn skip(why: &str) {
    assert_ne!(
        std::env::var("DCGM_REQUIRE_REAL").as_deref(),
        Ok("1"),
        "DCGM_REQUIRE_REAL=1 but the test would skip: {why}"
    );
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    // `std::io::stdout()` is not libtest's captured `print!`: the line reaches the run's log
    // whether the test passes or not.
    let _ = writeln!(std::io::stdout().lock(), "SKIPPED[test] {test}: {why}");
}
