//! `top`: an nvtop-style live view of the GPUs and their MIG instances, built on the `dcgm`
//! safe layer: utilisation, memory and power against the limit as bars, a utilisation
//! sparkline, temperature, SM/memory clocks, encoder/decoder use, PCIe and NVLink throughput,
//! the health state, a utilisation and memory history chart of the selected GPU, the MIG
//! instances, and the processes on the GPUs with their own SM and memory utilisation, type,
//! CPU use, host memory and container. Blanks show as N/A; a column `/proc` cannot answer for
//! (a simulated process that is not on this host) shows `-`.
//!
//! ```text
//! dcgm-top --simulate
//! ```
//!
//! Keys (nvtop's): ↑/↓ select a GPU, or a process after Tab; F9 or k sends the selected process
//! a signal chosen from a menu (Enter sends, Esc cancels); +/- change the interval, p or space
//! pause, F6 or s change the process sort column, r reverse it, q, Esc (outside the menu) or
//! Ctrl-C quit. The view follows the terminal's size. The terminal is given back (raw mode
//! off, the alternate screen left) on every way out: a quit key, SIGINT, SIGTERM or SIGHUP, an
//! error, a panic.

use dcgm_tools as common;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use dcgm::{
    Entity, EntityGroup, FieldGroup, FieldId, Group, Handle, HealthResult, HealthSystems,
    SinceCursor, Value, Watch, WatchOptions,
};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Borders, Cell, Chart, Dataset, Gauge, GraphType, Paragraph, Row, Sparkline, Table,
};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

#[derive(Debug, Parser)]
#[command(
    name = "top",
    about = "Live view of GPUs, MIG instances and their processes (nvtop-style)",
    after_help = "Keys: up/down select a GPU (a process after Tab), F9 or k signal the selected \
                  process (a menu: SIGTERM first, Enter sends, Esc cancels), +/- interval, p \
                  pause, F6 or s sort column, r reverse, q or Ctrl-C quit.\n\
                  Process columns: SM% and MEM% are the process's own SM and memory \
                  utilisation, DCGM's process statistics (dcgmGetPidInfo): the average of the \
                  per-process utilisation samples DCGM holds for it since it started, of \
                  the last 60 s it is asked to keep; N/A where DCGM has none (on a real node \
                  process statistics need root, for accounting mode). enc and dec (by the Util \
                  bar) are the GPU's encoder/decoder use: DCGM has no per-process figure for \
                  them. TYPE is C \
                  (compute), G (graphics) or C+G, from DCGM's two running-process lists. CPU% \
                  (of one CPU, between two refreshes), HOST MEM (resident) and CONTAINER (the \
                  runtime and short id from /proc/PID/cgroup, k8s:POD/ID for a Kubernetes pod) \
                  come from /proc; `-` where the process is not on this host. MIG instances \
                  are listed with their processes: DCGM's process lists name only the GPU, so \
                  the instance is the one the process's CUDA_VISIBLE_DEVICES (or \
                  NVIDIA_VISIBLE_DEVICES) gives as MIG-GPU-UUID/GI/CI; the GPU's processes of \
                  unknown instance follow each instance marked `?`.\n\
                  Needs a terminal (stdin and stdout); for a pipe or a file use stat --watch or \
                  dmon.\n\
                  Exit status: 0 on quit, 1 when DCGM cannot be reached or there is no usable \
                  terminal, 128+N on signal N (130 SIGINT, 143 SIGTERM)."
)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// Refresh interval in milliseconds (100 to 10000).
    #[arg(short = 'd', long = "delay", default_value_t = 1000)]
    delay_ms: u64,
}

/// What each row shows, by field.
struct Fields {
    util: FieldId,
    fb_used: FieldId,
    fb_total: FieldId,
    power: FieldId,
    temp: FieldId,
    sm_clock: FieldId,
    mem_clock: FieldId,
    pcie_tx: FieldId,
    pcie_rx: FieldId,
    nvlink_tx: FieldId,
    nvlink_rx: FieldId,
    enc: FieldId,
    dec: FieldId,
}

impl Fields {
    fn new() -> Self {
        let f = |n: &str| FieldId::parse(n).expect("a DCGM 4.6 field");
        Self {
            util: f("DCGM_FI_DEV_GPU_UTIL"),
            fb_used: f("DCGM_FI_DEV_FB_USED"),
            fb_total: f("DCGM_FI_DEV_FB_TOTAL"),
            power: f("DCGM_FI_DEV_POWER_USAGE"),
            temp: f("DCGM_FI_DEV_GPU_TEMP"),
            sm_clock: f("DCGM_FI_DEV_SM_CLOCK"),
            mem_clock: f("DCGM_FI_DEV_MEM_CLOCK"),
            pcie_tx: f("DCGM_FI_PROF_PCIE_TX_BYTES"),
            pcie_rx: f("DCGM_FI_PROF_PCIE_RX_BYTES"),
            nvlink_tx: f("DCGM_FI_PROF_NVLINK_TX_BYTES"),
            nvlink_rx: f("DCGM_FI_PROF_NVLINK_RX_BYTES"),
            enc: f("DCGM_FI_DEV_ENC_UTIL"),
            dec: f("DCGM_FI_DEV_DEC_UTIL"),
        }
    }

