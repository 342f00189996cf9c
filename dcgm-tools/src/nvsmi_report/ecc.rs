//! The memory error sections: ECC mode and errors, retired pages, remapped rows (`-d ECC`,
//! `PAGE_RETIREMENT`, `ROW_REMAPPER`).

use dcgm::raw::sys::*;

use super::gpu::Gpu;
use super::text::{NA, Report};

impl Gpu<'_> {
    /// `Retired Pages`.
    pub(super) fn retired_pages(&self, r: &mut Report) {
        r.head(1, "Retired Pages");
        r.kv(
            2,
            "Single Bit ECC",
            self.plain(DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL),
        );
        r.kv(
            2,
            "Double Bit ECC",
            self.plain(DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL),
        );
        r.kv(
            2,
            "Pending Page Blacklist",
            self.yes_no(DCGM_FI_DEV_PAGE_RETIRED_PENDING),
        );
    }

    /// `Remapped Rows`, with the bank remap availability histogram.
    pub(super) fn remapped_rows(&self, r: &mut Report) {
        r.head(1, "Remapped Rows");
        r.kv(
            2,
            "Correctable Error",
            self.plain(DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL),
        );
        r.kv(2, "Inactive Correctable Error", NA);
        r.kv(
            2,
            "Uncorrectable Error",
            self.plain(DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL),
        );
        r.kv(2, "Inactive Uncorrectable Error", NA);
        r.kv(2, "Pending", self.yes_no(DCGM_FI_DEV_ROW_REMAP_PENDING));
        r.kv(
            2,
            "Remapping Failure Occurred",
            self.yes_no(DCGM_FI_DEV_ROW_REMAP_FAILED),
        );
        r.head(2, "Bank Remap Availability Histogram");
        let banks = [
            ("Max", DCGM_FI_DEV_BANK_REMAP_AVAIL_MAX),
            ("High", DCGM_FI_DEV_BANK_REMAP_AVAIL_HIGH),
            ("Partial", DCGM_FI_DEV_BANK_REMAP_AVAIL_PARTIAL),
            ("Low", DCGM_FI_DEV_BANK_REMAP_AVAIL_LOW),
            ("None", DCGM_FI_DEV_BANK_REMAP_AVAIL_NONE),
        ];
        for (label, f) in banks {
            r.kv(3, label, self.with(f, "bank(s)"));
        }
    }

    /// `ECC Mode` and `ECC Errors`: volatile and aggregate, SRAM and DRAM.
    pub(super) fn ecc(&self, r: &mut Report) {
        r.head(1, "ECC Mode");
        r.kv(2, "Current", self.enabled(DCGM_FI_DEV_ECC_MODE));
        r.kv(2, "Pending", self.enabled(DCGM_FI_DEV_ECC_PENDING));
        r.head(1, "ECC Errors");
        let kinds = [
            (
                "Volatile",
                [
                    DCGM_FI_DEV_ECC_SBE_VOL_SRM,
                    DCGM_FI_DEV_ECC_DBE_VOL_SRM,
                    DCGM_FI_DEV_ECC_SBE_VOL_DEV,
                    DCGM_FI_DEV_ECC_DBE_VOL_DEV,
                ],
            ),
            (
                "Aggregate",
                [
                    DCGM_FI_DEV_ECC_SBE_AGG_SRM,
                    DCGM_FI_DEV_ECC_DBE_AGG_SRM,
                    DCGM_FI_DEV_ECC_SBE_AGG_DEV,
                    DCGM_FI_DEV_ECC_DBE_AGG_DEV,
                ],
            ),
        ];
        for (kind, [sram_ce, sram_ue, dram_ce, dram_ue]) in kinds {
            r.head(2, kind);
            r.kv(3, "SRAM Correctable", self.plain(sram_ce));
            // DCGM counts SRAM's uncorrectable errors as one, not parity and SEC-DED apart.
            r.kv(3, "SRAM Uncorrectable Parity", NA);
            r.kv(3, "SRAM Uncorrectable SEC-DED", self.plain(sram_ue));
            r.kv(3, "DRAM Correctable", self.plain(dram_ce));
            r.kv(3, "DRAM Uncorrectable", self.plain(dram_ue));
            if kind == "Aggregate" {
                r.kv(
                    3,
                    "SRAM Threshold Exceeded",
                    self.yes_no(DCGM_FI_DEV_SRAM_EXCEEDED),
                );
            }
        }
        r.head(2, "Aggregate Uncorrectable SRAM Sources");
        r.kv(3, "SRAM L2", self.plain(DCGM_FI_DEV_ECC_DBE_AGG_L2));
        for label in ["SRAM SM", "SRAM Microcontroller", "SRAM PCIE", "SRAM Other"] {
            r.kv(3, label, NA);
        }
        r.kv(2, "Channel Repair Pending", NA);
        r.kv(2, "TPC Repair Pending", NA);
        r.kv(
            2,
            "Unrepairable Memory",
            self.yes_no(DCGM_FI_DEV_MEMORY_UNREPAIRABLE),
        );
    }
}
