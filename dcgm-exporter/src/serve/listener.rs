//! The `/metrics` listener: bound to `--web-listen-address`, taken from systemd
//! (`--web-systemd-socket`), or none (`--no-metrics-endpoint`, OTLP only).

use std::net::TcpListener;
use std::process::ExitCode;

use dcgm_exporter::cli::Cli;
use dcgm_exporter::http::server::{self, WebConfig};

use super::fail;

/// The listener the flags ask for (`None`: `--no-metrics-endpoint`). A socket systemd did not
/// pass is exit status 2; an address that cannot be bound, 1.
pub(crate) fn listen(cli: &Cli) -> Result<Option<TcpListener>, ExitCode> {
    let bound = if cli.otlp.no_metrics_endpoint {
        None
    } else if cli.web_systemd_socket {
        match systemd_listener() {
            Ok(l) => Some(Ok(l)),
            Err(e) => return Err(fail(2, format_args!("--web-systemd-socket: {e}"))),
        }
    } else {
        Some(server::bind(&cli.address))
    };
    match bound {
        None => Ok(None),
        Some(Ok(l)) => Ok(Some(l)),
        Some(Err(e)) => Err(fail(
            1,
            format_args!("cannot listen on {}: {e}", cli.address),
        )),
    }
}

/// Logs where `/metrics` is served (or that it is not).
pub(crate) fn announce(listener: Option<&TcpListener>, web: &WebConfig, cli: &Cli) {
    let local = listener
        .and_then(|l| l.local_addr().ok())
        .map(|a| a.to_string())
        .unwrap_or_else(|| cli.address.clone());
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
        cli.collect_interval_ms
    );
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
