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

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dcgm_exporter::attribution::kubernetes::PodMapper;
use dcgm_exporter::attribution::pods::{PodCache, PodRefresher};
use dcgm_exporter::attribution::{Attribution, AttributionConfig};
use dcgm_exporter::cli::Cli;
use dcgm_exporter::health::{self, Health, activity};
use dcgm_exporter::http::server::{self, Published, WebConfig};
use dcgm_exporter::merge::merge_expositions;
use dcgm_exporter::{counters_file, logging};
use dcgm_prometheus::{Collector, CollectorConfig, Counter};
use dcgm_reader::Connection;

fn main() -> ExitCode {
    let cli = match dcgm_exporter::config_file::parse(std::env::args_os().collect()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    logging::init(cli.log_format, cli.debug);
    run(cli)
}

fn fail(code: u8, msg: impl std::fmt::Display) -> ExitCode {
    log::error!("{msg}");
    ExitCode::from(code)
}

/// Everything but the counters, fixed for the process's life.
#[derive(Clone)]
struct Settings {
    cli: Arc<Cli>,
    interval: Duration,
    /// The host engine this collector reads (`None`: the embedded engine).
    engine: Option<String>,
    /// The OTLP pusher (with `--otlp-endpoint`), and this collector's slot in it.
    otlp: Option<dcgm_exporter::otlp::push::OtlpExporter>,
    otlp_slot: usize,
    /// With `--kubernetes-enable-dra`: how the claimed devices were mapped, exported by the
    /// first host engine's collector.
    dra_stats: Option<Arc<dcgm_exporter::attribution::dra_types::DraStats>>,
}

impl Settings {
    fn config(&self, counters: Vec<Counter>) -> CollectorConfig {
        let cli = &self.cli;
        CollectorConfig {
            devices: cli.devices.clone(),
            switches: cli.switch_devices.clone(),
            cpus: cli.cpu_devices.clone(),
            connection: match &self.engine {
                Some(r) => Connection::Remote(r.clone()),
                None => Connection::Embedded,
            },
            simulator: cli.simulate,
            collect_interval: self.interval,
            xid_window: Duration::from_millis(cli.xid_window_ms),
            clock_events_window: Duration::from_millis(cli.clock_window_ms),
            labels: cli.label_options(self.engine.as_deref()),
            engine_log: cli
                .enable_dcgm_log
                .then(|| ("-".to_string(), cli.dcgm_log_level.into())),
            watch_keep_age: cli.watch_max_keep_age,
            watch_keep_samples: cli.watch_max_keep_samples,
            ..CollectorConfig::new(counters)
        }
    }
}

fn run(cli: Cli) -> ExitCode {
    let counters = match counters_file::load(cli.collectors.as_deref()) {
        Ok(c) => c,
        Err(e) => return fail(2, e),
    };
    let web = match &cli.web_config_file {
        None => WebConfig::none(),
        Some(p) => match WebConfig::load(p) {
            Ok(w) => w,
            Err(e) => return fail(2, format_args!("web config: {e}")),
        },
    };
    if !dcgm_prometheus::counters::is_label_name(&cli.hostname_label) {
        return fail(
            2,
            format_args!(
                "--hostname-label {:?} is not a label name",
                cli.hostname_label
            ),
        );
    }
    if let Err(e) = dcgm_exporter::attribution::pod_labels::Allowlist::new(
        &cli.kubernetes_pod_label_allowlist_regex,
    ) {
        return fail(2, e);
    }
    let engines = cli.hostengines();
    let otlp_config = match cli.otlp.resolve(&|k| std::env::var(k).ok()) {
        Ok(c) => c,
        Err(e) => return fail(2, e),
    };
    let mut settings = Settings {
        interval: Duration::from_millis(cli.collect_interval_ms),
        engine: engines.first().cloned(),
        cli: Arc::new(cli),
        otlp: None,
        otlp_slot: 0,
        dra_stats: None,
    };

    if settings.cli.once {
        return once(&settings, &engines, counters, otlp_config.as_ref());
    }
    if let Some(c) = otlp_config {
        let (url, every) = (c.url.clone(), c.interval);
        let host = dcgm_prometheus::default_hostname(settings.engine.as_deref());
        match dcgm_exporter::otlp::push::OtlpExporter::start(c, engines.len().max(1), host) {
            Ok(o) => settings.otlp = Some(o),
            Err(e) => return fail(2, e),
        }
        log::info!(
            "pushing OTLP metrics to {url} {}",
            every.map_or("after each collection".to_string(), |i| format!(
                "every {i:?}"
            ))
        );
    }

    // Without --disable-startup-validate, a library that cannot load is a start-up error (it
    // will not appear by waiting); an unreachable host engine is waited for.
    if !settings.cli.disable_startup_validate
        && !settings.cli.simulate
        && let Err(e) = dcgm::Handle::builder().check_library()
    {
        return fail(
            1,
            format_args!("{e} (--disable-startup-validate starts anyway and waits)"),
        );
    }

    let bound = if settings.cli.otlp.no_metrics_endpoint {
        None
    } else if settings.cli.web_systemd_socket {
        match systemd_listener() {
            Ok(l) => Some(Ok(l)),
            Err(e) => return fail(2, format_args!("--web-systemd-socket: {e}")),
        }
    } else {
        Some(server::bind(&settings.cli.address))
    };
    let listener = match bound {
        None => None,
        Some(Ok(l)) => Some(l),
        Some(Err(e)) => {
            return fail(
                1,
                format_args!("cannot listen on {}: {e}", settings.cli.address),
            );
        }
    };
    let local = listener
        .as_ref()
        .and_then(|l| l.local_addr().ok())
        .map(|a| a.to_string())
        .unwrap_or_else(|| settings.cli.address.clone());
    let mut health = Health::new(settings.interval, settings.cli.health_max_age_intervals);
    health.engine = settings.engine.clone();
    let starting = "DCGM is starting";
    health.prime(Some(starting), false, Instant::now());
    let published = Arc::new(Mutex::new(Published {
        error: Some(starting.into()),
        health,
        ..Published::default()
    }));
    let reload = Arc::new(AtomicBool::new(false));
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGHUP, reload.clone()) {
        log::warn!("SIGHUP will not reload the counters file: {e}");
    }
    if listener.is_none() {
        log::info!("--no-metrics-endpoint: no HTTP listener, OTLP only");
    }
    log::info!(
        "{} {}://{local}/metrics (collect interval {} ms)",
        if listener.is_some() {
            "listening on"
        } else {
            "not serving"
        },
        if web.is_tls() { "https" } else { "http" },
        settings.cli.collect_interval_ms
    );
    let limits = settings.cli.web_limits();
    let hpc_board: Option<dcgm_exporter::health::SourceBoard> = settings
        .cli
        .hpc_job_mapping_dir
        .as_ref()
        .map(|_| Arc::default());
    published
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .health
        .hpc = hpc_board.clone();
    let (pods, refresher) = pods(&settings.cli);
    settings.dra_stats = dra_stats(&pods);
    if let Some(r) = refresher {
        let p = published.clone();
        let spawned = r.spawn(settings.interval, move |k| {
            p.lock().unwrap_or_else(|p| p.into_inner()).health.kubelet = Some(k);
        });
        if let Err(e) = spawned {
            return fail(1, format_args!("cannot start the kubelet thread: {e}"));
        }
    }
    if engines.len() > 1 {
        let shared = Arc::new(Engines {
            published: published.clone(),
            slots: Mutex::new(vec![Slot::default(); engines.len()]),
            names: engines.clone(),
            max_age: settings.interval * settings.cli.health_max_age_intervals,
        });
        for (me, engine) in engines.iter().enumerate() {
            let settings = Settings {
                engine: Some(engine.clone()),
                otlp_slot: me,
                ..settings.clone()
            };
            let attribution =
                attribution(&settings.cli, pods.clone(), Some(engine), hpc_board.clone());
            let flag = Arc::new(AtomicBool::new(false));
            if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGHUP, flag.clone()) {
                log::warn!("SIGHUP will not reload the counters file for {engine}: {e}");
            }
            let (counters, shared) = (counters.clone(), shared.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("collector-{me}"))
                .spawn(move || {
                    let out = Out::Many {
                        me,
                        engines: &shared,
                    };
                    collect_loop(settings, counters, attribution, &out, &flag)
                });
            if let Err(e) = spawned {
                return fail(1, format_args!("cannot start the collector thread: {e}"));
            }
        }
    } else {
        let attribution = attribution(&settings.cli, pods, settings.engine.as_deref(), hpc_board);
        let p = published.clone();
        let spawned = std::thread::Builder::new()
            .name("collector".into())
            .spawn(move || collect_loop(settings, counters, attribution, &Out::One(&p), &reload));
        if let Err(e) = spawned {
            return fail(1, format_args!("cannot start the collector thread: {e}"));
        }
    }
    let p = published.clone();
    let spawned = health::spawn_watchdog(move |now| {
        let mut guard = p.lock().unwrap_or_else(|p| p.into_inner());
        let p = &mut *guard;
        p.health.note(p.error.as_deref(), p.ready, now);
    });
    if let Err(e) = spawned {
        return fail(
            1,
            format_args!("cannot start the health watchdog thread: {e}"),
        );
    }
    let Some(listener) = listener else {
        // OTLP only: the collector and pusher threads do the work.
        loop {
            std::thread::park();
        }
    };
    match server::serve_with(listener, Arc::new(web), published, limits) {
        Ok(()) => fail(1, "the server stopped"),
        Err(e) => fail(1, format_args!("the server failed: {e}")),
    }
}

