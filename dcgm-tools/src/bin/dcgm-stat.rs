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

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anstyle::{Ansi256Color, AnsiColor, Style};
use clap::Parser;
use common::gpu_stats::{GpuSample, GpuStats};
use common::host_process;
use common::local_time::LocalTime;
use dcgm::raw::sys::*;
use dcgm::{FieldGroup, FieldId, Group, Handle, Value, Watch, WatchOptions};

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

/// What the GPU lines show, the flags resolved (`-a` sets the others).
#[derive(Debug, Clone, Copy)]
struct Show {
    cmd: bool,
    full_cmd: bool,
    user: bool,
    pid: bool,
    fan: bool,
    enc: bool,
    dec: bool,
    power: bool,
    power_limit: bool,
    processes: bool,
}

impl Show {
    fn of(cli: &Cli) -> Self {
        let all = cli.show_all;
        let codec = cli.show_codec.as_deref().unwrap_or("");
        let power = cli.show_power.as_deref().unwrap_or("");
        Self {
            cmd: cli.show_cmd || all,
            full_cmd: cli.show_full_cmd,
            user: cli.show_user || all,
            pid: cli.show_pid || all,
            fan: cli.show_fan_speed || all,
            enc: codec.contains("enc") || all,
            dec: codec.contains("dec") || all,
            power: !power.is_empty() || all,
            power_limit: power.contains("limit") || all,
            processes: !cli.no_processes,
        }
    }
}

/// One GPU as gpustat describes it; `None` where DCGM has no reading.
#[derive(Debug, Clone)]
struct Gpu {
    index: u32,
    uuid: Option<String>,
    name: Option<String>,
    temperature: Option<i64>,
    fan_speed: Option<i64>,
    utilization: Option<i64>,
    utilization_enc: Option<i64>,
    utilization_dec: Option<i64>,
    power_draw: Option<i64>,
    power_limit: Option<i64>,
    memory_used: Option<i64>,
    memory_total: Option<i64>,
    /// `None` where the library could not list them.
    processes: Option<Vec<Proc>>,
}

/// A process on a GPU, with what the host knows of it; `None` where that cannot be read (the
/// simulator's processes are not processes of this host: only their user, command name and
/// GPU memory are known).
#[derive(Debug, Clone)]
struct Proc {
    username: Option<String>,
    command: Option<String>,
    full_command: Option<Vec<String>>,
    gpu_memory_usage: u64,
    cpu_percent: Option<f64>,
    cpu_memory_usage: Option<u64>,
    pid: u32,
}

/// The fields gpustat shows that [`GpuStats`] does not read.
const EXTRA_FIELDS: [u16; 5] = [
    DCGM_FI_DEV_GPU_UUID,
    DCGM_FI_DEV_FAN_SPEED,
    DCGM_FI_DEV_ENC_UTIL,
    DCGM_FI_DEV_DEC_UTIL,
    DCGM_FI_SYSTEM_DRIVER_VERSION,
];

