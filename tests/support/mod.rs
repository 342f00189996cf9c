//! What the test binaries that run the tools share: where cargo put a tool, and the real
//! libdcgm when it is staged. Each binary includes it as `mod support;` (`tests/contract`
//! with a `#[path]`); not every binary uses every item.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// A built tool: an example of this crate, or `dcgm-exporter`, the binary of its own crate.
pub fn tool(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let p = if name == "dcgm-exporter" {
        dir.join(name)
    } else {
        dir.join("examples").join(name)
    };
    assert!(
        p.exists(),
        "{} not built (`cargo build --workspace --bins --examples`)",
        p.display()
    );
    p
}

/// The real libdcgm staged by `scripts/real-dcgm.sh`, or `None` (with the reason printed) where
/// it is absent; under `DCGM_REQUIRE_REAL=1` (CI) its absence fails the test.
pub fn real_libdcgm() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let staged = Command::new("bash")
        .arg(root.join("scripts/real-dcgm.sh"))
        .arg("dir")
        .output()
        .unwrap();
    if !staged.status.success() {
        let why = String::from_utf8_lossy(&staged.stderr);
        assert_ne!(
            std::env::var("DCGM_REQUIRE_REAL").as_deref(),
            Ok("1"),
            "DCGM_REQUIRE_REAL=1 but the real libdcgm is absent: {why}"
        );
        eprintln!("real libdcgm absent, skipped: {why}");
        return None;
    }
    let dir = String::from_utf8_lossy(&staged.stdout).trim().to_string();
    Some(PathBuf::from(dir).join("lib/libdcgm.so.4"))
}
