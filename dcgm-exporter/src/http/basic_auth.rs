//! Basic authentication with bcrypt hashes, hardened as exporter-toolkit is and further:
//!
//! - **One verification at a time**, on one thread of its own, fed by a bounded queue: an auth
//!   flood neither grows threads nor takes the CPU from scrapes, and past the queue a request
//!   is answered 503 at once.
//! - **Answers cached**: a credential that passed is not verified again; one that failed is
//!   refused from the cache (each cache is bounded, and emptied when full).
//! - **No user enumeration by timing**: an unknown user is verified against a decoy hash made
//!   on first use at the highest configured cost, and a check against a cheaper user's hash is
//!   padded (by sleeping, not by hashing) to the time a check at the highest cost takes, as
//!   measured here. Users of different costs are therefore indistinguishable from each other
//!   and from unknown users.
//! - **Costs above [`MAX_COST`] are refused** at start-up: one verification at cost 15 takes
//!   about 2 s of CPU, at 31 about a day.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use base64::Engine as _;
use hyper::header::HeaderValue;

/// The highest bcrypt cost accepted in a web configuration.
pub const MAX_COST: u32 = 14;
/// Verifications waiting for the bcrypt thread; past it, requests get 503 at once.
pub const QUEUE: usize = 16;
/// Credentials remembered as passed, and as failed.
const PASSED_CACHE: usize = 100;
const FAILED_CACHE: usize = 4096;
const DECOY_PASSWORD: &str = "dcgm-rs: no such user";

/// What a request's `Authorization` header needs.
pub(crate) enum Check {
    /// Authenticated (no users configured, or a cached pass).
    Pass,
    /// Refused without a verification (no or malformed header, a cached failure).
    Deny,
    /// A bcrypt verification of these base64 credentials.
    Verify(String),
}

/// The answer of a verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The credentials are good.
    Pass,
    /// They are not.
    Deny,
    /// Too many verifications are waiting: try again later (503).
    Busy,
}

struct Job {
    b64: String,
    reply: tokio::sync::oneshot::Sender<(bool, Duration)>,
}

/// The configured users and everything that protects their verification.
pub struct BasicAuth {
    users: BTreeMap<String, (String, u32)>,
    max_cost: u32,
    passed: Mutex<HashSet<String>>,
    failed: Mutex<HashSet<String>>,
    decoy: OnceLock<String>,
    /// How long a verification at `max_cost` takes here, in nanoseconds (a moving average of
    /// the ones measured; 0 before the first).
    max_cost_nanos: AtomicU64,
    queue: OnceLock<SyncSender<Job>>,
    verifications: AtomicU64,
}

impl std::fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasicAuth")
            .field("users", &self.users.keys().collect::<Vec<_>>())
            .field("max_cost", &self.max_cost)
            .finish()
    }
}

/// The cost of a well-formed bcrypt hash, or why it is not one (or not a usable one).
pub fn bcrypt_cost(hash: &str) -> Result<u32, String> {
    let parts: Vec<&str> = hash.split('$').collect();
    let [empty, version, cost, rest] = parts[..] else {
        return Err("not of the form $2b$NN$<53 characters>".into());
    };
    if !empty.is_empty() || !matches!(version, "2a" | "2b" | "2x" | "2y") {
        return Err("no $2a$, $2b$, $2x$ or $2y$ prefix".into());
    }
    let cost: u32 = match cost.parse() {
        Ok(c) if cost.len() == 2 && (4..=31).contains(&c) => c,
        _ => return Err(format!("cost {cost:?} is not two digits from 04 to 31")),
    };
    if rest.len() != 53
        || !rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'/')
    {
        return Err("salt and hash are not 53 characters of bcrypt's base64".into());
    }
    if cost > MAX_COST {
        return Err(format!(
            "cost {cost} is above {MAX_COST}: each check would take seconds of CPU; \
             hash the password again with a cost from 10 to {MAX_COST} \
             (for example htpasswd -nBC 12 USER)"
        ));
    }
    Ok(cost)
}

impl BasicAuth {
    /// No users: every request passes.
    pub fn disabled() -> Self {
        Self::with_users(BTreeMap::new())
    }

    /// The users of a web configuration (user name → bcrypt hash).
    ///
    /// # Errors
    ///
    /// A hash that is not bcrypt, or whose cost is above [`MAX_COST`], naming the user.
    pub fn new(users: BTreeMap<String, String>) -> Result<Self, String> {
        let mut checked = BTreeMap::new();
        for (user, hash) in users {
            let cost = bcrypt_cost(&hash).map_err(|e| {
                format!("the password of user {user:?} is not a usable bcrypt hash: {e}")
            })?;
            checked.insert(user, (hash, cost));
        }
        Ok(Self::with_users(checked))
    }

    fn with_users(users: BTreeMap<String, (String, u32)>) -> Self {
        let max_cost = users.values().map(|(_, c)| *c).max().unwrap_or(0);
        Self {
            users,
            max_cost,
            passed: Mutex::new(HashSet::new()),
            failed: Mutex::new(HashSet::new()),
            decoy: OnceLock::new(),
            max_cost_nanos: AtomicU64::new(0),
            queue: OnceLock::new(),
            verifications: AtomicU64::new(0),
        }
    }

