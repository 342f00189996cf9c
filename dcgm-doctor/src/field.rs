//! The signals the doctor reads, named as DCGM names them.

use serde::Serialize;

/// A DCGM field the doctor judges by. Each is keyed in `dmon --json` output by its tag (the
/// key dmon writes for a field given by number) or, where given by name, its `DCGM_FI_*` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Field {
    /// GPU utilisation, % of time a kernel ran (203).
    GpuUtil,
    /// Graphics engine active, ratio 0..1 (1001).
    GrActive,
    /// SM active, ratio 0..1 (1002).
    SmActive,
    /// SM occupancy, ratio 0..1 (1003).
    SmOccupancy,
    /// Tensor pipes active, ratio 0..1 (1004).
    TensorActive,
    /// DRAM interface active, ratio 0..1 (1005).
    DramActive,
    /// FP64 pipes active, ratio 0..1 (1006).
    Fp64Active,
    /// FP32 pipes active, ratio 0..1 (1007).
    Fp32Active,
    /// FP16 pipes active, ratio 0..1 (1008).
    Fp16Active,
    /// PCIe bytes/s sent by the GPU (1009).
    PcieTxBytes,
    /// PCIe bytes/s received by the GPU (1010).
    PcieRxBytes,
    /// NVLink bytes/s sent (1011).
    NvlinkTxBytes,
    /// NVLink bytes/s received (1012).
    NvlinkRxBytes,
    /// Board power, W (155).
    Power,
    /// Enforced power limit, W (164).
    PowerLimit,
    /// SM clock, MHz (100).
    SmClock,
    /// Maximum SM clock, MHz (113).
    SmMaxClock,
    /// GPU temperature, °C (150).
    Temperature,
    /// Framebuffer used, MiB (252).
    FbUsed,
    /// Framebuffer total, MiB (250).
    FbTotal,
    /// Current clock-event reasons, a bit mask (112).
    ClockEventReasons,
    /// Cumulative time clocks were held down by the power limit, ns (240).
    PowerViolation,
    /// Cumulative time clocks were held down by temperature, ns (241).
    ThermalViolation,
    /// Current PCIe link generation (237).
    PcieLinkGen,
    /// Current PCIe link width, lanes (238).
    PcieLinkWidth,
    /// The last XID error, 0 for none (230).
    Xid,
    /// Volatile single-bit ECC errors (310).
    EccSbe,
    /// Volatile double-bit ECC errors (311).
    EccDbe,
    /// PCIe replays (202).
    PcieReplays,
    /// NVLink flit CRC errors, all links (409).
    NvlinkCrcErrors,
}

impl Field {
    /// Every field, in the order of [`Field::index`].
    pub const ALL: [Field; 30] = [
        Field::GpuUtil,
        Field::GrActive,
        Field::SmActive,
        Field::SmOccupancy,
        Field::TensorActive,
        Field::DramActive,
        Field::Fp64Active,
        Field::Fp32Active,
        Field::Fp16Active,
        Field::PcieTxBytes,
        Field::PcieRxBytes,
        Field::NvlinkTxBytes,
        Field::NvlinkRxBytes,
        Field::Power,
        Field::PowerLimit,
        Field::SmClock,
        Field::SmMaxClock,
        Field::Temperature,
        Field::FbUsed,
        Field::FbTotal,
        Field::ClockEventReasons,
        Field::PowerViolation,
        Field::ThermalViolation,
        Field::PcieLinkGen,
        Field::PcieLinkWidth,
        Field::Xid,
        Field::EccSbe,
        Field::EccDbe,
        Field::PcieReplays,
        Field::NvlinkCrcErrors,
    ];

    /// The field's position in [`Field::ALL`] (and in a sample's value array).
    pub fn index(self) -> usize {
        self as usize
    }

    /// DCGM's field id.
    pub fn id(self) -> u16 {
        self.spec().0
    }

