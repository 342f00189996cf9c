//! Hostile CDI spec directories (issue 31, items 2 and 4), against the binary on dcgm-sim with
//! a fake kubelet: one pod holds GPU 0 through the device plugin (`nvidia.com/gpu`), another
//! GPU 1 through a DRA claim whose CDI spec (`a-legit.yaml`, device node `/dev/nvidia1`) the
//! exporter reads from `--cdi-spec-dir`. The report: a 200 KB spec nested 100,000 deep under an
//! ignored key cost 41 s of CPU per pass, so no pod label (the device plugin's included) was
//! published meanwhile while `/health` said `kubelet: ok`; a 4 MiB unclosed `[[[[` cost a
//! 666 MB spike and 92 % of a core on every List; 50,000 small files a quarter of a core
//! (5,000 here, to keep the test fast: past the 4,096-file limit all the same); 8 valid 4 MiB
//! specs left 130 MB resident.
//!
//! Asserted, for each: every scrape of `/metrics` and `/health` during the attack and after it
//! answered 200, whole, within [`DEADLINE`]; every `/metrics` carries both pods' labels; the
//! hostile files are named on `/health` and in the log; unchanged files are not read again
//! (`dcgm_exporter_cdi_spec_reads_total` stays put); resident memory after the attack is back
//! under a stated bound. Latencies, CPU and memory are printed (`--nocapture`), one
//! `HOSTILE3|…` row per case for `scripts/hostile.sh`.

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dcgm_exporter::attribution::kubelet_wire::ListPodResourcesResponse;
use support::kubelet::{self, claim_pod, device_pod};
use support::process::{Server, TempDir, exporter, series, tempdir};
use support::watch::{RssPeak, cpu_seconds, rss_kib, scrape, spread, value};

/// How long a legitimate scrape may take: far under the 41 s a pass cost, with room for a
/// loaded 2-core machine. Latencies are printed, not asserted.
const DEADLINE: Duration = Duration::from_secs(3);

const CLAIM: &str = "k8s.gpu.nvidia.com/claim";
const READS: &str = "dcgm_exporter_cdi_spec_reads_total";

/// The tests share the machine's cores: one exporter at a time.
static SERIAL: Mutex<()> = Mutex::new(());

struct Node {
    dir: TempDir,
    cdi: PathBuf,
    server: Server,
    addr: SocketAddr,
    pid: u32,
}

/// The exporter with the fake kubelet, the NVIDIA driver's tables for GPU 1 and the legitimate
/// claim's spec; returns once both pods' labels are on `/metrics`.
fn start(tag: &str) -> Node {
    let dir = tempdir(&format!("hostile-attr-{tag}"));
    let cdi = dir.join("cdi");
    let proc_root = dir.join("proc");
    std::fs::create_dir_all(&cdi).unwrap();
    std::fs::create_dir_all(&proc_root).unwrap();
    let answer = Arc::new(Mutex::new(ListPodResourcesResponse {
        pod_resources: vec![
            device_pod("plain", "ml", "worker", "nvidia.com/gpu", &["nvidia0"]),
            claim_pod(
                "claimed",
                "ml",
                "trainer",
                "train-gpu",
                "gpu-1",
                &format!("{CLAIM}=legit-gpu-1"),
            ),
        ],
    }));
    let sock = kubelet::serve(&dir, answer);
    let server = Server::start(exporter(
        "hostile-attr",
        &[
            "--simulate",
            "-a",
            "127.0.0.1:0",
            "-c",
            "500",
            "-d",
            "g",
            "--kubernetes",
            "--kubernetes-gpu-id-type",
            "device-name",
            "--kubernetes-enable-dra",
            "--pod-resources-kubelet-socket",
            sock.to_str().unwrap(),
            "--cdi-spec-dir",
            cdi.to_str().unwrap(),
            "--proc-root",
            proc_root.to_str().unwrap(),
        ],
    ));
    let addr: SocketAddr = server.addr.parse().unwrap();
    let (st, text) = server.poll("/metrics", Duration::from_secs(30), |st, _| st == 200);
    assert_eq!(st, 200, "{}", server.log_text());
    let uuid = series(&text, "DCGM_FI_DEV_GPU_TEMP")
        .into_iter()
        .find(|l| l["gpu"] == "1")
        .expect("GPU 1")["UUID"]
        .clone();
    let info = proc_root.join("driver/nvidia/gpus/0000:11:00.0");
    std::fs::create_dir_all(&info).unwrap();
    std::fs::write(
        info.join("information"),
        format!("Model: NVIDIA H100\nGPU UUID: {uuid}\nDevice Minor: 1\n"),
    )
    .unwrap();
    put(
        &cdi,
        "a-legit.yaml",
        format!(
            "cdiVersion: 0.6.0\nkind: {CLAIM}\ndevices:\n- name: legit-gpu-1\n  containerEdits:\n    \
             deviceNodes:\n    - path: /dev/nvidia1\n"
        )
        .as_bytes(),
    );
    let (_, text) = server.poll("/metrics", Duration::from_secs(20), |st, t| {
        st == 200 && labelled(t).is_ok()
    });
    labelled(&text).unwrap_or_else(|e| panic!("{e}\n{}", server.log_text()));
    let pid = server.child.id();
    Node {
        dir,
        cdi,
        server,
        addr,
        pid,
    }
}

