//! `stat`: gpustat over DCGM. A header line (host, time, driver version), then a line per GPU
//! (index, name, temperature, utilisation, memory and the processes on it), with gpustat's
//! flags, layout and `--json` schema. A value DCGM has no reading for prints as `??` (`null` in
//! JSON), as gpustat prints what NVML cannot read.
//!
//! ```text
//! dcgm-stat --simulate
//! dcgm-stat --simulate -cpuFP
//! dcgm-stat --simulate -a -i 2
//! dcgm-stat --simulate --json
//! ```

use dcgm_tools as common;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use common::stat::{Flags, Format, Reader, Show};

#[derive(Debug, Parser)]
#[command(
    name = "stat",
    version,
    disable_version_flag = true,
    about = "gpustat over DCGM: a line per GPU with its temperature, utilisation, memory and \
             processes",
    after_help = common::EXIT_STATUS
)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// Print the version and exit.
    #[arg(short = 'v', long, action = clap::ArgAction::Version)]
    version: (),
    /// Colours even when stdout is not a terminal.
    #[arg(long, visible_alias = "color", conflicts_with = "no_color")]
    force_color: bool,
    /// Plain text even on a terminal (colours are also off when stdout is not a terminal or
    /// NO_COLOR is set).
    #[arg(long)]
    no_color: bool,
    /// Only these GPUs (indexes, comma-separated).
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    id: Vec<u32>,
    /// Everything: -c -u -p -F -e -P.
    #[arg(short = 'a', long)]
    show_all: bool,
    /// The command name of each process.
    #[arg(short = 'c', long)]
    show_cmd: bool,
    /// A line per process under its GPU: pid, CPU use, host memory and full command line.
    #[arg(short = 'f', long)]
    show_full_cmd: bool,
    /// The user of each process (the default unless -c is given).
    #[arg(short = 'u', long)]
    show_user: bool,
    /// The pid of each process.
    #[arg(short = 'p', long)]
    show_pid: bool,
    /// The fan speed.
    #[arg(short = 'F', long, visible_alias = "show-fan")]
    show_fan_speed: bool,
    /// Encoder and decoder utilisation (`enc`, `dec`, or both when no value is given).
    #[arg(
        short = 'e',
        long,
        value_name = "CODEC",
        num_args = 0..=1,
        default_missing_value = "enc,dec",
        value_parser = ["enc", "dec", "enc,dec"]
    )]
    show_codec: Option<String>,
    /// Power draw, and the enforced limit unless only `draw` is given.
    #[arg(
        short = 'P',
        long,
        value_name = "WHAT",
        num_args = 0..=1,
        default_missing_value = "draw,limit",
        value_parser = ["draw", "limit", "draw,limit", "limit,draw"]
    )]
    show_power: Option<String>,
    /// One JSON document in gpustat's schema.
    #[arg(long)]
    json: bool,
    /// Refresh every SECONDS (1 when no value is given, at least 0.1) until interrupted; 0
    /// prints once.
    #[arg(
        short = 'i',
        long,
        visible_alias = "watch",
        value_name = "SECONDS",
        num_args = 0..=1,
        default_missing_value = "1"
    )]
    interval: Option<f64>,
    /// No host, time and driver line.
    #[arg(long)]
    no_header: bool,
    /// Names this wide: padded, or cut from the left with `…`; 0 leaves them out.
    #[arg(long, value_name = "N")]
    gpuname_width: Option<usize>,
    /// No processes on the GPU lines.
    #[arg(long)]
    no_processes: bool,
}

impl Cli {
    /// What the GPU lines show, from gpustat's flags.
    fn show(&self) -> Show {
        Show::of(&Flags {
            all: self.show_all,
            cmd: self.show_cmd,
            full_cmd: self.show_full_cmd,
            user: self.show_user,
            pid: self.show_pid,
            fan: self.show_fan_speed,
            codec: self.show_codec.as_deref(),
            power: self.show_power.as_deref(),
            no_processes: self.no_processes,
        })
    }
}

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    let interval = match cli.interval {
        Some(s) if !s.is_finite() => {
            return Err("--interval takes a number of seconds".into());
        }
        Some(s) if s > 0.0 => Some(Duration::from_secs_f64(s.max(0.1))),
        _ => None,
    };
    if cli.json && interval.is_some() {
        return Err("--json and --interval/-i can't be used together".into());
    }
    let show = cli.show();
    let handle = cli.conn.open()?;
    let reader = Reader::open(&handle)?;
    let gpus = reader.gpus();
    if let Some(missing) = cli.id.iter().find(|i| !gpus.contains(i)) {
        return Err(format!("no GPU {missing}: the GPUs are {}", common::ranges(gpus)).into());
    }
    let format = Format {
        json: cli.json,
        show,
        no_header: cli.no_header,
        name_width: cli.gpuname_width,
        color: !(cli.json || cli.no_color) && (cli.force_color || common::stat::colors_wanted()),
        in_place: interval.is_some() && std::io::stdout().is_terminal(),
    };
    let mut first = true;
    loop {
        let started = Instant::now();
        let snapshot = reader.snapshot(&cli.id, cli.json || show.full_cmd())?;
        common::write_stdout(format_args!("{}", format.frame(&snapshot, first)));
        let _ = std::io::stdout().flush();
        first = false;
        match interval {
            Some(every) => std::thread::sleep(every.saturating_sub(started.elapsed())),
            None => return Ok(ExitCode::SUCCESS),
        }
    }
}
