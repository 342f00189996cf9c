//! Memory-bandwidth-bound: DRAM busy, the math pipes waiting on it (every pipe below
//! [`PIPE_BUSY_RATIO`], which `compute_bound` needs one above: the two never meet).

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::segment::{DRAM_BOUND_RATIO, PIPE_BUSY_RATIO, Regime, SM_IDLE_RATIO};

use super::Stretch;

pub(super) fn judge(st: &Stretch<'_>) -> Vec<Finding> {
    if st.segment.regime == Regime::Periodic {
        return Vec::new();
    }
    let Some(dram) = st.mean(Field::DramActive) else {
        return Vec::new();
    };
    let Some((pipe, busiest)) = st.busiest_pipe() else {
        return Vec::new();
    };
    let sm_busy = st.mean(Field::SmActive).is_none_or(|s| s >= SM_IDLE_RATIO);
    if dram < DRAM_BOUND_RATIO || busiest >= PIPE_BUSY_RATIO || !sm_busy {
        return Vec::new();
    }
    let mut ev = vec![
        Evidence::new("dram_active_mean", dram, "ratio"),
        Evidence::new("busiest_pipe_mean", busiest, "ratio"),
    ];
    if let Some(sm) = st.mean(Field::SmActive) {
        ev.push(Evidence::new("sm_active_mean", sm, "ratio"));
    }
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