/// Writes a spec file whole (under another name, then renamed), as a driver does.
fn put(dir: &Path, name: &str, bytes: &[u8]) {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, dir.join(name)).unwrap();
}

/// Both pods' labels are on their GPUs.
fn labelled(text: &str) -> Result<(), String> {
    let temp = series(text, "DCGM_FI_DEV_GPU_TEMP");
    for (gpu, pod) in [("0", "plain"), ("1", "claimed")] {
        let l = temp
            .iter()
            .find(|l| l["gpu"] == gpu)
            .ok_or_else(|| format!("no GPU {gpu}"))?;
        if l.get("pod").map(String::as_str) != Some(pod) {
            return Err(format!("GPU {gpu} is not labelled with pod {pod}: {l:?}"));
        }
    }
    Ok(())
}

/// Scrapes `/metrics` and `/health` in turn every 250 ms for `span`: each must be a whole 200
/// within [`DEADLINE`], each `/metrics` with both pods' labels. The latencies, and the last
/// `/health` and `/metrics`.
fn watch(n: &Node, span: Duration, what: &str) -> (Vec<Duration>, String, String) {
    let mut times = Vec::new();
    let (mut health, mut metrics) = (String::new(), String::new());
    let t0 = Instant::now();
    let mut i = 0;
    while t0.elapsed() < span {
        let path = if i % 2 == 0 { "/metrics" } else { "/health" };
        match scrape(n.addr, path, DEADLINE) {
            Ok((200, body, took)) => {
                times.push(took);
                if path == "/metrics" {
                    if let Err(e) = labelled(&body) {
                        panic!("{what}: {e}\n{}", n.server.log_text());
                    }
                    metrics = body;
                } else {
                    health = body;
                }
            }
            Ok((st, body, took)) => panic!("{what}: {path} answered {st} after {took:?}: {body}"),
            Err(e) => panic!("{what}: {path} not answered within {DEADLINE:?}: {e}"),
        }
        i += 1;
        std::thread::sleep(Duration::from_millis(250));
    }
    (times, health, metrics)
}

/// The `cdi:` line of a `/health` body.
fn cdi_line(health: &str) -> &str {
    health
        .lines()
        .find(|l| l.starts_with("cdi: "))
        .unwrap_or_else(|| panic!("no cdi line: {health}"))
}

/// What one case measured.
struct Measured {
    during: Vec<Duration>,
    after: Vec<Duration>,
    rss: (u64, u64, u64),
    /// CPU the exporter used during the attack, as a share of one core.
    cpu: f64,
    health: String,
    metrics: String,
}

