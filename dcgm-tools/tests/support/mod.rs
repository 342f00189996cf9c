//! What the test binaries that run the tools share: where cargo put a tool, the real libdcgm
//! when it is staged, and a port that never answers. Each binary includes it as `mod support;`;
//! not every binary uses every item (hence the `allow` below, for this test support only).

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// A built tool by its short name (`dmon` is this package's `dcgm-dmon`, found through
/// `CARGO_BIN_EXE_*`), or a program of another package of the workspace (`dcgm-exporter`, and
/// the root crate's example `exporter`), found beside the test's directory
/// (`cargo build --workspace --bins --examples` builds them).
pub fn tool(name: &str) -> PathBuf {
    let p = match name {
        "dmon" => env!("CARGO_BIN_EXE_dcgm-dmon"),
        "query" => env!("CARGO_BIN_EXE_dcgm-query"),
        "stat" => env!("CARGO_BIN_EXE_dcgm-stat"),
        "top" => env!("CARGO_BIN_EXE_dcgm-top"),
        "discovery" => env!("CARGO_BIN_EXE_dcgm-discovery"),
        "health" => env!("CARGO_BIN_EXE_dcgm-health"),
        "diag" => env!("CARGO_BIN_EXE_dcgm-diag"),
        "policy" => env!("CARGO_BIN_EXE_dcgm-policy"),
        "topology" => env!("CARGO_BIN_EXE_dcgm-topology"),
        "nvlink" => env!("CARGO_BIN_EXE_dcgm-nvlink"),
        "doctor" => env!("CARGO_BIN_EXE_dcgm-doctor"),
        other => {
            // `exporter` is the root crate's example of a custom collector.
            let exe = std::env::current_exe().unwrap();
            let dir = exe.parent().unwrap().parent().unwrap();
            let p = if other == "exporter" {
                dir.join("examples").join(other)
            } else {
                dir.join(other)
            };
            assert!(
                p.exists(),
                "{} not built (`cargo build --workspace --bins --examples`)",
                p.display()
            );
            return p;
        }
    };
    PathBuf::from(p)
}

/// A built tool as a command, without the environment variables that would change which
/// library or simulated node it reads (`DCGM_LIB_PATH`, `DCGM_SIM_CONFIG`, `DCGM_SIM_FAULTS`).
pub fn tool_command(name: &str) -> Command {
    let mut c = Command::new(tool(name));
    c.env_remove("DCGM_LIB_PATH")
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS");
    c
}

/// The real libdcgm staged by `scripts/real-dcgm.sh`, or `None` (with the reason printed) where
/// it is absent; under `DCGM_REQUIRE_REAL=1` (CI) its absence fails the test.
pub fn real_libdcgm() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let staged = Command::new("bash")
        .arg(root.join("scripts/real-dcgm.sh"))
        .arg("dir")
        .output()
        .unwrap();
    if !staged.status.success() {
        let why = String::from_utf8_lossy(&staged.stderr);
        dcgm::testing::skip(&format!("the real libdcgm is absent: {}", why.trim()));
        return None;
    }
    let dir = String::from_utf8_lossy(&staged.stdout).trim().to_string();
    Some(PathBuf::from(dir).join("lib/libdcgm.so.4"))
}

/// A loopback port that accepts TCP connections and never writes a byte, open until dropped;
/// it counts the connections it accepted.
pub struct SilentPort {
    pub address: String,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SilentPort {
    pub fn open() -> SilentPort {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (flag, count) = (stop.clone(), accepted.clone());
        let thread = std::thread::spawn(move || {
            // Accepted connections are kept open, unread and unanswered, until the end.
            let mut held = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((s, _)) => {
                        held.push(s);
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        SilentPort {
            address,
            accepted,
            stop,
            thread: Some(thread),
        }
    }

    /// How many connections it has accepted, once those already made have been taken from the
    /// backlog (it looks every 20 ms).
    pub fn accepted(&self) -> usize {
        std::thread::sleep(Duration::from_millis(200));
        self.accepted.load(Ordering::Relaxed)
    }
}

impl Drop for SilentPort {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
