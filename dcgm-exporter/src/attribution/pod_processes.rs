//! Per-pod attribution of the processes on the GPUs: each process DCGM lists on a GPU is
//! placed in its pod by its cgroup ([`crate::attribution::cgroup`]), which gives the pod's UID; the pod's
//! name, namespace and container come from the kubelet's pod-resources answer where they can
//! be told without guessing ([`match_pods`]).
//!
//! The kubelet's pod-resources API names pods but carries no UIDs, and the cgroup carries
//! UIDs but no names. A UID is matched to a pod when, on some GPU, the processes of exactly
//! one not-yet-matched UID run and exactly one not-yet-matched pod holds it, and every GPU
//! that UID's processes use is held by that pod. Pairs are taken until none is left, so a
//! time-sliced GPU shared by two pods resolves once one of them is matched on a GPU of its
//! own. A UID that cannot be matched keeps its `pod_uid` label and goes without `pod`,
//! `namespace` and `container`; join it with kube-state-metrics' `kube_pod_info{uid=…}` for
//! the names.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use dcgm_prometheus::{GpuProcess, LabelSet};

use crate::attribution::cgroup::CgroupOwner;
use crate::attribution::kubernetes::PodInfo;

/// A pod by namespace and name.
pub type PodKey = (String, String);

/// Pod UIDs matched to the pods the kubelet names (both ways).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PodMatch {
    /// UID → (namespace, pod).
    pub by_uid: HashMap<String, PodKey>,
    /// (namespace, pod) → UID.
    pub by_pod: HashMap<PodKey, String>,
}

/// Matches the pod UIDs of the processes to pods (see the [module docs](self)).
/// `uids` is, per GPU, the pod UIDs of its processes; `holders` is, per GPU, the containers
/// the kubelet says hold it (or one of its MIG instances).
///
/// ```
/// use std::collections::BTreeMap;
/// use dcgm_exporter::attribution::kubernetes::PodInfo;
/// use dcgm_exporter::attribution::pod_processes::match_pods;
/// let pod = |p: &str| PodInfo { pod: p.into(), namespace: "ml".into(), container: "c".into(), dra: None, vgpu: None };
/// let uids = BTreeMap::from([(0, vec!["uid-a".to_string()]),
///                            (1, vec!["uid-a".to_string(), "uid-b".to_string()])]);
/// let holders = BTreeMap::from([(0, vec![pod("a")]), (1, vec![pod("a"), pod("b")])]);
/// let m = match_pods(&uids, &holders);
/// // GPU 0 tells uid-a is pod a; then GPU 1, shared, tells uid-b is pod b.
/// assert_eq!(m.by_uid["uid-a"].1, "a");
/// assert_eq!(m.by_uid["uid-b"].1, "b");
/// ```
pub fn match_pods(
    uids: &BTreeMap<u32, Vec<String>>,
    holders: &BTreeMap<u32, Vec<PodInfo>>,
) -> PodMatch {
    let pods_of = |gpu: &u32| -> BTreeSet<PodKey> {
        holders
            .get(gpu)
            .into_iter()
            .flatten()
            .map(|h| (h.namespace.clone(), h.pod.clone()))
            .collect()
    };
    let mut m = PodMatch::default();
    loop {
        let mut found = None;
        for (gpu, on) in uids {
            let free_uids: BTreeSet<&String> =
                on.iter().filter(|u| !m.by_uid.contains_key(*u)).collect();
            let free_pods: Vec<PodKey> = pods_of(gpu)
                .into_iter()
                .filter(|p| !m.by_pod.contains_key(p))
                .collect();
            if let ([uid], [pod]) = (
                free_uids.into_iter().collect::<Vec<_>>().as_slice(),
                free_pods.as_slice(),
            ) {
                // Every GPU the UID's processes use must be the pod's.
                let consistent = uids
                    .iter()
                    .filter(|(_, on)| on.contains(uid))
                    .all(|(g, _)| pods_of(g).contains(pod));
                if consistent {
                    found = Some(((*uid).clone(), pod.clone()));
                    break;
                }
            }
        }
        match found {
            Some((uid, pod)) => {
                m.by_pod.insert(pod.clone(), uid.clone());
                m.by_uid.insert(uid, pod);
            }
            None => return m,
        }
    }
}

