//! Kubernetes Dynamic Resource Allocation (`--kubernetes-enable-dra`): the GPUs and MIG
//! instances that ResourceClaims give containers, from the kubelet's pod-resources answer
//! (`ContainerResources.dynamic_resources`), mapped to DCGM's GPUs without the API server.
//!
//! The kubelet names each claimed device by its DRA driver, pool and device name and by the
//! CDI devices the driver prepared for it (`k8s.gpu.nvidia.com/claim=<claim uid>-gpu-0`). The
//! NVIDIA DRA driver (`gpu.nvidia.com`) writes those CDI devices into a spec file per claim
//! in its CDI directory ([`crate::attribution::cdi`]); the device's entry there says what the container
//! gets. A device is mapped, in this order, by:
//!
//! 1. a GPU or MIG UUID in the device's environment (`NVIDIA_VISIBLE_DEVICES`,
//!    `CUDA_VISIBLE_DEVICES`: earlier driver releases and MPS sharing set them) or in its
//!    annotations;
//! 2. its device nodes, as the driver writes them today (`NVIDIA_VISIBLE_DEVICES=void`):
//!    `/dev/nvidia<minor>` is a whole GPU, found by its minor in the NVIDIA driver's
//!    `/proc/driver/nvidia/gpus/*/information` (`Device Minor:`, `GPU UUID:`); a MIG device
//!    adds `/dev/nvidia-caps/nvidia-cap<N>`, whose minor `/proc/driver/nvidia-caps/mig-minors`
//!    gives as `gpu<minor>/gi<id>/access N`, the GPU instance;
//! 3. the spec's own environment or annotations, when the spec has that one device.
//!
//! Devices of other drivers are ignored. A device that cannot be mapped (its CDI device in
//! no spec, a spec file that does not parse, a missing directory) is left out and logged,
//! once until the reason changes; the others are mapped. The log says which source mapped
//! each device.
//!
//! With `--kubernetes-dra-resource-slices`, a device that no CDI spec maps is looked up in
//! its driver's ResourceSlices through the API server ([`crate::attribution::resource_slice`]) by its
//! pool and device name; its `uuid` attribute names the GPU or MIG device. How the devices
//! of the last kubelet answer were mapped is the `dcgm_exporter_dra_devices` gauge
//! ([`DraStats`](super::dra_types::DraStats): `source="cdi"`, `"resource_slice"`, `"unmapped"`), and the log line of a
//! device, written when it is first mapped, names the source.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::attribution::cdi::{self, Found, SpecCache};
use crate::attribution::dra_target::Target;
use crate::attribution::dra_types::{CdiState, DraClaim, DraConfig};
use crate::attribution::kubelet_wire::{ClaimResource, ListPodResourcesResponse};
use crate::attribution::kubernetes::{DeviceMap, PodInfo};
use crate::attribution::resource_slice::ResourceSlices;

/// The NVIDIA DRA driver for GPUs (k8s-dra-driver-gpu's `DriverName`).
pub const NVIDIA_GPU_DRIVER: &str = "gpu.nvidia.com";

/// The environment variables whose value may list the device's UUIDs.
const UUID_ENV: [&str; 2] = ["NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"];

/// The largest `/proc/driver/...` file read.
const MAX_PROC_BYTES: u64 = 64 * 1024;

/// Whether `s` has the shape of a GPU or MIG device UUID.
fn is_uuid(s: &str) -> bool {
    (s.starts_with("GPU-") || s.starts_with("MIG-")) && s.len() > 4
}

fn target_of_uuid(u: &str) -> Target {
    if u.starts_with("MIG-") {
        Target::MigUuid(u.to_string())
    } else {
        Target::Gpu(u.to_string())
    }
}

/// The one UUID in a set of environment entries and annotations, with where it was.
fn one_uuid(
    edits: &cdi::ContainerEdits,
    annotations: &BTreeMap<String, String>,
) -> Option<(String, String)> {
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    for name in UUID_ENV {
        if let Some(v) = edits.env_var(name) {
            for u in v.split(',').map(str::trim).filter(|u| is_uuid(u)) {
                found.entry(u.to_string()).or_insert(format!("env {name}"));
            }
        }
    }
    for (k, v) in annotations {
        for u in v.split(',').map(str::trim).filter(|u| is_uuid(u)) {
            found
                .entry(u.to_string())
                .or_insert(format!("annotation {k}"));
        }
    }
    if found.len() == 1 {
        found.into_iter().next()
    } else {
        None
    }
}

