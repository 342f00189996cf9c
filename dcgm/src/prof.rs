//! Profiling: the metric groups (DCP fields measurable together) a GPU supports, and pausing
//! profiling so another tool can use the counters.

use dcgm_sys::*;

use crate::error::{Error, Result};
use crate::field::FieldId;
use crate::group::Group;
use crate::handle::Handle;
use crate::library::ffi;
use crate::system::System;

/// Profiling fields that can be watched together. Before Hopper, groups with different
/// `major` ids cannot be watched at the same time.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::Group;
/// for mg in Group::all_gpus(&handle).profiling_metric_groups()? {
///     let names: Vec<String> = mg.fields.iter().map(|f| f.tag()).collect();
///     println!("{}.{}: {}", mg.major, mg.minor, names.join(", "));
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricGroup {
    /// Groups sharing a major id share hardware counters.
    pub major: u16,
    /// Distinguishes groups of one major id.
    pub minor: u16,
    /// The profiling fields (`DCGM_FI_PROF_*`).
    pub fields: Vec<FieldId>,
}

fn metric_groups(handle: &Handle, gpu: u32) -> Result<Vec<MetricGroup>> {
    let mut q = dcgmProfGetMetricGroups_v3::new_versioned();
    q.gpuId = gpu;
    let lib = handle.lib();
    // SAFETY: a versioned struct valid for the call.
    unsafe { ffi!(lib, dcgmProfGetSupportedMetricGroups(handle.raw(), &mut q)) }?;
    let n = (q.numMetricGroups as usize).min(q.metricGroups.len());
    Ok(q.metricGroups[..n]
        .iter()
        .map(|g| {
            let k = (g.numFieldIds as usize).min(g.fieldIds.len());
            MetricGroup {
                major: g.majorId,
                minor: g.minorId,
                fields: g.fieldIds[..k].iter().map(|f| FieldId(*f)).collect(),
            }
        })
        .collect())
}

impl Group {
    /// The metric groups of the group's first GPU (all GPUs of a group should be the same
    /// model).
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a group without a GPU; `DCGM_ST_NOT_CONFIGURED` for a group the host
    /// engine no longer has; otherwise as [`System::profiling_metric_groups`].
    #[doc(alias = "dcgmProfGetSupportedMetricGroups")]
    pub fn profiling_metric_groups(&self) -> Result<Vec<MetricGroup>> {
        let Some(&gpu) = self.gpu_ids()?.first() else {
            return Err(Error::InvalidArgument(
                "the group has no GPU: profiling metric groups are per GPU, add one".into(),
            ));
        };
        metric_groups(self.handle(), gpu)
    }
}

impl System {
    /// The metric groups of one GPU.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_IN_USE` or `DCGM_ST_PROFILING_LIBRARY_ERROR` when another client holds the
    /// profiling counters (the error's hint says so); `DCGM_ST_NOT_SUPPORTED` for a GPU without
    /// profiling support; `DCGM_ST_BADPARAM` for a GPU id the node does not have; `ConnectionLost`.
    #[doc(alias = "dcgmProfGetSupportedMetricGroups")]
    pub fn profiling_metric_groups(&self, gpu: u32) -> Result<Vec<MetricGroup>> {
        metric_groups(self.handle(), gpu)
    }
}

impl Handle {
    /// Pauses profiling so another tool (Nsight, a CUPTI profiler) can use the counters;
    /// profiling fields read blank until [`Handle::profiling_resume`].
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away; `NotSupported` where the metrics come
    /// from GPM (Hopper and later GPUs), which libdcgm cannot pause.
    #[doc(alias = "dcgmProfPause")]
    pub fn profiling_pause(&self) -> Result<()> {
        let lib = self.lib();
        // SAFETY: a plain argument on a live handle.
        unsafe { ffi!(lib, dcgmProfPause(self.raw())) }
    }

    /// Resumes profiling after [`Handle::profiling_pause`].
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away; `NotSupported` where the metrics come
    /// from GPM, as for [`Handle::profiling_pause`].
    #[doc(alias = "dcgmProfResume")]
    pub fn profiling_resume(&self) -> Result<()> {
        let lib = self.lib();
        // SAFETY: a plain argument on a live handle.
        unsafe { ffi!(lib, dcgmProfResume(self.raw())) }
    }
}
