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
//! It collects in a background thread every `--collect-interval` and serves the last
//! exposition on `/metrics` (`/health` says whether the last collection worked). Without
//! `-r` it starts DCGM's embedded engine; `--simulate` uses dcgm-sim, and the output then says
//! so (`dcgm_exporter_simulated 1`, and a note in every help text).
//!
//! Exit codes: 0 success (`--once`, `--help`), 1 DCGM or server failure, 2 bad arguments or
//! configuration (counters file, web configuration, device list).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use dcgm_reader::exposition::EntitySelection;
use dcgm_reader::{
    Collector, CollectorConfig, Connection, DeviceSelection, LabelOptions, exposition,
    parse_counters,
};

use dcgm_exporter::server::{self, Published, WebConfig};

/// The counters file used without `-f`.
const DEFAULT_COUNTERS: &str = include_str!("../etc/default-counters.csv");

/// Environment variables dcgm-exporter reads for the same flags.
const ENV_FLAGS: [(&str, &str); 11] = [
    ("DCGM_EXPORTER_COLLECTORS", "--collectors"),
    ("DCGM_EXPORTER_LISTEN", "--address"),
    ("DCGM_EXPORTER_INTERVAL", "--collect-interval"),
    ("DCGM_REMOTE_HOSTENGINE_INFO", "--remote-hostengine-info"),
    ("DCGM_EXPORTER_DEVICES_STR", "--devices"),
    ("DCGM_EXPORTER_OTHER_DEVICES_STR", "--switch-devices"),
    ("DCGM_EXPORTER_CPU_DEVICES_STR", "--cpu-devices"),
    ("DCGM_EXPORTER_WEB_CONFIG_FILE", "--web-config-file"),
    (
        "DCGM_EXPORTER_XID_COUNT_WINDOW_SIZE",
        "--xid-count-window-size",
    ),
    (
        "DCGM_EXPORTER_CLOCK_EVENTS_COUNT_WINDOW_SIZE",
        "--clock-events-count-window-size",
    ),
    ("DCGM_EXPORTER_NO_HOSTNAME", "--no-hostname"),
];

#[derive(Debug, Parser)]
#[command(
    name = "dcgm-exporter",
    version,
    about = "Prometheus exporter of NVIDIA DCGM metrics, compatible with dcgm-exporter",
    after_help = "Flags shared with dcgm-exporter also read its environment variables \
                  (DCGM_EXPORTER_LISTEN, DCGM_EXPORTER_INTERVAL, DCGM_EXPORTER_COLLECTORS, \
                  DCGM_REMOTE_HOSTENGINE_INFO, DCGM_EXPORTER_DEVICES_STR, ...).\n\n\
                  Exit status: 0 success, 1 DCGM or I/O error, 2 bad configuration."
)]
struct Cli {
    /// Counters file (dcgm-exporter's CSV format); default: the built-in default counters.
    #[arg(short = 'f', long = "collectors", value_name = "FILE")]
    collectors: Option<PathBuf>,
    /// Listen address: `:PORT` (every interface), `HOST:PORT` or `[IPV6]:PORT`.
    #[arg(short = 'a', long = "address", default_value = ":9400")]
    address: String,
    /// Collection interval in milliseconds.
    #[arg(
        short = 'c',
        long = "collect-interval",
        default_value_t = 30000,
        value_name = "MS"
    )]
    collect_interval_ms: u64,
    /// Connect to a host engine at HOST:PORT (default: start DCGM's embedded engine).
    #[arg(short = 'r', long = "remote-hostengine-info", value_name = "HOST:PORT")]
    remote: Option<String>,
    /// Devices to export: `f` (GPUs, or the GPU instances of GPUs in MIG mode), `g`, `g:0,1`,
    /// `g:0-3` (GPUs), `i`, `i:0,2-4` (MIG GPU instances).
    #[arg(short = 'd', long = "devices", default_value = "f", value_parser = parse_devices)]
    devices: DeviceSelection,
    /// NvSwitches and their NVLinks, for the counters file's NvSwitch and NVLink rows: `f`
    /// (every switch and every link that is up), `g`, `g:0,1` (switches), `i`, `i:0-7` (links
    /// with these indices on every switch). GPU links follow `-d`.
    #[arg(short = 's', long = "switch-devices", default_value = "f", value_parser = parse_entities)]
    switch_devices: EntitySelection,
    /// CPUs and their cores, for the counters file's CPU and CPU-core rows: `f` (every CPU and
    /// core), `g`, `g:0,1` (CPUs), `i`, `i:0-7` (cores).
    #[arg(short = 'p', long = "cpu-devices", default_value = "f", value_parser = parse_entities)]
    cpu_devices: EntitySelection,
    /// Leave the host-name label out.
    #[arg(short = 'n', long = "no-hostname")]
    no_hostname: bool,
    /// Name of the host-name label (dcgm-exporter 4.x: Hostname).
    #[arg(
        long = "hostname-label",
        default_value = "Hostname",
        value_name = "NAME"
    )]
    hostname_label: String,
    /// Replace the blanks of GPU model names with dashes.
    #[arg(long = "replace-blanks-in-model-name")]
    replace_blanks: bool,
    /// Window of DCGM_EXP_XID_ERRORS_COUNT, in milliseconds.
    #[arg(
        short = 'x',
        long = "xid-count-window-size",
        default_value_t = 300000,
        value_name = "MS"
    )]
    xid_window_ms: u64,
    /// Window of DCGM_EXP_CLOCK_EVENTS_COUNT, in milliseconds.
    #[arg(
        long = "clock-events-count-window-size",
        default_value_t = 300000,
        value_name = "MS"
    )]
    clock_window_ms: u64,
    /// Web configuration (Prometheus exporter-toolkit format): TLS, basic auth (bcrypt).
    #[arg(long = "web-config-file", value_name = "FILE")]
    web_config_file: Option<PathBuf>,
    /// Read from dcgm-sim, the DCGM simulator, instead of GPUs (the output says so).
    #[arg(long)]
    simulate: bool,
    /// Print one exposition to stdout and exit.
    #[arg(long)]
    once: bool,
    /// Debug logging.
    #[arg(long)]
    debug: bool,
}

