//! The since-last-call fast path.
//!
//! `dcgmGetValuesSince_v2` costs one request per (entity, field) inside the library: about
//! twenty latest reads for the 30 default fields. Most polls do not need it. DCGM samples a
//! field at most once per its sampling interval (the fastest interval among all its watchers;
//! a forced update takes a sample only when one is due: measured on libdcgm 4.6.0, and the
//! simulator follows it). So when the newest sample `L` of a pair is less than 1.5 intervals
//! after the newest sample `P` already delivered, no sample can lie between them: two more
//! would be at least two intervals apart. The one new sample is then exactly what a latest
//! read returns, and a poll where every pair is in that case (or has nothing new) is answered
//! from one latest read.
//!
//! Any other pair (first sight, a gap of 1.5 intervals or more, an unknown interval, a field
//! whose samples come several at a time, such as process lists) makes the whole poll take the
//! library's since-read, filtered per pair to what is newer than its delivered sample, so the
//! two paths never repeat or lose a sample between them.
//!
//! The sampling interval comes from the host engine's field cache
//! ([`dcgm::Handle::field_cache_info`]), per pair, when a pair is first seen and again every
//! [`crate::ReaderBuilder::since_recheck`]. Trade-off: if another client starts watching one of
//! these fields faster than the cache reported, polls until the next check can miss the extra
//! samples; a since-read that sees samples closer together than the known interval lowers it
//! at once. Turn the fast path off with [`crate::ReaderBuilder::since_fast_path`] to pay the
//! full per-pair cost on every poll instead.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use dcgm::{
    Entity, EntityGroup, FieldId, FieldType, FieldValue, Handle, Result, SampleBuffer, SinceCursor,
};

/// A pair is answered by the latest read when its new sample is less than this many
/// intervals after the delivered one (1.5: two further samples are at least two apart).
const GAP_NUM: i64 = 3;
const GAP_DEN: i64 = 2;

/// What the fast path knows per (entity, field).
#[derive(Debug, Default)]
pub(crate) struct SinceTracker {
    /// Newest sample delivered, µs.
    newest: HashMap<(Entity, FieldId), i64>,
    /// Time stamps delivered within the margin behind the newest, with how many samples at
    /// each: a sample the library stores after a newer one of the same pair (seen with fields
    /// it stores several times per update) is still delivered, once.
    recent: HashMap<(Entity, FieldId), Vec<(i64, u32)>>,
    /// Sampling interval, µs, as the cache reported it (or lower, from observed samples).
    interval: HashMap<(Entity, FieldId), i64>,
    /// The shortest interval the cache reported at the last check, µs (0: none).
    reported_min: i64,
    checked_at: Option<Instant>,
    /// The newest time stamp seen so far (the library's clock); 0 before the first poll.
    horizon: i64,
    /// How far behind `horizon` a sample may still arrive: the reader's longest watch
    /// interval, and at least [`MIN_MARGIN`]. A sample is stored by the library a little after its time stamp; one taken
    /// just before a read but stored just after it must still be delivered by the next poll.
    margin_us: i64,
    /// Polls answered by one latest read.
    pub(crate) fast_polls: u64,
    /// Polls that took the library's since-read.
    pub(crate) slow_polls: u64,
}

/// The least margin: on a loaded machine the library can store a sample tens of
/// milliseconds after its time stamp.
const MIN_MARGIN: Duration = Duration::from_millis(250);

/// How one latest read answers a poll.
pub(crate) enum Plan {
    /// The poll is answered from the latest read: `fresh` (indices into it) are new samples,
    /// one per pair; the pairs at `per_pair` (GPU fields only) may have several new samples
    /// and take one request each for the span since their delivered sample.
    Fast {
        fresh: Vec<usize>,
        per_pair: Vec<usize>,
    },
    /// Take the since-read.
    Slow,
    /// Take the since-read: more than a quarter of the pairs may have several new samples
    /// (see [`crate::since_background`]).
    Crowded,
}

/// At most this share of the pairs (1/4) take a request of their own before the whole
/// since-read is cheaper.
const PER_PAIR_DEN: usize = 4;

fn several_per_time(f: FieldId) -> bool {
    // Binary fields (process lists, ...) store several samples under one time stamp: a
    // latest read shows one of them.
    f.field_type().is_none_or(|t| t == FieldType::Binary)
}

impl SinceTracker {
    /// A tracker for watches whose longest update interval is `longest`.
    pub(crate) fn new(longest: Duration) -> Self {
        Self {
            margin_us: i64::try_from(longest.max(MIN_MARGIN).as_micros()).unwrap_or(i64::MAX),
            ..Self::default()
        }
    }

