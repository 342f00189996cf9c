//! The process-wide simulator state behind the C API: initialisation, the embedded engine and
//! the simulated host engines by address, and the client connections to them (connecting,
//! late binding to a host engine that starts listening later, host engines that restart or go
//! away).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use dcgm_sys::*;

use crate::config::SimConfig;
use crate::engine::{Engine, now_us};
use crate::listener_probe::{Answer, Endpoint, Link, parse_endpoint};

/// A client connection.
#[derive(Debug, Clone, Default)]
pub struct Connection {
    /// `embedded` or the normalised host-engine address.
    pub engine: String,
    pub calls: u64,
    pub broken: bool,
    /// The real host engine (listener) this connection reached, watched for its going away.
    pub link: Option<std::sync::Arc<crate::listener_probe::Link>>,
    /// A configured local address reached while no host engine answered there: probed again
    /// now and then, and bound to a host engine that starts listening there later.
    pub late_bind: Option<crate::listener_probe::Endpoint>,
    /// A listener at that address that accepted and has not answered DCGM's handshake yet:
    /// looked at (without waiting) on each call, and bound to once it answers.
    pub pending: Option<std::sync::Arc<crate::listener_probe::Link>>,
    /// When `late_bind` was last probed.
    pub last_probe: Option<std::time::Instant>,
    /// `persistAfterDisconnect`: the connection's groups and field groups outlive it.
    pub persist: bool,
    /// Groups and field groups this connection created (removed when it disconnects).
    pub owned_groups: Vec<usize>,
    pub owned_field_groups: Vec<usize>,
}

/// Which connection made the last call on an engine, and the group ids that existed then:
/// ids allocated since were created by that call.
#[derive(Debug, Clone, Copy)]
pub struct LastCaller {
    pub handle: dcgmHandle_t,
    pub next_group: usize,
    pub next_field_group: usize,
}

/// Everything the simulator holds for the process.
#[derive(Debug, Default)]
pub struct Sim {
    pub initialized: bool,
    pub cfg: Option<SimConfig>,
    /// Config set through `dcgmSimConfigure`, used instead of the environment.
    pub override_cfg: Option<SimConfig>,
    pub engines: HashMap<String, Engine>,
    pub connections: HashMap<dcgmHandle_t, Connection>,
    pub next_handle: dcgmHandle_t,
    /// Host engines that are restarting: address → time they accept connections again. Kept
    /// across `dcgmShutdown` (the host engine is another process).
    pub down_until: HashMap<String, i64>,
    /// The drop fault already fired (once per configuration, across `dcgmInit`s).
    pub dropped_once: bool,
    pub statuses: HashMap<dcgmStatus_t, Vec<dcgmErrorInfo_t>>,
    pub next_status: dcgmStatus_t,
    /// Engine address → the listening socket (inode) of the real host engine it stands for.
    pub listeners: HashMap<String, Option<u64>>,
    /// Engine address → the connection that made its last call.
    pub last_caller: HashMap<String, LastCaller>,
}

static SIM: Mutex<Option<Sim>> = Mutex::new(None);

/// Locks the simulator (a poisoned lock is recovered: state stays consistent per call).
pub fn lock() -> SimGuard {
    let mut g = SIM.lock().unwrap_or_else(|p| p.into_inner());
    if g.is_none() {
        *g = Some(Sim {
            next_handle: 1,
            next_status: 1,
            ..Sim::default()
        });
    }
    SimGuard(g)
}

/// The locked simulator.
pub struct SimGuard(MutexGuard<'static, Option<Sim>>);

impl std::ops::Deref for SimGuard {
    type Target = Sim;
    fn deref(&self) -> &Sim {
        self.0.as_ref().expect("initialised in lock()")
    }
}

impl std::ops::DerefMut for SimGuard {
    fn deref_mut(&mut self) -> &mut Sim {
        self.0.as_mut().expect("initialised in lock()")
    }
}

/// How a client asked to connect: the `dcgmConnect_v2`/`_v3` parameters.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnectOptions {
    /// `timeoutMs`: how long to wait for a host engine to accept (0: libdcgm's 5 s).
    pub timeout_ms: u32,
    /// `persistAfterDisconnect`: keep the connection's groups and field groups after it.
    pub persist: bool,
}

/// libdcgm 4.6.0's connect timeout when the caller gives none.
const DEFAULT_CONNECT_TIMEOUT_MS: u32 = 5000;
/// libdcgm 4.6.0 waits this long between two connect attempts.
const CONNECT_RETRY: Duration = Duration::from_millis(50);
/// A connection to a configured address that no host engine answered at probes it again at
/// most this often (a host engine may start listening there after the client connected).
const LATE_BIND_EVERY: Duration = Duration::from_millis(10);
/// How long one such probe (of a local address) may take, the connect and the wait for the
/// handshake's answer each (a local nv-hostengine answers within a millisecond).
const LATE_BIND_TIMEOUT: Duration = Duration::from_millis(50);

