//! `/health` tells the truth, and hostile inputs are bounded: the `dcgm-exporter` binary as a
//! process against a stopped host engine (the real nv-hostengine under SIGSTOP, skipped where
//! the real library is absent), a kubelet that accepts and never answers, a FIFO or a device
//! as counters file (at start and on SIGHUP), hostile HPC job-mapping files, and flags out of
//! range. Everything but the host engine runs on dcgm-sim (`--simulate`), on loopback.

use std::collections::BTreeSet;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::process::{self, Server, run_bounded, series, tempdir};

const LAST_SUCCESS: &str = "dcgm_exporter_last_collection_success_timestamp_seconds";

fn exporter(args: &[&str]) -> Command {
    process::exporter("health-node", args)
}

/// The value of the last-success gauge in an exposition.
fn last_success(text: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{LAST_SUCCESS} ")))
        .map(|v| v.parse().unwrap())
}

fn mkfifo(p: &Path) {
    let _ = std::fs::remove_file(p);
    let st = Command::new("mkfifo").arg(p).status().expect("run mkfifo");
    assert!(st.success());
}

/// A real nv-hostengine (replaying the H200 capture), killed when dropped.
struct HostEngine {
    child: Child,
    port: u16,
    lib: PathBuf,
}

impl Drop for HostEngine {
    fn drop(&mut self) {
        // A stopped process is killed too, but resume it first so that it goes at once.
        let _ = Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nvml_capture() -> PathBuf {
    dcgm::testing::shared_dir().join("fixtures/nvml-capture-h200.yaml")
}

/// Starts the real host engine, or says why it cannot (the real library is absent here).
fn real_host_engine(log_dir: &Path) -> Option<HostEngine> {
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
    let dir = PathBuf::from(String::from_utf8_lossy(&staged.stdout).trim());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(dir.join("bin/nv-hostengine"))
        .args(["-n", "-b", "127.0.0.1", "-p", &port.to_string(), "-f"])
        .arg(log_dir.join("hostengine.log"))
        .env("NVML_INJECTION_MODE", "True")
        .env("NVML_YAML_FILE", nvml_capture())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nv-hostengine");
    let engine = HostEngine {
        child,
        port,
        lib: dir.join("lib/libdcgm.so.4"),
    };
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "nv-hostengine does not listen"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(engine)
}

#[test]
fn a_stopped_host_engine_makes_health_503_with_the_reason_and_back_logged_once_each_way() {
    let dir = tempdir("sigstop");
    let Some(engine) = real_host_engine(&dir) else {
        return;
    };
    let remote = format!("127.0.0.1:{}", engine.port);
    let mut cmd = exporter(&["-r", &remote, "-a", "127.0.0.1:0", "-c", "1000", "-d", "g"]);
    cmd.env("DCGM_LIB_PATH", &engine.lib)
        .env("NVML_INJECTION_MODE", "True")
        .env("NVML_YAML_FILE", nvml_capture());
    let s = Server::start(cmd);
    let (st, body) = s.poll("/health", Duration::from_secs(30), |st, _| st == 200);
    assert_eq!((st, body.as_str()), (200, "OK\n"), "{}", s.log_text());
    let (_, metrics) = s.get("/metrics");
    assert!(last_success(&metrics).is_some(), "{metrics}");
    let before = s.lines_with(&["not ready"]).len();

    let pid = engine.child.id();
    process::signal(pid, "-STOP");
    // Stale after 3 intervals (3 s): DCGM's client waits 60 s on a stopped engine.
    let (st, body) = s.poll("/health", Duration::from_secs(15), |st, _| st == 503);
    assert_eq!(st, 503, "{body}");
    assert!(
        body.starts_with("KO: stale: the last good collection was")
            && body.contains("more than 3 collection intervals")
            && body.contains("waiting on DCGM")
            && body.contains("is the host engine answering?"),
        "{body}"
    );
    // /metrics still serves the last collection, whose timestamp tells its age.
    let (st, frozen) = s.get("/metrics");
    assert_eq!(st, 200);
    let frozen_at = last_success(&frozen).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(now - frozen_at > 3.0, "{now} - {frozen_at}");
    s.wait_log(&["not ready: stale"], Duration::from_secs(5));

    process::signal(pid, "-CONT");
    let (st, body) = s.poll("/health", Duration::from_secs(30), |st, _| st == 200);
    assert_eq!((st, body.as_str()), (200, "OK\n"));
    let (_, metrics) = s.get("/metrics");
    assert!(last_success(&metrics).unwrap() > frozen_at);
    std::thread::sleep(Duration::from_millis(1500));
    // One line each way: the watchdog and the collector both judge, and agree.
    let not_ready = s.lines_with(&["not ready"]);
    assert_eq!(not_ready.len() - before, 1, "{}", s.log_text());
    let stop = s
        .log
        .lock()
        .unwrap()
        .iter()
        .position(|l| l.contains("not ready: stale"))
        .unwrap();
    let after: Vec<String> = s.log.lock().unwrap()[stop + 1..].to_vec();
    let ready: Vec<&String> = after
        .iter()
        .filter(|l| l.contains("ready: collections work"))
        .collect();
    assert_eq!(ready.len(), 1, "{after:#?}");
}

/// A unix socket that accepts connections and never answers (nor closes them).
fn hanging_kubelet(dir: &Path) -> PathBuf {
    let sock = dir.join("kubelet.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().map_while(Result::ok) {
            held.push(c);
        }
    });
    sock
}

