//! Raw access: the one place where the C API shows through, for what the safe layer does not
//! wrap. Everything else in this crate speaks in its own types.
//!
//! * [`sys`] is `dcgm-sys`: the C functions, structs and constants.
//! * [`Binding`] converts this crate's types to and from their C values (the shape of
//!   git2-rs's `Binding` trait).
//! * [`handle`] and [`library`] give a [`Handle`]'s `dcgmHandle_t` and its loaded library, to
//!   call a C function this crate does not wrap.
//!
//! ```
//! # fn main() -> dcgm::Result<()> {
//! # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
//! use dcgm::raw::{self, Binding};
//! use dcgm::EntityGroup;
//!
//! assert_eq!(EntityGroup::Gpu.raw(), raw::sys::DCGM_FE_GPU);
//! assert_eq!(EntityGroup::from_raw(raw::sys::DCGM_FE_SWITCH), EntityGroup::Switch);
//! let count = raw::library(&handle).dcgmGetAllDevices().is_ok();
//! assert!(count);
//! let _c_handle: raw::sys::dcgmHandle_t = raw::handle(&handle);
//! # Ok(()) }
//! ```

pub use dcgm_sys as sys;

use dcgm_sys::*;

use crate::blank::BlankKind;
use crate::diag::DiagLevel;
use crate::diag_response::DiagResult;
use crate::entity::{Entity, EntityGroup};
use crate::error::ReturnCode;
use crate::field_group::{FieldGroup, FieldGroupId};
use crate::group::{Group, GroupId};
use crate::handle::Handle;
use crate::health::HealthResult;
use crate::mig::{ComputeInstanceProfile, GpuInstanceProfile};
use crate::modules::Module;
use crate::value::FieldValue;

/// A type of this crate with a C counterpart.
pub trait Binding: Sized {
    /// The C type.
    type Raw;
    /// From the C value (values this crate does not know map to an `Other` variant or the
    /// nearest meaning, as each type documents).
    fn from_raw(raw: Self::Raw) -> Self;
    /// The C value.
    fn raw(&self) -> Self::Raw;
}

macro_rules! binding {
    ($ty:ty, $raw:ty) => {
        impl Binding for $ty {
            type Raw = $raw;
            fn from_raw(raw: $raw) -> Self {
                <$ty>::from_raw(raw)
            }
            fn raw(&self) -> $raw {
                <$ty>::raw(*self)
            }
        }
    };
}

binding!(EntityGroup, dcgm_field_entity_group_t);
binding!(Entity, dcgmGroupEntityPair_t);
binding!(DiagResult, dcgmDiagResult_t);
binding!(HealthResult, dcgmHealthWatchResults_t);
binding!(Module, dcgmModuleId_t);
binding!(GroupId, dcgmGpuGrp_t);
binding!(FieldGroupId, dcgmFieldGrp_t);
binding!(BlankKind, dcgm_sys::BlankKind);

impl Binding for ReturnCode {
    type Raw = dcgmReturn_t;
    fn from_raw(raw: dcgmReturn_t) -> Self {
        ReturnCode::from_raw(raw)
    }
    fn raw(&self) -> dcgmReturn_t {
        ReturnCode::raw(*self)
    }
}

/// The `dcgmDiagnosticLevel_t` of a level.
pub fn diag_level(level: DiagLevel) -> dcgmDiagnosticLevel_t {
    level.raw()
}

/// The `dcgmMigProfile_t` of a GPU-instance profile (`DcgmMigProfileGpuInstanceSlice1` … for
/// [`GpuInstanceProfile::ALL`] in order: 1 to 10).
///
/// ```
/// use dcgm::GpuInstanceProfile;
/// use dcgm::raw::{self, sys};
///
/// let p = GpuInstanceProfile::Slice3;
/// assert_eq!(raw::gpu_instance_profile(p), sys::DcgmMigProfileGpuInstanceSlice3);
/// assert_eq!(raw::gpu_instance_profile_from(raw::gpu_instance_profile(p)), Some(p));
/// ```
pub fn gpu_instance_profile(profile: GpuInstanceProfile) -> dcgmMigProfile_t {
    profile.raw()
}

/// The GPU-instance profile of a `dcgmMigProfile_t`; `None` for a value that is not one (a
/// compute-instance profile, or a number DCGM 4.6 does not define).
pub fn gpu_instance_profile_from(v: dcgmMigProfile_t) -> Option<GpuInstanceProfile> {
    GpuInstanceProfile::from_raw(v)
}

/// The `dcgmMigProfile_t` of a compute-instance profile (`DcgmMigProfileComputeInstanceSlice1`
/// … for [`ComputeInstanceProfile::ALL`] in order: 30 to 37).
pub fn compute_instance_profile(profile: ComputeInstanceProfile) -> dcgmMigProfile_t {
    profile.raw()
}

/// The compute-instance profile of a `dcgmMigProfile_t`; `None` for a value that is not one.
pub fn compute_instance_profile_from(v: dcgmMigProfile_t) -> Option<ComputeInstanceProfile> {
    ComputeInstanceProfile::from_raw(v)
}

/// The `dcgmHandle_t` of a handle, for C calls this crate does not wrap. It stays valid while
/// `handle` (or a clone of it) lives.
pub fn handle(handle: &Handle) -> dcgmHandle_t {
    handle.raw()
}

/// The loaded library a handle calls into.
pub fn library(handle: &Handle) -> &DcgmLibrary {
    handle.library()
}

/// The `dcgmGpuGrp_t` of a group.
pub fn group_id(group: &Group) -> dcgmGpuGrp_t {
    group.id().raw()
}

/// The `dcgmFieldGrp_t` of a field group.
pub fn field_group_id(fields: &FieldGroup) -> dcgmFieldGrp_t {
    fields.id().raw()
}

/// A value from a `dcgmFieldValue_v1` record of the entity `group`/`id`.
pub fn field_value_v1(
    group: dcgm_field_entity_group_t,
    id: u32,
    v: &dcgmFieldValue_v1,
) -> FieldValue {
    FieldValue::from_raw_v1(group, id, v)
}

/// A value from a `dcgmFieldValue_v2` record.
pub fn field_value_v2(v: &dcgmFieldValue_v2) -> FieldValue {
    FieldValue::from_raw_v2(v)
}
