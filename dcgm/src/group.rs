//! `Group`: a set of entities, and everything done per group: watches and reads.

use std::ffi::{c_int, c_void};
use std::sync::Arc;
use std::time::Duration;

use dcgm_sys::*;

use crate::dialect::{Asked, Offer};
use crate::engine_object::{EngineId, EngineObject};
use crate::entity::{Entity, EntityGroup};
use crate::error::{Error, Result};
use crate::field_group::FieldGroup;
use crate::handle::{Handle, cstring};
use crate::library::{c_buf, ffi};
use crate::release::DcgmVersion;
use crate::value::FieldValue;

/// How a group starts out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupType {
    /// No entities.
    Empty,
    /// Every GPU.
    AllGpus,
    /// Every NvSwitch.
    AllNvSwitches,
    /// Every MIG GPU instance.
    AllInstances,
    /// Every MIG compute instance.
    AllComputeInstances,
    /// Every entity.
    Everything,
}

impl GroupType {
    fn raw(self) -> dcgmGroupType_t {
        match self {
            GroupType::Empty => DCGM_GROUP_EMPTY,
            GroupType::AllGpus => DCGM_GROUP_DEFAULT,
            GroupType::AllNvSwitches => DCGM_GROUP_DEFAULT_NVSWITCHES,
            GroupType::AllInstances => DCGM_GROUP_DEFAULT_INSTANCES,
            GroupType::AllComputeInstances => DCGM_GROUP_DEFAULT_COMPUTE_INSTANCES,
            GroupType::Everything => DCGM_GROUP_DEFAULT_EVERYTHING,
        }
    }
}

/// A group of entities. Cheap to clone; destroyed in DCGM when the last clone (and every
/// [`Watch`] on it) is dropped.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::{Entity, EntityGroup, FieldGroup, FieldId, Group, WatchOptions};
/// let group = Group::with_entities(&handle, "doc-group", &[
///     Entity::gpu(0),
///     Entity::new(EntityGroup::GpuInstance, 0),
/// ])?;
/// let fields = FieldGroup::create(&handle, "doc-fb", &[FieldId::parse("fb_used")?])?;
/// let _watch = group.watch(&fields, WatchOptions::default())?;
/// handle.update_all_fields(true)?;
/// for v in group.latest_values(&fields)? {
///     println!("{}: {} = {}", v.entity, v.field, v.value);
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Group {
    inner: Arc<EngineObject<GroupId>>,
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("id", &self.inner.id())
            .field("owned", &self.inner.owned())
            .finish()
    }
}

crate::id::id_type!(
    /// The id of a group on its host engine (`dcgmGpuGrp_t`), as other clients and tools name it.
    GroupId,
    dcgmGpuGrp_t
);

impl EngineId for GroupId {
    fn destroy(self, handle: &Handle) -> Result<()> {
        let lib = handle.lib();
        // SAFETY: plain values; the engine checks the id.
        unsafe { ffi!(lib, dcgmGroupDestroy(handle.raw(), self.raw())) }
    }
}

/// Most entities one group holds (`DCGM_GROUP_MAX_ENTITIES_V2`).
pub const MAX_ENTITIES_PER_GROUP: usize = DCGM_GROUP_MAX_ENTITIES_V2;

/// The versions of `dcgmGroupInfo` this SDK sends, newest first, with the first release that
/// accepts each (3.3.9 accepts only version 2, 4.x only version 3).
const GROUP_INFO_OFFERS: [Offer; 2] = [
    Offer::new(dcgmGroupInfo_version3, DcgmVersion::new(4, 0, 0)),
    Offer::new(dcgmGroupInfo_version2, DcgmVersion::new(0, 0, 0)),
];

/// A group info of either version (v2 and v3 differ only in the entity list's length),
/// checked against the version word the library wrote back.
macro_rules! decode_group_info {
    ($s:expr, $version:expr) => {{
        let s = $s;
        if s.version != $version {
            return Err(Error::UnknownLayout {
                call: "dcgmGroupGetInfo",
                version: s.version,
            });
        }
        let n = (s.count as usize).min(s.entityList.len());
        Ok(GroupInfo {
            name: c_buf(&s.groupName),
            entities: s.entityList[..n]
                .iter()
                .map(|p| Entity::from_raw(*p))
                .collect(),
        })
    }};
}

