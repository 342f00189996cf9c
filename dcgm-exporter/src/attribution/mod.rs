//! The workload labels of the GPUs: Kubernetes pods (from the [`PodCache`] the kubelet
//! refresher keeps, never from the kubelet itself, so a collection does not wait on it), HPC
//! jobs (read from the mapping directory before each collection, bounded, never blocking),
//! and the pods of the processes on the GPUs (their cgroups, [`pod_processes`]), given
//! to the collector before each collection.

pub mod cdi;
pub mod cgroup;
pub mod cri;
pub mod dra;
pub(crate) mod dra_target;
pub mod dra_types;
pub mod hpc;
pub mod kubelet_wire;
pub mod kubernetes;
pub mod pod_labels;
pub mod pod_processes;
pub mod pods;
pub mod resource_slice;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dcgm_prometheus::{
    Collector, ExporterCounter, GpuProcess, LabelSet, memory_by_owner, sm_util_by_owner,
};

use crate::attribution::cgroup::CgroupOwner;
use crate::attribution::hpc::HpcJobs;
use crate::attribution::kubernetes::{PodInfo, PodMapper};
use crate::attribution::pod_processes::{PodMatch, match_pods, owner_labels};
use crate::attribution::pods::PodCache;

/// The name of the job-info series of `--hpc-job-info-series`.
pub const HPC_JOB_INFO: &str = "DCGM_EXP_HPC_JOB_INFO";

/// What to attribute the GPUs to, and where from.
#[derive(Debug, Clone)]
pub struct AttributionConfig {
    /// The HPC job-mapping directory (`--hpc-job-mapping-dir`).
    pub hpc_dir: Option<PathBuf>,
    /// Export the jobs as [`HPC_JOB_INFO`] series rather than an `hpc_job` label on every
    /// series (`--hpc-job-info-series`).
    pub hpc_info_series: bool,
    /// Where the host engine's processes are seen (`--proc-root`, default `/proc`).
    pub proc_root: PathBuf,
    /// Whether the host engine runs on this host (the embedded engine, a unix socket,
    /// `localhost`, a loopback address): the process ids it reports are looked up in
    /// `proc_root` only then, as another host's would name unrelated processes here.
    pub local_engine: bool,
    /// Where the HPC directory's state goes for `/health` (shared by the collectors).
    pub hpc_board: Option<crate::health::SourceBoard>,
    /// With `--container-labels`: the container runtime's CRI socket.
    pub container_runtime: Option<PathBuf>,
    /// With `--kubernetes-enable-pod-labels`: the service account's directory and the
    /// allow-list of label keys.
    pub pod_labels: Option<(PathBuf, crate::attribution::pod_labels::Allowlist)>,
}

impl Default for AttributionConfig {
    fn default() -> Self {
        Self {
            hpc_dir: None,
            hpc_info_series: false,
            proc_root: PathBuf::from("/proc"),
            local_engine: true,
            hpc_board: None,
            container_runtime: None,
            pod_labels: None,
        }
    }
}

/// Kubernetes pods, HPC jobs and the pods of the GPUs' processes.
#[derive(Debug)]
pub struct Attribution {
    pods: Option<(PodMapper, Arc<PodCache>)>,
    hpc: Option<HpcJobs>,
    hpc_info_series: bool,
    proc_root: PathBuf,
    local_engine: bool,
    remote_warned: bool,
    /// The last failure to read DCGM's process lists, logged once.
    processes_failing: Option<String>,
    /// The last failure to read a process's cgroup (other than the process being gone).
    cgroup_failing: Option<String>,
    /// The last failure to read DCGM's process statistics, logged once.
    pid_stats_failing: Option<String>,
    /// With `--container-labels`: the container runtime.
    containers: Option<crate::attribution::cri::Containers>,
    /// With `--kubernetes-enable-pod-labels`: the pods' labels from the API server.
    pod_labels: Option<crate::attribution::pod_labels::PodLabels>,
}

