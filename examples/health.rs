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
#[command(name = "health", about = "Watch GPU health and report incidents")]
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
    /// One JSON object per incident.
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
    let mut worst = HealthResult::Pass;
    for i in 0..cli.count.max(1) {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(cli.delay_ms));
        }
        let report = group.health_check().unwrap_or_else(|e| common::fail(e));
        worst = worst.max(report.overall);
        for inc in &report.incidents {
            if cli.json {
                println!(
                    "{}",
                    serde_json::json!({
                        "entity": inc.entity.to_string(),
                        "system": inc.system.to_string(),
                        "result": inc.result.to_string(),
                        "error": inc.error_name,
                        "code": inc.error_code,
                        "severity": inc.severity.map(|s| s.to_string()),
                        "message": inc.message,
                        "simulated": simulated,
                    })
                );
            } else {
                println!(
                    "{:<8} {:<8} {:<5} {} ({}): {}",
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
        println!(
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
