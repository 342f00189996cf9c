//! The PCI section (`-d PCIE`).

use dcgm::raw::sys::*;

use super::gpu::Gpu;
use super::text::{NA, Report};

impl Gpu<'_> {
    /// `PCI`: the bus id's parts, ids, link generation and width, replays, throughput.
    pub(super) fn pci(&self, r: &mut Report) {
        r.head(1, "PCI");
        // `00000000:00:06.0`: domain, bus, device.function.
        let bus_id = &self.attrs.pci_bus_id;
        let mut parts = bus_id.split([':', '.']);
        let (domain, bus, device) = (parts.next(), parts.next(), parts.next());
        let hex = |s: Option<&str>, digits: usize| {
            s.and_then(|s| u32::from_str_radix(s, 16).ok())
                .map(|v| format!("0x{v:0digits$X}"))
                .unwrap_or_else(|| NA.into())
        };
        r.kv(2, "Bus", hex(bus, 2));
        r.kv(2, "Device", hex(device, 2));
        r.kv(2, "Domain", hex(domain, 4));
        r.kv(2, "Base Classcode", NA);
        r.kv(2, "Sub Classcode", NA);
        r.kv(
            2,
            "Device Id",
            self.attrs
                .pci_device_id
                .map(|d| format!("0x{d:08X}"))
                .unwrap_or_else(|| NA.into()),
        );
        r.kv(2, "Bus Id", bus_id);
        r.kv(
            2,
            "Sub System Id",
            self.int(DCGM_FI_DEV_PCI_SUBSYS_ID)
                .map(|d| format!("0x{d:08X}"))
                .unwrap_or_else(|| NA.into()),
        );
        r.head(2, "GPU Link Info");
        r.head(3, "PCIe Generation");
        r.kv(4, "Max", self.plain(DCGM_FI_DEV_PCIE_MAX_LINK_GEN));
        r.kv(4, "Current", self.plain(DCGM_FI_DEV_PCIE_LINK_GEN));
        // DCGM reads the link as the system has it, not the device's and host's sides apart.
        r.kv(4, "Device Current", NA);
        r.kv(4, "Device Max", NA);
        r.kv(4, "Host Max", NA);
        r.head(3, "Link Width");
        let width = |f| {
            self.int(f)
                .map(|w| format!("{w}x"))
                .unwrap_or_else(|| NA.into())
        };
        r.kv(4, "Max", width(DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH));
        r.kv(4, "Current", width(DCGM_FI_DEV_PCIE_LINK_WIDTH));
        r.head(2, "Bridge Chip");
        r.kv(3, "Type", NA);
        r.kv(3, "Firmware", NA);
        r.kv(
            2,
            "Replays Since Reset",
            self.plain(DCGM_FI_DEV_PCIE_REPLAY_TOTAL),
        );
        r.kv(2, "Replay Number Rollovers", NA);
        r.kv(
            2,
            "Tx Throughput",
            self.with(DCGM_FI_DEV_PCIE_TX_THROUGHPUT, "KB/s"),
        );
        r.kv(
            2,
            "Rx Throughput",
            self.with(DCGM_FI_DEV_PCIE_RX_THROUGHPUT, "KB/s"),
        );
        r.kv(2, "Atomic Caps Outbound", NA);
        r.kv(2, "Atomic Caps Inbound", NA);
    }
}
