//! Which container and Kubernetes pod a process belongs to, from its cgroup
//! (`/proc/PID/cgroup`): the pod UID and container id that the kubelet and the container
//! runtime write into the cgroup path.
//!
//! The shapes understood, under cgroup v2 (one `0::/path` line) and v1 (one line per
//! hierarchy, `N:controllers:/path`; the first line naming a pod or container wins, the v2
//! line before them):
//!
//! | Driver | Runtime | Path |
//! |---|---|---|
//! | cgroupfs | containerd, dockershim | `/kubepods/burstable/pod<uid>/<64 hex>` (`kubepods/pod<uid>/…` for Guaranteed) |
//! | cgroupfs | CRI-O | `/kubepods/besteffort/pod<uid>/crio-<64 hex>` |
//! | systemd | containerd | `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid with _>.slice/cri-containerd-<64 hex>.scope` |
//! | systemd | CRI-O | `…/kubepods-pod<uid with _>.slice/crio-<64 hex>.scope` |
//! | systemd | cri-dockerd, Docker | `…/docker-<64 hex>.scope`, `/system.slice/docker-<64 hex>.scope` |
//! | cgroupfs | Docker | `/docker/<64 hex>` |
//! | either | Podman | `…/libpod-<64 hex>.scope`, `/libpod_parent/libpod-<64 hex>` |
//!
//! Prefixes before `kubepods` (kind's `/kubelet.slice/kubelet-kubepods.slice/…`, a node in a
//! container's `/docker/<id>/kubepods/…`) do not matter: the pod is the last component naming
//! one, the container the last component after it naming one. Static pods' UIDs (32 hex
//! digits without dashes) are accepted. The systemd driver writes the UID's dashes as
//! underscores; they are given back as dashes. CRI-O's `crio-conmon-<id>` (its monitor
//! process, not the container) names no container.

use std::path::Path;

/// The largest `/proc/PID/cgroup` read (a v1 host with every controller has a dozen lines).
pub const MAX_CGROUP_BYTES: u64 = 16 * 1024;

/// The container runtime a cgroup path names, where its shape tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// `cri-containerd-<id>.scope`.
    Containerd,
    /// `crio-<id>`.
    CriO,
    /// `docker-<id>.scope`, `/docker/<id>`.
    Docker,
    /// `libpod-<id>`.
    Podman,
}

/// What a process's cgroup says about its container and pod.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CgroupOwner {
    /// The Kubernetes pod's UID (with dashes), when the process runs in a pod.
    pub pod_uid: Option<String>,
    /// The container's id (64 hex digits), when the path names one.
    pub container_id: Option<String>,
    /// The runtime, when the shape tells (a bare id under a pod: containerd or dockershim).
    pub runtime: Option<Runtime>,
}

impl CgroupOwner {
    /// Whether the path named neither a pod nor a container.
    pub fn is_empty(&self) -> bool {
        self.pod_uid.is_none() && self.container_id.is_none()
    }
}

/// Parses the text of a `/proc/PID/cgroup` file.
///
/// ```
/// use dcgm_exporter::attribution::cgroup::{Runtime, parse};
/// let o = parse("0::/kubepods.slice/kubepods-burstable.slice/\
///                kubepods-burstable-pod0d5c2a3e_4b1f_4c6d_9e8a_1f2b3c4d5e6f.slice/\
///                cri-containerd-6e9f7b1a2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7.scope\n");
/// assert_eq!(o.pod_uid.as_deref(), Some("0d5c2a3e-4b1f-4c6d-9e8a-1f2b3c4d5e6f"));
/// assert_eq!(o.runtime, Some(Runtime::Containerd));
/// assert!(parse("0::/user.slice/user-1000.slice/session-2.scope\n").is_empty());
/// ```
pub fn parse(text: &str) -> CgroupOwner {
    let mut lines: Vec<(bool, &str)> = text
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            Some((id == "0" && controllers.is_empty(), path.trim()))
        })
        .collect();
    // The unified (v2) hierarchy first; under v1 the lines in file order.
    lines.sort_by_key(|(v2, _)| !*v2);
    lines
        .into_iter()
        .map(|(_, path)| parse_path(path))
        .find(|o| !o.is_empty())
        .unwrap_or_default()
}

