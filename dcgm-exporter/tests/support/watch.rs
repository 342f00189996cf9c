//! Watching the exporter under attack: timed scrapes with a deadline, its resident memory and
//! CPU time, counters in an exposition, and the spread of latencies.

#![allow(dead_code)] // each test binary uses a part

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One scrape on a new connection (`Connection: close`): the status and the whole body (as
/// long as its `Content-Length`) within `deadline`, and how long it took.
pub fn scrape(
    addr: SocketAddr,
    path: &str,
    deadline: Duration,
) -> Result<(u16, String, Duration), String> {
    let t0 = Instant::now();
    let mut s = TcpStream::connect_timeout(&addr, deadline).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(deadline))
        .and_then(|()| s.set_write_timeout(Some(deadline)))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: legit\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("sending: {e}"))?;
    let mut raw = Vec::new();
    let read = s.read_to_end(&mut raw);
    let took = t0.elapsed();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    read.map_err(|e| format!("reading after {} bytes: {e}", raw.len()))?;
    if took > deadline {
        return Err(format!("answered after {took:?}"));
    }
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no whole response head: {raw:?}"))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("status line {head:?}"))?;
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .ok_or_else(|| format!("no Content-Length: {head:?}"))?;
    if body.len() != len {
        return Err(format!("body of {} bytes, {len} announced", body.len()));
    }
    Ok((status, body.to_string(), took))
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// `min / median / max`, in ms.
pub fn spread(v: &[Duration]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    let mut v = v.to_vec();
    v.sort();
    format!(
        "{} / {} / {}",
        ms(v[0]),
        ms(v[v.len() / 2]),
        ms(v[v.len() - 1])
    )
}

fn status_field(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Resident memory of `pid`, KiB.
pub fn rss_kib(pid: u32) -> u64 {
    status_field(pid, "VmRSS:")
}

/// CPU time (user and system) `pid` has used, in seconds.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which may hold blanks) in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// Samples the resident memory of `pid` every 20 ms until dropped; the highest seen.
pub struct RssPeak {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl RssPeak {
    pub fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(rss_kib(pid)));
        let (s, p) = (stop.clone(), peak.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.fetch_max(rss_kib(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        Self {
            stop,
            peak,
            thread: Some(thread),
        }
    }

    /// The highest resident memory seen so far, KiB.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

impl Drop for RssPeak {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The value of a series in an exposition (`name` with its labels, as written).
pub fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}
