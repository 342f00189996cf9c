//! `--once`: one collection from each engine, printed (and pushed over OTLP), then exit.

use std::process::ExitCode;

use dcgm_exporter::health;
use dcgm_exporter::merge::merge_expositions;
use dcgm_exporter::otlp::config::OtlpConfig;
use dcgm_prometheus::Counter;

use super::fail;
use super::settings::Settings;
use super::start::{StartError, start};
use super::workloads::{attribution, dra_stats, pods};

/// `--once`: collects once from each engine, prints the exposition and exits. With several
/// engines, one that fails is logged and left out; all failing is exit status 1. With an OTLP
/// endpoint the collection is pushed too, waited for within `--otlp-timeout`; a push that
/// fails is exit status 1 (after the exposition is printed).
pub(crate) fn once(
    settings: &Settings,
    engines: &[String],
    counters: Vec<Counter>,
    otlp: Option<&OtlpConfig>,
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

/// The engines to read: each of `-r`, or the embedded engine.
fn engines_or_embedded(engines: &[String]) -> Vec<Option<String>> {
    if engines.is_empty() {
        vec![None]
    } else {
        engines.iter().cloned().map(Some).collect()
    }
}