    fn all(&self) -> Vec<FieldId> {
        vec![
            self.util,
            self.fb_used,
            self.fb_total,
            self.power,
            self.temp,
            self.sm_clock,
            self.mem_clock,
            self.pcie_tx,
            self.pcie_rx,
            self.nvlink_tx,
            self.nvlink_rx,
            self.enc,
            self.dec,
        ]
    }
}

/// A GPU or MIG instance shown in the view.
struct Row0 {
    entity: Entity,
    label: String,
    name: String,
    power_limit_w: Option<u32>,
    /// The GPU it belongs to (itself for a GPU).
    gpu: u32,
    /// For a GPU instance: its GPU's UUID and NVML's id of the instance, the names a process's
    /// `CUDA_VISIBLE_DEVICES` gives it by.
    mig: Option<(String, u32)>,
}

/// Which of DCGM's running-process lists a process is on.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Kind {
    compute: bool,
    graphics: bool,
}

impl Kind {
    fn label(self) -> &'static str {
        match (self.compute, self.graphics) {
            (true, true) => "C+G",
            (false, true) => "G",
            _ => "C",
        }
    }
}

#[derive(Clone)]
struct Process {
    pid: u32,
    user: String,
    name: String,
    gpu: u32,
    mem_mib: u64,
    kind: Kind,
    /// The process's own SM and memory utilisation on this GPU (DCGM's process statistics).
    sm_util: Option<f64>,
    mem_util: Option<f64>,
    /// `Some` for a process on this host: its start time (`/proc/PID/stat`, in clock ticks
    /// since boot), which tells it from a later process that got the same pid.
    host: Option<u64>,
    cpu_percent: Option<f64>,
    host_mem_mib: Option<u64>,
    container: Option<String>,
    /// The GPU instance (its entity id) the process's environment gives it, where it does.
    instance: Option<u32>,
}

const SORT_COLUMNS: [&str; 11] = [
    "PID",
    "USER",
    "NAME",
    "GPU",
    "TYPE",
    "SM%",
    "MEM%",
    "CPU%",
    "HOST MEM",
    "CONTAINER",
    "GPU MEM",
];

/// The signals the kill menu offers, SIGTERM first (the default), as nvtop's.
const SIGNALS: [(&str, i32); 9] = [
    ("SIGTERM", libc::SIGTERM),
    ("SIGKILL", libc::SIGKILL),
    ("SIGINT", libc::SIGINT),
    ("SIGHUP", libc::SIGHUP),
    ("SIGQUIT", libc::SIGQUIT),
    ("SIGUSR1", libc::SIGUSR1),
    ("SIGUSR2", libc::SIGUSR2),
    ("SIGSTOP", libc::SIGSTOP),
    ("SIGCONT", libc::SIGCONT),
];

/// The samples the history chart and the sparklines keep.
const HISTORY: usize = 240;

/// What ↑/↓ move.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Focus {
    Gpus,
    Processes,
}

/// The open signal menu: the process it is for and the signal chosen.
struct KillMenu {
    target: Process,
    choice: usize,
}

/// Everything the screen shows, refreshed every interval.
struct State {
    rows: Vec<Row0>,
    values: HashMap<(Entity, FieldId), Value>,
    util_history: HashMap<Entity, VecDeque<u64>>,
    /// Framebuffer use in percent of the total, per sample.
    mem_history: HashMap<Entity, VecDeque<u64>>,
    health: BTreeMap<u32, HealthResult>,
    processes: Vec<Process>,
    selected: usize,
    focus: Focus,
    /// The selected row of the sorted process table.
    proc_selected: usize,
    menu: Option<KillMenu>,
    /// What the last kill did, or why it did nothing.
    message: Option<String>,
    interval: Duration,
    paused: bool,
    sort: usize,
    reverse: bool,
    source: String,
    error: Option<String>,
    /// Why the process list could not be read, if it could not.
    proc_error: Option<String>,
}

/// The DCGM side: groups, watches and the reads of one refresh.
struct Source {
    handle: Handle,
    fields: Fields,
    group: Group,
    gpus: Group,
    fg: FieldGroup,
    pid_fg: FieldGroup,
    graphics_pids: FieldId,
    watches: Vec<Watch>,
    pid_cursor: SinceCursor,
    /// Each host process's CPU time at the last refresh, for its CPU % over the interval.
    cpu_before: HashMap<u32, (Instant, Duration)>,
}

