//! `FieldGroup`: a named set of fields to watch and read together.

use std::ffi::c_int;
use std::sync::Arc;

use dcgm_sys::*;

use crate::engine_object::{EngineId, EngineObject};
use crate::error::{Error, Result};
use crate::field::FieldId;
use crate::handle::{Handle, cstring};
use crate::library::{c_buf, ffi};

/// What a field group keeps beside its id.
struct Members {
    name: String,
    fields: Vec<FieldId>,
    /// Fields asked for that the loaded DCGM release does not know, left out.
    left_out: Vec<FieldId>,
}

/// A set of fields (at most 127, a DCGM limit). Destroyed in DCGM when the last clone drops.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::{FieldGroup, FieldId};
/// let fg = FieldGroup::create(&handle, "doc-temps", &[
///     FieldId::parse("DCGM_FI_DEV_GPU_TEMP")?,
///     FieldId::parse("power_usage")?,
/// ])?;
/// assert_eq!(fg.fields().len(), 2);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct FieldGroup {
    inner: Arc<EngineObject<FieldGroupId, Members>>,
}

impl std::fmt::Debug for FieldGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FieldGroup")
            .field("id", &self.inner.id())
            .field("name", &self.name())
            .field("fields", &self.fields())
            .finish()
    }
}

crate::id::id_type!(
    /// The id of a field group on its host engine (`dcgmFieldGrp_t`), as other clients and
    /// tools name it.
    FieldGroupId,
    dcgmFieldGrp_t
);

impl EngineId for FieldGroupId {
    fn destroy(self, handle: &Handle) -> Result<()> {
        let lib = handle.lib();
        // SAFETY: plain values; the engine checks the id.
        unsafe { ffi!(lib, dcgmFieldGroupDestroy(handle.raw(), self.raw())) }
    }
}

/// Most fields one field group can hold.
pub const MAX_FIELDS_PER_FIELD_GROUP: usize = DCGM_MAX_FIELD_IDS_PER_FIELD_GROUP - 1;