/// DCGM 4.x's group info.
fn decode_group_info_v3(s: &dcgmGroupInfo_v3) -> Result<GroupInfo> {
    decode_group_info!(s, dcgmGroupInfo_version3)
}

/// DCGM 3.x's group info: up to 64 entities.
fn decode_group_info_v2(s: &dcgmGroupInfo_v2) -> Result<GroupInfo> {
    decode_group_info!(s, dcgmGroupInfo_version2)
}

/// What a group holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInfo {
    /// The name given at creation.
    pub name: String,
    /// Its members.
    pub entities: Vec<Entity>,
}

/// Watch parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WatchOptions {
    /// How often DCGM samples the fields.
    pub update_interval: Duration,
    /// How long samples are kept.
    pub max_keep_age: Duration,
    /// How many samples are kept per field (0: no limit beyond the age).
    pub max_keep_samples: u32,
}

impl Default for WatchOptions {
    /// Every second, kept for five minutes.
    fn default() -> Self {
        Self {
            update_interval: Duration::from_secs(1),
            max_keep_age: Duration::from_secs(300),
            max_keep_samples: 0,
        }
    }
}

/// Where a since-read left off: pass the same cursor to the next read and no sample is lost or
/// repeated between them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SinceCursor(pub i64);

/// An active watch of a field group on a group. The fields stop being watched when it is
/// dropped.
pub struct Watch {
    group: Group,
    fields: FieldGroup,
    options: WatchOptions,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("group", &self.group)
            .field("fields", &self.fields)
            .field("options", &self.options)
            .finish()
    }
}

impl Watch {
    /// The watched group.
    pub fn group(&self) -> &Group {
        &self.group
    }

    /// The watched fields.
    pub fn fields(&self) -> &FieldGroup {
        &self.fields
    }

    /// The parameters.
    pub fn options(&self) -> WatchOptions {
        self.options
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let h = self.group.handle();
        let lib = h.lib();
        // SAFETY: ids valid on this handle; both objects are kept alive by `self`.
        let _ = unsafe {
            ffi!(
                lib,
                dcgmUnwatchFields(h.raw(), self.group.raw_id(), self.fields.raw_id())
            )
        };
    }
}

impl Group {
    /// Creates a group.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_MAX_LIMIT` past the engine's group limit (62 client groups on libdcgm 4.6.0);
    /// `InvalidArgument` for a name with a NUL byte; `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmGroupCreate")]
    pub fn create(handle: &Handle, name: &str, kind: GroupType) -> Result<Self> {
        let cname = cstring(name)?;
        let lib = handle.lib();
        let mut id = 0;
        // SAFETY: a C string and a valid out-pointer.
        unsafe {
            ffi!(
                lib,
                dcgmGroupCreate(handle.raw(), kind.raw(), cname.as_ptr(), &mut id)
            )
        }?;
        Ok(Self {
            inner: EngineObject::created(handle, GroupId::from_raw(id), ()),
        })
    }

    /// A group of these GPUs.
    ///
    /// # Errors
    ///
    /// As [`Group::create`], and `DCGM_ST_BADPARAM` for a GPU id the node does not have.
    pub fn with_gpus(handle: &Handle, name: &str, gpus: &[u32]) -> Result<Self> {
        let g = Self::create(handle, name, GroupType::Empty)?;
        for &id in gpus {
            g.add_gpu(id)?;
        }
        Ok(g)
    }

    /// A group of these entities.
    ///
    /// # Errors
    ///
    /// As [`Group::create`], and `DCGM_ST_BADPARAM` for an entity the node does not have or one
    /// listed twice.
    pub fn with_entities(handle: &Handle, name: &str, entities: &[Entity]) -> Result<Self> {
        let g = Self::create(handle, name, GroupType::Empty)?;
        for &e in entities {
            g.add_entity(e)?;
        }
        Ok(g)
    }

    /// DCGM's built-in group of every GPU (`DCGM_GROUP_ALL_GPUS`); never destroyed.
    pub fn all_gpus(handle: &Handle) -> Self {
        Self::special(handle, DCGM_GROUP_ALL_GPUS)
    }

    /// An existing group by id (created elsewhere, e.g. by another client of the host
    /// engine); it is not destroyed when dropped. Fails if the id is unknown.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_CONFIGURED` for an id the host engine has no group for; `ConnectionLost`.
    pub fn from_id(handle: &Handle, id: GroupId) -> Result<Self> {
        let g = Self::special(handle, id.raw());
        g.info()?;
        Ok(g)
    }