impl Source {
    fn open(cli: &Cli) -> dcgm::Result<(Self, Vec<Row0>)> {
        let handle = cli.conn.open()?;
        let sys = handle.system();
        let mut rows = Vec::new();
        let mut entities = Vec::new();
        let mig = sys.mig_hierarchy().unwrap_or_default();
        for gpu in sys.gpu_ids()? {
            let a = sys.device_attributes(gpu)?;
            rows.push(Row0 {
                entity: Entity::gpu(gpu),
                label: format!("GPU {gpu}"),
                name: a.name.clone(),
                power_limit_w: a.power_limit_w,
                gpu,
                mig: None,
            });
            entities.push(Entity::gpu(gpu));
            for gi in mig
                .iter()
                .filter(|m| m.gpu == gpu)
                .flat_map(|m| &m.instances)
            {
                let e = Entity::new(EntityGroup::GpuInstance, gi.entity_id);
                rows.push(Row0 {
                    entity: e,
                    label: format!(" └ GI {}", gi.entity_id),
                    name: gi
                        .slices
                        .map_or_else(|| "MIG".to_string(), |s| format!("MIG {s} slice(s)")),
                    power_limit_w: None,
                    gpu,
                    mig: mig
                        .iter()
                        .find(|m| m.gpu == gpu)
                        .map(|m| m.uuid.clone())
                        .zip(gi.nvml_instance_id),
                });
                entities.push(e);
            }
        }
        let fields = Fields::new();
        let id = std::process::id();
        let group = Group::with_entities(&handle, &format!("top-{id}"), &entities)?;
        let gpus = Group::all_gpus(&handle);
        let fg = FieldGroup::create(&handle, &format!("top-{id}"), &fields.all())?;
        let pid_fg = FieldGroup::create(
            &handle,
            &format!("top-pids-{id}"),
            &[
                FieldId::parse("DCGM_FI_DEV_COMPUTE_PIDS")?,
                FieldId::parse("DCGM_FI_DEV_GRAPHICS_PIDS")?,
            ],
        )?;
        // Health is best effort: a library without the health module still shows the rest.
        let _ = gpus.health_set(HealthSystems::ALL);
        let source = Self {
            handle,
            fields,
            group,
            gpus,
            fg,
            pid_fg,
            graphics_pids: FieldId::parse("DCGM_FI_DEV_GRAPHICS_PIDS")?,
            watches: Vec::new(),
            pid_cursor: SinceCursor::default(),
            cpu_before: HashMap::new(),
        };
        Ok((source, rows))
    }

    /// (Re)watches everything at `interval`.
    fn watch(&mut self, interval: Duration) -> dcgm::Result<()> {
        self.watches.clear();
        let o = WatchOptions {
            update_interval: interval,
            max_keep_age: Duration::from_secs(60).max(interval * 4),
            max_keep_samples: 0,
        };
        self.watches.push(self.group.watch(&self.fg, o)?);
        self.watches.push(self.gpus.watch(&self.pid_fg, o)?);
        // Per-process utilisation is best effort: on a real node it needs root (accounting
        // mode); without it the SM% and MEM% columns say N/A.
        let _ = self.gpus.watch_pid_fields(WatchOptions {
            max_keep_age: Duration::from_secs(60),
            ..o
        });
        self.handle.update_all_fields(true)
    }

    fn refresh(&mut self, s: &mut State) -> dcgm::Result<()> {
        for v in self.group.latest_values(&self.fg)? {
            s.values.insert((v.entity, v.field), v.value);
        }
        for r in &s.rows {
            let util = s
                .values
                .get(&(r.entity, self.fields.util))
                .and_then(Value::as_f64);
            let get = |f| s.values.get(&(r.entity, f)).and_then(Value::as_f64);
            let mem = get(self.fields.fb_used)
                .zip(get(self.fields.fb_total))
                .filter(|(_, t)| *t > 0.0)
                .map(|(u, t)| u / t * 100.0);
            for (history, v) in [(&mut s.util_history, util), (&mut s.mem_history, mem)] {
                let h = history.entry(r.entity).or_default();
                h.push_back(v.map_or(0, |u| u.clamp(0.0, 100.0) as u64));
                while h.len() > HISTORY {
                    h.pop_front();
                }
            }
        }
        if let Ok(report) = self.gpus.health_check() {
            for i in &report.incidents {
                let worst = s.health.entry(i.entity.id).or_default();
                *worst = (*worst).max(i.result);
            }
            for r in s.rows.iter().filter(|r| r.entity.group == EntityGroup::Gpu) {
                s.health.entry(r.gpu).or_default();
            }
        }
        // The processes are the samples of each GPU's latest update of its PID list. A library
        // may refuse that read (libdcgm 4.6.0 on DCGM's injected GPUs answers BADPARAM): the
        // rest of the view still refreshes, and the process table says why it is empty.
        let samples = match self.gpus.values_since(&self.pid_fg, &mut self.pid_cursor) {
            Ok(v) => {
                s.proc_error = None;
                v
            }
            Err(e) => {
                s.proc_error = Some(e.to_string());
                return Ok(());
            }
        };
        // Every sample of the latest update of each list (compute, graphics) of each GPU
        // (libdcgm stores an update's processes at consecutive microseconds).
        let latest = dcgm::latest_update(&samples);
        if !latest.is_empty() {
            let updated: BTreeSet<u32> = latest.iter().map(|v| v.entity.id).collect();
            s.processes.retain(|p| !updated.contains(&p.gpu));
            let simulated = self.handle.is_simulated();
            for v in &latest {
                let Some(p) = v.value.running_process() else {
                    continue;
                };
                let graphics = v.field == self.graphics_pids;
                let gpu = v.entity.id;
                if let Some(known) = s
                    .processes
                    .iter_mut()
                    .find(|q| (q.pid, q.gpu) == (p.pid, gpu))
                {
                    known.kind.graphics |= graphics;
                    known.kind.compute |= !graphics;
                    known.mem_mib = known.mem_mib.max(p.memory_used_bytes >> 20);
                    continue;
                }
                let who = common::process::owner(p.pid, simulated);
                let name = who.name.unwrap_or_else(|| "N/A".into());
                let host = host_start_time(p.pid, simulated.then_some(name.as_str()));
                s.processes.push(Process {
                    pid: p.pid,
                    user: who.user.unwrap_or_else(|| "N/A".into()),
                    instance: host.and_then(|_| mig_instance(p.pid, gpu, &s.rows)),
                    host,
                    name,
                    gpu,
                    mem_mib: p.memory_used_bytes >> 20,
                    kind: Kind {
                        compute: !graphics,
                        graphics,
                    },
                    sm_util: None,
                    mem_util: None,
                    cpu_percent: None,
                    host_mem_mib: None,
                    container: None,
                });
            }
        }
        self.per_process(&mut s.processes);
        Ok(())
    }

