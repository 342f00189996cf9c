//! `dcgm-burn`: gpu-burn's stress test with DCGM watching, and a verdict per GPU.
//!
//! ```text
//! dcgm-burn                                  # every GPU, 60 s, bf16, 8192 x 8192
//! dcgm-burn -i 0,1 --duration 30m --dtype fp32
//! dcgm-burn --json burn.json --html burn.html
//! dcgm-burn --simulate --duration 20         # no GPU: the load modelled on dcgm-sim
//! ```

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use dcgm_burn::{BurnError, Dtype, Live, Options};
use dcgm_tools as common;

#[derive(Debug, Parser)]
#[command(
    name = "dcgm-burn",
    about = "Stress every GPU with dense matrix products while DCGM watches, and judge each",
    after_help = "Exit status: 0 every GPU healthy, 2 warnings, 3 failures (the worst GPU), \
                  1 error (the reason on stderr), 5 no NVIDIA driver or no GPU (one line on \
                  stderr; --simulate models the load on dcgm-sim instead)."
)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// GPU ids (DCGM's), comma-separated; default: every GPU CUDA sees (CUDA_VISIBLE_DEVICES
    /// limits them).
    #[arg(short = 'i', long = "gpus", value_delimiter = ',', value_name = "GPUS")]
    gpus: Vec<u32>,
    /// How long to burn: seconds, or with a unit (60, 60s, 2m, 1h).
    #[arg(long, default_value = "60", value_parser = dcgm_burn::duration::parse)]
    duration: Duration,
    /// Precision of the products (bf16, fp16, tf32 and fp64 on the tensor cores).
    #[arg(long, value_enum, default_value_t = Dtype::Bf16)]
    dtype: Dtype,
    /// Side of the square matrices.
    #[arg(long, default_value_t = dcgm_burn::run::DEFAULT_SIZE, value_name = "N")]
    size: usize,
    /// DCGM sampling interval, ms (one live line per GPU each time).
    #[arg(
        short = 'd',
        long = "delay-ms",
        default_value_t = 500,
        value_name = "MS"
    )]
    delay_ms: u64,
    /// Load cuBLAS from this file (or the directory holding libcublas.so.13 or .12) instead of
    /// looking in the loader's path, CUDA's directories and PyTorch's wheels.
    #[arg(long, value_name = "PATH")]
    cublas: Option<PathBuf>,
    /// Write the report as one JSON object to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Write the report as one self-contained HTML page (charts per GPU, TFLOPS among them).
    #[arg(long, value_name = "PATH")]
    html: Option<PathBuf>,
    /// Debug: overwrite this GPU's result buffer before every check, so that its compute
    /// errors rise (tests the results check; needs CUDA).
    #[arg(long, value_name = "GPU", hide = true)]
    corrupt_result: Option<u32>,
}

fn main() -> ExitCode {
    // Before any thread: the simulator reads its node from the environment.
    if std::env::args_os().any(|a| a == "--simulate") {
        dcgm_burn::use_burn_preset();
    }
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    let opts = Options {
        gpus: cli.gpus.clone(),
        duration: cli.duration,
        dtype: cli.dtype,
        size: cli.size,
        interval: Duration::from_millis(cli.delay_ms),
        simulate: cli.conn.simulate,
        cublas: cli.cublas.clone(),
        corrupt_result: cli.corrupt_result,
    };
    let stop = dcgm_burn::run::stop_flag();
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&stop))?;
    let display = Display::new(cli.duration);
    let outcome = dcgm_burn::run(
        &opts,
        |b| {
            let reader = cli.conn.reader_from(b).build()?;
            cli.conn.connect_reader(reader)
        },
        |elapsed, gpus| display.show(elapsed, gpus),
        &stop,
    );
    display.finish();
    let outcome = match outcome {
        Ok(o) => o,
        Err(BurnError::NoGpu(e)) => {
            eprintln!("dcgm-burn: {e}");
            return Ok(ExitCode::from(dcgm_burn::EXIT_NO_GPU));
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(p) = &cli.json {
        std::fs::write(p, dcgm_burn::report::json(&outcome).to_string())
            .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    if let Some(p) = &cli.html {
        std::fs::write(p, dcgm_burn::report::html(&outcome))
            .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    common::outln!("{}", dcgm_burn::report::text(&outcome).trim_end());
    Ok(ExitCode::from(outcome.verdict.status.exit_code()))
}

/// The live view: on a terminal, a progress bar with a line per GPU above it, redrawn in
/// place and cleared at the end (the summary follows); otherwise a plain line per GPU per
/// sample on stdout.
struct Display {
    bars: Option<(
        indicatif::MultiProgress,
        indicatif::ProgressBar,
        Vec<indicatif::ProgressBar>,
    )>,
    total: Duration,
    lines: std::cell::RefCell<Vec<indicatif::ProgressBar>>,
}

impl Display {
    fn new(total: Duration) -> Self {
        let bars = std::io::stdout().is_terminal().then(|| {
            // On stdout, where the summary follows once the live view is cleared.
            let multi =
                indicatif::MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::stdout());
            let bar = multi.add(indicatif::ProgressBar::new(total.as_millis() as u64));
            let style = indicatif::ProgressStyle::with_template(
                "burning {bar:40} {elapsed}/{duration} (Ctrl-C: stop and judge)",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
            bar.set_style(style);
            (multi, bar, Vec::new())
        });
        Display {
            bars,
            total,
            lines: std::cell::RefCell::new(Vec::new()),
        }
    }

    fn show(&self, elapsed: Duration, gpus: &[Live]) {
        let line = |g: &Live| {
            let f = |v: Option<f64>, d: usize| v.map_or("-".into(), |v| format!("{v:.d$}"));
            format!(
                "GPU {:>2} {:>8} TFLOPS {:>4} °C {:>5} W {:>5} MHz errors {} ECC {}{}",
                g.gpu,
                f(g.tflops, 1),
                f(g.temp_c, 0),
                f(g.power_w, 0),
                f(g.sm_clock_mhz, 0),
                g.mismatches,
                g.ecc,
                if g.simulated { " (simulated)" } else { "" }
            )
        };
        match &self.bars {
            Some((multi, bar, _)) => {
                let mut lines = self.lines.borrow_mut();
                while lines.len() < gpus.len() {
                    let l = multi.insert_before(bar, indicatif::ProgressBar::new_spinner());
                    l.set_style(
                        indicatif::ProgressStyle::with_template("{msg}")
                            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
                    );
                    lines.push(l);
                }
                for (l, g) in lines.iter().zip(gpus) {
                    l.set_message(line(g));
                }
                bar.set_position(elapsed.min(self.total).as_millis() as u64);
            }
            None => {
                for g in gpus {
                    common::outln!("{:>7.1} s {}", elapsed.as_secs_f64(), line(g));
                }
            }
        }
    }

    fn finish(&self) {
        if let Some((_, bar, _)) = &self.bars {
            // The summary that follows has every number: the live view goes.
            for l in self.lines.borrow().iter() {
                l.finish_and_clear();
            }
            bar.finish_and_clear();
        }
    }
}