impl Attribution {
    /// Pods from `pods`' cache (with `--kubernetes`), jobs and processes as `cfg` says.
    pub fn new(pods: Option<(PodMapper, Arc<PodCache>)>, cfg: AttributionConfig) -> Self {
        Self {
            pods,
            hpc: cfg.hpc_dir.map(|d| {
                let jobs = HpcJobs::new(d);
                match cfg.hpc_board {
                    Some(b) => jobs.with_board(b),
                    None => jobs,
                }
            }),
            hpc_info_series: cfg.hpc_info_series,
            proc_root: cfg.proc_root,
            local_engine: cfg.local_engine,
            remote_warned: false,
            processes_failing: None,
            cgroup_failing: None,
            pid_stats_failing: None,
            containers: cfg
                .container_runtime
                .filter(|_| cfg.local_engine)
                .map(crate::attribution::cri::Containers::new),
            pod_labels: cfg
                .pod_labels
                .map(|(dir, allow)| crate::attribution::pod_labels::PodLabels::new(dir, allow)),
        }
    }

    /// Waits (at most a kubelet call's time) for the first pod map, so that the first
    /// collection has the pods when the kubelet answers.
    pub fn wait_for_pods(&self) {
        if let Some((_, cache)) = &self.pods {
            cache.wait_first(kubelet_wire::TIMEOUT + std::time::Duration::from_millis(500));
        }
    }

