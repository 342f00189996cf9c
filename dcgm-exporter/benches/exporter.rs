//! The exporter: rendering 8 GPUs plus 3 MIG instances, and 1,024 entities, × 40 fields; a
//! full collection (read + render) from the simulator; the same with the OTLP request, and the
//! exporter process's CPU per collection with OTLP off and on at 8 GPUs and at 1,025
//! entities (ratios printed); `/metrics` scrape latency at both sizes,
//! requests per second with 2 and 64 keep-alive clients, and the process's resident set over
//! 10,000 scrapes, on loopback through the exporter's own HTTP server. Under `cargo test` (no
//! `--bench` argument) everything runs once, briefly.
//!
//! `cargo bench --bench exporter`

use dcgm_exporter::http::server;
use dcgm_exporter::otlp::convert as otlp_convert;

use std::hint::black_box;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::Criterion;
use dcgm::{Entity, EntityGroup, FieldId, FieldValue, Value};
use dcgm_prometheus::{
    Collector, CollectorConfig, Counter, EntityIdentity, LabelOptions, MigInstance, Renderer,
    parse_counters,
};
use dcgm_reader::{Connection, Snapshot};

const COUNTERS: &str = include_str!("../etc/default-counters.csv");

fn counters_40() -> Vec<Counter> {
    let all = parse_counters(COUNTERS).expect("shipped counters parse");
    let mut fields: Vec<Counter> = all
        .iter()
        .filter(|c| !c.is_label() && c.field_id().is_some())
        .cloned()
        .collect();
    fields.truncate(40);
    fields.extend(all.into_iter().filter(|c| c.is_label()));
    fields
}

fn identities() -> Vec<EntityIdentity> {
    let mut ids: Vec<EntityIdentity> = (0..8)
        .map(|g| {
            EntityIdentity::gpu(
                g,
                &format!("GPU-0000000{g}-1111-2222-3333-444444444444"),
                &format!("00000000:{:02X}:00.0", 0x18 + g),
                "NVIDIA H100 80GB HBM3",
            )
        })
        .collect();
    for (i, (profile, slices)) in [("3g.40gb", 3), ("2g.20gb", 2), ("1g.10gb", 1)]
        .into_iter()
        .enumerate()
    {
        let mut id = ids[7].clone();
        id.entity = Entity::new(EntityGroup::GpuInstance, i as u32);
        id.mig = Some(MigInstance {
            instance_id: Some(i as u32 + 1),
            profile: profile.into(),
            slices: Some(slices),
            uuid: None,
        });
        ids.push(id);
    }
    ids
}

fn snapshot(counters: &[Counter], ids: &[EntityIdentity]) -> Snapshot {
    let mut snap = Snapshot::new();
    for id in ids {
        let m = snap.entry(id.entity).or_default();
        for (n, c) in counters.iter().enumerate() {
            let Some(f) = c.field_id() else { continue };
            let value = if c.is_label() {
                Value::String("570.133.20".into())
            } else if n % 3 == 0 {
                Value::Double(n as f64 * 1.5)
            } else {
                Value::Int(n as i64 * 1000)
            };
            m.insert(
                f,
                FieldValue {
                    entity: id.entity,
                    field: FieldId(f.0),
                    timestamp_us: 1_700_000_000_000_000,
                    value,
                    status: dcgm::ReturnCode::Ok,
                },
            );
        }
    }
    snap
}

/// Starts the exporter's server on loopback with `text` published; returns its address.
fn serve(text: String) -> std::net::SocketAddr {
    let listener = server::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let published = Arc::new(Mutex::new(server::Published {
        text,
        error: None,
        ready: true,
        version: 1,
        ..server::Published::default()
    }));
    let web = Arc::new(server::WebConfig::none());
    // Every client comes from 127.0.0.1: lift the per-address limit (64) that would otherwise
    // count the latency client's connection with the 64 throughput clients.
    let limits = server::Limits {
        max_per_client: 1024,
        ..server::Limits::default()
    };
    std::thread::spawn(move || server::serve_with(listener, web, published, limits));
    addr
}

