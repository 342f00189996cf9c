//! Compute-bound and healthy: the SMs are busy, and so is a math pipe: the GPU does what it is
//! for. SM activity alone is not enough: a streaming kernel keeps every SM busy waiting on
//! DRAM (SM active 0.99 with every pipe under 0.02 in the H200 field trace's `stream_add`),
//! which is `memory_bandwidth_bound`, never both.

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::segment::{PIPE_BUSY_RATIO, Regime};

use super::{Stretch, tensor_cores};

/// SM active above this share of cycles: the SMs are kept busy (tensor-core matmuls reach
/// 0.9 and more; the rest is kernel boundaries and the tail of each wave).
pub const SM_BUSY_RATIO: f64 = 0.8;

pub(super) fn judge(st: &Stretch<'_>) -> Vec<Finding> {
    if st.segment.regime == Regime::Periodic {
        return Vec::new();
    }
    let (Some(sm), Some((pipe, busiest))) = (st.mean(Field::SmActive), st.busiest_pipe()) else {
        return Vec::new();
    };
    // Math in the FP32/FP64 pipes with the tensor cores idle is told as such instead.
    if sm < SM_BUSY_RATIO || busiest < PIPE_BUSY_RATIO || tensor_cores::unused(st).is_some() {
        return Vec::new();
    }
    let mut ev = vec![
        Evidence::new("sm_active_mean", sm, "ratio"),
        Evidence::new("busiest_pipe_mean", busiest, "ratio"),
    ];
    for (name, f) in [
        ("tensor_active_mean", Field::TensorActive),
        ("fp32_active_mean", Field::Fp32Active),
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
        .filter(|_| pipe != Field::TensorActive)
        .map(|t| format!(", tensor cores {:.0} %", t * 100.0))
        .unwrap_or_default();
    vec![st.finding(
        Kind::ComputeBound,
        Severity::Info,
        ev,
        format!(
            "the SMs are busy {:.0} % of cycles and the busiest math pipe ({}) {:.0} %{tensor}: \
             compute-bound, as a GPU should be",
            sm * 100.0,
            pipe.tag(),
            busiest * 100.0
        ),
        "nothing to fix; to go faster, use lower precision or a better kernel, or more GPUs",
    )]
}
