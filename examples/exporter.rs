//! A custom collector on `dcgm-prometheus`, in the shape of node_exporter's textfile
//! collector: every interval, the metrics of a hand-picked counters list are written to a
//! `.prom` file that node_exporter (`--collector.textfile.directory`) serves with its own.
//! The full exporter, with its HTTP server, Kubernetes labels and flags, is the `dcgm-exporter`
//! crate; this is what a few lines of the library give you.
//!
//! ```text
//! cargo run --example exporter -- --simulate --out /tmp/gpu.prom --count 3
//! cat /tmp/gpu.prom
//! ```
//!
//! Exit status: 0 success, 1 DCGM or I/O error, 2 bad arguments.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dcgm_prometheus::{Collector, CollectorConfig, DeviceSelection, parse_counters};

/// The counters this collector exports: dcgm-exporter's CSV format (field, type, help).
const COUNTERS: &str = "\
DCGM_FI_DEV_GPU_TEMP,          gauge,   GPU temperature (in C).
DCGM_FI_DEV_POWER_USAGE,       gauge,   Power draw (in W).
DCGM_FI_DEV_GPU_UTIL,          gauge,   GPU utilization (in %).
DCGM_FI_DEV_FB_USED,           gauge,   Framebuffer memory used (in MiB).
DCGM_FI_DEV_XID_ERRORS,        gauge,   Value of the last XID error encountered.
";

#[derive(Debug, Parser)]
#[command(
    name = "exporter",
    about = "Writes GPU metrics for node_exporter's textfile collector",
    after_help = "Exit status: 0 success, 1 DCGM or I/O error, 2 bad arguments."
)]
struct Cli {
    /// The `.prom` file to write (replaced atomically each time); `-` writes each collection to
    /// standard output instead.
    #[arg(long, default_value = "dcgm.prom")]
    out: PathBuf,
    /// Seconds between collections.
    #[arg(long, default_value_t = 15)]
    interval: u64,
    /// Collections to write before exiting (default: run until stopped).
    #[arg(long)]
    count: Option<u64>,
    /// GPUs: `f` (every GPU, or its MIG instances), `g:0,1`, `i:0-3`.
    #[arg(short = 'd', long, default_value = "f")]
    devices: DeviceSelection,
    /// Read from dcgm-sim, the simulator, instead of GPUs (the output says so).
    #[arg(long)]
    simulate: bool,
}

fn main() -> ExitCode {
    run(&Cli::parse()).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })
}

fn run(cli: &Cli) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let counters = match parse_counters(COUNTERS) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: counters: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut cfg = CollectorConfig::new(counters);
    cfg.devices = cli.devices.clone();
    cfg.simulator = cli.simulate;
    cfg.collect_interval = Duration::from_secs(cli.interval.max(1));
    // Discovers the GPUs (or MIG instances), watches the counters' fields and keeps the
    // entity labels; each `collect` is one latest read rendered as exposition text.
    let mut collector = Collector::new(cfg)?;
    if collector.is_simulated() {
        eprintln!("# SIMULATED DATA: reading from dcgm-sim, not from real GPUs");
    }
    let mut text = String::new();
    let to_stdout = cli.out.as_os_str() == "-";
    let tmp = cli.out.with_extension("prom.tmp");
    let mut written = 0;
    loop {
        text.clear();
        collector.collect(&mut text)?;
        if to_stdout {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                // The reader (`| head`) has what it wanted.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    return Ok(ExitCode::SUCCESS);
                }
                r => r?,
            }
        } else {
            // node_exporter may read the file at any moment: write aside, then rename.
            std::fs::write(&tmp, &text)?;
            std::fs::rename(&tmp, &cli.out)?;
        }
        written += 1;
        eprintln!(
            "exporter: wrote {} series to {}",
            text.lines().filter(|l| !l.starts_with('#')).count(),
            if to_stdout {
                "standard output".into()
            } else {
                cli.out.display().to_string()
            }
        );
        if cli.count.is_some_and(|c| written >= c) {
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(Duration::from_secs(cli.interval.max(1)));
    }
}
