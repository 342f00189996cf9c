//! The field cache: watched (entity, field) pairs and the samples kept for each, updated on the
//! watch's schedule (AUTO mode) or when the client asks (`dcgmUpdateAllFields`).

use std::collections::{HashMap, VecDeque};

use crate::sim_value::SimValue;

/// Key of a cache entry: entity group, entity id, field id. A global field (`DCGM_FS_GLOBAL`)
/// has one entry whatever entity it is asked for, as libdcgm keeps it under `DCGM_FE_NONE`: a
/// value injected for the node reads back on every GPU and MIG instance.
pub fn key(group: u32, id: u32, field: u16) -> u64 {
    let global = dcgm_sys::field_by_id(field).is_some_and(|f| f.scope == dcgm_sys::DCGM_FS_GLOBAL);
    let (group, id) = if global {
        (dcgm_sys::DCGM_FE_NONE, 0)
    } else {
        (group, id)
    };
    (u64::from(group) << 56) | (u64::from(field) << 32) | u64::from(id)
}

/// Splits a key into (group, id, field).
pub fn unkey(k: u64) -> (u32, u32, u16) {
    ((k >> 56) as u32, k as u32, (k >> 32) as u16)
}

/// One cached sample.
#[derive(Debug, Clone)]
pub struct Sample {
    pub ts: i64,
    /// The time of the update this sample belongs to: `ts` less the microseconds it moved to
    /// stay unique (see `Watch::push`).
    pub update: i64,
    pub value: SimValue,
}

/// Most samples generated in one catch-up; older ticks are skipped (they would be trimmed).
const MAX_CATCH_UP: i64 = 10_000;

/// A watched (entity, field).
#[derive(Debug, Clone)]
pub struct Watch {
    pub freq_us: i64,
    pub max_age_us: i64,
    /// 0 = no limit.
    pub max_samples: usize,
    pub next_due: i64,
    pub samples: VecDeque<Sample>,
    /// Who watches this entry, each once with its own parameters (none: an entry that only
    /// holds injected samples or samples kept after an unwatch; it is not sampled).
    pub watchers: Vec<Watcher>,
    /// Holds a value injected by the test API: the model stops sampling this entry, so the
    /// injected value stays the latest until another injection or `dcgmEmptyCache`.
    pub injected: bool,
}

/// Who watches a cache entry: a kind (`DcgmWatcherType_t`: a client, or one of libdcgm's own
/// watchers) and the client's connection (0 for the embedded engine's own clients).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatcherId {
    pub kind: u32,
    pub connection: u32,
}

impl WatcherId {
    /// A client watcher on a connection.
    pub fn client(connection: u32) -> Self {
        Self {
            kind: dcgm_sys::DcgmWatcherTypeClient,
            connection,
        }
    }
}

/// One watcher of a cache entry, with the parameters of its latest watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watcher {
    pub id: WatcherId,
    pub freq_us: i64,
    pub max_age_us: i64,
    /// 0 = no limit.
    pub max_samples: usize,
}

impl Watch {
    pub fn new(now: i64, freq_us: i64, max_age_us: i64, max_samples: usize) -> Self {
        Self {
            freq_us: freq_us.max(1),
            max_age_us,
            max_samples,
            next_due: now + freq_us.max(1),
            samples: VecDeque::new(),
            watchers: Vec::new(),
            injected: false,
        }
    }

    /// Whether anyone watches this entry.
    pub fn is_watched(&self) -> bool {
        !self.watchers.is_empty()
    }

    /// Whether the model samples this entry.
    fn sampled(&self) -> bool {
        self.is_watched() && !self.injected
    }

    /// Adds a watcher, or replaces the parameters of the same watcher's earlier watch (as
    /// libdcgm does: one client watching a field twice is one watcher, with the latest
    /// parameters). The entry is then sampled at the fastest interval of its watchers and
    /// keeps samples for the longest of their ages.
    pub fn add_watcher(&mut self, now: i64, watcher: Watcher) {
        let was_watched = self.is_watched();
        match self.watchers.iter_mut().find(|w| w.id == watcher.id) {
            Some(w) => *w = watcher,
            None => self.watchers.push(watcher),
        }
        self.update_from_watchers();
        if !was_watched {
            self.next_due = now + self.freq_us;
        } else {
            self.next_due = self.next_due.min(now + self.freq_us);
        }
    }

    /// Removes a watcher; whether it was one. The entry keeps its samples and its last
    /// interval and age (libdcgm reports them after the last watcher left).
    pub fn remove_watcher(&mut self, id: WatcherId) -> bool {
        let before = self.watchers.len();
        self.watchers.retain(|w| w.id != id);
        let removed = self.watchers.len() != before;
        if removed && self.is_watched() {
            self.update_from_watchers();
        }
        removed
    }

    fn update_from_watchers(&mut self) {
        let Some(first) = self.watchers.first() else {
            return;
        };
        let mut freq = first.freq_us;
        let mut age = first.max_age_us;
        let mut samples = first.max_samples;
        for w in &self.watchers[1..] {
            freq = freq.min(w.freq_us);
            age = age.max(w.max_age_us);
            samples = if samples == 0 || w.max_samples == 0 {
                0
            } else {
                samples.max(w.max_samples)
            };
        }
        self.freq_us = freq.max(1);
        self.max_age_us = age;
        self.max_samples = samples;
    }