/// What a probe of a local address found.
enum Found {
    /// A host engine: it accepted and answered DCGM's handshake.
    Engine(Link),
    /// Something accepted and has not answered (yet).
    Silent(Link),
    /// Something accepted, then closed, or answered what is not DCGM.
    NotDcgm,
    /// Nothing accepted.
    Nothing,
}

/// Connects to the host engine named by a connection string (`tcp://…`, `unix://…`,
/// `vsock://…`, or a bare `host[:port]`).
///
/// The rule (documented in the crate README): a host engine exists at an address when a real
/// one answers there (checked for loopback TCP addresses and unix sockets: the connect is
/// retried every 50 ms until the timeout, as libdcgm does, and what accepts must answer DCGM's
/// handshake), or when the address is one of the configured `hostengines`, which answer at
/// once where no host engine does. A connection that reached a real host engine keeps its
/// connection open and answers `DCGM_ST_CONNECTION_NOT_VALID` once it is gone. Something else
/// that accepts at an address that is not configured gets what the real library gives it:
/// `DCGM_ST_OK` and a handle on which every call answers `DCGM_ST_CONNECTION_NOT_VALID`, at
/// once where it closed or answered other bytes, after two request timeouts where it stayed
/// silent. The lock is not held while waiting.
pub fn connect(
    connection_string: &str,
    opts: ConnectOptions,
) -> Result<dcgmHandle_t, dcgmReturn_t> {
    let (ep, configured, request_timeout) = {
        let s = lock();
        if !s.initialized {
            return Err(DCGM_ST_UNINITIALIZED);
        }
        let ep = parse_endpoint(connection_string).ok_or(DCGM_ST_BADPARAM)?;
        let cfg = s.config();
        if cfg.faults.connect_refused {
            return Err(DCGM_ST_CONNECTION_NOT_VALID);
        }
        let key = ep.key();
        if s.down_until
            .get(&key)
            .is_some_and(|&until| now_us() < until)
        {
            return Err(DCGM_ST_CONNECTION_NOT_VALID);
        }
        let configured = cfg
            .hostengines
            .iter()
            .any(|h| parse_endpoint(h).is_some_and(|e| e.key() == key));
        (
            ep,
            configured,
            Duration::from_millis(cfg.request_timeout_ms),
        )
    };
    let found = if ep.is_local() {
        probe(&ep, opts.timeout_ms, configured, request_timeout)
    } else {
        Found::Nothing
    };
    let (link, pending) = match found {
        Found::Engine(l) => (Some(l), None),
        // The configured address's simulated engine answers; a silent listener there is
        // looked at again on each call, in case it is a host engine that is slow to answer.
        Found::Silent(l) if configured => (None, Some(l)),
        Found::NotDcgm | Found::Nothing if configured => (None, None),
        Found::Nothing => return Err(DCGM_ST_CONNECTION_NOT_VALID),
        // As libdcgm 4.6.0: its version request timed out (ignored), then the login did, or
        // the peer closed; it disconnects and returns dcgmDisconnect's DCGM_ST_OK.
        Found::Silent(_) | Found::NotDcgm => return abandoned(&ep),
    };
    let mut s = lock();
    if !s.initialized {
        return Err(DCGM_ST_UNINITIALIZED);
    }
    let key = ep.key();
    if let Some(&until) = s.down_until.get(&key) {
        if now_us() < until {
            return Err(DCGM_ST_CONNECTION_NOT_VALID);
        }
        s.down_until.remove(&key);
    }
    if let Some(l) = &link {
        if let Some(Some(old)) = s.listeners.get(&key)
            && l.listener.is_some_and(|new| new != *old)
        {
            // Another incarnation of the host engine listens there: the one this engine's
            // state belonged to is gone, with its connections.
            s.engine_gone(&key);
        }
        let known = s.listeners.get(&key).copied().flatten();
        s.listeners.insert(key.clone(), l.listener.or(known));
    }
    let cfg = s.config().clone();
    s.engines
        .entry(key.clone())
        .or_insert_with(|| Engine::new(&cfg, DCGM_OPERATION_MODE_AUTO));
    let h = s.next_handle;
    s.next_handle += 1;
    let late_bind = (link.is_none() && ep.is_local()).then_some(ep);
    s.connections.insert(
        h,
        Connection {
            engine: key,
            link: link.map(Arc::new),
            late_bind,
            pending: pending.map(Arc::new),
            persist: opts.persist,
            ..Connection::default()
        },
    );
    Ok(h)
}

