//! What the host engine's field cache knows about one (entity, field): how often it is
//! sampled (the fastest interval of all its watchers, whoever they are), how many samples it
//! keeps and their time span.

use std::time::Duration;

use dcgm_sys::*;

use crate::blank::NonBlank;
use crate::entity::Entity;
use crate::error::Result;
use crate::field::FieldId;
use crate::handle::Handle;
use crate::library::ffi;

/// The cache's view of one (entity, field); see [`Handle::field_cache_info`].
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use std::time::Duration;
/// use dcgm::{Entity, FieldGroup, FieldId, Group, WatchOptions};
///
/// let power = FieldId(155);
/// let fields = FieldGroup::create(&handle, "cache-info-doc", &[power])?;
/// let gpus = Group::all_gpus(&handle);
/// let every = WatchOptions { update_interval: Duration::from_millis(500), ..Default::default() };
/// let _watch = gpus.watch(&fields, every)?;
/// handle.update_all_fields(true)?;
/// let info = handle.field_cache_info(Entity::gpu(0), power)?;
/// assert!(info.watched);
/// assert_eq!(info.sample_interval, Some(Duration::from_millis(500)));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldCacheInfo {
    /// Someone watches the field: it is being sampled.
    pub watched: bool,
    /// How often the field is sampled: the fastest interval among all its watchers (other
    /// clients and the host engine's own modules included). `None` when it is not watched.
    pub sample_interval: Option<Duration>,
    /// How long samples are kept (the longest among the watchers); `None` where the cache
    /// leaves it blank.
    pub max_age: Option<Duration>,
    /// Samples in the cache now.
    pub samples: u32,
    /// Watchers of the field (the library lists at most 8 of them).
    pub watchers: u32,
    /// Oldest kept sample, µs since the epoch (`None` with no sample).
    pub oldest_us: Option<i64>,
    /// Newest kept sample, µs since the epoch (`None` with no sample).
    pub newest_us: Option<i64>,
}

impl Handle {
    /// The field cache's view of one (entity, field): sampling interval, retention, number
    /// of samples and watchers. One request per call (through a host engine, one round trip).
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_WATCHED` when the cache has no entry for the pair (it was never watched);
    /// `DCGM_ST_BADPARAM` for an unknown field; `ConnectionLost`.
    #[doc(alias = "dcgmGetCacheManagerFieldInfo")]
    pub fn field_cache_info(&self, entity: Entity, field: FieldId) -> Result<FieldCacheInfo> {
        let mut fi = dcgmCacheManagerFieldInfo_v4_t::new_versioned();
        fi.entityGroupId = entity.group.raw();
        fi.entityId = entity.id;
        fi.fieldId = field.0;
        let lib = self.lib();
        // SAFETY: a versioned struct, valid and exclusively ours for the call.
        unsafe { ffi!(lib, dcgmGetCacheManagerFieldInfo(self.raw(), &mut fi)) }?;
        let watched = fi.flags & DCGM_CMI_F_WATCHED != 0;
        let us = |v: i64| Duration::from_micros(u64::try_from(v).unwrap_or(0));
        let time = |v: i64| (v > 0 && int64_blank_kind(v).is_none()).then_some(v);
        Ok(FieldCacheInfo {
            watched,
            // Blank sentinels never become numbers (a sentinel interval would read as weeks).
            sample_interval: fi
                .monitorIntervalUsec
                .non_blank()
                .filter(|&v| watched && v > 0)
                .map(us),
            max_age: fi.maxAgeUsec.non_blank().map(us),
            samples: fi
                .numSamples
                .non_blank()
                .map_or(0, |n| u32::try_from(n).unwrap_or(0)),
            watchers: fi
                .numWatchers
                .non_blank()
                .map_or(0, |n| u32::try_from(n).unwrap_or(0)),
            oldest_us: time(fi.oldestTimestamp),
            newest_us: time(fi.newestTimestamp),
        })
    }
}
