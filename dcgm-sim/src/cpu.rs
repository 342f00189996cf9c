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

use dcgm_sys::*;

use crate::config::CpuConfig;
use crate::machine::Machine;

impl Machine {
    /// The CPU socket a GPU hangs off: the GPUs are shared out in order, an equal run of them
    /// to each socket (the first half on CPU 0, the rest on CPU 1 on a two-socket node).
    pub fn gpu_socket(&self, gpu: u32) -> u32 {
        let sockets = self.cfg.cpus.len().max(1) as u32;
        let per = self.gpu_count().div_ceil(sockets).max(1);
        (gpu / per).min(sockets - 1)
    }

    /// One past the highest configured core id: where fake cores start.
    fn first_fake_core(&self) -> u32 {
        self.cpu_cores.iter().map(|c| c.1 + c.2).max().unwrap_or(0)
    }

    /// Every core id, configured and fake, in order.
    pub fn all_cores(&self) -> Vec<u32> {
        let mut cores: Vec<u32> = self
            .cpu_cores
            .iter()
            .flat_map(|&(_, first, count)| first..first + count)
            .collect();
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
            || self
                .cpu_cores
                .iter()
                .any(|&(_, first, count)| core >= first && core < first + count)
    }

    /// The core ids a CPU owns, in order.
    pub fn cores_of_cpu(&self, cpu: u32) -> Vec<u32> {
        let configured = self.first_fake_core();
        let mut cores: Vec<u32> = self
            .cpu_cores
            .iter()
            .filter(|c| c.0 == cpu)
            .flat_map(|&(_, first, count)| first..first + count)
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

    /// Adds a fake CPU with the next CPU id.
    pub fn add_fake_cpu(&mut self) -> Result<u32, dcgmReturn_t> {
        let id = self.cfg.cpus.len() as u32;
        if id as usize >= DCGM_MAX_NUM_CPUS {
            return Err(DCGM_ST_INSUFFICIENT_RESOURCES);
        }
        let next = self.first_fake_core();
        self.cfg.cpus.push(CpuConfig {
            model: String::new(),
            cores: 0,
        });
        self.cpu_cores.push((id, next, 0));
        self.fake_cpus.insert(id);
        Ok(id)
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
    use crate::host_cpus::host_cpus;

    #[test]
    fn fake_cores_follow_every_core_and_belong_to_their_fake_cpu() {
        let cfg = crate::config::SimConfig {
            host_cpus: false,
            ..crate::config::SimConfig::default()
        };
        let mut m = Machine::new(cfg);
        let (cpus, ranges) = host_cpus(&[(0, vec![0, 1, 4, 5])], &[]);
        (m.cfg.cpus, m.cpu_cores) = (cpus, ranges);
        assert_eq!(m.add_fake_cpu(), Ok(1));
        assert_eq!(m.add_fake_core(DCGM_FE_CPU, 1), Ok(6));
        assert_eq!(
            m.add_fake_core(DCGM_FE_CPU, 0),
            Err(DCGM_ST_INSUFFICIENT_RESOURCES)
        );
        assert_eq!(m.add_fake_core(DCGM_FE_GPU, 1), Err(DCGM_ST_BADPARAM));
        assert_eq!(m.all_cores(), [0, 1, 4, 5, 6]);
        assert_eq!(m.cores_of_cpu(0), [0, 1, 4, 5]);
        assert_eq!(m.cores_of_cpu(1), [6]);
        assert!(m.core_exists(4) && !m.core_exists(2) && m.core_exists(6));
    }
}