/// The handle libdcgm 4.6.0 returns for a peer that accepted and is no host engine: the
/// connection it gave up on, where every call answers `DCGM_ST_CONNECTION_NOT_VALID`.
fn abandoned(ep: &Endpoint) -> Result<dcgmHandle_t, dcgmReturn_t> {
    let mut s = lock();
    if !s.initialized {
        return Err(DCGM_ST_UNINITIALIZED);
    }
    let h = s.next_handle;
    s.next_handle += 1;
    s.connections.insert(
        h,
        Connection {
            engine: ep.key(),
            broken: true,
            ..Connection::default()
        },
    );
    Ok(h)
}

/// Tries to reach a host engine at a local endpoint. The connect is tried once for a
/// configured address (the simulated engine answers if nothing does), else until the timeout
/// as libdcgm does, but only while an `nv-hostengine` process runs here (one starting up, not
/// listening yet): with none, nothing is coming and the answer is given at once rather than
/// after the timeout (clients that look for a local host engine stay fast). What accepts is
/// then asked DCGM's handshake: at a configured address for [`LATE_BIND_TIMEOUT`], elsewhere
/// for as long as libdcgm waits, two request timeouts (the version request, then the login;
/// `timeoutMs` bounds neither).
fn probe(ep: &Endpoint, timeout_ms: u32, configured: bool, request_timeout: Duration) -> Found {
    let ms = if timeout_ms == 0 {
        DEFAULT_CONNECT_TIMEOUT_MS
    } else {
        timeout_ms
    };
    let budget = Duration::from_millis(u64::from(ms));
    let start = Instant::now();
    let link = loop {
        if let Ok(l) = Link::connect(ep, budget.saturating_sub(start.elapsed())) {
            break l;
        }
        if configured
            || start.elapsed() + CONNECT_RETRY > budget
            || !crate::listener_probe::hostengine_running()
        {
            return Found::Nothing;
        }
        std::thread::sleep(CONNECT_RETRY);
    };
    let wait = if configured {
        LATE_BIND_TIMEOUT
    } else {
        request_timeout.saturating_mul(2)
    };
    match link.handshake(wait) {
        Answer::Dcgm => Found::Engine(link),
        Answer::NotYet => Found::Silent(link),
        Answer::NotDcgm => Found::NotDcgm,
    }
}

impl Sim {
    pub fn config(&self) -> &SimConfig {
        self.cfg.as_ref().expect("config loaded at dcgmInit")
    }

    /// Resolves a handle to its engine, counting the call for the drop fault.
    pub fn engine_mut(&mut self, handle: dcgmHandle_t) -> Result<&mut Engine, dcgmReturn_t> {
        if !self.initialized {
            return Err(DCGM_ST_UNINITIALIZED);
        }
        // As libdcgm 4.6.0: a NULL handle is refused as a bad parameter.
        if handle == 0 {
            return Err(DCGM_ST_BADPARAM);
        }
        let drop_after = self.config().faults.drop_after_calls;
        let down_ms = self.config().faults.down_ms;
        // As libdcgm 4.6.0: the embedded handle after dcgmStopEmbedded is "uninitialised".
        let stale = if handle == DCGM_EMBEDDED_HANDLE {
            DCGM_ST_UNINITIALIZED
        } else {
            DCGM_ST_CONNECTION_NOT_VALID
        };
        let conn = self.connections.get_mut(&handle).ok_or(stale)?;
        if conn.broken {
            return Err(DCGM_ST_CONNECTION_NOT_VALID);
        }
        conn.calls += 1;
        let name = conn.engine.clone();
        if conn.link.as_ref().is_some_and(|l| !l.alive()) {
            // The host-engine process closed its end (it was killed or terminated).
            self.engine_gone(&name);
            return Err(DCGM_ST_CONNECTION_NOT_VALID);
        }
        self.late_bind(handle);
        let conn = &self.connections[&handle];
        if name != "embedded" && !self.dropped_once && drop_after.is_some_and(|n| conn.calls > n) {
            // The host engine restarts: every connection to it breaks and its state is lost.
            self.dropped_once = true;
            for c in self.connections.values_mut() {
                if c.engine == name {
                    c.broken = true;
                }
            }
            self.engines.remove(&name);
            self.down_until
                .insert(name, now_us() + (down_ms as i64) * 1000);
            return Err(DCGM_ST_CONNECTION_NOT_VALID);
        }
        if name != "embedded" {
            self.attribute(&name, Some(handle));
        }
        let caller = if name == "embedded" { 0 } else { handle as u32 };
        let e = self
            .engines
            .get_mut(&name)
            .ok_or(DCGM_ST_CONNECTION_NOT_VALID)?;
        e.set_caller(caller);
        Ok(e)
    }

