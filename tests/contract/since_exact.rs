//! The since-last-call fast path is exact: over thousands of polls at jittered intervals, in
//! AUTO and MANUAL operation modes, what `Reader::since_last_call` delivers per (entity, field)
//! is exactly the library's own record of samples (the per-field path,
//! `dcgmGetValuesSince_v2` from time 0), with nothing lost, repeated or altered; and both the
//! fast and the slow path were taken.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dcgm::{Entity, FieldGroup, FieldId, Group, OperationMode, SinceCursor, Value};
use dcgm_reader::{Connection, DEFAULT_FIELD_IDS, Reader};

use crate::target::Target;
use crate::{Case, case};

pub fn cases() -> Vec<Case> {
    vec![
        case("since_fast_path_is_exact_in_auto_mode", auto_mode),
        case("since_fast_path_is_exact_in_manual_mode", manual_mode),
    ]
}

/// The watch interval: short, so thousands of polls take seconds.
const INTERVAL: Duration = Duration::from_millis(10);

/// A small deterministic generator for the jitter (xorshift); the seed is printed on failure.
struct Jitter(u64);

impl Jitter {
    /// A duration uniformly in `[lo, hi]` times `INTERVAL`.
    fn between(&mut self, lo: f64, hi: f64) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let u = (self.0 >> 11) as f64 / (1u64 << 53) as f64;
        INTERVAL.mul_f64(lo + (hi - lo) * u)
    }
}

type Samples = BTreeMap<(Entity, FieldId), Vec<(i64, Value)>>;

fn reader(t: &Target, mode: OperationMode) -> Reader {
    Reader::builder()
        .library_path(&t.lib)
        .connection(Connection::Embedded)
        .operation_mode(mode)
        .fields(
            &DEFAULT_FIELD_IDS
                .iter()
                .map(|f| FieldId(*f))
                .collect::<Vec<_>>(),
        )
        .update_frequency(INTERVAL)
        // One GPU on both libraries (the real one replays a one-H200 capture).
        .gpu_ids(&[0])
        .max_keep_age(Duration::from_secs(3600))
        // Blanks are samples too: compare everything.
        .ignore_blank(false)
        .build()
        .unwrap()
}

fn poll(r: &mut Reader, got: &mut Samples) {
    for (e, fields) in r.since_last_call().unwrap() {
        for (f, samples) in fields {
            got.entry((e, f))
                .or_default()
                .extend(samples.into_iter().map(|s| (s.timestamp_us, s.value)));
        }
    }
}

/// Every sample the library holds for the reader's pairs, through the per-field path.
fn history(r: &mut Reader) -> Samples {
    let h = r.handle().unwrap();
    let fields: Vec<FieldId> = DEFAULT_FIELD_IDS.iter().map(|f| FieldId(*f)).collect();
    let fg = FieldGroup::create(h, "since-exact-history", &fields).unwrap();
    let gpus = Group::all_gpus(h);
    let mut all = Samples::new();
    for v in gpus.values_since(&fg, &mut SinceCursor(0)).unwrap() {
        all.entry((v.entity, v.field))
            .or_default()
            .push((v.timestamp_us, v.value));
    }
    for s in all.values_mut() {
        s.sort_by_key(|x| x.0);
    }
    all
}

/// `got` equals `want` per pair, for samples taken from `from` (the reader's start: earlier
/// time stamps are not DCGM's clock, such as NVML values the injection library replays with
/// the time of their capture, and a since-read leaves them out as DCGM's does) to `until`
/// (while the run went on).
fn compare(mode: &str, got: &Samples, want: &Samples, from: i64, until: i64) {
    let mut pairs = 0;
    let span = |s: &&(i64, Value)| s.0 >= from && s.0 <= until;
    for (key, want) in want {
        let want: Vec<_> = want.iter().filter(span).cloned().collect();
        let got: Vec<_> = got
            .get(key)
            .map(|g| g.iter().filter(span).cloned().collect())
            .unwrap_or_default();
        assert_eq!(
            got.len(),
            want.len(),
            "{mode}: {key:?}: {} samples delivered, the library holds {}",
            got.len(),
            want.len()
        );
        assert_eq!(got, want, "{mode}: {key:?}: samples differ");
        pairs += usize::from(!want.is_empty());
    }
    for key in got.keys() {
        assert!(
            want.contains_key(key),
            "{mode}: {key:?} delivered but not held"
        );
    }
    assert!(pairs > 0, "{mode}: nothing was sampled");
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64
}

fn auto_mode(t: &Target) {
    let from = now_us();
    let mut r = reader(t, OperationMode::Auto);
    let mut got = Samples::new();
    let mut jitter = Jitter(0x5eed_1234_abcd_0001);
    // Mostly at the interval, with jitter; sometimes late (two or three new samples) and
    // sometimes early (none).
    for i in 0..1500 {
        let d = if i % 10 == 9 {
            jitter.between(1.6, 3.2)
        } else {
            jitter.between(0.6, 1.4)
        };
        std::thread::sleep(d);
        poll(&mut r, &mut got);
    }
    // Anything sampled before this poll started is delivered by it, less 100 ms for samples
    // the library stores a little after their time stamp on a loaded machine (the reader
    // allows 250 ms).
    let until = now_us() - 100_000;
    poll(&mut r, &mut got);
    let want = history(&mut r);
    compare("AUTO", &got, &want, from, until);
    let (fast, slow) = r.since_path_counts();
    eprintln!("  AUTO: {fast} fast polls, {slow} slow polls");
    assert!(
        fast > 0 && slow > 1,
        "both paths taken: {fast} fast, {slow} slow"
    );
}

/// Set in the child process that runs the MANUAL-mode case.
pub const MANUAL_CHILD: &str = "DCGM_CONTRACT_SINCE_MANUAL";

/// The run keeps one AUTO-mode embedded engine for all its cases, and an engine keeps the
/// mode it started in: the MANUAL case runs in a child process of its own.
fn manual_mode(_t: &Target) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .env(MANUAL_CHILD, "1")
        .output()
        .expect("start the MANUAL-mode child");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the MANUAL-mode child failed");
}

/// The MANUAL-mode case, in a process whose embedded engine it starts.
pub fn manual_mode_alone(t: &Target) {
    let from = now_us();
    let mut r = reader(t, OperationMode::Manual);
    let mut got = Samples::new();
    poll(&mut r, &mut got);
    let h = r.handle().unwrap().clone();
    let mut jitter = Jitter(0x5eed_1234_abcd_0002);
    for i in 0..1200u32 {
        // Zero to three forced updates between polls, at jittered times: an update samples
        // only the fields that are due.
        for _ in 0..[1, 1, 1, 0, 2, 1, 3, 1][i as usize % 8] {
            std::thread::sleep(jitter.between(0.5, 1.5));
            h.update_all_fields(true).unwrap();
        }
        poll(&mut r, &mut got);
    }
    poll(&mut r, &mut got);
    // Nothing is sampled without a forced update: the record must match to the end.
    let want = history(&mut r);
    compare("MANUAL", &got, &want, from, i64::MAX);
    let (fast, slow) = r.since_path_counts();
    eprintln!("  MANUAL: {fast} fast polls, {slow} slow polls");
    assert!(
        fast > 0 && slow > 1,
        "both paths taken: {fast} fast, {slow} slow"
    );
}