/// The first socket systemd passes (socket activation: descriptor 3, `LISTEN_FDS` at least 1,
/// `LISTEN_PID` this process), as a TCP listener.
fn systemd_listener() -> Result<std::net::TcpListener, String> {
    use std::os::unix::fs::FileTypeExt as _;
    use std::os::unix::io::FromRawFd as _;
    const FIRST: i32 = 3; // SD_LISTEN_FDS_START
    let var = |k: &str| std::env::var(k).ok();
    let pid = var("LISTEN_PID").ok_or(
        "LISTEN_PID is not set: no socket was passed (run the service from a .socket unit)",
    )?;
    if pid.trim().parse::<u32>().ok() != Some(std::process::id()) {
        return Err(format!(
            "LISTEN_PID is {pid}, not this process ({}): the sockets are another process's",
            std::process::id()
        ));
    }
    let n: u32 = var("LISTEN_FDS")
        .and_then(|v| v.trim().parse().ok())
        .ok_or("LISTEN_FDS is not set or not a number")?;
    if n == 0 {
        return Err("LISTEN_FDS is 0: no socket was passed".into());
    }
    if n > 1 {
        log::warn!("--web-systemd-socket: {n} sockets passed; listening on the first");
    }
    let is_socket = std::fs::metadata(format!("/proc/self/fd/{FIRST}"))
        .map(|m| m.file_type().is_socket())
        .map_err(|e| format!("descriptor {FIRST}: {e}"))?;
    if !is_socket {
        return Err(format!("descriptor {FIRST} is not a socket"));
    }
    // SAFETY: descriptor 3 is open (its /proc entry was just read) and is a socket that
    // systemd passed to this very process (LISTEN_PID), which owns it from here on; nothing
    // else in the program uses descriptor 3.
    let listener = unsafe { std::net::TcpListener::from_raw_fd(FIRST) };
    listener
        .local_addr()
        .map_err(|e| format!("descriptor {FIRST} is not a TCP socket: {e}"))?;
    Ok(listener)
}

