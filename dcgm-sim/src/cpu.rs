//! CPUs and CPU cores of the simulated node, as DCGM's sysmon module presents them: the
//! configured sockets with their cores numbered in order (or, with `host_cpus`, this host's
//! NUMA nodes and their logical CPUs, read as sysmon reads them), then the fake CPUs and cores
//! a client adds through the test API.
//!
//! DCGM's sysmon module takes each NUMA node with CPUs (`/sys/devices/system/node/has_cpu`,
//! a range list such as `0-1`) as a CPU whose id is the node number, owning the logical CPUs
//! of `/sys/devices/system/node/nodeN/cpulist` (`0-27,56-83`) as its cores.
//!
//! What DCGM 4.6.0 does (`modules/sysmon/DcgmCpuManager.cpp`, `DcgmModuleSysmon.cpp`): a
//! fake CPU takes the next CPU id; a fake core takes the next core id after every core the
//! node has, and only a fake CPU can own one (a real CPU's cores are the host's); the parent
//! of a fake core must be a CPU (`DCGM_ST_BADPARAM` otherwise), and a parent that is not a
//! fake CPU, or a full node, is `DCGM_ST_INSUFFICIENT_RESOURCES`. A CPU's utilisation is the
//! mean of its cores'.

use std::collections::BTreeSet;

use dcgm_sys::*;

/// A run of consecutive core ids that one CPU owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreRange {
    pub cpu: u32,
    pub first: u32,
    pub count: u32,
}

impl CoreRange {
    /// The core ids of the run.
    fn ids(&self) -> std::ops::Range<u32> {
        self.first..self.first + self.count
    }
}

/// The node's CPU cores: the configured (or host) ones by CPU, then the fake CPUs and cores a
/// client adds.
#[derive(Debug, Clone, Default)]
pub struct Cpus {
    /// The cores of each CPU, as runs of ids.
    ranges: Vec<CoreRange>,
    /// CPUs added by `dcgmCreateFakeEntities`.
    fake_cpus: BTreeSet<u32>,
    /// The CPU of each core added by `dcgmCreateFakeEntities` (ids after the configured
    /// cores, in order).
    fake_cores: Vec<u32>,
}

impl Cpus {
    /// The node's cores, as runs of ids by CPU.
    pub fn new(ranges: Vec<CoreRange>) -> Self {
        Self {
            ranges,
            ..Self::default()
        }
    }

    /// Whether a CPU was added by `dcgmCreateFakeEntities`.
    pub fn is_fake(&self, cpu: u32) -> bool {
        self.fake_cpus.contains(&cpu)
    }

    /// One past the highest configured core id: where fake cores start.
    fn first_fake_core(&self) -> u32 {
        self.ranges
            .iter()
            .map(|r| r.first + r.count)
            .max()
            .unwrap_or(0)
    }

    /// Every core id, configured and fake, in order.
    pub fn all_cores(&self) -> Vec<u32> {
        let mut cores: Vec<u32> = self.ranges.iter().flat_map(CoreRange::ids).collect();
        let fake = self.first_fake_core();
        cores.extend((0..self.fake_cores.len() as u32).map(|i| fake + i));
        cores.sort_unstable();
        cores.dedup();
        cores
    }

    /// Whether a core id exists.
    pub fn core_exists(&self, core: u32) -> bool {
        let fake = self.first_fake_core();
        (core >= fake && core < fake + self.fake_cores.len() as u32)
            || self.ranges.iter().any(|r| r.ids().contains(&core))
    }

    /// The core ids a CPU owns, in order.
    pub fn cores_of_cpu(&self, cpu: u32) -> Vec<u32> {
        let configured = self.first_fake_core();
        let mut cores: Vec<u32> = self
            .ranges
            .iter()
            .filter(|r| r.cpu == cpu)
            .flat_map(CoreRange::ids)
            .collect();
        cores.extend(
            self.fake_cores
                .iter()
                .enumerate()
                .filter(|(_, parent)| **parent == cpu)
                .map(|(i, _)| configured + i as u32),
        );
        cores
    }

    /// Records fake CPU `id` (no cores yet).
    pub fn add_fake_cpu(&mut self, id: u32) {
        let next = self.first_fake_core();
        self.ranges.push(CoreRange {
            cpu: id,
            first: next,
            count: 0,
        });
        self.fake_cpus.insert(id);
    }

    /// Adds a fake core to the fake CPU `parent` (an entity of `parent_group`).
    pub fn add_fake_core(&mut self, parent_group: u32, parent: u32) -> Result<u32, dcgmReturn_t> {
        if parent_group != DCGM_FE_CPU {
            return Err(DCGM_ST_BADPARAM);
        }
        let id = self.first_fake_core() + self.fake_cores.len() as u32;
        if !self.fake_cpus.contains(&parent) || id as usize >= DCGM_MAX_NUM_CPU_CORES {
            return Err(DCGM_ST_INSUFFICIENT_RESOURCES);
        }
        self.fake_cores.push(parent);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_cores_follow_every_core_and_belong_to_their_fake_cpu() {
        // One host CPU owning cores 0, 1, 4 and 5.
        let mut cpus = Cpus::new(vec![
            CoreRange {
                cpu: 0,
                first: 0,
                count: 2,
            },
            CoreRange {
                cpu: 0,
                first: 4,
                count: 2,
            },
        ]);
        cpus.add_fake_cpu(1);
        assert!(cpus.is_fake(1) && !cpus.is_fake(0));
        assert_eq!(cpus.add_fake_core(DCGM_FE_CPU, 1), Ok(6));
        assert_eq!(
            cpus.add_fake_core(DCGM_FE_CPU, 0),
            Err(DCGM_ST_INSUFFICIENT_RESOURCES)
        );
        assert_eq!(cpus.add_fake_core(DCGM_FE_GPU, 1), Err(DCGM_ST_BADPARAM));
        assert_eq!(cpus.all_cores(), [0, 1, 4, 5, 6]);
        assert_eq!(cpus.cores_of_cpu(0), [0, 1, 4, 5]);
        assert_eq!(cpus.cores_of_cpu(1), [6]);
        assert!(cpus.core_exists(4) && !cpus.core_exists(2) && cpus.core_exists(6));
    }
}