    /// Fills what DCGM's process statistics and `/proc` say of each process.
    fn per_process(&mut self, processes: &mut [Process]) {
        let mut stats: HashMap<u32, Option<dcgm::PidInfo>> = HashMap::new();
        let now = Instant::now();
        let mut cpu_now = HashMap::new();
        for p in processes.iter_mut() {
            let info = stats
                .entry(p.pid)
                .or_insert_with(|| self.gpus.pid_info(p.pid).ok());
            let on_gpu = info
                .as_ref()
                .and_then(|i| i.gpus.iter().find(|g| g.gpu == Some(p.gpu)));
            p.sm_util = on_gpu.and_then(|g| g.process_sm_util);
            p.mem_util = on_gpu.and_then(|g| g.process_mem_util);
            if p.host.is_none() {
                continue;
            }
            p.host_mem_mib = common::host_process::rss_bytes(p.pid).map(|b| b >> 20);
            p.container = Some(
                common::container::of_pid(p.pid).map_or_else(|| "(none)".into(), |c| c.short()),
            );
            if let Some(t) = common::host_process::cpu_time(p.pid) {
                cpu_now.insert(p.pid, (now, t));
                if let Some((then, before)) = self.cpu_before.get(&p.pid) {
                    let wall = now.duration_since(*then).as_secs_f64();
                    if wall > 0.0 {
                        let used = t.saturating_sub(*before).as_secs_f64();
                        p.cpu_percent = Some(used / wall * 100.0);
                    }
                }
            }
        }
        self.cpu_before = cpu_now;
    }
}

fn fmt_opt(v: Option<f64>, unit: &str, digits: usize) -> String {
    v.map_or_else(|| "N/A".into(), |v| format!("{v:.digits$}{unit}"))
}

/// Bytes per second as MB/s, or N/A.
fn rate(v: Option<f64>) -> String {
    v.map_or_else(|| "N/A".into(), |b| format!("{:.0} MB/s", b / 1e6))
}

/// The start time of `pid` on this host (`/proc/PID/stat`'s `starttime`), or `None` where it
/// is not one: not in `/proc`, or, for a process of the simulator (`simulated_name`), a pid
/// that on this host belongs to a process of another name. A simulated process is a real one
/// only where a test or a demo put a real pid and its name on the simulator's list.
fn host_start_time(pid: u32, simulated_name: Option<&str>) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ...": the name may hold spaces and parentheses, the fields after it not.
    let (head, tail) = stat.rsplit_once(')')?;
    let (_, comm) = head.split_once('(')?;
    if let Some(name) = simulated_name {
        let program = name.split_whitespace().next().unwrap_or(name);
        let program = program.rsplit('/').next().unwrap_or(program);
        // The kernel keeps the first 15 bytes of the name.
        if comm.as_bytes() != &program.as_bytes()[..program.len().min(15)] {
            return None;
        }
    }
    tail.split_whitespace().nth(19)?.parse().ok()
}

/// The GPU instance of `gpu` a process of this host was given in its environment
/// (`/proc/PID/environ`): `CUDA_VISIBLE_DEVICES` (or `NVIDIA_VISIBLE_DEVICES`, the container
/// runtime's) naming it as `MIG-GPU-UUID/GI/CI`. DCGM's process lists say only the GPU; a
/// device given as `MIG-UUID` (the MIG device's own UUID, which DCGM does not report) or not at
/// all leaves the instance unknown.
fn mig_instance(pid: u32, gpu: u32, rows: &[Row0]) -> Option<u32> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let var = |name: &str| {
        environ.split(|&b| b == 0).find_map(|kv| {
            let kv = std::str::from_utf8(kv).ok()?;
            kv.strip_prefix(name)?.strip_prefix('=').map(str::to_string)
        })
    };
    let devices = var("CUDA_VISIBLE_DEVICES").or_else(|| var("NVIDIA_VISIBLE_DEVICES"))?;
    devices.split(',').find_map(|d| {
        let mut parts = d.trim().strip_prefix("MIG-")?.split('/');
        let (uuid, gi) = (parts.next()?, parts.next()?.parse::<u32>().ok()?);
        rows.iter()
            .find(|r| r.gpu == gpu && r.mig.as_ref().is_some_and(|(u, id)| u == uuid && *id == gi))
            .map(|r| r.entity.id)
    })
}