/// Parses one cgroup path (`/kubepods/burstable/pod<uid>/<id>`).
pub fn parse_path(path: &str) -> CgroupOwner {
    let components: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    let pod_at = components.iter().rposition(|c| pod_uid(c).is_some());
    let mut out = CgroupOwner {
        pod_uid: pod_at.and_then(|i| pod_uid(components[i])),
        ..CgroupOwner::default()
    };
    let after = pod_at.map_or(0, |i| i + 1);
    if let Some((id, runtime)) = components[after..]
        .iter()
        .rev()
        .find_map(|c| container(c, pod_at.is_some()))
    {
        out.container_id = Some(id);
        out.runtime = runtime;
    }
    out
}

/// The pod UID a component names: `pod<uid>` (cgroupfs) or `kubepods[-qos]-pod<uid>.slice`
/// (systemd, underscores for dashes).
fn pod_uid(component: &str) -> Option<String> {
    let c = component.strip_suffix(".slice").unwrap_or(component);
    let at = c.rfind("pod")?;
    let before = &c[..at];
    // `pod<uid>` alone, or the last part of a systemd slice name (`…-pod<uid>`).
    if !(before.is_empty() || (before.ends_with('-') && before.starts_with("kube"))) {
        return None;
    }
    let uid = c[at + 3..].replace('_', "-");
    is_uid(&uid).then_some(uid)
}

/// A UID: 8-4-4-4-12 hex digits, or 32 hex digits (a static pod's hash).
fn is_uid(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    let parts: Vec<&str> = s.split('-').collect();
    match parts.as_slice() {
        [a] => hex(a, 32),
        [a, b, c, d, e] => hex(a, 8) && hex(b, 4) && hex(c, 4) && hex(d, 4) && hex(e, 12),
        _ => false,
    }
}

/// The container id a component names, and the runtime its shape tells. A bare id counts
/// under a pod (cgroupfs: containerd, dockershim) or under `docker/`'s parent, which the
/// caller cannot see: any bare 64-hex component is taken, as Docker's cgroupfs layout has it.
fn container(component: &str, in_pod: bool) -> Option<(String, Option<Runtime>)> {
    let c = component.strip_suffix(".scope").unwrap_or(component);
    let id = |s: &str| {
        (s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| s.to_ascii_lowercase())
    };
    if c.starts_with("crio-conmon-") {
        return None;
    }
    for (prefix, runtime) in [
        ("cri-containerd-", Runtime::Containerd),
        ("crio-", Runtime::CriO),
        ("docker-", Runtime::Docker),
        ("libpod-", Runtime::Podman),
    ] {
        if let Some(rest) = c.strip_prefix(prefix) {
            return id(rest).map(|i| (i, Some(runtime)));
        }
    }
    let bare = id(c)?;
    Some((bare, (!in_pod).then_some(Runtime::Docker)))
}

/// Reads and parses `<proc_root>/<pid>/cgroup`.
///
/// # Errors
///
/// The file cannot be read (the process is gone, or `proc_root` is not the host engine's
/// `/proc`), or is larger than [`MAX_CGROUP_BYTES`].
pub fn read(proc_root: &Path, pid: u32) -> std::io::Result<CgroupOwner> {
    read_counted(proc_root, pid, &mut 0)
}

