//! Who a GPU process is: its name and user. DCGM reports only pids; the names come from
//! `/proc` on a real node, and from the simulator's description of its node when simulated
//! (those pids do not exist on this machine).

use std::os::unix::fs::MetadataExt;

/// Name and user of a process; `None` where it cannot be found.
#[derive(Debug, Clone, Default)]
pub struct ProcessOwner {
    /// Its command name.
    pub name: Option<String>,
    /// Its user.
    pub user: Option<String>,
}

/// Looks up a pid on this node (`simulated`: in the simulator's node).
pub fn owner(pid: u32, simulated: bool) -> ProcessOwner {
    if simulated {
        let cfg = dcgm_sim::config::SimConfig::from_env().ok();
        let p = cfg
            .as_ref()
            .and_then(|c| c.processes.iter().find(|p| p.pid == pid));
        return ProcessOwner {
            name: p.map(|p| p.name.clone()),
            user: p.map(|p| p.user.clone()),
        };
    }
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string());
    let user = std::fs::metadata(format!("/proc/{pid}"))
        .ok()
        .map(|m| user_name(m.uid()));
    ProcessOwner { name, user }
}

/// The name of a uid from `/etc/passwd`, or the number.
fn user_name(uid: u32) -> String {
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                let mut f = l.split(':');
                let name = f.next()?;
                let id: u32 = f.nth(1)?.parse().ok()?;
                (id == uid).then(|| name.to_string())
            })
        })
        .unwrap_or_else(|| uid.to_string())
}
