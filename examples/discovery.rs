//! `discovery`: the node as a tree, like `dcgmi discovery -l` plus MIG, NvSwitches and CPUs.
//!
//! ```text
//! cargo run --example discovery -- --simulate
//! cargo run --example discovery -- --simulate --json
//! ```

mod common;

use clap::Parser;
use dcgm::EntityGroup;
use serde_json::json;

#[derive(Debug, Parser)]
#[command(
    name = "discovery",
    about = "List GPUs, MIG instances, NvSwitches and CPUs as a tree"
)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// One JSON document instead of a tree.
    #[arg(long)]
    json: bool,
}

fn main() {
    let cli = Cli::parse();
    let run = || -> dcgm::Result<serde_json::Value> {
        let handle = cli.conn.open()?;
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
    };
    let doc = run().unwrap_or_else(|e| common::fail(e));
    if cli.json {
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
        return;
    }
    let gpus = doc["gpus"].as_array().cloned().unwrap_or_default();
    println!(
        "Node: {} GPU(s){}",
        gpus.len(),
        if doc["simulated"] == json!(true) {
            " (SIMULATED)"
        } else {
            ""
        }
    );
    for (i, g) in gpus.iter().enumerate() {
        let last_gpu =
            i + 1 == gpus.len() && doc["nvswitches"].as_array().is_none_or(|s| s.is_empty());
        let (branch, pad) = if last_gpu {
            ("└─", "   ")
        } else {
            ("├─", "│  ")
        };
        println!(
            "{branch} GPU {}: {}",
            g["gpu"],
            g["name"].as_str().unwrap_or("")
        );
        println!(
            "{pad}   UUID {}  bus {}",
            g["uuid"].as_str().unwrap_or(""),
            g["pci_bus_id"].as_str().unwrap_or("")
        );
        println!(
            "{pad}   memory {} MiB, power limit {} W, MIG {}",
            or_na(&g["memory_mib"]),
            or_na(&g["power_limit_w"]),
            if g["mig_mode"] == json!(true) {
                "on"
            } else {
                "off"
            }
        );
        for gi in g["mig_instances"].as_array().into_iter().flatten() {
            println!(
                "{pad}   ├─ GPU instance {} (NVML id {}, {} slice(s))",
                gi["entity_id"], gi["nvml_instance_id"], gi["slices"]
            );
            for ci in gi["compute_instances"].as_array().into_iter().flatten() {
                println!(
                    "{pad}   │  └─ compute instance {} (NVML id {}, {} slice(s))",
                    ci["entity_id"], ci["nvml_compute_instance_id"], ci["slices"]
                );
            }
        }
    }
    let sw = doc["nvswitches"].as_array().cloned().unwrap_or_default();
    if !sw.is_empty() {
        let ids: Vec<String> = sw.iter().map(|s| s.to_string()).collect();
        println!("├─ NvSwitches: {}", ids.join(", "));
    }
    for c in doc["cpus"].as_array().into_iter().flatten() {
        println!(
            "└─ CPU {}: {} cores ({})",
            c["cpu"],
            c["core_count"],
            c["cores"].as_str().unwrap_or("")
        );
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