    /// Gives the collector the current labels: each job on a GPU is its own label set,
    /// carrying the pod's labels too (or, with `--hpc-job-info-series`, its own
    /// [`HPC_JOB_INFO`] series); and, for `DCGM_EXP_POD_FB_USED`, `DCGM_EXP_POD_SM_UTIL` and
    /// `pod_uid`, the pods of the processes on the GPUs.
    pub fn apply(&mut self, collector: &mut Collector) {
        let has_memory_row = collector.has_row(ExporterCounter::PodFbUsed);
        let has_util_row = collector.has_row(ExporterCounter::PodSmUtil);
        if (has_memory_row || has_util_row) && !self.local_engine && !self.remote_warned {
            log::warn!(
                "DCGM_EXP_POD_FB_USED and DCGM_EXP_POD_SM_UTIL have no series: the host engine \
                 is not on this host (by its address), so the process ids it reports cannot be \
                 looked up here; address a host engine on this host as localhost or by its unix \
                 socket"
            );
            self.remote_warned = true;
        }
        let memory_row = has_memory_row && self.local_engine;
        let util_row = has_util_row && self.local_engine;
        let mapper = self.pods.as_ref().map(|(m, _)| m);
        let want_uid = mapper.is_some_and(|m| m.pod_uid) && self.local_engine;
        let want_containers = self.containers.is_some();
        let want_virtual = mapper.is_some_and(|m| m.virtual_gpus) && self.local_engine;
        if self.pods.is_none()
            && self.hpc.is_none()
            && !memory_row
            && !util_row
            && !want_containers
            && !want_virtual
        {
            return;
        }
        let pod_map = self.pods.as_ref().map(|(_, cache)| cache.get());
        let jobs = self.hpc.as_mut().map(HpcJobs::read);
        let mapper = self.pods.as_ref().map(|(m, _)| m);

        // Per GPU: the containers holding it (or one of its MIG instances).
        let mut holders: BTreeMap<u32, Vec<PodInfo>> = BTreeMap::new();
        if let (Some(m), Some(map)) = (mapper, &pod_map) {
            for id in collector.identities() {
                let on = holders.entry(id.gpu).or_default();
                for h in m.holders(map, id) {
                    if !on.contains(h) {
                        on.push(h.clone());
                    }
                }
            }
        }
        // With --kubernetes-enable-pod-labels: the pods' labels and UIDs from the API server.
        let (pod_labels, api_uids) = match (&mut self.pod_labels, &pod_map) {
            (Some(p), Some(_)) => (Some(p.get()), Some(p.uids())),
            _ => (None, None),
        };
        let mut matched = PodMatch::default();
        // With --container-labels: per GPU, the labels of the containers running on it.
        let mut containers_on: BTreeMap<u32, Vec<LabelSet>> = BTreeMap::new();
        // With --kubernetes-virtual-gpus: per process, its GPU memory and SM utilisation, and
        // its pod's UID.
        let mut virtual_processes: Vec<(GpuProcess, Option<String>)> = Vec::new();
        let mut virtual_util: Option<HashMap<(u32, u32), f64>> = None;
        if memory_row || util_row || want_uid || want_containers || want_virtual {
            let processes = match collector.running_processes() {
                Ok(p) => {
                    if self.processes_failing.take().is_some() {
                        log::info!("reading the GPU process lists works again");
                    }
                    p
                }
                Err(e) => {
                    let msg = e.to_string();
                    if self.processes_failing.as_deref() != Some(&msg) {
                        log::warn!(
                            "cannot read the GPU process lists ({msg}); no per-pod GPU memory"
                        );
                        self.processes_failing = Some(msg);
                    }
                    Vec::new()
                }
            };
            let owners = cgroups(
                &self.proc_root,
                &mut self.cgroup_failing,
                processes.iter().map(|p| p.pid),
            );
            let mut uids: BTreeMap<u32, Vec<String>> = BTreeMap::new();
            for p in &processes {
                if let Some(uid) = owners.get(&p.pid).and_then(|o| o.pod_uid.clone()) {
                    let on = uids.entry(p.gpu).or_default();
                    if !on.contains(&uid) {
                        on.push(uid);
                    }
                }
            }
            matched = match_pods(&uids, &holders);
            // The API server's UIDs (with --kubernetes-enable-pod-labels) name the pods the
            // cgroups alone cannot tell apart.
            if let Some(api) = &api_uids {
                for on in holders.values() {
                    for h in on {
                        let key = (h.namespace.clone(), h.pod.clone());
                        if let Some(uid) = api.get(&key)
                            && !matched.by_pod.contains_key(&key)
                            && !matched.by_uid.contains_key(uid)
                        {
                            matched.by_uid.insert(uid.clone(), key.clone());
                            matched.by_pod.insert(key, uid.clone());
                        }
                    }
                }
            }
            if want_virtual {
                virtual_processes = processes
                    .iter()
                    .map(|p| {
                        (
                            p.clone(),
                            owners.get(&p.pid).and_then(|o| o.pod_uid.clone()),
                        )
                    })
                    .collect();
                virtual_util = if processes.is_empty() {
                    Some(HashMap::new())
                } else {
                    match collector.process_sm_util(&processes) {
                        Ok(u) => Some(u.iter().map(|p| ((p.gpu, p.pid), p.sm_util)).collect()),
                        Err(e) => {
                            let msg = e.to_string();
                            if self.pid_stats_failing.as_deref() != Some(&msg) {
                                log::warn!(
                                    "cannot read DCGM's process statistics ({msg}); no per-pod \
                                     DCGM_FI_DEV_GPU_UTIL on shared GPUs"
                                );
                                self.pid_stats_failing = Some(msg);
                            }
                            None
                        }
                    }
                };
            }
            if let Some(runtime) = &mut self.containers {
                let by_id = if processes.is_empty() {
                    HashMap::new()
                } else {
                    runtime.by_id()
                };
                for p in &processes {
                    let Some(id) = owners.get(&p.pid).and_then(|o| o.container_id.as_ref()) else {
                        continue;
                    };
                    if let Some(l) = by_id.get(id) {
                        let on = containers_on.entry(p.gpu).or_default();
                        if !on.contains(l) {
                            on.push(l.clone());
                        }
                    }
                }
            }
            if memory_row {
                let memory = memory_by_owner(&processes, |p| {
                    owner_labels(p, owners.get(&p.pid), &matched, &holders)
                });
                collector.set_owner_memory(Some(memory));
            }
            if util_row {
                let util = match collector.process_sm_util(&processes) {
                    Ok(u) => {
                        if self.pid_stats_failing.take().is_some() {
                            log::info!("reading DCGM's process statistics works again");
                        }
                        Some(sm_util_by_owner(&u, |p| {
                            let p = GpuProcess {
                                gpu: p.gpu,
                                pid: p.pid,
                                memory_used_bytes: 0,
                            };
                            owner_labels(&p, owners.get(&p.pid), &matched, &holders)
                        }))
                    }
                    Err(e) => {
                        let msg = e.to_string();
                        if self.pid_stats_failing.as_deref() != Some(&msg) {
                            log::warn!(
                                "cannot read DCGM's process statistics ({msg}); no \
                                 DCGM_EXP_POD_SM_UTIL (the pid watch turns on accounting mode, \
                                 which needs root unless `nvidia-smi -am 1` did already)"
                            );
                            self.pid_stats_failing = Some(msg);
                        }
                        None
                    }
                };
                collector.set_owner_sm_util(util);
            }
        }
        let uid_of = |info: &PodInfo| {
            matched
                .by_pod
                .get(&(info.namespace.clone(), info.pod.clone()))
                .cloned()
        };
        if self.hpc_info_series {
            match &jobs {
                Some(j) => collector.set_info_family(
                    HPC_JOB_INFO,
                    "1 for each HPC job on a GPU or MIG instance (from --hpc-job-mapping-dir): \
                     join on gpu and UUID for the job of a series.",
                    |id| j.labels(id),
                ),
                None => collector.remove_info_family(HPC_JOB_INFO),
            }
        }
        if want_virtual && let (Some(m), Some(map)) = (mapper, &pod_map) {
            let (memory, util) = virtual_values(
                collector,
                m,
                map,
                &matched,
                &virtual_processes,
                virtual_util,
            );
            collector.set_workload_values(field("DCGM_FI_DEV_FB_USED", 252), Some(memory));
            collector.set_workload_values(field("DCGM_FI_DEV_GPU_UTIL", 203), util);
        }
        let label_jobs = !self.hpc_info_series;
        collector.set_workload_labels(|id| {
            // One label set per pod with --kubernetes-virtual-gpus (every pod sharing the
            // device), else the last one listed.
            let mut from_kubelet: Vec<LabelSet> = match (mapper, &pod_map) {
                (Some(m), Some(map)) => m.labels(map, id, uid_of),
                _ => Vec::new(),
            };
            if let Some(all) = &pod_labels {
                for set in &mut from_kubelet {
                    add_pod_labels(set, all);
                }
            }
            // Without pod labels from the kubelet: one label set per container on the GPU.
            let pods: Vec<LabelSet> = match containers_on.get(&id.gpu) {
                Some(c) if from_kubelet.is_empty() && !c.is_empty() => c.clone(),
                _ if from_kubelet.is_empty() => vec![Vec::new()],
                _ => from_kubelet,
            };
            let jobs = match (&jobs, label_jobs) {
                (Some(j), true) => j.labels(id),
                _ => Vec::new(),
            };
            if jobs.is_empty() {
                return pods.into_iter().filter(|p| !p.is_empty()).collect();
            }
            pods.iter()
                .flat_map(|pod| {
                    jobs.iter()
                        .map(move |job| pod.iter().cloned().chain(job.iter().cloned()).collect())
                })
                .collect()
        });
    }
}

