//! `stat`: one line per GPU, like gpustat: index, name, temperature, utilisation, memory,
//! power, and the processes on it (`user:pid:memory`).
//!
//! ```text
//! cargo run --example stat -- --simulate
//! cargo run --example stat -- --simulate --watch 2
//! cargo run --example stat -- --simulate --json
//! ```

mod common;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use anstyle::{AnsiColor, Style};
use clap::Parser;
use common::gpu_stats::{GpuSample, GpuStats};

#[derive(Debug, Parser)]
#[command(
    name = "stat",
    about = "One line per GPU: temperature, utilisation, memory, power and processes",
    after_help = common::EXIT_STATUS
)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// Plain text even on a terminal (colours are also off when stdout is not a terminal or
    /// NO_COLOR is set).
    #[arg(long)]
    no_color: bool,
    /// One JSON document per refresh.
    #[arg(long)]
    json: bool,
    /// Refresh every SECONDS until interrupted.
    #[arg(long, value_name = "SECONDS")]
    watch: Option<f64>,
}

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    if cli.watch.is_some_and(|s| !(s > 0.0 && s.is_finite())) {
        return Err("--watch takes a number of seconds above zero".into());
    }
    let handle = cli.conn.open()?;
    let source = GpuStats::new(&handle, "stat")?;
    let color = !cli.no_color && !cli.json && colors_wanted();
    let clear = cli.watch.is_some() && !cli.json && std::io::stdout().is_terminal();
    loop {
        let lines = source.read()?;
        if let Some(e) = source.process_error() {
            eprintln!("note: the process lists are not available: {e}");
        }
        let mut text = String::new();
        if clear {
            text.push_str("\x1b[H\x1b[2J");
        }
        if cli.json {
            text += &to_json(&lines, source.simulated()).to_string();
            text.push('\n');
        } else {
            for l in &lines {
                text += &render(l, color);
                text.push('\n');
            }
        }
        common::write_stdout(format_args!("{text}"));
        let _ = std::io::stdout().flush();
        match cli.watch {
            Some(s) => std::thread::sleep(Duration::from_secs_f64(s)),
            None => return Ok(ExitCode::SUCCESS),
        }
    }
}

/// Colours on a terminal unless NO_COLOR is set (CLICOLOR_FORCE forces them), as
/// `anstream` decides for clap's own output.
fn colors_wanted() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// A value, or `N/A`.
fn or_na<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "N/A".to_string(), |v| v.to_string())
}

/// `text` in `style` when colouring, else as is.
fn paint(text: &str, style: Style, color: bool) -> String {
    if color {
        format!("{style}{text}{style:#}")
    } else {
        text.to_string()
    }
}

/// `[0] NVIDIA H100 80GB HBM3 | 52°C,  94 % | 62000 / 81559 MB | 612 / 700 W | mlops:4242:62000M`
fn render(l: &GpuSample, color: bool) -> String {
    let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
    let hot = l.temperature_c.is_some_and(|t| t >= 80);
    let temp_style = if hot {
        fg(AnsiColor::Red).bold()
    } else {
        fg(AnsiColor::Red)
    };
    let procs: Vec<String> = match &l.processes {
        None => vec!["N/A".to_string()],
        Some(ps) => ps
            .iter()
            .map(|p| {
                format!(
                    "{}:{}:{}M",
                    paint(
                        p.user.as_deref().unwrap_or("N/A"),
                        Style::new().bold(),
                        color
                    ),
                    p.pid,
                    p.memory_mib
                )
            })
            .collect(),
    };
    let power = match l.power_w {
        Some(w) => format!("{w:.0}"),
        None => "N/A".into(),
    };
    let limit = match l.power_limit_w {
        Some(w) => format!("{w:.0}"),
        None => "N/A".into(),
    };
    format!(
        "{} {} | {}, {} | {} / {} MB | {} / {} W | {}",
        paint(&format!("[{}]", l.index), fg(AnsiColor::Cyan), color),
        paint(
            &format!("{:<24}", l.name.as_deref().unwrap_or("N/A")),
            fg(AnsiColor::Blue),
            color
        ),
        paint(
            &format!("{:>3}°C", or_na(l.temperature_c)),
            temp_style,
            color
        ),
        paint(
            &format!("{:>3} %", or_na(l.utilization_pct)),
            fg(AnsiColor::Green),
            color
        ),
        paint(
            &format!("{:>5}", or_na(l.memory_used_mib)),
            fg(AnsiColor::Yellow).bold(),
            color
        ),
        paint(
            &format!("{:>5}", or_na(l.memory_total_mib)),
            fg(AnsiColor::Yellow),
            color
        ),
        paint(&format!("{power:>4}"), fg(AnsiColor::Magenta), color),
        paint(&limit, fg(AnsiColor::Magenta), color),
        procs.join(" ")
    )
}

fn to_json(lines: &[GpuSample], simulated: bool) -> serde_json::Value {
    let gpus: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| {
            serde_json::json!({
                "index": l.index,
                "name": l.name,
                "temperature_c": l.temperature_c,
                "utilization_pct": l.utilization_pct,
                "memory_used_mib": l.memory_used_mib,
                "memory_total_mib": l.memory_total_mib,
                "power_w": l.power_w,
                "power_limit_w": l.power_limit_w,
                "processes": l.processes.as_ref().map(|ps| ps.iter().map(|p| serde_json::json!({
                    "pid": p.pid,
                    "user": p.user,
                    "name": p.name,
                    "memory_mib": p.memory_mib,
                })).collect::<Vec<_>>()),
            })
        })
        .collect();
    serde_json::json!({ "simulated": simulated, "gpus": gpus })
}
