//! `top`: an nvtop-style terminal UI: every GPU with its utilisation, memory, power against
//! its limit, temperature, clocks, PCIe and NVLink throughput and health; history of the
//! selected GPU; the processes, sortable.
//!
//! Keys: `↑`/`↓` (or `k`/`j`) select a GPU, `+`/`-` change the interval, `p` or space pause,
//! `s` sort by the next column, `r` reverse the order, `q` or Esc quit.
//!
//! ```text
//! cargo run --example top -- --simulate
//! ```

mod common;

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use clap::Parser;
use common::gpu_stats::{GpuSample, GpuStats, Process};
use crossterm::event::{self, Event, KeyCode, KeyEventKind};
use dcgm::{HealthResult, HealthSystems};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Cell, Gauge, Paragraph, Row, Sparkline, Table};

#[derive(Debug, Parser)]
#[command(
    name = "top",
    about = "Interactive view of GPUs and their processes (nvtop-style)",
    after_help = common::EXIT_STATUS
)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// Seconds between refreshes (`+`/`-` change it while running).
    #[arg(
        short = 'd',
        long = "delay",
        default_value_t = 1.0,
        value_name = "SECONDS"
    )]
    delay_s: f64,
}

/// How many samples the history graphs keep.
const HISTORY: usize = 120;
/// The process table's columns, in the order `s` cycles through them.
const SORT_COLUMNS: [&str; 5] = ["PID", "USER", "NAME", "GPU", "MEMORY"];

/// Everything the screen shows.
struct App {
    samples: Vec<GpuSample>,
    /// Why there is no process list, where the library refused it.
    process_error: Option<String>,
    health: BTreeMap<u32, HealthResult>,
    util_history: BTreeMap<u32, VecDeque<u64>>,
    power_history: BTreeMap<u32, VecDeque<u64>>,
    selected: usize,
    interval: Duration,
    paused: bool,
    sort: usize,
    reverse: bool,
    simulated: bool,
}

fn main() {
    let cli = Cli::parse();
    if !(cli.delay_s > 0.0 && cli.delay_s.is_finite()) {
        common::fail("--delay takes a number of seconds above zero");
    }
    let handle = cli.conn.open().unwrap_or_else(|e| common::fail(e));
    let stats = GpuStats::new(&handle, "top").unwrap_or_else(|e| common::fail(e));
    stats
        .group()
        .health_set(HealthSystems::ALL)
        .unwrap_or_else(|e| common::fail(e));
    let mut app = App {
        samples: Vec::new(),
        process_error: None,
        health: BTreeMap::new(),
        util_history: BTreeMap::new(),
        power_history: BTreeMap::new(),
        selected: 0,
        interval: Duration::from_secs_f64(cli.delay_s),
        paused: false,
        sort: SORT_COLUMNS.len() - 1,
        reverse: true,
        simulated: stats.simulated(),
    };
    app.refresh(&stats).unwrap_or_else(|e| common::fail(e));
    let mut terminal = ratatui::init();
    let result = run(&mut terminal, &mut app, &stats);
    ratatui::restore();
    if let Err(e) = result {
        common::fail(e);
    }
}

/// Draws and handles keys until `q`; refreshes every interval unless paused.
fn run(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    stats: &GpuStats,
) -> Result<(), String> {
    let mut next = Instant::now() + app.interval;
    loop {
        terminal
            .draw(|f| draw(f, app))
            .map_err(|e| format!("cannot draw: {e}"))?;
        let wait = next.saturating_duration_since(Instant::now());
        if event::poll(wait).map_err(|e| e.to_string())? {
            if let Event::Key(k) = event::read().map_err(|e| e.to_string())? {
                if k.kind != KeyEventKind::Press {
                    continue;
                }
                match k.code {
                    KeyCode::Char('q') | KeyCode::Esc => return Ok(()),
                    KeyCode::Char('p') | KeyCode::Char(' ') => app.paused = !app.paused,
                    KeyCode::Char('+') => {
                        app.interval = (app.interval * 2).min(Duration::from_secs(60))
                    }
                    KeyCode::Char('-') => {
                        app.interval = (app.interval / 2).max(Duration::from_millis(100))
                    }
                    KeyCode::Down | KeyCode::Char('j') => {
                        app.selected = (app.selected + 1).min(app.samples.len().saturating_sub(1))
                    }
                    KeyCode::Up | KeyCode::Char('k') => {
                        app.selected = app.selected.saturating_sub(1)
                    }
                    KeyCode::Char('s') => app.sort = (app.sort + 1) % SORT_COLUMNS.len(),
                    KeyCode::Char('r') => app.reverse = !app.reverse,
                    _ => {}
                }
            }
            // A resize (or any other event) just redraws.
            continue;
        }
        if !app.paused {
            app.refresh(stats).map_err(|e| e.to_string())?;
        }
        next = Instant::now() + app.interval;
    }
}

