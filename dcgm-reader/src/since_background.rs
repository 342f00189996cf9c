//! Latest reads between since-last-call polls, through a host engine that samples faster than
//! the reader polls.
//!
//! A host engine samples a field at the fastest interval among all its watchers. When another
//! client of a shared nv-hostengine watches the reader's fields faster than the reader polls
//! (or the reader polls slower than its own watches), every pair holds several new samples at
//! each poll. One latest read shows only the newest, and the library's since-read costs one
//! request per (entity, field): on libdcgm 4.6.0 through nv-hostengine each costs about what a
//! latest read of all 30 default fields costs, and requests sent side by side, on one
//! connection or on several, are no faster (measured: the engine answers them one at a time).
//!
//! So the reader reads the latest values in the background at the fastest sampling interval
//! of its pairs, where every sample is the newest at one read. Each read is judged by the same
//! tracker as the caller's polls, under one lock, so a sample is delivered once whichever read
//! saw it; a read that finds a gap of 1.5 intervals or more takes the per-pair requests of the
//! fast path for those pairs, and a read the fast path cannot answer is left to the caller's
//! next poll (the since-read then delivers what the background did not). What the background
//! reads deliver waits for the caller's next poll, which returns it before anything newer.
//!
//! The background reads start when a poll through a host engine finds more than a quarter of
//! the pairs holding several new samples, run until the reader reconnects or goes, and stop
//! (to start again at the next such poll) when [`PENDING_MAX`] samples wait undelivered
//! because nobody polls. [`crate::ReaderBuilder::since_background`] turns them off.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use dcgm::{Entity, Error, FieldId, FieldValue, Handle, Result, SampleBuffer};

use crate::since::{PER_PAIR_MAX, Plan, SinceTracker, per_pair_samples};

/// The shortest interval between background reads: faster sampling than this is left to the
/// since-read (a read through a host engine takes a few hundred microseconds).
const MIN_PERIOD: Duration = Duration::from_millis(5);

/// At most this many samples wait for the caller's poll; past it the background reads stop,
/// and what was not read is delivered by the caller's since-read.
pub(crate) const PENDING_MAX: usize = 1 << 16;

/// After this many background reads in a row that the fast path could not answer (the
/// engine samples faster than the reads follow), the reads stop until the next interval
/// check: they would only add to the since-reads' cost.
const GIVE_UP_AFTER: u32 = 32;

/// How one latest read was answered.
pub(crate) enum Answer {
    /// The fast path delivered these samples.
    Delivered(Vec<FieldValue>),
    /// The since-read must answer.
    Slow,
    /// The since-read must answer: more than a quarter of the pairs hold several new samples.
    Crowded,
}

/// What the caller's polls and the background reads share.
pub(crate) struct SinceCore {
    /// What has been delivered.
    pub(crate) tracker: SinceTracker,
    /// The latest read being judged (kept for its allocation).
    pub(crate) latest: Vec<FieldValue>,
    /// The C records of the per-pair requests (about 260 KiB, allocated on first use).
    buffer: Option<SampleBuffer>,
    /// Samples the background reads delivered, for the caller's next poll.
    pub(crate) pending: Vec<FieldValue>,
    /// Why the background reads stopped, for the caller's next poll.
    pub(crate) failed: Option<Error>,
    /// When a background read last left its values in `latest` for the caller's poll.
    pub(crate) background_latest: Option<Instant>,
    /// The background reads' interval: the fastest sampling interval of the pairs at the
    /// last check, at least [`MIN_PERIOD`].
    pub(crate) background_period: Duration,
    /// Set when the background reads gave up (see [`GIVE_UP_AFTER`]); cleared by the
    /// caller's next interval check.
    pub(crate) background_gave_up: bool,
    /// Background reads answered, and the time they took.
    pub(crate) background_reads: u64,
    pub(crate) background_busy: Duration,
}

impl SinceCore {
    pub(crate) fn new(tracker: SinceTracker) -> Self {
        Self {
            tracker,
            latest: Vec::new(),
            buffer: None,
            pending: Vec::new(),
            failed: None,
            background_latest: None,
            background_period: Duration::ZERO,
            background_gave_up: false,
            background_reads: 0,
            background_busy: Duration::ZERO,
        }
    }