/// A keep-alive client: one `/metrics` exchange per call.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    body: Vec<u8>,
}

impl Client {
    fn new(addr: std::net::SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).expect("connect loopback");
        stream.set_nodelay(true).ok();
        Self {
            reader: BufReader::new(stream.try_clone().expect("clone")),
            writer: stream,
            body: Vec::new(),
        }
    }

    fn scrape(&mut self) -> usize {
        self.writer
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: bench\r\n\r\n")
            .expect("write");
        let mut len = 0usize;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("read head");
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().expect("length");
            }
        }
        self.body.resize(len, 0);
        self.reader.read_exact(&mut self.body).expect("read body");
        len
    }
}

/// Requests per second of `clients` keep-alive clients scraping as fast as they can.
fn http_rps(addr: std::net::SocketAddr, clients: usize, duration: Duration) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..clients)
        .map(|_| {
            let (stop, count) = (stop.clone(), count.clone());
            std::thread::spawn(move || {
                let mut c = Client::new(addr);
                while !stop.load(Ordering::Relaxed) {
                    c.scrape();
                    count.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let start = Instant::now();
    std::thread::sleep(duration);
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().expect("client");
    }
    count.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
}

/// Median and 99th percentile of one scrape by a lone keep-alive client, over `n` scrapes.
fn scrape_latency(addr: std::net::SocketAddr, n: usize) -> (Duration, Duration) {
    let mut c = Client::new(addr);
    let mut t: Vec<Duration> = (0..n)
        .map(|_| {
            let t0 = Instant::now();
            black_box(c.scrape());
            t0.elapsed()
        })
        .collect();
    t.sort();
    (t[n / 2], t[(n * 99 / 100).min(n - 1)])
}

/// `n` synthetic entities: GPUs with 7 MIG instances on every eighth, up to `n` in all.
fn many_identities(n: usize) -> Vec<EntityIdentity> {
    let mut ids = Vec::with_capacity(n);
    let mut gpu = 0u32;
    let mut gi = 0u32;
    while ids.len() < n {
        let base = EntityIdentity::gpu(
            gpu,
            &format!("GPU-{gpu:08x}-1111-2222-3333-444444444444"),
            &format!("00000000:{:02X}:{:02X}.0", gpu / 32, gpu % 32),
            "NVIDIA H100 80GB HBM3",
        );
        if gpu % 8 == 7 {
            for i in 0..7 {
                if ids.len() == n {
                    break;
                }
                let mut id = base.clone();
                id.entity = Entity::new(EntityGroup::GpuInstance, gi);
                id.mig = Some(MigInstance {
                    instance_id: Some(i + 1),
                    profile: "1g.10gb".into(),
                    slices: Some(1),
                    uuid: None,
                });
                gi += 1;
                ids.push(id);
            }
        } else {
            ids.push(base);
        }
        gpu += 1;
    }
    ids
}

/// The process's resident set, KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// The bench receiver's codec: the request's bytes as they come, not decoded (decoding 10 MB
/// requests would load the 2-core machine whose CPU time the exporter is measured by), the
/// answer encoded with prost.
struct SinkCodec;

struct SinkDecoder;

struct SinkEncoder;

impl tonic::codec::Decoder for SinkDecoder {
    type Item = bytes::Bytes;
    type Error = tonic::Status;
    fn decode(
        &mut self,
        src: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<Self::Item>, Self::Error> {
        use bytes::Buf as _;
        let n = src.remaining();
        Ok(Some(src.copy_to_bytes(n)))
    }
}

impl tonic::codec::Encoder for SinkEncoder {
    type Item = opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceResponse;
    type Error = tonic::Status;
    fn encode(
        &mut self,
        item: Self::Item,
        dst: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), Self::Error> {
        use prost::Message as _;
        item.encode(dst)
            .map_err(|e| tonic::Status::internal(e.to_string()))
    }
}

impl tonic::codec::Codec for SinkCodec {
    type Encode = <SinkEncoder as tonic::codec::Encoder>::Item;
    type Decode = bytes::Bytes;
    type Encoder = SinkEncoder;
    type Decoder = SinkDecoder;
    fn encoder(&mut self) -> Self::Encoder {
        SinkEncoder
    }
    fn decoder(&mut self) -> Self::Decoder {
        SinkDecoder
    }
}

/// The export method: takes the request, answers an empty (full success) response.
#[derive(Clone)]
struct Export;

impl tower::Service<tonic::Request<bytes::Bytes>> for Export {
    type Response = tonic::Response<<SinkEncoder as tonic::codec::Encoder>::Item>;
    type Error = tonic::Status;
    type Future = std::future::Ready<Result<Self::Response, Self::Error>>;
    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn call(&mut self, _: tonic::Request<bytes::Bytes>) -> Self::Future {
        std::future::ready(Ok(tonic::Response::new(Default::default())))
    }
}

/// OTLP's `MetricsService`, every method answered by [`Export`].
#[derive(Clone)]
struct Sink;

impl tonic::server::NamedService for Sink {
    const NAME: &'static str = "opentelemetry.proto.collector.metrics.v1.MetricsService";
}

type HttpRequest = tonic::codegen::http::Request<tonic::body::Body>;
type HttpResponse = tonic::codegen::http::Response<tonic::body::Body>;

impl tower::Service<HttpRequest> for Sink {
    type Response = HttpResponse;
    type Error = std::convert::Infallible;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<HttpResponse, Self::Error>> + Send>,
    >;
    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn call(&mut self, req: HttpRequest) -> Self::Future {
        Box::pin(async move {
            // The 1,025-entity requests are larger than tonic's default 4 MiB.
            let mut grpc = tonic::server::Grpc::new(SinkCodec).max_decoding_message_size(256 << 20);
            Ok(grpc.unary(Export, req).await)
        })
    }
}

/// A gRPC OTLP receiver that takes every request, on a thread of its own; its address.
fn otlp_receiver() -> std::net::SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = l.local_addr().expect("local addr");
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            l.set_nonblocking(true).expect("nonblocking");
            let l = tokio::net::TcpListener::from_std(l).expect("tokio listener");
            tonic::transport::Server::builder()
                .add_service(Sink)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(l))
                .await
        })
    });
    addr
}

