//! `health`: set health watches on GPUs and report incidents, like `dcgmi health -s a -c`.
//! Exit status: 0 healthy, 2 warnings, 3 failures, 1 error.
//!
//! ```text
//! cargo run --example health -- --simulate
//! cargo run --example health -- --simulate -s mem,pcie -c 10 -d 1000 --json
//! ```

mod common;

use std::time::Duration;

use clap::Parser;
use dcgm::{Group, HealthResult, HealthSystems};

#[derive(Debug, Parser)]
#[command(name = "health", about = "Watch GPU health and report incidents", after_help = common::EXIT_STATUS_GRADED)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// Systems to watch: all, or a comma list of pcie, nvlink, pmu, mcu, mem, sm, inforom,
    /// thermal, power, driver, nvswitch-nonfatal, nvswitch-fatal, connectx.
    #[arg(short = 's', long = "systems", default_value = "all")]
    systems: String,
    /// GPU ids (default: all).
    #[arg(short = 'g', long = "gpus", value_delimiter = ',')]
    gpus: Vec<u32>,
    /// Number of checks.
    #[arg(short = 'c', long = "count", default_value_t = 1)]
    count: u32,
    /// Delay between checks, in milliseconds.
    #[arg(short = 'd', long = "delay", default_value_t = 1000)]
    delay_ms: u64,
    /// One JSON object per check: the systems watched, each GPU's result and the incidents.
    #[arg(long)]
    json: bool,
}

fn parse_systems(s: &str) -> Result<HealthSystems, String> {
    let mut out = HealthSystems::empty();
    for p in s.split(',').map(|p| p.trim().to_ascii_lowercase()) {
        let bit = match p.as_str() {
            "all" | "a" => HealthSystems::ALL,
            "pcie" | "p" => HealthSystems::PCIE,
            "nvlink" | "n" => HealthSystems::NVLINK,
            "pmu" => HealthSystems::PMU,
            "mcu" => HealthSystems::MCU,
            "mem" | "m" => HealthSystems::MEM,
            "sm" => HealthSystems::SM,
            "inforom" | "i" => HealthSystems::INFOROM,
            "thermal" | "t" => HealthSystems::THERMAL,
            "power" => HealthSystems::POWER,
            "driver" | "d" => HealthSystems::DRIVER,
            "nvswitch-nonfatal" => HealthSystems::NVSWITCH_NONFATAL,
            "nvswitch-fatal" => HealthSystems::NVSWITCH_FATAL,
            "connectx" => HealthSystems::CONNECTX,
            other => return Err(format!("unknown health system {other:?}")),
        };
        out |= bit;
    }
    Ok(out)
}

fn main() {
    let cli = Cli::parse();
    let systems = parse_systems(&cli.systems).unwrap_or_else(|e| common::fail(e));
    let handle = cli.conn.open().unwrap_or_else(|e| common::fail(e));
    let simulated = handle.is_simulated();
    let group = if cli.gpus.is_empty() {
        let all = handle
            .system()
            .gpu_ids()
            .unwrap_or_else(|e| common::fail(e));
        Group::with_gpus(&handle, &format!("health-{}", std::process::id()), &all)
    } else {
        Group::with_gpus(
            &handle,
            &format!("health-{}", std::process::id()),
            &cli.gpus,
        )
    }
    .unwrap_or_else(|e| common::fail(e));
    group
        .health_set(systems)
        .unwrap_or_else(|e| common::fail(e));
    // What the engine actually watches (it may leave out systems a GPU lacks).
    let watched: Vec<&str> = group
        .health_get()
        .unwrap_or_else(|e| common::fail(e))
        .iter()
        .filter_map(|s| s.name())
        .collect();
    let gpus = group.entities().unwrap_or_else(|e| common::fail(e));
    let rounds = cli.count.max(1);
    let mut worst = HealthResult::Pass;
    for i in 0..rounds {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(cli.delay_ms));
        }
        let report = group.health_check().unwrap_or_else(|e| common::fail(e));
        worst = worst.max(report.overall);
        let per_gpu: Vec<(String, HealthResult)> = gpus
            .iter()
            .map(|g| {
                let r = report
                    .incidents
                    .iter()
                    .filter(|inc| inc.entity == *g)
                    .map(|inc| inc.result)
                    .max()
                    .unwrap_or(HealthResult::Pass);
                (g.to_string(), r)
            })
            .collect();
        if cli.json {
            let incidents: Vec<serde_json::Value> = report
                .incidents
                .iter()
                .map(|inc| {
                    serde_json::json!({
                        "entity": inc.entity.to_string(),
                        "system": inc.system.to_string(),
                        "result": inc.result.to_string(),
                        "error": inc.error_name,
                        "code": inc.error_code,
                        "severity": inc.severity.map(|s| s.to_string()),
                        "message": inc.message,
                    })
                })
                .collect();
            let results: serde_json::Map<String, serde_json::Value> = per_gpu
                .iter()
                .map(|(g, r)| (g.clone(), serde_json::json!(r.to_string())))
                .collect();
            common::outln!(
                "{}",
                serde_json::json!({
                    "check": i + 1,
                    "of": rounds,
                    "systems": watched,
                    "results": results,
                    "overall": report.overall.to_string(),
                    "incidents": incidents,
                    "simulated": simulated,
                })
            );
        } else {
            let results: Vec<String> = per_gpu.iter().map(|(g, r)| format!("{g} {r}")).collect();
            common::outln!(
                "Check {}/{rounds} of {}: {}",
                i + 1,
                watched.join(","),
                results.join(", ")
            );
            for inc in &report.incidents {
                common::outln!(
                    "  {:<8} {:<8} {:<5} {} ({}): {}",
                    inc.entity.to_string(),
                    inc.system.to_string(),
                    inc.result.to_string(),
                    inc.error_name.unwrap_or("DCGM_FR_?"),
                    inc.severity
                        .map_or_else(|| "-".to_string(), |s| s.to_string()),
                    inc.message
                );
            }
        }
    }
    if !cli.json {
        common::outln!(
            "Overall health: {worst}{}",
            if simulated { " (SIMULATED)" } else { "" }
        );
    }
    std::process::exit(match worst {
        HealthResult::Pass => 0,
        HealthResult::Warn => 2,
        HealthResult::Fail => 3,
    });
}
