//! `topology`: the GPU-to-GPU link matrix and CPU affinity, like `nvidia-smi topo -m`.
//!
//! ```text
//! dcgm-topology --simulate
//! ```

use dcgm_tools as common;

use std::process::ExitCode;

use clap::Parser;
use dcgm::PciPath;

#[derive(Debug, Parser)]
#[command(name = "topology", about = "GPU-to-GPU link matrix and CPU affinity", after_help = common::EXIT_STATUS)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// One JSON document instead of the matrix.
    #[arg(long)]
    json: bool,
}

fn pci_name(p: PciPath) -> &'static str {
    match p {
        PciPath::Board => "PSB",
        PciPath::SingleSwitch => "PIX",
        PciPath::MultipleSwitches => "PXB",
        PciPath::HostBridge => "PHB",
        PciPath::Cpu => "NODE",
        PciPath::System => "SYS",
        PciPath::Unknown => "?",
    }
}

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    let handle = cli.conn.open()?;
    let sys = handle.system();
    let gpus = sys.gpu_ids()?;
    let mut rows = Vec::new();
    for &g in &gpus {
        let t = match sys.device_topology(g) {
            Ok(t) => t,
            // DCGM has no topology for a lone GPU: the matrix is just that GPU, and its CPU
            // affinity comes from the kernel when the GPU is local.
            Err(e) if gpus.len() == 1 && e.code() == dcgm::ReturnCode::NotSupported => {
                lone_gpu_topology(&handle, g)
            }
            Err(e) => return Err(e.into()),
        };
        rows.push((g, t));
    }
    if cli.json {
        let doc: Vec<serde_json::Value> = rows
            .iter()
            .map(|(g, t)| {
                serde_json::json!({
                    "gpu": g,
                    "cpu_affinity": common::ranges(&t.cpu_affinity),
                    "peers": t.paths.iter().map(|p| serde_json::json!({
                        "gpu": p.gpu, "pci": pci_name(p.pci), "nvlinks": p.nvlinks,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        common::outln!(
            "{}",
            serde_json::json!({"simulated": handle.is_simulated(), "gpus": doc})
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut header = String::from("      ");
    for g in &gpus {
        header += &format!("{:>7}", format!("GPU{g}"));
    }
    header += "  CPU Affinity";
    common::outln!("{header}");
    for (g, t) in &rows {
        let mut line = format!("{:<6}", format!("GPU{g}"));
        for other in &gpus {
            let cell = if other == g {
                "X".to_string()
            } else {
                match t.paths.iter().find(|p| p.gpu == *other) {
                    Some(p) if p.nvlinks > 0 => format!("NV{}", p.nvlinks),
                    Some(p) => pci_name(p.pci).to_string(),
                    None => "?".to_string(),
                }
            };
            line += &format!("{cell:>7}");
        }
        if t.cpu_affinity.is_empty() {
            line += "  N/A";
        } else {
            line += &format!("  {}", common::ranges(&t.cpu_affinity));
        }
        common::outln!("{line}");
    }
    common::outln!();
    common::outln!("Legend: X = self, NV# = bonded set of # NVLinks, SYS = across CPU sockets,");
    common::outln!("        NODE = within a socket, PHB = host bridge, PXB/PIX = PCIe switches");
    Ok(ExitCode::SUCCESS)
}

/// The topology of the only GPU: no peers, and the CPUs the kernel lists for its PCI device
/// (`/sys/bus/pci/devices/<bus id>/local_cpulist`) when the engine is embedded; empty (shown as
/// N/A) when the GPU is on another host or the kernel does not say.
fn lone_gpu_topology(handle: &dcgm::Handle, gpu: u32) -> dcgm::DeviceTopology {
    let local = matches!(handle.kind(), dcgm::ConnectionKind::Embedded);
    let cpus = local
        .then(|| handle.system().device_attributes(gpu).ok())
        .flatten()
        .and_then(|a| {
            // DCGM writes an 8-digit PCI domain; sysfs uses 4.
            let bus = a.pci_bus_id.to_ascii_lowercase();
            let bus = bus.strip_prefix("0000").unwrap_or(&bus).to_string();
            std::fs::read_to_string(format!("/sys/bus/pci/devices/{bus}/local_cpulist")).ok()
        })
        .map(|list| parse_cpulist(list.trim()))
        .unwrap_or_default();
    dcgm::DeviceTopology {
        cpu_affinity: cpus,
        paths: Vec::new(),
    }
}

/// `0-3,8,10-11` → `[0, 1, 2, 3, 8, 10, 11]`.
fn parse_cpulist(s: &str) -> Vec<u32> {
    s.split(',')
        .filter_map(|part| match part.split_once('-') {
            Some((a, b)) => Some((a.parse().ok()?..=b.parse().ok()?).collect::<Vec<u32>>()),
            None => part.parse().ok().map(|v| vec![v]),
        })
        .flatten()
        .collect()
}
