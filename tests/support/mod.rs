//! Where cargo put a tool the contract suite runs (`tests/contract` includes this with a
//! `#[path]`): the tools and the exporter are binaries of other packages of the workspace.

use std::path::PathBuf;

/// A built tool of another package of the workspace: `dcgm-exporter`, or a tool of
/// dcgm-tools by its short name (`dmon` is `dcgm-dmon`). Cargo gives a test the paths of its own
/// package's binaries only (`CARGO_BIN_EXE_*`), so these are found beside the test's directory.
pub fn tool(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let p = if name.starts_with("dcgm-") {
        dir.join(name)
    } else {
        dir.join(format!("dcgm-{name}"))
    };
    assert!(
        p.exists(),
        "{} not built (`cargo build --workspace --bins`)",
        p.display()
    );
    p
}
