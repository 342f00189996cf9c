//! The process-wide simulator state behind the C API: initialisation, the embedded engine and
//! simulated host engines, connections, and per-engine objects (groups, field groups, watches,
//! health, policies, jobs).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dcgm_sys::*;

use crate::cache::{Cache, Watch, Watcher, WatcherId, key};
use crate::config::SimConfig;
use crate::health::{HealthState, Incident, Sources};
use crate::listener_probe::{Answer, Endpoint, Link, parse_endpoint};
use crate::machine::Machine;
use crate::model::Dynamics;
use crate::sampling::{Read, Sampler};
use crate::sim_value::SimValue;
use crate::watch_set::{WatchSet, WatchSets};

/// Microseconds since the Unix epoch.
pub fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// An entity group created by the client.
#[derive(Debug, Clone)]
pub struct Group {
    pub name: String,
    pub entities: Vec<dcgmGroupEntityPair_t>,
}

/// A field group created by the client.
#[derive(Debug, Clone)]
pub struct FieldGroup {
    pub name: String,
    pub fields: Vec<u16>,
}

/// A registered policy callback.
#[derive(Debug, Clone)]
pub struct PolicyRegistration {
    pub group: usize,
    pub condition: u32,
    pub callback: fpRecvUpdates,
    pub user_data: u64,
    /// Events up to this time have been delivered.
    pub delivered_until: i64,
}

/// A job being recorded.
#[derive(Debug, Clone)]
pub struct Job {
    pub group: usize,
    pub start: i64,
    pub end: Option<i64>,
}

/// One engine: the embedded one, or a simulated nv-hostengine at an address.
pub struct Engine {
    pub machine: Machine,
    pub dynamics: Dynamics,
    pub mode: dcgmOperationMode_t,
    pub groups: BTreeMap<usize, Group>,
    pub next_group: usize,
    pub field_groups: BTreeMap<usize, FieldGroup>,
    pub next_field_group: usize,
    /// The (group, field group) watches in force.
    pub watch_sets: WatchSets,
    pub cache: Cache,
    pub health: HashMap<usize, u32>,
    /// Last health check per group (events before it are already reported).
    pub health_checked: HashMap<usize, i64>,
    /// The health engine's memory (XIDs heard).
    pub health_state: HealthState,
    /// The injected values the policy manager has heard.
    pub policy_feed: crate::policy_feed::Feed,
    pub policies: HashMap<usize, dcgmPolicy_v1>,
    pub registrations: Vec<PolicyRegistration>,
    pub pid_watch: bool,
    /// The longest `maxKeepAge` of the `dcgmWatchPidFields` calls, in microseconds (0: no
    /// limit): process utilisation is averaged over the samples kept that long.
    pub pid_keep_age_us: i64,
    pub jobs: HashMap<String, Job>,
    pub diag_running: bool,
    /// `dcgmStopDiagnostic` was called while a diagnostic ran.
    pub diag_stop: bool,
    /// `dcgmWatchJobFields` was called.
    pub job_watch: bool,
    /// Target configuration per GPU (`dcgmConfigSet`), for `dcgmConfigGet(TARGET)` and
    /// `dcgmConfigEnforce`.
    pub config_targets: HashMap<u32, dcgmConfig_v2>,
    /// The load state of each module (lazy loading, deny list, pause).
    pub modules: crate::module_state::ModuleTable,
    /// The connection of the call being served (0: the embedded engine's own client), which
    /// identifies the client as a watcher of the field cache.
    pub caller: u32,
    /// Host-engine log severity set through `dcgmHostengineSetLoggingSeverity`.
    pub log_severity: DcgmLoggingSeverity_t,
}

