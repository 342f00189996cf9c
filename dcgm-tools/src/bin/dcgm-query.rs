//! `query`: `nvidia-smi --query-gpu=... --format=csv` over DCGM, and a
//! `--query-compute-apps` process list.
//!
//! Every property of nvidia-smi's `--help-query-gpu` is accepted, with nvidia-smi's header text
//! and units; a property DCGM has no value for prints nvidia-smi's `[N/A]`. `--help-query-gpu`
//! says which DCGM field supplies each one.
//!
//! ```text
//! dcgm-query --simulate --query-gpu=index,name,utilization.gpu,memory.used --format=csv
//! dcgm-query --simulate --query-gpu=pci.bus_id,pstate -i 0,1 -lms 500
//! dcgm-query --simulate --query-compute-apps=pid,process_name,gpu_uuid,used_memory --format=csv,noheader
//! ```

use dcgm_tools as common;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use common::query::{self, Queries};

#[derive(Debug, Parser)]
#[command(name = "query", about = "nvidia-smi style queries over DCGM", after_help = common::EXIT_STATUS)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// GPU properties, comma-separated: any of nvidia-smi's (`index,name,uuid,pci.bus_id,
    /// temperature.gpu,utilization.gpu,memory.used,power.draw,pstate,...`; `--help-query-gpu`
    /// lists them).
    #[arg(long = "query-gpu", value_delimiter = ',')]
    query_gpu: Vec<String>,
    /// Process properties, comma-separated (`--help-query-compute-apps` lists them).
    #[arg(long = "query-compute-apps", value_delimiter = ',')]
    query_apps: Vec<String>,
    /// `csv` with optional `noheader` and `nounits`, comma-separated.
    #[arg(long, default_value = "csv")]
    format: String,
    /// Repeat every SEC seconds (5 when no number is given) until interrupted.
    #[arg(short = 'l', long = "loop", value_name = "SEC", num_args = 0..=1, default_missing_value = "5")]
    loop_s: Option<u64>,
    /// Repeat every MS milliseconds (also spelt `-lms MS`, as nvidia-smi takes it).
    #[arg(long = "loop-ms", value_name = "MS", conflicts_with = "loop_s")]
    loop_ms: Option<u64>,
    /// Only these GPUs, comma-separated: index, UUID (`GPU-...`) or PCI bus id
    /// (`00000000:00:06.0`, or `00:06.0`).
    #[arg(short = 'i', long = "id", value_delimiter = ',')]
    ids: Vec<String>,
    /// Write the output to this file instead of standard output.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    file: Option<PathBuf>,
    /// List the `--query-gpu` properties, what each means and its DCGM source, and exit.
    #[arg(long = "help-query-gpu", alias = "help-query")]
    help_query_gpu: bool,
    /// List the `--query-compute-apps` properties and exit.
    #[arg(long = "help-query-compute-apps")]
    help_query_apps: bool,
    /// `-q [-d SECTIONS]`: nvidia-smi's per-GPU report (`dcgm_tools::nvsmi_report`).
    #[command(flatten)]
    report: common::nvsmi_report::ReportArgs,
}

fn main() -> ExitCode {
    let cli: Cli = common::parse_from(query::nvsmi_args(std::env::args_os()));
    common::finish(match run(&cli) {
        Ok(code) => code,
        Err(e) => common::report(e),
    })
}

fn run(cli: &Cli) -> common::Result {
    if cli.help_query_gpu {
        query::print_gpu_help();
        return Ok(ExitCode::SUCCESS);
    }
    if cli.help_query_apps {
        query::print_apps_help();
        return Ok(ExitCode::SUCCESS);
    }
    if cli.report.query {
        query::report(&cli.conn, &cli.ids, &cli.report)?;
        return Ok(ExitCode::SUCCESS);
    }
    if cli.query_gpu.is_empty() && cli.query_apps.is_empty() {
        return Err(
            "give --query-gpu=..., --query-compute-apps=... or -q (see --help-query-gpu)".into(),
        );
    }
    let period = match (cli.loop_s, cli.loop_ms) {
        (Some(s), _) => Some(Duration::from_secs(s.max(1))),
        (_, Some(ms)) => Some(Duration::from_millis(ms.max(1))),
        _ => None,
    };
    query::csv(
        &cli.conn,
        &Queries {
            gpu: &cli.query_gpu,
            apps: &cli.query_apps,
            format: &cli.format,
            ids: &cli.ids,
            file: cli.file.as_deref(),
            period,
        },
    )?;
    Ok(ExitCode::SUCCESS)
}