/// `--once`: collects once from each engine, prints the exposition and exits. With several
/// engines, one that fails is logged and left out; all failing is exit status 1. With an OTLP
/// endpoint the collection is pushed too, waited for within `--otlp-timeout`; a push that
/// fails is exit status 1 (after the exposition is printed).
fn once(
    settings: &Settings,
    engines: &[String],
    counters: Vec<Counter>,
    otlp: Option<&dcgm_exporter::otlp::config::OtlpConfig>,
) -> ExitCode {
    let (pods, refresher) = pods(&settings.cli);
    if let Some(mut r) = refresher {
        r.refresh();
    }
    let many = engines.len() > 1;
    let mut texts = Vec::new();
    let mut structured = Vec::new();
    for engine in engines_or_embedded(engines) {
        let settings = Settings {
            engine,
            ..settings.clone()
        };
        let name = settings.engine.clone().unwrap_or_default();
        let mut collector = match start(&settings, counters.clone()) {
            Ok(c) => c,
            Err(StartError::Config(e)) => return fail(2, e),
            Err(StartError::Dcgm(e)) if many => {
                log::error!("hostengine {name}: cannot start collecting: {e}");
                continue;
            }
            Err(StartError::Dcgm(e)) => {
                return fail(1, format_args!("cannot start collecting: {e}"));
            }
        };
        attribution(
            &settings.cli,
            pods.clone(),
            settings.engine.as_deref(),
            None,
        )
        .apply(&mut collector);
        let mut out = String::new();
        let mut exposition = dcgm_prometheus::Exposition::default();
        let result = match otlp {
            Some(_) => collector.collect_structured(&mut out, &mut exposition),
            None => collector.collect(&mut out),
        };
        match result {
            Ok(()) => {
                texts.push(out);
                structured.push(exposition);
            }
            Err(e) if many => log::error!("hostengine {name}: collection failed: {e}"),
            Err(e) => return fail(1, format_args!("collection failed: {e}")),
        }
    }
    if texts.is_empty() {
        return fail(1, "no host engine could be read");
    }
    let mut out = if texts.len() == 1 {
        texts.remove(0)
    } else {
        merge_expositions(&texts.iter().map(String::as_str).collect::<Vec<_>>())
    };
    if let Some(s) = dra_stats(&pods) {
        s.write(&mut out);
    }
    health::write_last_success(&mut out, std::time::SystemTime::now());
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(out.as_bytes())
        .and_then(|_| stdout.flush());
    drop(stdout);
    if let Some(cfg) = otlp {
        let host = dcgm_prometheus::default_hostname(settings.engine.as_deref());
        let all: Vec<&dcgm_prometheus::Exposition> = structured.iter().collect();
        match dcgm_exporter::otlp::once::push_once(cfg, &all, host) {
            Ok(attempts) => log::info!("OTLP: pushed to {} ({attempts} attempts)", cfg.url),
            Err(e) => return fail(1, e),
        }
    }
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return ExitCode::SUCCESS; // the reader (`head`) has what it wanted
        }
        return fail(1, format_args!("cannot write the exposition: {e}"));
    }
    ExitCode::SUCCESS
}

