//! The real libdcgm releases beside a checkout (`../shared/realdcgm-VERSION`), staged loadable.

use std::path::PathBuf;
use std::process::Command;

/// The releases beside a checkout, oldest first.
pub const REAL_RELEASES: [&str; 4] = ["3.3.9", "4.1.1", "4.5.3", "4.6.0"];

/// The library file (`lib/libdcgm.so.4`, `lib/libdcgm.so.3` for 3.x) of real release
/// `version`, staged loadable by `scripts/real-dcgm.sh` (in `../shared` its version links are
/// text files the loader rejects). `None` where `../shared` lacks it: the calling test is then
/// reported skipped ([`skip`](crate::testing::skip); a failure under `DCGM_REQUIRE_REAL=1`).
///
/// # Panics
///
/// When the release is present but cannot be staged.
///
/// ```
/// if let Some(lib) = dcgm::testing::real_library("4.6.0") {
///     assert!(lib.ends_with("lib/libdcgm.so.4"));
/// }
/// ```
pub fn real_library(version: &str) -> Option<PathBuf> {
    crate::testing::shared_path(&format!("realdcgm-{version}"))?;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let o = Command::new("bash")
        .arg(root.join("scripts/real-dcgm.sh"))
        .args(["dir", version])
        .output()
        .expect("run scripts/real-dcgm.sh");
    assert!(
        o.status.success(),
        "staging the real libdcgm {version}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let dir = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    let major = version.split('.').next().unwrap_or("4");
    Some(dir.join(format!("lib/libdcgm.so.{major}")))
}

/// The H200 capture that DCGM's injection NVML replays for the real libraries.
pub fn h200_capture() -> PathBuf {
    crate::testing::shared_dir().join("fixtures/nvml-capture-h200.yaml")
}

/// Runs the calling test binary's `#[ignore]`d test `child` (exact name) in a process of its
/// own on the real library `lib`, with DCGM's injection NVML replaying the H200 capture: one
/// library per process. The child finds the library in `RELEASE_CHILD_LIB`.
///
/// # Panics
///
/// When the test binary cannot be started.
pub fn run_release_child(child: &str, lib: &std::path::Path) -> std::process::Output {
    Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", child, "--nocapture", "--ignored"])
        .env("RELEASE_CHILD_LIB", lib)
        .env("NVML_INJECTION_MODE", "True")
        .env("NVML_YAML_FILE", h200_capture())
        .output()
        .expect("start the release child")
}