impl App {
    fn refresh(&mut self, stats: &GpuStats) -> dcgm::Result<()> {
        self.samples = stats.read()?;
        self.process_error = stats.process_error();
        for inc in stats.group().health_check()?.incidents {
            let worst = self.health.entry(inc.entity.id).or_default();
            *worst = (*worst).max(inc.result);
        }
        for s in &self.samples {
            push(
                &mut self.util_history,
                s.index,
                s.utilization_pct.unwrap_or(0),
            );
            push(
                &mut self.power_history,
                s.index,
                s.power_w.unwrap_or(0.0).round() as i64,
            );
        }
        self.selected = self.selected.min(self.samples.len().saturating_sub(1));
        Ok(())
    }

    /// Every process, in the chosen order.
    fn processes(&self) -> Vec<&Process> {
        let mut all: Vec<&Process> = self
            .samples
            .iter()
            .flat_map(|s| s.processes.iter().flatten())
            .collect();
        all.sort_by(|a, b| match SORT_COLUMNS[self.sort] {
            "PID" => a.pid.cmp(&b.pid),
            "USER" => a.user.cmp(&b.user),
            "NAME" => a.name.cmp(&b.name),
            "GPU" => a.gpu.cmp(&b.gpu),
            _ => a.memory_mib.cmp(&b.memory_mib),
        });
        if self.reverse {
            all.reverse();
        }
        all
    }
}

fn push(history: &mut BTreeMap<u32, VecDeque<u64>>, gpu: u32, v: i64) {
    let h = history.entry(gpu).or_default();
    if h.len() == HISTORY {
        h.pop_front();
    }
    h.push_back(v.max(0) as u64);
}

fn na<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "N/A".into(), |v| v.to_string())
}

fn draw(f: &mut Frame, app: &App) {
    let gpus_height = app.samples.len() as u16 + 3;
    let [title, gpus, detail, procs] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(gpus_height),
        Constraint::Length(9),
        Constraint::Min(4),
    ])
    .areas(f.area());
    let state = if app.paused { "  PAUSED" } else { "" };
    f.render_widget(
        Paragraph::new(format!(
            "DCGM top{}  every {:.2} s{state}   ↑↓ GPU  +/- interval  p pause  s sort  r reverse  q quit",
            if app.simulated { " (SIMULATED)" } else { "" },
            app.interval.as_secs_f64()
        ))
        .style(Style::new().add_modifier(Modifier::BOLD)),
        title,
    );
    draw_gpus(f, app, gpus);
    draw_detail(f, app, detail);
    draw_processes(f, app, procs);
}

fn health_cell(r: Option<&HealthResult>) -> Cell<'static> {
    match r {
        None | Some(HealthResult::Pass) => Cell::from("PASS").style(Style::new().fg(Color::Green)),
        Some(HealthResult::Warn) => Cell::from("WARN").style(Style::new().fg(Color::Yellow)),
        Some(HealthResult::Fail) => Cell::from("FAIL").style(Style::new().fg(Color::Red)),
    }
}

fn draw_gpus(f: &mut Frame, app: &App, area: Rect) {
    let header = Row::new([
        "GPU",
        "NAME",
        "UTIL",
        "MEM MiB",
        "POWER W",
        "TEMP",
        "SM MHz",
        "MEM MHz",
        "PCIe TX/RX KB/s",
        "NVLink MB/s",
        "HEALTH",
    ])
    .style(Style::new().add_modifier(Modifier::BOLD));
    let rows = app.samples.iter().enumerate().map(|(i, s)| {
        let row = Row::new([
            Cell::from(s.index.to_string()),
            Cell::from(s.name.clone().unwrap_or_else(|| "N/A".into())),
            Cell::from(format!("{} %", na(s.utilization_pct))),
            Cell::from(format!(
                "{} / {}",
                na(s.memory_used_mib),
                na(s.memory_total_mib)
            )),
            Cell::from(format!(
                "{} / {}",
                na(s.power_w.map(|w| w.round() as i64)),
                na(s.power_limit_w.map(|w| w.round() as i64))
            )),
            Cell::from(format!("{} °C", na(s.temperature_c))),
            Cell::from(na(s.sm_clock_mhz)),
            Cell::from(na(s.mem_clock_mhz)),
            Cell::from(format!("{} / {}", na(s.pcie_tx_kbs), na(s.pcie_rx_kbs))),
            Cell::from(na(s.nvlink_mbs)),
            health_cell(app.health.get(&s.index)),
        ]);
        if i == app.selected {
            row.style(Style::new().add_modifier(Modifier::REVERSED))
        } else {
            row
        }
    });
    let widths = [
        Constraint::Length(3),
        Constraint::Min(12),
        Constraint::Length(6),
        Constraint::Length(15),
        Constraint::Length(11),
        Constraint::Length(7),
        Constraint::Length(6),
        Constraint::Length(7),
        Constraint::Length(15),
        Constraint::Length(11),
        Constraint::Length(6),
    ];
    f.render_widget(
        Table::new(rows, widths)
            .header(header)
            .block(Block::new().borders(Borders::ALL).title(" GPUs ")),
        area,
    );
}

