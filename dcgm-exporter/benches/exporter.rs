//! The exporter: rendering 8 GPUs plus 3 MIG instances × 40 fields, a full collection (read +
//! render) from the simulator, and `/metrics` requests per second on loopback through the
//! exporter's own HTTP server. Under `cargo test` (no `--bench` argument) everything runs once,
//! briefly.
//!
//! `cargo bench --bench exporter`

use dcgm_exporter::server;

use std::hint::black_box;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::Criterion;
use dcgm::{Entity, EntityGroup, FieldId, FieldValue, Value};
use dcgm_reader::{
    Collector, CollectorConfig, Connection, Counter, EntityIdentity, LabelOptions, MigInstance,
    Renderer, Snapshot, parse_counters,
};

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
                    status: 0,
                },
            );
        }
    }
    snap
}

fn http_rps(text: String, duration: Duration) -> f64 {
    let listener = server::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let published = Arc::new(Mutex::new(server::Published {
        text,
        error: None,
        ready: true,
        version: 1,
    }));
    let web = Arc::new(server::WebConfig::none());
    std::thread::spawn(move || server::serve(listener, web, published));
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..2)
        .map(|_| {
            let (stop, count) = (stop.clone(), count.clone());
            std::thread::spawn(move || {
                let stream = TcpStream::connect(addr).expect("connect loopback");
                stream.set_nodelay(true).ok();
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut w = stream;
                let mut body = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    w.write_all(b"GET /metrics HTTP/1.1\r\nHost: bench\r\n\r\n")
                        .expect("write");
                    let mut len = 0usize;
                    loop {
                        let mut line = String::new();
                        reader.read_line(&mut line).expect("read head");
                        if line == "\r\n" || line.is_empty() {
                            break;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            len = v.trim().parse().expect("length");
                        }
                    }
                    body.resize(len, 0);
                    reader.read_exact(&mut body).expect("read body");
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

fn main() {
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
    c.final_summary();

    let secs = if full { 3.0 } else { 0.3 };
    let rps = http_rps(text, Duration::from_secs_f64(secs));
    println!(
        "exporter: {rps:.0} /metrics requests per second on loopback (2 keep-alive clients, {secs} s)"
    );
}