    /// Judges `self.latest`: the fast path's samples (recorded as delivered), or why the
    /// since-read must answer. With `defer` (a background read), the pairs that need a
    /// request of their own are left for the caller's poll while they can wait (see
    /// [`SinceTracker::can_wait`]): one request per poll rather than one per read.
    pub(crate) fn answer(&mut self, handle: &Handle, defer: bool) -> Result<Answer> {
        let (fresh, mut per_pair) = match self.tracker.plan(&self.latest) {
            Plan::Fast { fresh, per_pair } => (fresh, per_pair),
            Plan::Slow => return Ok(Answer::Slow),
            Plan::Crowded => return Ok(Answer::Crowded),
        };
        if defer
            && per_pair
                .iter()
                .all(|&i| self.tracker.can_wait(&self.latest[i]))
        {
            per_pair.clear();
        }
        let buffer = self
            .buffer
            .get_or_insert_with(|| SampleBuffer::new(PER_PAIR_MAX));
        let Some(extra) = per_pair_samples(handle, &self.tracker, &self.latest, &per_pair, buffer)?
        else {
            return Ok(Answer::Slow);
        };
        let mut out = Vec::with_capacity(fresh.len() + extra.len());
        for &i in &fresh {
            self.tracker.delivered(&self.latest[i]);
            out.push(self.latest[i].clone());
        }
        out.extend(self.tracker.take_new(&extra));
        self.tracker.seen(&self.latest);
        Ok(Answer::Delivered(out))
    }
}

/// The background reads' interval for a fastest sampling interval of `fastest`.
pub(crate) fn clamp_period(fastest: Duration) -> Duration {
    fastest.max(MIN_PERIOD)
}

/// The shared state, locked by whichever read runs.
pub(crate) type Shared = Arc<Mutex<SinceCore>>;

/// Locks the shared state. A panic while it was held (none is expected: nothing in a read
/// panics) leaves it as consistent as after any read, so the lock is taken anyway.
pub(crate) fn lock(shared: &Shared) -> MutexGuard<'_, SinceCore> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The background reads of one connection; stopped and joined when dropped.
pub(crate) struct Background {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    /// Starts reading the latest values of `entities` × `fields` every `period` (at least
    /// [`MIN_PERIOD`]) on a thread of its own, through a clone of `handle`.
    pub(crate) fn start(
        handle: &Handle,
        shared: &Shared,
        entities: Vec<Entity>,
        fields: Vec<FieldId>,
        period: Duration,
    ) -> std::io::Result<Self> {
        let period = clamp_period(period);
        let stop = Arc::new(AtomicBool::new(false));
        lock(shared).background_period = period;
        let (handle, shared, flag) = (handle.clone(), Arc::clone(shared), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name("dcgm-reader-since".into())
            .spawn(move || run(&handle, &shared, &entities, &fields, period, &flag))?;
        log::debug!("since: background latest reads every {period:?}");
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }

    /// Whether the reads still run (they stop on an error or when too much waits).
    pub(crate) fn running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            // A read in flight finishes first (one request); the thread cannot panic out
            // of `run`, so the join result says nothing more.
            let _ = t.join();
        }
    }
}

fn run(
    handle: &Handle,
    shared: &Shared,
    entities: &[Entity],
    fields: &[FieldId],
    mut period: Duration,
    stop: &AtomicBool,
) {
    let system = handle.system();
    let mut next = Instant::now() + period;
    let mut unanswered = 0;
    loop {
        // Parked until the next read is due, or woken early to stop.
        while let Some(wait) = next.checked_duration_since(Instant::now()) {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            std::thread::park_timeout(wait);
        }
        if stop.load(Ordering::Relaxed) {
            return;
        }
        next += period;
        if next < Instant::now() {
            // Far behind (a stalled engine): start the schedule afresh.
            next = Instant::now() + period;
        }
        let mut core = lock(shared);
        let began = Instant::now();
        let mut latest = std::mem::take(&mut core.latest);
        let read = system.entities_latest_values_into(entities, fields, &mut latest);
        core.latest = latest;
        let answered = read.and_then(|()| core.answer(handle, true));
        core.background_latest = Some(began);
        core.background_busy += began.elapsed();
        // The caller's interval checks keep the period at the fastest sampling interval.
        period = core.background_period;
        match answered {
            Ok(Answer::Delivered(vals)) => {
                unanswered = 0;
                core.background_reads += 1;
                core.pending.extend(vals);
                if core.pending.len() >= PENDING_MAX {
                    log::debug!(
                        "since: {PENDING_MAX} samples wait for a poll: background reads stop"
                    );
                    return;
                }
            }
            // Left to the caller's since-read.
            Ok(Answer::Slow | Answer::Crowded) => {
                unanswered += 1;
                if unanswered >= GIVE_UP_AFTER {
                    log::debug!(
                        "since: {GIVE_UP_AFTER} background reads in a row fell behind the \
                         sampling: they stop until the next interval check"
                    );
                    core.background_gave_up = true;
                    return;
                }
            }
            Err(e) => {
                log::debug!("since: background read failed, stopping: {e}");
                core.failed = Some(e);
                return;
            }
        }
    }
}