    /// Whether the sampling intervals must be read again before the next fast poll.
    pub(crate) fn stale(&self, recheck: Duration) -> bool {
        self.checked_at.is_none_or(|t| t.elapsed() >= recheck)
    }

    /// Samples older than this are not "since the last call": they were taken before the
    /// previous poll (less the margin). This is the library's own rule (a since-read returns
    /// samples at or after its cursor), and it leaves out samples whose time stamp was not
    /// set by DCGM's clock, such as NVML values replayed with the time of their capture.
    pub(crate) fn floor(&self) -> i64 {
        if self.horizon == 0 {
            0
        } else {
            self.horizon.saturating_sub(self.margin_us)
        }
    }

    /// The cursor of the slow path's since-read.
    pub(crate) fn cursor(&self) -> SinceCursor {
        SinceCursor(self.floor())
    }

    /// After a poll: its newest time stamp moves the horizon on.
    pub(crate) fn seen(&mut self, values: &[FieldValue]) {
        if let Some(t) = values.iter().map(|v| v.timestamp_us).max() {
            self.horizon = self.horizon.max(t);
        }
    }

    /// Decides from one latest read how the poll is answered.
    pub(crate) fn plan(&self, latest: &[FieldValue]) -> Plan {
        let floor = self.floor();
        let mut fresh = Vec::new();
        let mut per_pair = Vec::new();
        for (i, v) in latest.iter().enumerate() {
            if v.timestamp_us <= 0 || v.timestamp_us < floor {
                // No sample yet, or nothing at or after the floor: nothing to deliver. A
                // first sample will be unknown to `newest` and send its poll down the slow
                // path.
                continue;
            }
            let key = (v.entity, v.field);
            let Some(&p) = self.newest.get(&key) else {
                log::debug!("since: {key:?} has its first sample: the since-read answers");
                return Plan::Slow;
            };
            if v.timestamp_us <= p {
                continue;
            }
            match self.interval.get(&key) {
                Some(&iv)
                    if (v.timestamp_us - p) * GAP_DEN < iv * GAP_NUM
                        && !several_per_time(v.field) =>
                {
                    fresh.push(i);
                }
                _ if v.entity.group == EntityGroup::Gpu => per_pair.push(i),
                _ => {
                    log::debug!(
                        "since: {key:?} may have several new samples: the since-read answers"
                    );
                    return Plan::Slow;
                }
            }
        }
        if per_pair.len() * PER_PAIR_DEN > latest.len() {
            log::debug!(
                "since: {} of {} pairs may have several new samples: the since-read answers",
                per_pair.len(),
                latest.len()
            );
            return Plan::Crowded;
        }
        Plan::Fast { fresh, per_pair }
    }

    /// The interval the background reads keep: the shortest sampling interval the cache
    /// last reported, or the pairs' median interval as observed since, if shorter (an engine
    /// can keep sampling at the rate of a client that has gone, while reporting the rate of
    /// those left). Not the shortest observed one: a field stored several times per update
    /// shows gaps of microseconds.
    pub(crate) fn fastest_interval(&self) -> Option<Duration> {
        let mut seen: Vec<i64> = self.interval.values().copied().collect();
        seen.sort_unstable();
        let median = seen.get(seen.len() / 2).copied().unwrap_or(0);
        [self.reported_min, median]
            .into_iter()
            .filter(|&us| us > 0)
            .min()
            .and_then(|us| u64::try_from(us).ok())
            .map(Duration::from_micros)
    }

    /// The newest sample delivered for a pair, if any.
    pub(crate) fn newest(&self, v: &FieldValue) -> Option<i64> {
        self.newest.get(&(v.entity, v.field)).copied()
    }

    /// Whether a pair's per-pair request can wait for a later read: its newest delivered
    /// sample is less than half the margin behind `v`, so the span still lies above the
    /// floor of the next poll.
    pub(crate) fn can_wait(&self, v: &FieldValue) -> bool {
        self.newest(v)
            .is_some_and(|p| v.timestamp_us.saturating_sub(p) < self.margin_us / 2)
    }

    /// Where a pair's look-back starts: samples older than this were settled by earlier
    /// polls.
    pub(crate) fn lookback(&self, v: &FieldValue) -> i64 {
        self.newest(v).map_or(self.floor(), |p| {
            p.saturating_sub(self.margin_us).max(self.floor())
        })
    }

