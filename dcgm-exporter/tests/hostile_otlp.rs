//! Hostile OTLP receivers (issue 31, items 3 and 5), against the binary on dcgm-sim pushing
//! over gRPC. The report: a receiver accepted the connection and hung; for the next 55 s a
//! healthy receiver listened at the same address and got nothing (0 exported, 9 retries, 53
//! dropped), while OTLP/HTTP recovered. An HTTP/2 protocol error counted as a permanent
//! refusal. `--otlp-queue-size` bounded requests, not bytes.
//!
//! Asserted: every scrape of `/metrics` and `/health` during and after each attack answered
//! 200, whole, within [`DEADLINE`]; a healthy receiver that takes the address over gets data
//! within [`RECOVERY`]; protocol errors are retried, never counted as refusals; the queue
//! never holds more than `--otlp-queue-bytes`; resident memory after is under a stated bound.
//! Latencies, recovery time and memory are printed (`--nocapture`), one `HOSTILE3|…` row per
//! case for `scripts/hostile.sh`.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use support::process::{Server, exporter};
use support::watch::{RssPeak, rss_kib, scrape, spread, value};

/// How long a legitimate scrape may take.
const DEADLINE: Duration = Duration::from_secs(3);

/// How soon after a healthy receiver takes the address over it must get data: the back-off
/// after the attack's failures (3.2 s after 4 s of them) and a push's timeout, with margin.
const RECOVERY: Duration = Duration::from_secs(10);

/// The tests share the machine's cores: one exporter at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// A healthy gRPC receiver counting what it takes.
#[derive(Clone, Default)]
struct Sink(Arc<AtomicUsize>);

#[tonic::async_trait]
impl MetricsService for Sink {
    async fn export(
        &self,
        _: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(tonic::Response::new(ExportMetricsServiceResponse {
            partial_success: None,
        }))
    }
}

/// A healthy receiver on `addr`, served from its own runtime (dropped with it).
fn healthy(addr: SocketAddr) -> (Arc<AtomicUsize>, tokio::runtime::Runtime) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind(addr))
        .expect("bind the healthy receiver to the hostile one's address");
    let sink = Sink::default();
    let got = sink.0.clone();
    rt.spawn(async move {
        tonic::transport::Server::builder()
            .add_service(MetricsServiceServer::new(sink))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
            .await
            .unwrap();
    });
    (got, rt)
}

/// A hostile receiver: accepts connections on a thread of its own and hands each to
/// `serve`; [`Hostile::stop_listening`] closes the listener, the connections it accepted stay
/// as they are (held open, never closed by it).
struct Hostile {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Hostile {
    fn start(serve: fn(TcpStream, &AtomicUsize), events: Arc<AtomicUsize>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (s, a) = (stop.clone(), accepted.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((c, _)) => {
                        a.fetch_add(1, Ordering::SeqCst);
                        c.set_nonblocking(false).unwrap();
                        let e = events.clone();
                        std::thread::spawn(move || serve(c, &e));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            // The listener closes here; the connections stay with their threads.
        });
        Self {
            addr,
            stop,
            accepted,
            thread: Some(thread),
        }
    }

