//! The process-wide simulator state behind the C API: initialisation, the embedded engine and
//! simulated host engines, connections, and per-engine objects (groups, field groups, watches,
//! health, policies, jobs).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use dcgm_sys::*;

use crate::cache::Cache;
use crate::config::SimConfig;
use crate::machine::Machine;
use crate::model::Dynamics;

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
    /// (group, field group) pairs being watched, with their watch parameters.
    pub watch_sets: Vec<(usize, usize, i64, i64, usize)>,
    pub cache: Cache,
    pub health: HashMap<usize, u32>,
    /// Last health check per group (events before it are already reported).
    pub health_checked: HashMap<usize, i64>,
    /// The health engine's memory (XIDs heard).
    pub health_state: crate::health::HealthState,
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
    /// Bit `1 << moduleId` per denylisted module.
    pub module_denylist: u32,
    /// Host-engine log severity set through `dcgmHostengineSetLoggingSeverity`.
    pub log_severity: DcgmLoggingSeverity_t,
    /// `dcgmPauseTelemetryForDiag` was called (and not `dcgmResumeTelemetryForDiag` since).
    pub telemetry_paused: bool,
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
            watch_sets: Vec::new(),
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
            module_denylist: 0,
            log_severity: DcgmLoggingSeverityWarning,
            telemetry_paused: false,
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
}

/// A client connection.
#[derive(Debug, Clone)]
pub struct Connection {
    /// `embedded` or the normalised host-engine address.
    pub engine: String,
    pub calls: u64,
    pub broken: bool,
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

/// Normalises a host-engine address: `tcp://` stripped, port 5555 added to bare hosts,
/// `unix://` kept.
pub fn normalize_address(addr: &str, unix: bool) -> String {
    let a = addr.trim();
    if unix {
        return format!("unix://{}", a.trim_start_matches("unix://"));
    }
    if a.starts_with("unix://") || a.starts_with("vsock://") {
        return a.to_string();
    }
    let a = a.trim_start_matches("tcp://");
    let a = if a == "localhost" { "127.0.0.1" } else { a };
    if a.contains(':') {
        a.replace("localhost:", "127.0.0.1:")
    } else {
        format!("{a}:{DCGM_HE_PORT_NUMBER}")
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
        self.engines
            .get_mut(&name)
            .ok_or(DCGM_ST_CONNECTION_NOT_VALID)
    }

    /// Opens a connection to a simulated host engine.
    pub fn connect(&mut self, address: &str, unix: bool) -> Result<dcgmHandle_t, dcgmReturn_t> {
        if !self.initialized {
            return Err(DCGM_ST_UNINITIALIZED);
        }
        let cfg = self.config().clone();
        if cfg.faults.connect_refused {
            return Err(DCGM_ST_CONNECTION_NOT_VALID);
        }
        let addr = normalize_address(address, unix);
        let known = cfg
            .hostengines
            .iter()
            .any(|h| normalize_address(h, false) == addr);
        if !known {
            return Err(DCGM_ST_CONNECTION_NOT_VALID);
        }
        if let Some(&until) = self.down_until.get(&addr) {
            if now_us() < until {
                return Err(DCGM_ST_CONNECTION_NOT_VALID);
            }
            self.down_until.remove(&addr);
        }
        self.engines
            .entry(addr.clone())
            .or_insert_with(|| Engine::new(&cfg, DCGM_OPERATION_MODE_AUTO));
        let h = self.next_handle;
        self.next_handle += 1;
        self.connections.insert(
            h,
            Connection {
                engine: addr,
                calls: 0,
                broken: false,
            },
        );
        Ok(h)
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