/// [`read`], adding the bytes read to `bytes`.
///
/// # Errors
///
/// As [`read`].
pub fn read_counted(proc_root: &Path, pid: u32, bytes: &mut u64) -> std::io::Result<CgroupOwner> {
    let path = proc_root.join(pid.to_string()).join("cgroup");
    let text = crate::regular_file::read_capped(&path, MAX_CGROUP_BYTES)?;
    *bytes += text.len() as u64;
    Ok(parse(&String::from_utf8_lossy(&text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const UID: &str = "0d5c2a3e-4b1f-4c6d-9e8a-1f2b3c4d5e6f";
    const UID_: &str = "0d5c2a3e_4b1f_4c6d_9e8a_1f2b3c4d5e6f";
    const CID: &str = "6e9f7b1a2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7";

    fn owner(uid: Option<&str>, runtime: Option<Runtime>) -> CgroupOwner {
        CgroupOwner {
            pod_uid: uid.map(str::to_string),
            container_id: Some(CID.into()),
            runtime,
        }
    }

    #[test]
    fn cgroup_v2_paths_of_both_drivers_and_every_runtime() {
        let cases = [
            // systemd driver
            (
                format!(
                    "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{UID_}.slice/cri-containerd-{CID}.scope"
                ),
                owner(Some(UID), Some(Runtime::Containerd)),
            ),
            (
                format!("0::/kubepods.slice/kubepods-pod{UID_}.slice/crio-{CID}.scope"),
                owner(Some(UID), Some(Runtime::CriO)),
            ),
            (
                format!(
                    "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{UID_}.slice/docker-{CID}.scope"
                ),
                owner(Some(UID), Some(Runtime::Docker)),
            ),
            // cgroupfs driver
            (
                format!("0::/kubepods/burstable/pod{UID}/{CID}"),
                owner(Some(UID), None),
            ),
            (
                format!("0::/kubepods/pod{UID}/crio-{CID}"),
                owner(Some(UID), Some(Runtime::CriO)),
            ),
            // kind: a node in a container, with the systemd driver under kubelet.slice
            (
                format!(
                    "0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod{UID_}.slice/cri-containerd-{CID}.scope"
                ),
                owner(Some(UID), Some(Runtime::Containerd)),
            ),
            // Outside Kubernetes
            (
                format!("0::/system.slice/docker-{CID}.scope"),
                owner(None, Some(Runtime::Docker)),
            ),
            (
                format!("0::/machine.slice/libpod-{CID}.scope/container"),
                owner(None, Some(Runtime::Podman)),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(&format!("{text}\n")), want, "{text}");
        }
    }

    #[test]
    fn cgroup_v1_takes_the_first_hierarchy_naming_a_pod() {
        let text = format!(
            "12:pids:/\n\
             11:memory:/kubepods/besteffort/pod{UID}/{CID}\n\
             10:cpu,cpuacct:/kubepods/besteffort/pod{UID}/{CID}\n\
             1:name=systemd:/kubepods/besteffort/pod{UID}/{CID}\n\
             0::/\n"
        );
        assert_eq!(parse(&text), owner(Some(UID), None));
        let docker = format!("4:devices:/docker/{CID}\n1:name=systemd:/docker/{CID}\n");
        assert_eq!(parse(&docker), owner(None, Some(Runtime::Docker)));
    }

    #[test]
    fn static_pods_conmon_and_host_processes() {
        let hash = "7c0b3a1e2d4f5a6b7c8d9e0f1a2b3c4d";
        assert_eq!(
            parse_path(&format!("/kubepods/burstable/pod{hash}/{CID}")).pod_uid,
            Some(hash.into())
        );
        // CRI-O's monitor runs in the pod but in no container.
        let conmon = parse_path(&format!(
            "/kubepods.slice/kubepods-pod{UID_}.slice/crio-conmon-{CID}.scope"
        ));
        assert_eq!(conmon.pod_uid.as_deref(), Some(UID));
        assert_eq!(conmon.container_id, None);
        // The pod's own cgroup (a process placed there, not in a container).
        assert_eq!(
            parse_path(&format!("/kubepods/pod{UID}")),
            CgroupOwner {
                pod_uid: Some(UID.into()),
                ..CgroupOwner::default()
            }
        );
        for host in [
            "/",
            "/system.slice/nvidia-dcgm.service",
            "/user.slice/user-1000.slice/session-3.scope",
            // Look-alikes: not a UID, not under a kubepods slice, an id of the wrong length.
            "/kubepods/burstable/podnot-a-uid",
            "/system.slice/mypod0d5c2a3e_4b1f_4c6d_9e8a_1f2b3c4d5e6f.slice",
            "/docker/6e9f7b1a",
        ] {
            assert!(parse_path(host).is_empty(), "{host}");
        }
        // Malformed lines are skipped.
        assert!(parse("garbage\n\n0:/no-path-separator\n").is_empty());
    }

    #[test]
    fn read_takes_the_proc_root() {
        let dir = std::env::temp_dir().join(format!("dcgm-rs-cgroup-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("4242")).unwrap();
        std::fs::write(
            dir.join("4242/cgroup"),
            format!("0::/kubepods/pod{UID}/{CID}\n"),
        )
        .unwrap();
        assert_eq!(read(&dir, 4242).unwrap().pod_uid.as_deref(), Some(UID));
        assert!(read(&dir, 1).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