/// Sends `signal` to the process of a row, after checking that the pid still names it: a
/// process of this host (never a simulated pid, which on this host may be anybody's), not
/// init nor `top` itself, started when the row says it did (not a later process that got its
/// pid). Says what it did, or why it did nothing.
fn send_signal(p: &Process, (signal_name, signal): (&str, i32)) -> Result<String, String> {
    let who = format!("{} ({})", p.pid, p.name);
    let Some(started) = p.host else {
        return Err(format!(
            "{who} is not a process on this host (a simulated or remote process): no signal sent"
        ));
    };
    if p.pid <= 1 || p.pid == std::process::id() {
        return Err(format!("{who} is init or top itself: no signal sent"));
    }
    if host_start_time(p.pid, None) != Some(started) {
        return Err(format!(
            "{who} has exited (its pid is gone or now another process's): no signal sent"
        ));
    }
    let pid = libc::pid_t::try_from(p.pid).map_err(|_| format!("pid {} out of range", p.pid))?;
    // SAFETY: kill(2) takes two integers and touches no memory of ours.
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(format!("sent {signal_name} to {who}"))
    } else {
        let e = std::io::Error::last_os_error();
        let why = if e.raw_os_error() == Some(libc::EPERM) {
            "not your process".to_string()
        } else {
            e.to_string()
        };
        Err(format!("cannot send {signal_name} to {who}: {why}"))
    }
}

/// The process table's rows in the order shown.
fn sorted_processes(s: &State) -> Vec<Process> {
    let mut v = s.processes.clone();
    let f = |x: Option<f64>| x.unwrap_or(-1.0);
    v.sort_by(|a, b| {
        let o = match s.sort {
            0 => a.pid.cmp(&b.pid),
            1 => a.user.cmp(&b.user),
            2 => a.name.cmp(&b.name),
            3 => a.gpu.cmp(&b.gpu),
            4 => a.kind.label().cmp(b.kind.label()),
            5 => f(b.sm_util).total_cmp(&f(a.sm_util)),
            6 => f(b.mem_util).total_cmp(&f(a.mem_util)),
            7 => f(b.cpu_percent).total_cmp(&f(a.cpu_percent)),
            8 => b.host_mem_mib.cmp(&a.host_mem_mib),
            9 => a.container.cmp(&b.container),
            _ => b.mem_mib.cmp(&a.mem_mib),
        };
        let o = o.then(a.pid.cmp(&b.pid)).then(a.gpu.cmp(&b.gpu));
        if s.reverse { o.reverse() } else { o }
    });
    v
}

/// A `/proc` column: `-` for a process not on this host, N/A for one it cannot read.
fn host_col(p: &Process, v: Option<String>) -> String {
    match (p.host, v) {
        (None, _) => "-".into(),
        (Some(_), Some(v)) => v,
        (Some(_), None) => "N/A".into(),
    }
}

fn health_span(h: Option<&HealthResult>) -> Span<'static> {
    match h {
        Some(HealthResult::Pass) => Span::styled("OK", Style::default().fg(Color::Green)),
        Some(HealthResult::Warn) => Span::styled("WARN", Style::default().fg(Color::Yellow)),
        Some(HealthResult::Fail) => Span::styled("FAIL", Style::default().fg(Color::Red)),
        None => Span::raw("N/A"),
    }
}

fn gauge(title: &str, ratio: Option<f64>, text: String, color: Color) -> Gauge<'static> {
    Gauge::default()
        .block(Block::default().title(title.to_string()))
        .gauge_style(Style::default().fg(color))
        .ratio(ratio.unwrap_or(0.0).clamp(0.0, 1.0))
        .label(text)
}

