//! A log line that repeats at most once per interval, with the count of the ones it held back:
//! an error that recurs many times a second (a full file-descriptor table, a flood of refused
//! clients) must not flood the log.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One throttled message.
#[derive(Debug)]
pub struct ThrottledLog {
    every: Duration,
    state: Mutex<(Option<Instant>, u64)>,
}

impl ThrottledLog {
    /// At most one line per `every`.
    pub const fn new(every: Duration) -> Self {
        Self {
            every,
            state: Mutex::new((None, 0)),
        }
    }

    /// Logs `msg` as a warning unless one was logged less than the interval ago; a line after
    /// held-back ones says how many there were.
    pub fn warn(&self, msg: impl FnOnce() -> String) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if s.0.is_some_and(|t| now.duration_since(t) < self.every) {
            s.1 += 1;
            return;
        }
        let held = std::mem::take(&mut s.1);
        s.0 = Some(now);
        drop(s);
        if held > 0 {
            log::warn!("{} ({held} more like it since the last such line)", msg());
        } else {
            log::warn!("{}", msg());
        }
    }
}
