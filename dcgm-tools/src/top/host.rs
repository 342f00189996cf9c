//! What the view asks of this host: whether a pid is a process here (and the same one), the MIG
//! instance its environment gives it, and the signals the kill menu sends.

use super::state::{GpuRow, Process};

/// The signals the kill menu offers, SIGTERM first (the default), as nvtop's.
pub(crate) const SIGNALS: [(&str, i32); 9] = [
    ("SIGTERM", libc::SIGTERM),
    ("SIGKILL", libc::SIGKILL),
    ("SIGINT", libc::SIGINT),
    ("SIGHUP", libc::SIGHUP),
    ("SIGQUIT", libc::SIGQUIT),
    ("SIGUSR1", libc::SIGUSR1),
    ("SIGUSR2", libc::SIGUSR2),
    ("SIGSTOP", libc::SIGSTOP),
    ("SIGCONT", libc::SIGCONT),
];

/// The start time of `pid` on this host (`/proc/PID/stat`'s `starttime`), or `None` where it
/// is not one: not in `/proc`, or, for a process of the simulator (`simulated_name`), a pid
/// that on this host belongs to a process of another name. A simulated process is a real one
/// only where a test or a demo put a real pid and its name on the simulator's list.
pub(crate) fn start_time(pid: u32, simulated_name: Option<&str>) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ...": the name may hold spaces and parentheses, the fields after it not.
    let (head, tail) = stat.rsplit_once(')')?;
    let (_, comm) = head.split_once('(')?;
    if let Some(name) = simulated_name {
        let program = name.split_whitespace().next().unwrap_or(name);
        let program = program.rsplit('/').next().unwrap_or(program);
        // The kernel keeps the first 15 bytes of the name.
        if comm.as_bytes() != &program.as_bytes()[..program.len().min(15)] {
            return None;
        }
    }
    tail.split_whitespace().nth(19)?.parse().ok()
}

/// The GPU instance of `gpu` a process of this host was given in its environment
/// (`/proc/PID/environ`): `CUDA_VISIBLE_DEVICES` (or `NVIDIA_VISIBLE_DEVICES`, the container
/// runtime's) naming it as `MIG-GPU-UUID/GI/CI`. DCGM's process lists say only the GPU; a
/// device given as `MIG-UUID` (the MIG device's own UUID, which DCGM does not report) or not at
/// all leaves the instance unknown.
pub(crate) fn mig_instance(pid: u32, gpu: u32, rows: &[GpuRow]) -> Option<u32> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let var = |name: &str| {
        environ.split(|&b| b == 0).find_map(|kv| {
            let kv = std::str::from_utf8(kv).ok()?;
            kv.strip_prefix(name)?.strip_prefix('=').map(str::to_string)
        })
    };
    let devices = var("CUDA_VISIBLE_DEVICES").or_else(|| var("NVIDIA_VISIBLE_DEVICES"))?;
    instance_of_devices(&devices, gpu, rows)
}

/// The GPU instance of `gpu` (its entity id) that a device list (`CUDA_VISIBLE_DEVICES`'s
/// value) names as `MIG-GPU-UUID/GI/CI`, if one of `rows` is it.
fn instance_of_devices(devices: &str, gpu: u32, rows: &[GpuRow]) -> Option<u32> {
    devices.split(',').find_map(|d| {
        let mut parts = d.trim().strip_prefix("MIG-")?.split('/');
        let (uuid, gi) = (parts.next()?, parts.next()?.parse::<u32>().ok()?);
        rows.iter()
            .find(|r| r.gpu == gpu && r.mig.as_ref().is_some_and(|(u, id)| u == uuid && *id == gi))
            .map(|r| r.entity.id)
    })
}

/// Sends `signal` to the process of a row, after checking that the pid still names it: a
/// process of this host (never a simulated pid, which on this host may be anybody's), not
/// init nor `top` itself, started when the row says it did (not a later process that got its
/// pid). Says what it did, or why it did nothing.
pub(crate) fn send_signal(
    p: &Process,
    (signal_name, signal): (&str, i32),
) -> Result<String, String> {
    let who = format!("{} ({})", p.pid, p.name);
    let Some(started) = p.host else {
        return Err(format!(
            "{who} is not a process on this host (a simulated or remote process): no signal sent"
        ));
    };
    if p.pid <= 1 || p.pid == std::process::id() {
        return Err(format!("{who} is init or top itself: no signal sent"));
    }
    if start_time(p.pid, None) != Some(started) {
        return Err(format!(
            "{who} has exited (its pid is gone or now another process's): no signal sent"
        ));
    }
    let pid = libc::pid_t::try_from(p.pid).map_err(|_| format!("pid {} out of range", p.pid))?;
    // SAFETY: kill(2) takes two integers and touches no memory of ours.
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(format!("sent {signal_name} to {who}"))
    } else {
        let e = std::io::Error::last_os_error();
        let why = if e.raw_os_error() == Some(libc::EPERM) {
            "not your process".to_string()
        } else {
            e.to_string()
        };
        Err(format!("cannot send {signal_name} to {who}: {why}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::top::state::tests::{gpu_row, process};
    use dcgm::{Entity, EntityGroup};

    #[test]
    fn a_mig_device_in_cuda_visible_devices_names_its_instance() {
        let gi = |id: u32, nvml: u32| GpuRow {
            entity: Entity::new(EntityGroup::GpuInstance, id),
            label: format!(" └ GI {id}"),
            name: "MIG 1 slice(s)".into(),
            power_limit_w: None,
            gpu: 0,
            mig: Some(("GPU-abc".into(), nvml)),
        };
        let rows = [gpu_row(0), gi(7, 1), gi(8, 2)];
        let of = |d: &str| instance_of_devices(d, 0, &rows);
        assert_eq!(of("MIG-GPU-abc/2/0"), Some(8));
        assert_eq!(of("0, MIG-GPU-abc/1/0"), Some(7));
        // Another GPU's UUID, an instance the GPU lacks, a MIG device's own UUID: unknown.
        assert_eq!(of("MIG-GPU-def/1/0"), None);
        assert_eq!(of("MIG-GPU-abc/3/0"), None);
        assert_eq!(of("MIG-4b2e0c1a-aaaa-bbbb-cccc-000000000000"), None);
        assert_eq!(instance_of_devices("MIG-GPU-abc/1/0", 1, &rows), None);
    }

    #[test]
    fn no_signal_goes_to_a_process_not_of_this_host() {
        let p = process(4242, "python3", 0, 100);
        assert_eq!(
            send_signal(&p, SIGNALS[0]),
            Err(
                "4242 (python3) is not a process on this host (a simulated or remote process): \
                 no signal sent"
                    .into()
            )
        );
    }

    #[test]
    fn this_process_has_a_start_time_and_a_simulated_name_must_match_it() {
        let me = std::process::id();
        assert!(start_time(me, None).is_some());
        assert_eq!(start_time(me, Some("surely-not-this-test")), None);
    }
}
