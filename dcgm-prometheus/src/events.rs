//! XID errors and clock events counted over a sliding window ([`EventWindow`]), for the
//! `DCGM_EXP_XID_ERRORS_COUNT` and `DCGM_EXP_CLOCK_EVENTS_COUNT` rows.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use crate::counters::ExporterCounter;

/// Names of the clock-event (clock throttling) reason bits, as dcgm-exporter labels them.
pub const CLOCK_EVENT_REASONS: [(i64, &str); 9] = [
    (0x1, "gpu_idle"),
    (0x2, "clocks_setting"),
    (0x4, "power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal"),
    (0x40, "hw_thermal"),
    (0x80, "hw_power_brake"),
    (0x100, "display_clocks"),
];

/// Counts events of one kind per GPU over a sliding window, for the windowed exporter rows.
///
/// * XID errors (`DCGM_FI_DEV_XID_ERRORS` holds the last XID): a sample is a new event when
///   it is non-zero and differs from the GPU's previous sample, or follows it after more than
///   twice the sampling interval (DCGM records an XID sample per error; a host engine that
///   re-samples the field every interval repeats the last XID, which is not a new error).
/// * Clock events (`DCGM_FI_DEV_CLOCKS_EVENT_REASONS` is a bit mask): an event is a reason
///   bit that is set in a sample and was not in the GPU's previous sample.
///
/// Counts are by key (the XID number, or the reason bit) and cover the events whose sample
/// time is within the window.
#[derive(Debug, Clone)]
pub struct EventWindow {
    kind: ExporterCounter,
    window: Duration,
    interval_us: i64,
    gpus: BTreeMap<u32, GpuEvents>,
}

#[derive(Debug, Clone, Default)]
struct GpuEvents {
    last: Option<(i64, i64)>,
    events: VecDeque<(i64, i64)>,
}

impl EventWindow {
    /// A window for `kind` ([`ExporterCounter::XidErrorsCount`] or
    /// [`ExporterCounter::ClockEventsCount`]), whose source field is sampled every
    /// `sample_interval`.
    pub fn new(kind: ExporterCounter, window: Duration, sample_interval: Duration) -> Self {
        Self {
            kind,
            window,
            interval_us: sample_interval.as_micros().min(i64::MAX as u128) as i64,
            gpus: BTreeMap::new(),
        }
    }

    /// Which row this window feeds.
    pub fn kind(&self) -> ExporterCounter {
        self.kind
    }

    /// The window.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// Takes one sample of the source field of `gpu` (samples of a GPU in time order).
    pub fn observe(&mut self, gpu: u32, timestamp_us: i64, value: i64) {
        let g = self.gpus.entry(gpu).or_default();
        match self.kind {
            ExporterCounter::XidErrorsCount => {
                let new = value != 0
                    && match g.last {
                        None => true,
                        Some((ts, v)) => v != value || timestamp_us - ts > 2 * self.interval_us,
                    };
                if new {
                    g.events.push_back((timestamp_us, value));
                }
            }
            ExporterCounter::ClockEventsCount => {
                let before = g.last.map_or(0, |(_, v)| v);
                for (bit, _) in CLOCK_EVENT_REASONS {
                    if value & bit != 0 && before & bit == 0 {
                        g.events.push_back((timestamp_us, bit));
                    }
                }
            }
            ExporterCounter::GpuHealthStatus
            | ExporterCounter::P2pStatus
            | ExporterCounter::GpuInfo
            | ExporterCounter::PodFbUsed
            | ExporterCounter::PodSmUtil => {}
        }
        g.last = Some((timestamp_us, value));
    }

    /// Forgets the events older than the window, as of `now_us` (µs since the epoch).
    pub fn prune(&mut self, now_us: i64) {
        let start = now_us - self.window.as_micros().min(i64::MAX as u128) as i64;
        for g in self.gpus.values_mut() {
            while g.events.front().is_some_and(|(ts, _)| *ts < start) {
                g.events.pop_front();
            }
        }
    }

    /// The counts of `gpu`'s events by key, sorted by key, into `out` (cleared first).
    pub fn counts_into(&self, gpu: u32, out: &mut Vec<(i64, u64)>) {
        out.clear();
        let Some(g) = self.gpus.get(&gpu) else {
            return;
        };
        for (_, key) in &g.events {
            match out.iter_mut().find(|(k, _)| k == key) {
                Some((_, n)) => *n += 1,
                None => out.push((*key, 1)),
            }
        }
        out.sort_unstable_by_key(|(k, _)| *k);
    }

    /// The label of a key counted: `clock_event="<reason>"` or `xid="<xid>"`.
    pub(crate) fn key_label(&self, key: i64) -> (String, String) {
        match self.kind {
            ExporterCounter::ClockEventsCount => {
                let name = CLOCK_EVENT_REASONS
                    .iter()
                    .find(|(b, _)| *b == key)
                    .map_or("unknown", |(_, n)| n);
                ("clock_event".to_string(), name.to_string())
            }
            _ => ("xid".to_string(), key.to_string()),
        }
    }
}