impl Measured {
    fn print(&self, case: &str, bound_kib: u64) {
        let mib = |k: u64| format!("{:.1}", k as f64 / 1024.0);
        let all: Vec<Duration> = self.during.iter().chain(&self.after).copied().collect();
        println!(
            "{case}: scrapes answered during {n}/{n}, after {m}/{m}; latency min/median/max {}; \
             resident memory before {} MiB, peak {} MiB, after {} MiB (bound: before + {} MiB); \
             CPU during the attack {:.0} % of a core",
            spread(&all),
            mib(self.rss.0),
            mib(self.rss.1),
            mib(self.rss.2),
            bound_kib / 1024,
            self.cpu * 100.0,
            n = self.during.len(),
            m = self.after.len(),
        );
        println!(
            "HOSTILE3|{case}|{n}/{n}|{m}/{m}|{}|{} / {} / {} MiB|CPU {:.0} % of a core during it",
            spread(&all),
            mib(self.rss.0),
            mib(self.rss.1),
            mib(self.rss.2),
            self.cpu * 100.0,
            n = self.during.len(),
            m = self.after.len(),
        );
        println!("  {}", cdi_line(&self.health));
    }
}

/// Runs `attack` (writing into the CDI directory), watches for `span`, then `clean` and
/// watches 2 s more; resident memory and CPU around it.
fn run(
    n: &Node,
    span: Duration,
    attack: impl FnOnce(&Path),
    clean: impl FnOnce(&Path),
) -> Measured {
    // Settle, then the baseline.
    watch(n, Duration::from_secs(1), "before the attack");
    let before = rss_kib(n.pid);
    let peak = RssPeak::start(n.pid);
    let cpu0 = (cpu_seconds(n.pid), Instant::now());
    attack(&n.cdi);
    let (during, health, metrics) = watch(n, span, "during the attack");
    let cpu = (cpu_seconds(n.pid) - cpu0.0) / cpu0.1.elapsed().as_secs_f64();
    clean(&n.cdi);
    let (after, ..) = watch(n, Duration::from_secs(2), "after the attack");
    let rss = (before, peak.peak(), rss_kib(n.pid));
    drop(peak);
    Measured {
        during,
        after,
        rss: (rss.0, rss.1.max(rss.2), rss.2),
        cpu,
        health,
        metrics,
    }
}

/// The reads counter once it has stayed put for 3 s (nothing changed: nothing is read
/// again); the test fails if it keeps moving for 30 s.
fn reads_settle(n: &Node) -> f64 {
    let read = || {
        let (_, text, _) = scrape(n.addr, "/metrics", DEADLINE).unwrap();
        value(&text, READS).expect("the reads counter")
    };
    let t0 = Instant::now();
    let mut last = read();
    loop {
        std::thread::sleep(Duration::from_secs(3));
        let now = read();
        if now == last {
            return now;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "spec files are read again and again: {last} then {now}"
        );
        last = now;
    }
}

fn remove(dir: &Path, names: &[&str]) {
    for n in names {
        let _ = std::fs::remove_file(dir.join(n));
    }
}

/// The report's spec: 200 KB, `x:` (a key the spec does not have, ignored) nested 100,000
/// deep.
#[test]
fn hostile_cdi_spec_nested_100000_deep_is_refused_and_labels_stay() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let n = start("nested");
    let nested = format!(
        "cdiVersion: 0.6.0\nkind: {CLAIM}\ndevices: []\nx: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let m = run(
        &n,
        Duration::from_secs(6),
        |d| put(d, "nested.yaml", nested.as_bytes()),
        |_| {},
    );
    // Bound: the 200 KB file and the scan's few allocations, with the allocator's slack.
    let bound = 16 * 1024;
    m.print("CDI spec nested 100,000 deep (200 KB)", bound);
    let line = cdi_line(&m.health);
    assert!(
        line.starts_with("cdi: partial, 1 specs in") && line.contains("(1 skipped: 1 rejected)"),
        "{}",
        m.health
    );
    assert!(m.health.contains("kubelet: ok"), "{}", m.health);
    n.server.wait_log(
        &["nested.yaml", "nest deeper than 64 levels"],
        Duration::from_secs(1),
    );
    assert_eq!(
        value(
            &m.metrics,
            "dcgm_exporter_cdi_spec_files{state=\"rejected\"}"
        ),
        Some(1.0)
    );
    // Each file read once: the legitimate spec and the nested one.
    assert_eq!(reads_settle(&n), 2.0);
    assert!(
        m.rss.2 <= m.rss.0 + bound,
        "resident memory {} KiB after, {} KiB before",
        m.rss.2,
        m.rss.0
    );
    // Logged once, however many passes saw it.
    assert_eq!(n.server.lines_with(&["nested.yaml"]).len(), 1);
    let _ = &n.dir;
}