/// How long CPU use is measured over, as gpustat waits between its two readings.
const CPU_INTERVAL: Duration = Duration::from_millis(100);

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
    let show = Show::of(cli);
    let handle = cli.conn.open()?;
    let source = GpuStats::new(&handle, "stat")?;
    let extras = Extras::new(&handle, source.group())?;
    let gpus = handle.system().gpu_ids()?;
    if let Some(missing) = cli.id.iter().find(|i| !gpus.contains(i)) {
        return Err(format!("no GPU {missing}: the GPUs are {}", common::ranges(&gpus)).into());
    }
    let color = if cli.json || cli.no_color {
        false
    } else {
        cli.force_color || colors_wanted()
    };
    let terminal = interval.is_some() && std::io::stdout().is_terminal();
    let simulated = source.simulated();
    let mut first = true;
    loop {
        let started = Instant::now();
        // DCGM refuses to read an empty group: a node without GPUs says so, as gpustat does.
        let (samples, extra) = if gpus.is_empty() {
            (Vec::new(), ExtraValues::default())
        } else {
            (source.read()?, extras.read()?)
        };
        if let Some(e) = source.process_error() {
            eprintln!("note: the process lists are not available: {e}");
        }
        let wanted = |g: &GpuSample| cli.id.is_empty() || cli.id.contains(&g.index);
        let mut list: Vec<Gpu> = samples
            .into_iter()
            .filter(wanted)
            .map(|s| gpu(s, &extra, simulated))
            .collect();
        if cli.json || show.full_cmd {
            measure_cpu(&mut list, simulated);
        }
        let snapshot = Snapshot {
            hostname: hostname(simulated),
            driver_version: extra.driver_version.clone(),
            query_time: LocalTime::now(),
            gpus: list,
        };
        let text = if cli.json {
            let mut t = String::new();
            snapshot.to_json().write(&mut t, 0);
            t + "\n"
        } else {
            let lines = snapshot.render(&show, cli.no_header, cli.gpuname_width, color);
            if terminal {
                // In place, as gpustat's watch mode does: home, each line cleared to its end,
                // then the rest of the screen.
                let mut t = if first { "\x1b[2J" } else { "" }.to_string() + "\x1b[H";
                for l in lines {
                    t += &l.replace('\n', "\x1b[K\n");
                    t += "\x1b[K\n";
                }
                t + "\x1b[J"
            } else {
                lines.iter().map(|l| format!("{l}\n")).collect()
            }
        };
        common::write_stdout(format_args!("{text}"));
        let _ = std::io::stdout().flush();
        first = false;
        match interval {
            Some(every) => std::thread::sleep(every.saturating_sub(started.elapsed())),
            None => return Ok(ExitCode::SUCCESS),
        }
    }
}

/// The watch of [`EXTRA_FIELDS`], on the group [`GpuStats`] reads (its read updates them).
struct Extras<'g> {
    group: &'g Group,
    fields: FieldGroup,
    _watch: Watch,
}

/// What [`Extras`] read: the values of each GPU, and the driver version.
#[derive(Default)]
struct ExtraValues {
    values: BTreeMap<(u32, u16), Value>,
    driver_version: Option<String>,
}

impl<'g> Extras<'g> {
    fn new(handle: &Handle, group: &'g Group) -> dcgm::Result<Self> {
        let ids: Vec<FieldId> = EXTRA_FIELDS.iter().map(|&f| FieldId(f)).collect();
        let fields =
            FieldGroup::create(handle, &format!("stat-extra-{}", std::process::id()), &ids)?;
        let watch = group.watch(&fields, WatchOptions::default())?;
        Ok(Self {
            group,
            fields,
            _watch: watch,
        })
    }

    fn read(&self) -> dcgm::Result<ExtraValues> {
        let mut values = BTreeMap::new();
        for v in self.group.latest_values(&self.fields)? {
            if !v.value.is_blank() {
                values.insert((v.entity.id, v.field.0), v.value);
            }
        }
        // A global field: every GPU's answer is the same.
        let driver_version = values
            .iter()
            .find(|((_, f), _)| *f == DCGM_FI_SYSTEM_DRIVER_VERSION)
            .and_then(|(_, v)| v.as_str().map(str::to_owned));
        Ok(ExtraValues {
            values,
            driver_version,
        })
    }
}