#[test]
fn a_kubelet_that_never_answers_delays_no_collection_and_health_shows_it_on_its_own_line() {
    let dir = tempdir("kubelet");
    let sock = hanging_kubelet(&dir);
    let s = Server::start(exporter(&[
        "--simulate",
        "-a",
        "127.0.0.1:0",
        "-c",
        "200",
        "-d",
        "g",
        "--kubernetes",
        "--pod-resources-kubelet-socket",
        sock.to_str().unwrap(),
    ]));
    let (st, body) = s.poll("/health", Duration::from_secs(20), |_, b| {
        b.contains("kubelet: failing")
    });
    // A kubelet failure shows on /health but does not fail the readiness probe.
    assert_eq!(st, 200, "{body}");
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines[0], "OK", "{body}");
    assert!(
        lines[1].starts_with("kubelet: failing for ")
            && lines[1].contains("did not answer the pod-resources List within 2s")
            && lines[1].contains("exporting without pod labels"),
        "{body}"
    );
    // Collections go on every 200 ms meanwhile (a List blocked each one for 10 s, twice).
    let mut seen = BTreeSet::new();
    let t0 = Instant::now();
    while seen.len() < 10 && t0.elapsed() < Duration::from_secs(20) {
        let (st, text) = s.get("/metrics");
        assert_eq!(st, 200);
        assert!(
            !text.contains("pod=\""),
            "no pod labels without the kubelet"
        );
        seen.insert(last_success(&text).unwrap().to_bits());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(seen.len() >= 10, "{} collections in 20 s", seen.len());
    // Several failed calls, one log line.
    let failing = s.lines_with(&["exporting without pod labels"]);
    assert_eq!(failing.len(), 1, "{}", s.log_text());
    assert!(s.lines_with(&["not ready"]).is_empty(), "{}", s.log_text());
}

#[test]
fn a_fifo_or_a_device_as_counters_file_is_refused_at_start_and_on_sighup() {
    let dir = tempdir("fifo");
    let fifo = dir.join("counters.csv");
    mkfifo(&fifo);
    for (file, what) in [
        (fifo.to_str().unwrap(), "a FIFO"),
        ("/dev/zero", "a character device"),
    ] {
        let o = run_bounded(
            exporter(&["--simulate", "--once", "-f", file]),
            Duration::from_secs(30),
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(file) && err.contains(what) && err.contains("regular counters file"),
            "{err}"
        );
    }

    std::fs::remove_file(&fifo).unwrap();
    std::fs::write(&fifo, "DCGM_FI_DEV_GPU_TEMP, gauge, temperature\n").unwrap();
    let s = Server::start(exporter(&[
        "--simulate",
        "-a",
        "127.0.0.1:0",
        "-c",
        "200",
        "-f",
        fifo.to_str().unwrap(),
    ]));
    let (st, _) = s.poll("/health", Duration::from_secs(20), |st, _| st == 200);
    assert_eq!(st, 200);
    mkfifo(&fifo);
    s.signal("-HUP");
    s.wait_log(
        &["SIGHUP", "FIFO", "keeping the 1 counters"],
        Duration::from_secs(15),
    );
    // The collector did not block on the FIFO: collections go on, with the old counters.
    let (_, first) = s.get("/metrics");
    let t = last_success(&first).unwrap();
    let (st, text) = s.poll("/metrics", Duration::from_secs(15), |st, b| {
        st == 200 && last_success(b).is_some_and(|v| v > t)
    });
    assert!(
        st == 200 && last_success(&text).unwrap() > t,
        "{}",
        s.log_text()
    );
    assert!(text.contains("DCGM_FI_DEV_GPU_TEMP{"));
    assert_eq!(s.get("/health").0, 200);
}

