//! The DCGM fields each GPU or MIG instance row of the view shows.

use dcgm::FieldId;

/// What each row of the view shows, by field.
pub struct Fields {
    pub(crate) util: FieldId,
    pub(crate) fb_used: FieldId,
    pub(crate) fb_total: FieldId,
    pub(crate) power: FieldId,
    pub(crate) temp: FieldId,
    pub(crate) sm_clock: FieldId,
    pub(crate) mem_clock: FieldId,
    pub(crate) pcie_tx: FieldId,
    pub(crate) pcie_rx: FieldId,
    pub(crate) nvlink_tx: FieldId,
    pub(crate) nvlink_rx: FieldId,
    pub(crate) enc: FieldId,
    pub(crate) dec: FieldId,
}

impl Fields {
    pub(crate) fn new() -> Self {
        let f = |n: &str| FieldId::parse(n).expect("a DCGM 4.6 field");
        Self {
            util: f("DCGM_FI_DEV_GPU_UTIL"),
            fb_used: f("DCGM_FI_DEV_FB_USED"),
            fb_total: f("DCGM_FI_DEV_FB_TOTAL"),
            power: f("DCGM_FI_DEV_POWER_USAGE"),
            temp: f("DCGM_FI_DEV_GPU_TEMP"),
            sm_clock: f("DCGM_FI_DEV_SM_CLOCK"),
            mem_clock: f("DCGM_FI_DEV_MEM_CLOCK"),
            pcie_tx: f("DCGM_FI_PROF_PCIE_TX_BYTES"),
            pcie_rx: f("DCGM_FI_PROF_PCIE_RX_BYTES"),
            nvlink_tx: f("DCGM_FI_PROF_NVLINK_TX_BYTES"),
            nvlink_rx: f("DCGM_FI_PROF_NVLINK_RX_BYTES"),
            enc: f("DCGM_FI_DEV_ENC_UTIL"),
            dec: f("DCGM_FI_DEV_DEC_UTIL"),
        }
    }

    pub(crate) fn all(&self) -> Vec<FieldId> {
        vec![
            self.util,
            self.fb_used,
            self.fb_total,
            self.power,
            self.temp,
            self.sm_clock,
            self.mem_clock,
            self.pcie_tx,
            self.pcie_rx,
            self.nvlink_tx,
            self.nvlink_rx,
            self.enc,
            self.dec,
        ]
    }
}