/// The labels of a process's pod for `DCGM_EXP_POD_FB_USED`: `pod`, `namespace` and
/// `container` when its UID is matched (the container: the one container of that pod holding
/// the GPU, if only one does), and `pod_uid`, always. `None` for a process in no pod.
pub fn owner_labels(
    process: &GpuProcess,
    owner: Option<&CgroupOwner>,
    matched: &PodMatch,
    holders: &BTreeMap<u32, Vec<PodInfo>>,
) -> Option<LabelSet> {
    let uid = owner?.pod_uid.clone()?;
    let mut set = LabelSet::new();
    if let Some((namespace, pod)) = matched.by_uid.get(&uid) {
        set.push(("pod".into(), pod.clone()));
        set.push(("namespace".into(), namespace.clone()));
        let containers: BTreeSet<&str> = holders
            .get(&process.gpu)
            .into_iter()
            .flatten()
            .filter(|h| (&h.namespace, &h.pod) == (namespace, pod))
            .map(|h| h.container.as_str())
            .collect();
        if let [container] = containers.into_iter().collect::<Vec<_>>().as_slice() {
            set.push(("container".into(), container.to_string()));
        }
    }
    set.push(("pod_uid".into(), uid));
    Some(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(ns: &str, name: &str, container: &str) -> PodInfo {
        PodInfo {
            pod: name.into(),
            namespace: ns.into(),
            container: container.into(),
            dra: None,
            vgpu: None,
        }
    }

    fn uids(list: &[(u32, &[&str])]) -> BTreeMap<u32, Vec<String>> {
        list.iter()
            .map(|(g, u)| (*g, u.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn two_pods_on_one_shared_gpu_stay_unnamed_without_a_gpu_of_their_own() {
        let holders = BTreeMap::from([(0, vec![pod("a", "p", "c"), pod("a", "q", "c")])]);
        let m = match_pods(&uids(&[(0, &["u1", "u2"])]), &holders);
        assert_eq!(m, PodMatch::default());
    }

    #[test]
    fn a_pod_is_not_named_after_a_gpu_it_does_not_hold() {
        // u1 runs on GPUs 0 and 1; only GPU 0 is pod p's (a process that found GPU 1 without
        // the kubelet handing it over): no name rather than a wrong one.
        let holders = BTreeMap::from([(0, vec![pod("a", "p", "c")]), (1, vec![])]);
        let m = match_pods(&uids(&[(0, &["u1"]), (1, &["u1"])]), &holders);
        assert_eq!(m, PodMatch::default());
        // GPUs held by nobody and UIDs on GPUs with no holder are left alone.
        let m = match_pods(&uids(&[(2, &["u3"])]), &BTreeMap::new());
        assert!(m.by_uid.is_empty());
    }

    #[test]
    fn owner_labels_name_the_container_only_when_one_holds_the_gpu() {
        let holders = BTreeMap::from([
            (0, vec![pod("ml", "train", "trainer")]),
            (1, vec![pod("ml", "train", "a"), pod("ml", "train", "b")]),
        ]);
        let m = match_pods(&uids(&[(0, &["u1"]), (1, &["u1"])]), &holders);
        let owner = CgroupOwner {
            pod_uid: Some("u1".into()),
            ..CgroupOwner::default()
        };
        let p = |gpu| GpuProcess {
            gpu,
            pid: 7,
            memory_used_bytes: 1,
        };
        let names = |set: LabelSet| set.into_iter().map(|(k, _)| k).collect::<Vec<_>>();
        assert_eq!(
            names(owner_labels(&p(0), Some(&owner), &m, &holders).unwrap()),
            ["pod", "namespace", "container", "pod_uid"]
        );
        assert_eq!(
            names(owner_labels(&p(1), Some(&owner), &m, &holders).unwrap()),
            ["pod", "namespace", "pod_uid"]
        );
        let unmatched = CgroupOwner {
            pod_uid: Some("u9".into()),
            ..CgroupOwner::default()
        };
        assert_eq!(
            owner_labels(&p(0), Some(&unmatched), &m, &holders),
            Some(vec![("pod_uid".to_string(), "u9".to_string())])
        );
        assert_eq!(owner_labels(&p(0), None, &m, &holders), None);
        let host = CgroupOwner::default();
        assert_eq!(owner_labels(&p(0), Some(&host), &m, &holders), None);
    }
}
