//! The power sections: readings and limits with their samples, smoothing, workload profiles
//! (`-d POWER`, `POWER_SMOOTHING`, `POWER_PROFILES`).

use dcgm::raw::sys::*;

use super::gpu::Gpu;
use super::text::{NA, Report};

impl Gpu<'_> {
    /// `GPU Power Readings` (with `Power Samples` when asked), `GPU Memory Power Readings`,
    /// `Module Power Readings`.
    pub(super) fn power(&self, r: &mut Report) {
        r.head(1, "GPU Power Readings");
        r.kv(
            2,
            "Average Power Draw",
            self.watts(DCGM_FI_DEV_BOARD_POWER_WATTS),
        );
        r.kv(
            2,
            "Instantaneous Power Draw",
            self.watts(DCGM_FI_DEV_BOARD_POWER_RAW_WATTS),
        );
        let limits = [
            (
                "Current Power Limit",
                DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS,
            ),
            (
                "Requested Power Limit",
                DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS,
            ),
            (
                "Default Power Limit",
                DCGM_FI_DEV_BOARD_POWER_LIMIT_DEFAULT_WATTS,
            ),
            ("Min Power Limit", DCGM_FI_DEV_BOARD_POWER_LIMIT_MIN_WATTS),
            ("Max Power Limit", DCGM_FI_DEV_BOARD_POWER_LIMIT_MAX_WATTS),
        ];
        for (label, f) in limits {
            r.kv(2, label, self.watts(f));
        }
        self.samples(r, "Power Samples", DCGM_FI_DEV_BOARD_POWER_WATTS, |w| {
            format!("{w:.2} W")
        });
        // nvidia-smi's own heading ends with a space.
        r.head(1, "GPU Memory Power Readings ");
        r.kv(2, "Average Power Draw", NA);
        r.kv(2, "Instantaneous Power Draw", NA);
        r.head(1, "Module Power Readings");
        for label in ["Average Power Draw", "Instantaneous Power Draw"]
            .into_iter()
            .chain(limits.iter().map(|(l, _)| *l))
        {
            r.kv(2, label, NA);
        }
    }

    /// `Power Smoothing`.
    pub(super) fn power_smoothing(&self, r: &mut Report) {
        r.kv(
            1,
            "Power Smoothing",
            self.enabled(DCGM_FI_DEV_PWR_SMOOTHING_ENABLED),
        );
    }

    /// `Workload Power Profiles`: requested and enforced.
    pub(super) fn power_profiles(&self, r: &mut Report) {
        r.head(1, "Workload Power Profiles");
        r.kv(
            2,
            "Requested Profiles",
            self.mask(DCGM_FI_DEV_BOARD_POWER_PROFILE_REQUESTED_MASK),
        );
        r.kv(
            2,
            "Enforced Profiles",
            self.mask(DCGM_FI_DEV_BOARD_POWER_PROFILE_ENFORCED_MASK),
        );
    }

    /// A bit mask of power profiles: the ids of its bits, or `N/A`.
    fn mask(&self, field: u16) -> String {
        match self.int(field) {
            Some(0) => "None".into(),
            Some(m) => (0..64)
                .filter(|b| m & (1 << b) != 0)
                .map(|b: i64| b.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            None => NA.into(),
        }
    }
}
