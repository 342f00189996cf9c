//! Helpers for examples, doc tests and tests that run against dcgm-sim.

use std::path::PathBuf;

/// The dcgm-sim library: [`crate::find_simulator`], or, for doc tests that run from a temporary
/// directory, the library in this workspace's `target` directory.
///
/// # Panics
///
/// If the simulator has not been built (`cargo build -p dcgm-sim`).
pub fn simulator_path() -> PathBuf {
    if let Ok(p) = crate::find_simulator() {
        return p;
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../target"));
    for profile in ["debug", "release"] {
        let p = target.join(profile).join("libdcgm_sim.so");
        if p.is_file() {
            return p;
        }
    }
    panic!("dcgm-sim is not built: run `cargo build -p dcgm-sim` first");
}
