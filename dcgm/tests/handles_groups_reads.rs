//! The safe layer's core against dcgm-sim: handles, groups, field groups, watches, reads,
//! errors, threads and object lifetimes.

mod common;

use dcgm::BlankKind;
use std::collections::HashSet;
use std::sync::Arc;

use common::*;
use dcgm::raw::sys::*;
use dcgm::*;

fn fid(name: &str) -> FieldId {
    FieldId::parse(name).unwrap()
}

#[test]
fn handles_groups_and_watches_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Handle>();
    both::<Group>();
    both::<FieldGroup>();
    both::<Watch>();
    both::<System>();
    both::<Error>();
}

#[test]
fn embedded_handle_on_the_simulator_is_labelled_simulated() {
    let s = Sim::new(None);
    let h = s.handle(OperationMode::Auto);
    assert!(h.is_simulated());
    assert_eq!(h.kind(), &ConnectionKind::Embedded);
    let sys = h.system();
    assert_eq!(sys.gpu_ids().unwrap(), (0..8).collect::<Vec<u32>>());
    assert_eq!(
        sys.library_version().unwrap().version.as_deref(),
        Some("4.6.0")
    );
    let a = sys.device_attributes(3).unwrap();
    assert!(a.uuid.starts_with("GPU-"));
    assert_eq!(a.power_limit_w, Some(700));
    assert!(sys.hostengine_healthy().unwrap());
    assert_eq!(
        sys.entities(EntityGroup::GpuInstance, false).unwrap().len(),
        3
    );
    assert_eq!(
        sys.entities(EntityGroup::Link, false).unwrap().len(),
        8 * 18 + 4 * 64
    );
}

#[test]
fn missing_library_lists_every_path_tried() {
    let err = Handle::builder()
        .library_path("/nonexistent/dir/libdcgm.so.4")
        .embedded()
        .unwrap_err();
    let Error::LibraryNotFound(load) = &err else {
        panic!("expected LibraryNotFound, got {err:?}");
    };
    assert_eq!(load.attempts.len(), 1);
    assert!(
        load.attempts[0]
            .candidate
            .contains("/nonexistent/dir/libdcgm.so.4")
    );
    // The loader's error stays in the chain.
    let source = std::error::Error::source(&err).expect("a source");
    assert!(
        source.downcast_ref::<dcgm::raw::sys::LoadError>().is_some(),
        "{source:?}"
    );
    let text = err.to_string();
    assert!(text.contains("datacenter-gpu-manager-4-core"), "{text}");
    assert!(text.contains("DCGM_LIB_PATH"), "{text}");
}

