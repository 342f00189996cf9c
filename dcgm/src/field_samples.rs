//! Several cached samples of one GPU field in one request (`dcgmGetMultipleValuesForField`),
//! and the reusable buffer a polling loop keeps for them.

use std::ffi::c_int;

use dcgm_sys::*;

use crate::entity::Entity;
use crate::error::{Error, Result};
use crate::field::FieldId;
use crate::handle::Handle;
use crate::library::ffi;
use crate::value::FieldValue;

/// Most samples one [`SampleBuffer`] holds: 1,048,576 (4 GiB of C records).
pub const MAX_SAMPLES_PER_REQUEST: usize = 1 << 20;

/// Room for the samples of one [`Handle::field_samples_into`] request, kept between calls.
///
/// DCGM fills a caller's array of C records of about 4 KiB each (a record has room for a
/// string or blob value), so a buffer of 64 samples is about 260 KiB. [`Handle::field_samples`]
/// makes one per call; a loop that polls keeps one instead and neither allocates nor clears
/// that memory again.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::{FieldGroup, FieldId, Group, SampleBuffer, WatchOptions};
///
/// let temp = FieldId(150);
/// let fields = FieldGroup::create(&handle, "sample-buffer-doc", &[temp])?;
/// let _watch = Group::all_gpus(&handle).watch(&fields, WatchOptions::default())?;
/// let mut buffer = SampleBuffer::new(16);
/// let mut samples = Vec::new();
/// for _ in 0..3 {
///     handle.update_all_fields(true)?;
///     samples.clear();
///     let n = handle.field_samples_into(0, temp, 0, 0, &mut buffer, &mut samples)?;
///     assert_eq!(n, Some(samples.len()));
/// }
/// # Ok(()) }
/// ```
pub struct SampleBuffer {
    /// `max + 1` records: a request that fills all of them may have left samples out.
    records: Vec<dcgmFieldValue_v1>,
}

impl SampleBuffer {
    /// A buffer for up to `max` samples a request (at least 1, at most
    /// [`MAX_SAMPLES_PER_REQUEST`]).
    pub fn new(max: usize) -> Self {
        let max = max.clamp(1, MAX_SAMPLES_PER_REQUEST);
        Self {
            records: (0..=max)
                .map(|_| dcgmFieldValue_v1::new_versioned())
                .collect(),
        }
    }

    /// How many samples one request can return.
    pub fn max(&self) -> usize {
        self.records.len() - 1
    }
}

impl std::fmt::Debug for SampleBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleBuffer")
            .field("max", &self.max())
            .finish()
    }
}

impl Handle {
    /// The cached samples of one GPU field with time stamps from `start_us` to `end_us`
    /// (inclusive; 0 leaves that end open), oldest first, at most `max` of them. One request,
    /// however many samples. Returns `None` when there may be more than `max`.
    ///
    /// A loop that polls should keep a [`SampleBuffer`] and call
    /// [`Handle::field_samples_into`]: this one allocates about 4 KiB per possible sample.
    ///
    /// ```
    /// # fn main() -> dcgm::Result<()> {
    /// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
    /// use dcgm::{FieldGroup, FieldId, Group, WatchOptions};
    ///
    /// let temp = FieldId(150);
    /// let fields = FieldGroup::create(&handle, "field-samples-doc", &[temp])?;
    /// let _watch = Group::all_gpus(&handle).watch(&fields, WatchOptions::default())?;
    /// handle.update_all_fields(true)?;
    /// let samples = handle.field_samples(0, temp, 0, 0, 100)?.expect("fewer than 100");
    /// assert!(samples.iter().all(|s| s.field == temp && s.timestamp_us > 0));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Handle::field_samples_into`].
    #[doc(alias = "dcgmGetMultipleValuesForField")]
    pub fn field_samples(
        &self,
        gpu: u32,
        field: FieldId,
        start_us: i64,
        end_us: i64,
        max: usize,
    ) -> Result<Option<Vec<FieldValue>>> {
        let mut buffer = SampleBuffer::new(max);
        let mut out = Vec::new();
        let n = self.field_samples_into(gpu, field, start_us, end_us, &mut buffer, &mut out)?;
        Ok(n.map(|_| out))
    }

    /// As [`Handle::field_samples`], into a kept buffer: appends the samples to `out`, oldest
    /// first, and returns how many. Returns `None`, and appends nothing, when there may be more
    /// than `buffer.max()`.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NO_DATA` when nothing was ever sampled; `DCGM_ST_NOT_WATCHED` for a field never
    /// watched on that GPU; `DCGM_ST_BADPARAM` for an unknown GPU or field; `InvalidArgument`
    /// for a GPU id above `i32::MAX`; `ConnectionLost`.
    #[doc(alias = "dcgmGetMultipleValuesForField")]
    pub fn field_samples_into(
        &self,
        gpu: u32,
        field: FieldId,
        start_us: i64,
        end_us: i64,
        buffer: &mut SampleBuffer,
        out: &mut Vec<FieldValue>,
    ) -> Result<Option<usize>> {
        let gpu_id = c_int::try_from(gpu)
            .map_err(|_| Error::InvalidArgument(format!("GPU id {gpu} is out of range")))?;
        let records = &mut buffer.records;
        // All the records, one more than `max`: a full buffer means there may be more.
        let mut count = c_int::try_from(records.len()).unwrap_or(c_int::MAX);
        let lib = self.lib();
        // SAFETY: `records` has at least `count` initialised records (plain C data, valid in
        // any state an earlier call left them in) and outlives the call; the library writes at
        // most `count` of them and the number written back into `count`.
        unsafe {
            ffi!(
                lib,
                dcgmGetMultipleValuesForField(
                    self.raw(),
                    gpu_id,
                    field.0,
                    &mut count,
                    start_us,
                    end_us,
                    DCGM_ORDER_ASCENDING,
                    records.as_mut_ptr()
                )
            )
        }?;
        let n = usize::try_from(count).unwrap_or(0).min(records.len());
        if n >= records.len() {
            return Ok(None);
        }
        let gpu = Entity::gpu(gpu);
        out.extend(
            records[..n]
                .iter()
                .map(|v| FieldValue::from_raw_v1_of(gpu, v)),
        );
        Ok(Some(n))
    }
}