fn draw(f: &mut ratatui::Frame, s: &State, fields: &Fields) {
    let area = f.area();
    // The chart and the MIG table need room: a short terminal shows the GPUs and processes.
    let band = if area.height >= 30 { 8 } else { 0 };
    let [header, gpus, middle, procs, message, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Percentage(40),
        Constraint::Length(band),
        Constraint::Min(4),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let mut head = vec![Span::styled(
        format!(
            "dcgm top  {}  interval {} ms",
            s.source,
            s.interval.as_millis()
        ),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    if s.paused {
        head.push(Span::styled("  PAUSED", Style::default().fg(Color::Yellow)));
    }
    if let Some(e) = &s.error {
        head.push(Span::styled(
            format!("  {e}"),
            Style::default().fg(Color::Red),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(head)), header);

    // One 4-line block per GPU or instance, scrolled so that the selected one is visible.
    let per = 4u16;
    let fit = (gpus.height / per).max(1) as usize;
    let first = s.selected.saturating_sub(fit - 1);
    for (i, r) in s.rows.iter().enumerate().skip(first).take(fit) {
        let y = gpus.y + (i - first) as u16 * per;
        let rect = Rect::new(gpus.x, y, gpus.width, per.min(gpus.y + gpus.height - y));
        draw_row(f, s, fields, r, i == s.selected, rect);
    }
    if middle.height > 0 {
        let [chart, mig] =
            Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)])
                .areas(middle);
        draw_chart(f, s, chart);
        draw_mig(f, s, fields, mig);
    }
    draw_processes(f, s, procs);
    if let Some(m) = &s.message {
        f.render_widget(
            Paragraph::new(m.as_str()).style(Style::default().fg(Color::Yellow)),
            message,
        );
    }
    f.render_widget(
        Paragraph::new(
            "↑/↓ select  Tab GPUs/processes  F9/k kill  F6/s sort  r reverse  +/- interval  \
             p pause  q quit",
        ),
        footer,
    );
    if let Some(menu) = &s.menu {
        draw_menu(f, menu, area);
    }
}

fn draw_processes(f: &mut ratatui::Frame, s: &State, area: Rect) {
    let col = |i: usize| {
        let mark = if i == s.sort {
            if s.reverse { "▲" } else { "▼" }
        } else {
            ""
        };
        Cell::from(format!("{}{mark}", SORT_COLUMNS[i]))
    };
    let sorted = sorted_processes(s);
    let pct = |v: Option<f64>| fmt_opt(v, "", 0);
    let rows = sorted.iter().enumerate().map(|(i, p)| {
        let row = Row::new(vec![
            p.pid.to_string(),
            p.user.clone(),
            p.name.clone(),
            p.gpu.to_string(),
            p.kind.label().to_string(),
            pct(p.sm_util),
            pct(p.mem_util),
            host_col(p, p.cpu_percent.map(|c| format!("{c:.1}"))),
            host_col(p, p.host_mem_mib.map(|m| format!("{m} MiB"))),
            host_col(p, p.container.clone()),
            format!("{} MiB", p.mem_mib),
        ]);
        if s.focus == Focus::Processes && i == s.proc_selected {
            row.style(Style::default().add_modifier(Modifier::REVERSED))
        } else {
            row
        }
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Min(10),
            Constraint::Length(4),
            Constraint::Length(5),
            Constraint::Length(4),
            Constraint::Length(5),
            Constraint::Length(5),
            Constraint::Length(9),
            Constraint::Length(22),
            Constraint::Length(10),
        ],
    )
    .header(
        Row::new((0..SORT_COLUMNS.len()).map(col).collect::<Vec<_>>())
            .style(Style::default().add_modifier(Modifier::BOLD)),
    )
    .block(
        Block::default()
            .borders(Borders::TOP)
            .title(match &s.proc_error {
                Some(e) => format!("Processes: N/A ({e})"),
                None => format!("Processes ({})", s.processes.len()),
            }),
    );
    // Scrolled so that the selected process is visible.
    let mut state = ratatui::widgets::TableState::default();
    if s.focus == Focus::Processes {
        state.select(Some(s.proc_selected));
    }
    f.render_stateful_widget(table, area, &mut state);
}

/// Utilisation and memory of the selected GPU (or instance) over the last samples.
fn draw_chart(f: &mut ratatui::Frame, s: &State, area: Rect) {
    let Some(r) = s.rows.get(s.selected) else {
        return;
    };
    let points = |h: Option<&VecDeque<u64>>| -> Vec<(f64, f64)> {
        h.map(|h| {
            h.iter()
                .enumerate()
                .map(|(i, v)| (i as f64, *v as f64))
                .collect()
        })
        .unwrap_or_default()
    };
    let util = points(s.util_history.get(&r.entity));
    let mem = points(s.mem_history.get(&r.entity));
    let n = util.len().max(mem.len()).max(2);
    let datasets = vec![
        Dataset::default()
            .name("util %")
            .marker(symbols::Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::default().fg(Color::Green))
            .data(&util),
        Dataset::default()
            .name("mem %")
            .marker(symbols::Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::default().fg(Color::Cyan))
            .data(&mem),
    ];
    let chart = Chart::new(datasets)
        .block(Block::default().borders(Borders::TOP).title(format!(
            "{} history, last {} samples: util % (green), memory % (cyan)",
            r.label.trim_start_matches(" └ "),
            util.len()
        )))
        .x_axis(Axis::default().bounds([0.0, (n - 1) as f64]))
        .y_axis(
            Axis::default()
                .bounds([0.0, 100.0])
                .labels(["0", "50", "100"]),
        );
    f.render_widget(chart, area);
}

/// One row per GPU instance: its utilisation and memory, and the processes of its GPU.
fn draw_mig(f: &mut ratatui::Frame, s: &State, fields: &Fields, area: Rect) {
    let get = |e: Entity, fid: FieldId| s.values.get(&(e, fid)).and_then(Value::as_f64);
    let rows: Vec<Row> = s
        .rows
        .iter()
        .filter(|r| r.entity.group == EntityGroup::GpuInstance)
        .map(|r| {
            // Its own processes, then those of its GPU whose instance is not known (`?`).
            let on = |p: &&Process| p.gpu == r.gpu && p.instance == Some(r.entity.id);
            let unknown = |p: &&Process| p.gpu == r.gpu && p.instance.is_none();
            let procs: Vec<String> = s
                .processes
                .iter()
                .filter(on)
                .map(|p| format!("{} {}", p.pid, p.name))
                .chain(
                    s.processes
                        .iter()
                        .filter(unknown)
                        .map(|p| format!("{} {}?", p.pid, p.name)),
                )
                .collect();
            Row::new(vec![
                format!("GPU {} GI {}", r.gpu, r.entity.id),
                r.name.trim_start_matches("MIG ").to_string(),
                fmt_opt(get(r.entity, fields.util), "%", 0),
                fmt_opt(get(r.entity, fields.fb_used), " MiB", 0),
                if procs.is_empty() {
                    "none".into()
                } else {
                    procs.join(", ")
                },
            ])
        })
        .collect();
    let title = if rows.is_empty() {
        "MIG: no GPU in MIG mode"
    } else {
        "MIG instances (? = on the GPU, instance unknown)"
    };
    let table = Table::new(
        rows,
        [
            Constraint::Length(11),
            Constraint::Length(10),
            Constraint::Length(5),
            Constraint::Length(10),
            Constraint::Min(10),
        ],
    )
    .header(
        Row::new(["INSTANCE", "SLICES", "UTIL", "MEM", "PROCESSES"])
            .style(Style::default().add_modifier(Modifier::BOLD)),
    )
    .block(Block::default().borders(Borders::TOP).title(title));
    f.render_widget(table, area);
}

/// The signal menu, over the middle of the screen.
fn draw_menu(f: &mut ratatui::Frame, menu: &KillMenu, area: Rect) {
    let h = (SIGNALS.len() as u16 + 4).min(area.height);
    let w = 48.min(area.width);
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let mut lines = vec![Line::from(format!(
        "Send to {} ({}):",
        menu.target.pid, menu.target.name
    ))];
    for (i, (name, _)) in SIGNALS.iter().enumerate() {
        let style = if i == menu.choice {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        lines.push(Line::styled(format!("  {name}"), style));
    }
    lines.push(Line::from("Enter send  Esc cancel"));
    f.render_widget(ratatui::widgets::Clear, rect);
    f.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title("Kill")),
        rect,
    );
}