    /// The samples of `vals` that no poll delivered yet, in time order, recorded as delivered:
    /// at or after the floor, and newer than the pair's newest delivered sample or, within
    /// the margin behind it, not delivered before (counting samples that share a time stamp).
    pub(crate) fn take_new(&mut self, vals: &[FieldValue]) -> Vec<FieldValue> {
        let mut order: Vec<&FieldValue> = vals.iter().collect();
        order.sort_by_key(|v| v.timestamp_us);
        let floor = self.floor();
        let mut seen_here: HashMap<((Entity, FieldId), i64), u32> = HashMap::new();
        let mut out = Vec::new();
        for v in order {
            let key = (v.entity, v.field);
            let ts = v.timestamp_us;
            if ts < floor {
                continue;
            }
            let k = seen_here.entry((key, ts)).or_insert(0);
            *k += 1;
            let nth = *k;
            let fresh = match self.newest.get(&key) {
                None => true,
                Some(&p) if ts > p => true,
                Some(&p) if ts < p.saturating_sub(self.margin_us) => false,
                Some(_) => {
                    let before = self
                        .recent
                        .get(&key)
                        .and_then(|r| r.iter().find(|(t, _)| *t == ts).map(|(_, n)| *n));
                    nth > before.unwrap_or(0)
                }
            };
            if fresh {
                self.delivered(v);
                out.push(v.clone());
            }
        }
        out
    }

    /// Records a delivered sample.
    pub(crate) fn delivered(&mut self, v: &FieldValue) {
        let key = (v.entity, v.field);
        let slot = self.newest.entry(key).or_insert(i64::MIN);
        if v.timestamp_us > *slot {
            // Two samples closer than the known interval: someone samples faster.
            if *slot > 0 {
                let gap = v.timestamp_us - *slot;
                if let Some(iv) = self.interval.get_mut(&key).filter(|iv| gap * 4 < **iv * 3) {
                    *iv = gap;
                }
            }
            *slot = v.timestamp_us;
        }
        let settled = slot.saturating_sub(self.margin_us);
        let recent = self.recent.entry(key).or_default();
        match recent.iter_mut().find(|(t, _)| *t == v.timestamp_us) {
            Some((_, n)) => *n += 1,
            None => recent.push((v.timestamp_us, 1)),
        }
        recent.retain(|(t, _)| *t >= settled);
    }

    /// Reads the sampling interval of every pair of `latest` from the field cache.
    pub(crate) fn check_intervals(&mut self, handle: &Handle, latest: &[FieldValue]) {
        self.interval.clear();
        self.reported_min = 0;
        for v in latest {
            let key = (v.entity, v.field);
            if self.interval.contains_key(&key) {
                continue;
            }
            // A pair whose interval cannot be read keeps taking the slow path.
            if let Ok(Some(iv)) = handle
                .field_cache_info(v.entity, v.field)
                .map(|i| i.sample_interval)
            {
                let us = i64::try_from(iv.as_micros()).unwrap_or(i64::MAX);
                if us > 0 {
                    self.interval.insert(key, us);
                    if self.reported_min == 0 || us < self.reported_min {
                        self.reported_min = us;
                    }
                }
            }
        }
        self.checked_at = Some(Instant::now());
    }
}

/// Most samples one per-pair request of the since fast path returns. Small: the library fills
/// (and copies) every record of the buffer, at 4 KiB a record.
pub(crate) const PER_PAIR_MAX: usize = 64;

/// The samples of the pairs that may have several new ones: one request per pair for the span
/// from its look-back (the margin behind its delivered sample) up to the latest read's; the
/// caller keeps those not delivered yet. `None` when a span holds more samples than one
/// request returns (the since-read then answers the poll).
pub(crate) fn per_pair_samples(
    handle: &Handle,
    since: &SinceTracker,
    latest: &[FieldValue],
    per_pair: &[usize],
    buffer: &mut SampleBuffer,
) -> Result<Option<Vec<FieldValue>>> {
    let mut out = Vec::new();
    let mut samples = Vec::new();
    for &i in per_pair {
        let v = &latest[i];
        let from = since.lookback(v);
        samples.clear();
        // One past the latest sample: whether the library's end is inclusive or not.
        if handle
            .field_samples_into(
                v.entity.id,
                v.field,
                from.max(1),
                v.timestamp_us.saturating_add(1),
                buffer,
                &mut samples,
            )?
            .is_none()
        {
            return Ok(None);
        }
        samples.retain(|s| s.timestamp_us >= from && s.timestamp_us <= v.timestamp_us);
        samples.sort_by_key(|s| s.timestamp_us);
        if samples
            .last()
            .is_none_or(|s| s.timestamp_us < v.timestamp_us)
        {
            samples.push(v.clone());
        }
        out.append(&mut samples);
    }
    Ok(Some(out))
}