/// The NVIDIA driver's device tables under `<proc root>/driver`: GPU minors to UUIDs, and
/// MIG capability minors to (GPU minor, GPU instance).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct NvidiaProc {
    /// Device minor → GPU UUID.
    pub gpus: BTreeMap<u32, String>,
    /// `nvidia-cap<N>` minor → (GPU minor, GPU-instance id), for the GPU instances' access
    /// capabilities.
    pub gi_caps: BTreeMap<u32, (u32, u32)>,
    /// Why a table could not be read, if one could not.
    pub problems: Vec<String>,
}

impl NvidiaProc {
    /// Reads `<proc_root>/driver/nvidia/gpus/*/information` and
    /// `<proc_root>/driver/nvidia-caps/mig-minors`; what cannot be read is in
    /// [`NvidiaProc::problems`].
    pub fn read(proc_root: &Path) -> Self {
        let mut me = Self::default();
        let gpus = proc_root.join("driver/nvidia/gpus");
        match std::fs::read_dir(&gpus) {
            Ok(entries) => {
                for e in entries.flatten() {
                    let file = e.path().join("information");
                    match crate::regular_file::read_capped(&file, MAX_PROC_BYTES) {
                        Ok(b) => {
                            let text = String::from_utf8_lossy(&b);
                            if let Some((minor, uuid)) = parse_information(&text) {
                                me.gpus.insert(minor, uuid);
                            }
                        }
                        Err(e) => me
                            .problems
                            .push(format!("cannot read {}: {e}", file.display())),
                    }
                }
            }
            Err(e) => me
                .problems
                .push(format!("cannot list {}: {e}", gpus.display())),
        }
        let minors = proc_root.join("driver/nvidia-caps/mig-minors");
        match crate::regular_file::read_capped(&minors, MAX_PROC_BYTES) {
            Ok(b) => me.gi_caps = parse_mig_minors(&String::from_utf8_lossy(&b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => me
                .problems
                .push(format!("cannot read {}: {e}", minors.display())),
        }
        me
    }
}

/// `Device Minor:` and `GPU UUID:` of a `/proc/driver/nvidia/gpus/<bus>/information` file.
///
/// ```
/// use dcgm_exporter::attribution::dra::parse_information;
/// let text = "Model:           NVIDIA H100\nGPU UUID:        GPU-0a1b\nDevice Minor:    3\n";
/// assert_eq!(parse_information(text), Some((3, "GPU-0a1b".to_string())));
/// ```
pub fn parse_information(text: &str) -> Option<(u32, String)> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
    };
    let minor = field("Device Minor:")?.parse().ok()?;
    let uuid = field("GPU UUID:").filter(|u| is_uuid(u))?;
    Some((minor, uuid))
}

/// The GPU instances' access capabilities of `/proc/driver/nvidia-caps/mig-minors`
/// (`gpu0/gi1/access 5`): capability minor → (GPU minor, GPU instance). The compute
/// instances' lines (`gpu0/gi1/ci0/access 6`) are not needed.
pub fn parse_mig_minors(text: &str) -> BTreeMap<u32, (u32, u32)> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((path, minor)) = line.trim().split_once(' ') else {
            continue;
        };
        let parts: Vec<&str> = path.split('/').collect();
        if let [gpu, gi, "access"] = parts.as_slice()
            && let (Some(g), Some(i), Ok(m)) = (
                gpu.strip_prefix("gpu").and_then(|g| g.parse().ok()),
                gi.strip_prefix("gi").and_then(|i| i.parse().ok()),
                minor.trim().parse(),
            )
        {
            out.insert(m, (g, i));
        }
    }
    out
}

/// The minor of a `/dev/nvidia<N>` path.
fn gpu_minor(path: &str) -> Option<u32> {
    path.strip_prefix("/dev/nvidia")?.parse().ok()
}

/// The minor of a `/dev/nvidia-caps/nvidia-cap<N>` path.
fn cap_minor(path: &str) -> Option<u32> {
    path.strip_prefix("/dev/nvidia-caps/nvidia-cap")?
        .parse()
        .ok()
}