    /// DCGM's tag for the field: the key `dmon --json` writes for a field given by number.
    pub fn tag(self) -> &'static str {
        self.spec().1
    }

    /// DCGM's `DCGM_FI_*` name.
    pub fn name(self) -> &'static str {
        self.spec().2
    }

    fn spec(self) -> (u16, &'static str, &'static str, &'static str) {
        match self {
            Field::GpuUtil => (
                203,
                "gpu_utilization",
                "DCGM_FI_DEV_GPU_UTIL",
                "DCGM_FI_DEV_GPU_UTIL_RATIO",
            ),
            Field::GrActive => (
                1001,
                "gr_engine_active",
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO",
            ),
            Field::SmActive => (
                1002,
                "sm_active",
                "DCGM_FI_PROF_SM_ACTIVE",
                "DCGM_FI_PROF_SM_UTIL_RATIO",
            ),
            Field::SmOccupancy => (
                1003,
                "sm_occupancy",
                "DCGM_FI_PROF_SM_OCCUPANCY",
                "DCGM_FI_PROF_SM_OCCUPANCY_RATIO",
            ),
            Field::TensorActive => (
                1004,
                "tensor_active",
                "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                "DCGM_FI_PROF_TENSOR_UTIL_RATIO",
            ),
            Field::DramActive => (
                1005,
                "dram_active",
                "DCGM_FI_PROF_DRAM_ACTIVE",
                "DCGM_FI_PROF_DRAM_UTIL_RATIO",
            ),
            Field::Fp64Active => (
                1006,
                "fp64_active",
                "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
                "DCGM_FI_PROF_FP64_UTIL_RATIO",
            ),
            Field::Fp32Active => (
                1007,
                "fp32_active",
                "DCGM_FI_PROF_PIPE_FP32_ACTIVE",
                "DCGM_FI_PROF_FP32_UTIL_RATIO",
            ),
            Field::Fp16Active => (
                1008,
                "fp16_active",
                "DCGM_FI_PROF_PIPE_FP16_ACTIVE",
                "DCGM_FI_PROF_FP16_UTIL_RATIO",
            ),
            Field::PcieTxBytes => (
                1009,
                "pcie_tx_bytes",
                "DCGM_FI_PROF_PCIE_TX_BYTES",
                "DCGM_FI_PROF_PCIE_TX_BYTES",
            ),
            Field::PcieRxBytes => (
                1010,
                "pcie_rx_bytes",
                "DCGM_FI_PROF_PCIE_RX_BYTES",
                "DCGM_FI_PROF_PCIE_RX_BYTES",
            ),
            Field::NvlinkTxBytes => (
                1011,
                "nvlink_tx_bytes",
                "DCGM_FI_PROF_NVLINK_TX_BYTES",
                "DCGM_FI_PROF_NVLINK_TX_BYTES",
            ),
            Field::NvlinkRxBytes => (
                1012,
                "nvlink_rx_bytes",
                "DCGM_FI_PROF_NVLINK_RX_BYTES",
                "DCGM_FI_PROF_NVLINK_RX_BYTES",
            ),
            Field::Power => (
                155,
                "power_usage",
                "DCGM_FI_DEV_POWER_USAGE",
                "DCGM_FI_DEV_BOARD_POWER_WATTS",
            ),
            Field::PowerLimit => (
                164,
                "enforced_power_limit",
                "DCGM_FI_DEV_ENFORCED_POWER_LIMIT",
                "DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS",
            ),
            Field::SmClock => (
                100,
                "sm_clock",
                "DCGM_FI_DEV_SM_CLOCK",
                "DCGM_FI_DEV_SM_CLOCK",
            ),
            Field::SmMaxClock => (
                113,
                "sm_max_clock",
                "DCGM_FI_DEV_MAX_SM_CLOCK",
                "DCGM_FI_DEV_MAX_SM_CLOCK",
            ),
            Field::Temperature => (
                150,
                "gpu_temp",
                "DCGM_FI_DEV_GPU_TEMP",
                "DCGM_FI_DEV_GPU_TEMP_CELSIUS",
            ),
            Field::FbUsed => (252, "fb_used", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_USED"),
            Field::FbTotal => (
                250,
                "fb_total",
                "DCGM_FI_DEV_FB_TOTAL",
                "DCGM_FI_DEV_FB_TOTAL",
            ),
            Field::ClockEventReasons => (
                112,
                "current_clocks_event_reasons",
                "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
                "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
            ),
            Field::PowerViolation => (
                240,
                "power_violation",
                "DCGM_FI_DEV_POWER_VIOLATION",
                "DCGM_FI_DEV_POWER_VIOLATION",
            ),
            Field::ThermalViolation => (
                241,
                "thermal_violation",
                "DCGM_FI_DEV_THERMAL_VIOLATION",
                "DCGM_FI_DEV_THERMAL_VIOLATION",
            ),
            Field::PcieLinkGen => (
                237,
                "pcie_link_gen",
                "DCGM_FI_DEV_PCIE_LINK_GEN",
                "DCGM_FI_DEV_PCIE_LINK_GEN",
            ),
            Field::PcieLinkWidth => (
                238,
                "pcie_link_width",
                "DCGM_FI_DEV_PCIE_LINK_WIDTH",
                "DCGM_FI_DEV_PCIE_LINK_WIDTH",
            ),
            Field::Xid => (
                230,
                "xid_errors",
                "DCGM_FI_DEV_XID_ERRORS",
                "DCGM_FI_DEV_XID_ERROR",
            ),
            Field::EccSbe => (
                310,
                "ecc_sbe_volatile_total",
                "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
                "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
            ),
            Field::EccDbe => (
                311,
                "ecc_dbe_volatile_total",
                "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
            ),
            Field::PcieReplays => (
                202,
                "pcie_replay_counter",
                "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
                "DCGM_FI_DEV_PCIE_REPLAY_TOTAL",
            ),
            Field::NvlinkCrcErrors => (
                409,
                "nvlink_flit_crc_error_count_total",
                "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
                "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL",
            ),
        }
    }

    /// DCGM 4.6's `DCGM_FI_*` name, where it renamed the field.
    pub fn name_4_6(self) -> &'static str {
        self.spec().3
    }

    /// The field a `dmon --json` key names: its tag, its `DCGM_FI_*` name (4.6 or earlier), or
    /// its number.
    pub fn from_key(key: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| {
            key == f.tag()
                || key.eq_ignore_ascii_case(f.name())
                || key.eq_ignore_ascii_case(f.name_4_6())
                || key == f.id().to_string()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_the_position_in_all() {
        for (i, f) in Field::ALL.iter().enumerate() {
            assert_eq!(f.index(), i);
        }
    }

    #[test]
    fn keys_are_found_by_tag_name_or_number() {
        assert_eq!(Field::from_key("sm_active"), Some(Field::SmActive));
        assert_eq!(
            Field::from_key("DCGM_FI_PROF_SM_ACTIVE"),
            Some(Field::SmActive)
        );
        assert_eq!(Field::from_key("1002"), Some(Field::SmActive));
        assert_eq!(Field::from_key("timestamp_ms"), None);
    }
}
