//! Memory-bandwidth-bound: DRAM busy, the math pipes waiting on it.

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::segment::{Regime, SM_IDLE_RATIO};

use super::Stretch;

/// DRAM active above this share of cycles: the memory interface, not the math, is what the
/// kernels wait on (streaming kernels sit at 0.7 to 0.9; dense math at 0.1 to 0.3).
pub const DRAM_BOUND_RATIO: f64 = 0.6;

/// The busiest math pipe below this share of cycles is left waiting for data.
pub const PIPE_LOW_RATIO: f64 = 0.3;

pub(super) fn judge(st: &Stretch<'_>) -> Vec<Finding> {
    if st.segment.regime == Regime::Periodic {
        return Vec::new();
    }
    let Some(dram) = st.mean(Field::DramActive) else {
        return Vec::new();
    };
    let pipes = [
        Field::TensorActive,
        Field::Fp64Active,
        Field::Fp32Active,
        Field::Fp16Active,
    ];
    let Some((pipe, busiest)) = pipes
        .iter()
        .filter_map(|&f| st.mean(f).map(|v| (f, v)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return Vec::new();
    };
    let sm_busy = st.mean(Field::SmActive).is_none_or(|s| s >= SM_IDLE_RATIO);
    if dram < DRAM_BOUND_RATIO || busiest >= PIPE_LOW_RATIO || !sm_busy {
        return Vec::new();
    }
    let ev = vec![
        Evidence::new("dram_active_mean", dram, "ratio"),
        Evidence::new("busiest_pipe_mean", busiest, "ratio"),
    ];
    vec![st.finding(
        Kind::MemoryBandwidthBound,
        Severity::Warning,
        ev,
        format!(
            "DRAM is busy {:.0} % of cycles while the busiest math pipe ({}) is busy {:.0} %: \
             memory bandwidth sets the pace",
            dram * 100.0,
            pipe.tag(),
            busiest * 100.0
        ),
        "raise arithmetic intensity: fuse kernels so data is read once, use lower-precision \
         types (bf16/fp8), larger tiles, or operator fusion in the compiler",
    )]
}