/// 4 MiB of `[` that never closes.
#[test]
fn hostile_cdi_spec_of_4_mib_unclosed_brackets_is_refused_at_once() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let n = start("unclosed");
    let mut open = format!("kind: {CLAIM}\nx: ").into_bytes();
    open.resize(4 << 20, b'[');
    let m = run(
        &n,
        Duration::from_secs(6),
        |d| put(d, "open.yaml", &open),
        |d| remove(d, &["open.yaml"]),
    );
    // Bound: the 4 MiB file read once into memory, and the allocator's slack.
    let bound = 24 * 1024;
    m.print("CDI spec of 4 MiB unclosed [[[[", bound);
    assert!(
        cdi_line(&m.health).contains("(1 skipped: 1 rejected)"),
        "{}",
        m.health
    );
    n.server.wait_log(
        &["open.yaml", "nest deeper than 64 levels"],
        Duration::from_secs(1),
    );
    assert!(
        m.rss.1 <= m.rss.0 + 64 * 1024,
        "peak resident memory {} KiB, {} KiB before (the report: a 666 MB spike)",
        m.rss.1,
        m.rss.0
    );
    assert!(
        m.rss.2 <= m.rss.0 + bound,
        "resident memory {} KiB after, {} KiB before",
        m.rss.2,
        m.rss.0
    );
    // Read once while it was there (it is gone now): the legitimate spec and it.
    assert_eq!(reads_settle(&n), 2.0);
}

/// 5,000 small specs (the report had 50,000): past the 4,096-file limit, each read once.
#[test]
fn hostile_cdi_directory_of_5000_small_specs_is_read_once_and_the_limit_named() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let n = start("many");
    const FILES: usize = 5000;
    let names: Vec<String> = (0..FILES).map(|i| format!("f-{i:05}.yaml")).collect();
    let m = run(
        &n,
        Duration::from_secs(8),
        |d| {
            for (i, name) in names.iter().enumerate() {
                std::fs::write(
                    d.join(name),
                    format!("kind: {CLAIM}\ndevices:\n- name: filler-{i}\n"),
                )
                .unwrap();
            }
        },
        |_| {},
    );
    let bound = 32 * 1024;
    m.print("5,000 small CDI specs", bound);
    // The legitimate spec sorts first; 4,095 fillers after it are read, 905 are not.
    let (_, health, _) = scrape(n.addr, "/health", DEADLINE).unwrap();
    let line = cdi_line(&health);
    assert!(
        line.starts_with("cdi: partial, 4096 specs in")
            && line.contains("(905 skipped: 905 past the 4096-file limit)"),
        "{health}"
    );
    n.server.wait_log(
        &["holds 5001 spec files; only the first 4096 by name are read"],
        Duration::from_secs(1),
    );
    let reads = reads_settle(&n);
    assert_eq!(reads, 4096.0, "each file read once");
    // Steady state: the directory unchanged, what a pass costs now.
    let cpu0 = (cpu_seconds(n.pid), Instant::now());
    let (steady, ..) = watch(&n, Duration::from_secs(4), "steady state");
    let cpu = (cpu_seconds(n.pid) - cpu0.0) / cpu0.1.elapsed().as_secs_f64();
    println!(
        "  steady state with 5,001 files: CPU {:.0} % of a core (the report: 25 % for 50,000), \
         scrapes {}",
        cpu * 100.0,
        spread(&steady)
    );
    assert!(
        m.rss.2 <= m.rss.0 + bound,
        "resident memory {} KiB after, {} KiB before",
        m.rss.2,
        m.rss.0
    );
}

