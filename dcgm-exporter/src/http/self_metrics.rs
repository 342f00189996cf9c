//! `--enable-exporter-metrics` (dcgm-exporter 4.8.4): the exporter's own metrics, under the
//! names NVIDIA's exporter gets from the Prometheus Go client, so that dashboards of
//! exporters work unchanged:
//!
//! - the process collector's `process_cpu_seconds_total`, `process_resident_memory_bytes`,
//!   `process_virtual_memory_bytes`, `process_virtual_memory_max_bytes`, `process_open_fds`,
//!   `process_max_fds` and `process_start_time_seconds`, read from `/proc/self`;
//! - the `/metrics` handler's `promhttp_metric_handler_requests_total{code}` and
//!   `promhttp_metric_handler_requests_in_flight`.
//!
//! The Go runtime's `go_*` series have no counterpart in a Rust program and are not written.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The `/metrics` handler's counts.
#[derive(Debug, Default)]
pub struct HandlerStats {
    /// Scrapes being answered now.
    pub in_flight: AtomicUsize,
    /// Answered 200.
    pub ok: AtomicU64,
    /// Answered 503 (no collection, a failed one, or `--max-concurrent-scrapes`).
    pub unavailable: AtomicU64,
    /// Answered 500 (gzip failed).
    pub failed: AtomicU64,
}

/// One scrape in flight: counted in [`HandlerStats::in_flight`] until dropped.
#[derive(Debug)]
pub struct InFlight(pub std::sync::Arc<HandlerStats>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What `/proc/self` says of the process.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessStats {
    /// User and system CPU time, in seconds.
    pub cpu_seconds: f64,
    /// Resident memory, in bytes.
    pub resident_bytes: u64,
    /// Virtual memory, in bytes.
    pub virtual_bytes: u64,
    /// The address-space limit, in bytes (`None`: unlimited).
    pub virtual_max_bytes: Option<u64>,
    /// Open file descriptors.
    pub open_fds: u64,
    /// The descriptor limit (`None`: unlimited).
    pub max_fds: Option<u64>,
    /// When the process started, in seconds since the epoch.
    pub start_time_seconds: f64,
}

/// Reads `/proc/self`; `None` where it cannot be read (not Linux, no `/proc`).
pub fn process_stats() -> Option<ProcessStats> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command (which may hold spaces and parentheses).
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state): utime is field 14, stime 15, starttime 22, vsize 23,
    // rss 24 (pages).
    let num = |i: usize| f.get(i - 3).and_then(|v| v.parse::<u64>().ok());
    let ticks = USER_HZ as f64;
    let boot = boot_time()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let rss_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())?;
    let fds = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64);
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    Some(ProcessStats {
        cpu_seconds: (num(14)? + num(15)?) as f64 / ticks,
        resident_bytes: rss_kib * 1024,
        virtual_bytes: num(23)?,
        virtual_max_bytes: limit(&limits, "Max address space"),
        open_fds: fds,
        max_fds: limit(&limits, "Max open files"),
        start_time_seconds: boot + num(22)? as f64 / ticks,
    })
}

/// The unit of `/proc/PID/stat`'s times: Linux's `USER_HZ`, 100 on every architecture's
/// user-space ABI.
const USER_HZ: u64 = 100;

/// The soft limit of a `/proc/self/limits` row (`None`: unlimited or absent).
fn limit(limits: &str, row: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with(row))?;
    line[row.len()..].split_whitespace().next()?.parse().ok()
}

fn boot_time() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse::<f64>().ok())
}

/// Writes the process's and the handler's series.
pub fn write(out: &mut String, process: Option<&ProcessStats>, handler: &HandlerStats) {
    if let Some(p) = process {
        let mut family = |name: &str, kind: &str, help: &str, value: String| {
            let _ = write!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
            );
        };
        family(
            "process_cpu_seconds_total",
            "counter",
            "Total user and system CPU time spent in seconds.",
            format!("{}", p.cpu_seconds),
        );
        family(
            "process_max_fds",
            "gauge",
            "Maximum number of open file descriptors.",
            p.max_fds.map_or("+Inf".into(), |v| v.to_string()),
        );
        family(
            "process_open_fds",
            "gauge",
            "Number of open file descriptors.",
            p.open_fds.to_string(),
        );
        family(
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
            p.resident_bytes.to_string(),
        );
        family(
            "process_start_time_seconds",
            "gauge",
            "Start time of the process since unix epoch in seconds.",
            format!("{}", p.start_time_seconds),
        );
        family(
            "process_virtual_memory_bytes",
            "gauge",
            "Virtual memory size in bytes.",
            p.virtual_bytes.to_string(),
        );
        family(
            "process_virtual_memory_max_bytes",
            "gauge",
            "Maximum amount of virtual memory available in bytes.",
            p.virtual_max_bytes.map_or("-1".into(), |v| v.to_string()),
        );
    }
    let _ = write!(
        out,
        "# HELP promhttp_metric_handler_requests_in_flight Current number of scrapes being served.\n\
         # TYPE promhttp_metric_handler_requests_in_flight gauge\n\
         promhttp_metric_handler_requests_in_flight {}\n\
         # HELP promhttp_metric_handler_requests_total Total number of scrapes by HTTP status code.\n\
         # TYPE promhttp_metric_handler_requests_total counter\n\
         promhttp_metric_handler_requests_total{{code=\"200\"}} {}\n\
         promhttp_metric_handler_requests_total{{code=\"500\"}} {}\n\
         promhttp_metric_handler_requests_total{{code=\"503\"}} {}\n",
        handler.in_flight.load(Ordering::Relaxed),
        handler.ok.load(Ordering::Relaxed),
        handler.failed.load(Ordering::Relaxed),
        handler.unavailable.load(Ordering::Relaxed),
    );
}