/// A GPU sample in gpustat's terms (whole watts and MiB, as gpustat floors NVML's readings).
fn gpu(s: GpuSample, extra: &ExtraValues, simulated: bool) -> Gpu {
    let int = |f: u16| extra.values.get(&(s.index, f)).and_then(Value::as_i64);
    Gpu {
        index: s.index,
        uuid: extra
            .values
            .get(&(s.index, DCGM_FI_DEV_GPU_UUID))
            .and_then(|v| v.as_str().map(str::to_owned)),
        name: s.name,
        temperature: s.temperature_c,
        fan_speed: int(DCGM_FI_DEV_FAN_SPEED),
        utilization: s.utilization_pct,
        utilization_enc: int(DCGM_FI_DEV_ENC_UTIL),
        utilization_dec: int(DCGM_FI_DEV_DEC_UTIL),
        power_draw: s.power_w.map(|w| w.floor() as i64),
        power_limit: s.power_limit_w.map(|w| w.floor() as i64),
        memory_used: s.memory_used_mib,
        memory_total: s.memory_total_mib,
        processes: s.processes.map(|ps| {
            ps.into_iter()
                .map(|p| {
                    // The simulator names a process by its command line.
                    let words: Option<Vec<String>> = p
                        .name
                        .map(|n| n.split_whitespace().map(str::to_owned).collect());
                    let mut q = Proc {
                        username: p.user,
                        command: words.as_ref().and_then(|w| w.first()).map(|w| base_name(w)),
                        full_command: words,
                        gpu_memory_usage: p.memory_mib,
                        cpu_percent: None,
                        cpu_memory_usage: None,
                        pid: p.pid,
                    };
                    if !simulated {
                        host_details(&mut q);
                    }
                    q
                })
                .collect()
        }),
    }
}

/// The command line and host memory of a process of this host, as gpustat reads them: the
/// command is the base name of the first word of the command line, `?` when that is empty
/// (a kernel thread, a zombie); where `/proc` has no such process the name DCGM's caller
/// found (its `comm`) stays.
fn host_details(p: &mut Proc) {
    if let Some(words) = host_process::cmdline(p.pid) {
        let words = if words.is_empty() {
            vec!["?".to_string()]
        } else {
            words
        };
        p.command = Some(base_name(&words[0]));
        p.full_command = Some(words);
    }
    p.cpu_memory_usage = host_process::rss_bytes(p.pid);
}

/// The last part of a path (`python3` of `/usr/bin/python3`).
fn base_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// The CPU use of every host process on the GPUs, measured together over [`CPU_INTERVAL`].
fn measure_cpu(gpus: &mut [Gpu], simulated: bool) {
    if simulated {
        return;
    }
    let pids: Vec<u32> = gpus
        .iter()
        .flat_map(|g| g.processes.iter().flatten().map(|p| p.pid))
        .collect();
    if pids.is_empty() {
        return;
    }
    let cpu = host_process::cpu_percent(&pids, CPU_INTERVAL);
    for p in gpus
        .iter_mut()
        .flat_map(|g| g.processes.iter_mut().flatten())
    {
        p.cpu_percent = cpu.get(&p.pid).copied();
    }
}

/// The host name (`uname -n`, what Python's `platform.node()` gives); the simulated node's
/// name when simulated.
fn hostname(simulated: bool) -> String {
    if simulated && let Ok(cfg) = dcgm_sim::config::SimConfig::from_env() {
        return cfg.hostname;
    }
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Colours on a terminal unless NO_COLOR is set (CLICOLOR_FORCE forces them), as
/// `anstream` decides for clap's own output.
fn colors_wanted() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// A value as gpustat prints it: the value, or `??` where there is none.
fn or_unknown<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "??".to_string(), |v| v.to_string())
}

/// gpustat's palette (its `blessed` colours), or nothing when not colouring.
#[derive(Clone, Copy)]
struct Paint(bool);

impl Paint {
    fn fg(c: AnsiColor) -> Style {
        Style::new().fg_color(Some(c.into()))
    }