/// An exported entity as its labels name it: `GPU 0`, or a MIG instance by its GPU and
/// `GPU_I_ID` (DCGM's entity id, which the log used to show, is not a label).
fn describe(id: &dcgm_prometheus::EntityIdentity) -> String {
    match &id.mig {
        None => format!("GPU {}", id.gpu),
        Some(m) => {
            let instance = m
                .instance_id
                .map_or_else(|| "?".to_string(), |i| i.to_string());
            if m.profile.is_empty() {
                format!("GPU {} GPU_I_ID {instance}", id.gpu)
            } else {
                format!("GPU {} GPU_I_ID {instance} ({})", id.gpu, m.profile)
            }
        }
    }
}

enum StartError {
    /// The configuration cannot work (exit status 2).
    Config(dcgm::Error),
    /// DCGM failed; may work later.
    Dcgm(dcgm::Error),
}

/// Starts a collector and logs what it exports.
fn start(settings: &Settings, counters: Vec<Counter>) -> Result<Collector, StartError> {
    let source = settings
        .cli
        .collectors
        .as_ref()
        .map_or("built-in default counters".into(), |p| {
            p.display().to_string()
        });
    let collector = Collector::new(settings.config(counters)).map_err(|e| match e {
        e @ dcgm::Error::InvalidArgument(_) => StartError::Config(e),
        e => StartError::Dcgm(e),
    })?;
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
            .map(describe)
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
    Ok(collector)
}