    /// DCGM's built-in group of every NvSwitch.
    pub fn all_nvswitches(handle: &Handle) -> Self {
        Self::special(handle, DCGM_GROUP_ALL_NVSWITCHES)
    }

    fn special(handle: &Handle, id: dcgmGpuGrp_t) -> Self {
        Self {
            inner: EngineObject::borrowed(handle, GroupId::from_raw(id), ()),
        }
    }

    /// Its id on the host engine.
    pub fn id(&self) -> GroupId {
        self.inner.id()
    }

    pub(crate) fn raw_id(&self) -> dcgmGpuGrp_t {
        self.inner.id().raw()
    }

    /// The handle it belongs to.
    pub fn handle(&self) -> &Handle {
        self.inner.handle()
    }

    /// Adds a GPU.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_BADPARAM` for a GPU id the node does not have or a GPU already in the group;
    /// `DCGM_ST_NOT_CONFIGURED` for a group the host engine no longer has; `ConnectionLost`.
    #[doc(alias = "dcgmGroupAddEntity")]
    pub fn add_gpu(&self, gpu: u32) -> Result<()> {
        self.add_entity(Entity::gpu(gpu))
    }

    /// Adds any entity.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_BADPARAM` for an entity the node does not have (an NvSwitch, MIG instance or CPU
    /// on a node without them, say) or one already in the group; `DCGM_ST_NOT_CONFIGURED` for a
    /// group the host engine no longer has; `ConnectionLost`.
    #[doc(alias = "dcgmGroupAddEntity")]
    pub fn add_entity(&self, e: Entity) -> Result<()> {
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: plain arguments.
        unsafe {
            ffi!(
                lib,
                dcgmGroupAddEntity(h.raw(), self.raw_id(), e.group.raw(), e.id)
            )
        }
    }

    /// Removes a GPU.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_BADPARAM` for a GPU that is not in the group (unknown GPU ids included);
    /// `ConnectionLost`.
    #[doc(alias = "dcgmGroupRemoveEntity")]
    pub fn remove_gpu(&self, gpu: u32) -> Result<()> {
        self.remove_entity(Entity::gpu(gpu))
    }

    /// Removes any entity.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_BADPARAM` for an entity that is not in the group (libdcgm 4.6.0 answers so for
    /// GPUs); `ConnectionLost`.
    #[doc(alias = "dcgmGroupRemoveEntity")]
    pub fn remove_entity(&self, e: Entity) -> Result<()> {
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: plain arguments.
        unsafe {
            ffi!(
                lib,
                dcgmGroupRemoveEntity(h.raw(), self.raw_id(), e.group.raw(), e.id)
            )
        }
    }

    /// Name and entities.
    ///
    /// Asks in the answering release's own version: `dcgmGroupInfo_v3` (up to 1024 entities)
    /// from DCGM 4.0, `_v2` (up to 64) before; the version accepted is remembered per handle.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_CONFIGURED` for a group the host engine no longer has (another client
    /// destroyed it); `UnknownLayout` when the library writes back a version word this SDK
    /// cannot decode; `ConnectionLost`.
    #[doc(alias = "dcgmGroupGetInfo")]
    pub fn info(&self) -> Result<GroupInfo> {
        let h = self.handle();
        h.ask_versioned(Asked::GroupInfo, &GROUP_INFO_OFFERS, |word| {
            if word == dcgmGroupInfo_version2 {
                self.info_v2()
            } else {
                self.info_v3()
            }
        })
    }

    fn info_v3(&self) -> Result<GroupInfo> {
        let mut info = dcgmGroupInfo_v3::boxed_versioned();
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: a versioned struct valid for the call.
        unsafe { ffi!(lib, dcgmGroupGetInfo(h.raw(), self.raw_id(), &mut *info)) }?;
        decode_group_info_v3(&info)
    }

    /// DCGM 3.x's layout: up to 64 entities.
    fn info_v2(&self) -> Result<GroupInfo> {
        let mut info = dcgmGroupInfo_v2::boxed_versioned();
        let (h, lib) = (self.handle(), self.handle().lib());
        // The C prototype names the current struct; the library reads the version word and
        // writes the layout of that version.
        let out = (&mut *info as *mut dcgmGroupInfo_v2).cast::<dcgmGroupInfo_v3>();
        // SAFETY: a versioned version-2 struct valid for the call: a library that accepts the
        // word writes at most `size_of::<dcgmGroupInfo_v2>()` bytes; one that does not refuses
        // it before writing.
        unsafe { ffi!(lib, dcgmGroupGetInfo(h.raw(), self.raw_id(), out)) }?;
        decode_group_info_v2(&info)
    }