/// Label names a pod label never takes: the series' own (identity, counters-file, workload).
fn reserved(name: &str) -> bool {
    const NAMES: [&str; 15] = [
        "gpu",
        "UUID",
        "uuid",
        "pci_bus_id",
        "device",
        "modelName",
        "hostname",
        "Hostname",
        "GPU_I_PROFILE",
        "GPU_I_ID",
        "hostengine",
        "err_code",
        "window_size_in_ms",
        "hpc_job",
        "vgpu",
    ];
    NAMES.contains(&name) || name.starts_with("DCGM_") || name.starts_with("dra_")
}

/// `--kubernetes-enable-pod-labels`: the labels of the set's pod (by its `namespace` and
/// `pod`) after its own, except those it has already or that are reserved.
fn add_pod_labels(set: &mut LabelSet, all: &HashMap<(String, String), Vec<(String, String)>>) {
    let get = |k: &str| set.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let (Some(ns), Some(pod)) = (get("namespace"), get("pod")) else {
        return;
    };
    let Some(labels) = all.get(&(ns, pod)) else {
        return;
    };
    for (k, v) in labels {
        if !reserved(k) && !set.iter().any(|(n, _)| n == k) {
            set.push((k.clone(), v.clone()));
        }
    }
}

/// A field's id by name (DCGM 4.6's table), or `fallback`.
fn field(name: &str, fallback: u16) -> dcgm::FieldId {
    dcgm::FieldId::by_name(name).unwrap_or(dcgm::FieldId(fallback))
}

/// Per device, holder label set and value.
type WorkloadValues = Vec<(dcgm::Entity, LabelSet, f64)>;

