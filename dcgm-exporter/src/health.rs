//! What `/health` says, judged from the collector's state and the clock, and the watchdog
//! that logs each change of it.
//!
//! `/health` is 503 with the reason while DCGM is starting or unreachable, before the first
//! collection, after a failed collection, and when the last good collection is older than
//! `--health-max-age-intervals` collection intervals (3 by default). The last covers a
//! collector stuck inside a DCGM call: a host engine that stopped answering (`SIGSTOP`, a hung
//! driver) makes DCGM's client wait 60 s before it gives up, and meanwhile `/metrics` would
//! serve the same numbers again and again. The verdict is computed when asked, so `/health` is
//! right to the moment; the watchdog, a thread of its own, asks every [`WATCHDOG_TICK`] and
//! logs a line when the verdict changes (the collector asks too, after each collection), so
//! the log says so even while the collector thread is blocked.
//!
//! The kubelet's state has a line of its own in the body and never makes `/health` 503: the
//! readiness probe of the shipped DaemonSet uses `/health`, and a pod that is not ready
//! leaves the Service, so Prometheus would lose the GPU metrics for want of their pod labels.

use std::fmt::Write as _;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Collection intervals after which the last good collection is stale, unless
/// `--health-max-age-intervals` says otherwise.
pub const DEFAULT_MAX_AGE_INTERVALS: u32 = 3;

/// The gauge appended to every exposition: the Unix time of the last good collection.
pub const LAST_SUCCESS_METRIC: &str = "dcgm_exporter_last_collection_success_timestamp_seconds";

/// How often the watchdog judges.
pub const WATCHDOG_TICK: Duration = Duration::from_secs(1);

/// A host engine that has not answered a DCGM call (connecting included) for this long is
/// named on `/health` as not answering. DCGM's own client waits up to 60 s.
pub const NOT_ANSWERING_AFTER: Duration = Duration::from_secs(2);

/// What the collector thread is doing, for the reason of a stale verdict.
pub mod activity {
    /// Starting DCGM or connecting to the host engine.
    pub const CONNECTING: &str = "connecting to DCGM";
    /// Inside a collection: DCGM's reads.
    pub const COLLECTING: &str = "waiting on DCGM";
    /// Reading the counters file again (SIGHUP).
    pub const RELOADING: &str = "reloading the counters file";
}

/// The kubelet as the pod-label refresher last found it (one line of the `/health` body, and
/// one for the CDI directory with DRA).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeletHealth {
    /// Why the last `List` failed; `None` when it worked.
    pub error: Option<String>,
    /// Device ids mapped to pods by the last good `List`.
    pub devices: usize,
    /// When the refresher last asked.
    pub checked: Instant,
    /// Since when it fails (the first failure of this run of failures).
    pub failing_since: Option<Instant>,
    /// When the last good `List` was.
    pub last_good: Option<Instant>,
    /// While failing: the labels of the last good `List` are kept until then.
    pub kept_until: Option<Instant>,
    /// How often the refresher asks: the state is stale past [`stale_after`] of it.
    pub every: Duration,
    /// A refresh running now, since then.
    pub running_since: Option<Instant>,
    /// With DRA: the CDI directory's last pass.
    pub cdi: Option<crate::attribution::dra_types::CdiState>,
}

impl KubeletHealth {
    /// A state asked at `now` that found nothing and fails for nothing (fields to fill).
    pub fn new(now: Instant) -> Self {
        Self {
            error: None,
            devices: 0,
            checked: now,
            failing_since: None,
            last_good: None,
            kept_until: None,
            every: Duration::from_secs(1),
            running_since: None,
            cdi: None,
        }
    }
}

/// How old an attribution source's last pass may be before `/health` calls it stale: three of
/// its intervals and the longest a pass may wait on the kubelet.
pub fn stale_after(every: Duration) -> Duration {
    every * 3 + crate::attribution::kubelet_wire::TIMEOUT
}