    /// `text` in `style` when colouring.
    fn on(self, text: &str, style: Style) -> String {
        if self.0 && !text.is_empty() {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }

    /// gpustat's conditional colours: `low` below `threshold`, `high` at or above it, grey
    /// where there is no value to compare.
    fn by(v: Option<i64>, threshold: i64, low: Style, high: Style) -> Style {
        match v {
            Some(v) if v < threshold => low,
            Some(_) => high,
            None => Self::fg(AnsiColor::Black).bold(),
        }
    }
}

/// bytes as gpustat's `bytes2human` prints them: `707MB`, shifting by 1024 while above 9999.
fn bytes_human(bytes: u64) -> String {
    const SUFFIXES: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut v = bytes;
    let mut i = 0;
    while v > 9999 && i < SUFFIXES.len() - 1 {
        v >>= 10;
        i += 1;
    }
    format!("{v}{}", SUFFIXES[i])
}

/// `name` cut to `width` characters from the left, `…` in front (gpustat's `shorten_left`).
fn shorten_left(name: &str, width: usize) -> String {
    let n = name.chars().count();
    if n <= width {
        return name.to_string();
    }
    if width <= 1 {
        return "…".chars().take(width).collect();
    }
    let tail: String = name.chars().skip(n - (width - 1)).collect();
    format!("…{tail}")
}

/// One query's answer: what gpustat's `GPUStatCollection` holds.
struct Snapshot {
    hostname: String,
    driver_version: Option<String>,
    query_time: LocalTime,
    gpus: Vec<Gpu>,
}

impl Snapshot {
    /// The header line and a line per GPU (each with its `-f` lines under it).
    fn render(
        &self,
        show: &Show,
        no_header: bool,
        name_width: Option<usize>,
        color: bool,
    ) -> Vec<String> {
        let paint = Paint(color);
        let width = name_width.unwrap_or_else(|| {
            self.gpus
                .iter()
                .map(|g| g.name.as_deref().unwrap_or("??").chars().count())
                .max()
                .unwrap_or(0)
        });
        let mut lines = Vec::new();
        if !no_header {
            // The host is padded to the width of `[N] name`, as gpustat pads it.
            let host_width = if width == 0 { 16 } else { width } + 3;
            let header = format!(
                "{}  {}  {}",
                paint.on(
                    &format!("{:<host_width$}", self.hostname),
                    Paint::fg(AnsiColor::White).bold()
                ),
                self.query_time.c_locale(),
                paint.on(
                    self.driver_version.as_deref().unwrap_or("??"),
                    Paint::fg(AnsiColor::Black).bold()
                ),
            );
            lines.push(header.trim().to_string());
        }
        for g in &self.gpus {
            lines.push(g.render(show, name_width.map_or(Some(width), Some), paint));
        }
        if self.gpus.is_empty() {
            lines.push(paint.on("(No GPUs are available)", Paint::fg(AnsiColor::Yellow)));
        }
        lines
    }