    fn stop_listening(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop_listening();
    }
}

/// Accepts and hangs: reads nothing, writes nothing, holds the connection for a minute.
fn hang(c: TcpStream, _: &AtomicUsize) {
    std::thread::sleep(Duration::from_secs(60));
    drop(c);
}

/// Speaks just enough HTTP/2 to take a request, and resets every stream with
/// `PROTOCOL_ERROR`; counts the resets.
fn reset_streams(mut c: TcpStream, resets: &AtomicUsize) {
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut preface = [0u8; 24];
    if c.read_exact(&mut preface).is_err() {
        return;
    }
    let frame = |ty: u8, flags: u8, stream: u32, payload: &[u8]| {
        let mut f = Vec::with_capacity(9 + payload.len());
        f.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
        f.extend_from_slice(&[ty, flags]);
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    };
    if c.write_all(&frame(0x4, 0, 0, &[])).is_err() {
        return;
    }
    loop {
        let mut head = [0u8; 9];
        if c.read_exact(&mut head).is_err() {
            return;
        }
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let (ty, flags) = (head[3], head[4]);
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0u8; len];
        if c.read_exact(&mut payload).is_err() {
            return;
        }
        let answer = match ty {
            // SETTINGS: acknowledged.
            0x4 if flags & 1 == 0 => frame(0x4, 1, 0, &[]),
            // PING: answered.
            0x6 if flags & 1 == 0 => frame(0x6, 1, 0, &payload),
            // HEADERS: the stream is reset with PROTOCOL_ERROR (1).
            0x1 => {
                resets.fetch_add(1, Ordering::SeqCst);
                frame(0x3, 0, stream, &1u32.to_be_bytes())
            }
            _ => continue,
        };
        if c.write_all(&answer).is_err() {
            return;
        }
    }
}

fn start(args: &[&str]) -> (Server, SocketAddr) {
    let mut a = vec!["--simulate", "-a", "127.0.0.1:0", "-d", "g"];
    a.extend_from_slice(args);
    let mut cmd = exporter("hostile-otlp", &a);
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") {
            cmd.env_remove(k);
        }
    }
    let s = Server::start(cmd);
    let addr: SocketAddr = s.addr.parse().unwrap();
    let (st, body) = s.poll("/metrics", Duration::from_secs(30), |st, _| st == 200);
    assert_eq!(st, 200, "{body}\n{}", s.log_text());
    (s, addr)
}

/// Scrapes `/metrics` and `/health` in turn every 250 ms for `span`; each a whole 200 within
/// [`DEADLINE`]. The latencies and the last `/metrics`.
fn watch(addr: SocketAddr, span: Duration, what: &str) -> (Vec<Duration>, String) {
    let mut times = Vec::new();
    let mut metrics = String::new();
    let t0 = Instant::now();
    let mut i = 0;
    while t0.elapsed() < span {
        let path = if i % 2 == 0 { "/metrics" } else { "/health" };
        match scrape(addr, path, DEADLINE) {
            Ok((200, body, took)) => {
                times.push(took);
                if path == "/metrics" {
                    metrics = body;
                }
            }
            Ok((st, body, took)) => panic!("{what}: {path} answered {st} after {took:?}: {body}"),
            Err(e) => panic!("{what}: {path} not answered within {DEADLINE:?}: {e}"),
        }
        i += 1;
        std::thread::sleep(Duration::from_millis(250));
    }
    (times, metrics)
}

fn counter(text: &str, name: &str) -> f64 {
    value(text, name).unwrap_or_else(|| panic!("no {name} in:\n{text}"))
}

/// Fresh counters: they are as of the last collection.
fn metrics_now(addr: SocketAddr) -> String {
    std::thread::sleep(Duration::from_millis(300));
    scrape(addr, "/metrics", DEADLINE).unwrap().1
}

fn row(case: &str, during: &[Duration], after: &[Duration], rss: (u64, u64, u64), extra: &str) {
    let mib = |k: u64| format!("{:.1}", k as f64 / 1024.0);
    let all: Vec<Duration> = during.iter().chain(after).copied().collect();
    println!(
        "{case}: scrapes answered during {n}/{n}, after {m}/{m}; latency min/median/max {}; \
         resident memory before {} MiB, peak {} MiB, after {} MiB; {extra}",
        spread(&all),
        mib(rss.0),
        mib(rss.1),
        mib(rss.2),
        n = during.len(),
        m = after.len(),
    );
    println!(
        "HOSTILE3|{case}|{n}/{n}|{m}/{m}|{}|{} / {} / {} MiB|{extra}",
        spread(&all),
        mib(rss.0),
        mib(rss.1),
        mib(rss.2),
        n = during.len(),
        m = after.len(),
    );
}

