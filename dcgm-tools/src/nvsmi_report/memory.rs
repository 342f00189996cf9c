//! The memory, compute mode and utilisation sections (`-d MEMORY`, `COMPUTE`, `UTILIZATION`).

use dcgm::raw::sys::*;

use super::gpu::Gpu;
use super::text::{NA, Report};

impl Gpu<'_> {
    /// `FB Memory Usage`, `BAR1 Memory Usage`, `Conf Compute Protected Memory Usage`.
    pub(super) fn memory(&self, r: &mut Report) {
        r.head(1, "FB Memory Usage");
        r.kv(2, "Total", self.with(DCGM_FI_DEV_FB_TOTAL, "MiB"));
        r.kv(2, "Reserved", self.with(DCGM_FI_DEV_FB_RESERVED, "MiB"));
        r.kv(2, "Used", self.with(DCGM_FI_DEV_FB_USED, "MiB"));
        r.kv(2, "Free", self.with(DCGM_FI_DEV_FB_FREE, "MiB"));
        r.head(1, "BAR1 Memory Usage");
        r.kv(2, "Total", self.with(DCGM_FI_DEV_BAR1_TOTAL, "MiB"));
        r.kv(2, "Used", self.with(DCGM_FI_DEV_BAR1_USED, "MiB"));
        r.kv(2, "Free", self.with(DCGM_FI_DEV_BAR1_FREE, "MiB"));
        // DCGM has no field for confidential-compute protected memory.
        r.head(1, "Conf Compute Protected Memory Usage");
        for label in ["Total", "Used", "Free"] {
            r.kv(2, label, NA);
        }
    }

    /// `Compute Mode`.
    pub(super) fn compute_mode(&self, r: &mut Report) {
        r.kv(
            1,
            "Compute Mode",
            match self.int(DCGM_FI_DEV_GPU_COMPUTE_MODE) {
                Some(0) => "Default",
                Some(1) => "Exclusive_Thread",
                Some(2) => "Prohibited",
                Some(3) => "Exclusive_Process",
                _ => NA,
            },
        );
    }

    /// `Utilization`: GPU, memory, encoder, decoder, JPEG, OFA.
    pub(super) fn utilization(&self, r: &mut Report) {
        r.head(1, "Utilization");
        r.kv(2, "GPU", self.with(DCGM_FI_DEV_GPU_UTIL_RATIO, "%"));
        r.kv(2, "Memory", self.with(DCGM_FI_DEV_MEM_COPY_UTIL, "%"));
        r.kv(2, "Encoder", self.with(DCGM_FI_DEV_ENC_UTIL, "%"));
        r.kv(2, "Decoder", self.with(DCGM_FI_DEV_DEC_UTIL, "%"));
        // JPEG and OFA utilisation are profiling metrics only, per engine.
        r.kv(2, "JPEG", NA);
        r.kv(2, "OFA", NA);
    }
}
