//! `discovery`: the node as a tree, like `dcgmi discovery -l` plus MIG, NvSwitches and CPUs.
//!
//! ```text
//! dcgm-discovery --simulate
//! dcgm-discovery --simulate --json
//! ```

use dcgm_tools as common;

use std::process::ExitCode;

use clap::Parser;
use dcgm::EntityGroup;
use serde_json::json;

#[derive(Debug, Parser)]
#[command(
    name = "discovery",
    about = "List GPUs, MIG instances, NvSwitches and CPUs as a tree", after_help = common::EXIT_STATUS)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// One JSON document instead of a tree.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    let doc = node(&cli.conn)?;
    if cli.json {
        common::outln!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    let gpus = doc["gpus"].as_array().cloned().unwrap_or_default();
    common::outln!("Node: {} GPU(s)", gpus.len());
    let mut top: Vec<Node> = gpus.iter().map(gpu_node).collect();
    let sw = doc["nvswitches"].as_array().cloned().unwrap_or_default();
    if !sw.is_empty() {
        let ids: Vec<String> = sw.iter().map(|s| s.to_string()).collect();
        top.push(Node::leaf(format!("NvSwitches: {}", ids.join(", "))));
    }
    for c in doc["cpus"].as_array().into_iter().flatten() {
        top.push(Node::leaf(format!(
            "CPU {}: {} cores ({})",
            c["cpu"],
            c["core_count"],
            c["cores"].as_str().unwrap_or("")
        )));
    }
    print_tree(&top, "");
    Ok(ExitCode::SUCCESS)
}

/// The node as the JSON document `--json` prints (and the tree is drawn from).
fn node(conn: &common::ConnectArgs) -> dcgm::Result<serde_json::Value> {
    let handle = conn.open()?;
    let sys = handle.system();
    let attrs = sys
        .gpu_ids()?
        .into_iter()
        .map(|gpu| Ok((gpu, sys.device_attributes(gpu)?)))
        .collect::<dcgm::Result<Vec<_>>>()?;
    // The MIG hierarchy is the slowest answer of a host engine (about 90 ms on libdcgm
    // 4.6.0): ask for it only when some GPU is in MIG mode.
    let mig = if attrs.iter().any(|(_, a)| a.mig_mode) {
        sys.mig_hierarchy()?
    } else {
        Vec::new()
    };
    let mut gpus = Vec::new();
    for (gpu, a) in attrs {
        let instances: Vec<serde_json::Value> = mig
            .iter()
            .filter(|m| m.gpu == gpu)
            .flat_map(|m| &m.instances)
            .map(|gi| {
                json!({
                    "entity_id": gi.entity_id,
                    "nvml_instance_id": gi.nvml_instance_id,
                    "profile_id": gi.profile_id,
                    "slices": gi.slices,
                    "compute_instances": gi.compute_instances.iter().map(|ci| json!({
                        "entity_id": ci.entity_id,
                        "nvml_compute_instance_id": ci.nvml_compute_instance_id,
                        "slices": ci.slices,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        gpus.push(json!({
            "gpu": gpu,
            "name": a.name,
            "uuid": a.uuid,
            "pci_bus_id": a.pci_bus_id,
            "memory_mib": a.memory_total_mib,
            "power_limit_w": a.power_limit_w,
            "mig_mode": a.mig_mode,
            "mig_instances": instances,
        }));
    }
    let switches: Vec<u32> = sys
        .entities(EntityGroup::Switch, false)?
        .iter()
        .map(|e| e.id)
        .collect();
    let cpus: Vec<serde_json::Value> = sys
            .cpu_hierarchy()
            .unwrap_or_default()
            .into_iter()
            .map(|c| json!({"cpu": c.id, "cores": common::ranges(&c.cores), "core_count": c.cores.len()}))
            .collect();
    Ok(json!({
        "simulated": handle.is_simulated(),
        "gpus": gpus,
        "nvswitches": switches,
        "cpus": cpus,
    }))
}

/// One entry of the printed tree: a label, lines under it, and its children.
struct Node {
    label: String,
    notes: Vec<String>,
    children: Vec<Node>,
}

impl Node {
    fn leaf(label: String) -> Self {
        Self {
            label,
            notes: Vec::new(),
            children: Vec::new(),
        }
    }
}

fn gpu_node(g: &serde_json::Value) -> Node {
    let instances = g["mig_instances"].as_array().into_iter().flatten();
    Node {
        label: format!("GPU {}: {}", g["gpu"], g["name"].as_str().unwrap_or("")),
        notes: vec![
            format!(
                "UUID {}  bus {}",
                g["uuid"].as_str().unwrap_or(""),
                g["pci_bus_id"].as_str().unwrap_or("")
            ),
            format!(
                "memory {} MiB, power limit {} W, MIG {}",
                or_na(&g["memory_mib"]),
                or_na(&g["power_limit_w"]),
                if g["mig_mode"] == json!(true) {
                    "on"
                } else {
                    "off"
                }
            ),
        ],
        children: instances
            .map(|gi| Node {
                label: format!(
                    "GPU instance {} (NVML id {}, {} slice(s))",
                    gi["entity_id"],
                    or_na(&gi["nvml_instance_id"]),
                    or_na(&gi["slices"])
                ),
                notes: Vec::new(),
                children: gi["compute_instances"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|ci| {
                        Node::leaf(format!(
                            "compute instance {} (NVML id {}, {} slice(s))",
                            ci["entity_id"],
                            or_na(&ci["nvml_compute_instance_id"]),
                            or_na(&ci["slices"])
                        ))
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// Draws siblings with `├─` and the last one with `└─`, and continues the line of a parent
/// only while it has siblings below.
fn print_tree(nodes: &[Node], prefix: &str) {
    for (i, n) in nodes.iter().enumerate() {
        let (branch, pad) = if i + 1 == nodes.len() {
            ("└─", "   ")
        } else {
            ("├─", "│  ")
        };
        common::outln!("{prefix}{branch} {}", n.label);
        let inner = format!("{prefix}{pad}   ");
        for note in &n.notes {
            common::outln!("{inner}{note}");
        }
        print_tree(&n.children, &inner);
    }
}

/// A JSON number as text, or `N/A` where the library left it blank (`null`).
fn or_na(v: &serde_json::Value) -> String {
    if v.is_null() {
        "N/A".to_string()
    } else {
        v.to_string()
    }
}
