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

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use common::top::{self, Outcome, Source, State};
use ratatui::crossterm::event::{self, Event};

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
    let (mut source, rows) = Source::open(&cli.conn)?;
    let mut s = State::new(rows, Duration::from_millis(cli.delay_ms), source.label());
    source.watch(s.interval())?;
    let caught = Arc::new(AtomicI32::new(0));
    top::catch_signals(caught.clone()).map_err(|e| format!("cannot catch signals: {e}"))?;
    // Dropped on every way out of `run`, before `main` says why it ended.
    let _guard = top::TerminalGuard;
    let mut terminal =
        ratatui::try_init().map_err(|e| format!("cannot set up the terminal: {e}"))?;
    let mut next = Instant::now();
    let r = (|| -> std::io::Result<()> {
        loop {
            if caught.load(Ordering::SeqCst) != 0 {
                return Ok(());
            }
            if !s.paused() && Instant::now() >= next {
                source.refresh(&mut s);
                next = Instant::now() + s.interval();
            }
            terminal.draw(|f| top::draw(f, &s, source.fields()))?;
            let wait = next
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(200));
            if !event::poll(wait)? {
                continue;
            }
            let Event::Key(k) = event::read()? else {
                continue; // a resize redraws on the next pass
            };
            match top::on_key(&mut s, k) {
                Outcome::Stay => {}
                Outcome::Quit => return Ok(()),
                Outcome::Interval => {
                    source.rewatch(&mut s);
                    next = Instant::now();
                }
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
