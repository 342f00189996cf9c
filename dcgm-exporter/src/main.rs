//! `dcgm-exporter`: a Prometheus exporter of DCGM metrics, compatible with NVIDIA's dcgm-exporter
//! (same counters-file format, metric and label names, and the flags they share).
//!
//! ```text
//! cargo run -p dcgm-exporter -- --simulate -a 127.0.0.1:9400 -c 1000
//! curl -s 127.0.0.1:9400/metrics
//! cargo run -p dcgm-exporter -- --simulate --once | promtool check metrics
//! cargo run -p dcgm-exporter -- -f my-counters.csv -d g:0-3 --web-config-file web.yml
//! cargo run -p dcgm-exporter -- --simulate --once -f dcgm-exporter/etc/switch-cpu-counters.csv -s g -p i:0-3
//! ```
//!
//! The listener opens at once. A background thread starts DCGM (retrying while it is not
//! reachable: `/health` answers 503 meanwhile, and the log says so once per change), then
//! collects every `--collect-interval` and publishes the exposition that `/metrics` serves.
//! SIGHUP reloads the counters file without closing the listener. Without `-r` it starts
//! DCGM's embedded engine; `--simulate` uses dcgm-sim, and the output then says so
//! (`dcgm_exporter_simulated 1`, and a note in every help text).
//!
//! Exit codes: 0 success (`--once`, `--help`), 1 DCGM or server failure, 2 bad arguments or
//! configuration (counters file, web configuration, device list).

mod serve;

use std::process::ExitCode;
use std::sync::Arc;

use dcgm_exporter::cli::Cli;
use dcgm_exporter::http::server;
use dcgm_exporter::logging;

use serve::settings::{self, Checked};
use serve::{
    collect_loop, collectors, fail, library, listener, once, otlp_push, published, workloads,
};

fn main() -> ExitCode {
    let cli = match dcgm_exporter::config_file::parse(std::env::args_os().collect()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    logging::init(cli.log_format, cli.debug);
    run(cli).unwrap_or_else(|failed| failed)
}

/// Start-up, step by step; `Err` is a step that failed (logged) and its exit status. Serving
/// does not return but with an error.
fn run(cli: Cli) -> Result<ExitCode, ExitCode> {
    let Checked {
        counters,
        web,
        engines,
        otlp,
        mut settings,
    } = settings::check(cli)?;
    if settings.cli.once {
        return Ok(once::once(&settings, &engines, counters, otlp.as_ref()));
    }
    if let Some(config) = otlp {
        settings.otlp = Some(otlp_push::start(config, &engines, &settings)?);
    }
    library::check(&settings.cli)?;
    let listener = listener::listen(&settings.cli)?;
    let hpc_board = workloads::hpc_board(&settings.cli);
    let published = published::starting(&settings, hpc_board.clone());
    let reload = collect_loop::reload_flag(None);
    listener::announce(listener.as_ref(), &web, &settings.cli);
    let limits = settings.cli.web_limits();
    let (pods, refresher) = workloads::pods(&settings.cli);
    settings.dra_stats = workloads::dra_stats(&pods);
    if let Some(r) = refresher {
        workloads::spawn_refresher(r, settings.interval, &published)?;
    }
    collectors::spawn(
        settings, &engines, counters, pods, hpc_board, &published, reload,
    )?;
    published::spawn_watchdog(&published)?;
    let Some(listener) = listener else {
        // OTLP only: the collector and pusher threads do the work.
        loop {
            std::thread::park();
        }
    };
    match server::serve_with(listener, Arc::new(web), published, limits) {
        Ok(()) => Err(fail(1, "the server stopped")),
        Err(e) => Err(fail(1, format_args!("the server failed: {e}"))),
    }
}
