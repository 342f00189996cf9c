//! `stat`: one line per GPU, like gpustat: index, name, temperature, utilisation, memory,
//! power, and the processes on it (`user:pid:memory`).
//!
//! ```text
//! cargo run --example stat -- --simulate
//! cargo run --example stat -- --simulate --watch 2
//! cargo run --example stat -- --simulate --json
//! ```

mod common;

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::time::Duration;

use anstyle::{AnsiColor, Style};
use clap::Parser;
use dcgm::sys::*;
use dcgm::{FieldGroup, FieldId, Group, Handle, SinceCursor, Value, Watch, WatchOptions};

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

/// The fields of a line, in the order they are read.
const FIELDS: [u16; 7] = [
    DCGM_FI_DEV_GPU_NAME,
    DCGM_FI_DEV_GPU_TEMP_CELSIUS,
    DCGM_FI_DEV_GPU_UTIL_RATIO,
    DCGM_FI_DEV_FB_USED,
    DCGM_FI_DEV_FB_TOTAL,
    DCGM_FI_DEV_BOARD_POWER_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS,
];

/// A process on a GPU.
struct Process {
    pid: u32,
    user: Option<String>,
    name: Option<String>,
    memory_mib: u64,
}

/// What one line shows; `None` where DCGM has no value (printed `N/A`).
struct GpuLine {
    index: u32,
    name: Option<String>,
    temperature_c: Option<i64>,
    utilization_pct: Option<i64>,
    memory_used_mib: Option<i64>,
    memory_total_mib: Option<i64>,
    power_w: Option<f64>,
    power_limit_w: Option<f64>,
    processes: Vec<Process>,
}

/// The watches `stat` reads through; kept for the whole run so that `--watch` reuses them.
struct Source<'h> {
    handle: &'h Handle,
    group: Group,
    gpus: Vec<u32>,
    values: FieldGroup,
    pids: FieldGroup,
    _watches: [Watch; 2],
    simulated: bool,
}

fn main() {
    let cli = Cli::parse();
    if cli.watch.is_some_and(|s| !(s > 0.0 && s.is_finite())) {
        common::fail("--watch takes a number of seconds above zero");
    }
    let handle = cli.conn.open().unwrap_or_else(|e| common::fail(e));
    let source = Source::new(&handle).unwrap_or_else(|e| common::fail(e));
    let color = !cli.no_color && !cli.json && colors_wanted();
    let clear = cli.watch.is_some() && !cli.json && std::io::stdout().is_terminal();
    loop {
        let lines = source.read().unwrap_or_else(|e| common::fail(e));
        let mut text = String::new();
        if clear {
            text.push_str("\x1b[H\x1b[2J");
        }
        if cli.json {
            text += &to_json(&lines, source.simulated).to_string();
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
            None => break,
        }
    }
}

/// Colours on a terminal unless NO_COLOR is set (CLICOLOR_FORCE forces them), as
/// `anstream` decides for clap's own output.
fn colors_wanted() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

impl<'h> Source<'h> {
    fn new(handle: &'h Handle) -> dcgm::Result<Self> {
        let gpus = handle.system().gpu_ids()?;
        let pid = std::process::id();
        let group = Group::with_gpus(handle, &format!("stat-{pid}"), &gpus)?;
        let ids: Vec<FieldId> = FIELDS.iter().map(|&f| FieldId(f)).collect();
        let values = FieldGroup::create(handle, &format!("stat-values-{pid}"), &ids)?;
        let pids = FieldGroup::create(
            handle,
            &format!("stat-pids-{pid}"),
            &[FieldId(DCGM_FI_DEV_COMPUTE_PIDS)],
        )?;
        let watches = [
            group.watch(&values, WatchOptions::default())?,
            group.watch(&pids, WatchOptions::default())?,
        ];
        Ok(Self {
            handle,
            group,
            gpus,
            values,
            pids,
            _watches: watches,
            simulated: handle.is_simulated(),
        })
    }

    fn read(&self) -> dcgm::Result<Vec<GpuLine>> {
        self.handle.update_all_fields(true)?;
        let mut values: BTreeMap<(u32, u16), Value> = BTreeMap::new();
        for v in self.group.latest_values(&self.values)? {
            if !v.value.is_blank() {
                values.insert((v.entity.id, v.field.0), v.value);
            }
        }
        // The running processes are the samples of each GPU's latest update.
        let samples = self
            .group
            .values_since(&self.pids, &mut SinceCursor::default())?;
        let mut latest: BTreeMap<u32, i64> = BTreeMap::new();
        for s in &samples {
            let t = latest.entry(s.entity.id).or_insert(i64::MIN);
            *t = (*t).max(s.timestamp_us);
        }
        let mut processes: BTreeMap<u32, Vec<Process>> = BTreeMap::new();
        for s in &samples {
            if latest.get(&s.entity.id) != Some(&s.timestamp_us) {
                continue;
            }
            if let Some(p) = s.value.running_process() {
                let owner = common::process::owner(p.pid, self.simulated);
                processes.entry(s.entity.id).or_default().push(Process {
                    pid: p.pid,
                    user: owner.user,
                    name: owner.name,
                    memory_mib: p.memory_used_bytes >> 20,
                });
            }
        }
        let int = |g: u32, f: u16| values.get(&(g, f)).and_then(Value::as_i64);
        let float = |g: u32, f: u16| values.get(&(g, f)).and_then(Value::as_f64);
        Ok(self
            .gpus
            .iter()
            .map(|&g| GpuLine {
                index: g,
                name: values
                    .get(&(g, DCGM_FI_DEV_GPU_NAME))
                    .and_then(|v| v.as_str().map(str::to_owned)),
                temperature_c: int(g, DCGM_FI_DEV_GPU_TEMP_CELSIUS),
                utilization_pct: int(g, DCGM_FI_DEV_GPU_UTIL_RATIO),
                memory_used_mib: int(g, DCGM_FI_DEV_FB_USED),
                memory_total_mib: int(g, DCGM_FI_DEV_FB_TOTAL),
                power_w: float(g, DCGM_FI_DEV_BOARD_POWER_WATTS),
                power_limit_w: float(g, DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS),
                processes: processes.remove(&g).unwrap_or_default(),
            })
            .collect())
    }
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
fn render(l: &GpuLine, color: bool) -> String {
    let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
    let hot = l.temperature_c.is_some_and(|t| t >= 80);
    let temp_style = if hot {
        fg(AnsiColor::Red).bold()
    } else {
        fg(AnsiColor::Red)
    };
    let procs: Vec<String> = l
        .processes
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
        .collect();
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

fn to_json(lines: &[GpuLine], simulated: bool) -> serde_json::Value {
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
                "processes": l.processes.iter().map(|p| serde_json::json!({
                    "pid": p.pid,
                    "user": p.user,
                    "name": p.name,
                    "memory_mib": p.memory_mib,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({ "simulated": simulated, "gpus": gpus })
}