    /// gpustat's `--json` document, its keys in its order.
    fn to_json(&self) -> Json {
        Json::Object(vec![
            ("hostname", Json::Str(self.hostname.clone())),
            (
                "driver_version",
                Json::opt_str(self.driver_version.as_deref()),
            ),
            ("query_time", Json::Str(self.query_time.iso())),
            (
                "gpus",
                Json::List(self.gpus.iter().map(Gpu::to_json).collect()),
            ),
        ])
    }
}

impl Gpu {
    /// `[0] NVIDIA H200 | 56°C,  99 % |  1010 / 143771 MB | root(1002M)`, with the `-f` lines
    /// under it. `width`: the name's width (`Some(0)`: no name).
    fn render(&self, show: &Show, width: Option<usize>, paint: Paint) -> String {
        let fg = Paint::fg;
        let width = width.unwrap_or(16);
        let mut s = paint.on(&format!("[{}]", self.index), fg(AnsiColor::Cyan)) + " ";
        if width != 0 {
            let name = shorten_left(self.name.as_deref().unwrap_or("??"), width);
            s += &paint.on(&format!("{name:<width$}"), fg(AnsiColor::Blue));
            s += " |";
        }
        let temp = Paint::by(
            self.temperature,
            50,
            fg(AnsiColor::Red),
            fg(AnsiColor::Red).bold(),
        );
        s += &paint.on(&format!("{:>3}°C", or_unknown(self.temperature)), temp);
        s += ", ";
        if show.fan {
            let style = Paint::by(
                self.fan_speed,
                30,
                fg(AnsiColor::Cyan),
                fg(AnsiColor::Cyan).bold(),
            );
            s += &paint.on(&format!("{:>3} %", or_unknown(self.fan_speed)), style);
            s += ", ";
        }
        let green = fg(AnsiColor::Green);
        let util = Paint::by(self.utilization, 30, green, green.bold());
        s += &paint.on(&format!("{:>3} %", or_unknown(self.utilization)), util);
        if show.enc || show.dec {
            let mut codec = Vec::new();
            for (on, label, v) in [
                (show.enc, "E: ", self.utilization_enc),
                (show.dec, "D: ", self.utilization_dec),
            ] {
                if on {
                    let style = Paint::by(v, 50, green, green.bold());
                    codec.push(
                        paint.on(label, Style::new().bold())
                            + &paint.on(&format!("{:>3} %", or_unknown(v)), style),
                    );
                }
            }
            s += &format!(" ({})", codec.join("  "));
        }
        if show.power {
            let magenta = fg(AnsiColor::Magenta);
            let draw = match (self.power_draw, self.power_limit) {
                (None, _) => fg(AnsiColor::Black).bold(),
                (Some(d), Some(l)) if l != 0 && (d as f64) / (l as f64) < 0.4 => magenta,
                _ => magenta.bold(),
            };
            s += ",  ";
            s += &paint.on(&format!("{:>3}", or_unknown(self.power_draw)), draw);
            s += " ";
            if show.power_limit {
                s += "/ ";
                s += &paint.on(&format!("{:>3}", or_unknown(self.power_limit)), magenta);
                s += " ";
                s += &paint.on("W", magenta);
            } else {
                s += &paint.on("W", draw);
            }
        }
        let yellow = fg(AnsiColor::Yellow);
        s += " | ";
        s += &paint.on(
            &format!("{:>5}", or_unknown(self.memory_used)),
            yellow.bold(),
        );
        s += " / ";
        s += &paint.on(&format!("{:>5}", or_unknown(self.memory_total)), yellow);
        s += " MB";
        if !show.processes {
            return s;
        }
        s += " |";
        let Some(processes) = &self.processes else {
            return s + " (Not Supported)";
        };
        for p in processes {
            s += " ";
            s += &p.render(show, paint);
        }
        if show.full_cmd {
            let n = processes.len();
            for (i, p) in processes.iter().enumerate() {
                s += "\n";
                s += &p.render_full(i + 1 == n, paint);
            }
        }
        s
    }

    fn to_json(&self) -> Json {
        Json::Object(vec![
            ("index", Json::Int(i64::from(self.index))),
            ("uuid", Json::opt_str(self.uuid.as_deref())),
            ("name", Json::opt_str(self.name.as_deref())),
            ("temperature.gpu", Json::opt_int(self.temperature)),
            ("fan.speed", Json::opt_int(self.fan_speed)),
            ("utilization.gpu", Json::opt_int(self.utilization)),
            ("utilization.enc", Json::opt_int(self.utilization_enc)),
            ("utilization.dec", Json::opt_int(self.utilization_dec)),
            ("power.draw", Json::opt_int(self.power_draw)),
            ("enforced.power.limit", Json::opt_int(self.power_limit)),
            ("memory.used", Json::opt_int(self.memory_used)),
            ("memory.total", Json::opt_int(self.memory_total)),
            (
                "processes",
                match &self.processes {
                    None => Json::Null,
                    Some(ps) => Json::List(ps.iter().map(Proc::to_json).collect()),
                },
            ),
        ])
    }
}

impl Proc {
    /// `root(1002M)`; `python3(1002M)` with -c, `root:python3/581(1002M)` with -cpu; `--` for
    /// what is not known.
    fn render(&self, show: &Show, paint: Paint) -> String {
        let mut r = String::new();
        if !show.cmd || show.user {
            r += &paint.on(
                self.username.as_deref().unwrap_or("--"),
                Paint::fg(AnsiColor::Black).bold(),
            );
        }
        if show.cmd {
            if !r.is_empty() {
                r.push(':');
            }
            r += &paint.on(
                self.command.as_deref().unwrap_or("--"),
                Paint::fg(AnsiColor::Cyan),
            );
        }
        if show.pid {
            r += &format!("/{}", self.pid);
        }
        r + "("
            + &paint.on(
                &format!("{}M", self.gpu_memory_usage),
                Paint::fg(AnsiColor::Yellow),
            )
            + ")"
    }

