//! Which container a process runs in, read from its control groups (`/proc/PID/cgroup`), the
//! way the kernel names them for the common runtimes: Docker (`/docker/ID`, or
//! `docker-ID.scope` under systemd), containerd and CRI-O under Kubernetes
//! (`/kubepods/…/podUID/ID`, or `kubepods-…-podUID.slice/cri-containerd-ID.scope` and
//! `crio-ID.scope` under systemd), and Podman (`libpod-ID.scope`). A process outside a container
//! (a user session's `session-N.scope`, a `system.slice` service) has none.

/// A container found in a process's cgroup path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    /// The runtime that named the cgroup: `docker`, `containerd`, `crio`, `podman`, or `k8s`
    /// where the path says Kubernetes but not which runtime.
    pub runtime: &'static str,
    /// The container id (64 hex digits).
    pub id: String,
    /// The Kubernetes pod's UID, with dashes, when the container runs in a pod.
    pub pod_uid: Option<String>,
}

impl Container {
    /// A short name for a narrow column: the runtime and the id's first 12 digits (as `docker
    /// ps` shows it), and for a pod the first 8 digits of its UID: `k8s:1a2b3c4d/0123456789ab`.
    pub fn short(&self) -> String {
        let id = &self.id[..12.min(self.id.len())];
        match &self.pod_uid {
            Some(uid) => format!("k8s:{}/{id}", &uid[..8.min(uid.len())]),
            None => format!("{}:{id}", self.runtime),
        }
    }
}

/// The container of a running process, `None` outside one or where `/proc/PID/cgroup` cannot
/// be read.
pub fn of_pid(pid: u32) -> Option<Container> {
    parse(&std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?)
}

/// The container named by the text of a `/proc/PID/cgroup` (one `ID:CONTROLLERS:PATH` line per
/// hierarchy; cgroup v2 has the one line `0::PATH`). The first line that names one wins.
pub fn parse(cgroup: &str) -> Option<Container> {
    cgroup.lines().find_map(|line| {
        let path = line.splitn(3, ':').nth(2)?;
        in_path(path)
    })
}

fn is_id(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn in_path(path: &str) -> Option<Container> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let kubernetes = parts.iter().any(|p| p.starts_with("kubepods"));
    let pod_uid = parts.iter().find_map(|p| pod_uid(p));
    // The innermost component that is a container id: a nested cgroup below it (a process's
    // own, as systemd makes them in a container) does not hide it.
    parts.iter().enumerate().rev().find_map(|(i, p)| {
        let name = p.strip_suffix(".scope").unwrap_or(p);
        let (runtime, id) = [
            ("containerd", "cri-containerd-"),
            ("crio", "crio-"),
            ("docker", "docker-"),
            ("podman", "libpod-"),
        ]
        .iter()
        .find_map(|(rt, prefix)| Some((*rt, name.strip_prefix(prefix)?)))
        .unwrap_or_else(|| {
            let parent = i.checked_sub(1).map(|j| parts[j]);
            let rt = match parent {
                Some("docker") => "docker",
                _ if kubernetes => "k8s",
                _ => "",
            };
            (rt, name)
        });
        (is_id(id) && !runtime.is_empty()).then(|| Container {
            runtime,
            id: id.to_string(),
            pod_uid: pod_uid.clone().filter(|_| kubernetes),
        })
    })
}

/// The pod UID of a `podUID` (cgroupfs driver) or `kubepods-QOS-podUID.slice` (systemd driver,
/// which writes the UID's dashes as underscores) component.
fn pod_uid(component: &str) -> Option<String> {
    let c = component.strip_suffix(".slice").unwrap_or(component);
    let uid = match c.rfind("-pod") {
        Some(at) => &c[at + 4..],
        None => c.strip_prefix("pod")?,
    };
    let uid = uid.replace('_', "-");
    (uid.len() == 36 && uid.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')).then_some(uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_ids_are_read_from_docker_kubernetes_and_podman_cgroups() {
        let id = "3f4e2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f";
        let uid = "0b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e";
        let under = uid.replace('-', "_");
        let cases = [
            (format!("12:memory:/docker/{id}\n0::/"), "docker", None),
            (
                format!("0::/system.slice/docker-{id}.scope"),
                "docker",
                None,
            ),
            (
                format!("0::/kubepods/burstable/pod{uid}/{id}"),
                "k8s",
                Some(uid),
            ),
            (
                format!(
                    "0::/kubepods.slice/kubepods-besteffort.slice/\
                     kubepods-besteffort-pod{under}.slice/cri-containerd-{id}.scope"
                ),
                "containerd",
                Some(uid),
            ),
            (
                format!("0::/kubepods.slice/kubepods-pod{under}.slice/crio-{id}.scope"),
                "crio",
                Some(uid),
            ),
            (
                format!(
                    "0::/user.slice/user-1000.slice/user@1000.service/app.slice/\
                     libpod-{id}.scope/container"
                ),
                "podman",
                None,
            ),
        ];
        for (text, runtime, pod) in cases {
            let c = parse(&text).unwrap_or_else(|| panic!("none in {text}"));
            assert_eq!(c.runtime, runtime, "{text}");
            assert_eq!(c.id, id, "{text}");
            assert_eq!(c.pod_uid.as_deref(), pod, "{text}");
        }
        let k8s = parse(&format!("0::/kubepods/pod{uid}/{id}")).unwrap();
        assert_eq!(k8s.short(), "k8s:0b1c2d3e/3f4e2a1b9c8d");
        assert_eq!(
            parse(&format!("0::/docker/{id}")).unwrap().short(),
            "docker:3f4e2a1b9c8d"
        );
        // A user session and a service are not containers.
        for text in [
            "0::/user.slice/user-1000.slice/session-3.scope",
            "0::/system.slice/ssh.service",
            "0::/",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
    }
}
