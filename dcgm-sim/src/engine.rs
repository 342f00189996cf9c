//! One engine: the embedded one, or a simulated nv-hostengine at an address, with its
//! objects (groups, field groups, watches, health, policies, jobs), its field cache and the
//! simulated node it samples. The process-wide state, its engines and the connections to
//! them are [`crate::sim`]'s.

use std::collections::{BTreeMap, HashMap};
use std::time::{SystemTime, UNIX_EPOCH};

use dcgm_sys::*;

use crate::cache::{Cache, Watch, Watcher, WatcherId, key};
use crate::config::SimConfig;
use crate::health::{HealthState, Incident, Sources};
use crate::machine::Machine;
use crate::model::Dynamics;
use crate::policy_feed::{Feed, Heard};
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
    pub callback: crate::policy_callback::PolicyCallback,
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
    mode: dcgmOperationMode_t,
    pub groups: BTreeMap<usize, Group>,
    next_group: usize,
    pub field_groups: BTreeMap<usize, FieldGroup>,
    next_field_group: usize,
    /// The (group, field group) watches in force.
    watch_sets: WatchSets,
    pub cache: Cache,
    pub health: HashMap<usize, u32>,
    /// The health engine's memory (XIDs heard).
    health_state: HealthState,
    /// The injected values the policy manager has heard.
    policy_feed: Feed,
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
    caller: u32,
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

    /// The engine's operation mode (AUTO: the cache samples on the watches' schedule).
    pub fn mode(&self) -> dcgmOperationMode_t {
        self.mode
    }

    /// Records the connection of the call being served (0: the embedded engine's own client).
    pub fn set_caller(&mut self, connection: u32) {
        self.caller = connection;
    }

    /// The calling client as a watcher of the field cache.
    pub fn client(&self) -> WatcherId {
        WatcherId::client(self.caller)
    }

    /// The next group and field group ids to be given out.
    pub fn next_ids(&self) -> (usize, usize) {
        (self.next_group, self.next_field_group)
    }

    /// Adds a group under the next group id, which it returns.
    pub fn add_group(&mut self, group: Group) -> usize {
        let id = self.next_group;
        self.next_group += 1;
        self.groups.insert(id, group);
        id
    }

    /// Adds a field group under the next field group id, which it returns.
    pub fn add_field_group(&mut self, field_group: FieldGroup) -> usize {
        let id = self.next_field_group;
        self.next_field_group += 1;
        self.field_groups.insert(id, field_group);
        id
    }

    /// `dcgmEmptyCache`: every cache entry loses its samples and its watchers (the entries
    /// stay, unwatched), and no group watch is in force any more.
    pub fn empty_cache(&mut self) {
        for w in self.cache.watches.values_mut() {
            w.samples.clear();
            w.watchers.clear();
            w.injected = false;
        }
        self.watch_sets.clear();
    }

    /// Marks every sample the cache holds now as heard by the policy manager, without judging
    /// it (a registration hears only what arrives after it).
    pub fn mark_policy_samples_heard(&mut self) {
        self.policy_feed.mark_heard(&self.cache);
    }

    /// Judges the injected samples that arrived since the last call against each GPU's policy
    /// (`policy_of`, which reads this engine).
    pub fn hear_policy_samples(
        &mut self,
        policy_of: impl Fn(&Engine, u32) -> Option<dcgmPolicy_v1>,
    ) -> Vec<Heard> {
        // The feed is taken out while it judges: the policies are read from the engine.
        let mut feed = std::mem::take(&mut self.policy_feed);
        let heard = feed.hear(&self.cache, |gpu| policy_of(self, gpu));
        self.policy_feed = feed;
        heard
    }

    /// Whether a registration may hear a violation of `condition` at sample time `ts` (and
    /// notes that it does).
    pub fn policy_may_signal(&mut self, group: usize, user: u64, condition: u32, ts: i64) -> bool {
        self.policy_feed.may_signal(group, user, condition, ts)
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

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("groups", &self.groups.len())
            .field("field_groups", &self.field_groups.len())
            .field("watches", &self.cache.watches.len())
            .finish()
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

    /// The samples of `fields` of `entities` since `since`, with the timestamp to ask from
    /// next time; `None` when the cache has no entry for any of them.
    pub fn samples_since(
        &mut self,
        entities: &[dcgmGroupEntityPair_t],
        fields: &[u16],
        since: i64,
        now: i64,
    ) -> Option<(Vec<Read>, i64)> {
        let (sampler, cache) = self.sampler_and_cache();
        sampler.since(cache, entities, fields, since, now)
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
        let client = self.client();
        let mut first_watch = false;
        let mut first_watchers = Vec::new();
        for p in &entities {
            for &f in &fields {
                let k = key(p.entityGroupId, p.entityId, f);
                let w = self
                    .cache
                    .watches
                    .entry(k)
                    .or_insert_with(|| Watch::new(now, freq_us, max_age_us, max_samples));
                first_watch |= w.samples.is_empty() && !w.is_watched();
                if !w.is_watched() {
                    first_watchers.push(k);
                }
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
        // Also an entry holding only injected samples gets its first watcher's sample.
        let (sampler, cache) = self.sampler_and_cache();
        for k in first_watchers {
            sampler.first_watch(cache, k, now);
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
        let client = self.client();
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
