//! The local wall-clock time, broken down by C's `localtime_r` (so `TZ` and `/etc/localtime`
//! count as they do for `date`), and printed as the tools that the examples stand in for print it.

use std::time::{SystemTime, UNIX_EPOCH};

/// A moment in local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalTime {
    pub year: i32,
    /// 1 to 12.
    pub month: u32,
    /// 1 to 31.
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub microsecond: u32,
    /// 0 is Sunday.
    pub weekday: u32,
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

impl LocalTime {
    /// Now.
    pub fn now() -> Self {
        Self::at(SystemTime::now())
    }

    /// `t` in local time; in UTC where the C library cannot convert it.
    pub fn at(t: SystemTime) -> Self {
        let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = libc::time_t::try_from(since.as_secs()).unwrap_or(libc::time_t::MAX);
        // SAFETY: `tm` is plain old data (integers and, on glibc, a nullable zone pointer), for
        // which all zeroes is a valid value.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers are to live locals; localtime_r, unlike localtime, writes only
        // into the `tm` it is given.
        let converted = unsafe { !libc::localtime_r(&secs, &mut tm).is_null() };
        if !converted {
            return Self::utc(since.as_secs(), since.subsec_micros());
        }
        Self {
            year: tm.tm_year + 1900,
            month: (tm.tm_mon + 1) as u32,
            day: tm.tm_mday as u32,
            hour: tm.tm_hour as u32,
            minute: tm.tm_min as u32,
            second: tm.tm_sec as u32,
            microsecond: since.subsec_micros(),
            weekday: tm.tm_wday as u32,
        }
    }

    /// Seconds since the epoch in UTC (days to a civil date as in Howard Hinnant's algorithm).
    fn utc(secs: u64, microsecond: u32) -> Self {
        let days = (secs / 86_400) as i64;
        let rem = secs % 86_400;
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Self {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            microsecond,
            weekday: ((days + 4).rem_euclid(7)) as u32,
        }
    }

    /// `Tue Dec  1 07:57:25 2026`: `%c` of the C locale (`%a %b %e %H:%M:%S %Y`), as `date`,
    /// `nvidia-smi` and gpustat print the time.
    pub fn c_locale(&self) -> String {
        format!(
            "{} {} {:>2} {:02}:{:02}:{:02} {}",
            DAYS[self.weekday as usize % 7],
            MONTHS[(self.month as usize + 11) % 12],
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.year
        )
    }

    /// `2026-12-01T07:57:33.789331`: Python's `datetime.isoformat()` of a naive local time
    /// (no fraction when it is zero).
    pub fn iso(&self) -> String {
        let mut s = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        );
        if self.microsecond != 0 {
            s += &format!(".{:06}", self.microsecond);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_fallback_breaks_a_known_moment_down() {
        // 2026-12-01 07:57:33 UTC, a Tuesday.
        let t = LocalTime::utc(1_796_111_853, 789_331);
        assert_eq!(t.iso(), "2026-12-01T07:57:33.789331");
        assert_eq!(t.c_locale(), "Tue Dec  1 07:57:33 2026");
    }
}