#[test]
fn a_failed_init_can_be_retried() {
    let s = Sim::new(Some(r#"{"faults":{"init_fails":true}}"#));
    let err = Handle::builder()
        .library_path(testing::simulator_path())
        .embedded()
        .unwrap_err();
    assert_eq!(err.code(), ReturnCode::from_raw(DCGM_ST_INIT_ERROR));
    assert!(err.to_string().contains("hint"), "{err}");
    configure(None);
    let h = s.handle(OperationMode::Auto);
    assert_eq!(h.system().gpu_ids().unwrap().len(), 8);
}

#[test]
fn several_handles_share_the_process_and_close_in_any_order() {
    let s = Sim::new(None);
    let a = s.handle(OperationMode::Auto);
    let b = s.handle(OperationMode::Auto);
    let c = Handle::builder()
        .library_path(testing::simulator_path())
        .connect("127.0.0.1")
        .unwrap();
    assert!(matches!(c.kind(), ConnectionKind::Standalone(_)));
    a.close().unwrap();
    assert_eq!(
        b.system().gpu_ids().unwrap().len(),
        8,
        "b survives a's close"
    );
    assert_eq!(c.system().gpu_ids().unwrap().len(), 8);
    drop(b);
    assert_eq!(
        c.system().gpu_ids().unwrap().len(),
        8,
        "c survives the embedded engine stopping"
    );
    c.close().unwrap();
    // Everything closed: the library was shut down, and a new handle starts cleanly.
    let d = s.handle(OperationMode::Auto);
    assert_eq!(object_counts(&d), (0, 0));
}

#[test]
fn unknown_hostengine_is_a_connection_error() {
    let _s = Sim::new(None);
    let err = Handle::builder()
        .library_path(testing::simulator_path())
        .connect("127.0.0.1:1")
        .unwrap_err();
    assert!(matches!(err, Error::ConnectFailed { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("could not connect") && msg.contains("127.0.0.1:1") && msg.contains("refused"),
        "{msg}"
    );
    assert!(!msg.contains("was lost"), "{msg}");
}

#[test]
fn group_outlives_its_handle_variable_and_objects_are_released() {
    let s = Sim::new(None);
    let h = s.handle(OperationMode::Manual);
    let probe = s.handle(OperationMode::Manual);
    let group = Group::with_gpus(&h, "keep", &[0, 2]).unwrap();
    let fields = FieldGroup::create(&h, "keep-fields", &[fid("gpu_temp")]).unwrap();
    let watch = group.watch(&fields, WatchOptions::default()).unwrap();
    drop(h);
    probe.update_all_fields(true).unwrap();
    let vals = group.latest_values(&fields).unwrap();
    assert_eq!(vals.len(), 2);
    assert!(vals.iter().all(|v| matches!(v.value, Value::Int(_))));
    assert_eq!(object_counts(&probe), (1, 1));
    drop(group);
    assert_eq!(
        object_counts(&probe),
        (1, 1),
        "the watch still holds the group"
    );
    drop(watch);
    drop(fields);
    assert_eq!(object_counts(&probe), (0, 0), "no C object leaked");
}

#[test]
fn field_group_limits_are_typed_errors() {
    let s = Sim::new(None);
    let h = s.handle(OperationMode::Auto);
    let many: Vec<FieldId> = dcgm::raw::sys::FIELD_TABLE
        .iter()
        .take(128)
        .map(|f| FieldId(f.id))
        .collect();
    let err = FieldGroup::create(&h, "too-many", &many).unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument(ref m) if m.contains("127")),
        "{err}"
    );
    assert!(matches!(
        FieldGroup::create(&h, "empty", &[]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        FieldGroup::create(&h, "bad", &[FieldId(9999)]),
        Err(Error::InvalidArgument(_))
    ));
    let _first = FieldGroup::create(&h, "dup", &[fid("gpu_temp")]).unwrap();
    let err = FieldGroup::create(&h, "dup", &[fid("gpu_temp")]).unwrap_err();
    assert_eq!(err.code(), ReturnCode::from_raw(DCGM_ST_DUPLICATE_KEY));
    assert!(FieldGroup::create(&h, "ok", &many[..127]).is_ok());
}

#[test]
fn unknown_gpu_and_group_errors_are_typed() {
    let s = Sim::new(None);
    let h = s.handle(OperationMode::Auto);
    let err = h.system().device_attributes(99).unwrap_err();
    assert_eq!(err.code(), ReturnCode::from_raw(DCGM_ST_BADPARAM));
    let g = Group::create(&h, "g", GroupType::Empty).unwrap();
    assert_eq!(
        g.add_gpu(42).unwrap_err().code(),
        ReturnCode::from_raw(DCGM_ST_BADPARAM)
    );
    assert!(FieldId::parse("DCGM_FI_NOPE").is_err());
}

#[test]
fn reads_are_typed_and_blanks_are_never_numbers() {
    let json = format!(
        r#"{{"faults":{{"unsupported_fields":[{}],"blank_fields":[{}]}}}}"#,
        DCGM_FI_DEV_MEM_CLOCK, DCGM_FI_DEV_BOARD_POWER_WATTS
    );
    let s = Sim::new(Some(&json));
    let h = s.handle(OperationMode::Manual);
    let fields = FieldGroup::create(
        &h,
        "typed",
        &[
            fid("gpu_temp"),
            fid("power_usage"),
            fid("DCGM_FI_DEV_MEM_CLOCK"),
            fid("name"),
            fid("fan_speed"),
        ],
    )
    .unwrap();
    let gpus = Group::all_gpus(&h);
    // Before watching: no value, and no number.
    let before = gpus.latest_values(&fields).unwrap();
    assert!(before.iter().all(|v| v.value.is_blank()));
    assert!(before.iter().all(|v| v.status == DCGM_ST_NOT_WATCHED));
    let _w = gpus.watch(&fields, WatchOptions::default()).unwrap();
    h.update_all_fields(true).unwrap();
    for v in gpus.latest_values(&fields).unwrap() {
        match v.field.0 {
            DCGM_FI_DEV_GPU_TEMP_CELSIUS => {
                assert!(matches!(v.value, Value::Int(t) if (20..100).contains(&t)))
            }
            DCGM_FI_DEV_BOARD_POWER_WATTS => assert_eq!(v.value, Value::Blank(BlankKind::Blank)),
            DCGM_FI_DEV_MEM_CLOCK | DCGM_FI_DEV_FAN_SPEED => {
                assert_eq!(v.value, Value::Blank(BlankKind::NotSupported))
            }
            DCGM_FI_DEV_GPU_NAME => assert!(v.value.as_str().unwrap().contains("H100")),
            other => panic!("unexpected field {other}"),
        }
        assert_ne!(v.value.to_string(), "9223372036854775794");
    }
}

#[test]
fn since_reads_lose_and_repeat_nothing() {
    let s = Sim::new(None);
    let h = s.handle(OperationMode::Manual);
    let fields = FieldGroup::create(&h, "since", &[fid("gpu_temp"), fid("power_usage")]).unwrap();
    let gpus = Group::all_gpus(&h);
    let _w = gpus
        .watch(
            &fields,
            WatchOptions {
                update_interval: std::time::Duration::from_millis(1),
                max_keep_age: std::time::Duration::from_secs(600),
                max_keep_samples: 0,
            },
        )
        .unwrap();
    let mut cursor = SinceCursor::default();
    let mut seen = HashSet::new();
    let mut updates = 0;
    for round in 1..=4 {
        for _ in 0..round {
            h.update_all_fields(true).unwrap();
            updates += 1;
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let vals = gpus.values_since(&fields, &mut cursor).unwrap();
        assert_eq!(vals.len(), round * 16);
        for v in vals {
            assert!(
                seen.insert((v.entity, v.field, v.timestamp_us)),
                "repeated: {v:?}"
            );
        }
    }
    assert_eq!(seen.len(), updates * 16);
    assert!(gpus.values_since(&fields, &mut cursor).unwrap().is_empty());
}

#[test]
fn entities_read_covers_mig_and_marks_missing_entities() {
    let s = Sim::new(None);
    let h = s.handle(OperationMode::Manual);
    let ents = [
        Entity::gpu(7),
        Entity::new(EntityGroup::GpuInstance, 0),
        Entity::new(EntityGroup::ComputeInstance, 0),
    ];
    let group = Group::with_entities(&h, "mig", &ents).unwrap();
    let fields = FieldGroup::create(&h, "fb", &[fid("fb_used"), fid("fb_total")]).unwrap();
    let _w = group.watch(&fields, WatchOptions::default()).unwrap();
    h.update_all_fields(true).unwrap();
    let mut with_missing = ents.to_vec();
    with_missing.push(Entity::gpu(31));
    let vals = h
        .system()
        .entities_latest_values(&with_missing, fields.fields())
        .unwrap();
    assert_eq!(vals.len(), 8);
    let total = |e: Entity| {
        vals.iter()
            .find(|v| v.entity == e && v.field == fid("fb_total"))
            .unwrap()
            .value
            .as_i64()
    };
    assert!(total(ents[1]).unwrap() < total(ents[0]).unwrap());
    let missing: Vec<&FieldValue> = vals
        .iter()
        .filter(|v| v.entity == Entity::gpu(31))
        .collect();
    // As libdcgm 4.6.0: an unknown entity has no cache entry, so each value is "not watched".
    assert!(!missing.is_empty());
    assert!(
        missing
            .iter()
            .all(|v| v.status == DCGM_ST_NOT_WATCHED && v.value.is_blank()),
        "{missing:?}"
    );
}

#[test]
fn many_threads_share_one_handle() {
    let s = Sim::new(None);
    let h = s.handle(OperationMode::Auto);
    let fields = FieldGroup::create(&h, "mt", &[fid("gpu_temp"), fid("sm_clock")]).unwrap();
    let gpus = Group::all_gpus(&h);
    let _w = gpus.watch(&fields, WatchOptions::default()).unwrap();
    h.update_all_fields(true).unwrap();
    let shared = Arc::new((gpus, fields));
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let shared = shared.clone();
            let h = h.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                for j in 0..50 {
                    shared.0.latest_values_into(&shared.1, &mut buf).unwrap();
                    assert_eq!(buf.len(), 16);
                    if j % 10 == 0 {
                        let g = Group::with_gpus(&h, &format!("t{i}-{j}"), &[i as u32]).unwrap();
                        assert_eq!(g.gpu_ids().unwrap(), vec![i as u32]);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        object_counts(&h).0,
        0,
        "every per-thread group was destroyed"
    );
}

#[test]
fn a_dropped_connection_is_reported_as_connection_lost() {
    let s = Sim::new(Some(r#"{"faults":{"drop_after_calls":4,"down_ms":100}}"#));
    let _ = &s;
    let h = Handle::builder()
        .library_path(testing::simulator_path())
        .connect("localhost")
        .unwrap();
    let sys = h.system();
    let mut lost = None;
    for _ in 0..10 {
        if let Err(e) = sys.gpu_ids() {
            lost = Some(e);
            break;
        }
    }
    let err = lost.expect("the connection drops after 4 calls");
    assert!(matches!(err, Error::ConnectionLost { .. }), "{err:?}");
    assert!(err.to_string().contains("open a new handle"));
    std::thread::sleep(std::time::Duration::from_millis(150));
    let again = Handle::builder()
        .library_path(testing::simulator_path())
        .connect("localhost")
        .unwrap();
    assert_eq!(again.system().gpu_ids().unwrap().len(), 8);
}

#[test]
fn field_metadata_is_copied_out_and_outlives_the_handle() {
    let s = Sim::new(None);
    let h = s.handle(OperationMode::Auto);
    let meta = h
        .system()
        .field_meta(fid("DCGM_FI_DEV_POWER_USAGE"))
        .unwrap()
        .unwrap();
    let by_tag = h.system().field_meta_by_name("gpu_temp").unwrap().unwrap();
    assert!(h.system().field_meta(FieldId(9999)).unwrap().is_none());
    drop(h);
    assert_eq!(meta.tag, "power_usage");
    assert_eq!(meta.unit, "W");
    assert_eq!(meta.field_type, FieldType::Double);
    assert_eq!(by_tag.id, FieldId(DCGM_FI_DEV_GPU_TEMP_CELSIUS));
    assert_eq!(by_tag.entity_level, EntityGroup::Gpu);
}

#[test]
fn existing_groups_and_field_groups_can_be_found_and_bound() {
    let s = Sim::new(None);
    let h = s.handle(OperationMode::Auto);
    let g = Group::with_gpus(&h, "found", &[3]).unwrap();
    let fg = FieldGroup::create(&h, "found-fields", &[fid("gpu_temp")]).unwrap();
    let sys = h.system();
    assert_eq!(sys.group_ids().unwrap(), vec![g.id()]);
    assert_eq!(
        sys.field_group_id_by_name("found-fields").unwrap(),
        Some(fg.id())
    );
    assert_eq!(sys.field_group_id_by_name("nope").unwrap(), None);
    let bound = Group::from_id(&h, g.id()).unwrap();
    assert_eq!(bound.gpu_ids().unwrap(), vec![3]);
    drop(bound);
    assert_eq!(
        sys.group_ids().unwrap().len(),
        1,
        "a bound group is not destroyed on drop"
    );
    assert!(Group::from_id(&h, dcgm::GroupId::from(4242)).is_err());
    let loaded = FieldGroup::from_id(&h, fg.id()).unwrap();
    assert_eq!(loaded.fields(), &[fid("gpu_temp")]);
}

#[test]
fn blank_attributes_decode_to_none_never_to_sentinel_numbers() {
    let s = Sim::new(Some(r#"{"faults":{"blank_attributes":true}}"#));
    let h = s.handle(OperationMode::Auto);
    let a = h.system().device_attributes(0).unwrap();
    testing::assert_no_sentinel(&format!("{a:?}"));
    assert!(a.uuid.starts_with("GPU-"));
    for v in [
        a.memory_total_mib,
        a.memory_used_mib,
        a.memory_free_mib,
        a.power_limit_w,
        a.power_limit_default_w,
        a.power_limit_min_w,
        a.power_limit_max_w,
        a.power_limit_enforced_w,
        a.slowdown_temp_c,
        a.shutdown_temp_c,
        a.pci_device_id,
    ] {
        assert_eq!(v, None, "{a:?}");
    }
    assert_eq!((a.brand, a.serial, a.vbios), (None, None, None));
    assert!(a.supported_clocks.is_empty());
}

#[test]
fn blank_struct_answers_decode_to_none_never_to_sentinel_numbers() {
    let s = Sim::new(Some(r#"{"faults":{"blank_structs":true}}"#));
    let h = s.handle(OperationMode::Auto);
    let sys = h.system();
    let mig = sys.mig_hierarchy().unwrap();
    testing::assert_no_sentinel(&format!("{mig:?}"));
    let gi = &mig[0].instances[0];
    assert_eq!(
        (gi.nvml_instance_id, gi.profile_id, gi.slices),
        (None, None, None)
    );
    let ci = &gi.compute_instances[0];
    assert_eq!((ci.nvml_compute_instance_id, ci.slices), (None, None));
    let cpus = sys.cpu_hierarchy().unwrap();
    testing::assert_no_sentinel(&format!("{cpus:?}"));
    assert!(
        cpus.iter()
            .all(|c| c.serial.is_none() && !c.cores.is_empty())
    );
    let g = Group::with_gpus(&h, "blank-config", &[0]).unwrap();
    let current = g.config_get(ConfigKind::Current).unwrap();
    testing::assert_no_sentinel(&format!("{current:?}"));
    assert!(current[0].power_limit_w.is_none() && current[0].ecc_mode.is_none());
}