fn draw_row(
    f: &mut ratatui::Frame,
    s: &State,
    fields: &Fields,
    r: &Row0,
    selected: bool,
    rect: Rect,
) {
    let get = |fid: FieldId| s.values.get(&(r.entity, fid)).and_then(Value::as_f64);
    let marker = if selected { "> " } else { "  " };
    let title = Line::from(vec![
        Span::styled(
            format!("{marker}{} {}", r.label, r.name),
            if selected {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default().add_modifier(Modifier::BOLD)
            },
        ),
        Span::raw("  health "),
        health_span(
            s.health
                .get(&r.gpu)
                .filter(|_| r.entity.group == EntityGroup::Gpu),
        ),
        Span::raw(format!(
            "  {}  SM {}  MEM {}  PCIe tx {} rx {}  NVLink tx {} rx {}",
            fmt_opt(get(fields.temp), " C", 0),
            fmt_opt(get(fields.sm_clock), " MHz", 0),
            fmt_opt(get(fields.mem_clock), " MHz", 0),
            rate(get(fields.pcie_tx)),
            rate(get(fields.pcie_rx)),
            rate(get(fields.nvlink_tx)),
            rate(get(fields.nvlink_rx)),
        )),
    ]);
    let block = Block::default().borders(Borders::TOP).title(title);
    let inner = block.inner(rect);
    f.render_widget(block, rect);
    if inner.height == 0 {
        return;
    }
    let [bars, spark] = Layout::vertical([Constraint::Length(2), Constraint::Min(0)]).areas(inner);
    let [u, m, p] = Layout::horizontal([Constraint::Ratio(1, 3); 3]).areas(bars);
    let util = get(fields.util);
    f.render_widget(
        gauge(
            &format!(
                "Util  enc {} dec {}",
                fmt_opt(get(fields.enc), "%", 0),
                fmt_opt(get(fields.dec), "%", 0)
            ),
            util.map(|u| u / 100.0),
            fmt_opt(util, "%", 0),
            Color::Green,
        ),
        u,
    );
    let (used, total) = (get(fields.fb_used), get(fields.fb_total));
    let mem_ratio = used
        .zip(total)
        .filter(|(_, t)| *t > 0.0)
        .map(|(u, t)| u / t);
    f.render_widget(
        gauge(
            "Mem",
            mem_ratio,
            format!(
                "{} / {}",
                fmt_opt(used, " MiB", 0),
                fmt_opt(total, " MiB", 0)
            ),
            Color::Cyan,
        ),
        m,
    );
    let power = get(fields.power);
    let limit = r.power_limit_w.map(f64::from);
    let limit_text = limit.map_or_else(|| "N/A".into(), |l| format!("{l:.0} W"));
    f.render_widget(
        gauge(
            "Power",
            power
                .zip(limit)
                .filter(|(_, l)| *l > 0.0)
                .map(|(p, l)| p / l),
            format!("{} / {limit_text}", fmt_opt(power, " W", 0)),
            Color::Magenta,
        ),
        p,
    );
    if spark.height > 0 {
        let h: Vec<u64> = s
            .util_history
            .get(&r.entity)
            .map(|h| {
                let skip = h.len().saturating_sub(spark.width as usize);
                h.iter().skip(skip).copied().collect()
            })
            .unwrap_or_default();
        f.render_widget(Sparkline::default().data(&h).max(100), spark);
    }
}

/// Gives the terminal back when dropped: on a quit, an error, and a panic's unwinding
/// (`ratatui::try_init` also installs a panic hook that restores it before the message prints).
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// How long the main loop has, after a signal, to leave by itself (it looks every 200 ms)
/// before the signal thread gives the terminal back and exits for it: the loop may be stuck in
/// a DCGM call to a host engine that stopped answering.
const SIGNAL_GRACE: Duration = Duration::from_secs(2);

