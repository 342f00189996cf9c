//! This host's CPUs as DCGM's sysmon module reads them: the NUMA nodes with CPUs
//! (`/sys/devices/system/node/has_cpu`) and each node's logical CPUs (`nodeN/cpulist`), for a
//! simulated node configured with `host_cpus = true`.

use std::path::Path;

use dcgm_sys::DCGM_MAX_NUM_CPUS;

use crate::config::CpuConfig;
use crate::cpu::CoreRange;

/// Parses a kernel range list (`0-27,56-83`, `3`, empty) into its numbers; `None` when it is
/// malformed. Written by hand: it is the kernel's `cpulist` format, a few lines, and no crate
/// in the workspace parses it.
pub fn parse_range_list(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        if b < a {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out)
}

/// The host's CPUs as DCGM's sysmon module reads them under `root` (`/` on a real host):
/// each NUMA node with CPUs and the logical CPUs it owns, by node number. `None` when the
/// host has no such sysfs files (no NUMA information: sysmon finds no CPU).
pub fn host_topology(root: &Path) -> Option<Vec<(u32, Vec<u32>)>> {
    let node = root.join("sys/devices/system/node");
    let nodes = parse_range_list(&std::fs::read_to_string(node.join("has_cpu")).ok()?)?;
    nodes
        .into_iter()
        .map(|n| {
            let list = std::fs::read_to_string(node.join(format!("node{n}/cpulist"))).ok()?;
            Some((n, parse_range_list(&list)?))
        })
        .collect()
}

/// The CPUs and the core ranges of the host's topology (see
/// [`host_topology`]), the configured CPUs' models kept in order. A node numbered past the
/// first free id is numbered densely, as the simulator's CPU ids are indices.
pub fn host_cpus(
    topology: &[(u32, Vec<u32>)],
    configured: &[CpuConfig],
) -> (Vec<CpuConfig>, Vec<CoreRange>) {
    let mut cpus = Vec::new();
    let mut ranges = Vec::new();
    for (i, (_, cores)) in topology.iter().enumerate().take(DCGM_MAX_NUM_CPUS) {
        let model = configured
            .get(i)
            .map_or_else(|| "Host CPU".to_string(), |c| c.model.clone());
        cpus.push(CpuConfig {
            model,
            cores: cores.len() as u32,
        });
        let mut it = cores.iter().copied().peekable();
        while let Some(first) = it.next() {
            let mut last = first;
            while it.peek() == Some(&(last + 1)) {
                last += 1;
                it.next();
            }
            ranges.push(CoreRange {
                cpu: i as u32,
                first,
                count: last - first + 1,
            });
        }
    }
    (cpus, ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_lists_parse_as_the_kernel_writes_them() {
        assert_eq!(parse_range_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(
            parse_range_list("0-2,8,10-11"),
            Some(vec![0, 1, 2, 8, 10, 11])
        );
        assert_eq!(parse_range_list(""), Some(vec![]));
        assert_eq!(parse_range_list("3-1"), None);
        assert_eq!(parse_range_list("a-b"), None);
    }

    #[test]
    fn a_hosts_numa_nodes_become_cpus_owning_their_cpulist() {
        let root = std::env::temp_dir().join(format!("dcgm-sim-cpu-{}", std::process::id()));
        let node = root.join("sys/devices/system/node");
        for (n, list) in [(0, "0-1,4-5\n"), (1, "2-3,6-7\n")] {
            std::fs::create_dir_all(node.join(format!("node{n}"))).unwrap();
            std::fs::write(node.join(format!("node{n}/cpulist")), list).unwrap();
        }
        std::fs::write(node.join("has_cpu"), "0-1\n").unwrap();
        let topology = host_topology(&root).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(topology, [(0, vec![0, 1, 4, 5]), (1, vec![2, 3, 6, 7])]);

        let named = [CpuConfig {
            model: "Grace".into(),
            cores: 72,
        }];
        let (cpus, ranges) = host_cpus(&topology, &named);
        assert_eq!(cpus.len(), 2);
        assert_eq!((cpus[0].model.as_str(), cpus[0].cores), ("Grace", 4));
        assert_eq!(cpus[1].model, "Host CPU");
        let ranges: Vec<(u32, u32, u32)> =
            ranges.iter().map(|r| (r.cpu, r.first, r.count)).collect();
        assert_eq!(ranges, [(0, 0, 2), (0, 4, 2), (1, 2, 2), (1, 6, 2)]);
        assert!(host_topology(Path::new("/nonexistent-root")).is_none());
    }
}