    /// The entities.
    ///
    /// # Errors
    ///
    /// As [`Group::info`].
    pub fn entities(&self) -> Result<Vec<Entity>> {
        Ok(self.info()?.entities)
    }

    /// The GPU members only.
    ///
    /// # Errors
    ///
    /// As [`Group::info`].
    pub fn gpu_ids(&self) -> Result<Vec<u32>> {
        Ok(self
            .entities()?
            .into_iter()
            .filter(|e| e.group == EntityGroup::Gpu)
            .map(|e| e.id)
            .collect())
    }

    /// Destroys the group now and reports errors (dropping it swallows them). Does nothing
    /// while other clones or watches still use it.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_CONFIGURED` when the group is already gone from the host engine (another
    /// client destroyed it); `ConnectionLost`.
    #[doc(alias = "dcgmGroupDestroy")]
    pub fn destroy(self) -> Result<()> {
        EngineObject::destroy(self.inner)
    }

    /// Starts watching `fields` on this group.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a zero update interval; `DCGM_ST_NOT_CONFIGURED` for a destroyed
    /// group; `DCGM_ST_REQUIRES_ROOT` for fields that need root (profiling on some drivers).
    #[doc(alias = "dcgmWatchFields")]
    pub fn watch(&self, fields: &FieldGroup, options: WatchOptions) -> Result<Watch> {
        if options.update_interval.is_zero() {
            return Err(Error::InvalidArgument(
                "the update interval must be above zero".into(),
            ));
        }
        let freq = i64::try_from(options.update_interval.as_micros())
            .map_err(|_| Error::InvalidArgument("update interval too long".into()))?;
        let samples = i32::try_from(options.max_keep_samples)
            .map_err(|_| Error::InvalidArgument("max_keep_samples too large".into()))?;
        let (h, lib) = (self.handle(), self.handle().lib());
        // SAFETY: plain arguments.
        unsafe {
            ffi!(
                lib,
                dcgmWatchFields(
                    h.raw(),
                    self.raw_id(),
                    fields.raw_id(),
                    freq,
                    options.max_keep_age.as_secs_f64(),
                    samples
                )
            )
        }?;
        Ok(Watch {
            group: self.clone(),
            fields: fields.clone(),
            options,
        })
    }

    /// The latest value of every field for every entity of the group.
    ///
    /// # Errors
    ///
    /// As [`Group::latest_values_into`].
    #[doc(alias = "dcgmGetLatestValues_v2")]
    pub fn latest_values(&self, fields: &FieldGroup) -> Result<Vec<FieldValue>> {
        let mut out = Vec::new();
        self.latest_values_into(fields, &mut out)?;
        Ok(out)
    }

    /// Like [`Group::latest_values`], reusing `out`'s allocation (it is cleared first).
    ///
    /// # Errors
    ///
    /// `DCGM_ST_GROUP_IS_EMPTY` for a group without entities; `DCGM_ST_NOT_SUPPORTED` when the
    /// group holds non-GPU entities on a library that reads GPUs only; `ConnectionLost`. A field
    /// without a value is not an error: its `FieldValue` is blank with the reason in `status`.
    #[doc(alias = "dcgmGetLatestValues_v2")]
    pub fn latest_values_into(&self, fields: &FieldGroup, out: &mut Vec<FieldValue>) -> Result<()> {
        out.clear();
        let (h, lib) = (self.handle(), self.handle().lib());
        let mut sink = Sink { out };
        // SAFETY: the callback matches the library's type and `sink` outlives the call.
        let r = unsafe {
            ffi!(
                lib,
                dcgmGetLatestValues_v2(
                    h.raw(),
                    self.raw_id(),
                    fields.raw_id(),
                    Some(collect_values),
                    (&mut sink as *mut Sink).cast::<c_void>()
                )
            )
        };
        sink.check()?;
        r
    }

