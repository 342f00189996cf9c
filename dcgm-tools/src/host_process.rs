//! What the host knows of a process besides its name and user (see [`super::process`]): its
//! command line, CPU use and resident memory, read from `/proc` as psutil reads them.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The kernel's clock ticks per second in `/proc/PID/stat` (`USER_HZ`): 100 on every Linux
/// architecture this runs on.
const USER_HZ: f64 = 100.0;

/// The command line (`/proc/PID/cmdline`, split at its NULs); empty for a kernel thread or a
/// zombie, `None` where the process cannot be read.
pub fn cmdline(pid: u32) -> Option<Vec<String>> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let raw = raw.strip_suffix(b"\0").unwrap_or(&raw);
    if raw.is_empty() {
        return Some(Vec::new());
    }
    Some(
        raw.split(|&b| b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// Resident memory in bytes (`VmRSS` of `/proc/PID/status`).
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}

/// CPU time used so far, user and system (`utime` + `stime` of `/proc/PID/stat`).
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ...": the name may hold spaces and parentheses, the fields after it not.
    let (_, tail) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = tail.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_secs_f64(ticks as f64 / USER_HZ))
}

/// The CPU use of each process over `interval`, in percent of one CPU (above 100 for a process
/// busy on several), to one decimal: psutil's `Process.cpu_percent()`, measured for all the
/// pids in one wait. A process that cannot be read at both ends is left out.
pub fn cpu_percent(pids: &[u32], interval: Duration) -> BTreeMap<u32, f64> {
    let start = Instant::now();
    let before: BTreeMap<u32, Duration> = pids
        .iter()
        .filter_map(|&p| Some((p, cpu_time(p)?)))
        .collect();
    if before.is_empty() {
        return BTreeMap::new();
    }
    std::thread::sleep(interval);
    let wall = start.elapsed().as_secs_f64();
    before
        .into_iter()
        .filter_map(|(p, t0)| {
            let used = cpu_time(p)?.saturating_sub(t0).as_secs_f64();
            Some((p, (used / wall * 1000.0).round() / 10.0))
        })
        .collect()
}
