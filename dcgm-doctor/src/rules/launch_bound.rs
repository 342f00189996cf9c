//! Host-bound (`launch_bound`): a process keeps the GPU lightly busy with kernels too small to
//! fill it. Whatever the utilisation (10 % for a small-batch trainer that syncs every step, 41 %
//! for a batch-1 decoding loop, 93 % for two of them time-slicing one GPU), the SMs are mostly
//! empty while the kernels run, and the host (launching them, Python, waiting on results) sets
//! the pace: more data-loader workers would not help.

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::segment::{IDLE_UTIL_PCT, Regime, SM_IDLE_RATIO, TRANSFER_GR_TO_UTIL};
use crate::stats;

use super::Stretch;
use super::mostly_idle::MOSTLY_IDLE_DUTY;

const ADVICE: &str = "give each launch more work and the host less to do: larger batches (batch \
                      requests together when serving); capture the step in a CUDA graph \
                      (torch.compile(mode=\"reduce-overhead\"), torch.cuda.CUDAGraph); fuse \
                      kernels with torch.compile; use fused optimizers \
                      (torch.optim.AdamW(fused=True)); drop host syncs from the loop (.item(), \
                      .cpu(), printing the loss every step)";

pub(super) fn judge(st: &Stretch<'_>) -> Vec<Finding> {
    if !matches!(
        st.segment.regime,
        Regime::Launch | Regime::Compute | Regime::Periodic
    ) {
        return Vec::new();
    }
    let Some(fill) = st.small_kernels() else {
        return Vec::new();
    };
    let m = |f| stats::mean_over(st.busy_samples(), f);
    let (util, sm, gr) = (m(Field::GpuUtil), m(Field::SmActive), m(Field::GrActive));
    let Some(sm) = sm else {
        return Vec::new();
    };
    // Kernels run: utilisation, or the graphics engine, above idle.
    if !(util.is_some_and(|u| u >= IDLE_UTIL_PCT) || gr.is_some_and(|g| g >= SM_IDLE_RATIO)) {
        return Vec::new();
    }
    // Kernels, not copies: the graphics engine is busy, or PCIe is not.
    let kernels = match (gr, util) {
        (Some(g), Some(u)) => g >= TRANSFER_GR_TO_UTIL * u / 100.0,
        (Some(_), None) => true,
        (None, _) => stats::mean_of(st.samples, crate::Sample::pcie_bytes)
            .is_none_or(|b| b < st.limits.pcie_busy_bytes_per_s()),
    };
    // Something runs them: a GPU whose process lists were read and list nobody is not kept
    // busy by a process (what it shows is another tenant's, or a monitor's).
    let processes = st.processes();
    if !kernels || processes == Some(0) {
        return Vec::new();
    }
    let periodic = st.segment.regime == Regime::Periodic;
    let duty = periodic
        .then(|| st.mean(Field::GpuUtil).map(|u| u / 100.0))
        .flatten();
    let mut ev = Vec::new();
    if let Some(u) = util {
        ev.push(Evidence::new("gpu_util_mean", u, "%"));
    }
    ev.push(Evidence::new("sm_active_mean", sm, "ratio"));
    if let Some(u) = util.filter(|u| *u > 0.0) {
        ev.push(Evidence::new("sm_to_util", sm / (u / 100.0), "ratio"));
    }
    if let Some(g) = gr {
        ev.push(Evidence::new("gr_engine_active_mean", g, "ratio"));
    }
    ev.push(Evidence::new("sm_fill", fill, "ratio"));
    if let Some(o) = m(Field::SmOccupancy) {
        ev.push(Evidence::new("sm_occupancy_mean", o, "ratio"));
    }
    if let Some(d) = duty {
        ev.push(Evidence::new("duty_cycle", d, "ratio"));
    }
    if let Some(n) = processes {
        ev.push(Evidence::new("processes", n as f64, "count"));
    }
    // Bursts of small kernels far apart cost little: the GPU mostly sleeps.
    let severity = if duty.is_some_and(|d| d < MOSTLY_IDLE_DUTY) {
        Severity::Warning
    } else {
        Severity::Problem
    };
    let run = match (duty, util) {
        (Some(d), _) => format!(
            "the GPU works in bursts (busy {:.0} % of the time) of kernels that",
            d * 100.0
        ),
        (None, Some(u)) => format!("kernels run {u:.0} % of the time but"),
        (None, None) => "kernels run but".to_string(),
    };
    vec![st.finding(
        Kind::LaunchBound,
        severity,
        ev,
        format!(
            "host-bound: {run} keep only {} % of the SMs busy while they run (SM active \
             {:.2} %): they are too small, and the host (launching them, Python, waiting on \
             results) sets the pace",
            percent(fill),
            sm * 100.0
        ),
        ADVICE,
    )]
}

/// A ratio as a percentage, with a decimal below 10 % (0.2 %, 28 %).
fn percent(r: f64) -> String {
    let p = r * 100.0;
    if p < 10.0 {
        format!("{p:.1}")
    } else {
        format!("{p:.0}")
    }
}
