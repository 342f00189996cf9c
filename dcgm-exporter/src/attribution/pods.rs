//! The kubelet's pod map, kept fresh by a thread of its own so that a slow or hung kubelet
//! never delays a collection: the collector labels with the last map the refresher got.
//!
//! The refresher asks the kubelet every collection interval (at least every
//! [`MAX_REFRESH`], at most every [`MIN_REFRESH`]), each `List` bounded by
//! [`kubelet_wire::TIMEOUT`] and the DRA mapping by the CDI directory's pass budget
//! ([`crate::attribution::cdi`]). While a pass runs the collector labels with the last map. A failed `List`
//! keeps the last good map for [`KEEP_INTERVALS`] refresh intervals (a kubelet restarting, a
//! `List` timing out once), then empties it (the metrics go out without pod labels rather than
//! with labels that may name pods long gone); `/health` says which. The log says when the
//! kubelet starts failing and when it works again, once each: a kubelet failing with two
//! alternating errors is one failure, not a line per call.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::attribution::dra::DraResolver;
use crate::attribution::kubelet_wire;
use crate::attribution::kubernetes::{DeviceMap, PodMapper};
use crate::health::KubeletHealth;

/// The refresher asks at most this often, however short the collection interval (the kubelet
/// rate-limits its pod-resources API).
pub const MIN_REFRESH: Duration = Duration::from_secs(1);

/// ... and at least this often, however long the collection interval, so that a pod's labels
/// appear soon after it starts.
pub const MAX_REFRESH: Duration = Duration::from_secs(10);

/// A failed `List` keeps the last good map for this many refresh intervals.
pub const KEEP_INTERVALS: u32 = 3;

/// The last pod map, shared by the refresher (which writes it) and the collector.
#[derive(Debug, Default)]
pub struct PodCache {
    map: Mutex<Option<Arc<DeviceMap>>>,
    refreshed: Condvar,
}

impl PodCache {
    /// The last map (empty before the first refresh and after a failed one).
    pub fn get(&self) -> Arc<DeviceMap> {
        self.map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_default()
    }

    /// Waits until the first refresh has ended (at most `limit`), so that the first
    /// collection has the pods when the kubelet answers.
    pub fn wait_first(&self, limit: Duration) {
        let guard = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self
            .refreshed
            .wait_timeout_while(guard, limit, |m| m.is_none());
    }

    fn set(&self, map: DeviceMap) {
        *self.map.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(map));
        self.refreshed.notify_all();
    }
}

/// A change of the kubelet's state worth a log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    /// It worked (or was not asked yet) and now fails, for this reason.
    Failing(String),
    /// It failed and now works.
    Recovered,
}

/// The kubelet's state across `List` calls.
#[derive(Debug, Default)]
pub struct KubeletTracker {
    failing_since: Option<Instant>,
    devices: usize,
    last_good: Option<Instant>,
}

impl KubeletTracker {
    /// Records one `List` (the number of device ids it mapped, or why it failed); returns the
    /// state for `/health`, and the transition to log, if it is one: only ok → failing and
    /// failing → ok, whatever the error text.
    pub fn record(
        &mut self,
        result: Result<usize, String>,
        now: Instant,
    ) -> (KubeletHealth, Option<Transition>) {
        let (error, transition) = match result {
            Ok(devices) => {
                self.devices = devices;
                self.last_good = Some(now);
                let t = self.failing_since.take().map(|_| Transition::Recovered);
                (None, t)
            }
            Err(e) => {
                let t = match self.failing_since {
                    Some(_) => None,
                    None => {
                        self.failing_since = Some(now);
                        Some(Transition::Failing(e.clone()))
                    }
                };
                (Some(e), t)
            }
        };
        let health = KubeletHealth {
            error,
            devices: self.devices,
            checked: now,
            failing_since: self.failing_since,
            last_good: self.last_good,
            ..KubeletHealth::new(now)
        };
        (health, transition)
    }
}

/// Asks the kubelet and keeps the [`PodCache`] and the kubelet's state.
pub struct PodRefresher {
    mapper: PodMapper,
    runtime: tokio::runtime::Runtime,
    cache: Arc<PodCache>,
    tracker: KubeletTracker,
    /// With `--kubernetes-enable-dra`: maps the claims' devices.
    dra: Option<DraResolver>,
    /// How often the refresher asks ([`PodRefresher::spawn`]).
    every: Duration,
    /// The last state reported.
    last: Option<KubeletHealth>,
}

