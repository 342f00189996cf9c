//! nvidia-smi's sample sections (`Power Samples`, `SM Clock Samples`, `Memory Clock
//! Samples`): how many samples over how long, and their max, min and average.

use std::time::Duration;

use dcgm::Value;
use dcgm::raw::sys::*;

use super::text::{NA, Report};

/// The fields of the sample sections: nvidia-smi's `Power Samples` (NVML's total power
/// samples; DCGM's power usage), `SM Clock Samples` and `Memory Clock Samples`.
pub(super) const SAMPLED: [u16; 3] = [
    DCGM_FI_DEV_BOARD_POWER_WATTS,
    DCGM_FI_DEV_SM_CLOCK,
    DCGM_FI_DEV_MEM_CLOCK,
];

/// What nvidia-smi's sample sections say of a field's samples: how many, the time from the
/// first to the last, and their max, min and average.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleStats {
    /// Number of samples with a value.
    pub count: usize,
    /// From the first sample to the last (zero for one sample).
    pub duration: Duration,
    /// The largest value.
    pub max: f64,
    /// The smallest value.
    pub min: f64,
    /// The mean of the values.
    pub avg: f64,
}

impl SampleStats {
    /// The statistics of `samples` (time stamp in µs since the epoch, value), blanks (and
    /// strings, bytes) left out; `None` when no sample has a number.
    pub fn of<'a>(samples: impl IntoIterator<Item = (i64, &'a Value)>) -> Option<Self> {
        let mut n = 0usize;
        let (mut max, mut min, mut sum) = (f64::NEG_INFINITY, f64::INFINITY, 0.0);
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        for (ts, v) in samples {
            let Some(x) = v.as_f64().filter(|x| x.is_finite()) else {
                continue;
            };
            n += 1;
            max = max.max(x);
            min = min.min(x);
            sum += x;
            first = first.min(ts);
            last = last.max(ts);
        }
        (n > 0).then(|| SampleStats {
            count: n,
            duration: Duration::from_micros(u64::try_from(last - first).unwrap_or(0)),
            max,
            min,
            avg: sum / n as f64,
        })
    }
}

/// A sample section: `heading`, then the duration of the samples, their number, max, min and
/// average as `value` writes them; every line `N/A` where DCGM has no sample in the window (a
/// field the GPU does not support, or none sampled yet).
pub(super) fn sample_section(
    r: &mut Report,
    heading: &str,
    stats: Option<&SampleStats>,
    value: impl Fn(f64) -> String,
) {
    r.head(1, heading);
    match stats {
        Some(s) => {
            r.kv(
                2,
                "Duration",
                format!("{:.2} sec", s.duration.as_secs_f64()),
            );
            r.kv(2, "Number of Samples", s.count);
            r.kv(2, "Max", value(s.max));
            r.kv(2, "Min", value(s.min));
            r.kv(2, "Avg", value(s.avg));
        }
        None => {
            for label in ["Duration", "Number of Samples", "Max", "Min", "Avg"] {
                r.kv(2, label, NA);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nvsmi_report::text::LABEL_WIDTH;
    use dcgm::BlankKind;

    #[test]
    fn sample_stats_are_max_min_avg_count_and_span_with_blanks_left_out() {
        let samples = [
            (1_000_000, Value::Double(650.0)),
            (1_500_000, Value::Blank(BlankKind::Blank)),
            (2_000_000, Value::Double(700.0)),
            (3_360_000, Value::Int(600)),
            (3_400_000, Value::String("not a number".into())),
        ];
        let s = SampleStats::of(samples.iter().map(|(t, v)| (*t, v))).unwrap();
        assert_eq!(s.count, 3);
        assert_eq!(s.max, 700.0);
        assert_eq!(s.min, 600.0);
        assert_eq!(s.avg, 650.0);
        // From the first sample with a value to the last: 2.36 s, as nvidia-smi's `2.36 sec`.
        assert_eq!(s.duration, Duration::from_micros(2_360_000));
        assert_eq!(format!("{:.2} sec", s.duration.as_secs_f64()), "2.36 sec");
    }

    #[test]
    fn one_sample_spans_no_time_and_none_is_no_statistics() {
        let one = [(5, Value::Int(1980))];
        let s = SampleStats::of(one.iter().map(|(t, v)| (*t, v))).unwrap();
        assert_eq!((s.count, s.duration), (1, Duration::ZERO));
        assert_eq!((s.max, s.min, s.avg), (1980.0, 1980.0, 1980.0));
        assert_eq!(SampleStats::of(std::iter::empty()), None);
        let blanks = [
            (1, Value::Blank(BlankKind::NotSupported)),
            (2, Value::Blank(BlankKind::Blank)),
        ];
        assert_eq!(SampleStats::of(blanks.iter().map(|(t, v)| (*t, v))), None);
    }

    #[test]
    fn a_sample_section_has_nvidia_smis_lines_or_na_without_samples() {
        let stats = SampleStats {
            count: 2,
            duration: Duration::from_millis(1500),
            max: 1980.0,
            min: 1455.0,
            avg: 1717.5,
        };
        let mut r = Report::default();
        let mhz = |v: f64| format!("{} MHz", v.round() as i64);
        sample_section(&mut r, "SM Clock Samples", Some(&stats), mhz);
        sample_section(&mut r, "Power Samples", None, |w| format!("{w:.2} W"));
        let pad = |label: &str| format!("{label:<LABEL_WIDTH$}");
        let want = [
            "    SM Clock Samples".to_string(),
            format!("{}: 1.50 sec", pad("        Duration")),
            format!("{}: 2", pad("        Number of Samples")),
            format!("{}: 1980 MHz", pad("        Max")),
            format!("{}: 1455 MHz", pad("        Min")),
            format!("{}: 1718 MHz", pad("        Avg")),
            "    Power Samples".to_string(),
            format!("{}: N/A", pad("        Duration")),
            format!("{}: N/A", pad("        Number of Samples")),
            format!("{}: N/A", pad("        Max")),
            format!("{}: N/A", pad("        Min")),
            format!("{}: N/A", pad("        Avg")),
        ];
        assert_eq!(r.text.lines().collect::<Vec<_>>(), want);
    }
}