/// An attribution source read on each collection (the HPC job-mapping directory), as its last
/// read found it: shared by the collector threads, which write it, and `/health`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceHealth {
    /// When it was last read.
    pub checked: Instant,
    /// Why the last read failed (the whole source: a directory that cannot be listed).
    pub error: Option<String>,
    /// Since when it fails.
    pub failing_since: Option<Instant>,
    /// What the last read found, in words (`2 files with jobs in /run/jobs`).
    pub summary: String,
    /// Files skipped or cut short (each named in the log).
    pub problems: usize,
}

/// Where a source's state is kept for `/health`.
pub type SourceBoard = std::sync::Arc<std::sync::Mutex<Option<SourceHealth>>>;

/// What `/health` answers: 200 (`ok`) or 503, and the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// 200 when true, 503 otherwise.
    pub ok: bool,
    /// `OK` or `KO: <reason>`, then the kubelet's line (with `--kubernetes`).
    pub body: String,
}

/// The states the log tells apart: a change between two of them is one log line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Key {
    Ready,
    Error(String),
    /// Connecting to these host engines takes longer than [`NOT_ANSWERING_AFTER`].
    NotAnswering(String),
    NoCollection,
    Stale,
}

/// One host engine's state when several are read, for its `/health` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineState {
    /// Its address.
    pub name: String,
    /// Why it fails; `None` once it works.
    pub error: Option<String>,
    /// When its last collection worked.
    pub at: Option<Instant>,
    /// What its collector thread is doing, since when.
    pub busy: Option<(Instant, &'static str)>,
}

