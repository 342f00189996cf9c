//! PCIe: replays in the last minute against the budget of the link's generation and width.

use dcgm_sys::*;

use super::messages::full;
use super::samples::{first_last, latest};
use super::{Ctx, Incident};

/// Replays a minute one lane may see, by PCIe generation (1 to 6): a bit error rate of
/// 10^-12 at the generation's rate (2.5, 5, 8, 16, 32, 64 GT/s) over 60 s.
pub const REPLAYS_PER_LANE_MINUTE: [f64; 6] = [0.15, 0.3, 0.48, 0.96, 1.92, 3.84];

/// The replays a minute a link of `generation` and `lanes` may see (rounded up); newer
/// generations than DCGM knows count as the newest it knows.
pub fn replay_budget(generation: i64, lanes: i64) -> i64 {
    let g = generation.clamp(1, REPLAY_GENERATIONS) as usize;
    (REPLAYS_PER_LANE_MINUTE[g - 1] * lanes as f64).ceil() as i64
}

const REPLAY_GENERATIONS: i64 = REPLAYS_PER_LANE_MINUTE.len() as i64;

/// Warns when the replays of the last minute exceed the link's budget; says nothing when the
/// link's generation or width is unknown.
pub fn check(c: &Ctx, out: &mut Vec<Incident>) {
    let Some((first, last)) = first_last(c, DCGM_FI_DEV_PCIE_REPLAY_TOTAL, c.start) else {
        return;
    };
    let replays = (last - first).abs();
    let (Some(generation), Some(lanes)) = (
        latest(c, DCGM_FI_DEV_PCIE_LINK_GEN),
        latest(c, DCGM_FI_DEV_PCIE_LINK_WIDTH),
    ) else {
        return;
    };
    let budget = replay_budget(generation, lanes);
    if replays > budget {
        let gpu = c.entity.entityId;
        c.report(
            out,
            DCGM_HEALTH_WATCH_PCIE,
            DCGM_HEALTH_RESULT_WARN,
            DCGM_FR_PCI_REPLAY_RATE,
            full(
                DCGM_FR_PCI_REPLAY_RATE,
                format!(
                    "Detected more than {budget} PCIe replays per minute for GPU {gpu} : {replays}"
                ),
            ),
        );
    }
}
