//! MIG management through the safe layer, on the simulator: `System::create_gpu_instance`,
//! `create_compute_instance` and the deletes, the typed errors, and the two raw answers of
//! issue 24 (an unknown field in a cached read, the field-group limit) as typed errors; the
//! MIG hierarchy of the default node as a tree.

use dcgm::raw;
use dcgm::testing::{SimulatorLock, simulator_path};
use dcgm::{
    ComputeInstanceProfile, Entity, EntityGroup, Error, FieldGroup, FieldId, GpuInstanceProfile,
    Group, Handle, ReturnCode, Value, WatchOptions,
};

const NODE: &str = r#"{"gpus":[
    {"model":"NVIDIA H200","memory_mib":143771,"mig_mode":true},
    {"model":"NVIDIA H200","memory_mib":143771}],
  "nvswitches":0,"cpus":[],"processes":[]}"#;

fn handle() -> (SimulatorLock, Handle) {
    let lock = SimulatorLock::new(Some(NODE)).unwrap();
    let h = Handle::builder()
        .library_path(simulator_path())
        .embedded()
        .unwrap();
    (lock, h)
}

fn code(e: Error) -> ReturnCode {
    e.code()
}

#[test]
fn instances_are_created_watched_and_deleted() {
    let (_l, h) = handle();
    let s = h.system();
    let gi = s
        .create_gpu_instance(0, GpuInstanceProfile::Slice2)
        .unwrap();
    assert_eq!(
        (gi.entity_id, gi.slices, gi.profile_id),
        (0, Some(2), Some(14))
    );
    let ci = s
        .create_compute_instance(gi.entity_id, ComputeInstanceProfile::Slice2)
        .unwrap();
    assert_eq!((ci.entity_id, ci.slices), (0, Some(2)));
    let tree = s.mig_hierarchy().unwrap();
    assert_eq!(tree.len(), 1);
    assert_eq!(tree[0].instances[0].compute_instances, vec![ci.clone()]);

    let group = Group::with_entities(
        &h,
        "mig",
        &[
            Entity::new(EntityGroup::GpuInstance, gi.entity_id),
            Entity::new(EntityGroup::ComputeInstance, ci.entity_id),
        ],
    )
    .unwrap();
    let fb = FieldId::by_name("DCGM_FI_DEV_FB_TOTAL").unwrap();
    let fields = FieldGroup::create(&h, "mig-fb", &[fb]).unwrap();
    let _watch = group.watch(&fields, WatchOptions::default()).unwrap();
    h.update_all_fields(true).unwrap();
    let values = group.latest_values(&fields).unwrap();
    assert_eq!(values.len(), 2);
    assert!(
        values
            .iter()
            .all(|v| matches!(v.value, Value::Int(n) if n > 0)),
        "{values:?}"
    );

    let busy = s.delete_gpu_instance(gi.entity_id).unwrap_err();
    assert_eq!(code(busy), ReturnCode::NvmlError);
    s.delete_compute_instance(ci.entity_id).unwrap();
    s.delete_gpu_instance(gi.entity_id).unwrap();
    assert!(s.mig_hierarchy().unwrap().is_empty());
}

#[test]
fn errors_are_typed() {
    let (_l, h) = handle();
    let s = h.system();
    let not_mig = s
        .create_gpu_instance(1, GpuInstanceProfile::Slice1)
        .unwrap_err();
    assert_eq!(code(not_mig), ReturnCode::NotSupported);
    s.create_gpu_instance(0, GpuInstanceProfile::Slice7)
        .unwrap();
    let full = s
        .create_gpu_instance(0, GpuInstanceProfile::Slice1)
        .unwrap_err();
    assert_eq!(code(full), ReturnCode::InsufficientResources);
    let unknown = s.delete_gpu_instance(40).unwrap_err();
    assert_eq!(code(unknown), ReturnCode::InstanceNotFound);
    let unknown = s.delete_compute_instance(40).unwrap_err();
    assert_eq!(code(unknown), ReturnCode::ComputeInstanceNotFound);
    let no_parent = s
        .create_compute_instance(40, ComputeInstanceProfile::Slice1)
        .unwrap_err();
    assert_eq!(code(no_parent), ReturnCode::BadParam);
    // The C values, through dcgm::raw: 1 to 10 and 30 to 37.
    assert_eq!(raw::gpu_instance_profile_from(30), None);
    assert_eq!(raw::compute_instance_profile_from(1), None);
    for (i, p) in GpuInstanceProfile::ALL.into_iter().enumerate() {
        assert_eq!(raw::gpu_instance_profile(p), 1 + i as u32);
        assert_eq!(
            raw::gpu_instance_profile_from(raw::gpu_instance_profile(p)),
            Some(p)
        );
    }
    for (i, p) in ComputeInstanceProfile::ALL.into_iter().enumerate() {
        assert_eq!(raw::compute_instance_profile(p), 30 + i as u32);
        assert_eq!(
            raw::compute_instance_profile_from(raw::compute_instance_profile(p)),
            Some(p)
        );
    }
}

#[test]
fn an_unknown_field_and_the_field_group_limit_say_what_is_wrong() {
    let (_l, h) = handle();
    let s = h.system();
    let temp = FieldId::by_name("DCGM_FI_DEV_GPU_TEMP").unwrap();
    let e = s
        .entities_latest_values(
            &[Entity::new(EntityGroup::Gpu, 0)],
            &[temp, FieldId(60_000)],
        )
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("60000")),
        "{e}"
    );
    let mut made = Vec::new();
    let err = loop {
        match FieldGroup::create(&h, &format!("fg{}", made.len()), &[temp]) {
            Ok(fg) => made.push(fg),
            Err(e) => break e,
        }
    };
    assert_eq!(made.len(), 61);
    assert_eq!(code(err.clone()), ReturnCode::MaxLimit);
    assert!(err.to_string().contains("61"), "{err}");
}

#[test]
fn mig_hierarchy_is_a_tree() {
    // The default node: GPU 7 in MIG mode.
    let _l = SimulatorLock::new(None).unwrap();
    let h = Handle::builder()
        .library_path(simulator_path())
        .embedded()
        .unwrap();
    let tree = h.system().mig_hierarchy().unwrap();
    assert_eq!(tree.len(), 1, "only GPU 7 is in MIG mode");
    let gpu = &tree[0];
    assert_eq!(gpu.gpu, 7);
    assert_eq!(gpu.uuid, h.system().device_attributes(7).unwrap().uuid);
    assert_eq!(
        gpu.instances.iter().map(|i| i.slices).collect::<Vec<_>>(),
        [Some(3), Some(2), Some(1)]
    );
    assert_eq!(
        gpu.instances
            .iter()
            .map(|i| i.compute_instances.len())
            .collect::<Vec<_>>(),
        [1, 2, 1]
    );
    let instances = h
        .system()
        .entities(EntityGroup::GpuInstance, false)
        .unwrap();
    let ids: Vec<u32> = gpu.instances.iter().map(|i| i.entity_id).collect();
    assert_eq!(instances.iter().map(|e| e.id).collect::<Vec<_>>(), ids);
    h.close().unwrap();
}
