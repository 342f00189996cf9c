//! The workload labels of the GPUs: Kubernetes pods (from the [`PodCache`] the kubelet
//! refresher keeps, never from the kubelet itself, so a collection does not wait on it) and
//! HPC jobs (read from the mapping directory before each collection, bounded, never
//! blocking), given to the collector before each collection.

use std::path::PathBuf;
use std::sync::Arc;

use dcgm_prometheus::{Collector, LabelSet};

use crate::hpc::HpcJobs;
use crate::kubernetes::PodMapper;
use crate::pods::PodCache;

/// Kubernetes pods and HPC jobs of the GPUs.
#[derive(Debug)]
pub struct Attribution {
    pods: Option<(PodMapper, Arc<PodCache>)>,
    hpc: Option<HpcJobs>,
}

impl Attribution {
    /// Pods from `pods`' cache (with `--kubernetes`), jobs from `hpc_dir`.
    pub fn new(pods: Option<(PodMapper, Arc<PodCache>)>, hpc_dir: Option<PathBuf>) -> Self {
        Self {
            pods,
            hpc: hpc_dir.map(HpcJobs::new),
        }
    }

    /// Waits (at most a kubelet call's time) for the first pod map, so that the first
    /// collection has the pods when the kubelet answers.
    pub fn wait_for_pods(&self) {
        if let Some((_, cache)) = &self.pods {
            cache.wait_first(crate::kubernetes::TIMEOUT + std::time::Duration::from_millis(500));
        }
    }

    /// Gives the collector the current labels: each job on a GPU is its own label set,
    /// carrying the pod's labels too.
    pub fn apply(&mut self, collector: &mut Collector) {
        if self.pods.is_none() && self.hpc.is_none() {
            return;
        }
        let pod_map = self.pods.as_ref().map(|(_, cache)| cache.get());
        let jobs = self.hpc.as_mut().map(HpcJobs::read);
        let mapper = self.pods.as_ref().map(|(m, _)| m);
        collector.set_workload_labels(|id| {
            let pod: LabelSet = match (mapper, &pod_map) {
                (Some(m), Some(map)) => m.labels(map, id).into_iter().next().unwrap_or_default(),
                _ => Vec::new(),
            };
            let jobs = jobs.as_ref().map(|j| j.labels(id)).unwrap_or_default();
            if jobs.is_empty() {
                return if pod.is_empty() {
                    Vec::new()
                } else {
                    vec![pod]
                };
            }
            jobs.into_iter()
                .map(|job| pod.iter().cloned().chain(job).collect())
                .collect()
        });
    }
}
