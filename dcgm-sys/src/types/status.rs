//! Status objects: the per-entity errors that config and policy calls collect.

/// One error popped from a status object with `dcgmStatusPopError`.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmErrorInfo_t {
    pub gpuId: u32,
    /// The field the error concerns (a signed `short` in C).
    pub fieldId: i16,
    /// A `DCGM_ST_*` code.
    pub status: i32,
}
crate::plain_struct!(dcgmErrorInfo_t, size = 12, align = 4);
