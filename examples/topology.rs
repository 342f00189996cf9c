//! `topology`: the GPU-to-GPU link matrix and CPU affinity, like `nvidia-smi topo -m`.
//!
//! ```text
//! cargo run --example topology -- --simulate
//! ```

mod common;

use clap::Parser;
use dcgm::PciPath;

#[derive(Debug, Parser)]
#[command(name = "topology", about = "GPU-to-GPU link matrix and CPU affinity")]
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

fn main() {
    let cli = Cli::parse();
    let handle = cli.conn.open().unwrap_or_else(|e| common::fail(e));
    let sys = handle.system();
    let gpus = sys.gpu_ids().unwrap_or_else(|e| common::fail(e));
    let mut rows = Vec::new();
    for &g in &gpus {
        let t = sys.device_topology(g).unwrap_or_else(|e| common::fail(e));
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
        println!(
            "{}",
            serde_json::json!({"simulated": handle.is_simulated(), "gpus": doc})
        );
        return;
    }
    let mut header = String::from("      ");
    for g in &gpus {
        header += &format!("{:>7}", format!("GPU{g}"));
    }
    header += "  CPU Affinity";
    println!("{header}");
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
        line += &format!("  {}", common::ranges(&t.cpu_affinity));
        println!("{line}");
    }
    println!();
    println!("Legend: X = self, NV# = bonded set of # NVLinks, SYS = across CPU sockets,");
    println!("        NODE = within a socket, PHB = host bridge, PXB/PIX = PCIe switches");
    if handle.is_simulated() {
        println!("(SIMULATED node)");
    }
}
