//! The performance sections: the P-state, the clock-event reasons and their counters, the
//! sparse operation mode (`-d PERFORMANCE`; the reasons also with `-d CLOCK`).

use dcgm::raw::sys::*;

use super::gpu::Gpu;
use super::text::{NA, Report};

/// NVML's clock-event reason bits (`nvmlClocksEventReason*`), as DCGM's
/// `DCGM_FI_DEV_CLOCKS_EVENT_REASONS` carries them.
pub(super) const REASON_IDLE: i64 = 0x1;
pub(super) const REASON_APP_CLOCKS: i64 = 0x2;
pub(super) const REASON_SW_POWER_CAP: i64 = 0x4;
pub(super) const REASON_HW_SLOWDOWN: i64 = 0x8;
pub(super) const REASON_SYNC_BOOST: i64 = 0x10;
pub(super) const REASON_SW_THERMAL: i64 = 0x20;
pub(super) const REASON_HW_THERMAL: i64 = 0x40;
pub(super) const REASON_HW_POWER_BRAKE: i64 = 0x80;
pub(super) const REASON_DISPLAY_CLOCK: i64 = 0x100;

impl Gpu<'_> {
    /// `Performance State`: the P-state (`P0`).
    pub(super) fn performance_state(&self, r: &mut Report) {
        r.kv(
            1,
            "Performance State",
            self.int(DCGM_FI_DEV_GPU_PSTATE)
                .map(|p| format!("P{p}"))
                .unwrap_or_else(|| NA.into()),
        );
    }

    /// `Clocks Event Reasons`: each of NVML's reasons, active or not.
    pub(super) fn event_reasons(&self, r: &mut Report) {
        r.head(1, "Clocks Event Reasons");
        r.kv(2, "Idle", self.reason(REASON_IDLE));
        r.kv(
            2,
            "Applications Clocks Setting",
            self.reason(REASON_APP_CLOCKS),
        );
        r.kv(2, "SW Power Cap", self.reason(REASON_SW_POWER_CAP));
        r.kv(2, "HW Slowdown", self.reason(REASON_HW_SLOWDOWN));
        r.kv(3, "HW Thermal Slowdown", self.reason(REASON_HW_THERMAL));
        r.kv(
            3,
            "HW Power Brake Slowdown",
            self.reason(REASON_HW_POWER_BRAKE),
        );
        r.kv(2, "Sync Boost", self.reason(REASON_SYNC_BOOST));
        r.kv(2, "SW Thermal Slowdown", self.reason(REASON_SW_THERMAL));
        r.kv(
            2,
            "Display Clock Setting",
            self.reason(REASON_DISPLAY_CLOCK),
        );
    }

    /// `Clocks Event Reasons Counters`: the time each reason held the clocks down.
    pub(super) fn event_reason_counters(&self, r: &mut Report) {
        r.head(1, "Clocks Event Reasons Counters");
        let counters = [
            (
                "SW Power Capping",
                DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP_NS,
            ),
            ("Sync Boost", DCGM_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST_NS),
            (
                "SW Thermal Slowdown",
                DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN_NS,
            ),
            (
                "HW Thermal Slowdown",
                DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN_NS,
            ),
            (
                "HW Power Braking",
                DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN_NS,
            ),
        ];
        for (label, f) in counters {
            r.kv(2, label, self.ns_as_us(f));
        }
    }

    // DCGM cannot read the sparse operation mode: DCGM 4.6's field registry (dcgm-sys's
    // data/fields.tsv, as the real libdcgm 4.6.0 lists it) has no field for it and no
    // DCGM call returns it, so the line is always N/A. nvidia-smi prints it between the
    // clock-event counters and the memory; it goes with PERFORMANCE, the section of the
    // lines before it.
    /// `Sparse Operation Mode`.
    pub(super) fn sparse_operation_mode(&self, r: &mut Report) {
        r.kv(1, "Sparse Operation Mode", NA);
    }
}
