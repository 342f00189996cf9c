//! Memory held while idle: a process keeps GPU memory and runs nothing.

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::segment::Regime;

use super::Stretch;

pub(super) fn judge(st: &Stretch<'_>) -> Vec<Finding> {
    if st.segment.regime != Regime::IdleHoldingMemory {
        return Vec::new();
    }
    let Some(used) = st.mean(Field::FbUsed) else {
        return Vec::new();
    };
    let mut ev = vec![
        Evidence::new("fb_used_mean", used, "MiB"),
        Evidence::new("threshold", st.limits.memory_held_mib(), "MiB"),
    ];
    let of = match st.limits.memory_total_mib {
        Some(t) => {
            ev.push(Evidence::new("fb_total", t, "MiB"));
            ev.push(Evidence::new("fb_used_share", used / t, "ratio"));
            format!(" ({:.0} % of {t:.0} MiB)", 100.0 * used / t)
        }
        None => String::new(),
    };
    if let Some(u) = st.mean(Field::GpuUtil) {
        ev.push(Evidence::new("gpu_util_mean", u, "%"));
    }
    vec![st.finding(
        Kind::MemoryHeldIdle,
        Severity::Warning,
        ev,
        format!("{used:.0} MiB{of} of GPU memory is held while nothing runs on the GPU"),
        "find the process holding it (doctor --pid, or the process list) and free it: end idle \
         notebooks or servers, call torch.cuda.empty_cache(), or share the GPU with MIG",
    )]
}
