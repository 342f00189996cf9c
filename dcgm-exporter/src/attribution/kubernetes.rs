//! Kubernetes attribution: which pod and container hold each GPU or MIG instance, from the
//! kubelet's pod-resources API (its messages and the `List` call are
//! [`super::kubelet_wire`]'s), as `pod`, `namespace` and `container` labels (dcgm-exporter's
//! names). With `--kubernetes-enable-dra`, the devices of Dynamic Resource Allocation claims
//! (`dynamic_resources`) are mapped too ([`super::dra`]).

use std::collections::HashMap;
use std::path::PathBuf;

use dcgm_prometheus::{EntityIdentity, LabelSet};

use super::dra_target::identity_keys;
use super::dra_types::{DraClaim, DraConfig};
use super::kubelet_wire::ListPodResourcesResponse;

/// Resource names counted as NVIDIA GPUs besides `nvidia.com/gpu` and `nvidia.com/mig-*`.
const GPU_RESOURCE: &str = "nvidia.com/gpu";
const MIG_RESOURCE_PREFIX: &str = "nvidia.com/mig-";

/// How whole GPUs are named in the kubelet's device ids (`--kubernetes-gpu-id-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GpuIdType {
    /// The GPU UUID (`GPU-…`), as NVIDIA's device plugin reports it.
    Uid,
    /// `nvidia<index>`.
    DeviceName,
}

/// One container holding a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodInfo {
    /// Pod name.
    pub pod: String,
    /// Pod namespace.
    pub namespace: String,
    /// Container name.
    pub container: String,
    /// The DRA claim it holds the device through (`None`: the device plugin's resources).
    pub dra: Option<DraClaim>,
    /// The replica of a shared GPU it holds (`N` of a time-sliced `GPU-…::N`, `M` of GKE's
    /// `nvidiaN/vgpuM`), for `--kubernetes-virtual-gpus`' `vgpu` label.
    pub vgpu: Option<String>,
}

/// Device id → the containers holding it.
pub type DeviceMap = HashMap<String, Vec<PodInfo>>;

/// Settings of the attribution.
#[derive(Debug, Clone)]
pub struct PodMapper {
    /// The kubelet's pod-resources socket.
    pub socket: PathBuf,
    /// How whole GPUs are named.
    pub id_type: GpuIdType,
    /// Resource names counted as GPUs besides the standard ones.
    pub extra_resources: Vec<String>,
    /// Add `pod_uid`: the UID read from the cgroup of the pod's processes on the device
    /// (the kubelet API does not carry UIDs); left out while none is known.
    pub pod_uid: bool,
    /// Map the devices of DRA claims too (`--kubernetes-enable-dra`).
    pub dra: Option<DraConfig>,
    /// `--kubernetes-virtual-gpus`: every pod sharing a device labels a series of its own
    /// (with `vgpu`), rather than the last one listed.
    pub virtual_gpus: bool,
}

impl PodMapper {
    /// Whether the resource is an NVIDIA GPU or MIG device.
    fn counts(&self, resource: &str) -> bool {
        resource == GPU_RESOURCE
            || resource.starts_with(MIG_RESOURCE_PREFIX)
            || self.extra_resources.iter().any(|r| r == resource)
    }

    /// Device id → the containers holding it, in the order listed, from one `List` answer.
    /// Several containers hold one device with time slicing; the GPU's series are labelled
    /// with the last one, as in dcgm-exporter.
    pub fn device_map(&self, resp: &ListPodResourcesResponse) -> HashMap<String, Vec<PodInfo>> {
        let mut map: HashMap<String, Vec<PodInfo>> = HashMap::new();
        for pod in &resp.pod_resources {
            for c in &pod.containers {
                for d in c.devices.iter().filter(|d| self.counts(&d.resource_name)) {
                    for id in &d.device_ids {
                        let info = PodInfo {
                            pod: pod.name.clone(),
                            namespace: pod.namespace.clone(),
                            container: c.name.clone(),
                            dra: None,
                            vgpu: replica(id),
                        };
                        for key in device_keys(id) {
                            let holders = map.entry(key).or_default();
                            holders.retain(|h| *h != info);
                            holders.push(info.clone());
                        }
                    }
                }
            }
        }
        map
    }

