//! `policy`: set policy conditions on GPUs and stream violations (XID, double-bit ECC,
//! thermal, power, NVLink, PCIe, retired pages) as lines or JSON, like `dcgmi policy`.
//!
//! ```text
//! DCGM_SIM_CONFIG=faults dcgm-policy --simulate --xid --dbe --max-temp 85 --json
//! ```
//!
//! The simulator's default node is calm; its `faults` preset has an XID, a double-bit ECC
//! error and a hot GPU within four seconds.

use dcgm_tools as common;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use dcgm::{Policy, ViolationDetail};

#[derive(Debug, Parser)]
#[command(name = "policy", about = "Set policy conditions and stream violations", after_help = common::EXIT_STATUS)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// GPU ids (default: all).
    #[arg(short = 'g', long = "gpus", value_delimiter = ',')]
    gpus: Vec<u32>,
    /// Report XID errors.
    #[arg(long)]
    xid: bool,
    /// Report double-bit ECC errors.
    #[arg(long)]
    dbe: bool,
    /// Report PCIe replay errors.
    #[arg(long)]
    pcie: bool,
    /// Report NVLink errors.
    #[arg(long)]
    nvlink: bool,
    /// Report temperatures above this many °C.
    #[arg(long, value_name = "C")]
    max_temp: Option<u32>,
    /// Report power draw above this many W.
    #[arg(long, value_name = "W")]
    max_power: Option<u32>,
    /// Report when this many pages are retired.
    #[arg(long, value_name = "N")]
    max_pages: Option<u32>,
    /// Stop after this many violations.
    #[arg(short = 'n', long)]
    count: Option<u64>,
    /// Stop after this many seconds.
    #[arg(short = 't', long = "timeout")]
    timeout_s: Option<f64>,
    /// JSON lines.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    let mut policy = Policy {
        dbe: cli.dbe,
        pci: cli.pcie,
        max_retired_pages: cli.max_pages,
        thermal_max_c: cli.max_temp,
        power_max_w: cli.max_power,
        nvlink: cli.nvlink,
        xid: cli.xid,
    };
    if policy.conditions().is_empty() {
        // Nothing chosen: the conditions operators page on.
        policy = Policy {
            dbe: true,
            xid: true,
            nvlink: true,
            thermal_max_c: Some(85),
            ..policy
        };
    }
    let handle = cli.conn.open()?;
    let simulated = handle.is_simulated();
    let (group, gpus) = common::gpu_group(&handle, "policy", &cli.gpus)?;
    group.policy_set(&policy)?;
    let (reg, rx) = group.policy_subscribe(policy.conditions())?;
    // Status goes to stderr in every mode, so stdout stays one violation per line.
    eprintln!(
        "Listening for {} on {} GPU(s)",
        policy.conditions(),
        gpus.len()
    );
    let deadline = cli
        .timeout_s
        .map(|s| Instant::now() + Duration::from_secs_f64(s));
    let mut n = 0u64;
    loop {
        let wait = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(w) => w,
                None => break,
            },
            None => Duration::from_secs(3600),
        };
        let Ok(v) = rx.recv_timeout(wait) else {
            if deadline.is_some() {
                break;
            }
            continue;
        };
        if cli.json {
            let detail = match v.detail {
                ViolationDetail::Xid { xid } => serde_json::json!({"xid": xid}),
                ViolationDetail::Dbe { location, count } => {
                    serde_json::json!({"location": format!("{location:?}"), "count": count})
                }
                ViolationDetail::Thermal { temperature_c } => {
                    serde_json::json!({"temperature_c": temperature_c})
                }
                ViolationDetail::Power { watts } => serde_json::json!({"watts": watts}),
                ViolationDetail::Pci { counter } => serde_json::json!({"counter": counter}),
                ViolationDetail::Nvlink { field, counter } => {
                    serde_json::json!({"field": field.name(), "counter": counter})
                }
                ViolationDetail::RetiredPages { sbe, dbe } => {
                    serde_json::json!({"sbe": sbe, "dbe": dbe})
                }
            };
            common::outln!(
                "{}",
                serde_json::json!({
                    "gpu": v.gpu,
                    "condition": v.condition.to_string(),
                    "timestamp_us": v.timestamp_us,
                    "detail": detail,
                    "simulated": simulated,
                })
            );
        } else {
            common::outln!("{v}");
        }
        n += 1;
        if cli.count.is_some_and(|c| n >= c) {
            break;
        }
    }
    if reg.dropped() > 0 {
        eprintln!("warning: {} violation(s) were dropped", reg.dropped());
    }
    Ok(ExitCode::SUCCESS)
}