    /// Verifications run so far (the decoy's and the timing measurement's included).
    pub fn verifications(&self) -> u64 {
        self.verifications.load(Ordering::Relaxed)
    }

    /// What the `Authorization` header needs, answered from the caches where possible.
    pub(crate) fn check(&self, header: Option<&HeaderValue>) -> Check {
        if self.users.is_empty() {
            return Check::Pass;
        }
        let Some(h) = header.and_then(|h| h.to_str().ok()) else {
            return Check::Deny;
        };
        // The scheme is case-insensitive (RFC 9110 section 11.1).
        let Some((scheme, b64)) = h.trim().split_once(' ') else {
            return Check::Deny;
        };
        if !scheme.eq_ignore_ascii_case("basic") {
            return Check::Deny;
        }
        let b64 = b64.trim();
        if lock(&self.passed).contains(b64) {
            return Check::Pass;
        }
        if lock(&self.failed).contains(b64) {
            return Check::Deny;
        }
        Check::Verify(b64.to_string())
    }

    /// Verifies credentials on the bcrypt thread and pads a cheap check to the time of the
    /// most expensive one.
    pub(crate) async fn verify(self: &Arc<Self>, b64: String) -> Verdict {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let queue = self
            .queue
            .get_or_init(|| start_thread(Arc::downgrade(self)));
        match queue.try_send(Job { b64, reply: tx }) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => return Verdict::Busy,
            Err(TrySendError::Disconnected(_)) => return Verdict::Busy,
        }
        let Ok((ok, pad)) = rx.await else {
            return Verdict::Busy;
        };
        if !pad.is_zero() {
            tokio::time::sleep(pad).await;
        }
        if ok { Verdict::Pass } else { Verdict::Deny }
    }

    /// One verification, on the bcrypt thread: whether it passed, and how long to wait before
    /// answering so that it took as long as one at the highest cost.
    fn verify_now(&self, b64: &str) -> (bool, Duration) {
        let raw = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .ok()
            .and_then(|r| String::from_utf8(r).ok());
        let (user, pass) = raw
            .as_deref()
            .and_then(|r| r.split_once(':'))
            .unwrap_or(("", ""));
        let decoy = self.decoy_hash();
        let (hash, cost, known) = match self.users.get(user) {
            Some((h, c)) if raw.is_some() => (h.as_str(), *c, true),
            _ => (decoy, self.max_cost, false),
        };
        let started = Instant::now();
        let ok = self.bcrypt(pass, hash) && known;
        let took = started.elapsed();
        let pad = if cost >= self.max_cost {
            self.measured(took);
            Duration::ZERO
        } else {
            self.max_cost_time().saturating_sub(took)
        };
        let (cache, cap) = if ok {
            (&self.passed, PASSED_CACHE)
        } else {
            (&self.failed, FAILED_CACHE)
        };
        let mut c = lock(cache);
        if c.len() >= cap {
            c.clear();
        }
        c.insert(b64.to_string());
        (ok, pad)
    }

    fn bcrypt(&self, pass: &str, hash: &str) -> bool {
        self.verifications.fetch_add(1, Ordering::Relaxed);
        bcrypt::verify(pass, hash).unwrap_or(false)
    }

    /// The decoy hash, made on first use at the highest configured cost, and the first
    /// measurement of a check at that cost.
    fn decoy_hash(&self) -> &str {
        self.decoy.get_or_init(|| {
            let hash = bcrypt::hash(DECOY_PASSWORD, self.max_cost.max(4))
                .unwrap_or_else(|_| String::new());
            let started = Instant::now();
            self.bcrypt(DECOY_PASSWORD, &hash);
            self.measured(started.elapsed());
            hash
        })
    }

    /// Folds one measured check at the highest cost into the running average (weight 1/4).
    fn measured(&self, took: Duration) {
        let new = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        let old = self.max_cost_nanos.load(Ordering::Relaxed);
        let avg = if old == 0 {
            new
        } else {
            old - old / 4 + new / 4
        };
        self.max_cost_nanos.store(avg, Ordering::Relaxed);
    }

    fn max_cost_time(&self) -> Duration {
        Duration::from_nanos(self.max_cost_nanos.load(Ordering::Relaxed))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The bcrypt thread: one verification at a time, until the configuration is dropped.
fn start_thread(auth: Weak<BasicAuth>) -> SyncSender<Job> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(QUEUE);
    let spawned = std::thread::Builder::new()
        .name("bcrypt".into())
        .spawn(move || {
            while let Ok(job) = rx.recv() {
                let Some(auth) = auth.upgrade() else { return };
                let answer = auth.verify_now(&job.b64);
                drop(auth);
                let _ = job.reply.send(answer);
            }
        });
    if let Err(e) = spawned {
        // Without the thread every verification answers Busy (503): logged, never a panic.
        log::error!("cannot start the bcrypt thread: {e}; basic auth answers 503");
    }
    tx
}