/// Eight valid specs of almost 4 MiB each (the bulk in `mounts`, which the mapping ignores).
#[test]
fn hostile_cdi_directory_of_eight_4_mib_specs_leaves_memory_bounded() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let n = start("big");
    let path = format!("/usr/lib/x86_64-linux-gnu/{}.so", "l".repeat(380));
    let mut big = format!(
        "cdiVersion: 0.6.0\nkind: {CLAIM}\ndevices:\n- name: big-NAME\n  containerEdits:\n    \
         deviceNodes:\n    - path: /dev/nvidia2\ncontainerEdits:\n  mounts:\n"
    );
    while big.len() + 900 < (4 << 20) {
        big.push_str(&format!(
            "  - hostPath: {path}\n    containerPath: {path}\n    options: [ro, nosuid, nodev, bind]\n"
        ));
    }
    let m = run(
        &n,
        Duration::from_secs(8),
        |d| {
            for i in 0..8 {
                put(
                    d,
                    &format!("big-{i}.yaml"),
                    big.replace("NAME", &i.to_string()).as_bytes(),
                );
            }
        },
        |_| {},
    );
    let bound = 48 * 1024;
    m.print("8 valid specs of 4 MiB", bound);
    // A pass starts no new file past 0.5 s: in a debug build one such spec takes about that.
    let (_, health) = n.server.poll("/health", Duration::from_secs(20), |_, b| {
        b.contains("cdi: ok, 9 specs in")
    });
    assert!(
        cdi_line(&health).starts_with("cdi: ok, 9 specs in"),
        "{health}"
    );
    assert_eq!(reads_settle(&n), 9.0, "each read once");
    assert!(
        m.rss.2 <= m.rss.0 + bound,
        "resident memory {} KiB after, {} KiB before (the report: 130 MB)",
        m.rss.2,
        m.rss.0
    );
}