/// Waits (at most [`RECOVERY`]) for the healthy receiver's first request; how long it took.
fn recovered(got: &AtomicUsize, s: &Server) -> Duration {
    let t0 = Instant::now();
    while got.load(Ordering::SeqCst) == 0 {
        assert!(
            t0.elapsed() < RECOVERY,
            "the healthy receiver got nothing within {RECOVERY:?}\n{}",
            s.log_text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    t0.elapsed()
}

#[test]
fn hostile_otlp_receiver_that_hangs_then_a_healthy_one_at_its_address_gets_the_data() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let mut hostile = Hostile::start(hang, Arc::default());
    let url = format!("http://{}", hostile.addr);
    let (s, addr) = start(&[
        "-c",
        "200",
        "--otlp-endpoint",
        &url,
        "--otlp-timeout",
        "500ms",
    ]);
    let pid = s.child.id();
    let before = rss_kib(pid);
    let peak = RssPeak::start(pid);
    let (during, text) = watch(addr, Duration::from_secs(4), "while the receiver hangs");
    assert!(hostile.accepted.load(Ordering::SeqCst) >= 1);
    assert_eq!(counter(&text, "dcgm_exporter_otlp_exported_total"), 0.0);
    // The hung receiver stops listening but holds its connections; a healthy one takes the
    // address over.
    hostile.stop_listening();
    let (got, _rt) = healthy(hostile.addr);
    let took = recovered(&got, &s);
    let (after, _) = watch(
        addr,
        Duration::from_secs(2),
        "after the healthy receiver came",
    );
    let text = metrics_now(addr);
    let rss = (before, peak.peak(), rss_kib(pid));
    let (retries, reconnects) = (
        counter(&text, "dcgm_exporter_otlp_retries_total"),
        counter(&text, "dcgm_exporter_otlp_reconnects_total"),
    );
    row(
        "OTLP/gRPC receiver accepts and hangs, then a healthy one",
        &during,
        &after,
        rss,
        &format!(
            "healthy receiver's first request {:.1} s after it listened; {} connections to the \
             hung one, {retries} retries, {reconnects} fresh connections",
            took.as_secs_f64(),
            hostile.accepted.load(Ordering::SeqCst)
        ),
    );
    assert!(counter(&text, "dcgm_exporter_otlp_exported_total") >= 1.0);
    assert!(reconnects >= 1.0, "{text}");
    assert_eq!(counter(&text, "dcgm_exporter_otlp_rejected_total"), 0.0);
    // Each timed-out send left its connection: the hung receiver got more than one.
    assert!(hostile.accepted.load(Ordering::SeqCst) >= 2);
    assert!(rss.2 <= rss.0 + 16 * 1024, "{rss:?}");
    s.wait_log(&["OTLP", "works again"], Duration::from_secs(5));
}

#[test]
fn hostile_otlp_receiver_sending_http2_protocol_errors_is_retried_not_refused() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let resets = Arc::new(AtomicUsize::new(0));
    let mut hostile = Hostile::start(reset_streams, resets.clone());
    let url = format!("http://{}", hostile.addr);
    let (s, addr) = start(&[
        "-c",
        "200",
        "--otlp-endpoint",
        &url,
        "--otlp-timeout",
        "500ms",
    ]);
    let pid = s.child.id();
    let before = rss_kib(pid);
    let peak = RssPeak::start(pid);
    let (during, _) = watch(addr, Duration::from_secs(4), "while streams are reset");
    let text = metrics_now(addr);
    assert!(resets.load(Ordering::SeqCst) >= 2, "{}", s.log_text());
    assert_eq!(
        counter(&text, "dcgm_exporter_otlp_rejected_total"),
        0.0,
        "a protocol error counted as a refusal:\n{}",
        s.log_text()
    );
    assert!(counter(&text, "dcgm_exporter_otlp_retries_total") >= 2.0);
    assert!(counter(&text, "dcgm_exporter_otlp_reconnects_total") >= 1.0);
    s.wait_log(&["OTLP", "failed", "retrying"], Duration::from_secs(1));
    let failed = s.lines_with(&["OTLP", "failed", "retrying"]);
    hostile.stop_listening();
    let (got, _rt) = healthy(hostile.addr);
    let took = recovered(&got, &s);
    let (after, _) = watch(
        addr,
        Duration::from_secs(2),
        "after the healthy receiver came",
    );
    let rss = (before, peak.peak(), rss_kib(pid));
    row(
        "OTLP/gRPC receiver resets every stream with PROTOCOL_ERROR",
        &during,
        &after,
        rss,
        &format!(
            "{} streams reset, 0 refused; healthy receiver's first request {:.1} s after it \
             listened",
            resets.load(Ordering::SeqCst),
            took.as_secs_f64()
        ),
    );
    println!("  logged: {}", failed[0]);
    assert!(rss.2 <= rss.0 + 16 * 1024, "{rss:?}");
}