/// How long `busy` has waited on the host engine, when past [`NOT_ANSWERING_AFTER`]: the
/// seconds and what it waits on, in words.
fn not_answering(
    busy: Option<(Instant, &'static str)>,
    now: Instant,
) -> Option<(f64, &'static str)> {
    let (since, what) = busy?;
    let waited = now.saturating_duration_since(since);
    let words = match what {
        activity::CONNECTING => "DCGM has been connecting to it",
        activity::COLLECTING => "a DCGM call has been waiting on it",
        _ => return None,
    };
    (waited > NOT_ANSWERING_AFTER).then_some((waited.as_secs_f64(), words))
}

/// The collector's health, kept in [`Published`](crate::http::server::Published) under its lock.
#[derive(Debug, Clone, Default)]
pub struct Health {
    interval: Duration,
    max_age_intervals: u32,
    /// `None`: staleness is not judged (a server run without a collector, in tests).
    max_age: Option<Duration>,
    last_success: Option<Instant>,
    busy: Option<(Instant, &'static str)>,
    /// The kubelet's line, with `--kubernetes`.
    pub kubelet: Option<KubeletHealth>,
    /// The HPC job-mapping directory's line, with `--hpc-job-mapping-dir`.
    pub hpc: Option<SourceBoard>,
    /// The host engine read, when one is (`None`: the embedded engine), to name it.
    pub engine: Option<String>,
    /// Each host engine when several are read: one line each (`hostengine ADDR: ok` or why
    /// not), judged when asked.
    pub engines: Vec<EngineState>,
    logged: Option<Key>,
}

impl Health {
    /// Stale after `max_age_intervals` times `interval` without a good collection.
    pub fn new(interval: Duration, max_age_intervals: u32) -> Self {
        Self {
            interval,
            max_age_intervals,
            max_age: interval.checked_mul(max_age_intervals),
            ..Self::default()
        }
    }

    /// The collector thread starts `what` (one of [`activity`]).
    pub fn begin(&mut self, what: &'static str, now: Instant) {
        self.busy = Some((now, what));
    }

    /// The collector thread finished what it began, without a good collection.
    pub fn end(&mut self) {
        self.busy = None;
    }

    /// A collection worked.
    pub fn succeeded(&mut self, now: Instant) {
        self.last_success = Some(now);
        self.busy = None;
    }

    /// What `/health` answers now, given the collector's error and whether a collection has
    /// been published yet.
    pub fn report(&self, error: Option<&str>, ready: bool, now: Instant) -> Report {
        let (key, reason) = self.verdict(error, ready, now);
        let mut body = match key {
            Key::Ready => "OK\n".to_string(),
            _ => format!("KO: {reason}\n"),
        };
        // One engine, working, whose current call is late (not stale yet): its own line.
        if key == Key::Ready
            && self.engines.is_empty()
            && let Some((secs, what)) = not_answering(self.busy, now)
        {
            let _ = writeln!(
                body,
                "{}: not answering: {what} for {secs:.1} s; serving the last good collection",
                self.engine_name()
            );
        }
        for e in &self.engines {
            let _ = writeln!(body, "{}", self.engine_line(e, now));
        }
        if let Some(k) = &self.kubelet {
            let _ = writeln!(body, "{}", kubelet_line(k, now));
            if let Some(c) = &k.cdi {
                let _ = writeln!(body, "{}", cdi_line(c, k, now));
            }
        }
        if let Some(board) = &self.hpc {
            let state = board.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if let Some(h) = state {
                let _ = writeln!(body, "{}", hpc_line(&h, self.max_age, now));
            }
        }
        Report {
            ok: key == Key::Ready,
            body,
        }
    }

    /// Logs the verdict when it differs from the last one logged: `not ready: <reason>`
    /// (warning) or `ready: collections work`.
    pub fn note(&mut self, error: Option<&str>, ready: bool, now: Instant) {
        let (key, reason) = self.verdict(error, ready, now);
        if self.logged.as_ref() == Some(&key) {
            return;
        }
        match &key {
            Key::Ready => log::info!("ready: collections work"),
            _ => log::warn!("not ready: {reason}"),
        }
        self.logged = Some(key);
    }

    /// Takes the current verdict as already logged (the state at start, which the log
    /// announces otherwise).
    pub fn prime(&mut self, error: Option<&str>, ready: bool, now: Instant) {
        self.logged = Some(self.verdict(error, ready, now).0);
    }

    /// The engine in words: `hostengine ADDR` or `the embedded host engine`.
    fn engine_name(&self) -> String {
        match &self.engine {
            Some(e) => format!("hostengine {e}"),
            None => "the embedded host engine".into(),
        }
    }

    /// A host engine's line when several are read.
    fn engine_line(&self, e: &EngineState, now: Instant) -> String {
        let name = &e.name;
        let fresh = e.error.is_none()
            && e.at.is_some_and(|at| {
                self.max_age
                    .is_none_or(|max| now.saturating_duration_since(at) <= max)
            });
        let late = not_answering(e.busy, now);
        match (&e.error, e.at, late) {
            (Some(err), _, Some((secs, what)))
                if e.busy.is_some_and(|b| b.1 == activity::CONNECTING) =>
            {
                format!("hostengine {name}: not answering: {what} for {secs:.1} s (before: {err})")
            }
            (Some(err), _, _) => format!("hostengine {name}: {err}"),
            (None, None, Some((secs, what))) => {
                format!("hostengine {name}: not answering: {what} for {secs:.1} s")
            }
            (None, None, None) => format!("hostengine {name}: starting"),
            (None, Some(_), Some((secs, what))) if fresh => format!(
                "hostengine {name}: not answering: {what} for {secs:.1} s; its last good \
                 collection is served until it is stale"
            ),
            (None, Some(_), _) if fresh => format!("hostengine {name}: ok"),
            (None, Some(at), late) => format!(
                "hostengine {name}: stale: the last good collection was {:.1} s ago (is the \
                 host engine answering?){}; left out",
                now.saturating_duration_since(at).as_secs_f64(),
                late.map_or(String::new(), |(secs, what)| format!(
                    "; {what} for {secs:.1} s"
                ))
            ),
        }
    }

    fn verdict(&self, error: Option<&str>, ready: bool, now: Instant) -> (Key, String) {
        if let Some(e) = error {
            // Connecting (again) takes longer than a host engine that answers needs.
            if self.engines.is_empty()
                && self.busy.is_some_and(|b| b.1 == activity::CONNECTING)
                && let Some((secs, what)) = not_answering(self.busy, now)
            {
                let name = self.engine_name();
                return (
                    Key::NotAnswering(name.clone()),
                    format!(
                        "{name} is not answering: {what} for {secs:.1} s (a host engine that \
                         accepts connections and never answers, or a stopped one?); {e}"
                    ),
                );
            }
            let stuck: Vec<(&str, String)> = self
                .engines
                .iter()
                .filter(|s| s.busy.is_some_and(|b| b.1 == activity::CONNECTING))
                .filter_map(|s| {
                    let (secs, what) = not_answering(s.busy, now)?;
                    Some((
                        s.name.as_str(),
                        format!(
                            "hostengine {} is not answering: {what} for {secs:.1} s",
                            s.name
                        ),
                    ))
                })
                .collect();
            if !stuck.is_empty() {
                let names: Vec<&str> = stuck.iter().map(|(n, _)| *n).collect();
                let lines: Vec<&str> = stuck.iter().map(|(_, l)| l.as_str()).collect();
                return (
                    Key::NotAnswering(names.join(", ")),
                    format!("{e}; {}", lines.join("; ")),
                );
            }
            return (Key::Error(e.to_string()), e.to_string());
        }
        if !ready {
            return (Key::NoCollection, "no collection yet".into());
        }
        let (Some(last), Some(max)) = (self.last_success, self.max_age) else {
            return (Key::Ready, String::new());
        };
        let age = now.saturating_duration_since(last);
        if age <= max {
            return (Key::Ready, String::new());
        }
        let mut reason = format!(
            "stale: the last good collection was {:.1} s ago, more than {} collection \
             intervals ({:.1} s)",
            age.as_secs_f64(),
            self.max_age_intervals,
            max.as_secs_f64()
        );
        match self.busy {
            Some((since, what)) => {
                let _ = write!(
                    reason,
                    "; the collector has been {what} for {:.1} s",
                    now.saturating_duration_since(since).as_secs_f64()
                );
                if what == activity::COLLECTING || what == activity::CONNECTING {
                    reason.push_str(" (is the host engine answering?");
                    if let Some(e) = &self.engine {
                        let _ = write!(reason, " the call waits on hostengine {e}");
                    }
                    reason.push(')');
                }
            }
            None => {
                let _ = write!(
                    reason,
                    "; the collector thread is not inside a collection (interval {:.1} s)",
                    self.interval.as_secs_f64()
                );
            }
        }
        (Key::Stale, reason)
    }
}

fn secs_since(now: Instant, t: Instant) -> f64 {
    now.saturating_duration_since(t).as_secs_f64()
}

/// The kubelet's line of the `/health` body: `ok` (fresh), `stale` (its last pass is older
/// than [`stale_after`]: a pass is stuck) or `failing`.
fn kubelet_line(k: &KubeletHealth, now: Instant) -> String {
    let asked = secs_since(now, k.checked);
    let limit = stale_after(k.every);
    if now.saturating_duration_since(k.checked) > limit {
        let running = k.running_since.map_or(String::new(), |r| {
            format!(
                "; a refresh has been running for {:.1} s (a kubelet, CDI directory or API \
                 server that is slow?)",
                secs_since(now, r)
            )
        });
        let labels = if k.error.is_none() {
            "the pod labels are those it gave"
        } else if k.kept_until.is_some_and(|u| now < u) {
            "the pod labels are those of the last good List"
        } else {
            "exporting without pod labels"
        };
        return format!(
            "kubelet: stale: the last pass ended {asked:.1} s ago, more than {:.1} s{running}; \
             {labels}",
            limit.as_secs_f64()
        );
    }
    match &k.error {
        None => format!(
            "kubelet: ok, {} device ids held by pods (listed {asked:.1} s ago)",
            k.devices
        ),
        Some(e) => {
            let failing = k.failing_since.map_or(0.0, |s| secs_since(now, s));
            match (k.kept_until, k.last_good) {
                (Some(until), Some(good)) if now < until => format!(
                    "kubelet: failing for {failing:.1} s: {e}; keeping the pod labels of the \
                     last good List ({:.1} s ago) for {:.1} s more (asked {asked:.1} s ago)",
                    secs_since(now, good),
                    until.saturating_duration_since(now).as_secs_f64()
                ),
                _ => format!(
                    "kubelet: failing for {failing:.1} s: {e}; exporting without pod labels \
                     (asked {asked:.1} s ago)"
                ),
            }
        }
    }
}

/// The CDI directory's line: `ok`, `partial` (files rejected, deferred or past the file
/// limit), `failing` (the directory cannot be listed), or `stale` (with the kubelet's pass).
fn cdi_line(
    c: &crate::attribution::dra_types::CdiState,
    k: &KubeletHealth,
    now: Instant,
) -> String {
    let ago = secs_since(now, c.at);
    let dir = c.dir.display();
    if now.saturating_duration_since(c.at) > stale_after(k.every) {
        return format!(
            "cdi: stale: the last pass over {dir} ended {ago:.1} s ago; DRA devices are mapped \
             from the specs it read"
        );
    }
    match &c.pass {
        Err(e) => format!(
            "cdi: failing: cannot read {dir}: {e}; no DRA device is mapped from CDI specs \
             (checked {ago:.1} s ago)"
        ),
        Ok(p) => {
            let skipped = p.skipped();
            format!(
                "cdi: {}, {} specs in {dir}{skipped}; the last pass read {} files in {:.1} ms \
                 ({} read since the start; checked {ago:.1} s ago)",
                if skipped.is_empty() { "ok" } else { "partial" },
                p.specs,
                p.read,
                p.took.as_secs_f64() * 1e3,
                c.reads
            )
        }
    }
}

/// The HPC job-mapping directory's line: `ok`, `partial`, `failing` or `stale` (not read for
/// longer than the collections may be old: the collector is stuck).
fn hpc_line(h: &SourceHealth, max_age: Option<Duration>, now: Instant) -> String {
    let ago = secs_since(now, h.checked);
    if let Some(max) = max_age
        && now.saturating_duration_since(h.checked) > max
    {
        return format!(
            "hpc: stale: the job mapping was last read {ago:.1} s ago, more than {:.1} s",
            max.as_secs_f64()
        );
    }
    match &h.error {
        Some(e) => format!(
            "hpc: failing for {:.1} s: {e}; exporting without hpc_job labels (read {ago:.1} s ago)",
            h.failing_since.map_or(0.0, |s| secs_since(now, s))
        ),
        None if h.problems > 0 => format!(
            "hpc: partial, {}; {} files skipped or cut short (named in the log) (read {ago:.1} s \
             ago)",
            h.summary, h.problems
        ),
        None => format!("hpc: ok, {} (read {ago:.1} s ago)", h.summary),
    }
}

/// Appends [`LAST_SUCCESS_METRIC`] (`at`, in seconds since the Unix epoch) to an exposition.
///
/// ```
/// let mut out = String::new();
/// let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_250);
/// dcgm_exporter::health::write_last_success(&mut out, at);
/// assert!(out.ends_with(
///     "# TYPE dcgm_exporter_last_collection_success_timestamp_seconds gauge\n\
///      dcgm_exporter_last_collection_success_timestamp_seconds 1700000000.250\n"
/// ));
/// ```
pub fn write_last_success(out: &mut String, at: SystemTime) {
    let secs = at
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let _ = write!(
        out,
        "# HELP {LAST_SUCCESS_METRIC} Unix time of the last collection that read DCGM \
         successfully; alert when it falls behind time().\n\
         # TYPE {LAST_SUCCESS_METRIC} gauge\n\
         {LAST_SUCCESS_METRIC} {secs:.3}\n"
    );
}

/// Starts the watchdog: a thread that calls `judge` with the time every [`WATCHDOG_TICK`].
///
/// # Errors
///
/// The thread cannot start.
pub fn spawn_watchdog(mut judge: impl FnMut(Instant) + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("health-watchdog".into())
        .spawn(move || {
            loop {
                std::thread::sleep(WATCHDOG_TICK);
                judge(Instant::now());
            }
        })
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collection_older_than_the_limit_is_stale_and_says_what_the_collector_waits_on() {
        let t0 = Instant::now();
        let mut h = Health::new(Duration::from_secs(1), 3);
        h.succeeded(t0);
        h.begin(activity::COLLECTING, t0 + Duration::from_millis(1000));
        let at = |ms| t0 + Duration::from_millis(ms);
        assert_eq!(h.report(None, true, at(3000)).body, "OK\n");
        let r = h.report(None, true, at(3500));
        assert!(!r.ok);
        assert_eq!(
            r.body,
            "KO: stale: the last good collection was 3.5 s ago, more than 3 collection \
             intervals (3.0 s); the collector has been waiting on DCGM for 2.5 s (is the host \
             engine answering?)\n"
        );
        // The collector's own error comes first.
        let r = h.report(Some("collection failed: timeout"), true, at(3500));
        assert_eq!(r.body, "KO: collection failed: timeout\n");
        h.succeeded(at(4000));
        assert!(h.report(None, true, at(4000)).ok);
    }

    #[test]
    fn the_kubelet_has_a_line_of_its_own_and_does_not_fail_health() {
        let t0 = Instant::now();
        let mut h = Health::new(Duration::from_secs(1), 3);
        h.succeeded(t0);
        h.kubelet = Some(KubeletHealth {
            error: Some("pod-resources List timed out after 2s".into()),
            failing_since: Some(t0),
            ..KubeletHealth::new(t0)
        });
        let r = h.report(None, true, t0 + Duration::from_millis(500));
        assert!(r.ok);
        assert_eq!(
            r.body,
            "OK\nkubelet: failing for 0.5 s: pod-resources List timed out after 2s; exporting \
             without pod labels (asked 0.5 s ago)\n"
        );
    }

    #[test]
    fn attribution_sources_say_whether_they_are_fresh_kept_failing_or_stale() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut h = Health::new(Duration::from_secs(1), 3);
        h.succeeded(at(9000));
        let good = KubeletHealth {
            devices: 4,
            last_good: Some(t0),
            ..KubeletHealth::new(t0)
        };
        h.kubelet = Some(good.clone());
        assert_eq!(
            h.report(None, true, at(500)).body,
            "OK\nkubelet: ok, 4 device ids held by pods (listed 0.5 s ago)\n"
        );
        // A pass that does not end: stale past 3 intervals and a List's time, and why.
        h.kubelet = Some(KubeletHealth {
            running_since: Some(at(1000)),
            ..good.clone()
        });
        let r = h.report(None, true, at(6000));
        assert!(r.ok);
        assert!(
            r.body.contains(
                "kubelet: stale: the last pass ended 6.0 s ago, more than 5.0 s; a refresh has \
                 been running for 5.0 s"
            ) && r.body.contains("the pod labels are those it gave"),
            "{}",
            r.body
        );
        // A failure keeps the last good labels for a while, and says so.
        h.kubelet = Some(KubeletHealth {
            error: Some("List timed out".into()),
            failing_since: Some(at(1000)),
            checked: at(1000),
            kept_until: Some(at(3000)),
            ..good.clone()
        });
        assert!(h.report(None, true, at(1500)).body.contains(
            "kubelet: failing for 0.5 s: List timed out; keeping the pod labels of the last \
                 good List (1.5 s ago) for 1.5 s more (asked 0.5 s ago)"
        ));
        assert!(
            h.report(None, true, at(3500))
                .body
                .contains("exporting without pod labels")
        );
        // The HPC directory: ok, failing, stale.
        let board = SourceBoard::default();
        h.kubelet = None;
        h.hpc = Some(board.clone());
        *board.lock().unwrap() = Some(SourceHealth {
            checked: at(8000),
            error: None,
            failing_since: None,
            summary: "2 GPUs or MIG instances with jobs in /jobs".into(),
            problems: 1,
        });
        assert_eq!(
            h.report(None, true, at(9000)).body,
            "OK\nhpc: partial, 2 GPUs or MIG instances with jobs in /jobs; 1 files skipped or \
             cut short (named in the log) (read 1.0 s ago)\n"
        );
        assert!(
            h.report(None, true, at(11500))
                .body
                .contains("hpc: stale: the job mapping was last read 3.5 s ago, more than 3.0 s")
        );
        board.lock().unwrap().as_mut().unwrap().error = Some("No such file".into());
        board.lock().unwrap().as_mut().unwrap().failing_since = Some(at(7000));
        assert!(h.report(None, true, at(9000)).body.contains(
            "hpc: failing for 2.0 s: No such file; exporting without hpc_job labels (read 1.0 s ago)"
        ));
    }

    #[test]
    fn an_engine_that_does_not_answer_is_named_instead_of_starting() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut h = Health::new(Duration::from_secs(1), 3);
        h.engine = Some("127.0.0.1:5555".into());
        h.begin(activity::CONNECTING, t0);
        let starting = Some("DCGM is starting");
        assert_eq!(
            h.report(starting, false, at(1500)).body,
            "KO: DCGM is starting\n"
        );
        let r = h.report(starting, false, at(2500));
        assert!(!r.ok);
        assert_eq!(
            r.body,
            "KO: hostengine 127.0.0.1:5555 is not answering: DCGM has been connecting to it for \
             2.5 s (a host engine that accepts connections and never answers, or a stopped \
             one?); DCGM is starting\n"
        );
        // Working, but the current call is late: still 200 until stale, and named.
        h.succeeded(at(3000));
        h.begin(activity::COLLECTING, at(3100));
        let r = h.report(None, true, at(5500));
        assert!(r.ok);
        assert_eq!(
            r.body,
            "OK\nhostengine 127.0.0.1:5555: not answering: a DCGM call has been waiting on it \
             for 2.4 s; serving the last good collection\n"
        );
        let r = h.report(None, true, at(6500));
        assert!(!r.ok);
        assert!(
            r.body.contains(
                "(is the host engine answering? the call waits on hostengine 127.0.0.1:5555)"
            ),
            "{}",
            r.body
        );
        // Several engines: each line judged when asked.
        let mut h = Health::new(Duration::from_secs(1), 3);
        h.engines = vec![
            EngineState {
                name: "a:5555".into(),
                error: None,
                at: Some(t0),
                busy: None,
            },
            EngineState {
                name: "b:5555".into(),
                error: None,
                at: None,
                busy: Some((t0, activity::CONNECTING)),
            },
        ];
        assert_eq!(
            h.report(None, true, at(1000)).body,
            "OK\nhostengine a:5555: ok\nhostengine b:5555: starting\n"
        );
        assert_eq!(
            h.report(None, true, at(2500)).body,
            "OK\nhostengine a:5555: ok\nhostengine b:5555: not answering: DCGM has been \
             connecting to it for 2.5 s\n"
        );
        // None works: the reason names the one not answering.
        h.engines[0].at = None;
        let r = h.report(Some("DCGM is starting"), false, at(2500));
        assert!(
            r.body.starts_with(
                "KO: DCGM is starting; hostengine b:5555 is not answering: DCGM has been \
                 connecting to it for 2.5 s\n"
            ),
            "{}",
            r.body
        );
    }
}
