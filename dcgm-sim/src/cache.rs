//! The field cache: watched (entity, field) pairs and the samples kept for each, updated on the
//! watch's schedule (AUTO mode) or when the client asks (`dcgmUpdateAllFields`).

use std::collections::{HashMap, VecDeque};

use crate::model::SimValue;

/// Key of a cache entry: entity group, entity id, field id.
pub fn key(group: u32, id: u32, field: u16) -> u64 {
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
    /// Number of watches covering this entry (0: an entry that only holds injected samples or
    /// samples kept after an unwatch; it is not sampled).
    pub watchers: u32,
    /// Holds a value injected by the test API: the model stops sampling this entry, so the
    /// injected value stays the latest until another injection or `dcgmEmptyCache`.
    pub injected: bool,
    /// Watched through `dcgmWatchFieldValue` (counted once in `watchers`).
    pub single: bool,
}

impl Watch {
    pub fn new(now: i64, freq_us: i64, max_age_us: i64, max_samples: usize) -> Self {
        Self {
            freq_us: freq_us.max(1),
            max_age_us,
            max_samples,
            next_due: now + freq_us.max(1),
            samples: VecDeque::new(),
            watchers: 0,
            injected: false,
            single: false,
        }
    }

    /// Whether the model samples this entry.
    fn sampled(&self) -> bool {
        self.watchers > 0 && !self.injected
    }

    /// Stores an injected sample in time order (the latest is the one with the largest time).
    pub fn inject(&mut self, ts: i64, value: SimValue) {
        let at = self.samples.partition_point(|s| s.ts <= ts);
        self.samples.insert(at, Sample { ts, value });
        self.injected = true;
    }

    /// Adds another watcher: the fastest frequency and the longest retention win.
    pub fn merge(&mut self, freq_us: i64, max_age_us: i64, max_samples: usize) {
        self.freq_us = self.freq_us.min(freq_us.max(1));
        self.max_age_us = self.max_age_us.max(max_age_us);
        self.max_samples = if self.max_samples == 0 || max_samples == 0 {
            0
        } else {
            self.max_samples.max(max_samples)
        };
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

    /// Whether a forced update at `now` takes a sample.
    pub fn due(&self, now: i64) -> bool {
        self.sampled()
            && self
                .samples
                .back()
                .is_none_or(|s| now >= s.ts.saturating_add(self.freq_us))
    }

    fn push(&mut self, ts: i64, value: SimValue) {
        match value {
            SimValue::Multi(values) => {
                for value in values {
                    self.samples.push_back(Sample { ts, value });
                }
            }
            value => self.samples.push_back(Sample { ts, value }),
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
            if last != Some(s.ts) {
                n += 1;
                last = Some(s.ts);
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
