//! Compute-bound and healthy: the SMs are busy, which is what a GPU is for.

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::segment::Regime;

use super::Stretch;

/// SM active above this share of cycles: the GPU is doing its job (tensor-core matmuls reach
/// 0.9 and more; the rest is kernel boundaries and the tail of each wave).
pub const SM_BUSY_RATIO: f64 = 0.8;

pub(super) fn judge(st: &Stretch<'_>) -> Vec<Finding> {
    if st.segment.regime == Regime::Periodic {
        return Vec::new();
    }
    let Some(sm) = st.mean(Field::SmActive) else {
        return Vec::new();
    };
    if sm < SM_BUSY_RATIO {
        return Vec::new();
    }
    let mut ev = vec![Evidence::new("sm_active_mean", sm, "ratio")];
    for (name, f) in [
        ("tensor_active_mean", Field::TensorActive),
        ("sm_occupancy_mean", Field::SmOccupancy),
        ("dram_active_mean", Field::DramActive),
        ("gpu_util_mean", Field::GpuUtil),
    ] {
        if let Some(v) = st.mean(f) {
            let unit = if f == Field::GpuUtil { "%" } else { "ratio" };
            ev.push(Evidence::new(name, v, unit));
        }
    }
    let tensor = st
        .mean(Field::TensorActive)
        .map(|t| format!(", tensor cores {:.0} %", t * 100.0))
        .unwrap_or_default();
    vec![st.finding(
        Kind::ComputeBound,
        Severity::Info,
        ev,
        format!(
            "the SMs are busy {:.0} % of cycles{tensor}: compute-bound, as a GPU should be",
            sm * 100.0
        ),
        "nothing to fix; to go faster, use lower precision or a better kernel, or more GPUs",
    )]
}
