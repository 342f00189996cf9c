//! Launch-bound or tiny kernels: utilisation says busy, the SMs say otherwise.

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::segment::{LAUNCH_SM_TO_UTIL, Regime, TRANSFER_GR_TO_UTIL};
use crate::stats;

use super::Stretch;

/// Below this utilisation (%) the GPU is mostly idle, and small kernels are not what holds
/// it back.
pub const MIN_UTIL_PCT: f64 = 20.0;

pub(super) fn judge(st: &Stretch<'_>) -> Vec<Finding> {
    if st.segment.regime == Regime::Periodic {
        return Vec::new();
    }
    let (Some(util), Some(sm)) = (st.mean(Field::GpuUtil), st.mean(Field::SmActive)) else {
        return Vec::new();
    };
    if util < MIN_UTIL_PCT || sm >= LAUNCH_SM_TO_UTIL * util / 100.0 {
        return Vec::new();
    }
    // Kernels, not copies: the graphics engine is busy, or PCIe is not.
    let gr = st.mean(Field::GrActive);
    let kernels = match gr {
        Some(g) => g >= TRANSFER_GR_TO_UTIL * util / 100.0,
        None => stats::mean_of(st.samples, crate::Sample::pcie_bytes)
            .is_none_or(|b| b < st.limits.pcie_busy_bytes_per_s()),
    };
    if !kernels {
        return Vec::new();
    }
    let mut ev = vec![
        Evidence::new("gpu_util_mean", util, "%"),
        Evidence::new("sm_active_mean", sm, "ratio"),
        Evidence::new("sm_to_util", sm / (util / 100.0), "ratio"),
    ];
    if let Some(g) = gr {
        ev.push(Evidence::new("gr_engine_active_mean", g, "ratio"));
    }
    vec![st.finding(
        Kind::LaunchBound,
        Severity::Problem,
        ev,
        format!(
            "kernels run {util:.0} % of the time but keep the SMs only {:.2} % busy: they are too \
             small, and launching them costs more than running them",
            sm * 100.0
        ),
        "batch the work into fewer, larger kernels (fuse element-wise ops, torch.compile), or \
         capture the launches in a CUDA graph",
    )]
}
