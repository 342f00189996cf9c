//! PCIe-transfer-bound: the GPU moves data over PCIe while its SMs idle.

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::segment::{Regime, SM_IDLE_RATIO, TRANSFER_GR_TO_UTIL};
use crate::stats;

use super::Stretch;

/// Below this share of the link's rate, a copy loop is limited by how it copies (pageable
/// memory staged by the driver), not by the link: pinning the memory is the fix.
pub const PAGEABLE_LINK_FRACTION: f64 = 0.5;

pub(super) fn judge(st: &Stretch<'_>) -> Vec<Finding> {
    if st.segment.regime == Regime::Periodic {
        return Vec::new();
    }
    let (Some(sm), Some(pcie)) = (
        st.mean(Field::SmActive),
        stats::mean_of(st.samples, crate::Sample::pcie_bytes),
    ) else {
        return Vec::new();
    };
    let busy = st.limits.pcie_busy_bytes_per_s();
    let util = st.mean(Field::GpuUtil);
    let gr_quiet = match (st.mean(Field::GrActive), util) {
        (Some(g), Some(u)) => g < TRANSFER_GR_TO_UTIL * u / 100.0,
        (Some(g), None) => g < SM_IDLE_RATIO,
        (None, _) => true,
    };
    if sm >= SM_IDLE_RATIO || pcie < busy || !gr_quiet {
        return Vec::new();
    }
    let mut ev = vec![Evidence::new("pcie_bytes_mean", pcie, "B/s")];
    for (name, f) in [
        ("pcie_rx_mean", Field::PcieRxBytes),
        ("pcie_tx_mean", Field::PcieTxBytes),
    ] {
        if let Some(v) = st.mean(f) {
            ev.push(Evidence::new(name, v, "B/s"));
        }
    }
    ev.push(Evidence::new("sm_active_mean", sm, "ratio"));
    if let Some(u) = util {
        ev.push(Evidence::new("gpu_util_mean", u, "%"));
    }
    let (link_note, advice) = match st.limits.pcie_link_bytes_per_s {
        Some(link) => {
            let share = pcie / link;
            ev.push(Evidence::new("pcie_link_rate", link, "B/s"));
            ev.push(Evidence::new("pcie_link_share", share, "ratio"));
            let advice = if share < PAGEABLE_LINK_FRACTION {
                "the link is far from full: copy from pinned (page-locked) host memory, in \
                 larger batches, overlapped with compute on a separate stream"
            } else {
                "the link is nearly full: move less data (keep it on the GPU, compress, \
                 cache), or overlap the copies with compute on a separate stream"
            };
            (
                format!(", {:.0} % of the link's rate", share * 100.0),
                advice,
            )
        }
        None => (
            " (the link's generation and width are not in the samples)".to_string(),
            "pageable copies reach only about a third of a link: copy from pinned \
             (page-locked) host memory, overlap copies with compute, or keep the data on the GPU",
        ),
    };
    vec![st.finding(
        Kind::PcieTransferBound,
        Severity::Problem,
        ev,
        format!(
            "the GPU moves {:.1} GB/s over PCIe{link_note} while its SMs idle (SM active \
             {:.1} %)",
            pcie / 1e9,
            sm * 100.0
        ),
        advice,
    )]
}
