//! Read costs on whatever libdcgm `DCGM_LIB_PATH` names (the real one on a GPU node or the
//! staged 4.6.0 beside the checkout), embedded or through an nv-hostengine (`DCGM_BENCH_HOST`):
//! the raw `dcgm-sys` latest read, the safe layer's group and entity reads, since-reads, and
//! `dcgm-reader`, 30 default fields on every GPU. One table row per read, median of rounds.
//! `scripts/bench-real.sh` runs it; without `DCGM_LIB_PATH` it reads the simulator and says so.
//!
//! `DCGM_LIB_PATH=... cargo bench --bench read_costs`

use std::ffi::{c_int, c_void};
use std::hint::black_box;
use std::time::{Duration, Instant};

use dcgm::raw::sys::*;
use dcgm::{FieldGroup, FieldId, Group, Handle, SinceCursor, WatchOptions};
use dcgm_reader::{Connection, DEFAULT_FIELD_IDS, Reader};

unsafe extern "C" fn count_cb(
    _group: u32,
    _entity: u32,
    _values: *mut dcgmFieldValue_v1,
    n: c_int,
    user: *mut c_void,
) -> c_int {
    // SAFETY: `user` is the counter passed by the read below.
    unsafe { *user.cast::<usize>() += n as usize };
    0
}

/// `DCGM_BENCH_LOG=1`: the crates' debug log on stderr (why a since-read took the slow path).
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target().starts_with("dcgm")
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!("{}: {}", r.level(), r.args());
        }
    }
    fn flush(&self) {}
}

/// Median time of one call, over `rounds` rounds of `per_round` calls.
fn time(rounds: usize, per_round: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut per_call: Vec<Duration> = (0..rounds)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..per_round {
                f();
            }
            t0.elapsed() / per_round as u32
        })
        .collect();
    per_call.sort();
    per_call[rounds / 2]
}

/// Median time of `f` called once per `interval`, as a poller at the watch's rate calls it
/// (the wait itself is not timed).
fn poll_median(polls: usize, interval: Duration, mut f: impl FnMut()) -> Duration {
    let mut t: Vec<Duration> = (0..polls)
        .map(|_| {
            std::thread::sleep(interval);
            let t0 = Instant::now();
            f();
            t0.elapsed()
        })
        .collect();
    t.sort();
    t[polls / 2]
}

