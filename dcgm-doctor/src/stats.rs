//! Summaries of one field over a run of samples, blank-aware.

use crate::field::Field;
use crate::sample::Sample;

/// Below this share of known (non-blank) samples a field counts as unknown over a stretch: a
/// mean of a few readings would stand for time nobody measured.
pub const MIN_KNOWN_FRACTION: f64 = 0.5;

/// The mean of `field` over the known samples, `None` when too few are known.
pub fn mean(samples: &[Sample], field: Field) -> Option<f64> {
    mean_of(samples, |s| s.get(field))
}

/// The mean of any per-sample reading, `None` when too few are known.
pub fn mean_of(samples: &[Sample], f: impl Fn(&Sample) -> Option<f64>) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for v in samples.iter().filter_map(&f) {
        sum += v;
        n += 1;
    }
    (n > 0 && n as f64 >= MIN_KNOWN_FRACTION * samples.len() as f64).then(|| sum / n as f64)
}

/// The mean of `field` over some of a stretch's samples (the busy beats of a periodic one),
/// `None` when too few are known.
pub fn mean_over<'a>(samples: impl IntoIterator<Item = &'a Sample>, field: Field) -> Option<f64> {
    let (mut sum, mut known, mut n) = (0.0, 0usize, 0usize);
    for s in samples {
        n += 1;
        if let Some(v) = s.get(field) {
            sum += v;
            known += 1;
        }
    }
    (known > 0 && known as f64 >= MIN_KNOWN_FRACTION * n as f64).then(|| sum / known as f64)
}

/// The largest known value of `field`.
pub fn max(samples: &[Sample], field: Field) -> Option<f64> {
    samples.iter().filter_map(|s| s.get(field)).reduce(f64::max)
}

/// The latest known value of `field` (a limit or a setting, which may change).
pub fn latest(samples: &[Sample], field: Field) -> Option<f64> {
    samples.iter().rev().find_map(|s| s.get(field))
}

/// Whether any sample has `field`.
pub fn present(samples: &[Sample], field: Field) -> bool {
    samples.iter().any(|s| s.get(field).is_some())
}

/// How much a cumulative counter grew from its first to its last known value; a counter that
/// went down (a reset) counts from the reset.
pub fn growth(samples: &[Sample], field: Field) -> Option<f64> {
    let mut it = samples.iter().filter_map(|s| s.get(field));
    let mut prev = it.next()?;
    let mut total = 0.0;
    for v in it {
        total += if v >= prev { v - prev } else { v };
        prev = v;
    }
    Some(total)
}

/// The share of the known samples for which `pred` holds, `None` when too few are known.
pub fn fraction(samples: &[Sample], field: Field, pred: impl Fn(f64) -> bool) -> Option<f64> {
    mean_of(samples, |s| {
        s.get(field).map(|v| f64::from(u8::from(pred(v))))
    })
}

/// Seconds from the first to the last sample, plus one sampling interval (the last sample
/// stands for the time up to the next one).
pub fn duration_s(samples: &[Sample]) -> f64 {
    match (samples.first(), samples.last()) {
        (Some(a), Some(b)) => (b.timestamp_ms - a.timestamp_ms) as f64 / 1e3 + interval_s(samples),
        _ => 0.0,
    }
}

/// The median time between samples, seconds (0.1 when there are fewer than two).
pub fn interval_s(samples: &[Sample]) -> f64 {
    let mut d: Vec<i64> = samples
        .windows(2)
        .map(|w| w[1].timestamp_ms - w[0].timestamp_ms)
        .filter(|&d| d > 0)
        .collect();
    if d.is_empty() {
        return 0.1;
    }
    d.sort_unstable();
    d[d.len() / 2] as f64 / 1e3
}
