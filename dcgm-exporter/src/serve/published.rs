//! The state the server answers from (`/metrics`, `/health`), as the collector threads publish
//! it: directly with one engine, or merged from each engine's slot with several.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dcgm_exporter::health::{self, Health, SourceBoard};
use dcgm_exporter::http::server::Published;
use dcgm_exporter::merge::merge_expositions;

use super::fail;
use super::settings::Settings;

/// One host engine's last collection, when several are read.
#[derive(Clone, Default)]
struct Slot {
    /// The last good exposition (empty while the engine fails).
    text: String,
    /// Why it is failing; `None` once it works.
    error: Option<String>,
    /// When the last collection worked.
    at: Option<Instant>,
    /// What its collector thread is doing, since when (for `/health`: an engine that does not
    /// answer).
    busy: Option<(Instant, &'static str)>,
}

/// Several host engines' collections, merged into one exposition.
pub(crate) struct Engines {
    published: Arc<Mutex<Published>>,
    slots: Mutex<Vec<Slot>>,
    names: Vec<String>,
    /// An engine whose last good collection is older is left out (a host engine that stopped
    /// answering holds its collector inside a DCGM call).
    max_age: Duration,
}

impl Engines {
    /// The slots of the engines `names`, each left out once its last good collection is older
    /// than `max_age`, merged into `published`.
    pub(crate) fn new(
        published: Arc<Mutex<Published>>,
        names: Vec<String>,
        max_age: Duration,
    ) -> Engines {
        Engines {
            published,
            slots: Mutex::new(vec![Slot::default(); names.len()]),
            names,
            max_age,
        }
    }

    /// Each engine's state for `/health` (its line is judged when asked).
    fn states(&self, slots: &[Slot]) -> Vec<health::EngineState> {
        self.names
            .iter()
            .zip(slots)
            .map(|(name, s)| health::EngineState {
                name: name.clone(),
                error: s.error.clone(),
                at: s.at,
                busy: s.busy,
            })
            .collect()
    }