/// The CPU time of every thread of process `pid` so far, ns (`/proc/PID/task/*/schedstat`:
/// nanoseconds, where `/proc/PID/stat` counts 10 ms ticks).
fn process_cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// A run of the exporter binary over dcgm-sim.
struct ProcessCase<'a> {
    /// `DCGM_SIM_CONFIG` (`None`: the default node, 8 GPUs + 3 MIG instances).
    sim_config: Option<&'a std::path::Path>,
    /// Flags besides `--simulate -c INTERVAL -a 127.0.0.1:0`.
    flags: Vec<String>,
    interval_ms: u64,
    /// How long it is measured, after `warm_up`.
    secs: u64,
    warm_up: Duration,
}

/// Its CPU time per collection (ms, all threads, from `/proc/PID/task/*/schedstat`) and its
/// resident set at the end (KiB).
fn process_cost(case: &ProcessCase<'_>) -> (f64, u64) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_dcgm-exporter"));
    cmd.args(["--simulate", "-a", "127.0.0.1:0", "-c"])
        .arg(case.interval_ms.to_string())
        .args(&case.flags)
        .env("DCGM_SIM_LIB", dcgm::testing::simulator_path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    match case.sim_config {
        Some(p) => cmd.env("DCGM_SIM_CONFIG", p),
        None => cmd.env_remove("DCGM_SIM_CONFIG"),
    };
    let mut child = cmd.spawn().expect("start the exporter");
    // Let it start (DCGM, the watches, the first full OTLP encoding) before counting.
    std::thread::sleep(case.warm_up);
    let pid = child.id();
    let t0 = process_cpu_ns(pid);
    std::thread::sleep(Duration::from_secs(case.secs));
    let used = process_cpu_ns(pid) - t0;
    let rss = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let _ = child.kill();
    let _ = child.wait();
    let collections = (case.secs * 1000 / case.interval_ms) as f64;
    (used as f64 / 1e6 / collections, rss)
}

/// A dcgm-sim node whose 5 host engines each see 31 GPUs, 29 of them in MIG mode with 7
/// instances: 205 entities per engine, 1,025 in all (DCGM, and so the simulator, has at most
/// 32 GPUs per host engine, hence the engines). Returns the file and the `-r` flag's value.
fn node_1025() -> (std::path::PathBuf, String) {
    let engines = [
        "localhost",
        "127.0.0.1",
        "127.0.0.2",
        "127.0.0.3",
        "127.0.0.4",
    ];
    let mut toml = format!(
        "seed = 7\nnvswitches = 0\nhostengines = [{}]\n",
        engines
            .iter()
            .map(|e| format!("\"{e}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mig = [r#"{ profile = "1g.10gb", slices = 1, compute_instances = 1 }"#; 7].join(", ");
    for g in 0..31 {
        toml.push_str(
            "\n[[gpus]]\nmodel = \"NVIDIA H100 80GB HBM3\"\nmemory_mib = 81559\npower_limit_w = 700\n",
        );
        if g < 29 {
            toml.push_str(&format!("mig = [{mig}]\n"));
        }
    }
    let path =
        std::env::temp_dir().join(format!("dcgm-bench-node-1025-{}.toml", std::process::id()));
    std::fs::write(&path, toml).expect("write the node file");
    (path, engines.join(","))
}

/// Mean time of one call of `f` over `rounds` calls.
fn mean(rounds: usize, mut f: impl FnMut()) -> Duration {
    let t0 = Instant::now();
    for _ in 0..rounds {
        f();
    }
    t0.elapsed() / rounds as u32
}

fn main() {
    // `DCGM_BENCH_OTLP_RECEIVER=1`: only the receiver, its address on standard output, for
    // profiling an exporter run by hand against it (`perf record -p`).
    if std::env::var_os("DCGM_BENCH_OTLP_RECEIVER").is_some() {
        println!("{}", otlp_receiver());
        loop {
            std::thread::park();
        }
    }
    let full = std::env::args().any(|a| a == "--bench");
    let counters = counters_40();
    let ids = identities();
    let snap = snapshot(&counters, &ids);
    let mut renderer = Renderer::new(&counters, ids.clone(), LabelOptions::default());
    let mut out = String::new();
    renderer.render(&snap, &[], &mut out);
    let series = out.lines().filter(|l| !l.starts_with('#')).count();
    println!(
        "exporter: one exposition of 8 GPUs + 3 MIG instances is {} bytes, {series} series",
        out.len()
    );

    let mut c = Criterion::default().configure_from_args();
    if !full {
        c = c
            .sample_size(10)
            .measurement_time(Duration::from_millis(200))
            .warm_up_time(Duration::from_millis(50));
    }
    c.bench_function("exporter_render_8gpu_3mig_40fields", |b| {
        b.iter(|| {
            renderer.render(&snap, &[], &mut out);
            black_box(out.len());
        })
    });

    let mut cfg = CollectorConfig::new(counters.clone());
    cfg.library_path = Some(dcgm::testing::simulator_path());
    cfg.connection = Connection::Embedded;
    cfg.collect_interval = Duration::from_millis(100);
    let mut collector = Collector::new(cfg).expect("collector on the simulator");
    let mut text = String::new();
    c.bench_function("exporter_collect_from_simulator", |b| {
        b.iter(|| {
            collector.collect(&mut text).unwrap();
            black_box(text.len());
        })
    });
    // The same with OTLP on: the structured form in the same pass, the OTLP request built
    // from it and encoded (what the pusher thread does per collection, short of the network).
    let mut exp = dcgm_prometheus::Exposition::default();
    let mut conv = otlp_convert::Converter::new(Vec::new(), "bench".into());
    c.bench_function("exporter_collect_from_simulator_with_otlp", |b| {
        b.iter(|| {
            collector.collect_structured(&mut text, &mut exp).unwrap();
            black_box(
                conv.request_bytes(&[&exp], std::time::SystemTime::now())
                    .len(),
            );
        })
    });
    c.final_summary();
    // The same two, timed here for their ratio (interleaved, so that both see the same load).
    let rounds = if full { 2000 } else { 20 };
    let (mut off, mut structured, mut on) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    for _ in 0..4 {
        off += mean(rounds, || {
            collector.collect(&mut text).unwrap();
            black_box(text.len());
        });
        structured += mean(rounds, || {
            collector.collect_structured(&mut text, &mut exp).unwrap();
            black_box(exp.families.len());
        });
        on += mean(rounds, || {
            collector.collect_structured(&mut text, &mut exp).unwrap();
            black_box(
                conv.request_bytes(&[&exp], std::time::SystemTime::now())
                    .len(),
            );
        });
    }
    let us = |d: Duration| d.as_secs_f64() * 1e6 / 4.0;
    println!(
        "exporter: in-process collection of 8 GPUs + 3 MIG: OTLP off {:.1} µs, on {:.1} µs (on/off {:.2}, {:+.0} %), of which the structured form {:.1} µs; {} requests so far patched in place",
        us(off),
        us(on),
        on.as_secs_f64() / off.as_secs_f64(),
        (on.as_secs_f64() / off.as_secs_f64() - 1.0) * 100.0,
        us(structured) - us(off),
        conv.patched(),
    );

    let secs = if full { 3.0 } else { 0.3 };
    let small = serve(text.clone());
    let (p50, p99) = scrape_latency(small, if full { 2000 } else { 50 });
    println!(
        "exporter: /metrics scrape of 8 GPUs + 3 MIG instances ({} bytes): median {:.1} µs, p99 {:.1} µs",
        text.len(),
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6
    );
    for clients in [2, 64] {
        let rps = http_rps(small, clients, Duration::from_secs_f64(secs));
        println!(
            "exporter: {rps:.0} /metrics requests per second on loopback ({clients} keep-alive clients, {secs} s)"
        );
    }

    // 1,024 entities (GPUs, every eighth with 7 MIG instances), 40 fields each.
    let big_ids = many_identities(1024);
    let big_snap = snapshot(&counters, &big_ids);
    let mut big = Renderer::new(&counters, big_ids, LabelOptions::default());
    let mut big_text = String::new();
    let rounds = if full { 50 } else { 2 };
    let render = mean(rounds, || big.render(&big_snap, &[], &mut big_text));
    println!(
        "exporter: rendering 1,024 entities x 40 fields ({} series, {} bytes): {:.2} ms",
        big_text.lines().filter(|l| !l.starts_with('#')).count(),
        big_text.len(),
        render.as_secs_f64() * 1e3
    );
    let mut big_exp = dcgm_prometheus::Exposition::default();
    let mut big_conv = otlp_convert::Converter::new(Vec::new(), "bench".into());
    let mut bytes = 0;
    // The first request is encoded in full, the others patched in place (same series).
    let t0 = Instant::now();
    big.render_structured(&[&big_snap], &[], &mut big_text, &mut big_exp);
    let first = big_conv.request_bytes(&[&big_exp], std::time::SystemTime::now());
    let first_ms = t0.elapsed().as_secs_f64() * 1e3;
    drop(first);
    let structured = mean(rounds, || {
        big.render_structured(&[&big_snap], &[], &mut big_text, &mut big_exp)
    });
    let with_otlp = mean(rounds, || {
        big.render_structured(&[&big_snap], &[], &mut big_text, &mut big_exp);
        bytes = big_conv
            .request_bytes(&[&big_exp], std::time::SystemTime::now())
            .len();
    });
    println!(
        "exporter: the same with OTLP (structured form, request; {bytes} bytes of OTLP): {:.2} ms (on/off {:.2}, {:+.0} %), the structured form alone {:.2} ms ({:+.0} %); the first request (encoded in full) {first_ms:.2} ms; {} requests patched in place",
        with_otlp.as_secs_f64() * 1e3,
        with_otlp.as_secs_f64() / render.as_secs_f64(),
        (with_otlp.as_secs_f64() / render.as_secs_f64() - 1.0) * 100.0,
        structured.as_secs_f64() * 1e3,
        (structured.as_secs_f64() / render.as_secs_f64() - 1.0) * 100.0,
        big_conv.patched()
    );
    let large = serve(big_text);
    let (p50, p99) = scrape_latency(large, if full { 500 } else { 10 });
    println!(
        "exporter: /metrics scrape of 1,024 entities: median {:.2} ms, p99 {:.2} ms",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3
    );

    // The exporter process with OTLP off and on (pushing every collection to a receiver on
    // loopback, and every 1 s): CPU per collection and resident set, at 8 GPUs + 3 MIG and at
    // 1,025 entities; only under `--bench` (it takes 2 × 3 × 17 s + 2 × 2 × 25 s).
    if full {
        let rx = format!("http://{}", otlp_receiver());
        let small_case = |flags: &[&str]| ProcessCase {
            sim_config: None,
            flags: flags.iter().map(|f| f.to_string()).collect(),
            interval_ms: 100,
            secs: 15,
            warm_up: Duration::from_secs(2),
        };
        for round in 0..2 {
            let (off_ms, off_rss) = process_cost(&small_case(&[]));
            let (on_ms, on_rss) = process_cost(&small_case(&["--otlp-endpoint", &rx]));
            // A push every 10 collections: only the collection before each push builds the
            // structured form.
            let (tenth_ms, _) = process_cost(&small_case(&[
                "--otlp-endpoint",
                &rx,
                "--otlp-interval",
                "1s",
            ]));
            println!(
                "exporter: process, 8 GPUs + 3 MIG at -c 100 (run {}): OTLP off {off_ms:.3} ms CPU per collection, RSS {off_rss} KiB; OTLP on (a push per collection) {on_ms:.3} ms, RSS {on_rss} KiB; on/off {:.2} ({:+.0} %); pushing every 1 s {tenth_ms:.3} ms ({:+.0} %)",
                round + 1,
                on_ms / off_ms,
                (on_ms / off_ms - 1.0) * 100.0,
                (tenth_ms / off_ms - 1.0) * 100.0
            );
        }
        // 1,025 entities over 5 simulated host engines, default counters, a collection (and
        // a push) every second.
        let (node, engines) = node_1025();
        let big_case = |flags: &[&str]| {
            let mut all = vec!["-r".to_string(), engines.clone()];
            all.extend(flags.iter().map(|f| f.to_string()));
            ProcessCase {
                sim_config: Some(&node),
                flags: all,
                interval_ms: 1000,
                secs: 20,
                warm_up: Duration::from_secs(5),
            }
        };
        for round in 0..2 {
            let (off_ms, off_rss) = process_cost(&big_case(&[]));
            let (on_ms, on_rss) = process_cost(&big_case(&["--otlp-endpoint", &rx]));
            println!(
                "exporter: process, 1,025 entities (5 host engines x 205) at -c 1000 (run {}): OTLP off {off_ms:.2} ms CPU per collection, RSS {off_rss} KiB; OTLP on (a push per collection) {on_ms:.2} ms, RSS {on_rss} KiB; on/off {:.2} ({:+.0} %)",
                round + 1,
                on_ms / off_ms,
                (on_ms / off_ms - 1.0) * 100.0
            );
        }
        let _ = std::fs::remove_file(&node);
    }

    // Steady-state resident set: after 1,000 warm-up scrapes, then after 10,000 more.
    let scrapes = if full { 10_000 } else { 200 };
    let mut c = Client::new(small);
    for _ in 0..scrapes / 10 {
        c.scrape();
    }
    let warm = rss_kib();
    for _ in 0..scrapes {
        c.scrape();
    }
    println!(
        "exporter: RSS {warm} KiB after {} scrapes, {} KiB after {} more",
        scrapes / 10,
        rss_kib(),
        scrapes
    );
}