    /// Every sample taken since `cursor`, oldest first per field; advances `cursor` so the
    /// next call continues exactly where this one stopped. Fields with no new sample are left
    /// out (the library marks them with a `NO_DATA` record, which is not a sample).
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_WATCHED` when nothing of the group and field group is watched;
    /// `ConnectionLost`.
    #[doc(alias = "dcgmGetValuesSince_v2")]
    pub fn values_since(
        &self,
        fields: &FieldGroup,
        cursor: &mut SinceCursor,
    ) -> Result<Vec<FieldValue>> {
        let mut out = Vec::new();
        let (h, lib) = (self.handle(), self.handle().lib());
        let mut next = 0i64;
        let mut sink = Sink { out: &mut out };
        // SAFETY: the callback matches the library's type; `sink` and `next` outlive the call.
        let r = unsafe {
            ffi!(
                lib,
                dcgmGetValuesSince_v2(
                    h.raw(),
                    self.raw_id(),
                    fields.raw_id(),
                    cursor.0,
                    &mut next,
                    Some(collect_values),
                    (&mut sink as *mut Sink).cast::<c_void>()
                )
            )
        };
        sink.check()?;
        r?;
        cursor.0 = next.max(cursor.0);
        // A field with nothing new comes back as one NO_DATA record: it is not a sample.
        out.retain(|v| v.status != DCGM_ST_NO_DATA);
        Ok(out)
    }
}

struct Sink<'a> {
    out: &'a mut Vec<FieldValue>,
}

impl Sink<'_> {
    /// After the read: a panic of the decoding callback is raised again here (see
    /// [`crate::panic`]).
    fn check(&self) -> Result<()> {
        crate::panic::check();
        Ok(())
    }
}

/// Copies values out of the library's buffer. Never unwinds into C.
unsafe extern "C" fn collect_values(
    group: dcgm_field_entity_group_t,
    id: dcgm_field_eid_t,
    values: *mut dcgmFieldValue_v1,
    n: c_int,
    user: *mut c_void,
) -> c_int {
    let r = crate::panic::wrap(|| {
        // SAFETY: `user` is the `Sink` passed by the read that is running now.
        let sink = unsafe { &mut *user.cast::<Sink>() };
        if values.is_null() || n <= 0 {
            return;
        }
        // SAFETY: the library passes `n` valid records, alive during this call.
        let vals = unsafe { std::slice::from_raw_parts(values, n as usize) };
        let entity = crate::Entity::new(crate::EntityGroup::from_raw(group), id);
        sink.out
            .extend(vals.iter().map(|v| FieldValue::from_raw_v1_of(entity, v)));
    });
    // A kept panic stops the enumeration; the read raises it once the library returns.
    if r.is_some() { 0 } else { -1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(buf: &mut [std::ffi::c_char], s: &str) {
        crate::library::write_c_buf(buf, s);
    }

    #[test]
    fn a_version_2_group_info_decodes_into_the_same_group_info() {
        // DCGM 3.3.9's layout: 256-byte name, 64 entity pairs.
        let mut raw = dcgmGroupInfo_v2::new_versioned();
        name(&mut raw.groupName, "old-group");
        raw.count = 2;
        raw.entityList[0] = Entity::gpu(0).raw();
        raw.entityList[1] = Entity::new(EntityGroup::Switch, 3).raw();
        let info = decode_group_info_v2(&raw).unwrap();
        assert_eq!(info.name, "old-group");
        assert_eq!(
            info.entities,
            vec![Entity::gpu(0), Entity::new(EntityGroup::Switch, 3)]
        );
        // A count past the list's capacity reads the capacity, no further.
        raw.count = 1000;
        assert_eq!(decode_group_info_v2(&raw).unwrap().entities.len(), 64);
    }

    #[test]
    fn a_group_info_in_another_version_is_an_error_not_data() {
        let mut raw = dcgmGroupInfo_v2::new_versioned();
        raw.count = 1;
        raw.version = dcgmGroupInfo_version3;
        match decode_group_info_v2(&raw) {
            Err(Error::UnknownLayout { call, version }) => {
                assert_eq!(call, "dcgmGroupGetInfo");
                assert_eq!(version, dcgmGroupInfo_version3);
            }
            other => panic!("{other:?}"),
        }
        let mut raw = dcgmGroupInfo_v3::boxed_versioned();
        raw.version = dcgmGroupInfo_version2;
        assert!(matches!(
            decode_group_info_v3(&raw),
            Err(Error::UnknownLayout { .. })
        ));
    }
}
