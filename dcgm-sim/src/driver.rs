//! Whether the host engine holds the NVIDIA driver: `dcgmDetachDriver` lets it go (the GPUs
//! stay known, with the status "detached", and read blank), `dcgmAttachDriver` takes it back.
//! The spans the driver was away are kept, so that a sample taken late for a past time (AUTO
//! mode catches up on reads) reads as it would have then. Fake GPUs (the test API's, with no
//! device behind them) do not come back with the driver: as in libdcgm 4.6.0, they stay
//! detached.

/// The driver's attachment over time.
#[derive(Debug, Clone, Default)]
pub struct DriverState {
    /// When the driver was detached, while it is.
    detached_since: Option<i64>,
    /// Earlier spans without the driver, `[from, to)` in µs since the epoch.
    past: Vec<(i64, i64)>,
    /// GPUs the driver did not bring back, with the time they went.
    stranded: Vec<(u32, i64)>,
}

impl DriverState {
    /// Whether the driver is detached now.
    pub fn is_detached(&self) -> bool {
        self.detached_since.is_some()
    }

    /// Whether the driver was detached at `ts`.
    pub fn detached_at(&self, ts: i64) -> bool {
        self.detached_since.is_some_and(|since| ts >= since)
            || self.past.iter().any(|&(from, to)| ts >= from && ts < to)
    }

    /// Whether a GPU is detached now (with the driver, or left behind by it).
    pub fn gpu_is_detached(&self, gpu: u32) -> bool {
        self.is_detached() || self.stranded.iter().any(|&(g, _)| g == gpu)
    }

    /// Whether a GPU was detached at `ts`.
    pub fn gpu_detached_at(&self, gpu: u32, ts: i64) -> bool {
        self.detached_at(ts)
            || self
                .stranded
                .iter()
                .any(|&(g, since)| g == gpu && ts >= since)
    }

    /// Detaches the driver at `now`; false when it already was.
    pub fn detach(&mut self, now: i64) -> bool {
        if self.detached_since.is_some() {
            return false;
        }
        self.detached_since = Some(now);
        true
    }

    /// Attaches the driver at `now`, leaving the `fake` GPUs detached; false when it already
    /// was attached.
    pub fn attach(&mut self, now: i64, fake: impl IntoIterator<Item = u32>) -> bool {
        match self.detached_since.take() {
            Some(since) => {
                self.past.push((since, now));
                for g in fake {
                    if !self.stranded.iter().any(|&(s, _)| s == g) {
                        self.stranded.push((g, since));
                    }
                }
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_remembered() {
        let mut d = DriverState::default();
        assert!(!d.is_detached());
        assert!(
            !d.attach(5, [3]),
            "attaching an attached driver changes nothing"
        );
        assert!(!d.gpu_is_detached(3));
        assert!(d.detach(10));
        assert!(!d.detach(12), "a second detach changes nothing");
        assert!(d.is_detached() && d.detached_at(10) && d.detached_at(1_000));
        assert!(!d.detached_at(9));
        assert!(d.attach(20, [3]));
        assert!(!d.is_detached());
        assert!(d.detached_at(15) && !d.detached_at(20) && !d.detached_at(9));
        assert!(
            !d.gpu_is_detached(0) && d.gpu_is_detached(3),
            "a fake GPU stays away"
        );
        assert!(d.gpu_detached_at(3, 25) && !d.gpu_detached_at(3, 9) && !d.gpu_detached_at(0, 25));
    }
}
