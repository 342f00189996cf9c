//! How the field cache is filled and read: the value the simulated node gives a field (with
//! the configured faults), the catch-up of a cache entry on its watch's schedule, and the
//! latest value of an (entity, field) as a read answers it.

use dcgm_sys::*;

use crate::cache::{Cache, key, unkey};
use crate::machine::Machine;
use crate::model::{Dynamics, sample};
use crate::sim_value::SimValue;

/// A value read from the cache (or the model), before it is written into a C struct.
#[derive(Debug, Clone)]
pub struct Read {
    pub group: u32,
    pub id: u32,
    pub field: u16,
    pub status: dcgmReturn_t,
    pub ts: i64,
    pub value: SimValue,
}

impl Read {
    /// A read of an (entity, field) that holds no value yet, with this status.
    fn empty(group: u32, id: u32, field: u16, status: dcgmReturn_t, ts: i64) -> Self {
        Self {
            group,
            id,
            field,
            status,
            ts,
            value: SimValue::Blank,
        }
    }
}

/// The simulated node as the cache samples it: the machine, its dynamics, and whether the
/// engine samples on the watches' schedule (AUTO mode) or only when asked (MANUAL).
#[derive(Clone, Copy)]
pub struct Sampler<'a> {
    pub machine: &'a Machine,
    pub dynamics: &'a Dynamics,
    pub auto: bool,
}

/// The value of a field for an entity at `ts`, with the configured faults applied.
pub fn generate(m: &Machine, d: &Dynamics, group: u32, id: u32, field: u16, ts: i64) -> SimValue {
    let f = &m.cfg.faults;
    if f.unsupported_fields.contains(&field) {
        return SimValue::NotSupported;
    }
    if f.blank_fields.contains(&field) {
        return SimValue::Blank;
    }
    // Without the driver (`dcgmDetachDriver`), a GPU and what belongs to it read blank.
    if m.gpu_of(group, id)
        .is_some_and(|g| m.driver.gpu_detached_at(g, ts))
    {
        return SimValue::Blank;
    }
    // A GPU that stopped answering (a `lost` event) reads blank.
    if group == DCGM_FE_GPU && d.held_event(id, "lost", ts).is_some() {
        return SimValue::Blank;
    }
    sample(m, d, group, id, field, ts)
}

/// Whether the cache samples an entity: not a fake GPU (nor what belongs to one), which has no
/// device behind it, so that, as in libdcgm, it holds only what is injected.
fn sampled_entity(m: &Machine, group: u32, id: u32) -> bool {
    m.gpu_of(group, id)
        .is_none_or(|gpu| !m.fake_gpus.contains(&gpu))
}