    /// Publishes the merge of the engines that work, `/health`'s line for each, and an error
    /// when none does (then `/metrics` and `/health` answer 503).
    fn publish(&self, slots: &[Slot]) {
        let now = Instant::now();
        let fresh = |s: &Slot| {
            s.error.is_none()
                && s.at
                    .is_some_and(|at| now.saturating_duration_since(at) <= self.max_age)
        };
        let texts: Vec<&str> = slots
            .iter()
            .filter(|s| fresh(s))
            .map(|s| s.text.as_str())
            .collect();
        let error = if texts.is_empty() {
            let why: Vec<String> = self
                .names
                .iter()
                .zip(slots)
                .filter_map(|(n, s)| s.error.as_ref().map(|e| format!("{n}: {e}")))
                .collect();
            Some(if why.is_empty() {
                "DCGM is starting".to_string()
            } else {
                format!("no host engine works ({})", why.join("; "))
            })
        } else {
            None
        };
        let mut guard = self.published.lock().unwrap_or_else(|p| p.into_inner());
        let p = &mut *guard;
        p.health.engines = self.states(slots);
        if error.is_none() {
            let mut text = merge_expositions(&texts);
            health::write_last_success(&mut text, std::time::SystemTime::now());
            p.text = text;
            p.version = p.version.wrapping_add(1);
            p.ready = true;
            p.health.succeeded(Instant::now());
        } else {
            p.health.end();
        }
        p.error = error;
        p.health.note(p.error.as_deref(), p.ready, Instant::now());
    }
}

/// Where a collector thread publishes: the server's state directly (one engine), or its slot
/// of several.
pub(crate) enum Out<'a> {
    One(&'a Mutex<Published>),
    Many { me: usize, engines: &'a Engines },
}

impl Out<'_> {
    /// The collector thread starts `what` (for the reason `/health` gives when it is stale).
    pub(crate) fn begin(&self, what: &'static str) {
        match self {
            Out::One(p) => begin(p, what),
            Out::Many { me, engines } => {
                let mut slots = engines.slots.lock().unwrap_or_else(|p| p.into_inner());
                slots[*me].busy = Some((Instant::now(), what));
                let states = engines.states(&slots);
                let mut p = engines.published.lock().unwrap_or_else(|p| p.into_inner());
                p.health.engines = states;
            }
        }
    }

    /// The collector's error.
    pub(crate) fn failed(&self, error: String) {
        match self {
            Out::One(p) => set_state(p, Some(error)),
            Out::Many { me, engines } => {
                let mut slots = engines.slots.lock().unwrap_or_else(|p| p.into_inner());
                let s = &mut slots[*me];
                if s.error.as_deref() != Some(&error) {
                    log::warn!("hostengine {}: {error}", engines.names[*me]);
                }
                s.error = Some(error);
                s.text.clear();
                s.busy = None;
                engines.publish(&slots);
            }
        }
    }

    /// A collection worked: publishes `buf` (swapped out).
    pub(crate) fn collected(&self, buf: &mut String) {
        match self {
            Out::One(published) => {
                health::write_last_success(buf, std::time::SystemTime::now());
                {
                    let mut p = published.lock().unwrap_or_else(|p| p.into_inner());
                    std::mem::swap(&mut p.text, buf);
                    p.version = p.version.wrapping_add(1);
                    p.ready = true;
                    p.health.succeeded(Instant::now());
                }
                set_state(published, None);
            }
            Out::Many { me, engines } => {
                let mut slots = engines.slots.lock().unwrap_or_else(|p| p.into_inner());
                let s = &mut slots[*me];
                if s.error.take().is_some() {
                    log::info!("hostengine {}: collections work again", engines.names[*me]);
                }
                s.at = Some(Instant::now());
                s.busy = None;
                std::mem::swap(&mut s.text, buf);
                engines.publish(&slots);
            }
        }
    }
}

/// The collector's error (`None`: the collection worked), and `/health`'s verdict logged
/// when it changes.
fn set_state(published: &Mutex<Published>, error: Option<String>) {
    let mut guard = published.lock().unwrap_or_else(|p| p.into_inner());
    let p = &mut *guard;
    if error.is_some() {
        p.health.end();
    }
    p.error = error;
    p.health.note(p.error.as_deref(), p.ready, Instant::now());
}

/// The collector thread starts `what` (for the reason `/health` gives when it is stale).
fn begin(published: &Mutex<Published>, what: &'static str) {
    let mut p = published.lock().unwrap_or_else(|p| p.into_inner());
    p.health.begin(what, Instant::now());
}

/// The state before the first collection: "DCGM is starting" (503 from `/metrics` and
/// `/health`), with `/health`'s engine and HPC board.
pub(crate) fn starting(settings: &Settings, hpc: Option<SourceBoard>) -> Arc<Mutex<Published>> {
    let mut health = Health::new(settings.interval, settings.cli.health_max_age_intervals);
    health.engine = settings.engine.clone();
    let starting = "DCGM is starting";
    health.prime(Some(starting), false, Instant::now());
    health.hpc = hpc;
    Arc::new(Mutex::new(Published {
        error: Some(starting.into()),
        health,
        ..Published::default()
    }))
}

/// Starts the thread that judges `/health` again while no collection publishes (the verdict
/// logged when it changes). A thread that cannot start is exit status 1.
pub(crate) fn spawn_watchdog(published: &Arc<Mutex<Published>>) -> Result<(), ExitCode> {
    let p = published.clone();
    health::spawn_watchdog(move |now| {
        let mut guard = p.lock().unwrap_or_else(|p| p.into_inner());
        let p = &mut *guard;
        p.health.note(p.error.as_deref(), p.ready, now);
    })
    .map_err(|e| {
        fail(
            1,
            format_args!("cannot start the health watchdog thread: {e}"),
        )
    })
}
