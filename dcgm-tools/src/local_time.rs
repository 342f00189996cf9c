//! The local wall-clock time (`TZ` and `/etc/localtime` count, as they do for `date`), printed
//! as the tools that the examples stand in for print it. The calendar and the time-zone rules
//! are chrono's.

use std::time::SystemTime;

use chrono::{DateTime, Local};

/// A moment in local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalTime(DateTime<Local>);

impl LocalTime {
    /// Now.
    pub fn now() -> Self {
        Self(Local::now())
    }

    /// `t` in local time.
    pub fn at(t: SystemTime) -> Self {
        Self(DateTime::<Local>::from(t))
    }

    /// `Tue Dec  1 07:57:25 2026`: `%c` of the C locale (`%a %b %e %H:%M:%S %Y`), as `date`,
    /// `nvidia-smi` and gpustat print the time.
    pub fn c_locale(&self) -> String {
        self.0.format("%a %b %e %H:%M:%S %Y").to_string()
    }

    /// `2026-12-01T07:57:33.789331`: Python's `datetime.isoformat()` of a naive local time
    /// (no fraction when it is zero).
    pub fn iso(&self) -> String {
        let whole = self.0.format("%Y-%m-%dT%H:%M:%S").to_string();
        match self.0.timestamp_subsec_micros() {
            0 => whole,
            us => format!("{whole}.{us:06}"),
        }
    }

    /// `2026/12/01 07:57:33.789`: nvidia-smi's `timestamp` property.
    pub fn nvsmi(&self) -> String {
        self.0.format("%Y/%m/%d %H:%M:%S%.3f").to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_moment_in_each_layout() {
        // 2026-12-01 07:57:33.789331 in the local zone, whichever it is.
        let naive = chrono::NaiveDate::from_ymd_opt(2026, 12, 1)
            .and_then(|d| d.and_hms_micro_opt(7, 57, 33, 789_331))
            .unwrap();
        let t = LocalTime(naive.and_local_timezone(Local).earliest().unwrap());
        assert_eq!(t.iso(), "2026-12-01T07:57:33.789331");
        assert_eq!(t.c_locale(), "Tue Dec  1 07:57:33 2026");
        assert_eq!(t.nvsmi(), "2026/12/01 07:57:33.789");
    }
}