    /// The host engine at `name` is gone: its state, and every connection to it.
    fn engine_gone(&mut self, name: &str) {
        for c in self.connections.values_mut() {
            if c.engine == name {
                c.broken = true;
                c.link = None;
                c.late_bind = None;
                c.pending = None;
            }
        }
        self.engines.remove(name);
        self.listeners.remove(name);
        self.last_caller.remove(name);
    }

    /// Probes a configured local address again for a connection that reached it while no host
    /// engine answered there; binds the connection to a host engine found there (one that
    /// answers DCGM's handshake: a listener that has not answered yet is looked at again on
    /// the next call, without waiting).
    fn late_bind(&mut self, handle: dcgmHandle_t) {
        let Some(conn) = self.connections.get_mut(&handle) else {
            return;
        };
        let Some(ep) = &conn.late_bind else {
            return;
        };
        let answered = match &conn.pending {
            Some(p) => match p.answer(Duration::ZERO) {
                Answer::Dcgm => conn.pending.take(),
                Answer::NotYet => return,
                Answer::NotDcgm => {
                    conn.pending = None;
                    None
                }
            },
            None => None,
        };
        let link = match answered {
            Some(link) => link,
            None => {
                if conn
                    .last_probe
                    .is_some_and(|t| t.elapsed() < LATE_BIND_EVERY)
                {
                    return;
                }
                conn.last_probe = Some(Instant::now());
                let Ok(link) = Link::connect(ep, LATE_BIND_TIMEOUT) else {
                    return;
                };
                match link.handshake(LATE_BIND_TIMEOUT) {
                    Answer::Dcgm => Arc::new(link),
                    Answer::NotYet => {
                        conn.pending = Some(Arc::new(link));
                        return;
                    }
                    Answer::NotDcgm => return,
                }
            }
        };
        conn.late_bind = None;
        let id = link.listener;
        conn.link = Some(link);
        let name = conn.engine.clone();
        let entry = self.listeners.entry(name).or_insert(None);
        if entry.is_none() {
            *entry = id;
        }
    }

    /// Credits the groups and field groups created since the last call on engine `name` to
    /// the connection that made it, and records `next` as the caller of the call to come.
    fn attribute(&mut self, name: &str, next: Option<dcgmHandle_t>) {
        let Some(e) = self.engines.get(name) else {
            return;
        };
        let (ng, nfg) = e.next_ids();
        if let Some(last) = self.last_caller.get(name).copied()
            && let Some(c) = self.connections.get_mut(&last.handle)
        {
            c.owned_groups
                .extend((last.next_group..ng).filter(|g| e.groups.contains_key(g)));
            c.owned_field_groups
                .extend((last.next_field_group..nfg).filter(|f| e.field_groups.contains_key(f)));
        }
        match next {
            Some(handle) => {
                self.last_caller.insert(
                    name.to_string(),
                    LastCaller {
                        handle,
                        next_group: ng,
                        next_field_group: nfg,
                    },
                );
            }
            None => {
                self.last_caller.remove(name);
            }
        }
    }

    /// Closes a connection. As libdcgm 4.6.0's host engine does for a client that did not ask
    /// to persist, the groups and field groups it created go with it (with their watches).
    /// The embedded handle is no remote connection: it stays usable.
    pub fn disconnect(&mut self, handle: dcgmHandle_t) {
        if handle == DCGM_EMBEDDED_HANDLE {
            return;
        }
        let Some(name) = self.connections.get(&handle).map(|c| c.engine.clone()) else {
            return;
        };
        self.attribute(&name, None);
        let Some(conn) = self.connections.remove(&handle) else {
            return;
        };
        if conn.persist || conn.broken {
            return;
        }
        if let Some(e) = self.engines.get_mut(&name) {
            for g in conn.owned_groups {
                e.remove_group(g);
            }
            for fg in conn.owned_field_groups {
                e.remove_field_group(fg);
            }
        }
    }

    /// The listening socket (inode) of the real host engine behind a connection's engine
    /// (where one was reached and `/proc/net` shows it).
    pub fn hostengine_listener(
        &mut self,
        handle: dcgmHandle_t,
    ) -> Result<Option<u64>, dcgmReturn_t> {
        self.engine_mut(handle)?;
        let name = &self.connections[&handle].engine;
        Ok(self.listeners.get(name).copied().flatten())
    }
}

/// Runs `f` on the engine of `handle` under the lock, after the configured call latency.
pub fn with_engine<T>(
    handle: dcgmHandle_t,
    f: impl FnOnce(&mut Engine) -> Result<T, dcgmReturn_t>,
) -> Result<T, dcgmReturn_t> {
    let slow = {
        let s = lock();
        s.cfg.as_ref().map_or(0, |c| c.faults.slow_ms)
    };
    if slow > 0 {
        std::thread::sleep(std::time::Duration::from_millis(slow));
    }
    let mut s = lock();
    let e = s.engine_mut(handle)?;
    f(e)
}