impl Engine {
    pub fn new(cfg: &SimConfig, mode: dcgmOperationMode_t) -> Self {
        let machine = Machine::new(cfg.clone());
        let dynamics = Dynamics::new(&machine, now_us());
        Self {
            machine,
            dynamics,
            mode,
            groups: BTreeMap::new(),
            next_group: 1,
            field_groups: BTreeMap::new(),
            next_field_group: 1,
            watch_sets: WatchSets::default(),
            cache: Cache::default(),
            health: HashMap::new(),
            health_checked: HashMap::new(),
            health_state: Default::default(),
            policy_feed: Default::default(),
            policies: HashMap::new(),
            registrations: Vec::new(),
            pid_watch: false,
            pid_keep_age_us: 0,
            jobs: HashMap::new(),
            diag_running: false,
            diag_stop: false,
            job_watch: false,
            config_targets: HashMap::new(),
            modules: Default::default(),
            caller: 0,
            log_severity: DcgmLoggingSeverityWarning,
        }
    }

    /// The entities of a group id (a created group or one of the special ids).
    pub fn group_entities(&self, group: usize) -> Result<Vec<dcgmGroupEntityPair_t>, dcgmReturn_t> {
        let all = |eg: u32| -> Vec<dcgmGroupEntityPair_t> {
            self.machine
                .entities(eg)
                .into_iter()
                .map(|entityId| dcgmGroupEntityPair_t {
                    entityGroupId: eg,
                    entityId,
                })
                .collect()
        };
        match group {
            DCGM_GROUP_ALL_GPUS => Ok(all(DCGM_FE_GPU)),
            DCGM_GROUP_ALL_NVSWITCHES => Ok(all(DCGM_FE_SWITCH)),
            DCGM_GROUP_ALL_INSTANCES => Ok(all(DCGM_FE_GPU_I)),
            DCGM_GROUP_ALL_COMPUTE_INSTANCES => Ok(all(DCGM_FE_GPU_CI)),
            DCGM_GROUP_ALL_ENTITIES => {
                let mut v = Vec::new();
                for eg in [
                    DCGM_FE_GPU,
                    DCGM_FE_SWITCH,
                    DCGM_FE_GPU_I,
                    DCGM_FE_GPU_CI,
                    DCGM_FE_CPU,
                    DCGM_FE_CPU_CORE,
                ] {
                    v.extend(all(eg));
                }
                Ok(v)
            }
            g => self
                .groups
                .get(&g)
                .map(|g| g.entities.clone())
                .ok_or(DCGM_ST_NOT_CONFIGURED),
        }
    }

    pub fn field_group(&self, fg: usize) -> Result<&FieldGroup, dcgmReturn_t> {
        self.field_groups.get(&fg).ok_or(DCGM_ST_NOT_CONFIGURED)
    }

    /// The GPUs behind a group's entities (MIG instances count as their GPU), in order, once
    /// each.
    pub fn group_gpus(&self, group: usize) -> Result<Vec<u32>, dcgmReturn_t> {
        let mut gpus: Vec<u32> = Vec::new();
        for p in self.group_entities(group)? {
            if let Some(g) = self.machine.gpu_of(p.entityGroupId, p.entityId)
                && p.entityGroupId != DCGM_FE_LINK
                && !gpus.contains(&g)
            {
                gpus.push(g);
            }
        }
        Ok(gpus)
    }
}

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

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("groups", &self.groups.len())
            .field("field_groups", &self.field_groups.len())
            .field("watches", &self.cache.watches.len())
            .finish()
    }
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

