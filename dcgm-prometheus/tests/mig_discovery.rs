//! A MIG instance created through the SDK (on the simulator) is exported: the exporter's
//! discovery lists it in place of its GPU, with its NVML instance id and slices.

use dcgm::testing::{SimulatorLock, simulator_path};
use dcgm::{EntityGroup, GpuInstanceProfile, Handle};
use dcgm_prometheus::{DeviceSelection, discover_entities};

#[test]
fn a_created_gpu_instance_is_discovered() {
    let _l = SimulatorLock::new(Some(
        r#"{"gpus":[{"model":"NVIDIA H200","memory_mib":143771,"mig_mode":true},
                    {"model":"NVIDIA H200","memory_mib":143771}],
            "nvswitches":0,"cpus":[],"processes":[]}"#,
    ))
    .unwrap();
    let h = Handle::builder()
        .library_path(simulator_path())
        .embedded()
        .unwrap();
    let before = discover_entities(&h, &DeviceSelection::Flex).unwrap();
    assert!(before.iter().all(|i| i.entity.group == EntityGroup::Gpu));
    let gi = h
        .system()
        .create_gpu_instance(0, GpuInstanceProfile::Slice3)
        .unwrap();
    let after = discover_entities(&h, &DeviceSelection::Flex).unwrap();
    let mig: Vec<_> = after
        .iter()
        .filter_map(|i| i.mig.as_ref().map(|m| (i, m)))
        .collect();
    assert_eq!(mig.len(), 1);
    let (identity, m) = mig[0];
    assert_eq!(identity.entity.id, gi.entity_id);
    assert_eq!((m.instance_id, m.slices), (Some(1), Some(3)));
}