/// What the device nodes of a CDI device say it is.
fn target_of_nodes(nodes: &[cdi::DeviceNode], nv: &NvidiaProc) -> Result<(Target, String), String> {
    let hosts: Vec<&str> = nodes.iter().map(cdi::DeviceNode::host).collect();
    let why_tables = || {
        if nv.problems.is_empty() {
            String::new()
        } else {
            format!(" ({})", nv.problems.join("; "))
        }
    };
    let caps: Vec<u32> = hosts.iter().filter_map(|p| cap_minor(p)).collect();
    if !caps.is_empty() {
        let Some(&(gpu, gi)) = caps.iter().find_map(|c| nv.gi_caps.get(c)) else {
            return Err(format!(
                "its MIG capability devices (nvidia-cap{}) are in no GPU instance's line of \
                 the driver's mig-minors{}",
                caps.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", nvidia-cap"),
                why_tables()
            ));
        };
        let Some(uuid) = nv.gpus.get(&gpu) else {
            return Err(format!(
                "its GPU minor {gpu} (from mig-minors) has no driver information file{}",
                why_tables()
            ));
        };
        return Ok((
            Target::Mig {
                gpu_uuid: uuid.clone(),
                gpu_instance: gi,
            },
            format!(
                "device nodes /dev/nvidia-caps/nvidia-cap* (GPU minor {gpu}, GPU instance {gi})"
            ),
        ));
    }
    let minors: BTreeSet<u32> = hosts.iter().filter_map(|p| gpu_minor(p)).collect();
    match minors.into_iter().collect::<Vec<_>>().as_slice() {
        [m] => match nv.gpus.get(m) {
            Some(uuid) => Ok((
                Target::Gpu(uuid.clone()),
                format!("device node /dev/nvidia{m}"),
            )),
            None => Err(format!(
                "its device node /dev/nvidia{m} is no GPU in the driver's information files{}",
                why_tables()
            )),
        },
        [] => Err("it names no GPU UUID and no /dev/nvidia<N> device node".into()),
        many => Err(format!(
            "it has {} GPU device nodes and no UUID to tell which",
            many.len()
        )),
    }
}

/// What one CDI device is, and the source that told.
fn target_of(found: Found<'_>, nv: &NvidiaProc) -> Result<(Target, String), String> {
    let file = found.path.display();
    if let Some((u, from)) = one_uuid(&found.device.container_edits, &found.device.annotations) {
        return Ok((
            target_of_uuid(&u),
            format!("{from} of the CDI device in {file}"),
        ));
    }
    let nodes = target_of_nodes(&found.device.container_edits.device_nodes, nv);
    if let Ok((t, from)) = nodes {
        return Ok((t, format!("{from} of the CDI device in {file}")));
    }
    if found.spec.devices.len() == 1
        && let Some((u, from)) = one_uuid(&found.spec.container_edits, &found.spec.annotations)
    {
        return Ok((target_of_uuid(&u), format!("spec {from} in {file}")));
    }
    Err(format!("in {file}: {}", nodes.unwrap_err()))
}

/// Maps the kubelet's dynamic resources to GPUs, logging what it did once per change.
#[derive(Debug)]
pub struct DraResolver {
    cfg: DraConfig,
    /// The CDI directory's specs, read again only where they changed.
    specs: SpecCache,
    /// The ResourceSlice client, with `--kubernetes-dra-resource-slices`.
    slices: Option<ResourceSlices>,
    /// The lines logged after the last refresh (each logged again only after it was gone).
    logged: BTreeSet<(bool, String)>,
}

impl DraResolver {
    /// A resolver reading `cfg`'s directory and tables.
    pub fn new(cfg: DraConfig) -> Self {
        Self {
            slices: cfg.resource_slices.clone().map(ResourceSlices::new),
            specs: {
                let mut c = SpecCache::new(cfg.cdi_dir.clone());
                c.budget = cfg.budget;
                c
            },
            cfg,
            logged: BTreeSet::new(),
        }
    }

    /// The kubelet could not be asked: no counts to export.
    pub fn failed(&self) {
        self.cfg.stats.set(None);
    }