/// Normalises a host-engine address as `dcgmConnect_v2` reads it (`unix`: a socket path, else
/// a TCP `host[:port]`); `None` where libdcgm 4.6.0 refuses the string.
pub fn normalize_address(addr: &str, unix: bool) -> Option<String> {
    let scheme = if unix { "unix://" } else { "tcp://" };
    parse_endpoint(&format!("{scheme}{addr}")).map(|e| e.key())
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

impl Engine {
    /// Removes a group with its watches, health and policy settings (what
    /// `dcgmGroupDestroy` removes); nothing for an unknown id.
    pub fn remove_group(&mut self, group: usize) {
        if !self.groups.contains_key(&group) {
            return;
        }
        for set in self.watch_sets.of_group(group) {
            let _ = self.unwatch(set.group, set.field_group);
        }
        self.groups.remove(&group);
        self.health.remove(&group);
        self.policies.remove(&group);
        self.registrations.retain(|r| r.group != group);
    }

    /// Removes a field group with its watches (what `dcgmFieldGroupDestroy` removes).
    pub fn remove_field_group(&mut self, fg: usize) {
        if !self.field_groups.contains_key(&fg) {
            return;
        }
        for set in self.watch_sets.of_field_group(fg) {
            let _ = self.unwatch(set.group, set.field_group);
        }
        self.field_groups.remove(&fg);
    }

    /// What the health checks read: the field cache and the simulated node.
    fn health_sources(&self) -> Sources<'_> {
        Sources {
            cache: &self.cache,
            machine: &self.machine,
            dynamics: &self.dynamics,
        }
    }

    /// The systems some group watches for health.
    fn health_watching(&self) -> u32 {
        self.health.values().fold(0, |a, s| a | s)
    }

    /// Records that `group` now watches `systems` for health (`dcgmHealthSet`): the health
    /// engine hears its GPUs' XIDs, and the cache watches the fields the systems read, every
    /// `interval_us` and for `max_age_s` (or each system's least).
    pub fn health_set(
        &mut self,
        group: usize,
        systems: u32,
        interval_us: i64,
        max_age_s: f64,
    ) -> Result<(), dcgmReturn_t> {
        let entities = self.group_entities(group)?;
        let now = now_us();
        let watching = self.health_watching();
        self.health_state
            .watch(&self.dynamics, watching, &entities, systems, now);
        crate::health::watches::add_watches(
            &mut self.cache,
            &entities,
            systems,
            interval_us,
            max_age_s,
            now,
        );
        self.health.insert(group, systems);
        Ok(())
    }

    /// The health check of a group's entities now (`dcgmHealthCheck`), over the systems it
    /// watches.
    pub fn health_check(&mut self, group: usize) -> Result<Vec<Incident>, dcgmReturn_t> {
        let entities = self.group_entities(group)?;
        let systems = self.health.get(&group).copied().unwrap_or(0);
        let watching = self.health_watching();
        let src = Sources {
            cache: &self.cache,
            machine: &self.machine,
            dynamics: &self.dynamics,
        };
        Ok(self
            .health_state
            .check(src, watching, &entities, systems, now_us()))
    }

    /// The incidents of the GPUs `gpus` over `[start, end]`, restricted to `systems` (for job
    /// statistics).
    pub fn health_incidents(
        &self,
        gpus: &[u32],
        systems: u32,
        start: i64,
        end: i64,
    ) -> Vec<Incident> {
        let entities: Vec<dcgmGroupEntityPair_t> = gpus
            .iter()
            .map(|&g| dcgmGroupEntityPair_t {
                entityGroupId: DCGM_FE_GPU,
                entityId: g,
            })
            .collect();
        self.health_state
            .evaluate(self.health_sources(), &entities, systems, start, end)
    }

    /// The simulated node as the cache samples it, beside the cache.
    fn sampler_and_cache(&mut self) -> (Sampler<'_>, &mut Cache) {
        (
            Sampler {
                machine: &self.machine,
                dynamics: &self.dynamics,
                auto: self.mode == DCGM_OPERATION_MODE_AUTO,
            },
            &mut self.cache,
        )
    }

    /// The value of a field for an entity at `ts`, with the configured faults applied.
    pub fn generate(&self, group: u32, id: u32, field: u16, ts: i64) -> SimValue {
        crate::sampling::generate(&self.machine, &self.dynamics, group, id, field, ts)
    }

    /// Brings one cache entry up to date (AUTO mode only).
    pub fn advance(&mut self, k: u64, now: i64) {
        let (sampler, cache) = self.sampler_and_cache();
        sampler.advance(cache, k, now);
    }

    /// `dcgmUpdateAllFields`: a fresh sample of every watched field that is due.
    pub fn update_all(&mut self) {
        let now = now_us();
        let (sampler, cache) = self.sampler_and_cache();
        sampler.update_all(cache, now);
    }

    /// The latest cached value of one (entity, field).
    pub fn latest(&mut self, group: u32, id: u32, field: u16, now: i64) -> Read {
        let (sampler, cache) = self.sampler_and_cache();
        sampler.latest(cache, group, id, field, now)
    }

    /// A read of the model now, bypassing the cache (`DCGM_FV_FLAG_LIVE_DATA`).
    pub fn live_read(&self, group: u32, id: u32, field: u16, now: i64) -> Read {
        Sampler {
            machine: &self.machine,
            dynamics: &self.dynamics,
            auto: self.mode == DCGM_OPERATION_MODE_AUTO,
        }
        .live_read(group, id, field, now)
    }

    /// Adds the calling client's watch of every (entity, field) of a group and field group
    /// (`dcgmWatchFields`).
    pub fn watch(
        &mut self,
        group: usize,
        fg: usize,
        freq_us: i64,
        max_age_s: f64,
        max_samples: i32,
    ) -> Result<(), dcgmReturn_t> {
        // libdcgm 4.6.0 accepts zero and negative arguments: a frequency of 0 or less is taken
        // as one second here, a negative age or sample count as no limit.
        let freq_us = if freq_us <= 0 { 1_000_000 } else { freq_us };
        let entities = self.group_entities(group)?;
        // An unknown field group reads as "no data" in libdcgm 4.6.0.
        let fields = self
            .field_group(fg)
            .map_err(|_| DCGM_ST_NO_DATA)?
            .fields
            .clone();
        let now = now_us();
        let max_age_us = (max_age_s.max(0.0) * 1e6) as i64;
        let max_samples = max_samples.max(0) as usize;
        let client = WatcherId::client(self.caller);
        let mut first_watch = false;
        for p in &entities {
            for &f in &fields {
                let k = key(p.entityGroupId, p.entityId, f);
                let w = self
                    .cache
                    .watches
                    .entry(k)
                    .or_insert_with(|| Watch::new(now, freq_us, max_age_us, max_samples));
                first_watch |= w.samples.is_empty() && !w.is_watched();
                w.add_watcher(
                    now,
                    Watcher {
                        id: client,
                        freq_us,
                        max_age_us,
                        max_samples,
                    },
                );
            }
        }
        self.watch_sets.add(WatchSet {
            group,
            field_group: fg,
        });
        // As libdcgm: a group watch that starts watching a field updates every due field at
        // once, so its first value is readable right after the watch.
        if first_watch {
            self.update_all();
        }
        Ok(())
    }

    /// Removes the calling client's watches that a (group, field group) watch added
    /// (`DCGM_ST_NOT_WATCHED` when that pair is not watched).
    pub fn unwatch(&mut self, group: usize, fg: usize) -> Result<(), dcgmReturn_t> {
        if !self.watch_sets.remove(WatchSet {
            group,
            field_group: fg,
        }) {
            return Err(DCGM_ST_NOT_WATCHED);
        }
        let client = WatcherId::client(self.caller);
        let entities = self.group_entities(group).unwrap_or_default();
        let fields = self
            .field_group(fg)
            .map(|f| f.fields.clone())
            .unwrap_or_default();
        for p in &entities {
            for &f in &fields {
                let k = key(p.entityGroupId, p.entityId, f);
                // As libdcgm 4.6.0: the samples stay readable after the last watcher leaves;
                // the entry just stops being sampled.
                // One unwatch ends the client's watch of the entry, whatever else it watched
                // the entry through (a client is one watcher per entry in libdcgm).
                if let Some(w) = self.cache.watches.get_mut(&k) {
                    w.remove_watcher(client);
                }
            }
        }
        Ok(())
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
        e.caller = caller;
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
        let (ng, nfg) = (e.next_group, e.next_field_group);
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