/// `--kubernetes-virtual-gpus`: per GPU or MIG instance that pods hold, each holder's label
/// set (as [`PodMapper::labels`] gives them, with `pod_uid`) with its pod's processes' GPU
/// memory in MiB (`DCGM_FI_DEV_FB_USED`) and, when DCGM's process statistics are read, their
/// SM utilisation in percent (`DCGM_FI_DEV_GPU_UTIL`), as dcgm-exporter's per-process
/// series. A pod whose UID is matched and has no process on the device gets 0; a pod whose
/// UID is not known (no process of it was seen, or the match is ambiguous) gets no per-pod
/// value: its series would say 0 without knowing.
fn virtual_values(
    collector: &Collector,
    mapper: &PodMapper,
    map: &HashMap<String, Vec<PodInfo>>,
    matched: &PodMatch,
    processes: &[(GpuProcess, Option<String>)],
    util: Option<HashMap<(u32, u32), f64>>,
) -> (WorkloadValues, Option<WorkloadValues>) {
    let mut memory = Vec::new();
    let mut sm = util.as_ref().map(|_| Vec::new());
    let uid_of = |info: &PodInfo| {
        matched
            .by_pod
            .get(&(info.namespace.clone(), info.pod.clone()))
            .cloned()
    };
    for id in collector.identities() {
        let holders = mapper.holders(map, id);
        if holders.is_empty() {
            continue;
        }
        let sets = mapper.labels(map, id, uid_of);
        for (info, mut set) in holders.iter().zip(sets) {
            let Some(uid) = uid_of(info) else {
                continue;
            };
            if !set.iter().any(|(k, _)| k == "pod_uid") {
                set.push(("pod_uid".into(), uid.clone()));
            }
            let mine = processes
                .iter()
                .filter(|(p, u)| p.gpu == id.gpu && u.as_deref() == Some(uid.as_str()));
            let bytes: u64 = mine.clone().map(|(p, _)| p.memory_used_bytes).sum();
            memory.push((id.entity, set.clone(), (bytes / 1_048_576) as f64));
            if let (Some(out), Some(u)) = (sm.as_mut(), util.as_ref()) {
                let pct: f64 = mine.filter_map(|(p, _)| u.get(&(p.gpu, p.pid))).sum();
                out.push((id.entity, set, pct.round()));
            }
        }
    }
    (memory, sm)
}

/// The most processes whose cgroup one collection reads.
pub const MAX_CGROUP_PIDS: usize = 4096;

/// The most bytes of cgroup files one collection reads (each file at most
/// [`cgroup::MAX_CGROUP_BYTES`]).
pub const MAX_CGROUP_PASS_BYTES: u64 = 4 << 20;

/// The cgroups of `pids` (under `--proc-root`), at most [`MAX_CGROUP_PIDS`] of them and
/// [`MAX_CGROUP_PASS_BYTES`] in all. A process that is gone is left out; any other failure
/// is logged once per message, and so is a root where none of them is found (an exporter
/// that does not see the host's PIDs).
fn cgroups(
    proc_root: &Path,
    failing: &mut Option<String>,
    pids: impl Iterator<Item = u32>,
) -> HashMap<u32, CgroupOwner> {
    let mut out = HashMap::new();
    let (mut asked, mut gone) = (0usize, 0usize);
    let mut failure = None;
    let mut bytes = 0u64;
    let pids = pids.collect::<BTreeSet<u32>>();
    let total = pids.len();
    for pid in pids {
        if asked == MAX_CGROUP_PIDS || bytes >= MAX_CGROUP_PASS_BYTES {
            failure.get_or_insert_with(|| {
                format!(
                    "the GPUs run {total} processes; the cgroups of the first {asked} were read \
                     ({bytes} bytes; at most {MAX_CGROUP_PIDS} processes and \
                     {MAX_CGROUP_PASS_BYTES} bytes a collection)"
                )
            });
            break;
        }
        asked += 1;
        match cgroup::read_counted(proc_root, pid, &mut bytes) {
            Ok(o) => {
                out.insert(pid, o);
            }
            Err(e) if e.kind() == ErrorKind::NotFound => gone += 1,
            Err(e) => {
                failure.get_or_insert_with(|| {
                    format!("cannot read {}/{pid}/cgroup: {e}", proc_root.display())
                });
            }
        }
    }
    if failure.is_none() && asked > 0 && gone == asked {
        failure = Some(format!(
            "none of the {asked} processes DCGM lists on the GPUs is in {} (does the \
             exporter see the host's PIDs? run it with hostPID, or mount the host's /proc \
             and pass --proc-root)",
            proc_root.display()
        ));
    }
    match failure {
        Some(msg) => {
            if failing.as_deref() != Some(&msg) {
                log::warn!("{msg}; their GPU memory is not attributed to pods");
                *failing = Some(msg);
            }
        }
        None => {
            if failing.take().is_some() {
                log::info!("the cgroups of the GPU processes are readable again");
            }
        }
    }
    out
}
