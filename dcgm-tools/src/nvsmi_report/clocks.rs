//! The clock sections (`-d CLOCK`, `SUPPORTED_CLOCKS`).

use dcgm::raw::sys::*;

use super::gpu::Gpu;
use super::text::{NA, Report};

impl Gpu<'_> {
    /// `Supported Clocks`: each memory clock with its graphics clocks.
    pub(super) fn supported_clocks(&self, r: &mut Report) {
        let clocks = &self.attrs.supported_clocks;
        if clocks.is_empty() {
            r.kv(1, "Supported Clocks", NA);
            return;
        }
        r.head(1, "Supported Clocks");
        let mut last_mem = None;
        for &(mem, sm) in clocks {
            if last_mem != Some(mem) {
                r.kv(2, "Memory", format!("{mem} MHz"));
                last_mem = Some(mem);
            }
            r.kv(3, "Graphics", format!("{sm} MHz"));
        }
    }

    /// `Clocks`, `Applications Clocks`, the default, deferred, max and boost clocks, the clock
    /// samples when asked, `Clock Policy`.
    pub(super) fn clocks(&self, r: &mut Report) {
        let mhz = |f| self.with(f, "MHz");
        r.head(1, "Clocks");
        r.kv(2, "Graphics", mhz(DCGM_FI_DEV_SM_CLOCK));
        r.kv(2, "SM", mhz(DCGM_FI_DEV_SM_CLOCK));
        r.kv(2, "Memory", mhz(DCGM_FI_DEV_MEM_CLOCK));
        r.kv(2, "Video", mhz(DCGM_FI_DEV_VIDEO_CLOCK));
        r.head(1, "Applications Clocks");
        r.kv(2, "Graphics", mhz(DCGM_FI_DEV_APP_SM_CLOCK));
        r.kv(2, "Memory", mhz(DCGM_FI_DEV_APP_MEM_CLOCK));
        // DCGM has no fields for the default application clocks, deferred clocks and the
        // customer boost clock.
        r.head(1, "Default Applications Clocks");
        r.kv(2, "Graphics", NA);
        r.kv(2, "Memory", NA);
        r.head(1, "Deferred Clocks");
        r.kv(2, "Memory", NA);
        r.head(1, "Max Clocks");
        r.kv(2, "Graphics", mhz(DCGM_FI_DEV_MAX_SM_CLOCK));
        r.kv(2, "SM", mhz(DCGM_FI_DEV_MAX_SM_CLOCK));
        r.kv(2, "Memory", mhz(DCGM_FI_DEV_MAX_MEM_CLOCK));
        r.kv(2, "Video", mhz(DCGM_FI_DEV_MAX_VIDEO_CLOCK));
        r.head(1, "Max Customer Boost Clocks");
        r.kv(2, "Graphics", NA);
        let mhz_of = |v: f64| format!("{} MHz", v.round() as i64);
        self.samples(r, "SM Clock Samples", DCGM_FI_DEV_SM_CLOCK, mhz_of);
        self.samples(r, "Memory Clock Samples", DCGM_FI_DEV_MEM_CLOCK, mhz_of);
        r.head(1, "Clock Policy");
        r.kv(
            2,
            "Auto Boost",
            match self.int(DCGM_FI_DEV_CLOCKS_AUTOBOOST_MODE) {
                Some(0) => "Off",
                Some(_) => "On",
                None => NA,
            },
        );
        r.kv(2, "Auto Boost Default", NA);
    }
}
