//! The temperature section (`-d TEMPERATURE`).

use dcgm::raw::sys::*;

use super::gpu::Gpu;
use super::text::{NA, Report};

impl Gpu<'_> {
    /// `Temperature`: the GPU's and the memory's.
    pub(super) fn temperature(&self, r: &mut Report) {
        r.head(1, "Temperature");
        r.kv(
            2,
            "GPU Current Temp",
            self.with(DCGM_FI_DEV_GPU_TEMP_CELSIUS, "C"),
        );
        r.kv(
            2,
            "GPU T.Limit Temp",
            self.with(DCGM_FI_DEV_GPU_TEMP_MARGIN_CELSIUS, "C"),
        );
        // nvidia-smi gives these relative to T.Limit; DCGM's thresholds are absolute
        // temperatures, which would read wrong under these labels.
        r.kv(2, "GPU Shutdown T.Limit Temp", NA);
        r.kv(2, "GPU Slowdown T.Limit Temp", NA);
        r.kv(2, "GPU Max Operating T.Limit Temp", NA);
        r.kv(2, "GPU Target Temperature", NA);
        r.kv(
            2,
            "Memory Current Temp",
            self.with(DCGM_FI_DEV_MEMORY_TEMP_CELSIUS, "C"),
        );
        r.kv(2, "Memory Max Operating T.Limit Temp", NA);
    }
}
