//! Several host engines read by one exporter (`-r` repeated or comma-separated): one
//! connection each, every series labelled with its `hostengine`, one engine down leaving the
//! others exported and named on `/health`. Against dcgm-sim's simulated engines, and against
//! two real nv-hostengines (DCGM 4.6 on NVML's injected H200 capture), one killed and
//! restarted mid-test.

use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::process::{self, Server, series, tempdir};

/// The host engine of each GPU 0 series of `metric`.
fn engines_of(text: &str, metric: &str) -> BTreeSet<String> {
    series(text, metric)
        .into_iter()
        .filter(|l| l["gpu"] == "0")
        .map(|l| l["hostengine"].clone())
        .collect()
}

/// Every family's `# TYPE` line appears once.
fn assert_families_once(text: &str) {
    let mut seen = BTreeMap::new();
    for l in text.lines().filter(|l| l.starts_with("# TYPE ")) {
        *seen.entry(l.to_string()).or_insert(0) += 1;
    }
    assert!(seen.values().all(|n| *n == 1), "{seen:?}");
}

#[test]
fn simulated_engines_are_each_labelled_and_an_unreachable_one_is_named_on_health() {
    let down = "unix:///nonexistent/nv-hostengine";
    let s = Server::start(process::exporter(
        "multi-node",
        &[
            "--simulate",
            "-r",
            "localhost,127.0.0.1",
            "-r",
            down,
            "-a",
            "127.0.0.1:0",
            "-c",
            "500",
        ],
    ));
    let (st, body) = s.poll("/health", Duration::from_secs(30), |st, b| {
        st == 200 && b.contains(&format!("hostengine {down}: DCGM is not reachable"))
    });
    assert_eq!(st, 200, "{body}\n{}", s.log_text());
    assert!(body.starts_with("OK\n"), "{body}");
    for ok in ["localhost", "127.0.0.1"] {
        assert!(body.contains(&format!("hostengine {ok}: ok\n")), "{body}");
    }
    let (st, metrics) = s.poll("/metrics", Duration::from_secs(30), |st, m| {
        st == 200 && engines_of(m, "DCGM_FI_DEV_GPU_TEMP").len() == 2
    });
    assert_eq!(st, 200);
    let want: BTreeSet<String> = ["localhost", "127.0.0.1"].map(String::from).into();
    assert_eq!(engines_of(&metrics, "DCGM_FI_DEV_GPU_TEMP"), want);
    // The host name of each engine's series is its engine's host, as with one -r.
    for l in series(&metrics, "DCGM_FI_DEV_GPU_TEMP") {
        assert_eq!(l["hostname"], l["hostengine"]);
    }
    assert_families_once(&metrics);
    let simulated = metrics
        .lines()
        .filter(|l| l.starts_with("dcgm_exporter_simulated{"))
        .count();
    assert_eq!(simulated, 2, "{metrics}");
    assert_eq!(
        metrics
            .lines()
            .filter(|l| l.starts_with("dcgm_exporter_last_collection_success_timestamp_seconds "))
            .count(),
        1
    );
    // One engine: no hostengine label (dcgm-exporter's output).
    let o = process::run_bounded(
        process::exporter("one-node", &["--simulate", "--once", "-r", "localhost"]),
        Duration::from_secs(60),
    );
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("hostengine="), "{text}");
}

fn nvml_capture() -> PathBuf {
    dcgm::testing::shared_dir().join("fixtures/nvml-capture-h200.yaml")
}

/// The staged real DCGM (bin/nv-hostengine, lib/libdcgm.so.4), or why not.
fn real_dcgm() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let staged = Command::new("bash")
        .arg(root.join("scripts/real-dcgm.sh"))
        .arg("dir")
        .output()
        .unwrap();
    if !staged.status.success() || !nvml_capture().exists() {
        dcgm::testing::skip(&format!(
            "the real libdcgm or the H200 capture is absent: {}",
            String::from_utf8_lossy(&staged.stderr).trim()
        ));
        return None;
    }
    Some(PathBuf::from(
        String::from_utf8_lossy(&staged.stdout).trim(),
    ))
}

