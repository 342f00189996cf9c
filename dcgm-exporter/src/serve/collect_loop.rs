//! A collector thread's life: start DCGM (retrying), collect every interval, publish, and
//! start over with the counters file again on SIGHUP.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use dcgm_exporter::attribution::Attribution;
use dcgm_exporter::counters_file;
use dcgm_exporter::health::activity;
use dcgm_prometheus::Counter;

use super::published::Out;
use super::settings::Settings;
use super::start::{StartError, start};

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
pub(crate) fn collect_loop(
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

/// The flag SIGHUP raises for the collector of `engine` (`None`: the only collector); one that
/// cannot be registered is logged (SIGHUP then reloads nothing).
pub(crate) fn reload_flag(engine: Option<&str>) -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    if let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGHUP, flag.clone()) {
        match engine {
            None => log::warn!("SIGHUP will not reload the counters file: {e}"),
            Some(engine) => {
                log::warn!("SIGHUP will not reload the counters file for {engine}: {e}")
            }
        }
    }
    flag
}
