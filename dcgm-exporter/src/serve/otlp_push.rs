//! The OTLP pusher (`--otlp-endpoint`), started before the collectors that feed it.

use std::process::ExitCode;

use dcgm_exporter::otlp::config::OtlpConfig;
use dcgm_exporter::otlp::push::OtlpExporter;

use super::fail;
use super::settings::Settings;

/// Starts the pusher with a slot for each of `engines` (one for the embedded engine) and logs
/// where it pushes; a pusher that cannot start is exit status 2.
pub(crate) fn start(
    config: OtlpConfig,
    engines: &[String],
    settings: &Settings,
) -> Result<OtlpExporter, ExitCode> {
    let (url, every) = (config.url.clone(), config.interval);
    let host = dcgm_prometheus::default_hostname(settings.engine.as_deref());
    let pusher = OtlpExporter::start(config, engines.len().max(1), host).map_err(|e| fail(2, e))?;
    log::info!(
        "pushing OTLP metrics to {url} {}",
        every.map_or("after each collection".to_string(), |i| format!(
            "every {i:?}"
        ))
    );
    Ok(pusher)
}
