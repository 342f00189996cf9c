//! Power-capped and thermal-throttled: clock-event reasons set, clocks below the maximum,
//! and the time lost from DCGM's violation counters.

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::stats;

use super::Stretch;

/// Clock-event reasons (DCGM_CLOCKS_EVENT_REASON_*) that mean the power limit: the software
/// power cap (0x4) and the hardware power brake (0x80).
pub const POWER_REASONS: u64 = 0x4 | 0x80;

/// Reasons that mean temperature: software (0x20) and hardware (0x40) thermal slowdown.
pub const THERMAL_REASONS: u64 = 0x20 | 0x40;

/// The hardware thermal slowdown: the GPU protects itself; a problem, not only slower.
pub const HW_THERMAL_REASON: u64 = 0x40;

/// A reason set in at least this share of the samples holds the clocks down for a real part of
/// the time, not a moment at a load step.
pub const MIN_SHARE: f64 = 0.2;

/// Clocks this share or more below the maximum while capped lose real throughput: a warning;
/// less is the GPU running at its designed limit (info).
pub const CLOCK_LOSS_WARN: f64 = 0.1;

/// DCGM's violation counters count nanoseconds (the fixture's grew by the wall time while the
/// cap was set throughout).
const VIOLATION_NS_PER_S: f64 = 1e9;

pub(super) fn judge_power(st: &Stretch<'_>) -> Vec<Finding> {
    judge(st, Cause::Power)
}

pub(super) fn judge_thermal(st: &Stretch<'_>) -> Vec<Finding> {
    judge(st, Cause::Thermal)
}

#[derive(Clone, Copy, PartialEq)]
enum Cause {
    Power,
    Thermal,
}

fn judge(st: &Stretch<'_>, cause: Cause) -> Vec<Finding> {
    let (mask, counter, kind) = match cause {
        Cause::Power => (POWER_REASONS, Field::PowerViolation, Kind::PowerCapped),
        Cause::Thermal => (
            THERMAL_REASONS,
            Field::ThermalViolation,
            Kind::ThermalThrottled,
        ),
    };
    let set = |v: f64| (v as u64) & mask != 0;
    let Some(share) = stats::fraction(st.samples, Field::ClockEventReasons, set) else {
        return Vec::new();
    };
    if share < MIN_SHARE {
        return Vec::new();
    }
    let held: Vec<crate::Sample> = st
        .samples
        .iter()
        .filter(|s| s.get(Field::ClockEventReasons).is_some_and(set))
        .cloned()
        .collect();
    let mut ev = vec![Evidence::new("reason_share", share, "ratio")];
    let duration = stats::duration_s(st.samples);
    let lost = stats::growth(st.samples, counter).map(|ns| ns / VIOLATION_NS_PER_S);
    if let Some(lost) = lost {
        ev.push(Evidence::new("violation_time", lost, "s"));
    }
    // The maximum: DCGM's where reported, else the highest clock seen in the window (a floor
    // of the true maximum, so the loss is never overstated).
    let (max, max_seen) = match st.limits.max_sm_clock_mhz {
        Some(m) => (Some(m), false),
        None => (stats::max(st.all, Field::SmClock), true),
    };
    let clock = stats::mean(&held, Field::SmClock);
    let mut loss = None;
    if let (Some(c), Some(m)) = (clock, max) {
        ev.push(Evidence::new("sm_clock_mean", c, "MHz"));
        ev.push(Evidence::new(
            if max_seen {
                "sm_clock_max_seen"
            } else {
                "sm_clock_max"
            },
            m,
            "MHz",
        ));
        loss = Some(1.0 - c / m);
        ev.push(Evidence::new("clock_loss", 1.0 - c / m, "ratio"));
    }
    if cause == Cause::Power
        && let Some(p) = stats::mean(&held, Field::Power)
    {
        ev.push(Evidence::new("power_mean", p, "W"));
        if let Some(l) = st.limits.power_limit_w {
            ev.push(Evidence::new("power_limit", l, "W"));
            ev.push(Evidence::new("power_to_limit", p / l, "ratio"));
        }
    }
    let hw_thermal = cause == Cause::Thermal
        && st.samples.iter().any(|s| {
            s.get(Field::ClockEventReasons)
                .is_some_and(|v| (v as u64) & HW_THERMAL_REASON != 0)
        });
    let severity = if hw_thermal {
        Severity::Problem
    } else if loss.is_some_and(|l| l >= CLOCK_LOSS_WARN)
        || (loss.is_none() && cause == Cause::Thermal)
    {
        Severity::Warning
    } else {
        Severity::Info
    };
    let what = match cause {
        Cause::Power => "the power limit",
        Cause::Thermal => "temperature",
    };
    let clock_note = match (clock, max) {
        (Some(c), Some(m)) => format!(
            ", SM clock {c:.0} MHz against {} {m:.0} MHz",
            if max_seen {
                "the highest seen,"
            } else {
                "its maximum"
            }
        ),
        _ => String::new(),
    };
    let lost_note = lost
        .map(|l| format!(", {l:.1} s of {duration:.1} s lost to it by DCGM's count"))
        .unwrap_or_default();
    let advice = match cause {
        Cause::Power => {
            "expected for dense math at the board's limit; raise the limit if the board allows \
             (nvidia-smi -pl), or trade clocks for efficiency (lower precision, fewer wasted ops)"
        }
        Cause::Thermal => {
            "check cooling: airflow, fan and inlet temperature, dust, and the neighbouring cards; \
             a hot single card points at its slot or heatsink"
        }
    };
    vec![st.finding(
        kind,
        severity,
        ev,
        format!(
            "clocks held down by {what} {:.0} % of the time{clock_note}{lost_note}",
            share * 100.0
        ),
        advice,
    )]
}
