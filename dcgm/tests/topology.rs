//! Topology of devices and groups, NVLink states and peer-to-peer, CPUs, against dcgm-sim.
//!
//! The simulator is process-global and reads its configuration (`dcgmSimConfigure`) at the
//! next `dcgmInit`: every test takes the simulator lock, configures, opens its handle, and
//! closes every handle before returning.

mod common;

use common::*;
use dcgm::*;

#[test]
fn topology_of_devices_and_groups() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let sys = h.system();
    let t = sys.device_topology(0).unwrap();
    assert_eq!(t.paths.len(), 7);
    assert_eq!(t.cpu_affinity.len(), 56);
    assert!(
        t.paths
            .iter()
            .all(|p| p.nvlinks == 18 && p.local_links == (1 << 18) - 1)
    );
    assert_eq!(
        t.paths.iter().find(|p| p.gpu == 1).unwrap().pci,
        PciPath::Cpu
    );
    assert_eq!(
        t.paths.iter().find(|p| p.gpu == 7).unwrap().pci,
        PciPath::System
    );
    assert!(sys.device_topology(99).is_err());

    let near = Group::with_gpus(&h, "beyond-topo-near", &[0, 1]).unwrap();
    let tn = near.topology().unwrap();
    assert!(tn.numa_optimal);
    assert_eq!(tn.slowest_pci, PciPath::Cpu);
    let far = Group::with_gpus(&h, "beyond-topo-far", &[0, 7]).unwrap();
    let tf = far.topology().unwrap();
    assert!(!tf.numa_optimal);
    assert_eq!(tf.slowest_pci, PciPath::System);
    assert_eq!(tf.slowest_nvlinks, 18);
    assert_eq!(tf.cpu_affinity.len(), 112);

    assert_eq!(sys.select_gpus_by_topology(&[], 2, false).unwrap(), [0, 1]);
    assert_eq!(
        sys.select_gpus_by_topology(&[3, 5, 6], 2, true).unwrap(),
        [3, 5]
    );
    assert!(matches!(
        sys.select_gpus_by_topology(&[64], 1, false),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        sys.select_gpus_by_topology(&[0], 0, false),
        Err(Error::InvalidArgument(_))
    ));
    drop((near, far));
    h.close().unwrap();
}

#[test]
fn nvlink_states_and_peer_to_peer() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let s = h.system().nvlink_status().unwrap();
    assert_eq!(s.gpus.len(), 8);
    assert!(
        s.gpus
            .iter()
            .all(|(_, l)| l.len() == 18 && l.iter().all(|x| *x == LinkState::Up))
    );
    assert_eq!(s.switches.len(), 4);
    assert!(
        s.switches
            .iter()
            .all(|(_, l)| !l.is_empty() && l.last() != Some(&LinkState::NotSupported))
    );
    assert!(s.unhealthy_links().is_empty());
    let p2p = h.system().nvlink_p2p_status().unwrap();
    assert_eq!(p2p.len(), 8);
    assert!(p2p.iter().all(|g| {
        g.peers.len() == 7
            && g.peers
                .iter()
                .all(|(p, st)| *p != g.gpu && *st == P2pStatus::Ok)
    }));
    h.close().unwrap();
}

#[test]
fn cpu_hierarchy_with_serials() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let cpus = h.system().cpu_hierarchy().unwrap();
    assert_eq!(cpus.len(), 2);
    assert!(
        cpus.iter()
            .all(|c| c.cores.len() == 56 && c.serial.is_some())
    );
    assert_eq!(cpus[0].cores[0], 0);
    assert_eq!(cpus[1].cores[0], 56);
    h.close().unwrap();
}