fn parse_devices(s: &str) -> Result<DeviceSelection, String> {
    s.parse()
}

fn parse_entities(s: &str) -> Result<EntitySelection, String> {
    s.parse()
}

struct StderrLog(log::LevelFilter);

impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= self.0
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!(
                "exporter: {}: {}",
                r.level().as_str().to_ascii_lowercase(),
                r.args()
            );
        }
    }
    fn flush(&self) {}
}

/// The command line, with dcgm-exporter's environment variables for flags not given.
fn args() -> Vec<String> {
    let mut args: Vec<String> = std::env::args().collect();
    for (env, flag) in ENV_FLAGS {
        let Ok(v) = std::env::var(env) else {
            continue;
        };
        let short = Cli::short_of(flag);
        let given = args.iter().skip(1).any(|a| {
            a == flag
                || a.starts_with(&format!("{flag}="))
                || short.is_some_and(|s| a.starts_with(&format!("-{s}")))
        });
        if given {
            continue;
        }
        if flag == "--no-hostname" {
            if matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes") {
                args.push(flag.into());
            }
        } else {
            args.push(format!("{flag}={v}"));
        }
    }
    args
}

impl Cli {
    fn short_of(flag: &str) -> Option<char> {
        use clap::CommandFactory;
        let cmd = Self::command();
        cmd.get_arguments()
            .find(|a| a.get_long() == flag.strip_prefix("--"))
            .and_then(|a| a.get_short())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse_from(args());
    let level = if cli.debug {
        log::LevelFilter::Debug
    } else {
        log::LevelFilter::Info
    };
    let logger: &'static StderrLog = Box::leak(Box::new(StderrLog(level)));
    let _ = log::set_logger(logger);
    log::set_max_level(level);
    run(cli)
}

fn fail(code: u8, msg: impl std::fmt::Display) -> ExitCode {
    log::error!("{msg}");
    ExitCode::from(code)
}

fn run(cli: Cli) -> ExitCode {
    let (text, source) = match &cli.collectors {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => (t, p.display().to_string()),
            Err(e) => return fail(2, format_args!("cannot read {}: {e}", p.display())),
        },
        None => (
            DEFAULT_COUNTERS.to_string(),
            "built-in default counters".into(),
        ),
    };
    let counters = match parse_counters(&text) {
        Ok(c) => c,
        Err(e) => return fail(2, format_args!("{source}: {e}")),
    };
    if cli.collect_interval_ms == 0 {
        return fail(2, "--collect-interval must be above zero");
    }
    let web = match &cli.web_config_file {
        None => WebConfig::none(),
        Some(p) => match WebConfig::load(p) {
            Ok(w) => w,
            Err(e) => return fail(2, format_args!("web config: {e}")),
        },
    };
    let labels = LabelOptions {
        hostname: (!cli.no_hostname).then(|| exposition::default_hostname(cli.remote.as_deref())),
        hostname_label: cli.hostname_label.clone(),
        replace_blanks_in_model_name: cli.replace_blanks,
        ..LabelOptions::default()
    };
    if !dcgm_reader::counters::is_label_name(&labels.hostname_label) {
        return fail(
            2,
            format_args!(
                "--hostname-label {:?} is not a label name",
                labels.hostname_label
            ),
        );
    }
    let interval = Duration::from_millis(cli.collect_interval_ms);
    let cfg = CollectorConfig {
        devices: cli.devices.clone(),
        switches: cli.switch_devices.clone(),
        cpus: cli.cpu_devices.clone(),
        connection: match &cli.remote {
            Some(r) => Connection::Remote(r.clone()),
            None => Connection::Embedded,
        },
        simulator: cli.simulate,
        collect_interval: interval,
        xid_window: Duration::from_millis(cli.xid_window_ms),
        clock_events_window: Duration::from_millis(cli.clock_window_ms),
        labels,
        ..CollectorConfig::new(counters)
    };
    let mut collector = match Collector::new(cfg) {
        Ok(c) => c,
        Err(e @ dcgm::Error::InvalidArgument(_)) => return fail(2, e),
        Err(e) => return fail(1, format_args!("cannot start collecting: {e}")),
    };
    if collector.is_simulated() {
        log::warn!(
            "SIMULATED DATA: reading from dcgm-sim, not from GPUs (dcgm_exporter_simulated 1)"
        );
    }
    for c in collector.ignored() {
        log::warn!(
            "{source} line {}: {} is not exported (not supported here)",
            c.line,
            c.metric_name
        );
    }
    log::info!(
        "exporting {} entities from {source}: {}",
        collector.identities().len(),
        collector
            .identities()
            .iter()
            .map(|i| i.entity.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut counts = std::collections::BTreeMap::new();
    for o in collector.other_entities() {
        let kind = match o.group() {
            dcgm::EntityGroup::Switch => "NvSwitches",
            dcgm::EntityGroup::Link => "NVLinks",
            dcgm::EntityGroup::Cpu => "CPUs",
            _ => "CPU cores",
        };
        *counts.entry(kind).or_insert(0usize) += 1;
    }
    if !counts.is_empty() {
        log::info!(
            "and {}",
            counts
                .iter()
                .map(|(g, n)| format!("{n} {g}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }

    if cli.once {
        let mut out = String::new();
        if let Err(e) = collector.collect(&mut out) {
            return fail(1, format_args!("collection failed: {e}"));
        }
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = stdout
            .write_all(out.as_bytes())
            .and_then(|_| stdout.flush())
        {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS; // the reader (`head`) has what it wanted
            }
            return fail(1, format_args!("cannot write the exposition: {e}"));
        }
        return ExitCode::SUCCESS;
    }

    let listener = match server::bind(&cli.address) {
        Ok(l) => l,
        Err(e) => return fail(1, format_args!("cannot listen on {}: {e}", cli.address)),
    };
    let local = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| cli.address.clone());
    let published = Arc::new(Mutex::new(Published::default()));
    let p = published.clone();
    let spawned = std::thread::Builder::new()
        .name("collector".into())
        .spawn(move || collect_loop(collector, interval, &p));
    if let Err(e) = spawned {
        return fail(1, format_args!("cannot start the collector thread: {e}"));
    }
    log::info!(
        "listening on {}://{local}/metrics (collect interval {} ms)",
        if web.is_tls() { "https" } else { "http" },
        cli.collect_interval_ms
    );
    match server::serve(listener, Arc::new(web), published) {
        Ok(()) => fail(1, "the server stopped"),
        Err(e) => fail(1, format_args!("the server failed: {e}")),
    }
}

/// Collects every `interval` and publishes the exposition. Two buffers are swapped, so a
/// steady state reuses the same memory.
fn collect_loop(mut collector: Collector, interval: Duration, published: &Mutex<Published>) {
    let mut buf = String::new();
    let mut next = Instant::now();
    loop {
        let result = collector.collect(&mut buf);
        {
            let mut p = published.lock().unwrap_or_else(|p| p.into_inner());
            match result {
                Ok(()) => {
                    std::mem::swap(&mut p.text, &mut buf);
                    p.version = p.version.wrapping_add(1);
                    if p.error.take().is_some() {
                        log::info!("collection works again");
                    }
                    p.ready = true;
                }
                Err(e) => {
                    if p.error.is_none() {
                        log::warn!("collection failed: {e}");
                    }
                    p.error = Some(e.to_string());
                }
            }
        }
        next += interval;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
}
