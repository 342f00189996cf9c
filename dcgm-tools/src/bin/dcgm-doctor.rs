//! `doctor`: why is this GPU slow? Samples GPUs (or replays a `dmon --json` recording) and
//! prints findings, worst first: what holds each GPU back, the numbers behind it over which
//! time, and what to try.
//!
//! ```text
//! dcgm-doctor --simulate --duration 10
//! dcgm-doctor --duration 30 -d 100 -i 0,1 --json
//! dcgm-doctor --pid 4242
//! dcgm-doctor --replay workloads.jsonl --phase tiny_kernels
//! dcgm-doctor --replay workloads.jsonl --from 20 --to 30 --json
//! dcgm-doctor --replay workloads.jsonl --html report.html
//! ```

use dcgm_tools as common;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use dcgm::{Entity, EntityGroup};
use dcgm_doctor::live::{self, Live};
use dcgm_doctor::replay::{self, Selection};
use dcgm_doctor::{Report, Severity, Window};

#[derive(Debug, Parser)]
#[command(
    name = "doctor",
    about = "Diagnose what holds GPUs back, from live samples or a dmon --json recording",
    after_help = "Exit status: 0 nothing above info, 2 warnings, 3 problems (the worst \
                  finding), 1 error (the reason on stderr)."
)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// Seconds to sample for (live).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    duration: f64,
    /// Delay between samples, in milliseconds (live).
    #[arg(short = 'd', long = "delay", default_value_t = 100)]
    delay_ms: u64,
    /// GPU ids, comma-separated (default: every GPU).
    #[arg(short = 'i', long = "id", value_delimiter = ',', value_name = "GPUS")]
    gpus: Vec<u32>,
    /// Judge only the GPUs this process runs on (live).
    #[arg(long, value_name = "PID", conflicts_with = "replay")]
    pid: Option<u32>,
    /// Judge a `dmon --json` recording instead of sampling.
    #[arg(long, value_name = "FILE")]
    replay: Option<PathBuf>,
    /// The phases file of the recording (`PHASE <name> <unix seconds>` lines); by default
    /// FILE's name with `-phases.txt` for `.jsonl`, where that exists.
    #[arg(long, value_name = "FILE", requires = "replay")]
    phases: Option<PathBuf>,
    /// Judge one phase of the recording.
    #[arg(long, value_name = "NAME", requires = "replay", conflicts_with_all = ["from", "to"])]
    phase: Option<String>,
    /// Seconds left out at the start of a --phase (the workload's ramp).
    #[arg(long, value_name = "SECONDS", default_value_t = replay::PHASE_SETTLE_S)]
    settle: f64,
    /// Judge from this many seconds after the recording's first sample.
    #[arg(long, value_name = "SECONDS", requires = "replay")]
    from: Option<f64>,
    /// Judge up to this many seconds after the recording's first sample.
    #[arg(long, value_name = "SECONDS", requires = "replay")]
    to: Option<f64>,
    /// The report as one JSON object.
    #[arg(long)]
    json: bool,
    /// Also write the report as one self-contained HTML page: charts per GPU with each
    /// finding's window shaded, and the findings beside them.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    let (window, notes) = match &cli.replay {
        Some(file) => replayed(cli, file)?,
        None => live(cli)?,
    };
    let report = dcgm_doctor::judge(&window);
    if let Some(path) = &cli.html {
        std::fs::write(path, dcgm_doctor::html::render(&window, &report))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if cli.json {
        let mut v = serde_json::to_value(&report)?;
        v["notes"] = serde_json::json!(notes);
        common::outln!("{v}");
    } else {
        print_summary(&report, &notes);
    }
    Ok(match report.worst() {
        Some(Severity::Problem) => ExitCode::from(3),
        Some(Severity::Warning) => ExitCode::from(2),
        _ => ExitCode::SUCCESS,
    })
}