/// A real nv-hostengine on 127.0.0.1:`port`, killed when dropped.
struct Engine(Child);

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_engine(dcgm: &Path, port: u16, log: &Path) -> Engine {
    let child = Command::new(dcgm.join("bin/nv-hostengine"))
        .args(["-n", "-b", "127.0.0.1", "-p", &port.to_string(), "-f"])
        .arg(log)
        .env("NVML_INJECTION_MODE", "True")
        .env("NVML_YAML_FILE", nvml_capture())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nv-hostengine");
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "nv-hostengine does not listen"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Engine(child)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_real_engine_killed_restarted_and_stopped_leaves_the_other_exported() {
    let Some(dcgm) = real_dcgm() else {
        return;
    };
    let dir = tempdir("engines");
    let (pa, pb) = (free_port(), free_port());
    let _a = start_engine(&dcgm, pa, &dir.join("a.log"));
    let b = start_engine(&dcgm, pb, &dir.join("b.log"));
    let (ra, rb) = (format!("127.0.0.1:{pa}"), format!("127.0.0.1:{pb}"));
    let mut cmd = process::exporter(
        "real-multi",
        &[
            "-r",
            &format!("{ra},{rb}"),
            "-a",
            "127.0.0.1:0",
            "-c",
            "1000",
            "-d",
            "g",
        ],
    );
    cmd.env("DCGM_LIB_PATH", dcgm.join("lib/libdcgm.so.4"));
    let s = Server::start(cmd);
    let both: BTreeSet<String> = [ra.clone(), rb.clone()].into();
    let (_, m) = s.poll("/metrics", Duration::from_secs(60), |st, m| {
        st == 200 && engines_of(m, "DCGM_FI_DEV_GPU_TEMP") == both
    });
    assert_eq!(
        engines_of(&m, "DCGM_FI_DEV_GPU_TEMP"),
        both,
        "{}",
        s.log_text()
    );
    assert_families_once(&m);

    // B goes away: A's series stay, B's go, /health stays 200 and names B.
    drop(b);
    let only_a: BTreeSet<String> = [ra.clone()].into();
    let (_, m) = s.poll("/metrics", Duration::from_secs(90), |st, m| {
        st == 200 && engines_of(m, "DCGM_FI_DEV_GPU_TEMP") == only_a
    });
    assert_eq!(
        engines_of(&m, "DCGM_FI_DEV_GPU_TEMP"),
        only_a,
        "{}",
        s.log_text()
    );
    let (st, body) = s.get("/health");
    assert_eq!(st, 200, "{body}");
    assert!(body.contains(&format!("hostengine {ra}: ok")), "{body}");
    let b_line = body
        .lines()
        .find(|l| l.starts_with(&format!("hostengine {rb}: ")))
        .unwrap_or_else(|| panic!("{body}"));
    assert!(!b_line.ends_with(": ok"), "{body}");

    // B comes back on its port: its series return.
    let _b = start_engine(&dcgm, pb, &dir.join("b2.log"));
    let (_, m) = s.poll("/metrics", Duration::from_secs(90), |st, m| {
        st == 200 && engines_of(m, "DCGM_FI_DEV_GPU_TEMP") == both
    });
    assert_eq!(
        engines_of(&m, "DCGM_FI_DEV_GPU_TEMP"),
        both,
        "{}",
        s.log_text()
    );
    let (_, body) = s.poll("/health", Duration::from_secs(30), |_, b| {
        b.contains(&format!("hostengine {rb}: ok"))
    });
    assert!(body.contains(&format!("hostengine {rb}: ok")), "{body}");

    // B stops answering (SIGSTOP: its collector waits inside a DCGM call): after
    // --health-max-age-intervals (3) intervals its last collection is left out as stale,
    // rather than served again and again.
    let b = _b;
    process::signal(b.0.id(), "-STOP");
    let (_, m) = s.poll("/metrics", Duration::from_secs(30), |st, m| {
        st == 200 && engines_of(m, "DCGM_FI_DEV_GPU_TEMP") == only_a
    });
    assert_eq!(
        engines_of(&m, "DCGM_FI_DEV_GPU_TEMP"),
        only_a,
        "{}",
        s.log_text()
    );
    let (st, body) = s.get("/health");
    assert_eq!(st, 200, "{body}");
    assert!(
        body.contains(&format!(
            "hostengine {rb}: stale: the last good collection was"
        )),
        "{body}"
    );
    process::signal(b.0.id(), "-CONT");
}
