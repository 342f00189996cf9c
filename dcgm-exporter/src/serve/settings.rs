//! The arguments, checked before anything starts (a bad one is exit status 2), and the
//! [`Settings`] every collector shares.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use dcgm_exporter::attribution::dra_types::DraStats;
use dcgm_exporter::cli::Cli;
use dcgm_exporter::counters_file;
use dcgm_exporter::http::server::WebConfig;
use dcgm_exporter::otlp::config::OtlpConfig;
use dcgm_exporter::otlp::push::OtlpExporter;
use dcgm_prometheus::{CollectorConfig, Counter};
use dcgm_reader::Connection;

use super::fail;

/// Everything but the counters, fixed for the process's life.
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) cli: Arc<Cli>,
    pub(crate) interval: Duration,
    /// The host engine this collector reads (`None`: the embedded engine).
    pub(crate) engine: Option<String>,
    /// The OTLP pusher (with `--otlp-endpoint`), and this collector's slot in it.
    pub(crate) otlp: Option<OtlpExporter>,
    pub(crate) otlp_slot: usize,
    /// With `--kubernetes-enable-dra`: how the claimed devices were mapped, exported by the
    /// first host engine's collector.
    pub(crate) dra_stats: Option<Arc<DraStats>>,
}

impl Settings {
    /// The collector's configuration for `counters`.
    pub(crate) fn config(&self, counters: Vec<Counter>) -> CollectorConfig {
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

/// What the checked arguments give.
pub(crate) struct Checked {
    pub(crate) counters: Vec<Counter>,
    pub(crate) web: WebConfig,
    /// Each `-r`, in order (none: the embedded engine).
    pub(crate) engines: Vec<String>,
    pub(crate) otlp: Option<OtlpConfig>,
    /// The first engine's settings (no OTLP pusher yet).
    pub(crate) settings: Settings,
}

/// Reads the counters file and the web configuration and checks the flags that a collector
/// would only refuse later; the error (logged) is exit status 2.
pub(crate) fn check(cli: Cli) -> Result<Checked, ExitCode> {
    let counters = counters_file::load(cli.collectors.as_deref()).map_err(|e| fail(2, e))?;
    let web = match &cli.web_config_file {
        None => WebConfig::none(),
        Some(p) => WebConfig::load(p).map_err(|e| fail(2, format_args!("web config: {e}")))?,
    };
    if !dcgm_prometheus::counters::is_label_name(&cli.hostname_label) {
        return Err(fail(
            2,
            format_args!(
                "--hostname-label {:?} is not a label name",
                cli.hostname_label
            ),
        ));
    }
    if let Err(e) = dcgm_exporter::attribution::pod_labels::Allowlist::new(
        &cli.kubernetes_pod_label_allowlist_regex,
    ) {
        return Err(fail(2, e));
    }
    let engines = cli.hostengines();
    let otlp = cli
        .otlp
        .resolve(&|k| std::env::var(k).ok())
        .map_err(|e| fail(2, e))?;
    let settings = Settings {
        interval: Duration::from_millis(cli.collect_interval_ms),
        engine: engines.first().cloned(),
        cli: Arc::new(cli),
        otlp: None,
        otlp_slot: 0,
        dra_stats: None,
    };
    Ok(Checked {
        counters,
        web,
        engines,
        otlp,
        settings,
    })
}