impl FieldGroup {
    /// Creates a field group. Names must be unique on the host engine.
    ///
    /// # Errors
    ///
    /// A field this SDK knows but the loaded DCGM release does not (added in a later release)
    /// is left out, so that one field never fails the whole group (libdcgm refuses a group
    /// with one id it does not know); [`FieldGroup::left_out`] lists them, and reads give no
    /// value for them.
    ///
    /// `InvalidArgument` for no fields or more than [`MAX_FIELDS_PER_FIELD_GROUP`], an
    /// unknown field id, or fields none of which the loaded release knows;
    /// `DCGM_ST_DUPLICATE_KEY` for a name already in use; `DCGM_ST_MAX_LIMIT` past the
    /// engine's field-group limit.
    #[doc(alias = "dcgmFieldGroupCreate")]
    pub fn create(handle: &Handle, name: &str, fields: &[FieldId]) -> Result<Self> {
        if fields.is_empty() {
            return Err(Error::InvalidArgument(
                "a field group needs at least one field".into(),
            ));
        }
        if fields.len() > MAX_FIELDS_PER_FIELD_GROUP {
            return Err(Error::InvalidArgument(format!(
                "a field group holds at most {MAX_FIELDS_PER_FIELD_GROUP} fields, not {}: split \
                 them over several field groups",
                fields.len()
            )));
        }
        if let Some(bad) = fields.iter().find(|f| f.info().is_none()) {
            return Err(Error::InvalidArgument(format!(
                "unknown field id {}",
                bad.0
            )));
        }
        let (known, left_out): (Vec<FieldId>, Vec<FieldId>) =
            fields.iter().partition(|f| handle.knows_field(**f));
        if known.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "none of the fields {} is in this DCGM release ({}): they were added later",
                left_out
                    .iter()
                    .map(|f| f.0.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                handle
                    .dcgm_version()
                    .map_or_else(|| "version unknown".to_string(), |v| v.to_string())
            )));
        }
        let ids: Vec<u16> = known.iter().map(|f| f.0).collect();
        let cname = cstring(name)?;
        let lib = handle.lib();
        let mut id = 0;
        // SAFETY: `ids` holds `len` ids, `cname` is a C string and `id` a valid out-pointer.
        unsafe {
            ffi!(
                lib,
                dcgmFieldGroupCreate(
                    handle.raw(),
                    ids.len() as c_int,
                    ids.as_ptr(),
                    cname.as_ptr(),
                    &mut id
                )
            )
        }?;
        let members = Members {
            name: name.to_string(),
            fields: known,
            left_out,
        };
        Ok(Self {
            inner: EngineObject::created(handle, FieldGroupId::from_raw(id), members),
        })
    }

    /// Loads an existing field group by id (not destroyed on drop).
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NO_DATA` for an id the host engine has no field group for (libdcgm 4.6.0 answers
    /// so); `ConnectionLost`.
    #[doc(alias = "dcgmFieldGroupGetInfo")]
    pub fn from_id(handle: &Handle, id: FieldGroupId) -> Result<Self> {
        let id = id.raw();
        let mut info = dcgmFieldGroupInfo_v1::new_versioned();
        info.fieldGroupId = id;
        let lib = handle.lib();
        // SAFETY: a versioned info struct valid for the call.
        unsafe { ffi!(lib, dcgmFieldGroupGetInfo(handle.raw(), &mut info)) }?;
        let n = (info.numFieldIds as usize).min(info.fieldIds.len());
        let members = Members {
            name: c_buf(&info.fieldGroupName),
            fields: info.fieldIds[..n].iter().map(|f| FieldId(*f)).collect(),
            left_out: Vec::new(),
        };
        Ok(Self {
            inner: EngineObject::borrowed(handle, FieldGroupId::from_raw(id), members),
        })
    }

    /// Its id on the host engine.
    pub fn id(&self) -> FieldGroupId {
        self.inner.id()
    }

    pub(crate) fn raw_id(&self) -> dcgmFieldGrp_t {
        self.inner.id().raw()
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.inner.data().name
    }

    /// The fields, in creation order.
    pub fn fields(&self) -> &[FieldId] {
        &self.inner.data().fields
    }

    /// The fields asked for at creation that the loaded DCGM release does not know, left out
    /// of the group (see [`FieldGroup::create`]).
    pub fn left_out(&self) -> &[FieldId] {
        &self.inner.data().left_out
    }

    /// The handle it belongs to.
    pub fn handle(&self) -> &Handle {
        self.inner.handle()
    }

    /// Destroys the field group now and reports errors (dropping it swallows them). Does
    /// nothing while other clones or watches still use it, or for a field group loaded with
    /// [`FieldGroup::from_id`].
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NO_DATA` when the field group is already gone from the host engine (another
    /// client destroyed it); `ConnectionLost`.
    #[doc(alias = "dcgmFieldGroupDestroy")]
    pub fn destroy(self) -> Result<()> {
        EngineObject::destroy(self.inner)
    }
}

/// Every field group on the host engine: `(id, name, fields)`.
///
/// # Errors
///
/// `ConnectionLost` when the host engine went away.
#[doc(alias = "dcgmFieldGroupGetAll")]
pub fn all_field_groups(handle: &Handle) -> Result<Vec<(FieldGroupId, String, Vec<FieldId>)>> {
    let mut all = dcgmAllFieldGroup_v1::boxed_versioned();
    let lib = handle.lib();
    // SAFETY: a versioned struct valid for the call.
    unsafe { ffi!(lib, dcgmFieldGroupGetAll(handle.raw(), &mut *all)) }?;
    let n = (all.numFieldGroups as usize).min(all.fieldGroups.len());
    Ok(all.fieldGroups[..n]
        .iter()
        .map(|g| {
            let k = (g.numFieldIds as usize).min(g.fieldIds.len());
            (
                FieldGroupId::from_raw(g.fieldGroupId),
                c_buf(&g.fieldGroupName),
                g.fieldIds[..k].iter().map(|f| FieldId(*f)).collect(),
            )
        })
        .collect())
}