/// The kubelet's pod map the flags ask for (with `--kubernetes`), and the refresher feeding
/// it (the caller runs it once or in its thread).
fn pods(cli: &Cli) -> (Option<(PodMapper, Arc<PodCache>)>, Option<PodRefresher>) {
    let mut pods = None;
    let mut refresher = None;
    if cli.kubernetes {
        let mapper = PodMapper {
            socket: cli.pod_resources_socket.clone(),
            id_type: cli.kubernetes_gpu_id_type,
            extra_resources: cli.nvidia_resource_names.clone(),
            pod_uid: cli.kubernetes_pod_uid,
            virtual_gpus: cli.kubernetes_virtual_gpus,
            dra: cli.kubernetes_enable_dra.then(|| {
                dcgm_exporter::attribution::dra_types::DraConfig {
                    cdi_dir: cli.cdi_spec_dir.clone(),
                    proc_root: cli.proc_root.clone(),
                    resource_slices: cli.kubernetes_dra_resource_slices.then(|| {
                        dcgm_exporter::attribution::resource_slice::ResourceSliceConfig {
                            service_account_dir: cli.kubernetes_service_account_dir.clone(),
                            refresh: cli.kubernetes_dra_resource_slice_refresh,
                        }
                    }),
                    stats: Arc::default(),
                    // `--once` has one pass: it reads every changed spec.
                    budget: if cli.once {
                        dcgm_exporter::attribution::cdi::Budget {
                            bytes: u64::MAX,
                            time: Duration::MAX,
                        }
                    } else {
                        dcgm_exporter::attribution::cdi::Budget::default()
                    },
                }
            }),
        };
        let cache = Arc::new(PodCache::default());
        match PodRefresher::new(mapper.clone(), cache.clone()) {
            Ok(r) => {
                refresher = Some(r);
                pods = Some((mapper, cache));
            }
            Err(e) => log::error!("no Kubernetes labels: cannot start the gRPC client: {e}"),
        }
    }
    (pods, refresher)
}

/// The DRA mapping counts the kubelet thread keeps (with `--kubernetes-enable-dra`).
fn dra_stats(
    pods: &Option<(PodMapper, Arc<PodCache>)>,
) -> Option<Arc<dcgm_exporter::attribution::dra_types::DraStats>> {
    pods.as_ref()?.0.dra.as_ref().map(|d| d.stats.clone())
}

/// The workload attribution the flags ask for, over the pod map `pods`, for the collector of
/// host engine `engine` (`None`: the embedded engine).
fn attribution(
    cli: &Cli,
    pods: Option<(PodMapper, Arc<PodCache>)>,
    engine: Option<&str>,
    hpc_board: Option<dcgm_exporter::health::SourceBoard>,
) -> Attribution {
    Attribution::new(
        pods,
        AttributionConfig {
            hpc_dir: cli.hpc_job_mapping_dir.clone(),
            hpc_info_series: cli.hpc_job_info_series,
            proc_root: cli.proc_root.clone(),
            local_engine: engine.is_none_or(is_local_engine),
            hpc_board,
            container_runtime: cli
                .container_labels
                .then(|| cli.container_runtime_socket.clone()),
            pod_labels: cli.kubernetes_enable_pod_labels.then(|| {
                (
                    cli.kubernetes_service_account_dir.clone(),
                    // Checked at start (run).
                    dcgm_exporter::attribution::pod_labels::Allowlist::new(
                        &cli.kubernetes_pod_label_allowlist_regex,
                    )
                    .unwrap_or_default(),
                )
            }),
        },
    )
}