/// Catches SIGINT, SIGTERM and SIGHUP: the number of the signal is stored in `caught` for the
/// main loop to leave cleanly.
fn catch_signals(caught: Arc<AtomicI32>) -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                caught.store(sig, Ordering::SeqCst);
                std::thread::sleep(SIGNAL_GRACE);
                ratatui::restore();
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    if !(100..=10_000).contains(&cli.delay_ms) {
        return Err("the interval must be between 100 and 10000 ms".into());
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(
            "top needs a terminal (its stdin and stdout are not both one): run it in a \
             terminal, or use `stat --watch SECONDS` or `dmon` for output to a pipe or a file"
                .into(),
        );
    }
    let (mut source, rows) = Source::open(cli)?;
    let mut s = State {
        rows,
        values: HashMap::new(),
        util_history: HashMap::new(),
        mem_history: HashMap::new(),
        health: BTreeMap::new(),
        processes: Vec::new(),
        selected: 0,
        focus: Focus::Gpus,
        proc_selected: 0,
        menu: None,
        message: None,
        interval: Duration::from_millis(cli.delay_ms),
        paused: false,
        sort: SORT_COLUMNS.len() - 1,
        reverse: false,
        // What was used, not what was asked for: the automatic choice may have found an
        // nv-hostengine.
        source: match (source.handle.kind(), source.handle.is_simulated()) {
            (_, true) => "dcgm-sim".into(),
            (dcgm::ConnectionKind::Standalone(h), false) => format!("host {h}"),
            (dcgm::ConnectionKind::Embedded, false) => "embedded".into(),
        },
        error: None,
        proc_error: None,
    };
    source.watch(s.interval)?;
    let caught = Arc::new(AtomicI32::new(0));
    catch_signals(caught.clone()).map_err(|e| format!("cannot catch signals: {e}"))?;
    // Dropped on every way out of `run`, before `main` says why it ended.
    let _guard = TerminalGuard;
    let mut terminal =
        ratatui::try_init().map_err(|e| format!("cannot set up the terminal: {e}"))?;
    let mut next = Instant::now();
    let r = (|| -> std::io::Result<()> {
        loop {
            if caught.load(Ordering::SeqCst) != 0 {
                return Ok(());
            }
            if !s.paused && Instant::now() >= next {
                s.error = source.refresh(&mut s).err().map(|e| e.to_string());
                next = Instant::now() + s.interval;
            }
            terminal.draw(|f| draw(f, &s, &source.fields))?;
            let wait = next
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(200));
            if !event::poll(wait)? {
                continue;
            }
            let Event::Key(k) = event::read()? else {
                continue; // a resize redraws on the next pass
            };
            if k.kind != KeyEventKind::Press {
                continue;
            }
            // Raw mode turns Ctrl-C into a key, not a SIGINT.
            if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
                return Ok(());
            }
            if let Some(menu) = &mut s.menu {
                match k.code {
                    KeyCode::Esc | KeyCode::Char('q') => {
                        s.menu = None;
                        s.message = Some("kill cancelled".into());
                    }
                    KeyCode::Down | KeyCode::Char('j') => {
                        menu.choice = (menu.choice + 1).min(SIGNALS.len() - 1);
                    }
                    KeyCode::Up | KeyCode::Char('k') => menu.choice = menu.choice.saturating_sub(1),
                    KeyCode::Enter => {
                        let r = send_signal(&menu.target, SIGNALS[menu.choice]);
                        s.message = Some(r.unwrap_or_else(|e| e));
                        s.menu = None;
                    }
                    _ => {}
                }
                continue;
            }
            let n_procs = s.processes.len();
            match k.code {
                KeyCode::Char('q') | KeyCode::Esc => return Ok(()),
                KeyCode::Tab | KeyCode::BackTab => {
                    s.focus = match s.focus {
                        Focus::Gpus => Focus::Processes,
                        Focus::Processes => Focus::Gpus,
                    };
                }
                KeyCode::Down if s.focus == Focus::Processes => {
                    s.proc_selected = (s.proc_selected + 1).min(n_procs.saturating_sub(1));
                }
                KeyCode::Up if s.focus == Focus::Processes => {
                    s.proc_selected = s.proc_selected.saturating_sub(1);
                }
                KeyCode::Down => {
                    s.selected = (s.selected + 1).min(s.rows.len().saturating_sub(1));
                }
                KeyCode::Up => s.selected = s.selected.saturating_sub(1),
                KeyCode::F(9) | KeyCode::Char('k') => {
                    if s.focus != Focus::Processes {
                        s.message = Some("Tab to the processes first, then select one".into());
                    } else if let Some(p) = sorted_processes(&s).get(s.proc_selected) {
                        s.menu = Some(KillMenu {
                            target: p.clone(),
                            choice: 0,
                        });
                    } else {
                        s.message = Some("no process to signal".into());
                    }
                }
                KeyCode::Char('p') | KeyCode::Char(' ') => s.paused = !s.paused,
                KeyCode::F(6) | KeyCode::Char('s') => s.sort = (s.sort + 1) % SORT_COLUMNS.len(),
                KeyCode::Char('r') => s.reverse = !s.reverse,
                KeyCode::Char('+') | KeyCode::Char('-') => {
                    let ms = s.interval.as_millis() as u64;
                    let ms = if k.code == KeyCode::Char('+') {
                        ms * 2
                    } else {
                        ms / 2
                    };
                    s.interval = Duration::from_millis(ms.clamp(100, 10_000));
                    if let Err(e) = source.watch(s.interval) {
                        s.error = Some(e.to_string());
                    }
                    next = Instant::now();
                }
                _ => {}
            }
        }
    })();
    r?;
    Ok(match caught.load(Ordering::SeqCst) {
        0 => ExitCode::SUCCESS,
        // SIGINT, SIGTERM or SIGHUP (2, 15, 1): 128 + the signal, as a shell reports it.
        sig => ExitCode::from(128 + sig as u8),
    })
}