    /// ` ├─    581 (  99%,  707MB): python3 train.py` (`└─` for the last); `--` for the CPU use
    /// and memory of a process this host cannot read.
    fn render_full(&self, last: bool, paint: Paint) -> String {
        let cpu = match self.cpu_percent {
            Some(c) => format!("{c:4.0}"),
            None => "  --".to_string(),
        };
        let mem = self.cpu_memory_usage.map_or("--".to_string(), bytes_human);
        let dark = Style::new().fg_color(Some(Ansi256Color(24).into()));
        let command = match self.full_command.as_deref() {
            None | Some([]) => paint.on("?", dark),
            Some([first, rest @ ..]) => {
                let (dir, base) = match first.rsplit_once('/') {
                    Some((d, b)) => (format!("{d}/"), b),
                    None => (String::new(), first.as_str()),
                };
                let mut c = paint.on(&dir, dark) + &paint.on(base, Paint::fg(AnsiColor::Cyan));
                if !rest.is_empty() {
                    c += &paint.on(&format!(" {}", rest.join(" ")), dark);
                }
                c
            }
        };
        format!(
            " {} {:>6} ({}%, {}): {command}",
            if last { "└─" } else { "├─" },
            self.pid,
            paint.on(&cpu, Paint::fg(AnsiColor::Green)),
            paint.on(&format!("{mem:>6}"), Paint::fg(AnsiColor::Yellow)),
        )
    }

    fn to_json(&self) -> Json {
        Json::Object(vec![
            ("username", Json::opt_str(self.username.as_deref())),
            ("command", Json::opt_str(self.command.as_deref())),
            (
                "full_command",
                match &self.full_command {
                    None => Json::Null,
                    Some(w) => Json::List(w.iter().map(|a| Json::Str(a.clone())).collect()),
                },
            ),
            (
                "gpu_memory_usage",
                Json::Int(i64::try_from(self.gpu_memory_usage).unwrap_or(i64::MAX)),
            ),
            (
                "cpu_percent",
                self.cpu_percent.map_or(Json::Null, Json::Float),
            ),
            (
                "cpu_memory_usage",
                Json::opt_int(
                    self.cpu_memory_usage
                        .map(|b| i64::try_from(b).unwrap_or(i64::MAX)),
                ),
            ),
            ("pid", Json::Int(i64::from(self.pid))),
        ])
    }
}

/// A JSON value whose objects keep their keys in the order given, written as Python's
/// `json.dump(indent=4)` writes it (gpustat's `--json`): four-space indents, non-ASCII
/// characters escaped.
enum Json {
    Null,
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Json>),
    Object(Vec<(&'static str, Json)>),
}

impl Json {
    fn opt_int(v: Option<i64>) -> Self {
        v.map_or(Json::Null, Json::Int)
    }

    fn opt_str(v: Option<&str>) -> Self {
        v.map_or(Json::Null, |s| Json::Str(s.to_string()))
    }

    fn write(&self, out: &mut String, depth: usize) {
        let indent = |out: &mut String, d: usize| {
            out.push('\n');
            out.push_str(&"    ".repeat(d));
        };
        match self {
            Json::Null => out.push_str("null"),
            Json::Int(i) => out.push_str(&i.to_string()),
            // `{:?}` keeps the `.0` of a whole number, as Python's repr does.
            Json::Float(f) if f.is_finite() => out.push_str(&format!("{f:?}")),
            Json::Float(_) => out.push_str("null"),
            Json::Str(s) => write_str(out, s),
            Json::List(items) if items.is_empty() => out.push_str("[]"),
            Json::List(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    v.write(out, depth + 1);
                }
                indent(out, depth);
                out.push(']');
            }
            Json::Object(members) if members.is_empty() => out.push_str("{}"),
            Json::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    write_str(out, k);
                    out.push_str(": ");
                    v.write(out, depth + 1);
                }
                indent(out, depth);
                out.push('}');
            }
        }
    }
}

/// A JSON string with Python's `ensure_ascii` escapes.
fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_ascii() && c >= ' ' => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    out.push('"');
}
