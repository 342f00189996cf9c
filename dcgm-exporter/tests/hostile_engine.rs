//! A host engine that accepts the connection and never answers (issue 31, item 5). The
//! report: `/health` said "starting" for 40 s. Now, past 2 s without an answer, it names the
//! engine that is not answering (503, as for any engine that does not work), and says so at
//! once, however long DCGM's client waits.
//!
//! On dcgm-sim: a listener at the `-r` address that accepts and never answers, and the
//! simulator's engine delaying every call 60 s (`DCGM_SIM_FAULTS=slow_ms=60000`: the
//! simulator answers from its model, so the delay stands for the engine's silence). With the
//! real libdcgm 4.6.0 (where staged): the same listener, and the real client connecting to it.
//! Asserted: every `/health` and `/metrics` answered within [`DEADLINE`] (503), `/health`
//! naming the engine; the log says it once. Latencies are printed.

mod support;

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::process::{Server, exporter};
use support::watch::{rss_kib, scrape, spread};

const DEADLINE: Duration = Duration::from_secs(3);

/// Accepts connections and holds them, never reading or writing; returns its address.
fn silent_listener() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().map_while(Result::ok) {
            held.push(c);
        }
    });
    addr
}

/// Watches `/health` and `/metrics` for `span`: each answered within [`DEADLINE`]. The
/// latencies and the last `/health` (status, body).
fn watch(addr: SocketAddr, span: Duration) -> (Vec<Duration>, (u16, String)) {
    let mut times = Vec::new();
    let mut last = (0, String::new());
    let t0 = Instant::now();
    let mut i = 0;
    while t0.elapsed() < span {
        let path = if i % 2 == 0 { "/health" } else { "/metrics" };
        match scrape(addr, path, DEADLINE) {
            Ok((st, body, took)) => {
                times.push(took);
                if path == "/health" {
                    last = (st, body);
                }
            }
            Err(e) => panic!("{path} not answered within {DEADLINE:?}: {e}"),
        }
        i += 1;
        std::thread::sleep(Duration::from_millis(250));
    }
    (times, last)
}

fn check(s: &Server, engine: &str, case: &str) {
    let addr: SocketAddr = s.addr.parse().unwrap();
    let pid = s.child.id();
    let before = rss_kib(pid);
    let t0 = Instant::now();
    // Past 2 s of connecting, /health names the engine.
    let want =
        format!("KO: hostengine {engine} is not answering: DCGM has been connecting to it for");
    let (st, body) = s.poll("/health", Duration::from_secs(10), |_, b| {
        b.starts_with(&want)
    });
    let named_after = t0.elapsed();
    assert_eq!(st, 503, "{body}");
    assert!(body.starts_with(&want), "{body}\n{}", s.log_text());
    let (times, (st, body)) = watch(addr, Duration::from_secs(4));
    assert_eq!(st, 503);
    assert!(body.starts_with(&want), "{body}");
    let (st, _, _) = scrape(addr, "/metrics", DEADLINE).unwrap();
    assert_eq!(st, 503, "no collection yet: /metrics is 503");
    s.wait_log(&["not ready", "is not answering"], Duration::from_secs(2));
    assert_eq!(
        s.lines_with(&["not ready", "is not answering"]).len(),
        1,
        "logged once:\n{}",
        s.log_text()
    );
    let after = rss_kib(pid);
    assert!(
        after <= before + 16 * 1024,
        "resident memory {after} KiB, {before} KiB at start"
    );
    println!(
        "{case}: /health named the engine {:.1} s after start; scrapes answered {n}/{n}, \
         latency min/median/max {}; resident memory {:.1} MiB, then {:.1} MiB\n  {}",
        named_after.as_secs_f64(),
        spread(&times),
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        body.lines().next().unwrap(),
        n = times.len()
    );
    println!(
        "HOSTILE3|{case}|{n}/{n}|-|{}|{:.1} / - / {:.1} MiB|named after {:.1} s",
        spread(&times),
        before as f64 / 1024.0,
        after as f64 / 1024.0,
        named_after.as_secs_f64(),
        n = times.len()
    );
}

#[test]
fn hostile_engine_that_accepts_and_never_answers_is_named_on_health_simulated() {
    let engine = silent_listener();
    let mut cmd = exporter(
        "hostile-engine",
        &[
            "--simulate",
            "-r",
            &engine.to_string(),
            "-a",
            "127.0.0.1:0",
            "-c",
            "1000",
        ],
    );
    cmd.env("DCGM_SIM_FAULTS", "slow_ms=60000");
    let s = Server::start(cmd);
    check(
        &s,
        &engine.to_string(),
        "host engine accepts and never answers (dcgm-sim)",
    );
}

/// The staged real DCGM (lib/libdcgm.so.4), or why not.
fn real_dcgm() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let staged = Command::new("bash")
        .arg(root.join("scripts/real-dcgm.sh"))
        .arg("dir")
        .output()
        .unwrap();
    if !staged.status.success() {
        dcgm::testing::skip(&format!(
            "the real libdcgm is absent: {}",
            String::from_utf8_lossy(&staged.stderr).trim()
        ));
        return None;
    }
    Some(PathBuf::from(
        String::from_utf8_lossy(&staged.stdout).trim(),
    ))
}

#[test]
fn hostile_engine_that_accepts_and_never_answers_is_named_on_health_real_libdcgm() {
    let Some(dcgm) = real_dcgm() else {
        return;
    };
    let engine = silent_listener();
    let mut cmd = exporter(
        "hostile-engine",
        &["-r", &engine.to_string(), "-a", "127.0.0.1:0", "-c", "1000"],
    );
    cmd.env("DCGM_LIB_PATH", dcgm.join("lib/libdcgm.so.4"));
    let s = Server::start(cmd);
    check(
        &s,
        &engine.to_string(),
        "host engine accepts and never answers (real libdcgm 4.6.0)",
    );
}