/// Whether a host engine address is on this host: a unix socket, `localhost`, a loopback
/// address.
fn is_local_engine(address: &str) -> bool {
    if address.starts_with("unix://") || address.starts_with('/') {
        return true;
    }
    let host = dcgm_prometheus::default_hostname(Some(address));
    host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The engines to read: each of `-r`, or the embedded engine.
fn engines_or_embedded(engines: &[String]) -> Vec<Option<String>> {
    if engines.is_empty() {
        vec![None]
    } else {
        engines.iter().cloned().map(Some).collect()
    }
}

/// One host engine's last collection, when several are read.
#[derive(Clone, Default)]
struct Slot {
    /// The last good exposition (empty while the engine fails).
    text: String,
    /// Why it is failing; `None` once it works.
    error: Option<String>,
    /// When the last collection worked.
    at: Option<Instant>,
    /// What its collector thread is doing, since when (for `/health`: an engine that does not
    /// answer).
    busy: Option<(Instant, &'static str)>,
}

/// Several host engines' collections, merged into one exposition.
struct Engines {
    published: Arc<Mutex<Published>>,
    slots: Mutex<Vec<Slot>>,
    names: Vec<String>,
    /// An engine whose last good collection is older is left out (a host engine that stopped
    /// answering holds its collector inside a DCGM call).
    max_age: Duration,
}

impl Engines {
    /// Each engine's state for `/health` (its line is judged when asked).
    fn states(&self, slots: &[Slot]) -> Vec<health::EngineState> {
        self.names
            .iter()
            .zip(slots)
            .map(|(name, s)| health::EngineState {
                name: name.clone(),
                error: s.error.clone(),
                at: s.at,
                busy: s.busy,
            })
            .collect()
    }

    /// Publishes the merge of the engines that work, `/health`'s line for each, and an error
    /// when none does (then `/metrics` and `/health` answer 503).
    fn publish(&self, slots: &[Slot]) {
        let now = Instant::now();
        let fresh = |s: &Slot| {
            s.error.is_none()
                && s.at
                    .is_some_and(|at| now.saturating_duration_since(at) <= self.max_age)
        };
        let texts: Vec<&str> = slots
            .iter()
            .filter(|s| fresh(s))
            .map(|s| s.text.as_str())
            .collect();
        let error = if texts.is_empty() {
            let why: Vec<String> = self
                .names
                .iter()
                .zip(slots)
                .filter_map(|(n, s)| s.error.as_ref().map(|e| format!("{n}: {e}")))
                .collect();
            Some(if why.is_empty() {
                "DCGM is starting".to_string()
            } else {
                format!("no host engine works ({})", why.join("; "))
            })
        } else {
            None
        };
        let mut guard = self.published.lock().unwrap_or_else(|p| p.into_inner());
        let p = &mut *guard;
        p.health.engines = self.states(slots);
        if error.is_none() {
            let mut text = merge_expositions(&texts);
            health::write_last_success(&mut text, std::time::SystemTime::now());
            p.text = text;
            p.version = p.version.wrapping_add(1);
            p.ready = true;
            p.health.succeeded(Instant::now());
        } else {
            p.health.end();
        }
        p.error = error;
        p.health.note(p.error.as_deref(), p.ready, Instant::now());
    }
}

/// Where a collector thread publishes: the server's state directly (one engine), or its slot
/// of several.
enum Out<'a> {
    One(&'a Mutex<Published>),
    Many { me: usize, engines: &'a Engines },
}

impl Out<'_> {
    /// The collector thread starts `what` (for the reason `/health` gives when it is stale).
    fn begin(&self, what: &'static str) {
        match self {
            Out::One(p) => begin(p, what),
            Out::Many { me, engines } => {
                let mut slots = engines.slots.lock().unwrap_or_else(|p| p.into_inner());
                slots[*me].busy = Some((Instant::now(), what));
                let states = engines.states(&slots);
                let mut p = engines.published.lock().unwrap_or_else(|p| p.into_inner());
                p.health.engines = states;
            }
        }
    }

    /// The collector's error.
    fn failed(&self, error: String) {
        match self {
            Out::One(p) => set_state(p, Some(error)),
            Out::Many { me, engines } => {
                let mut slots = engines.slots.lock().unwrap_or_else(|p| p.into_inner());
                let s = &mut slots[*me];
                if s.error.as_deref() != Some(&error) {
                    log::warn!("hostengine {}: {error}", engines.names[*me]);
                }
                s.error = Some(error);
                s.text.clear();
                s.busy = None;
                engines.publish(&slots);
            }
        }
    }

    /// A collection worked: publishes `buf` (swapped out).
    fn collected(&self, buf: &mut String) {
        match self {
            Out::One(published) => {
                health::write_last_success(buf, std::time::SystemTime::now());
                {
                    let mut p = published.lock().unwrap_or_else(|p| p.into_inner());
                    std::mem::swap(&mut p.text, buf);
                    p.version = p.version.wrapping_add(1);
                    p.ready = true;
                    p.health.succeeded(Instant::now());
                }
                set_state(published, None);
            }
            Out::Many { me, engines } => {
                let mut slots = engines.slots.lock().unwrap_or_else(|p| p.into_inner());
                let s = &mut slots[*me];
                if s.error.take().is_some() {
                    log::info!("hostengine {}: collections work again", engines.names[*me]);
                }
                s.at = Some(Instant::now());
                s.busy = None;
                std::mem::swap(&mut s.text, buf);
                engines.publish(&slots);
            }
        }
    }
}

/// The collector's error (`None`: the collection worked), and `/health`'s verdict logged
/// when it changes.
fn set_state(published: &Mutex<Published>, error: Option<String>) {
    let mut guard = published.lock().unwrap_or_else(|p| p.into_inner());
    let p = &mut *guard;
    if error.is_some() {
        p.health.end();
    }
    p.error = error;
    p.health.note(p.error.as_deref(), p.ready, Instant::now());
}

/// The collector thread starts `what` (for the reason `/health` gives when it is stale).
fn begin(published: &Mutex<Published>, what: &'static str) {
    let mut p = published.lock().unwrap_or_else(|p| p.into_inner());
    p.health.begin(what, Instant::now());
}

/// Sleeps until `deadline`, or until SIGHUP asks for a reload.
fn wait(deadline: Instant, reload: &AtomicBool) {
    while !reload.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(100)));
    }
}