impl PodRefresher {
    /// A refresher for `mapper`'s socket, filling `cache`.
    ///
    /// # Errors
    ///
    /// The gRPC client's runtime cannot start.
    pub fn new(mapper: PodMapper, cache: Arc<PodCache>) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Self {
            dra: mapper.dra.clone().map(DraResolver::new),
            mapper,
            runtime,
            cache,
            tracker: KubeletTracker::default(),
            every: MIN_REFRESH,
            last: None,
        })
    }

    /// The state for `/health` as a refresh starts: the last one, with the refresh running.
    pub fn begin(&self, now: Instant) -> Option<KubeletHealth> {
        self.last.clone().map(|h| KubeletHealth {
            running_since: Some(now),
            ..h
        })
    }

    /// Asks the kubelet once (at most [`kubelet_wire::TIMEOUT`]), updates the cache, logs a
    /// transition, and returns the state for `/health`.
    pub fn refresh(&mut self) -> KubeletHealth {
        let socket = &self.mapper.socket;
        let result = if socket.exists() {
            self.runtime
                .block_on(kubelet_wire::list(socket))
                .map(|resp| {
                    let mut map = self.mapper.device_map(&resp);
                    if let Some(dra) = &mut self.dra {
                        dra.add_to(&resp, &mut map);
                    }
                    map
                })
                .map_err(|e| e.to_string())
        } else {
            Err(format!(
                "the kubelet socket {} does not exist",
                socket.display()
            ))
        };
        if let (Err(_), Some(dra)) = (&result, &self.dra) {
            dra.failed();
        }
        let counted = result.as_ref().map(HashMap::len).map_err(Clone::clone);
        let now = Instant::now();
        let keep = self.every * KEEP_INTERVALS;
        let kept_until = self.tracker.last_good.map(|t| t + keep);
        let keeping = kept_until.is_some_and(|until| now < until);
        match result {
            Ok(map) => self.cache.set(map),
            // The last good map stays for a while; then the labels go.
            Err(_) if keeping => {}
            Err(_) => self.cache.set(DeviceMap::new()),
        }
        let (mut health, transition) = self.tracker.record(counted, now);
        match transition {
            Some(Transition::Failing(e)) if keeping => log::warn!(
                "{e}; keeping the pod labels of the last good List for {keep:?}, then exporting \
                 without pod labels"
            ),
            Some(Transition::Failing(e)) => log::warn!("{e}; exporting without pod labels"),
            Some(Transition::Recovered) => log::info!("Kubernetes pod labels are back"),
            None => {}
        }
        if health.error.is_some() {
            health.kept_until = kept_until.filter(|_| keeping);
        }
        health.every = self.every;
        health.cdi = self.mapper.dra.as_ref().and_then(|d| d.stats.cdi());
        self.last = Some(health.clone());
        health
    }

    /// Starts the refresher's thread: a refresh every `interval` (within [`MIN_REFRESH`] and
    /// [`MAX_REFRESH`]), each state handed to `report`.
    ///
    /// # Errors
    ///
    /// The thread cannot start.
    pub fn spawn(
        mut self,
        interval: Duration,
        mut report: impl FnMut(KubeletHealth) + Send + 'static,
    ) -> std::io::Result<()> {
        let every = interval.clamp(MIN_REFRESH, MAX_REFRESH);
        self.every = every;
        std::thread::Builder::new()
            .name("kubelet".into())
            .spawn(move || {
                loop {
                    let started = Instant::now();
                    if let Some(h) = self.begin(started) {
                        report(h);
                    }
                    report(self.refresh());
                    std::thread::sleep(every.saturating_sub(started.elapsed()));
                }
            })
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternating_errors_are_one_failure_logged_once() {
        let mut t = KubeletTracker::default();
        let now = Instant::now();
        let mut logged = Vec::new();
        for r in [
            Err("timed out".to_string()),
            Err("connection refused".to_string()),
            Err("timed out".to_string()),
            Ok(3),
            Ok(3),
            Err("connection refused".to_string()),
        ] {
            let (health, transition) = t.record(r, now);
            logged.extend(transition);
            assert_eq!(health.failing_since.is_some(), health.error.is_some());
        }
        assert_eq!(
            logged,
            [
                Transition::Failing("timed out".into()),
                Transition::Recovered,
                Transition::Failing("connection refused".into()),
            ]
        );
    }
}