fn ratio(v: Option<f64>, of: Option<f64>) -> f64 {
    match (v, of) {
        (Some(v), Some(of)) if of > 0.0 => (v / of).clamp(0.0, 1.0),
        _ => 0.0,
    }
}

fn draw_detail(f: &mut Frame, app: &App, area: Rect) {
    let Some(s) = app.samples.get(app.selected) else {
        return;
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .title(format!(" GPU {} ", s.index));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(inner);
    let [util, mem, power] = Layout::vertical([Constraint::Length(1); 3]).areas(left);
    let gauge = |label: String, r: f64, color: Color| {
        Gauge::default()
            .gauge_style(Style::new().fg(color))
            .ratio(r)
            .label(label)
    };
    f.render_widget(
        gauge(
            format!("GPU {} %", na(s.utilization_pct)),
            ratio(s.utilization_pct.map(|u| u as f64), Some(100.0)),
            Color::Green,
        ),
        util,
    );
    f.render_widget(
        gauge(
            format!(
                "MEM {} / {} MiB",
                na(s.memory_used_mib),
                na(s.memory_total_mib)
            ),
            ratio(
                s.memory_used_mib.map(|m| m as f64),
                s.memory_total_mib.map(|m| m as f64),
            ),
            Color::Yellow,
        ),
        mem,
    );
    f.render_widget(
        gauge(
            format!(
                "POWER {} / {} W",
                na(s.power_w.map(|w| w.round() as i64)),
                na(s.power_limit_w.map(|w| w.round() as i64))
            ),
            ratio(s.power_w, s.power_limit_w),
            Color::Magenta,
        ),
        power,
    );
    let [u_graph, p_graph] = Layout::vertical([Constraint::Ratio(1, 2); 2]).areas(right);
    let history = |h: &BTreeMap<u32, VecDeque<u64>>| -> Vec<u64> {
        h.get(&s.index)
            .map(|h| h.iter().copied().collect())
            .unwrap_or_default()
    };
    let util_data = history(&app.util_history);
    f.render_widget(
        Sparkline::default()
            .block(Block::new().title(Line::from("utilisation")))
            .data(&util_data)
            .max(100)
            .style(Style::new().fg(Color::Green)),
        u_graph,
    );
    let power_data = history(&app.power_history);
    f.render_widget(
        Sparkline::default()
            .block(Block::new().title(Line::from("power")))
            .data(&power_data)
            .max(s.power_limit_w.unwrap_or(1000.0).round() as u64)
            .style(Style::new().fg(Color::Magenta)),
        p_graph,
    );
}

fn draw_processes(f: &mut Frame, app: &App, area: Rect) {
    let sort = SORT_COLUMNS[app.sort];
    let header = Row::new(SORT_COLUMNS.map(|c| {
        let arrow = if app.reverse { "▼" } else { "▲" };
        if c == sort {
            Cell::from(format!("{c}{arrow}")).style(Style::new().fg(Color::Cyan))
        } else {
            Cell::from(c)
        }
    }))
    .style(Style::new().add_modifier(Modifier::BOLD));
    let rows = app.processes().into_iter().map(|p| {
        Row::new([
            p.pid.to_string(),
            p.user.clone().unwrap_or_else(|| "N/A".into()),
            p.name.clone().unwrap_or_else(|| "N/A".into()),
            p.gpu.to_string(),
            format!("{} MiB", p.memory_mib),
        ])
    });
    let widths = [
        Constraint::Length(8),
        Constraint::Length(12),
        Constraint::Min(16),
        Constraint::Length(4),
        Constraint::Length(12),
    ];
    f.render_widget(
        Table::new(rows, widths)
            .header(header)
            .block(
                Block::new()
                    .borders(Borders::ALL)
                    .title(match &app.process_error {
                        None => " Processes ".to_string(),
                        Some(e) => format!(" Processes: N/A ({e}) "),
                    }),
            ),
        area,
    );
}