/// Starts DCGM (retrying), then collects every interval and publishes the exposition; on
/// SIGHUP, reloads the counters file and starts over with it (a bad file keeps the old one).
fn collect_loop(
    settings: Settings,
    mut counters: Vec<Counter>,
    mut attribution: Attribution,
    out: &Out<'_>,
    reload: &AtomicBool,
) {
    let retry = settings.interval.min(Duration::from_secs(5));
    let mut buf = String::new();
    let mut structured = dcgm_prometheus::Exposition::default();
    attribution.wait_for_pods();
    loop {
        let mut collector = loop {
            out.begin(activity::CONNECTING);
            match start(&settings, counters.clone()) {
                Ok(c) => break c,
                // --health-require-gpus: no GPU yet is a state /health reports, not a
                // configuration error; asked again every retry.
                Err(StartError::Config(e))
                    if settings.cli.health_require_gpus && dcgm_prometheus::is_no_gpu(&e) =>
                {
                    out.failed(format!(
                        "no GPU is visible (--health-require-gpus): {e}; looking again every \
                         {retry:?}"
                    ));
                    wait(Instant::now() + retry, reload);
                    if reload.swap(false, Ordering::Relaxed) {
                        counters = reload_counters(&settings, counters, out);
                    }
                }
                Err(StartError::Config(e)) => {
                    log::error!("{e}");
                    std::process::exit(2);
                }
                Err(StartError::Dcgm(e)) => {
                    out.failed(format!("DCGM is not reachable: {e}"));
                    wait(Instant::now() + retry, reload);
                    if reload.swap(false, Ordering::Relaxed) {
                        counters = reload_counters(&settings, counters, out);
                    }
                }
            }
        };
        let mut next = Instant::now();
        loop {
            attribution.apply(&mut collector);
            out.begin(activity::COLLECTING);
            // The structured form only for a collection the next OTLP push takes.
            let pushed = settings
                .otlp
                .as_ref()
                .filter(|o| o.wants(settings.otlp_slot, settings.interval));
            let result = match pushed {
                Some(_) => collector.collect_structured(&mut buf, &mut structured),
                None => collector.collect(&mut buf),
            };
            if let (Ok(()), Some(otlp)) = (&result, pushed) {
                otlp.offer(settings.otlp_slot, &mut structured);
            }
            if let (Ok(()), Some(otlp), 0) = (&result, &settings.otlp, settings.otlp_slot) {
                otlp.write_stats(&mut buf);
            }
            if let (Ok(()), Some(s), 0) = (&result, &settings.dra_stats, settings.otlp_slot) {
                s.write(&mut buf);
            }
            match result {
                Ok(()) => out.collected(&mut buf),
                Err(e) => out.failed(format!("collection failed: {e}")),
            }
            next += settings.interval;
            let now = Instant::now();
            if next < now {
                next = now;
            }
            wait(next, reload);
            if reload.swap(false, Ordering::Relaxed) {
                counters = reload_counters(&settings, counters, out);
                break;
            }
        }
        // The old collector (and its DCGM watches) goes before the new one starts.
        drop(collector);
    }
}

/// The counters file again (SIGHUP); on any error the current counters stay.
fn reload_counters(settings: &Settings, current: Vec<Counter>, out: &Out<'_>) -> Vec<Counter> {
    out.begin(activity::RELOADING);
    match counters_file::load(settings.cli.collectors.as_deref()) {
        Ok(c) => {
            log::info!("SIGHUP: reloaded {} counters", c.len());
            c
        }
        Err(e) => {
            log::error!("SIGHUP: {e}; keeping the {} counters in use", current.len());
            current
        }
    }
}
