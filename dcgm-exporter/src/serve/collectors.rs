//! The collector threads: one (the embedded engine, or the one `-r`), publishing directly, or
//! one per host engine, each into its slot of the merged exposition.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use dcgm_exporter::attribution::kubernetes::PodMapper;
use dcgm_exporter::attribution::pods::PodCache;
use dcgm_exporter::health::SourceBoard;
use dcgm_exporter::http::server::Published;
use dcgm_prometheus::Counter;

use super::collect_loop::{collect_loop, reload_flag};
use super::fail;
use super::published::{Engines, Out};
use super::settings::Settings;
use super::workloads::attribution;

/// Starts a collector thread for each of `engines` (with none or one, a single thread that
/// SIGHUP's `reload` restarts), publishing into `published`. A thread that cannot start is
/// exit status 1.
pub(crate) fn spawn(
    settings: Settings,
    engines: &[String],
    counters: Vec<Counter>,
    pods: Option<(PodMapper, Arc<PodCache>)>,
    hpc_board: Option<SourceBoard>,
    published: &Arc<Mutex<Published>>,
    reload: Arc<AtomicBool>,
) -> Result<(), ExitCode> {
    if engines.len() <= 1 {
        let attribution = attribution(&settings.cli, pods, settings.engine.as_deref(), hpc_board);
        let p = published.clone();
        return std::thread::Builder::new()
            .name("collector".into())
            .spawn(move || collect_loop(settings, counters, attribution, &Out::One(&p), &reload))
            .map(drop)
            .map_err(|e| fail(1, format_args!("cannot start the collector thread: {e}")));
    }
    let shared = Arc::new(Engines::new(
        published.clone(),
        engines.to_vec(),
        settings.interval * settings.cli.health_max_age_intervals,
    ));
    for (me, engine) in engines.iter().enumerate() {
        let settings = Settings {
            engine: Some(engine.clone()),
            otlp_slot: me,
            ..settings.clone()
        };
        let attribution = attribution(&settings.cli, pods.clone(), Some(engine), hpc_board.clone());
        let flag = reload_flag(Some(engine));
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
            return Err(fail(
                1,
                format_args!("cannot start the collector thread: {e}"),
            ));
        }
    }
    Ok(())
}