    /// Adds the holders of the NVIDIA DRA devices in `resp` to `map` (under
    /// `Target::key`); returns how many devices were mapped. The CDI directory and the
    /// driver's tables are read only when some container has an NVIDIA DRA device.
    pub fn add_to(&mut self, resp: &ListPodResourcesResponse, map: &mut DeviceMap) -> usize {
        let mut lines: BTreeSet<(bool, String)> = BTreeSet::new();
        let claimed: Vec<(&str, &str, &str, &str, &str, &ClaimResource)> = resp
            .pod_resources
            .iter()
            .flat_map(|p| {
                p.containers.iter().flat_map(move |c| {
                    c.dynamic_resources.iter().flat_map(move |d| {
                        d.claim_resources.iter().map(move |r| {
                            (
                                p.name.as_str(),
                                p.namespace.as_str(),
                                c.name.as_str(),
                                d.claim_name.as_str(),
                                d.claim_namespace.as_str(),
                                r,
                            )
                        })
                    })
                })
            })
            .filter(|(.., r)| r.driver_name == NVIDIA_GPU_DRIVER)
            .collect();
        let mut mapped = 0;
        let mut counts = [0usize; 3];
        if !claimed.is_empty() {
            let dir = self.cfg.cdi_dir.clone();
            let dir = &dir;
            let pass = self.specs.pass().map_err(|e| e.to_string());
            match &pass {
                Ok(p) => {
                    for (_, e) in &p.rejected {
                        lines.insert((
                            true,
                            format!("DRA: {e}; its claims' devices are not mapped"),
                        ));
                    }
                    if p.over_limit > 0 {
                        lines.insert((
                            true,
                            format!(
                                "DRA: the CDI spec directory {} holds {} spec files; only the \
                                 first {} by name are read, the claims of the others are not \
                                 mapped",
                                dir.display(),
                                p.files,
                                cdi::MAX_SPECS
                            ),
                        ));
                    }
                    if p.listing_cut {
                        lines.insert((
                            true,
                            format!(
                                "DRA: the CDI spec directory {} has more than {} entries; the \
                                 rest are not looked at",
                                dir.display(),
                                cdi::MAX_LISTED
                            ),
                        ));
                    }
                    if p.deferred > 0 {
                        lines.insert((
                            false,
                            format!(
                                "DRA: more CDI spec files changed in {} than one pass reads ({} \
                                 MiB, {:?}); the others are read in the next passes and keep \
                                 their last good spec meanwhile",
                                dir.display(),
                                cdi::MAX_PASS_BYTES >> 20,
                                cdi::PASS_BUDGET
                            ),
                        ));
                    }
                }
                Err(e) => {
                    lines.insert((
                        true,
                        format!(
                            "DRA: cannot read the CDI spec directory {}: {e}; no DRA device is \
                             mapped to a GPU (mount the DRA driver's CDI directory and pass \
                             --cdi-spec-dir)",
                            dir.display()
                        ),
                    ));
                }
            }
            self.cfg.stats.set_cdi(CdiState {
                dir: dir.clone(),
                pass: pass.clone(),
                reads: self.specs.reads(),
                at: std::time::Instant::now(),
            });
            let report = pass.unwrap_or_default();
            let registry = self.specs.registry();
            let nv = NvidiaProc::read(&self.cfg.proc_root);
            for (pod, namespace, container, claim, claim_ns, r) in claimed {
                let what = format!(
                    "DRA: claim {claim_ns}/{claim} device {}/{}/{} of pod {namespace}/{pod} \
                     container {container}",
                    r.driver_name, r.pool_name, r.device_name
                );
                let resolved = if r.cdi_devices.is_empty() {
                    Err("the kubelet names no CDI device for it".to_string())
                } else {
                    let mut why = Vec::new();
                    let mut hit = None;
                    for d in &r.cdi_devices {
                        match registry.device(&d.name) {
                            Some(found) => match target_of(found, &nv) {
                                Ok(t) => {
                                    hit = Some(t);
                                    break;
                                }
                                Err(e) => why.push(format!("CDI device {} {e}", d.name)),
                            },
                            None => why.push(format!(
                                "CDI device {} is in no spec of the {} read from {}{}",
                                d.name,
                                registry.len(),
                                dir.display(),
                                report.skipped()
                            )),
                        }
                    }
                    hit.ok_or_else(|| why.join("; "))
                };
                let resolved = match (resolved, &mut self.slices) {
                    (Err(why), Some(slices)) => {
                        match slices.lookup(&r.driver_name, &r.pool_name, &r.device_name) {
                            Ok((t, source)) => Ok((t, source, 1)),
                            Err(e) => Err(format!("{why}; {e}")),
                        }
                    }
                    (resolved, _) => resolved.map(|(t, source)| (t, source, 0)),
                };
                match resolved {
                    Ok((target, source, from)) => {
                        counts[from] += 1;
                        let key = target.key();
                        lines.insert((
                            false,
                            format!("{what}: {} from {source}", key.trim_start_matches("dra:")),
                        ));
                        let info = PodInfo {
                            pod: pod.to_string(),
                            namespace: namespace.to_string(),
                            container: container.to_string(),
                            vgpu: None,
                            dra: Some(DraClaim {
                                claim_name: claim.to_string(),
                                claim_namespace: claim_ns.to_string(),
                                driver_name: r.driver_name.clone(),
                                pool_name: r.pool_name.clone(),
                                device_name: r.device_name.clone(),
                            }),
                        };
                        let holders = map.entry(key).or_default();
                        holders.retain(|h| *h != info);
                        holders.push(info);
                        mapped += 1;
                    }
                    Err(why) => {
                        counts[2] += 1;
                        lines.insert((true, format!("{what} is not mapped to a GPU: {why}")));
                    }
                }
            }
        }
        for (warn, line) in lines.difference(&self.logged) {
            if *warn {
                log::warn!("{line}");
            } else {
                log::info!("{line}");
            }
        }
        self.logged = lines;
        self.cfg.stats.set(Some(counts));
        mapped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mig_minors_give_gpu_instances_and_skip_compute_instances() {
        let m = parse_mig_minors(
            "config 1\nmonitor 2\ngpu0/gi0/access 3\ngpu0/gi0/ci0/access 4\ngpu1/gi2/access 21\nbad line here\n",
        );
        assert_eq!(m, BTreeMap::from([(3, (0, 0)), (21, (1, 2))]));
    }

    #[test]
    fn device_nodes_name_a_gpu_or_a_mig_instance() {
        let nv = NvidiaProc {
            gpus: BTreeMap::from([(0, "GPU-a".to_string()), (1, "GPU-b".to_string())]),
            gi_caps: BTreeMap::from([(21, (1, 2))]),
            problems: vec![],
        };
        let node = |p: &str| cdi::DeviceNode {
            path: p.into(),
            host_path: None,
        };
        let t = |nodes: &[&str]| {
            target_of_nodes(&nodes.iter().map(|p| node(p)).collect::<Vec<_>>(), &nv).map(|t| t.0)
        };
        assert_eq!(
            t(&["/dev/nvidia1", "/dev/dri/card1"]),
            Ok(Target::Gpu("GPU-b".into()))
        );
        assert_eq!(
            t(&[
                "/dev/nvidia1",
                "/dev/nvidia-caps/nvidia-cap21",
                "/dev/nvidia-caps/nvidia-cap22"
            ]),
            Ok(Target::Mig {
                gpu_uuid: "GPU-b".into(),
                gpu_instance: 2
            })
        );
        assert!(t(&["/dev/nvidia7"]).unwrap_err().contains("/dev/nvidia7"));
        assert!(
            t(&["/dev/nvidia0", "/dev/nvidia1"])
                .unwrap_err()
                .contains("2 GPU device nodes")
        );
        assert!(
            t(&["/dev/nvidia-caps/nvidia-cap9"])
                .unwrap_err()
                .contains("nvidia-cap9")
        );
        assert!(t(&[]).is_err());
    }

    #[test]
    fn uuids_come_from_the_environment_or_annotations_when_there_is_one() {
        let edits = |env: &[&str]| cdi::ContainerEdits {
            env: env.iter().map(|s| s.to_string()).collect(),
            device_nodes: vec![],
        };
        let none = BTreeMap::new();
        assert_eq!(
            one_uuid(&edits(&["NVIDIA_VISIBLE_DEVICES=void"]), &none),
            None
        );
        assert_eq!(
            one_uuid(&edits(&["NVIDIA_VISIBLE_DEVICES=GPU-x"]), &none).map(|u| u.0),
            Some("GPU-x".to_string())
        );
        assert_eq!(
            one_uuid(&edits(&["CUDA_VISIBLE_DEVICES=GPU-x,GPU-y"]), &none),
            None,
            "two UUIDs tell no single device"
        );
        let ann = BTreeMap::from([("gpu.nvidia.com/uuid".to_string(), "MIG-m".to_string())]);
        let (u, from) = one_uuid(&edits(&[]), &ann).unwrap();
        assert_eq!(
            (u.as_str(), from.as_str()),
            ("MIG-m", "annotation gpu.nvidia.com/uuid")
        );
        assert_eq!(target_of_uuid("MIG-m"), Target::MigUuid("MIG-m".into()));
    }
}
