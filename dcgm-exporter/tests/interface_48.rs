//! dcgm-exporter 4.8's interface through the binary on dcgm-sim: the `hostname` label and
//! `--hostname-label`, and the flags of its 4.8.3 and 4.8.4 releases.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Output;
use std::time::{Duration, Instant};

mod support;
use support::process::{self, Server, run_bounded};

fn once(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut all = vec!["--simulate", "--once"];
    all.extend_from_slice(args);
    let mut c = process::exporter("iface-node", &all);
    for (k, v) in env {
        c.env(k, v);
    }
    run_bounded(c, Duration::from_secs(60))
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The GPU temperature series' lines.
fn temps(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("DCGM_FI_DEV_GPU_TEMP{"))
        .collect()
}

#[test]
fn hostname_is_the_default_label_and_hostname_label_brings_back_the_old_name() {
    let text = stdout(&once(&[], &[]));
    let t = temps(&text);
    assert!(!t.is_empty(), "{text}");
    for l in &t {
        assert!(l.contains(",hostname=\"iface-node\""), "{l}");
        assert!(!l.contains("Hostname="), "{l}");
    }

    let text = stdout(&once(&["--hostname-label", "Hostname"], &[]));
    for l in temps(&text) {
        assert!(l.contains(",Hostname=\"iface-node\""), "{l}");
        assert!(!l.contains("hostname="), "{l}");
    }

    // Its environment variable, and the command line over it.
    let env = [("DCGM_EXPORTER_HOSTNAME_LABEL", "Hostname")];
    let text = stdout(&once(&[], &env));
    assert!(temps(&text).iter().all(|l| l.contains(",Hostname=\"")));
    let text = stdout(&once(&["--hostname-label", "hostname"], &env));
    assert!(temps(&text).iter().all(|l| l.contains(",hostname=\"")));

    // Not a label name: a configuration error.
    let bad = once(&["--hostname-label", "host-name"], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a label name"));
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn config_file_sets_flags_the_environment_and_command_line_win_and_unknown_keys_fail() {
    let dir = process::tempdir("config-file");
    let file = write(
        &dir,
        "exporter.yaml",
        "# dcgm-exporter flags\nhostname-label: FromFile\ndevices: \"g:0-1\"\n\
         remote-hostengine-info: [localhost]\n",
    );
    let text = stdout(&once(&["--config-file", &file], &[]));
    let t = temps(&text);
    assert_eq!(t.len(), 2, "-d g:0-1 from the file: {text}");
    assert!(
        t.iter().all(|l| l.contains(",FromFile=\"localhost\"")),
        "{t:?}"
    );
    // Its environment variable names the file too.
    let text = stdout(&once(&[], &[("DCGM_EXPORTER_CONFIG_FILE", &file)]));
    assert_eq!(temps(&text).len(), 2);
    // The environment, then the command line, win over the file.
    let env = [("DCGM_EXPORTER_HOSTNAME_LABEL", "FromEnv")];
    let text = stdout(&once(&["--config-file", &file], &env));
    assert!(temps(&text).iter().all(|l| l.contains(",FromEnv=\"")));
    let text = stdout(&once(
        &[
            "--config-file",
            &file,
            "--hostname-label",
            "FromCli",
            "-d",
            "g:3",
        ],
        &env,
    ));
    let t = temps(&text);
    assert_eq!(t.len(), 1, "{text}");
    assert!(
        t[0].contains("gpu=\"3\"") && t[0].contains(",FromCli=\""),
        "{t:?}"
    );

    // Errors: exit status 2, the file and the key named.
    for (yaml, want) in [
        (
            "collect_interval: 1000\n",
            "unknown key \"collect_interval\" (did you mean \"collect-interval\"?)",
        ),
        ("kubernetes: sometimes\n", "kubernetes: takes true or false"),
        ("collect-interval: 0\n", "collect-interval"),
        ("[1, 2]\n", "expected a mapping of flag names"),
        (
            "config-file: /etc/other.yaml\n",
            "cannot be set in a configuration file",
        ),
        (
            "a: [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]\n",
            "not valid YAML",
        ),
    ] {
        let bad = write(&dir, "bad.yaml", yaml);
        let o = once(&["--config-file", &bad], &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{yaml}: {err}");
        assert!(err.contains(&bad) && err.contains(want), "{yaml}: {err}");
        assert!(o.stdout.is_empty());
    }
    let o = once(
        &["--config-file", &dir.join("missing.yaml").to_string_lossy()],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.yaml"));
}

#[test]
fn remote_hostengine_takes_tcp_unix_and_vsock_addresses() {
    // dcgm-sim answers as a host engine at localhost and unix:///tmp/nv-hostengine.
    for r in [
        "tcp://localhost:5555",
        "unix:///tmp/nv-hostengine",
        "localhost:5555",
    ] {
        let text = stdout(&once(&["-r", r], &[]));
        // 7 GPUs and GPU 7's 3 MIG instances.
        assert_eq!(temps(&text).len(), 10, "{r}: {text}");
        let host = if r.starts_with("unix") {
            "iface-node"
        } else {
            "localhost"
        };
        assert!(
            temps(&text)
                .iter()
                .all(|l| l.contains(&format!(",hostname=\"{host}\""))),
            "{r}: {:?}",
            temps(&text)
        );
    }
    // A vsock address is passed to DCGM (dcgmConnect_v3); nothing listens at CID 3 here.
    let o = once(&["-r", "vsock://3:5555"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("vsock://3:5555"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Malformed addresses are configuration errors, each saying what is wrong.
    for (r, why) in [
        ("http://node:5555", "unknown scheme \"http\""),
        ("unix://relative/path", "absolute path"),
        ("vsock://three:5555", "context id"),
        ("vsock://3", "needs its port"),
        ("tcp://node:0", "not a port"),
        ("fe80::1:5555", "brackets"),
    ] {
        let o = once(&["-r", r], &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{r}: {err}");
        assert!(err.contains(why), "{r}: {err}");
    }
}

fn server(args: &[&str], env: &[(&str, &str)]) -> Server {
    let mut all = vec!["--simulate", "-a", "127.0.0.1:0", "-c", "500"];
    all.extend_from_slice(args);
    let mut c = process::exporter("iface-node", &all);
    for (k, v) in env {
        c.env(k, v);
    }
    Server::start(c)
}

/// How long the server keeps a connection that sent half a request head.
fn held_with_half_a_head(addr: &str) -> Duration {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let t0 = Instant::now();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
    }
    t0.elapsed()
}

#[test]
fn web_read_timeout_bounds_a_trickled_request_by_flag_and_environment() {
    let s = server(&["--web-read-timeout", "300ms"], &[]);
    s.poll("/health", Duration::from_secs(30), |st, _| st == 200);
    let held = held_with_half_a_head(&s.addr);
    assert!(
        held >= Duration::from_millis(250) && held < Duration::from_secs(3),
        "{held:?}"
    );
    let s = server(&[], &[("DCGM_EXPORTER_WEB_READ_TIMEOUT", "1s")]);
    s.poll("/health", Duration::from_secs(30), |st, _| st == 200);
    let held = held_with_half_a_head(&s.addr);
    assert!(
        held >= Duration::from_millis(900) && held < Duration::from_secs(4),
        "{held:?}"
    );
    // The write timeout's variable is read too: a bad value is refused at start.
    let o = run_bounded(
        {
            let mut c = process::exporter("iface-node", &["--simulate", "--once"]);
            c.env("DCGM_EXPORTER_WEB_WRITE_TIMEOUT", "forever");
            c
        },
        Duration::from_secs(30),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--web-write-timeout"));
}

/// An HPC mapping of 64 jobs on each GPU: every GPU series 64 times, a 4 MB exposition
/// that a client with a small receive buffer keeps being written.
fn big_exposition_dir(tag: &str) -> process::TempDir {
    let dir = process::tempdir(tag);
    let jobs = dir.join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    for g in 0..8 {
        let list: Vec<String> = (0..64).map(|j| format!("job-{g}-{j:02}")).collect();
        std::fs::write(jobs.join(g.to_string()), list.join("\n") + "\n").unwrap();
    }
    dir
}

/// A connection that asks for `/metrics` and never reads.
fn stalled_scrape(addr: &str) -> TcpStream {
    let addr: std::net::SocketAddr = addr.parse().unwrap();
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.set_recv_buffer_size(4096).unwrap();
    s.connect(&addr.into()).unwrap();
    let mut s: TcpStream = s.into();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    s
}

/// The value of the series `name` (with its labels) in `text`.
fn counter(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name}"))
        .parse()
        .unwrap()
}

fn scrape_status(addr: &str) -> (u16, String, Duration) {
    let t0 = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let status = raw
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = raw
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body, t0.elapsed())
}

#[test]
fn max_concurrent_scrapes_answers_503_at_once_and_exporter_metrics_count_it() {
    let dir = big_exposition_dir("max-scrapes");
    let jobs = dir.join("jobs");
    let jobs = jobs.to_str().unwrap();
    let s = server(
        &[
            "--hpc-job-mapping-dir",
            jobs,
            "--max-concurrent-scrapes",
            "2",
            "--enable-exporter-metrics",
        ],
        &[],
    );
    let (st, body) = s.poll("/metrics", Duration::from_secs(30), |st, _| st == 200);
    assert_eq!(st, 200);
    assert!(body.len() > 2_000_000, "{} bytes", body.len());
    // 503s before the first collection count too: the count before the test, once the
    // exporter's metrics are refreshed (within a second).
    std::thread::sleep(Duration::from_millis(1100));
    let refused_before = counter(
        &s.get("/metrics").1,
        "promhttp_metric_handler_requests_total{code=\"503\"}",
    );
    // Two scrapes that never read hold both places (each is written until the write
    // deadline); a third is refused at once, and once they are gone, scrapes work again.
    let a = stalled_scrape(&s.addr);
    let b = stalled_scrape(&s.addr);
    std::thread::sleep(Duration::from_millis(500));
    let (st, body, took) = scrape_status(&s.addr);
    assert_eq!(st, 503, "{body}");
    assert!(body.contains("too many concurrent scrapes"), "{body}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    drop((a, b));
    let (st, _) = s.poll("/metrics", Duration::from_secs(15), |st, _| st == 200);
    assert_eq!(st, 200);
    // The exporter's own metrics, under the Prometheus Go client's names, counting the 503.
    let refused = "promhttp_metric_handler_requests_total{code=\"503\"}";
    let (_, body) = s.poll("/metrics", Duration::from_secs(5), |st, b| {
        st == 200 && counter(b, refused) == refused_before + 1.0
    });
    for name in [
        "process_cpu_seconds_total",
        "process_resident_memory_bytes",
        "process_virtual_memory_bytes",
        "process_open_fds",
        "process_max_fds",
        "process_start_time_seconds",
        "promhttp_metric_handler_requests_in_flight",
    ] {
        assert!(body.contains(&format!("# TYPE {name} ")), "{name}");
    }
    assert_eq!(
        counter(&body, refused),
        refused_before + 1.0,
        "{}",
        &body[body.len().saturating_sub(2000)..]
    );
    assert!(
        counter(
            &body,
            "promhttp_metric_handler_requests_total{code=\"200\"}"
        ) >= 1.0
    );
    let value = |name: &str| -> f64 {
        body.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(value("process_resident_memory_bytes") > 4e6);
    assert!(value("process_open_fds") >= 3.0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let started = value("process_start_time_seconds");
    assert!(
        started <= now && started > now - 120.0,
        "{started} vs {now}"
    );

    // Without the flags: no limit, no self-metrics.
    let s = server(&["--hpc-job-mapping-dir", jobs], &[]);
    s.poll("/metrics", Duration::from_secs(30), |st, _| st == 200);
    let held: Vec<TcpStream> = (0..3).map(|_| stalled_scrape(&s.addr)).collect();
    std::thread::sleep(Duration::from_millis(500));
    let (st, body, _) = scrape_status(&s.addr);
    assert_eq!(st, 200);
    assert!(!body.contains("process_cpu_seconds_total"));
    assert!(!body.contains("promhttp_metric_handler"));
    drop(held);

    // Their variables.
    let s = server(
        &["--hpc-job-mapping-dir", jobs],
        &[
            ("DCGM_EXPORTER_MAX_CONCURRENT_SCRAPES", "1"),
            ("DCGM_EXPORTER_ENABLE_EXPORTER_METRICS", "true"),
        ],
    );
    let (_, body) = s.poll("/metrics", Duration::from_secs(30), |st, _| st == 200);
    assert!(body.contains("# TYPE process_cpu_seconds_total counter"));
    let a = stalled_scrape(&s.addr);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(scrape_status(&s.addr).0, 503);
    drop(a);
}

#[test]
fn health_require_gpus_keeps_the_exporter_up_and_unhealthy_without_gpus() {
    let dir = process::tempdir("require-gpus");
    let none = write(&dir, "none.json", r#"{"gpus": []}"#);
    // Without the flag, no GPU is a configuration error, as before.
    let mut c = process::exporter("iface-node", &["--simulate", "-a", "127.0.0.1:0"]);
    c.env("DCGM_SIM_CONFIG", &none);
    let o = run_bounded(c, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no GPU to export"));
    // With it: up, /health 503 saying why, /metrics 503.
    for (args, env) in [
        (
            vec!["--health-require-gpus"],
            vec![("DCGM_SIM_CONFIG", none.as_str())],
        ),
        (
            vec![],
            vec![
                ("DCGM_SIM_CONFIG", none.as_str()),
                ("DCGM_EXPORTER_HEALTH_REQUIRE_GPUS", "true"),
            ],
        ),
    ] {
        let s = server(&args, &env);
        let (st, body) = s.poll("/health", Duration::from_secs(30), |_, b| {
            b.contains("no GPU is visible")
        });
        assert_eq!(st, 503, "{body}");
        assert!(body.contains("--health-require-gpus"), "{body}");
        std::thread::sleep(Duration::from_millis(1200));
        let (st, body) = s.get("/health");
        assert_eq!(st, 503, "still: {body}");
        assert_eq!(s.get("/metrics").0, 503);
    }
    // With GPUs, the flag changes nothing.
    let s = server(&["--health-require-gpus"], &[]);
    let (st, body) = s.poll("/health", Duration::from_secs(30), |st, _| st == 200);
    assert_eq!(st, 200, "{body}");
}

fn cid(n: u8) -> String {
    format!("{:02x}", n).repeat(32)
}

fn container(
    id: &str,
    name: &str,
    pod: Option<(&str, &str)>,
) -> dcgm_exporter::attribution::cri::Container {
    let mut labels = std::collections::HashMap::new();
    if let Some((ns, p)) = pod {
        labels.insert("io.kubernetes.pod.namespace".to_string(), ns.to_string());
        labels.insert("io.kubernetes.pod.name".to_string(), p.to_string());
    }
    dcgm_exporter::attribution::cri::Container {
        id: id.into(),
        pod_sandbox_id: "sandbox".into(),
        metadata: Some(dcgm_exporter::attribution::cri::ContainerMetadata {
            name: name.into(),
            attempt: 0,
        }),
        labels,
    }
}

#[test]
fn container_labels_come_from_the_cri_socket_for_the_processes_on_each_gpu() {
    let dir = process::tempdir("cri");
    // GPU 0: a Kubernetes container (containerd); GPU 1: two docker containers; GPU 2: a
    // process in no container; GPU 3: a container the runtime does not list.
    let procs = [
        (
            4101,
            0,
            format!(
                "0::/kubepods.slice/kubepods-pod0d5c2a3e_4b1f_4c6d_9e8a_000000000001.slice/cri-containerd-{}.scope\n",
                cid(1)
            ),
        ),
        (
            4102,
            1,
            format!("0::/system.slice/docker-{}.scope\n", cid(2)),
        ),
        (
            4103,
            1,
            format!("0::/system.slice/docker-{}.scope\n", cid(3)),
        ),
        (
            4104,
            2,
            "0::/user.slice/user-1000.slice/session-3.scope\n".to_string(),
        ),
        (
            4105,
            3,
            format!("0::/system.slice/docker-{}.scope\n", cid(5)),
        ),
    ];
    let list: Vec<String> = procs
        .iter()
        .map(|(pid, gpu, _)| format!(r#"{{"pid": {pid}, "gpus": [{gpu}], "memory_mib": 1000}}"#))
        .collect();
    let config = write(
        &dir,
        "node.json",
        &format!(
            r#"{{"gpus": [{{}}, {{}}, {{}}, {{}}], "processes": [{}]}}"#,
            list.join(",")
        ),
    );
    let proc_root = dir.join("proc");
    for (pid, _, cgroup) in &procs {
        let d = proc_root.join(pid.to_string());
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("cgroup"), cgroup).unwrap();
    }
    let runtime = support::cri::Runtime::default();
    *runtime.answer.lock().unwrap() = dcgm_exporter::attribution::cri::ListContainersResponse {
        containers: vec![
            container(&cid(1), "trainer", Some(("ml", "train-0"))),
            container(&cid(2), "jupyter", None),
            container(&cid(3), "tensorboard", None),
            container(&cid(9), "idle", None),
        ],
    };
    let sock = support::cri::serve(&dir, runtime.clone());
    let sock = sock.to_str().unwrap();
    let proc_root = proc_root.to_str().unwrap();
    let env = [("DCGM_SIM_CONFIG", config.as_str())];

    let text = stdout(&once(
        &[
            "--container-labels",
            "--container-runtime-socket",
            sock,
            "--proc-root",
            proc_root,
        ],
        &env,
    ));
    let temp = process::series(&text, "DCGM_FI_DEV_GPU_TEMP");
    let on = |gpu: &str| -> Vec<Vec<(String, String)>> {
        let mut v: Vec<Vec<(String, String)>> = temp
            .iter()
            .filter(|l| l["gpu"] == gpu)
            .map(|l| {
                ["pod", "namespace", "container", "container_id"]
                    .iter()
                    .filter_map(|k| l.get(*k).map(|v| (k.to_string(), v.clone())))
                    .collect()
            })
            .collect();
        v.sort();
        v
    };
    let kv = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(
        on("0"),
        vec![kv(&[
            ("pod", "train-0"),
            ("namespace", "ml"),
            ("container", "trainer"),
            ("container_id", &cid(1))
        ])]
    );
    assert_eq!(
        on("1"),
        vec![
            kv(&[("container", "jupyter"), ("container_id", &cid(2))]),
            kv(&[("container", "tensorboard"), ("container_id", &cid(3))]),
        ]
    );
    assert_eq!(on("2"), vec![kv(&[])], "no container");
    assert_eq!(
        on("3"),
        vec![kv(&[])],
        "a container the runtime does not list"
    );
    assert!(runtime.calls.load(std::sync::atomic::Ordering::Relaxed) >= 1);

    // Their variables.
    let mut envs = env.to_vec();
    envs.push(("DCGM_EXPORTER_CONTAINER_LABELS", "true"));
    envs.push(("DCGM_CONTAINER_RUNTIME_SOCKET", sock));
    envs.push(("DCGM_EXPORTER_PROC_ROOT", proc_root));
    let text = stdout(&once(&[], &envs));
    assert!(text.contains(",container=\"tensorboard\""), "{text}");

    // Without the flag: no container labels, and the runtime is not asked.
    let before = runtime.calls.load(std::sync::atomic::Ordering::Relaxed);
    let text = stdout(&once(&["--proc-root", proc_root], &env));
    assert!(!text.contains("container_id="));
    assert_eq!(
        runtime.calls.load(std::sync::atomic::Ordering::Relaxed),
        before
    );

    // No runtime at the socket: the series go out without container labels, and the log
    // says why.
    let o = once(
        &[
            "--container-labels",
            "--container-runtime-socket",
            "/nonexistent/cri.sock",
            "--proc-root",
            proc_root,
        ],
        &env,
    );
    let text = stdout(&o);
    assert!(!text.contains("container_id="));
    assert_eq!(temps(&text).len(), 4);
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(
        log.contains("/nonexistent/cri.sock") && log.contains("without container labels"),
        "{log}"
    );
}

/// The staged real DCGM (bin/nv-hostengine, lib/libdcgm.so.4) and NVML capture, or `None`
/// (the test is skipped, and says so).
fn real_dcgm() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let staged = std::process::Command::new("bash")
        .arg(root.join("scripts/real-dcgm.sh"))
        .arg("dir")
        .output()
        .unwrap();
    let capture = dcgm::testing::shared_dir().join("fixtures/nvml-capture-h200.yaml");
    if !staged.status.success() || !capture.exists() {
        dcgm::testing::skip("the real libdcgm or the H200 capture is absent");
        return None;
    }
    Some((
        std::path::PathBuf::from(String::from_utf8_lossy(&staged.stdout).trim()),
        capture,
    ))
}

/// A real nv-hostengine on NVML's injected H200 capture, killed when dropped.
struct Engine(std::process::Child, u16);

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_engine(
    dcgm: &std::path::Path,
    capture: &std::path::Path,
    log: &std::path::Path,
) -> Engine {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(dcgm.join("bin/nv-hostengine"))
        .args(["-n", "-b", "127.0.0.1", "-p", &port.to_string(), "-f"])
        .arg(log)
        .env("NVML_INJECTION_MODE", "True")
        .env("NVML_YAML_FILE", capture)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
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
    Engine(child, port)
}

#[test]
fn watch_retention_flags_reach_dcgms_watches() {
    let Some((dcgm, capture)) = real_dcgm() else {
        return;
    };
    let dir = process::tempdir("watch-keep");
    let lib = dcgm.join("lib/libdcgm.so.4");
    // What DCGM keeps of GPU 0's temperature (field 150) while the exporter reads it.
    let kept = |args: &[&str], env: &[(&str, &str)], tag: &str| {
        let engine = start_engine(&dcgm, &capture, &dir.join(format!("{tag}.log")));
        let address = format!("127.0.0.1:{}", engine.1);
        let mut all = vec!["-r", &address, "-a", "127.0.0.1:0", "-c", "100", "-d", "g"];
        all.extend_from_slice(args);
        let mut cmd = process::exporter("real-node", &all);
        cmd.env("DCGM_LIB_PATH", &lib);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let s = Server::start(cmd);
        let (st, _) = s.poll("/metrics", Duration::from_secs(60), |st, _| st == 200);
        assert_eq!(st, 200, "{}", s.log_text());
        std::thread::sleep(Duration::from_secs(2));
        let h = dcgm::Handle::builder()
            .library_path(&lib)
            .connect(&address)
            .unwrap();
        let info = h
            .field_cache_info(dcgm::Entity::gpu(0), dcgm::FieldId(150))
            .unwrap();
        // The samples DCGM still holds (what maxKeepSamples bounds).
        let held = h
            .field_samples(0, dcgm::FieldId(150), 0, 0, 1000)
            .unwrap()
            .unwrap_or_default()
            .len();
        drop(s);
        drop(engine);
        (info, held)
    };
    let (default, held) = kept(&[], &[], "default");
    assert!(default.watched);
    assert_eq!(
        default.max_age,
        Some(Duration::from_secs(30)),
        "{default:?}"
    );
    assert!(held > 5, "{held} held: {default:?}");

    let (set, held) = kept(
        &[
            "--watch-max-keep-age",
            "7m",
            "--watch-max-keep-samples",
            "5",
        ],
        &[],
        "flags",
    );
    assert_eq!(set.max_age, Some(Duration::from_secs(420)), "{set:?}");
    // libdcgm 4.6.0's nv-hostengine holds every sample of the last 2 s (21 at 100 ms) even
    // with maxKeepSamples 5 (measured): the exporter's watch keeps no more than a watch made
    // directly with the same parameters.
    let direct = {
        let engine = start_engine(&dcgm, &capture, &dir.join("direct.log"));
        let h = dcgm::Handle::builder()
            .library_path(&lib)
            .connect(&format!("127.0.0.1:{}", engine.1))
            .unwrap();
        let f = dcgm::FieldGroup::create(&h, "direct", &[dcgm::FieldId(150)]).unwrap();
        let g = dcgm::Group::all_gpus(&h);
        let _w = g
            .watch(
                &f,
                dcgm::WatchOptions {
                    update_interval: Duration::from_millis(100),
                    max_keep_age: Duration::from_secs(420),
                    max_keep_samples: 5,
                },
            )
            .unwrap();
        std::thread::sleep(Duration::from_secs(2));
        h.field_samples(0, dcgm::FieldId(150), 0, 0, 1000)
            .unwrap()
            .unwrap_or_default()
            .len()
    };
    eprintln!(
        "maxKeepSamples 5 over 2 s at 100 ms: the exporter's watch holds {held}, a direct one {direct}"
    );
    assert!(
        held <= direct + 1,
        "{held} held, {direct} by a direct watch"
    );

    let (env, _) = kept(
        &[],
        &[
            ("DCGM_EXPORTER_WATCH_MAX_KEEP_AGE", "90"),
            ("DCGM_EXPORTER_WATCH_MAX_KEEP_SAMPLES", "3"),
        ],
        "env",
    );
    assert_eq!(env.max_age, Some(Duration::from_secs(90)), "{env:?}");

    // Out of range: a configuration error.
    for bad in [
        ["--watch-max-keep-age", "0"],
        ["--watch-max-keep-samples", "-1"],
    ] {
        let o = once(&bad, &[]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
}

/// A series' `pod`, `vgpu` and `pod_uid` labels, and its value.
type PodValue = (Option<String>, Option<String>, Option<String>, f64);

#[test]
fn kubernetes_virtual_gpus_give_each_sharing_pod_its_series_and_its_own_memory_and_utilisation() {
    let dir = process::tempdir("virtual-gpus");
    let uid = |n: u32| format!("0d5c2a3e-4b1f-4c6d-9e8a-{n:012x}");
    let cgroup = |n: u32| {
        format!(
            "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{}.slice/cri-containerd-{}.scope\n",
            uid(n).replace('-', "_"),
            cid(n as u8)
        )
    };
    // GPU 0 time-sliced among pods a (replica 0), b (1) and c (2). The kubelet's API names
    // pods, the cgroups give UIDs: pod a also holds GPU 1 alone, and c GPU 3, which tell
    // their UIDs; then GPU 0 tells b's. Pod c runs nothing on GPU 0: 0 there. GPU 2 is held
    // by pod d alone, GPU 4 by nobody.
    let procs = [
        (5001, 0, 3000, 0xa),
        (5002, 0, 1000, 0xb),
        (5003, 1, 500, 0xa),
        (5004, 2, 700, 0xd),
        (5005, 3, 200, 0xc),
    ];
    let list: Vec<String> = procs
        .iter()
        .map(|(pid, gpu, mib, _)| {
            format!(r#"{{"pid": {pid}, "gpus": [{gpu}], "memory_mib": {mib}}}"#)
        })
        .collect();
    let config = write(
        &dir,
        "node.json",
        &format!(
            r#"{{"gpus": [{{}}, {{}}, {{}}, {{}}, {{}}], "processes": [{}]}}"#,
            list.join(",")
        ),
    );
    let proc_root = dir.join("proc");
    for (pid, _, _, owner) in &procs {
        let d = proc_root.join(pid.to_string());
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("cgroup"), cgroup(*owner)).unwrap();
    }
    use support::kubelet::device_pod;
    let answer = support::kubelet::Answer::default();
    *answer.lock().unwrap() = dcgm_exporter::attribution::kubelet_wire::ListPodResourcesResponse {
        pod_resources: vec![
            device_pod(
                "a",
                "ml",
                "ca",
                "nvidia.com/gpu",
                &["nvidia0::0", "nvidia1"],
            ),
            device_pod("b", "ml", "cb", "nvidia.com/gpu", &["nvidia0::1"]),
            device_pod(
                "c",
                "ml",
                "cc",
                "nvidia.com/gpu",
                &["nvidia0::2", "nvidia3"],
            ),
            device_pod("d", "ml", "cd", "nvidia.com/gpu", &["nvidia2"]),
        ],
    };
    let sock = support::kubelet::serve(&dir, answer);
    let sock = sock.to_str().unwrap();
    let proc_root = proc_root.to_str().unwrap();
    let env = [("DCGM_SIM_CONFIG", config.as_str())];
    let base = [
        "--kubernetes",
        "--pod-resources-kubelet-socket",
        sock,
        "--kubernetes-gpu-id-type",
        "device-name",
        "--proc-root",
        proc_root,
    ];
    let mut args = base.to_vec();
    args.push("--kubernetes-virtual-gpus");
    let text = stdout(&once(&args, &env));
    let pods_of = |metric: &str, gpu: &str| -> Vec<PodValue> {
        let mut v: Vec<_> = text
            .lines()
            .filter(|l| l.starts_with(&format!("{metric}{{gpu=\"{gpu}\"")))
            .map(|l| {
                let label = |k: &str| {
                    l.split(&format!(",{k}=\""))
                        .nth(1)
                        .map(|r| r.split('"').next().unwrap().to_string())
                };
                let value: f64 = l.rsplit(' ').next().unwrap().parse().unwrap();
                (label("pod"), label("vgpu"), label("pod_uid"), value)
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    let s = |x: &str| Some(x.to_string());
    // Every series of the shared GPU once per pod, with its replica.
    let temp = pods_of("DCGM_FI_DEV_GPU_TEMP", "0");
    let who: Vec<_> = temp.iter().map(|t| (t.0.clone(), t.1.clone())).collect();
    assert_eq!(
        who,
        [(s("a"), s("0")), (s("b"), s("1")), (s("c"), s("2"))],
        "{temp:?}"
    );
    // Memory: the device's series, then each pod with its processes' memory in MiB.
    let fb = pods_of("DCGM_FI_DEV_FB_USED", "0");
    assert_eq!(fb.len(), 4, "{fb:?}");
    assert_eq!(
        (fb[0].0.clone(), fb[0].2.clone()),
        (None, None),
        "the device's: {fb:?}"
    );
    assert_eq!(
        (fb[1].0.clone(), fb[1].1.clone(), fb[1].2.clone(), fb[1].3),
        (s("a"), s("0"), Some(uid(0xa)), 3000.0)
    );
    assert_eq!(
        (fb[2].0.clone(), fb[2].1.clone(), fb[2].2.clone(), fb[2].3),
        (s("b"), s("1"), Some(uid(0xb)), 1000.0)
    );
    assert_eq!(
        (fb[3].0.clone(), fb[3].1.clone(), fb[3].2.clone(), fb[3].3),
        (s("c"), s("2"), Some(uid(0xc)), 0.0)
    );
    assert!(
        fb[0].3 >= 4000.0,
        "the device's memory counts every process: {fb:?}"
    );
    // Utilisation per pod from DCGM's process statistics, beside the device's.
    let util = pods_of("DCGM_FI_DEV_GPU_UTIL", "0");
    assert_eq!(
        util.iter().map(|u| u.0.clone()).collect::<Vec<_>>(),
        [None, s("a"), s("b"), s("c")],
        "{util:?}"
    );
    assert!(
        util.iter().all(|u| (0.0..=100.0).contains(&u.3)),
        "{util:?}"
    );
    // A GPU held by one pod: its series and its own value; a free GPU: the device's alone.
    let fb2 = pods_of("DCGM_FI_DEV_FB_USED", "2");
    assert_eq!(fb2.len(), 2, "{fb2:?}");
    assert_eq!((fb2[1].0.clone(), fb2[1].3), (s("d"), 700.0));
    assert_eq!(pods_of("DCGM_FI_DEV_FB_USED", "4").len(), 1);
    assert_eq!(pods_of("DCGM_FI_DEV_GPU_TEMP", "4")[0].0, None);

    // Its variable; and without it the shared GPU's series name the last pod listed, once,
    // without vgpu, and the memory is the device's only.
    let mut envs = env.to_vec();
    envs.push(("KUBERNETES_VIRTUAL_GPUS", "true"));
    let text2 = stdout(&once(&base, &envs));
    assert!(text2.contains(",vgpu=\"2\""));
    let text = stdout(&once(&base, &env));
    let temp: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\""))
        .collect();
    assert_eq!(temp.len(), 1, "{temp:?}");
    assert!(
        temp[0].contains(",pod=\"c\"") && !temp[0].contains("vgpu="),
        "{temp:?}"
    );
    let fb: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("DCGM_FI_DEV_FB_USED{gpu=\"0\""))
        .collect();
    assert_eq!(fb.len(), 1, "{fb:?}");
    // It needs --kubernetes.
    let o = once(&["--kubernetes-virtual-gpus"], &[]);
    assert_eq!(o.status.code(), Some(2));
}

/// A fake API server on 127.0.0.1 over TLS (a self-signed certificate made with openssl;
/// `None` without it) answering `GET /api/v1/pods` with `body` to `Bearer token`, 401
/// otherwise; the paths and queries it was asked.
fn fake_api_server(
    dir: &std::path::Path,
    body: String,
) -> Option<(u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>)> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use std::sync::{Arc, Mutex};
    let (cert, key) = (dir.join("ca.crt"), dir.join("apiserver-key.pem"));
    let made = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .args(["-addext", "basicConstraints=critical,CA:FALSE", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(std::process::Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: openssl is not installed (the fake API server needs a certificate)");
        return None;
    }
    std::fs::write(dir.join("token"), "secret-token\n").unwrap();
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(&key).unwrap();
    let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, log, body) = (acceptor.clone(), log.clone(), body.clone());
                tokio::spawn(async move {
                    let Ok(stream) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let svc = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            log.lock().unwrap().push(req.uri().to_string());
                            let ok = req
                                .headers()
                                .get("authorization")
                                .and_then(|v| v.to_str().ok())
                                == Some("Bearer secret-token");
                            let (status, text) = if !ok {
                                (
                                    401,
                                    r#"{"kind":"Status","message":"Unauthorized"}"#.to_string(),
                                )
                            } else if req.uri().path() == "/api/v1/pods" {
                                (200, body.clone())
                            } else {
                                (404, "404 page not found\n".to_string())
                            };
                            std::future::ready(Ok::<_, std::convert::Infallible>(
                                hyper::Response::builder()
                                    .status(status)
                                    .header("content-type", "application/json")
                                    .body(http_body_util::Full::new(bytes::Bytes::from(text)))
                                    .unwrap(),
                            ))
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
    });
    Some((port, seen))
}

#[test]
fn kubernetes_pod_labels_come_from_the_api_server_filtered_by_the_allowlist() {
    let dir = process::tempdir("pod-labels");
    let pods = r#"{"kind":"PodList","apiVersion":"v1","items":[
        {"metadata":{"name":"train-0","namespace":"ml","uid":"u1","labels":{
            "app.kubernetes.io/name":"trainer","team":"vision","gpu":"fake","pod":"fake"}}},
        {"metadata":{"name":"other","namespace":"ml","labels":{"team":"nlp"}}}]}"#;
    let Some((port, seen)) = fake_api_server(&dir, pods.to_string()) else {
        return;
    };
    use support::kubelet::device_pod;
    let answer = support::kubelet::Answer::default();
    *answer.lock().unwrap() = dcgm_exporter::attribution::kubelet_wire::ListPodResourcesResponse {
        pod_resources: vec![device_pod(
            "train-0",
            "ml",
            "trainer",
            "nvidia.com/gpu",
            &["nvidia0"],
        )],
    };
    let sock = support::kubelet::serve(&dir, answer);
    let port = port.to_string();
    let env = [
        ("KUBERNETES_SERVICE_HOST", "127.0.0.1"),
        ("KUBERNETES_SERVICE_PORT", port.as_str()),
    ];
    let account = dir.to_str().unwrap();
    let base = [
        "--kubernetes",
        "--pod-resources-kubelet-socket",
        sock.to_str().unwrap(),
        "--kubernetes-gpu-id-type",
        "device-name",
        "--kubernetes-service-account-dir",
        account,
    ];
    let gpu0 = |text: &str| -> process::Labels {
        process::series(text, "DCGM_FI_DEV_GPU_TEMP")
            .into_iter()
            .find(|l| l["gpu"] == "0")
            .unwrap()
    };
    let mut args = base.to_vec();
    args.push("--kubernetes-enable-pod-labels");
    let text = stdout(&once(&args, &env));
    let l = gpu0(&text);
    assert_eq!(
        l.get("app_kubernetes_io_name").map(String::as_str),
        Some("trainer"),
        "{l:?}"
    );
    assert_eq!(l.get("team").map(String::as_str), Some("vision"));
    // A pod label never replaces the series' own.
    assert_eq!((l["gpu"].as_str(), l["pod"].as_str()), ("0", "train-0"));
    // GPU 1 is held by nobody: no pod labels.
    let l1 = process::series(&text, "DCGM_FI_DEV_GPU_TEMP")
        .into_iter()
        .find(|l| l["gpu"] == "1")
        .unwrap();
    assert!(!l1.contains_key("team"), "{l1:?}");
    // The pods of this node were asked for.
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|q| q == "/api/v1/pods?fieldSelector=spec%2EnodeName%3Diface%2Dnode"),
        "{:?}",
        seen.lock().unwrap()
    );

    // The allow-list, by flag and by variable.
    args.extend(["--kubernetes-pod-label-allowlist-regex", "^app\\.,nothing"]);
    let l = gpu0(&stdout(&once(&args, &env)));
    assert!(
        l.contains_key("app_kubernetes_io_name") && !l.contains_key("team"),
        "{l:?}"
    );
    let mut envs = env.to_vec();
    envs.push(("DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS", "true"));
    envs.push(("DCGM_EXPORTER_KUBERNETES_POD_LABEL_ALLOWLIST_REGEX", "tea"));
    let l = gpu0(&stdout(&once(&base, &envs)));
    assert!(
        l.contains_key("team") && !l.contains_key("app_kubernetes_io_name"),
        "{l:?}"
    );

    // Without the flag: no request, no labels.
    let before = seen.lock().unwrap().len();
    let l = gpu0(&stdout(&once(&base, &env)));
    assert!(!l.contains_key("team"));
    assert_eq!(seen.lock().unwrap().len(), before);

    // A bad pattern is a configuration error; a refused token leaves the labels out, said.
    let mut bad = base.to_vec();
    bad.extend([
        "--kubernetes-enable-pod-labels",
        "--kubernetes-pod-label-allowlist-regex",
        "(",
    ]);
    let o = once(&bad, &env);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a regular expression"));
    std::fs::write(dir.join("token"), "wrong\n").unwrap();
    let o = once(&args, &env);
    let l = gpu0(&stdout(&o));
    assert!(!l.contains_key("app_kubernetes_io_name"), "{l:?}");
    assert_eq!(l["pod"], "train-0");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("401"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The exporter started as systemd starts a socket-activated service: a listening socket on
/// descriptor 3, `LISTEN_FDS=1`, `LISTEN_PID` its pid (Python opens it, then execs the
/// exporter, which keeps the pid); the socket's port.
fn socket_activated(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> (Server, u16) {
    let script = write(
        dir,
        "activate.py",
        "import os, socket, sys\n\
         s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(16)\n\
         print(\"port\", s.getsockname()[1], file=sys.stderr, flush=True)\n\
         if s.fileno() != 3: os.dup2(s.fileno(), 3)\n\
         os.set_inheritable(3, True)\n\
         os.environ[\"LISTEN_FDS\"] = \"1\"; os.environ[\"LISTEN_PID\"] = str(os.getpid())\n\
         os.execv(sys.argv[1], sys.argv[1:])\n",
    );
    let mut c = std::process::Command::new("python3");
    c.arg(&script)
        .arg(process::exporter_path())
        .args(["--simulate", "-c", "500"])
        .args(args)
        .env(
            "DCGM_SIM_LIB",
            process::profile_dir().join("libdcgm_sim.so"),
        )
        .env("NODE_NAME", "iface-node")
        .env_remove("DCGM_SIM_CONFIG");
    for (k, v) in env {
        c.env(k, v);
    }
    let s = Server::start(c);
    let port = s
        .lines_with(&["port "])
        .first()
        .and_then(|l| l.strip_prefix("port ")?.trim().parse().ok())
        .expect("the socket's port");
    (s, port)
}

#[test]
fn web_systemd_socket_serves_on_the_socket_systemd_passes() {
    let dir = process::tempdir("systemd-socket");
    for (args, env) in [
        (vec!["--web-systemd-socket"], vec![]),
        (vec![], vec![("DCGM_EXPORTER_SYSTEMD_SOCKET", "true")]),
    ] {
        let (s, port) = socket_activated(&dir, &args, &env);
        assert_eq!(s.addr, format!("127.0.0.1:{port}"), "{}", s.log_text());
        let (st, body) = s.poll("/health", Duration::from_secs(30), |st, _| st == 200);
        assert_eq!(st, 200, "{body}");
        assert_eq!(s.get("/metrics").0, 200);
    }
    // Without a socket from systemd: a configuration error saying so.
    // --once prints and listens on nothing.
    assert!(once(&["--web-systemd-socket"], &[]).status.success());
    let mut c = process::exporter("iface-node", &["--simulate", "--web-systemd-socket"]);
    c.env_remove("LISTEN_PID").env_remove("LISTEN_FDS");
    let o = run_bounded(c, Duration::from_secs(30));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("LISTEN_PID is not set"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut c = process::exporter("iface-node", &["--simulate", "--web-systemd-socket"]);
    c.env("LISTEN_PID", "1").env("LISTEN_FDS", "1");
    let o = run_bounded(c, Duration::from_secs(30));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("another process's"));
}

#[test]
fn the_api_servers_pod_uids_name_the_pods_the_cgroups_cannot_tell_apart() {
    let dir = process::tempdir("virtual-api-uids");
    let uid = |n: u32| format!("0d5c2a3e-4b1f-4c6d-9e8a-{n:012x}");
    // GPU 0 time-sliced between pods b (running 1000 MiB) and e (running nothing): from the
    // cgroups alone, b's UID could be either pod's.
    let config = write(
        &dir,
        "node.json",
        r#"{"gpus": [{}, {}], "processes": [{"pid": 6001, "gpus": [0], "memory_mib": 1000}]}"#,
    );
    let proc_root = dir.join("proc");
    std::fs::create_dir_all(proc_root.join("6001")).unwrap();
    std::fs::write(
        proc_root.join("6001/cgroup"),
        format!(
            "0::/kubepods.slice/kubepods-pod{}.slice/cri-containerd-{}.scope\n",
            uid(0xb).replace('-', "_"),
            cid(0xb)
        ),
    )
    .unwrap();
    let pods = format!(
        r#"{{"kind":"PodList","items":[
        {{"metadata":{{"name":"b","namespace":"ml","uid":"{}","labels":{{"team":"b"}}}}}},
        {{"metadata":{{"name":"e","namespace":"ml","uid":"{}","labels":{{"team":"e"}}}}}}]}}"#,
        uid(0xb),
        uid(0xe)
    );
    let Some((port, _)) = fake_api_server(&dir, pods) else {
        return;
    };
    use support::kubelet::device_pod;
    let answer = support::kubelet::Answer::default();
    *answer.lock().unwrap() = dcgm_exporter::attribution::kubelet_wire::ListPodResourcesResponse {
        pod_resources: vec![
            device_pod("b", "ml", "cb", "nvidia.com/gpu", &["nvidia0::0"]),
            device_pod("e", "ml", "ce", "nvidia.com/gpu", &["nvidia0::1"]),
        ],
    };
    let sock = support::kubelet::serve(&dir, answer);
    let port = port.to_string();
    let env = [
        ("DCGM_SIM_CONFIG", config.as_str()),
        ("KUBERNETES_SERVICE_HOST", "127.0.0.1"),
        ("KUBERNETES_SERVICE_PORT", port.as_str()),
    ];
    let args = [
        "--kubernetes",
        "--kubernetes-virtual-gpus",
        "--pod-resources-kubelet-socket",
        sock.to_str().unwrap(),
        "--kubernetes-gpu-id-type",
        "device-name",
        "--proc-root",
        proc_root.to_str().unwrap(),
        "--kubernetes-service-account-dir",
        dir.to_str().unwrap(),
    ];
    let fb = |text: &str| -> Vec<String> {
        let mut v: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("DCGM_FI_DEV_FB_USED{gpu=\"0\""))
            .filter(|l| l.contains(",pod_uid="))
            .map(|l| {
                let pod = l
                    .split(",pod=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                format!("{pod} {}", l.rsplit(' ').next().unwrap())
            })
            .collect();
        v.sort();
        v
    };
    // The cgroups alone: no per-pod value (either pod could be b's UID).
    assert_eq!(fb(&stdout(&once(&args, &env))), Vec::<String>::new());
    // With the API server's pods: each its own.
    let mut with = args.to_vec();
    with.push("--kubernetes-enable-pod-labels");
    let text = stdout(&once(&with, &env));
    assert_eq!(fb(&text), ["b 1000", "e 0"], "{text}");
    assert!(text.contains(&format!(",pod_uid=\"{}\"", uid(0xe))));
}
