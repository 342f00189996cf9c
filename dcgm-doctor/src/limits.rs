//! A GPU's own limits, which every rule judges against: maximum SM clock, power limit, memory
//! size and PCIe link rate. Each comes from the GPU's samples where DCGM reported it, and is
//! unknown otherwise (a replay file recorded without those fields).

use serde::Serialize;

use crate::field::Field;
use crate::sample::Sample;
use crate::stats;

/// Per-lane PCIe data rate, bytes/s, after line encoding, by generation (1 to 6): 2.5 and 5
/// GT/s with 8b/10b; 8, 16, 32 GT/s with 128b/130b; Gen6's 64 GT/s PAM4 with FLIT encoding.
const PCIE_LANE_BYTES_PER_S: [f64; 6] = [0.25e9, 0.5e9, 0.985e9, 1.969e9, 3.938e9, 7.563e9];

/// The share of the link's rate in one direction above which PCIe traffic counts as what the
/// GPU is doing. Pageable host copies reach only about a third of a link (the driver stages
/// them through a pinned buffer), pinned ones 80-90 %: a quarter catches both, and stays far
/// above the few MB/s of a GPU running kernels on data already in its memory.
pub const PCIE_BUSY_LINK_FRACTION: f64 = 0.25;

/// The link assumed where DCGM did not report one: Gen3 x16, the slowest link a data-centre
/// GPU of the last decade sits on, so that traffic called busy would be busy on any of them.
pub const PCIE_FALLBACK_LINK_BYTES_PER_S: f64 = 16.0 * 0.985e9;

/// The share of the GPU's memory that, held while it idles, is worth reporting: a quarter is
/// far above a CUDA context and a framework's allocator reserve at rest.
pub const MEMORY_HELD_FRACTION: f64 = 0.25;

/// Where the memory size is unknown: 8 GiB is more than any framework's context and cache at
/// rest (about 0.5 to 2 GiB) and a real share of any data-centre GPU's memory (16 to 192 GiB).
pub const MEMORY_HELD_FALLBACK_MIB: f64 = 8192.0;

/// A GPU's limits, each `None` where unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Limits {
    /// Maximum SM clock, MHz.
    pub max_sm_clock_mhz: Option<f64>,
    /// Enforced power limit, W.
    pub power_limit_w: Option<f64>,
    /// Framebuffer size, MiB.
    pub memory_total_mib: Option<f64>,
    /// The PCIe link's rate in one direction, bytes/s (from its generation and width).
    pub pcie_link_bytes_per_s: Option<f64>,
}

impl Limits {
    /// The limits the samples report (the latest value of each).
    pub fn from_samples(samples: &[Sample]) -> Self {
        let gen_ = stats::latest(samples, Field::PcieLinkGen);
        let width = stats::latest(samples, Field::PcieLinkWidth);
        let link = match (gen_, width) {
            (Some(g), Some(w)) if (1.0..=6.0).contains(&g) && w >= 1.0 => {
                Some(PCIE_LANE_BYTES_PER_S[g as usize - 1] * w)
            }
            _ => None,
        };
        let positive = |f| stats::latest(samples, f).filter(|&v| v > 0.0);
        Limits {
            max_sm_clock_mhz: positive(Field::SmMaxClock),
            power_limit_w: positive(Field::PowerLimit),
            memory_total_mib: positive(Field::FbTotal),
            pcie_link_bytes_per_s: link,
        }
    }

    /// Bytes/s in one direction above which PCIe traffic is what the GPU is busy with.
    pub fn pcie_busy_bytes_per_s(&self) -> f64 {
        PCIE_BUSY_LINK_FRACTION
            * self
                .pcie_link_bytes_per_s
                .unwrap_or(PCIE_FALLBACK_LINK_BYTES_PER_S)
    }

    /// MiB of framebuffer that, held while idle, is worth reporting.
    pub fn memory_held_mib(&self) -> f64 {
        self.memory_total_mib
            .map_or(MEMORY_HELD_FALLBACK_MIB, |t| MEMORY_HELD_FRACTION * t)
    }
}