impl Sampler<'_> {
    /// The value of a field for an entity at `ts` ([`generate`]).
    pub fn generate(&self, group: u32, id: u32, field: u16, ts: i64) -> SimValue {
        generate(self.machine, self.dynamics, group, id, field, ts)
    }

    /// Brings one cache entry up to date (AUTO mode only: MANUAL waits for
    /// `dcgmUpdateAllFields`).
    pub fn advance(&self, cache: &mut Cache, k: u64, now: i64) {
        if !self.auto {
            return;
        }
        let (g, id, f) = unkey(k);
        if !sampled_entity(self.machine, g, id) {
            return;
        }
        if let Some(w) = cache.watches.get_mut(&k).filter(|w| w.is_watched()) {
            w.advance(now, |ts| self.generate(g, id, f, ts));
        }
    }

    /// The sample of an entry that just got its first watcher and holds injected samples
    /// (the model otherwise leaves such an entry alone): libdcgm's first watch updates it too.
    pub fn first_watch(&self, cache: &mut Cache, k: u64, now: i64) {
        let (g, id, f) = unkey(k);
        if !sampled_entity(self.machine, g, id) {
            return;
        }
        if let Some(w) = cache.watches.get_mut(&k).filter(|w| w.injected) {
            w.first_watch_sample(now, self.generate(g, id, f, now));
        }
    }

    /// `dcgmUpdateAllFields`: a fresh sample of every watched field that is due (its fastest
    /// watch interval has passed since its newest sample).
    pub fn update_all(&self, cache: &mut Cache, now: i64) {
        let keys: Vec<u64> = cache.watches.keys().copied().collect();
        for k in keys {
            self.advance(cache, k, now);
            let (g, id, f) = unkey(k);
            if !sampled_entity(self.machine, g, id)
                || cache.watches.get(&k).is_none_or(|w| !w.due(now))
            {
                continue;
            }
            let v = self.generate(g, id, f, now);
            if let Some(w) = cache.watches.get_mut(&k) {
                w.force(now, v);
            }
        }
    }

    /// The latest cached value of one (entity, field), the entry brought up to date first.
    pub fn latest(&self, cache: &mut Cache, group: u32, id: u32, field: u16, now: i64) -> Read {
        let mut r = Read::empty(group, id, field, DCGM_ST_OK, 0);
        if crate::personality::known_field(field).is_none() {
            r.status = DCGM_ST_UNKNOWN_FIELD;
            return r;
        }
        if !self.machine.exists(group, id) {
            // libdcgm 4.6.0 has no cache entry for an unknown entity: "not watched".
            r.status = DCGM_ST_NOT_WATCHED;
            return r;
        }
        let k = key(group, id, field);
        self.advance(cache, k, now);
        match cache.watches.get(&k) {
            None => r.status = DCGM_ST_NOT_WATCHED,
            Some(w) => match w.samples.back() {
                // Watched but not sampled yet, or an entry left empty by an unwatch.
                None if w.is_watched() => r.status = DCGM_ST_NO_DATA,
                None => r.status = DCGM_ST_NOT_WATCHED,
                Some(s) => {
                    r.ts = s.ts;
                    r.value = s.value.clone();
                }
            },
        }
        r
    }

    /// The samples of `fields` of `entities` the cache holds from `since` on, each entry
    /// brought up to date first, with the timestamp to ask from next time; `None` when the
    /// cache has no entry for any of them. As libdcgm 4.6.0, a field with nothing new gets one
    /// `DCGM_ST_NO_DATA` read.
    pub fn since(
        &self,
        cache: &mut Cache,
        entities: &[dcgmGroupEntityPair_t],
        fields: &[u16],
        since: i64,
        now: i64,
    ) -> Option<(Vec<Read>, i64)> {
        let mut out = Vec::new();
        let mut next = since;
        let mut any_entry = false;
        for p in entities {
            for &f in fields {
                let k = key(p.entityGroupId, p.entityId, f);
                self.advance(cache, k, now);
                let Some(w) = cache.watches.get(&k) else {
                    continue;
                };
                any_entry = true;
                if !w.samples.iter().any(|s| s.ts >= since) {
                    out.push(Read::empty(
                        p.entityGroupId,
                        p.entityId,
                        f,
                        DCGM_ST_NO_DATA,
                        0,
                    ));
                }
                for s in w.samples.iter().filter(|s| s.ts >= since) {
                    next = next.max(s.ts + 1);
                    out.push(Read {
                        group: p.entityGroupId,
                        id: p.entityId,
                        field: f,
                        status: DCGM_ST_OK,
                        ts: s.ts,
                        value: s.value.clone(),
                    });
                }
            }
        }
        any_entry.then_some((out, next))
    }

    /// A read of the model now, bypassing the cache (`DCGM_FV_FLAG_LIVE_DATA`). As libdcgm
    /// 4.6.0: an unknown GPU is a bad parameter per value, other unknown entities are not
    /// served.
    pub fn live_read(&self, group: u32, id: u32, field: u16, now: i64) -> Read {
        let mut r = Read::empty(group, id, field, DCGM_ST_OK, now);
        if crate::personality::known_field(field).is_none() {
            r.status = DCGM_ST_UNKNOWN_FIELD;
        } else if !self.machine.exists(group, id) {
            r.status = if group == DCGM_FE_GPU {
                DCGM_ST_BADPARAM
            } else {
                DCGM_ST_FIELD_UNSUPPORTED_BY_API
            };
        } else {
            r.value = self.generate(group, id, field, now);
        }
        r
    }
}