#[test]
fn hostile_otlp_queue_is_bounded_in_bytes() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let hostile = Hostile::start(hang, Arc::default());
    let url = format!("http://{}", hostile.addr);
    let cap: f64 = (256 << 10) as f64;
    // Requests pile up: a push waits 5 s on the hung receiver, a collection comes every
    // 100 ms, and --otlp-queue-size lets 1,000 wait.
    let (s, addr) = start(&[
        "-c",
        "100",
        "--otlp-endpoint",
        &url,
        "--otlp-timeout",
        "5s",
        "--otlp-queue-size",
        "1000",
        "--otlp-queue-bytes",
        "256KiB",
    ]);
    let pid = s.child.id();
    let before = rss_kib(pid);
    let peak = RssPeak::start(pid);
    let mut most = 0.0f64;
    let t0 = Instant::now();
    let mut during = Vec::new();
    while t0.elapsed() < Duration::from_secs(6) {
        let (times, text) = watch(addr, Duration::from_millis(400), "while the queue fills");
        during.extend(times);
        most = most.max(counter(&text, "dcgm_exporter_otlp_queue_bytes"));
    }
    let text = metrics_now(addr);
    let (requests, bytes, dropped) = (
        counter(&text, "dcgm_exporter_otlp_queue_requests"),
        counter(&text, "dcgm_exporter_otlp_queue_bytes"),
        counter(&text, "dcgm_exporter_otlp_dropped_total"),
    );
    let (after, _) = watch(addr, Duration::from_secs(1), "after");
    let rss = (before, peak.peak(), rss_kib(pid));
    let per_request = bytes / requests.max(1.0);
    row(
        "OTLP queue against a hung receiver, --otlp-queue-bytes 256KiB",
        &during,
        &after,
        rss,
        &format!(
            "queue held at most {:.0} KiB ({requests} requests of {:.0} KiB now), {dropped} \
             dropped; by requests alone it could hold 1,000 ({:.0} MiB)",
            most / 1024.0,
            per_request / 1024.0,
            per_request * 1000.0 / (1 << 20) as f64
        ),
    );
    assert!(most <= cap, "the queue held {most} bytes, more than {cap}");
    assert!(dropped >= 1.0, "{text}");
    assert!(requests < 1000.0);
    assert!(rss.2 <= rss.0 + 16 * 1024, "{rss:?}");
    drop(hostile);
    // A size out of range is a configuration error.
    let o = support::process::run_bounded(
        exporter(
            "hostile-otlp",
            &[
                "--simulate",
                "--once",
                "--otlp-endpoint",
                "http://127.0.0.1:9",
                "--otlp-queue-bytes",
                "1KiB",
            ],
        ),
        Duration::from_secs(30),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--otlp-queue-bytes"));
}
