//! The fields upstream `DcgmReader` reads when none are given.

/// The 30 fields NVIDIA's `DcgmReader` watches by default, in its order (ids with their
/// DCGM 4.6 names; a test checks each against the field registry).
pub const DEFAULT_FIELD_IDS: [u16; 30] = [
    155,  // DCGM_FI_DEV_BOARD_POWER_WATTS
    150,  // DCGM_FI_DEV_GPU_TEMP_CELSIUS
    100,  // DCGM_FI_DEV_SM_CLOCK
    203,  // DCGM_FI_DEV_GPU_UTIL_RATIO
    392,  // DCGM_FI_DEV_PAGE_RETIRED_PENDING
    390,  // DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL
    391,  // DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL
    310,  // DCGM_FI_DEV_ECC_SBE_VOL_TOTAL
    311,  // DCGM_FI_DEV_ECC_DBE_VOL_TOTAL
    312,  // DCGM_FI_DEV_ECC_SBE_AGG_TOTAL
    313,  // DCGM_FI_DEV_ECC_DBE_AGG_TOTAL
    250,  // DCGM_FI_DEV_FB_TOTAL
    251,  // DCGM_FI_DEV_FB_FREE
    252,  // DCGM_FI_DEV_FB_USED
    202,  // DCGM_FI_DEV_PCIE_REPLAY_TOTAL
    1501, // DCGM_FI_DEV_PCIE_CORRECTABLE_ERROR_TOTAL
    240,  // DCGM_FI_DEV_POWER_VIOLATION
    241,  // DCGM_FI_DEV_THERMAL_VIOLATION
    230,  // DCGM_FI_DEV_XID_ERROR
    409,  // DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL
    419,  // DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL
    429,  // DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL
    439,  // DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_TOTAL
    101,  // DCGM_FI_DEV_MEM_CLOCK
    140,  // DCGM_FI_DEV_MEMORY_TEMP_CELSIUS
    156,  // DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION
    204,  // DCGM_FI_DEV_MEM_COPY_UTIL
    449,  // DCGM_FI_DEV_NVLINK_THROUGHPUT_TOTAL
    200,  // DCGM_FI_DEV_PCIE_TX_THROUGHPUT
    201,  // DCGM_FI_DEV_PCIE_RX_THROUGHPUT
];

#[cfg(test)]
mod tests {
    use dcgm::FieldId;

    /// Each id above is the field its comment names, in DCGM 4.6's registry.
    #[test]
    fn default_ids_match_their_names() {
        let mut n = 0;
        for line in include_str!("defaults.rs").lines() {
            let Some((Ok(id), name)) = line
                .trim()
                .split_once("// DCGM_FI_")
                .map(|(id, name)| (id.trim().trim_end_matches(',').parse::<u16>(), name))
            else {
                continue;
            };
            let name = format!("DCGM_FI_{name}");
            assert_eq!(FieldId::by_name(&name), Some(FieldId(id)), "{name}");
            n += 1;
        }
        assert_eq!(n, super::DEFAULT_FIELD_IDS.len());
    }
}
