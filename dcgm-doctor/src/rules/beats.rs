//! The beats of a periodic regime: bursts of kernels with idle gaps between them, their period,
//! regularity and duty cycle. Both `input_starved` (regular gaps between full-speed bursts) and
//! `mostly_idle` (bursts busy a small share of the time) judge by them.

use crate::field::Field;
use crate::finding::Evidence;

use super::Stretch;

/// Beats whose periods vary by more than this share of their median are called irregular
/// (the period is still reported).
pub const REGULAR_PERIOD_SPREAD: f64 = 0.35;

/// The beats of a periodic regime.
pub(super) struct Beats {
    /// The median time from one busy beat's start to the next's, s.
    pub period: f64,
    /// The spread of those times (longest less shortest) over the median.
    pub spread: f64,
    /// The share of time kernels ran.
    pub duty: f64,
    /// The share of samples that were busy.
    pub busy_share: f64,
    /// How many busy beats.
    pub count: usize,
}

impl Beats {
    /// The beats of a periodic regime (`None` with fewer than two).
    pub fn of(st: &Stretch<'_>) -> Option<Beats> {
        let samples = st.samples;
        let times: Vec<f64> = st
            .segment
            .beats
            .iter()
            .map(|&i| st.all[i].timestamp_ms as f64 / 1e3)
            .collect();
        let mut periods: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        if periods.is_empty() {
            return None;
        }
        periods.sort_by(f64::total_cmp);
        let period = periods[periods.len() / 2];
        let spread = (periods[periods.len() - 1] - periods[0]) / period;
        let busy_share =
            samples.iter().filter(|s| super::busy(s)).count() as f64 / samples.len() as f64;
        // The duty cycle is the share of time kernels ran: DCGM's utilisation measures exactly
        // that within each sample, where a count of busy samples would call a sample busy for a
        // kernel that ran a tenth of it.
        let duty = st.mean(Field::GpuUtil).map_or(busy_share, |u| u / 100.0);
        Some(Beats {
            period,
            spread,
            duty,
            busy_share,
            count: st.segment.beats.len(),
        })
    }

    /// The evidence every finding about beats gives.
    pub fn evidence(&self, st: &Stretch<'_>) -> Vec<Evidence> {
        let mut ev = vec![
            Evidence::new("period", self.period, "s"),
            Evidence::new("duty_cycle", self.duty, "ratio"),
            Evidence::new("busy_sample_share", self.busy_share, "ratio"),
            Evidence::new("beats", self.count as f64, "count"),
            Evidence::new("period_spread", self.spread, "ratio"),
        ];
        if let Some(util) = st.mean(Field::GpuUtil) {
            ev.push(Evidence::new("gpu_util_mean", util, "%"));
        }
        if let Some(sm) = st.mean(Field::SmActive) {
            ev.push(Evidence::new("sm_active_mean", sm, "ratio"));
        }
        ev
    }

    /// `every` for regular beats, `irregularly, about every` for others.
    pub fn regular(&self) -> &'static str {
        if self.spread <= REGULAR_PERIOD_SPREAD {
            "every"
        } else {
            "irregularly, about every"
        }
    }
}
