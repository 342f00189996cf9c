//! The values the health engine reads: the samples the field cache holds for an (entity,
//! field) (watched or injected), or, when the cache holds none, what the simulated GPU reads
//! (as if the health module's own watch had sampled it at the start of the window and now).
//! Fake GPUs read nothing but what is injected, as on libdcgm.

use dcgm_sys::*;

use super::Ctx;
use crate::cache::key;
use crate::sampling::generate;
use crate::sim_value::SimValue;

/// An integer sample of a field, or none when it is blank, not supported or missing.
fn int(v: &SimValue) -> Option<i64> {
    match v {
        SimValue::Int(n) if !dcgm_int64_is_blank(*n) => Some(*n),
        _ => None,
    }
}

/// Whether the simulated GPU behind the entity answers for fields nothing watches.
fn modelled(c: &Ctx) -> bool {
    c.entity.entityGroupId == DCGM_FE_GPU && !c.src.machine.fake_gpus.contains(&c.entity.entityId)
}

/// The samples of a field the cache holds from `since` to the end of the window, oldest first; `None` when the
/// cache holds no entry with samples for it.
fn cached(c: &Ctx, field: u16, since: i64) -> Option<Vec<SimValue>> {
    let w = c
        .src
        .cache
        .watches
        .get(&key(c.entity.entityGroupId, c.entity.entityId, field))?;
    // A fake GPU reads only what was injected into it (libdcgm has no driver to sample it
    // from; the simulator's cache samples it from the model).
    if w.samples.is_empty()
        || (!modelled(c) && c.entity.entityGroupId == DCGM_FE_GPU && !w.injected)
    {
        return None;
    }
    Some(
        w.samples
            .iter()
            .filter(|s| s.ts >= since && (c.open_end || s.ts <= c.end))
            .map(|s| s.value.clone())
            .collect(),
    )
}

/// The first and the last integer sample of a field since `since` (libdcgm's two reads of a
/// counter, oldest and newest); `None` when either is missing or blank.
pub fn first_last(c: &Ctx, field: u16, since: i64) -> Option<(i64, i64)> {
    match cached(c, field, since) {
        Some(v) => Some((int(v.first()?)?, int(v.last()?)?)),
        None if modelled(c) => {
            let a = int(&modelled_at(c, field, since))?;
            let b = int(&modelled_at(c, field, c.end))?;
            Some((a, b))
        }
        None => None,
    }
}

/// What the GPU's model answers for `field` of this entity at time `at`.
fn modelled_at(c: &Ctx, field: u16, at: i64) -> SimValue {
    generate(
        c.src.machine,
        c.src.dynamics,
        DCGM_FE_GPU,
        c.entity.entityId,
        field,
        at,
    )
}

/// The newest integer sample of a field since `since`; `None` when missing or blank.
pub fn last_since(c: &Ctx, field: u16, since: i64) -> Option<i64> {
    match cached(c, field, since) {
        Some(v) => int(v.last()?),
        None if modelled(c) => int(&modelled_at(c, field, c.end)),
        None => None,
    }
}

/// The newest integer sample of a field, however old.
pub fn latest(c: &Ctx, field: u16) -> Option<i64> {
    last_since(c, field, i64::MIN)
}

/// The newest sample of a field, however old, as the cache or the GPU answers it.
pub fn latest_value(c: &Ctx, field: u16) -> Option<SimValue> {
    match cached(c, field, i64::MIN) {
        Some(v) => v.last().cloned(),
        None if modelled(c) => Some(modelled_at(c, field, c.end)),
        None => None,
    }
}