/// The kubelet goes away (its socket renamed): the last good labels stay for 3 refresh
/// intervals (3 s here), `/health` says so, then they go; the kubelet back, they come back.
#[test]
fn hostile_kubelet_gone_keeps_the_last_good_labels_for_three_intervals_then_drops_them() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let n = start("kept");
    let sock = n.dir.join("kubelet.sock");
    let away = n.dir.join("kubelet.sock.away");
    let mut times = Vec::new();
    let mut get = |path: &str| -> String {
        let (st, body, took) = scrape(n.addr, path, DEADLINE)
            .unwrap_or_else(|e| panic!("{path} not answered within {DEADLINE:?}: {e}"));
        assert_eq!(st, 200, "{path}: {body}");
        times.push(took);
        body
    };
    std::fs::rename(&sock, &away).unwrap();
    let gone = Instant::now();
    // Failing, and keeping the labels: both pods still on every /metrics meanwhile.
    let mut kept_seen = false;
    let dropped_after = loop {
        let health = get("/health");
        let metrics = get("/metrics");
        if health.contains("kubelet: failing") && health.contains("keeping the pod labels") {
            kept_seen = true;
            labelled(&metrics).unwrap_or_else(|e| panic!("labels kept, yet {e}\n{health}"));
        }
        if health.contains("kubelet: failing") && health.contains("exporting without pod labels") {
            break gone.elapsed();
        }
        assert!(
            gone.elapsed() < Duration::from_secs(15),
            "still not dropped: {health}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(kept_seen, "never said it kept the last good labels");
    // Gone within a collection or two of the /health line.
    let t = Instant::now();
    while get("/metrics").contains("pod=\"") {
        assert!(t.elapsed() < Duration::from_secs(5), "labels not dropped");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::fs::rename(&away, &sock).unwrap();
    let back = Instant::now();
    while labelled(&get("/metrics")).is_err() {
        assert!(back.elapsed() < Duration::from_secs(10), "labels not back");
        std::thread::sleep(Duration::from_millis(200));
    }
    let back_after = back.elapsed();
    assert!(get("/health").contains("kubelet: ok"));
    println!(
        "kubelet gone: labels kept, then dropped {:.1} s after it went (3 intervals of 1 s); \
         back {:.1} s after it returned; {n} scrapes answered, latency min/median/max {}",
        dropped_after.as_secs_f64(),
        back_after.as_secs_f64(),
        spread(&times),
        n = times.len()
    );
    println!(
        "HOSTILE3|kubelet socket gone: last good labels kept 3 intervals, then dropped|{n}/{n}|-|{}|-|dropped after {:.1} s, back {:.1} s after it returned",
        spread(&times),
        dropped_after.as_secs_f64(),
        back_after.as_secs_f64(),
        n = times.len()
    );
    assert!(dropped_after >= Duration::from_secs(2), "{dropped_after:?}");
}

/// An HPC job-mapping directory of 288 files (every GPU and GPU instance name) of 64 KiB each:
/// 18 MiB that each collection (every 100 ms) read whole. Each is read once now.
#[test]
fn hostile_hpc_directory_of_288_files_of_64_kib_is_read_once() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempdir("hostile-hpc");
    let jobs = dir.join("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    let s = Server::start(exporter(
        "hostile-hpc",
        &[
            "--simulate",
            "-a",
            "127.0.0.1:0",
            "-c",
            "100",
            "-d",
            "g",
            "--hpc-job-mapping-dir",
            jobs.to_str().unwrap(),
        ],
    ));
    let addr: SocketAddr = s.addr.parse().unwrap();
    let (st, _) = s.poll("/health", Duration::from_secs(30), |st, _| st == 200);
    assert_eq!(st, 200);
    let pid = s.child.id();
    let before = rss_kib(pid);
    let peak = RssPeak::start(pid);
    let mut names: Vec<String> = (0..32).map(|g| g.to_string()).collect();
    names.extend((0..32).flat_map(|g| (0..8).map(move |i| format!("{g}.{i}"))));
    let cpu_over = |span: Duration| {
        let c0 = cpu_seconds(pid);
        std::thread::sleep(span);
        (cpu_seconds(pid) - c0) / span.as_secs_f64()
    };
    let idle = cpu_over(Duration::from_secs(3));
    // Each file appears whole (written beside the folder, then renamed into it): a file the
    // exporter saw half-written would rightly be read again once complete.
    let staging = dir.join("staging");
    for name in &names {
        let mut text = format!("job-{name}\n").into_bytes();
        text.resize(64 << 10, b'\n');
        std::fs::write(&staging, text).unwrap();
        std::fs::rename(&staging, jobs.join(name)).unwrap();
    }
    // Every file read once, then nothing more.
    let want = format!("({} files read since the start)", names.len());
    let (_, health) = s.poll("/health", Duration::from_secs(20), |_, b| b.contains(&want));
    assert!(health.contains(&want), "{health}");
    let mut times = Vec::new();
    for _ in 0..12 {
        let (st, text, took) = scrape(addr, "/metrics", DEADLINE).unwrap();
        assert_eq!(st, 200);
        assert!(text.contains("hpc_job=\"job-0\""), "GPU 0's job");
        times.push(took);
        std::thread::sleep(Duration::from_millis(250));
    }
    let cpu = cpu_over(Duration::from_secs(3));
    let (_, health, _) = scrape(addr, "/health", DEADLINE).unwrap();
    assert!(health.contains(&want), "read again: {health}");
    let line = health.lines().find(|l| l.starts_with("hpc: ")).unwrap();
    let rss = (before, peak.peak(), rss_kib(pid));
    drop(peak);
    let mib = |k: u64| k as f64 / 1024.0;
    println!(
        "HPC directory of 288 x 64 KiB files: scrapes {n}/{n} answered, latency \
         min/median/max {}; CPU {:.0} % of a core with the files read (an empty directory: \
         {:.0} %); resident memory {:.1} / {:.1} / {:.1} MiB\n  {line}",
        spread(&times),
        cpu * 100.0,
        idle * 100.0,
        mib(rss.0),
        mib(rss.1),
        mib(rss.2),
        n = times.len()
    );
    println!(
        "HOSTILE3|HPC directory of 288 files of 64 KiB, -c 100|{n}/{n}|-|{}|{:.1} / {:.1} / {:.1} MiB|CPU {:.0} % of a core once read (empty directory: {:.0} %)",
        spread(&times),
        mib(rss.0),
        mib(rss.1),
        mib(rss.2),
        cpu * 100.0,
        idle * 100.0,
        n = times.len()
    );
    assert!(rss.2 <= rss.0 + 16 * 1024, "{rss:?}");
}