/// The recording's window, as selected.
fn replayed(cli: &Cli, file: &Path) -> common::Result<(Window, Vec<String>)> {
    let f =
        std::fs::File::open(file).map_err(|e| format!("cannot open {}: {e}", file.display()))?;
    let trace =
        replay::read(std::io::BufReader::new(f)).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut notes = Vec::new();
    if trace.skipped_lines > 0 {
        notes.push(format!(
            "{} lines of entities other than GPUs left out",
            trace.skipped_lines
        ));
    }
    let phases_file = cli.phases.clone().or_else(|| {
        let name = file.file_name()?.to_str()?.strip_suffix(".jsonl")?;
        let p = file.with_file_name(format!("{name}-phases.txt"));
        p.is_file().then_some(p)
    });
    let phases = match &phases_file {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
            replay::phases(&text).map_err(|e| format!("{}: {e}", p.display()))?
        }
        None => Vec::new(),
    };
    let sel = match (&cli.phase, cli.from, cli.to) {
        (Some(name), _, _) => {
            if phases_file.is_none() {
                return Err(format!(
                    "--phase needs a phases file: none beside {} (give --phases FILE)",
                    file.display()
                )
                .into());
            }
            Selection::Phase {
                name: name.clone(),
                settle_s: cli.settle,
            }
        }
        (None, None, None) => Selection::All,
        (None, from_s, to_s) => Selection::Range { from_s, to_s },
    };
    let window = replay::select(&trace.window, &phases, &sel)?;
    match &sel {
        Selection::All => {}
        Selection::Phase { name, settle_s } => notes.push(format!(
            "judged phase {name}, from {settle_s} s after its start to its end"
        )),
        Selection::Range { from_s, to_s } => notes.push(format!(
            "judged {} to {} s after the recording's first sample",
            from_s.unwrap_or(0.0),
            to_s.map_or("the end".to_string(), |t| t.to_string())
        )),
    }
    Ok((window, notes))
}