    /// Every container holding `id`'s device (a GPU or MIG instance), in the kubelet's order:
    /// through the device plugin's resources, else through DRA claims.
    pub fn holders<'a>(
        &self,
        map: &'a HashMap<String, Vec<PodInfo>>,
        id: &EntityIdentity,
    ) -> &'a [PodInfo] {
        let keys: Vec<String> = match &id.mig {
            // MIG instances: by MIG UUID, and as `<gpu>-<instance>` (the old `MIG-GPU-…/gi/ci`
            // and GKE `nvidiaN/giM` forms map there).
            Some(m) => m
                .uuid
                .iter()
                .cloned()
                .chain(m.instance_id.map(|gi| format!("{}-{gi}", id.gpu)))
                .chain(
                    m.instance_id
                        .map(|gi| format!("{}-{gi}", id.uuid.trim_start_matches("GPU-"))),
                )
                .collect(),
            None => vec![match self.id_type {
                GpuIdType::Uid => id.uuid.clone(),
                GpuIdType::DeviceName => format!("nvidia{}", id.gpu),
            }],
        };
        let dra = if self.dra.is_some() {
            identity_keys(id)
        } else {
            Vec::new()
        };
        keys.iter()
            .chain(&dra)
            .find_map(|k| map.get(k))
            .map_or(&[], Vec::as_slice)
    }

    /// The labels of the pod holding `id`'s device, if any (the last one listed); `pod_uid`
    /// (with `--kubernetes-enable-pod-uid`) from `uid_of` when it knows the pod's UID; for a
    /// DRA claim, its `dra_*` labels (and, on a MIG instance, `dra_mig_profile` and
    /// `dra_mig_device_uuid`, as DCGM names them).
    pub fn labels(
        &self,
        map: &HashMap<String, Vec<PodInfo>>,
        id: &EntityIdentity,
        uid_of: impl Fn(&PodInfo) -> Option<String>,
    ) -> Vec<LabelSet> {
        let holders = self.holders(map, id);
        if self.virtual_gpus {
            return holders
                .iter()
                .map(|info| {
                    let mut set = self.labels_of(info, id, &uid_of);
                    if let Some(v) = &info.vgpu {
                        set.push(("vgpu".into(), v.clone()));
                    }
                    set
                })
                .collect();
        }
        let Some(info) = holders.last() else {
            return Vec::new();
        };
        vec![self.labels_of(info, id, &uid_of)]
    }

    /// The labels of one container holding `id`'s device.
    fn labels_of(
        &self,
        info: &PodInfo,
        id: &EntityIdentity,
        uid_of: &impl Fn(&PodInfo) -> Option<String>,
    ) -> LabelSet {
        let mut set = vec![
            ("pod".to_string(), info.pod.clone()),
            ("namespace".to_string(), info.namespace.clone()),
            ("container".to_string(), info.container.clone()),
        ];
        if self.pod_uid
            && let Some(uid) = uid_of(info)
        {
            set.push(("pod_uid".into(), uid));
        }
        if let Some(d) = &info.dra {
            for (name, value) in [
                ("dra_claim_name", &d.claim_name),
                ("dra_claim_namespace", &d.claim_namespace),
                ("dra_driver_name", &d.driver_name),
                ("dra_pool_name", &d.pool_name),
                ("dra_device_name", &d.device_name),
            ] {
                set.push((name.into(), value.clone()));
            }
            if let Some(m) = &id.mig {
                if !m.profile.is_empty() {
                    set.push(("dra_mig_profile".into(), m.profile.clone()));
                }
                if let Some(u) = &m.uuid {
                    set.push(("dra_mig_device_uuid".into(), u.clone()));
                }
            }
        }
        set
    }
}

/// The replica a shared device id names: `N` of `…::N` (the device plugin's time slicing and
/// MPS), `M` of GKE's `nvidiaN/vgpuM`.
pub fn replica(id: &str) -> Option<String> {
    if let Some((_, r)) = id.rsplit_once("::") {
        return Some(r.to_string());
    }
    id.split_once("/vgpu").map(|(_, r)| r.to_string())
}

/// The keys a kubelet device id is known by: the id itself; without a sharing suffix
/// (`::N` of time slicing, `/vgpuN` of GKE); GKE's MIG form `nvidiaN/giM` as `N-M`; the old
/// `MIG-GPU-<uuid>/<gi>/<ci>` form as `<uuid>-<gi>` (matched against the parent's UUID).
pub fn device_keys(id: &str) -> Vec<String> {
    let mut keys = vec![id.to_string()];
    let mut base = id;
    if let Some((b, _)) = base.split_once("::") {
        base = b;
    }
    if let Some((b, _)) = base.split_once("/vgpu") {
        base = b;
    }
    if base != id {
        keys.push(base.to_string());
    }
    if let Some(rest) = base.strip_prefix("nvidia")
        && let Some((gpu, gi)) = rest.split_once("/gi")
        && gpu.parse::<u32>().is_ok()
        && gi.parse::<u32>().is_ok()
    {
        keys.push(format!("{gpu}-{gi}"));
    }
    if let Some(rest) = base.strip_prefix("MIG-GPU-") {
        let mut parts = rest.split('/');
        if let (Some(uuid), Some(gi)) = (parts.next(), parts.next()) {
            keys.push(format!("{uuid}-{gi}"));
        }
    }
    keys
}
