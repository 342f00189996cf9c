//! The library-owned thread that delivers policy violations to registered callbacks.
//!
//! It starts at the first `dcgmPolicyRegister_v2`, looks for new violations every 20 ms for
//! engines in AUTO mode and whenever `dcgmPolicyTrigger` asks (MANUAL mode), and calls the
//! client's callbacks without holding the simulator lock. `stop()` (called by `dcgmShutdown`)
//! ends and joins it.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::violations::{collect, still_registered};

/// How often the thread looks for violations on AUTO engines.
pub const PERIOD: Duration = Duration::from_millis(20);
/// Longest wait of `dcgmPolicyTrigger` and `dcgmPolicyUnregister` for the thread.
pub const WAIT_LIMIT: Duration = Duration::from_secs(2);

#[derive(Debug, Default)]
struct Ctl {
    stop: bool,
    /// Manual passes asked for / completed.
    requested: u64,
    done: u64,
}

#[derive(Debug, Default)]
struct Shared {
    ctl: Mutex<Ctl>,
    cv: Condvar,
}

struct Worker {
    shared: Arc<Shared>,
    handle: JoinHandle<()>,
}

static WORKER: Mutex<Option<Worker>> = Mutex::new(None);

/// Whether a callback is running, so that an unregistration can wait for it to finish.
static BUSY: Mutex<bool> = Mutex::new(false);
static BUSY_CV: Condvar = Condvar::new();

thread_local! {
    static IS_WORKER: Cell<bool> = const { Cell::new(false) };
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether the calling thread is the policy thread (a callback calling back into the API).
pub fn on_worker_thread() -> bool {
    IS_WORKER.with(Cell::get)
}

/// Starts the thread unless it runs already.
pub fn ensure_running() {
    let mut w = relock(&WORKER);
    if w.as_ref().is_some_and(|w| !w.handle.is_finished()) {
        return;
    }
    let shared = Arc::new(Shared::default());
    let s = shared.clone();
    let handle = std::thread::Builder::new()
        .name("dcgm-sim-policy".into())
        .spawn(move || run(&s));
    match handle {
        Ok(handle) => *w = Some(Worker { shared, handle }),
        Err(e) => eprintln!("dcgm-sim: cannot start the policy thread: {e}"),
    }
}

/// Stops the thread (at `dcgmShutdown`) and waits for it, unless called from a callback.
pub fn stop() {
    let worker = relock(&WORKER).take();
    let Some(w) = worker else {
        return;
    };
    relock(&w.shared.ctl).stop = true;
    w.shared.cv.notify_all();
    if !on_worker_thread() {
        let _ = w.handle.join();
    }
}

/// Asks for a pass now (`dcgmPolicyTrigger`) and waits until it has run, at most
/// [`WAIT_LIMIT`]. Returns immediately when no thread runs or when called from a callback.
pub fn trigger() {
    let shared = relock(&WORKER).as_ref().map(|w| w.shared.clone());
    let Some(sh) = shared else {
        return;
    };
    let target = {
        let mut c = relock(&sh.ctl);
        c.requested += 1;
        c.requested
    };
    sh.cv.notify_all();
    if on_worker_thread() {
        return;
    }
    let deadline = Instant::now() + WAIT_LIMIT;
    let mut c = relock(&sh.ctl);
    while c.done < target && !c.stop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        c = sh
            .cv
            .wait_timeout(c, left)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
}

/// Waits until no callback runs, at most `limit`; false if one still runs.
pub fn wait_idle(limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let mut busy = relock(&BUSY);
    while *busy {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        busy = BUSY_CV
            .wait_timeout(busy, left)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
    true
}

fn set_busy(v: bool) {
    *relock(&BUSY) = v;
    BUSY_CV.notify_all();
}

fn run(sh: &Shared) {
    IS_WORKER.with(|w| w.set(true));
    loop {
        let (target, done) = {
            let mut c = relock(&sh.ctl);
            if !c.stop && c.requested == c.done {
                c = sh
                    .cv
                    .wait_timeout(c, PERIOD)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            if c.stop {
                break;
            }
            (c.requested, c.done)
        };
        let manual = target > done;
        let deliveries = catch_unwind(AssertUnwindSafe(|| {
            let mut s = crate::sim::lock();
            collect(&mut s, manual)
        }))
        .unwrap_or_default();
        for d in deliveries {
            if relock(&sh.ctl).stop {
                break;
            }
            // Marked busy before the check, so an unregistration either removes the
            // registration before the check or waits for this callback to return.
            set_busy(true);
            let live = {
                let s = crate::sim::lock();
                still_registered(&s, &d)
            };
            if live {
                let _ = catch_unwind(AssertUnwindSafe(|| d.deliver()));
            }
            set_busy(false);
        }
        if manual {
            let mut c = relock(&sh.ctl);
            c.done = c.done.max(target);
            drop(c);
            sh.cv.notify_all();
        }
    }
    // Wake any trigger still waiting.
    sh.cv.notify_all();
}