fn main() {
    // `cargo test --benches` runs this once without `--bench`: a short run that only checks it
    // works.
    let quick = !std::env::args().any(|a| a == "--bench");
    if std::env::var_os("DCGM_BENCH_LOG").is_some() && log::set_logger(&StderrLog).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
    let (rounds, per_round) = if quick { (1, 3) } else { (5, 200) };
    let lib = std::env::var_os("DCGM_LIB_PATH")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(dcgm::testing::simulator_path);
    let host = std::env::var("DCGM_BENCH_HOST").ok();
    let b = Handle::builder().library_path(&lib);
    let handle = match &host {
        Some(a) => b.connect(a),
        None => b.embedded(),
    }
    .expect("open the library");
    let fields: Vec<FieldId> = DEFAULT_FIELD_IDS.iter().map(|f| FieldId(*f)).collect();
    let fg = FieldGroup::create(&handle, "bench-read-costs", &fields).unwrap();
    let gpus = Group::all_gpus(&handle);
    let ngpu = gpus.gpu_ids().unwrap().len();
    let interval = Duration::from_millis(100);
    // `DCGM_BENCH_OTHER_MS=N`: this handle (another client of a shared host engine) watches the
    // fields every N ms instead of at the reader's interval.
    let other = std::env::var("DCGM_BENCH_OTHER_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(interval, Duration::from_millis);
    let _w = gpus
        .watch(
            &fg,
            WatchOptions {
                update_interval: other,
                ..WatchOptions::default()
            },
        )
        .unwrap();
    handle.update_all_fields(true).unwrap();
    let mode = host
        .as_deref()
        .map_or("embedded".to_string(), |h| format!("nv-hostengine {h}"));
    let what = if handle.is_simulated() {
        "dcgm-sim"
    } else {
        "libdcgm"
    };
    println!(
        "# {what} {} ({}), {mode}, {ngpu} GPU(s) x {} fields, median of {rounds} x {per_round}",
        handle
            .system()
            .library_version()
            .ok()
            .and_then(|v| v.version)
            .unwrap_or_default(),
        lib.display(),
        fields.len()
    );
    let mut rows: Vec<(&str, Duration)> = Vec::new();
    let l = dcgm::raw::library(&handle);
    let raw_latest = l.dcgmGetLatestValues_v2().unwrap();
    rows.push((
        "raw dcgmGetLatestValues_v2",
        time(rounds, per_round, || {
            let mut n = 0usize;
            // SAFETY: live handle, group and field group; the callback matches its type and
            // `n` outlives the call.
            let rc = unsafe {
                raw_latest(
                    dcgm::raw::handle(&handle),
                    dcgm::raw::group_id(&gpus),
                    dcgm::raw::field_group_id(&fg),
                    Some(count_cb),
                    (&mut n as *mut usize).cast(),
                )
            };
            black_box((rc, n));
        }),
    ));
    let mut out = Vec::new();
    rows.push((
        "safe Group::latest_values_into",
        time(rounds, per_round, || {
            gpus.latest_values_into(&fg, &mut out).unwrap();
            black_box(out.len());
        }),
    ));
    let entities: Vec<dcgm::Entity> = gpus.entities().unwrap();
    let sys = handle.system();
    rows.push((
        "safe System::entities_latest_values_into",
        time(rounds, per_round, || {
            sys.entities_latest_values_into(&entities, &fields, &mut out)
                .unwrap();
            black_box(out.len());
        }),
    ));
    // Since-reads polled at the watch's interval: what a collector pays per poll.
    let polls = if quick { 1 } else { 21 };
    let mut cursor = SinceCursor::default();
    gpus.values_since(&fg, &mut cursor).unwrap();
    rows.push((
        "safe Group::values_since (every 100 ms)",
        poll_median(polls, interval, || {
            black_box(gpus.values_since(&fg, &mut cursor).unwrap().len());
        }),
    ));
    let mut reader = Reader::builder()
        .library_path(&lib)
        .connection(match &host {
            Some(a) => Connection::Remote(a.clone()),
            None => Connection::Embedded,
        })
        .update_frequency(interval)
        .build()
        .unwrap();
    let mut snap = dcgm_reader::Snapshot::new();
    reader.latest_into(&mut snap).unwrap();
    rows.push((
        "reader Reader::latest_into",
        time(rounds, per_round, || {
            reader.latest_into(&mut snap).unwrap();
            black_box(snap.len());
        }),
    ));
    // A poller at the watch's rate pays a colder read than back-to-back calls do: the
    // latest read at the same rate is the fair yardstick of the since-reads.
    rows.push((
        "reader Reader::latest_into (every 100 ms)",
        poll_median(polls, interval, || {
            reader.latest_into(&mut snap).unwrap();
            black_box(snap.len());
        }),
    ));
    reader.since_last_call().unwrap();
    let bg_before = reader.since_background_counts();
    rows.push((
        "reader Reader::since_last_call (every 100 ms)",
        poll_median(polls, interval, || {
            black_box(reader.since_last_call().unwrap().len());
        }),
    ));
    let (fast, slow) = reader.since_path_counts();
    // The background latest reads (a host engine sampling faster than the polls) run beside
    // the caller's polls: their time per poll counts too.
    let bg_after = reader.since_background_counts();
    let bg_reads = bg_after.0 - bg_before.0;
    let bg_per_poll = (bg_after.1 - bg_before.1) / u32::try_from(polls.max(1)).unwrap_or(1);
    rows.push((
        "reader since_last_call + its background reads",
        rows.last().map_or(Duration::ZERO, |r| r.1) + bg_per_poll,
    ));
    drop(reader);
    let mut per_field = Reader::builder()
        .library_path(&lib)
        .connection(match &host {
            Some(a) => Connection::Remote(a.clone()),
            None => Connection::Embedded,
        })
        .update_frequency(interval)
        .since_fast_path(false)
        .build()
        .unwrap();
    per_field.since_last_call().unwrap();
    rows.push((
        "reader since_last_call, fast path off",
        poll_median(polls, interval, || {
            black_box(per_field.since_last_call().unwrap().len());
        }),
    ));
    let base = rows[0].1.as_secs_f64();
    for (name, d) in &rows {
        println!(
            "{name:<48} {:>10.1} µs  {:>5.2}x raw latest",
            d.as_secs_f64() * 1e6,
            d.as_secs_f64() / base
        );
    }
    let at = |name: &str| rows.iter().find(|r| r.0 == name).map(|r| r.1.as_secs_f64());
    if let (Some(l), Some(s), Some(p)) = (
        at("reader Reader::latest_into (every 100 ms)"),
        at("reader Reader::since_last_call (every 100 ms)"),
        at("reader since_last_call, fast path off"),
    ) {
        println!(
            "since-last-call / latest, both every 100 ms: {:.2}x ({fast} polls by one latest \
             read, {slow} by the since-read); with its {bg_reads} background reads: {:.2}x; \
             fast path off: {:.2}x",
            s / l,
            at("reader since_last_call + its background reads").unwrap_or(s) / l,
            p / l
        );
    }
}