#[test]
fn hostile_job_mapping_files_are_skipped_by_name_and_the_other_gpus_keep_their_jobs() {
    let dir = tempdir("hpc");
    let jobs = dir.join("jobs");
    std::fs::create_dir(&jobs).unwrap();
    // 0: 625,000 lines (the process aborted); 1: one 5 MB line (a 135 MB exposition).
    let huge: String = (0..625_000).map(|i| format!("{i}\n")).collect();
    std::fs::write(jobs.join("0"), huge).unwrap();
    std::fs::write(jobs.join("1"), "x".repeat(5 << 20)).unwrap();
    // 2: binary (it removed the jobs of every GPU, in a message without its name).
    std::fs::write(
        jobs.join("2"),
        (0..=255u8).cycle().take(4096).collect::<Vec<u8>>(),
    )
    .unwrap();
    // 3: a symbolic link, as in a ConfigMap volume (it was ignored).
    std::fs::create_dir(dir.join("..data")).unwrap();
    std::fs::write(dir.join("..data/3"), "linked-job\n").unwrap();
    std::os::unix::fs::symlink(dir.join("..data/3"), jobs.join("3")).unwrap();
    // 4: a FIFO, never opened.
    mkfifo(&jobs.join("4"));
    // 5: fine. 6: 100 jobs, repeated. 7: a 300-byte line among good ones.
    std::fs::write(jobs.join("5"), "job-five\n").unwrap();
    let many: String = (0..100).map(|i| format!("j{i}\nj{i}\n")).collect();
    std::fs::write(jobs.join("6"), many).unwrap();
    std::fs::write(jobs.join("7"), format!("{}\nok-job\n", "y".repeat(300))).unwrap();

    let o = run_bounded(
        exporter(&[
            "--simulate",
            "--once",
            "-d",
            "g",
            "--hpc-job-mapping-dir",
            jobs.to_str().unwrap(),
        ]),
        Duration::from_secs(60),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(o.stdout.len() < 2 << 20, "{} bytes", o.stdout.len());
    let text = String::from_utf8(o.stdout).unwrap();
    let temp = series(&text, "DCGM_FI_DEV_GPU_TEMP");
    let jobs_of = |gpu: &str| -> Vec<String> {
        temp.iter()
            .filter(|l| l["gpu"] == gpu)
            .filter_map(|l| l.get("hpc_job").cloned())
            .collect()
    };
    for gpu in ["0", "1", "2", "4"] {
        assert_eq!(jobs_of(gpu), Vec::<String>::new(), "GPU {gpu}");
        assert_eq!(temp.iter().filter(|l| l["gpu"] == gpu).count(), 1);
    }
    assert_eq!(jobs_of("3"), ["linked-job"]);
    assert_eq!(jobs_of("5"), ["job-five"]);
    let six = jobs_of("6");
    assert_eq!(six.len(), 64);
    assert_eq!(six.iter().collect::<BTreeSet<_>>().len(), 64);
    assert_eq!(jobs_of("7"), ["ok-job"]);
    // Each bad file is named, with what is wrong with it.
    let named = |file: &str, why: &str| {
        let path = jobs.join(file);
        let path = path.to_str().unwrap();
        assert!(
            err.lines().any(|l| l.contains(path) && l.contains(why)),
            "{file}: {why}\n{err}"
        );
    };
    named("0", "larger than 65536 bytes");
    named("1", "larger than 65536 bytes");
    named("2", "NUL bytes");
    named("4", "a FIFO");
    named("6", "past the first 64");
    named("7", "longer than 256 bytes");
}

#[test]
fn flags_out_of_range_and_unparsable_listen_addresses_exit_2() {
    for args in [
        &["-c", "0"][..],
        &["-c", "18446744073709551615"],
        &["-x", "0"],
        &["-x", "18446744073709551615"],
        &["--clock-events-count-window-size", "604800001"],
        &["--health-max-age-intervals", "1"],
        &["-d", "g:0-4294967295"],
        &["-d", "i:0-4294967295"],
        &["-s", "g:0-4294967295"],
        &["-p", "i:0-4294967295"],
        &["-a", "nonsense"],
        &["-a", ":99999"],
        &["-a", "::1:9400"],
    ] {
        let mut cmd = exporter(&["--simulate", "--once"]);
        cmd.args(args);
        let o = run_bounded(cmd, Duration::from_secs(30));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let flag = args[0];
        let long = match flag {
            "-c" => "--collect-interval",
            "-x" => "--xid-count-window-size",
            "-d" => "--devices",
            "-s" => "--switch-devices",
            "-p" => "--cpu-devices",
            "-a" => "--address",
            f => f,
        };
        assert!(err.contains(long), "{args:?} must name {long}: {err}");
    }
    // An address in use is not a configuration error: exit 1 (a restart may find it free).
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let o = run_bounded(
        exporter(&["--simulate", "-a", &addr]),
        Duration::from_secs(30),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot listen on"), "{err}");
}
