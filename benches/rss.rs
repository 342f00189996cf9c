//! Resident memory over a million latest-values reads (30 fields × 8 GPUs) through the safe
//! layer and the reader: it must stay flat. Prints the RSS before, after warm-up and at the
//! end. Under `cargo test` (no `--bench` argument) it does a short run of 10 000 reads.
//!
//! `cargo bench --bench rss`

use dcgm::{FieldGroup, FieldId, Group, Handle, OperationMode, WatchOptions};
use dcgm_reader::{Connection, DEFAULT_FIELD_IDS, Reader};

fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    pages * 4
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let reads: u64 = if full { 1_000_000 } else { 10_000 };
    let sim = dcgm::testing::simulator_path();
    let handle = Handle::builder()
        .library_path(&sim)
        .operation_mode(OperationMode::Manual)
        .embedded()
        .unwrap();
    let fields: Vec<FieldId> = DEFAULT_FIELD_IDS.iter().map(|f| FieldId(*f)).collect();
    let fg = FieldGroup::create(&handle, "rss", &fields).unwrap();
    let gpus = Group::all_gpus(&handle);
    let _w = gpus.watch(&fg, WatchOptions::default()).unwrap();
    handle.update_all_fields(true).unwrap();
    let mut buf = Vec::new();

    let start = rss_kib();
    let warm = reads / 100;
    for _ in 0..warm {
        gpus.latest_values_into(&fg, &mut buf).unwrap();
    }
    let after_warmup = rss_kib();
    let t = std::time::Instant::now();
    for _ in warm..reads {
        gpus.latest_values_into(&fg, &mut buf).unwrap();
    }
    let safe_time = t.elapsed();
    let after_safe = rss_kib();

    let mut reader = Reader::builder()
        .library_path(&sim)
        .connection(Connection::Embedded)
        .operation_mode(OperationMode::Manual)
        .build()
        .unwrap();
    reader.connect().unwrap();
    for _ in 0..warm {
        reader.latest().unwrap();
    }
    let reader_start = rss_kib();
    for _ in warm..reads / 10 {
        reader.latest().unwrap();
    }
    let reader_end = rss_kib();

    println!("rss: {reads} safe-layer reads of 30 fields x 8 GPUs in {safe_time:.2?}");
    println!(
        "rss: start {start} KiB, after warm-up {after_warmup} KiB, after reads {after_safe} KiB (growth {} KiB)",
        after_safe.saturating_sub(after_warmup)
    );
    println!(
        "rss: {} reader reads: {reader_start} KiB -> {reader_end} KiB (growth {} KiB)",
        reads / 10 - warm,
        reader_end.saturating_sub(reader_start)
    );
    let growth = after_safe.saturating_sub(after_warmup) + reader_end.saturating_sub(reader_start);
    if full && growth > 4096 {
        eprintln!("rss: memory grew by {growth} KiB over the run");
        std::process::exit(1);
    }
}
