//! `top`: an nvtop-style live view of the GPUs and their MIG instances, built on the `dcgm`
//! safe layer: utilisation, memory and power against the limit as bars, a utilisation
//! sparkline, temperature, SM/memory clocks, PCIe and NVLink throughput, the health state, and
//! the processes on the GPUs. Blanks show as N/A.
//!
//! ```text
//! cargo run --example top -- --simulate
//! ```
//!
//! Keys: ↑/↓ (or k/j) select a GPU, +/- change the interval, p or space pause, s change the
//! process sort column, r reverse it, q, Esc or Ctrl-C quit. The view follows the terminal's
//! size. The terminal is given back (raw mode off, the alternate screen left) on every way out:
//! a quit key, SIGINT, SIGTERM or SIGHUP, an error, a panic.

mod common;

use std::collections::{BTreeMap, HashMap, VecDeque};
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
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Gauge, Paragraph, Row, Sparkline, Table};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

#[derive(Debug, Parser)]
#[command(
    name = "top",
    about = "Live view of GPUs, MIG instances and their processes (nvtop-style)",
    after_help = "Keys: up/down select, +/- interval, p pause, s sort column, r reverse, q or \
                  Ctrl-C quit.\n\
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
}

#[derive(Clone)]
struct Process {
    pid: u32,
    user: String,
    name: String,
    gpu: u32,
    mem_mib: u64,
}

const SORT_COLUMNS: [&str; 5] = ["PID", "USER", "NAME", "GPU", "MEM"];

/// Everything the screen shows, refreshed every interval.
struct State {
    rows: Vec<Row0>,
    values: HashMap<(Entity, FieldId), Value>,
    util_history: HashMap<Entity, VecDeque<u64>>,
    health: BTreeMap<u32, HealthResult>,
    processes: Vec<Process>,
    selected: usize,
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
    watches: Vec<Watch>,
    pid_cursor: SinceCursor,
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
            &[FieldId::parse("DCGM_FI_DEV_COMPUTE_PIDS")?],
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
            watches: Vec::new(),
            pid_cursor: SinceCursor::default(),
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
            let h = s.util_history.entry(r.entity).or_default();
            h.push_back(util.map_or(0, |u| u.clamp(0.0, 100.0) as u64));
            while h.len() > 240 {
                h.pop_front();
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
        let mut latest: BTreeMap<u32, i64> = BTreeMap::new();
        for v in &samples {
            let t = latest.entry(v.entity.id).or_default();
            *t = (*t).max(v.timestamp_us);
        }
        if !latest.is_empty() {
            s.processes.retain(|p| !latest.contains_key(&p.gpu));
            for v in &samples {
                if Some(&v.timestamp_us) != latest.get(&v.entity.id) {
                    continue;
                }
                if let Some(p) = v.value.running_process() {
                    let who = common::process::owner(p.pid, self.handle.is_simulated());
                    s.processes.push(Process {
                        pid: p.pid,
                        user: who.user.unwrap_or_else(|| "N/A".into()),
                        name: who.name.unwrap_or_else(|| "N/A".into()),
                        gpu: v.entity.id,
                        mem_mib: p.memory_used_bytes >> 20,
                    });
                }
            }
        }
        Ok(())
    }
}

fn fmt_opt(v: Option<f64>, unit: &str, digits: usize) -> String {
    v.map_or_else(|| "N/A".into(), |v| format!("{v:.digits$}{unit}"))
}

/// Bytes per second as MB/s, or N/A.
fn rate(v: Option<f64>) -> String {
    v.map_or_else(|| "N/A".into(), |b| format!("{:.0} MB/s", b / 1e6))
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
    let [header, gpus, procs, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Percentage(60),
        Constraint::Min(4),
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

    let col = |i: usize| {
        let mark = if i == s.sort {
            if s.reverse { "▲" } else { "▼" }
        } else {
            ""
        };
        Cell::from(format!("{}{mark}", SORT_COLUMNS[i]))
    };
    let mut procs_sorted = s.processes.clone();
    procs_sorted.sort_by(|a, b| {
        let o = match s.sort {
            0 => a.pid.cmp(&b.pid),
            1 => a.user.cmp(&b.user),
            2 => a.name.cmp(&b.name),
            3 => a.gpu.cmp(&b.gpu),
            _ => b.mem_mib.cmp(&a.mem_mib),
        };
        if s.reverse { o.reverse() } else { o }
    });
    let rows = procs_sorted.iter().map(|p| {
        Row::new(vec![
            p.pid.to_string(),
            p.user.clone(),
            p.name.clone(),
            p.gpu.to_string(),
            format!("{} MiB", p.mem_mib),
        ])
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(8),
            Constraint::Length(10),
            Constraint::Min(12),
            Constraint::Length(5),
            Constraint::Length(12),
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
    f.render_widget(table, procs);
    f.render_widget(
        Paragraph::new("↑/↓ select  +/- interval  p pause  s sort  r reverse  q quit"),
        footer,
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
            "Util",
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
        health: BTreeMap::new(),
        processes: Vec::new(),
        selected: 0,
        interval: Duration::from_millis(cli.delay_ms),
        paused: false,
        sort: 4,
        reverse: false,
        source: match (&cli.conn.host, source.handle.is_simulated()) {
            (_, true) => "dcgm-sim".into(),
            (Some(h), false) => format!("host {h}"),
            (None, false) => "embedded".into(),
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
            match k.code {
                KeyCode::Char('q') | KeyCode::Esc => return Ok(()),
                // Raw mode turns Ctrl-C into a key, not a SIGINT.
                KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                    return Ok(());
                }
                KeyCode::Down | KeyCode::Char('j') => {
                    s.selected = (s.selected + 1).min(s.rows.len().saturating_sub(1));
                }
                KeyCode::Up | KeyCode::Char('k') => s.selected = s.selected.saturating_sub(1),
                KeyCode::Char('p') | KeyCode::Char(' ') => s.paused = !s.paused,
                KeyCode::Char('s') => s.sort = (s.sort + 1) % SORT_COLUMNS.len(),
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