    /// Stores an injected sample in time order (the latest is the one with the largest time).
    /// A time already taken moves one microsecond later, as in libdcgm's time series.
    pub fn inject(&mut self, ts: i64, value: SimValue) {
        let update = ts;
        let mut ts = ts;
        while self.samples.iter().any(|s| s.ts == ts) {
            ts += 1;
        }
        let at = self.samples.partition_point(|s| s.ts <= ts);
        self.samples.insert(at, Sample { ts, update, value });
        self.injected = true;
    }

    /// Generates the samples due up to `now` (AUTO mode).
    pub fn advance(&mut self, now: i64, mut make: impl FnMut(i64) -> SimValue) {
        if !self.sampled() || self.next_due > now {
            return;
        }
        let behind = (now - self.next_due) / self.freq_us;
        if behind > MAX_CATCH_UP {
            self.next_due += (behind - MAX_CATCH_UP) * self.freq_us;
        }
        while self.next_due <= now {
            let ts = self.next_due;
            self.push(ts, make(ts));
            self.next_due += self.freq_us;
        }
        self.trim(now);
    }

    /// Takes a sample now (`dcgmUpdateAllFields`) if one is due: like libdcgm, a forced update
    /// samples a field only once its fastest watch interval has passed since its newest sample
    /// (measured on libdcgm 4.6.0: forcing every 30 ms a field watched every 100 ms gives
    /// samples 120 ms apart, in both operation modes).
    pub fn force(&mut self, now: i64, value: SimValue) {
        if !self.due(now) {
            return;
        }
        self.push(now, value);
        self.next_due = now + self.freq_us;
        self.trim(now);
    }

    /// The sample a first watch takes at once, even of an entry holding injected samples (as
    /// libdcgm's `dcgmWatchFields` updates every field that got its first watcher).
    pub fn first_watch_sample(&mut self, now: i64, value: SimValue) {
        if !self.is_watched() {
            return;
        }
        self.push(now, value);
        self.next_due = now + self.freq_us;
        self.trim(now);
    }

    /// Whether a forced update at `now` takes a sample.
    pub fn due(&self, now: i64) -> bool {
        self.sampled()
            && self
                .samples
                .back()
                .is_none_or(|s| now >= s.update.saturating_add(self.freq_us))
    }

    /// Appends an update's samples as libdcgm's cache stores them: its time series refuses a
    /// duplicate time, and `timeseries_insert` (`sdk/nvidia/nvml/common/timeseries.c`) retries
    /// one microsecond later until the time is free. An update of a multi-sample field (one
    /// sample per running process, all appended at the same `now`) thus lands at `t`, `t+1`,
    /// `t+2` µs; the readers group them back (`dcgm::latest_update`).
    fn push(&mut self, ts: i64, value: SimValue) {
        let update = ts;
        let values = match value {
            SimValue::Multi(values) => values,
            value => vec![value],
        };
        for value in values {
            let ts = match self.samples.back() {
                Some(last) if last.ts >= update => last.ts + 1,
                _ => update,
            };
            self.samples.push_back(Sample { ts, update, value });
        }
    }

    fn trim(&mut self, now: i64) {
        if self.max_age_us > 0 {
            while self
                .samples
                .front()
                .is_some_and(|s| s.ts < now - self.max_age_us)
                && self.samples.len() > 1
            {
                self.samples.pop_front();
            }
        }
        if self.max_samples > 0 {
            // Samples of one time (one per process) count as one.
            while self.distinct_times() > self.max_samples {
                self.samples.pop_front();
            }
        }
    }
}

impl Watch {
    fn distinct_times(&self) -> usize {
        let mut n = 0;
        let mut last = None;
        for s in &self.samples {
            if last != Some(s.update) {
                n += 1;
                last = Some(s.update);
            }
        }
        n
    }
}

/// All watches of one engine.
#[derive(Debug, Default)]
pub struct Cache {
    pub watches: HashMap<u64, Watch>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch() -> Watch {
        let mut w = Watch::new(0, 1_000_000, 0, 0);
        let watcher = Watcher {
            id: WatcherId::client(0),
            freq_us: 1_000_000,
            max_age_us: 0,
            max_samples: 0,
        };
        w.add_watcher(0, watcher);
        w
    }

    #[test]
    fn an_updates_samples_land_at_consecutive_microseconds_as_in_libdcgm() {
        let mut w = watch();
        w.force(
            5_000_000,
            SimValue::Multi(vec![SimValue::Int(1), SimValue::Int(2), SimValue::Int(3)]),
        );
        let ts: Vec<i64> = w.samples.iter().map(|s| s.ts).collect();
        assert_eq!(ts, [5_000_000, 5_000_001, 5_000_002]);
        assert!(w.samples.iter().all(|s| s.update == 5_000_000));
        // Samples of one update count as one against a sample quota.
        assert_eq!(w.distinct_times(), 1);
        // An injected value at a time already taken moves one microsecond past it.
        w.inject(5_000_001, SimValue::Int(9));
        let ts: Vec<i64> = w.samples.iter().map(|s| s.ts).collect();
        assert_eq!(ts, [5_000_000, 5_000_001, 5_000_002, 5_000_003]);
    }
}