/// Samples the GPUs for `--duration`, every `-d` ms.
fn live(cli: &Cli) -> common::Result<(Window, Vec<String>)> {
    if cli.delay_ms == 0 {
        return Err("the delay must be at least 1 ms".into());
    }
    if !(cli.duration > 0.0 && cli.duration <= 24.0 * 3600.0) {
        return Err("give a --duration above 0 and at most a day, in seconds".into());
    }
    let delay = Duration::from_millis(cli.delay_ms);
    let mut builder = cli.conn.reader_from(live::reader_builder(delay));
    if !cli.gpus.is_empty() {
        let ents: Vec<Entity> = cli
            .gpus
            .iter()
            .map(|&g| Entity::new(EntityGroup::Gpu, g))
            .collect();
        builder = builder.entities(&ents);
    }
    let reader = cli.conn.connect_reader(builder.build()?)?;
    let simulated = reader.is_simulated().unwrap_or(false);
    let mut live = Live::new(reader, move |pid| {
        common::process::owner(pid, simulated).name
    })?;
    // --pid: the GPUs the process is on, from the first process lists.
    let mut notes = Vec::new();
    let focus: Option<Vec<u32>> = match cli.pid {
        None => None,
        Some(pid) => {
            let on: Vec<u32> = live
                .processes()
                .iter()
                .filter(|(_, ps)| ps.iter().any(|p| p.pid == pid))
                .map(|(g, _)| *g)
                .collect();
            if on.is_empty() {
                return Err(format!("process {pid} runs on no GPU DCGM watches").into());
            }
            notes.push(format!("process {pid} runs on GPU {}", common::ranges(&on)));
            Some(on)
        }
    };
    let total = Duration::from_secs_f64(cli.duration);
    // Ctrl-C ends the sampling early; what was sampled is still judged.
    let interrupted = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&interrupted))?;
    let bar = progress_bar(total);
    let mut window = Window::default();
    window.simulated = simulated;
    let start = Instant::now();
    while start.elapsed() < total {
        if interrupted.load(Ordering::Relaxed) {
            notes.push(format!(
                "interrupted after {:.1} s: judged what was sampled",
                start.elapsed().as_secs_f64()
            ));
            break;
        }
        let tick = Instant::now();
        if let Err(e) = live.tick(&mut window, focus.as_deref()) {
            notes.push(format!(
                "sampling stopped after {:.1} s: {e}",
                start.elapsed().as_secs_f64()
            ));
            break;
        }
        bar.set_position(start.elapsed().as_millis().min(total.as_millis()) as u64);
        if let Some(rest) = delay.checked_sub(tick.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    bar.finish_and_clear();
    notes.extend(live.notes().iter().cloned());
    if window.is_empty() {
        return Err("no GPU sent a sample: nothing to judge".into());
    }
    Ok((window, notes))
}

/// A progress bar on stderr when it is a terminal; hidden otherwise (a pipe, a test).
fn progress_bar(total: Duration) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total.as_millis() as u64);
    let style = indicatif::ProgressStyle::with_template(
        "sampling {bar:40} {elapsed}/{duration} (Ctrl-C: stop and judge what was sampled)",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// The report for a terminal: a header, the findings worst first with their evidence, then
/// what could not be judged.
fn print_summary(report: &Report, notes: &[String]) {
    let (t0, t1) = report.span_ms.unwrap_or((0, 0));
    let simulated = if report.simulated {
        " (SIMULATED DATA)"
    } else {
        ""
    };
    common::outln!(
        "doctor: GPU {}, {} samples over {:.1} s{simulated}",
        common::ranges(&report.gpus),
        report.samples,
        (t1 - t0) as f64 / 1e3
    );
    for n in notes {
        common::outln!("note: {n}");
    }
    for s in &report.stopped {
        common::outln!(
            "note: GPU {} stopped reporting {:.1} s in: judged up to then",
            s.gpu,
            (s.last_ms - t0) as f64 / 1e3
        );
    }
    if report.findings.is_empty() {
        common::outln!("no findings: nothing stood out");
    }
    for f in &report.findings {
        let gpus = f
            .gpus
            .iter()
            .map(|g| format!("GPU {g}"))
            .collect::<Vec<_>>()
            .join(", ");
        common::outln!(
            "\n{:<8} {} on {gpus}, {:.1}-{:.1} s",
            f.severity.to_string().to_uppercase(),
            f.kind,
            (f.start_ms - t0) as f64 / 1e3,
            (f.end_ms - t0) as f64 / 1e3
        );
        common::outln!("  {}", f.explanation);
        let ev = f
            .evidence
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        common::outln!("  evidence: {ev}");
        common::outln!("  try: {}", f.advice);
    }
    print_processes(report);
    if !report.not_judged.is_empty() {
        common::outln!("\nnot judged:");
        for n in &report.not_judged {
            common::outln!("  {}: {}", n.kind, n.reason);
        }
    }
}

/// Who is on each GPU: each process with the memory it held (and its share of the GPU's), its
/// SM utilisation where DCGM has it, and how much of the run it was there.
fn print_processes(report: &Report) {
    for line in process_lines(report) {
        common::outln!("{line}");
    }
}

/// The lines of [`print_processes`]: a heading per GPU, then a line per process.
fn process_lines(report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    let mut gpu = None;
    for p in &report.processes {
        if gpu != Some(p.gpu) {
            gpu = Some(p.gpu);
            out.push(format!("\nprocesses on GPU {}:", p.gpu));
        }
        let mut line = format!("  {} {}", p.pid, p.name.as_deref().unwrap_or("?"));
        if let Some(m) = p.memory_mib {
            line.push_str(&format!(": {m} MiB"));
            if let Some(share) = p.memory_share {
                line.push_str(&format!(" ({:.1} % of the GPU's memory)", share * 100.0));
            }
        }
        match p.sm_util {
            Some(sm) => line.push_str(&format!(", SM {sm:.0} %")),
            None => line.push_str(", SM share unknown"),
        }
        line.push_str(&format!(
            ", listed {:.0} % of the time",
            p.listed_share * 100.0
        ));
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcgm_doctor::{Field, GpuProcess, Sample};

    #[test]
    fn the_process_view_gives_memory_its_share_and_the_sm_share_where_known() {
        let w = Window::from_samples((0..20).map(|i| {
            let mut s = Sample::new(i * 100, 0)
                .with(Field::GpuUtil, 90.0)
                .with(Field::FbTotal, 143_771.0);
            let mut ps = vec![GpuProcess {
                pid: 901,
                name: Some("python3".into()),
                memory_mib: Some(2658),
                sm_util: Some(12.4),
            }];
            if i >= 10 {
                ps.push(GpuProcess {
                    pid: 924,
                    name: None,
                    memory_mib: Some(880),
                    sm_util: None,
                });
            }
            s.processes = Some(ps);
            s
        }));
        let lines = process_lines(&dcgm_doctor::judge(&w));
        assert_eq!(
            lines,
            [
                "\nprocesses on GPU 0:",
                "  901 python3: 2658 MiB (1.8 % of the GPU's memory), SM 12 %, listed 100 % of \
                 the time",
                "  924 ?: 880 MiB (0.6 % of the GPU's memory), SM share unknown, listed 50 % of \
                 the time",
            ]
        );
        // A replay has no process lists: no section at all.
        assert!(process_lines(&dcgm_doctor::judge(&Window::default())).is_empty());
    }
}
