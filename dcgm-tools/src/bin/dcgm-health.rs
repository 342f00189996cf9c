//! `health`: set health watches on GPUs and report incidents, like `dcgmi health -s a -c`.
//! Exit status: 0 healthy, 2 warnings, 3 failures, 1 error.
//!
//! ```text
//! dcgm-health --simulate
//! dcgm-health --simulate -s mem,pcie -c 10 -d 1000 --json
//! DCGM_SIM_CONFIG=faults dcgm-health --simulate -c 5 -d 1000
//! ```
//!
//! On the simulator's default node every check passes; within four seconds its `faults`
//! preset fails GPU 5 (a double-bit ECC error) and warns of GPU 1 (thermal slowdown at
//! 91 °C); its XID 13 on GPU 3, an application's fault, is no health incident (as on DCGM).

use dcgm_tools as common;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dcgm::{HealthResult, HealthSystems};

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

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    let systems = parse_systems(&cli.systems)?;
    let handle = cli.conn.open()?;
    let simulated = handle.is_simulated();
    let (group, _) = common::gpu_group(&handle, "health", &cli.gpus)?;
    group.health_set(systems)?;
    // What the engine actually watches (it may leave out systems a GPU lacks).
    let watched: Vec<&str> = group
        .health_get()?
        .iter()
        .filter_map(|s| s.name())
        .collect();
    let gpus = group.entities()?;
    let rounds = cli.count.max(1);
    let mut worst = HealthResult::Pass;
    for i in 0..rounds {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(cli.delay_ms));
        }
        let report = group.health_check()?;
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
        common::outln!("Overall health: {worst}");
    }
    Ok(ExitCode::from(match worst {
        HealthResult::Pass => 0,
        HealthResult::Warn => 2,
        HealthResult::Fail => 3,
    }))
}
