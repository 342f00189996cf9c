//! Contracts of the safe `dcgm` layer that hold on any libdcgm.

use std::time::{Duration, Instant};

use dcgm::testing::assert_no_sentinel;
use dcgm::*;

use crate::target::{Kind, Listen, Target};
use crate::{Case, case};

pub fn cases() -> Vec<Case> {
    vec![
        case("versions_name_the_release", versions_name_the_release),
        case(
            "discovery_lists_gpus_with_identity",
            discovery_lists_gpus_with_identity,
        ),
        case("attributes_carry_no_sentinel", attributes_carry_no_sentinel),
        case("unknown_gpu_is_a_typed_error", unknown_gpu_is_a_typed_error),
        case("gpu_entities_match_gpu_ids", gpu_entities_match_gpu_ids),
        case(
            "group_lifecycle_and_membership",
            group_lifecycle_and_membership,
        ),
        case("group_limit_is_a_typed_error", group_limit_is_a_typed_error),
        case(
            "field_group_limits_and_duplicates",
            field_group_limits_and_duplicates,
        ),
        case("watch_then_latest_values", watch_then_latest_values),
        case(
            "field_samples_into_a_kept_buffer",
            field_samples_into_a_kept_buffer,
        ),
        case(
            "read_before_watch_is_not_watched",
            read_before_watch_is_not_watched,
        ),
        case("since_reads_never_repeat", since_reads_never_repeat),
        case(
            "entity_reads_match_group_reads",
            entity_reads_match_group_reads,
        ),
        case("health_set_get_check", health_set_get_check),
        case("policy_register_unregister", policy_register_unregister),
        case("config_get_has_no_sentinel", config_get_has_no_sentinel),
        case("topology_of_a_gpu", topology_of_a_gpu),
        case("nvlink_and_p2p_status", nvlink_and_p2p_status),
        case(
            "mig_hierarchy_has_no_sentinel",
            mig_hierarchy_has_no_sentinel,
        ),
        case("cpu_hierarchy_or_typed_error", cpu_hierarchy_or_typed_error),
        case(
            "profiling_groups_list_their_fields",
            profiling_groups_list_their_fields,
        ),
        case(
            "introspection_reports_engine_use",
            introspection_reports_engine_use,
        ),
        case(
            "module_statuses_list_core_loaded",
            module_statuses_list_core_loaded,
        ),
        case(
            "pid_stats_before_watch_and_unknown_pid",
            pid_stats_before_watch_and_unknown_pid,
        ),
        case(
            "diagnostics_run_or_typed_error",
            diagnostics_run_or_typed_error,
        ),
        case(
            "errors_carry_codes_and_messages",
            errors_carry_codes_and_messages,
        ),
        case(
            "field_metadata_by_id_and_name",
            field_metadata_by_id_and_name,
        ),
        case("connect_over_tcp", connect_over_tcp),
        case("connect_over_unix_socket", connect_over_unix_socket),
        case(
            "connect_refused_is_a_typed_error",
            connect_refused_is_a_typed_error,
        ),
    ]
}

fn fid(name: &str) -> FieldId {
    FieldId::parse(name).unwrap()
}

fn code(e: &Error) -> i32 {
    e.code().raw()
}

fn first_gpu(h: &Handle) -> u32 {
    h.system().gpu_ids().unwrap()[0]
}

/// The version word a library of the run's release reports: `4.6.0`, or the older release.
fn release_word(t: &Target) -> String {
    t.version().to_string()
}

fn versions_name_the_release(t: &Target) {
    let h = t.embedded();
    let v = h.system().library_version().unwrap();
    assert_eq!(
        v.version.as_deref(),
        Some(release_word(t).as_str()),
        "{v:?}"
    );
    assert_eq!(h.dcgm_version(), Some(t.version()));
    assert_eq!(h.is_simulated(), t.kind == Kind::Sim);
    assert!(h.system().hostengine_healthy().unwrap());
}

fn discovery_lists_gpus_with_identity(t: &Target) {
    let h = t.embedded();
    let sys = h.system();
    let ids = sys.gpu_ids().unwrap();
    assert!(!ids.is_empty());
    let supported = sys.supported_gpu_ids().unwrap();
    assert!(
        supported.iter().all(|g| ids.contains(g)),
        "{supported:?} ⊄ {ids:?}"
    );
    for g in ids {
        let a = sys.device_attributes(g).unwrap();
        assert!(a.uuid.starts_with("GPU-"), "{a:?}");
        assert!(!a.name.is_empty());
        assert_eq!(a.pci_bus_id.matches(':').count(), 2, "{}", a.pci_bus_id);
    }
}

fn attributes_carry_no_sentinel(t: &Target) {
    let h = t.embedded();
    let sys = h.system();
    for g in sys.gpu_ids().unwrap() {
        let a = sys.device_attributes(g).unwrap();
        assert_no_sentinel(&format!("{a:?}"));
        if let (Some(total), Some(used)) = (a.memory_total_mib, a.memory_used_mib) {
            assert!(used <= total, "{a:?}");
        }
    }
}

fn unknown_gpu_is_a_typed_error(t: &Target) {
    let h = t.embedded();
    let e = h.system().device_attributes(9999).unwrap_err();
    assert_eq!(code(&e), dcgm::raw::sys::DCGM_ST_BADPARAM, "{e:?}");
    assert!(Group::with_gpus(&h, "contract-bad-gpu", &[9999]).is_err());
}

fn gpu_entities_match_gpu_ids(t: &Target) {
    let h = t.embedded();
    let sys = h.system();
    let ents: Vec<u32> = sys
        .entities(EntityGroup::Gpu, false)
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ents, sys.gpu_ids().unwrap());
}

fn group_lifecycle_and_membership(t: &Target) {
    let h = t.embedded();
    let gpu = first_gpu(&h);
    let g = Group::create(&h, "contract-group", GroupType::Empty).unwrap();
    assert!(g.entities().unwrap().is_empty());
    g.add_gpu(gpu).unwrap();
    let info = g.info().unwrap();
    assert_eq!(info.name, "contract-group");
    assert_eq!(info.entities, vec![Entity::gpu(gpu)]);
    g.remove_gpu(gpu).unwrap();
    assert!(g.gpu_ids().unwrap().is_empty());
    let id = g.id();
    g.destroy().unwrap();
    assert!(Group::from_id(&h, id).and_then(|g| g.info()).is_err());
    let all = Group::all_gpus(&h);
    assert_eq!(all.gpu_ids().unwrap(), h.system().gpu_ids().unwrap());
}

fn group_limit_is_a_typed_error(t: &Target) {
    let h = t.embedded();
    let mut made = Vec::new();
    let err = loop {
        match Group::create(
            &h,
            &format!("contract-limit-{}", made.len()),
            GroupType::Empty,
        ) {
            Ok(g) => made.push(g),
            Err(e) => break e,
        }
        assert!(made.len() < 200, "no group limit within 200 groups");
    };
    assert_eq!(code(&err), dcgm::raw::sys::DCGM_ST_MAX_LIMIT, "{err}");
    let n = made.len();
    drop(made);
    // Every group was destroyed: the same number can be made again.
    let again: Vec<Group> = (0..n)
        .map(|i| Group::create(&h, &format!("contract-again-{i}"), GroupType::Empty).unwrap())
        .collect();
    assert_eq!(again.len(), n);
}

fn field_group_limits_and_duplicates(t: &Target) {
    let h = t.embedded();
    let temp = fid("DCGM_FI_DEV_GPU_TEMP");
    let fg = FieldGroup::create(&h, "contract-fg", &[temp]).unwrap();
    assert_eq!(fg.fields(), &[temp]);
    let dup = FieldGroup::create(&h, "contract-fg", &[temp]).unwrap_err();
    assert_eq!(code(&dup), dcgm::raw::sys::DCGM_ST_DUPLICATE_KEY, "{dup}");
    let many: Vec<FieldId> = (1..1000u16)
        .filter(|id| dcgm::raw::sys::field_by_id(*id).is_some())
        .take(MAX_FIELDS_PER_FIELD_GROUP + 1)
        .map(FieldId)
        .collect();
    assert!(FieldGroup::create(&h, "contract-fg-big", &many).is_err());
    let back = FieldGroup::from_id(&h, fg.id()).unwrap();
    assert_eq!(back.fields(), &[temp]);

    // Destroying: a field group loaded by id is never destroyed, nor one a clone still holds.
    let id = fg.id();
    back.destroy().unwrap();
    let clone = fg.clone();
    fg.destroy().unwrap();
    assert!(
        FieldGroup::from_id(&h, id).is_ok(),
        "destroyed while a clone held it"
    );
    clone.destroy().unwrap();
    let gone = FieldGroup::from_id(&h, id).unwrap_err();
    assert_eq!(code(&gone), dcgm::raw::sys::DCGM_ST_NO_DATA, "{gone}");
    // The name is free again.
    FieldGroup::create(&h, "contract-fg", &[temp]).unwrap();
}

fn watched(h: &Handle, names: &[&str]) -> (Group, FieldGroup, Watch) {
    let g = Group::all_gpus(h);
    let fields: Vec<FieldId> = names.iter().map(|n| fid(n)).collect();
    let fg = FieldGroup::create(
        h,
        &format!("contract-watch-{}", std::process::id() ^ rand_u32()),
        &fields,
    )
    .unwrap();
    let w = g
        .watch(
            &fg,
            WatchOptions {
                update_interval: Duration::from_millis(100),
                max_keep_age: Duration::from_secs(60),
                max_keep_samples: 0,
            },
        )
        .unwrap();
    h.update_all_fields(true).unwrap();
    (g, fg, w)
}

fn rand_u32() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
}

const BASIC: &[&str] = &[
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_NAME",
];

fn watch_then_latest_values(t: &Target) {
    let h = t.embedded();
    let (g, fg, _w) = watched(&h, BASIC);
    let vals = g.latest_values(&fg).unwrap();
    let gpus = h.system().gpu_ids().unwrap().len();
    assert_eq!(vals.len(), gpus * BASIC.len());
    for v in &vals {
        assert_no_sentinel(&format!("{:?}", v.value));
        assert!(
            v.timestamp_us > 0 || matches!(v.value, Value::Blank(_)),
            "{v:?}"
        );
    }
    let name = vals
        .iter()
        .find(|v| v.field == fid("DCGM_FI_DEV_NAME"))
        .unwrap();
    assert!(
        matches!(&name.value, Value::String(s) if !s.is_empty()),
        "{name:?}"
    );
}

fn field_samples_into_a_kept_buffer(t: &Target) {
    let h = t.embedded();
    let power = fid("DCGM_FI_DEV_POWER_USAGE");
    let (_g, _fg, _w) = watched(&h, &["DCGM_FI_DEV_POWER_USAGE"]);
    let gpu = first_gpu(&h);
    let mut all = Vec::new();
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(110));
        h.update_all_fields(true).unwrap();
        all = h.field_samples(gpu, power, 0, 0, 1000).unwrap().unwrap();
        if all.len() >= 3 {
            break;
        }
    }
    assert!(all.len() >= 3, "{} samples after 50 updates", all.len());
    assert!(
        all.windows(2)
            .all(|w| w[0].timestamp_us < w[1].timestamp_us)
    );
    assert!(
        all.iter()
            .all(|v| v.field == power && v.entity == Entity::gpu(gpu))
    );
    // A fixed span, so that samples the engine takes meanwhile do not change the answers.
    let (first, last) = (all[0].timestamp_us, all[all.len() - 1].timestamp_us);
    let mut buffer = SampleBuffer::new(all.len());
    assert_eq!(buffer.max(), all.len());
    let mut out = vec![all[0].clone()];
    for _ in 0..3 {
        out.truncate(1);
        let n = h
            .field_samples_into(gpu, power, first, last, &mut buffer, &mut out)
            .unwrap();
        assert_eq!(n, Some(all.len()), "appended after what `out` held");
        assert_eq!(
            &out[1..],
            &all[..],
            "the same samples on every use of the buffer"
        );
    }
    let mut small = SampleBuffer::new(all.len() - 1);
    let mut none = Vec::new();
    let n = h
        .field_samples_into(gpu, power, first, last, &mut small, &mut none)
        .unwrap();
    assert_eq!(n, None, "more samples than the buffer holds");
    assert!(
        none.is_empty(),
        "nothing appended when the answer is partial"
    );
    let later = h
        .field_samples(gpu, power, all[1].timestamp_us, last, all.len())
        .unwrap()
        .unwrap();
    assert_eq!(later, all[1..], "a start time leaves older samples out");
    assert!(
        h.field_samples_into(9999, power, 0, 0, &mut buffer, &mut none)
            .is_err()
    );
}

fn read_before_watch_is_not_watched(t: &Target) {
    let h = t.embedded();
    let g = Group::all_gpus(&h);
    let fg = FieldGroup::create(
        &h,
        "contract-unwatched",
        &[fid("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL")],
    )
    .unwrap();
    let vals = g.latest_values(&fg).unwrap();
    assert_eq!(vals.len(), h.system().gpu_ids().unwrap().len(), "{vals:?}");
    for v in vals {
        assert_eq!(v.status, dcgm::raw::sys::DCGM_ST_NOT_WATCHED, "{v:?}");
        assert!(matches!(v.value, Value::Blank(_)), "{v:?}");
    }
}

fn since_reads_never_repeat(t: &Target) {
    let h = t.embedded();
    let (g, fg, _w) = watched(&h, &["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE"]);
    let mut cursor = SinceCursor::default();
    let mut seen = std::collections::HashSet::new();
    let mut total = 0;
    for _ in 0..5 {
        h.update_all_fields(true).unwrap();
        // Records with a non-OK status say a field has no samples (NO_DATA); they are not samples.
        for v in g.values_since(&fg, &mut cursor).unwrap() {
            if v.status != dcgm::raw::sys::DCGM_ST_OK {
                assert!(matches!(v.value, Value::Blank(_)), "{v:?}");
                continue;
            }
            assert!(
                seen.insert((v.entity, v.field, v.timestamp_us)),
                "sample repeated: {v:?}"
            );
            total += 1;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(total > 0, "no samples in five updates");
}

fn entity_reads_match_group_reads(t: &Target) {
    let h = t.embedded();
    let (g, fg, _w) = watched(&h, &["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_NAME"]);
    let gpu = first_gpu(&h);
    let by_entity = h
        .system()
        .entities_latest_values(&[Entity::gpu(gpu)], fg.fields())
        .unwrap();
    let by_group: Vec<FieldValue> = g
        .latest_values(&fg)
        .unwrap()
        .into_iter()
        .filter(|v| v.entity == Entity::gpu(gpu))
        .collect();
    assert_eq!(by_entity.len(), by_group.len());
    for (a, b) in by_entity.iter().zip(&by_group) {
        assert_eq!((a.entity, a.field), (b.entity, b.field));
        assert_eq!(a.value, b.value, "the engine holds one latest sample");
    }
}

fn health_set_get_check(t: &Target) {
    let h = t.embedded();
    let g = Group::with_gpus(&h, "contract-health", &[first_gpu(&h)]).unwrap();
    let sys = HealthSystems::MEM | HealthSystems::PCIE | HealthSystems::THERMAL;
    g.health_set(sys).unwrap();
    assert_eq!(g.health_get().unwrap(), sys);
    let r = g.health_check().unwrap();
    assert_no_sentinel(&format!("{r:?}"));
}

fn policy_register_unregister(t: &Target) {
    let h = t.embedded();
    let g = Group::with_gpus(&h, "contract-policy", &[first_gpu(&h)]).unwrap();
    g.policy_set(&Policy {
        dbe: true,
        thermal_max_c: Some(95),
        ..Policy::default()
    })
    .unwrap();
    let got = g.policy_get().unwrap();
    assert_eq!(got.len(), 1);
    assert!(got[0].1.dbe);
    assert_eq!(got[0].1.thermal_max_c, Some(95));
    assert_no_sentinel(&format!("{got:?}"));
    let reg = g
        .policy_register(PolicyCondition::DBE | PolicyCondition::THERMAL, |_| {})
        .unwrap();
    reg.unregister().unwrap();
}

fn config_get_has_no_sentinel(t: &Target) {
    let h = t.embedded();
    let g = Group::with_gpus(&h, "contract-config", &[first_gpu(&h)]).unwrap();
    for kind in [ConfigKind::Current, ConfigKind::Target] {
        let c = g.config_get(kind).unwrap();
        assert_eq!(c.len(), 1);
        assert_no_sentinel(&format!("{c:?}"));
    }
}

fn topology_of_a_gpu(t: &Target) {
    let h = t.embedded();
    let sys = h.system();
    let gpus = sys.gpu_ids().unwrap();
    match sys.device_topology(gpus[0]) {
        Ok(topo) => {
            assert_no_sentinel(&format!("{topo:?}"));
            assert_eq!(topo.paths.len(), gpus.len() - 1);
        }
        // One GPU: nothing to connect; the library says so.
        Err(e) => {
            assert_eq!(gpus.len(), 1, "{e}");
            assert_eq!(code(&e), dcgm::raw::sys::DCGM_ST_NOT_SUPPORTED, "{e}");
        }
    }
}

fn nvlink_and_p2p_status(t: &Target) {
    let h = t.embedded();
    let s = h.system().nvlink_status().unwrap();
    assert_eq!(s.gpus.len(), h.system().gpu_ids().unwrap().len());
    assert_no_sentinel(&format!("{s:?}"));
}

fn mig_hierarchy_has_no_sentinel(t: &Target) {
    let h = t.embedded();
    let m = h.system().mig_hierarchy().unwrap();
    assert_no_sentinel(&format!("{m:?}"));
}

fn cpu_hierarchy_or_typed_error(t: &Target) {
    let h = t.embedded();
    if t.older_than("4.0.0") && !std::path::Path::new("/sys/class/hwmon").is_dir() {
        // DCGM 3.x's system-monitoring module crashes the engine on a machine without hwmon
        // (measured on the real 3.3.9): the safe layer does not ask, and says why.
        let e = h.system().cpu_hierarchy().unwrap_err();
        assert_eq!(code(&e), dcgm::raw::sys::DCGM_ST_NOT_SUPPORTED, "{e:?}");
        assert!(e.to_string().contains("/sys/class/hwmon"), "{e}");
        return;
    }
    match (t.kind, h.system().cpu_hierarchy()) {
        // The simulated node has two CPU sockets.
        (Kind::Sim, Ok(c)) => {
            assert_eq!(c.len(), 2, "{c:?}");
            assert_no_sentinel(&format!("{c:?}"));
        }
        // The real library's system-monitoring module does not load without CPUs it knows.
        (Kind::Real, Err(e)) => {
            assert_eq!(code(&e), dcgm::raw::sys::DCGM_ST_MODULE_NOT_LOADED, "{e:?}");
            assert!(e.hint().is_some(), "{e:?}");
        }
        (kind, r) => panic!("{kind:?}: unexpected {r:?}"),
    }
}

fn profiling_groups_list_their_fields(t: &Target) {
    let h = t.embedded();
    let answer = h.system().profiling_metric_groups(first_gpu(&h));
    if t.is_real() && !t.older_than("4.0.0") && t.older_than("4.6.0") {
        // The real 4.1.1 and 4.5.3 beside the checkout load no profiling module (measured):
        // the typed error, with what to do.
        let e = answer.unwrap_err();
        assert_eq!(code(&e), dcgm::raw::sys::DCGM_ST_MODULE_NOT_LOADED, "{e:?}");
        assert!(e.hint().is_some(), "{e:?}");
        return;
    }
    let groups = answer.unwrap();
    // dcgm-sim's Hopper table, and what the real library reports for the injected H200: three
    // groups on 4.6.0, two on 3.3.9 (measured).
    let expected = match t.kind {
        Kind::Sim => 5,
        Kind::Real if t.older_than("4.0.0") => 2,
        Kind::Real => 3,
    };
    assert_eq!(groups.len(), expected, "{groups:?}");
    for g in &groups {
        assert!(!g.fields.is_empty(), "{g:?}");
        for f in &g.fields {
            assert!(
                f.name().starts_with("DCGM_FI_PROF_"),
                "{} of {g:?} is not a profiling field",
                f.name()
            );
        }
    }
}

fn introspection_reports_engine_use(t: &Target) {
    let h = t.embedded();
    let sys = h.system();
    assert!(sys.hostengine_memory_bytes().unwrap() > 0);
    let cpu = sys.hostengine_cpu_utilization().unwrap();
    assert!((0.0..=100.0 * 1024.0).contains(&cpu.total), "{cpu:?}");
}

fn module_statuses_list_core_loaded(t: &Target) {
    let h = t.embedded();
    let m = h.system().module_statuses().unwrap();
    assert!(
        m.iter()
            .any(|(m, s)| *m == Module::Core && *s == ModuleStatus::Loaded),
        "{m:?}"
    );
}

fn pid_stats_before_watch_and_unknown_pid(t: &Target) {
    let h = t.embedded();
    let g = Group::with_gpus(&h, "contract-pid", &[first_gpu(&h)]).unwrap();
    g.watch_pid_fields(WatchOptions::default()).unwrap();
    h.update_all_fields(true).unwrap();
    let e = g.pid_info(0x7fff_0001).unwrap_err();
    assert_eq!(code(&e), dcgm::raw::sys::DCGM_ST_NO_DATA, "{e}");
}

fn diagnostics_run_or_typed_error(t: &Target) {
    let h = t.embedded();
    let g = Group::with_gpus(&h, "contract-diag", &[first_gpu(&h)]).unwrap();
    match g.run_diagnostic(DiagLevel::Short) {
        Ok(r) => {
            assert!(!r.tests.is_empty());
            assert_no_sentinel(&format!("{r:?}"));
        }
        // Every release from 3.3.9 is asked in its own response layout (v10, v11, v12): a
        // release without one of them would be NotInRelease, named as such.
        Err(e @ Error::NotInRelease { .. }) => crate::not_in_release(t, &e),
        Err(e) => {
            // The real build has no nvvs.
            assert_eq!(t.kind, Kind::Real, "{e}");
            assert_eq!(
                code(&e),
                dcgm::raw::sys::DCGM_ST_NVVS_BINARY_NOT_FOUND,
                "{e}"
            );
            assert!(e.hint().is_some(), "{e}");
        }
    }
}

fn errors_carry_codes_and_messages(t: &Target) {
    let h = t.embedded();
    let e = Group::from_id(&h, dcgm::GroupId::from(4_000_000))
        .and_then(|g| g.info())
        .unwrap_err();
    // Both libraries answer "not configured" for a group id that was never created.
    assert!(
        matches!(
            e,
            Error::Dcgm {
                call: "dcgmGroupGetInfo",
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(code(&e), dcgm::raw::sys::DCGM_ST_NOT_CONFIGURED, "{e:?}");
    assert!(
        e.to_string()
            .starts_with("dcgmGroupGetInfo failed: DCGM_ST_NOT_CONFIGURED (-5)"),
        "{e}"
    );
    // An unknown field id is refused before DCGM is called.
    match FieldGroup::create(&h, "contract-bad-field", &[FieldId(60_000)]) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("60000"), "{m}"),
        other => panic!("an unknown field id is refused: {other:?}"),
    }
}

fn field_metadata_by_id_and_name(t: &Target) {
    let h = t.embedded();
    let sys = h.system();
    let m = sys
        .field_meta(fid("DCGM_FI_DEV_GPU_TEMP"))
        .unwrap()
        .unwrap();
    assert_eq!(m.tag, "gpu_temp");
    assert!(sys.field_meta(FieldId(60_000)).unwrap().is_none());
    let power = sys
        .field_meta_by_name("DCGM_FI_DEV_POWER_USAGE")
        .unwrap()
        .unwrap();
    assert_eq!(power.id, fid("DCGM_FI_DEV_POWER_USAGE"));
    assert_eq!(power.tag, "power_usage");
    assert_eq!(power.field_type, FieldType::Double);
}

fn connect_and_read(t: &Target, listen: Listen) {
    let he = t.start_hostengine(listen);
    let h = t.builder().connect(&he.address).unwrap();
    assert!(matches!(h.kind(), ConnectionKind::Standalone(_)));
    let v = h.system().hostengine_version().unwrap();
    assert_eq!(
        v.version.as_deref(),
        Some(release_word(t).as_str()),
        "{v:?}"
    );
    let (g, fg, _w) = watched(&h, BASIC);
    let values = g.latest_values(&fg).unwrap();
    let gpus = h.system().gpu_ids().unwrap().len();
    assert_eq!(values.len(), gpus * BASIC.len(), "{values:?}");
    if let Some(pid) = he.pid() {
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    }
}

fn connect_over_tcp(t: &Target) {
    connect_and_read(t, Listen::Tcp);
}

fn connect_over_unix_socket(t: &Target) {
    connect_and_read(t, Listen::Unix);
}

fn connect_refused_is_a_typed_error(t: &Target) {
    let t0 = Instant::now();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = t
        .builder()
        .timeout(Duration::from_secs(2))
        .connect(&format!("127.0.0.1:{port}"))
        .unwrap_err();
    match &e {
        Error::ConnectFailed { address, reason } => {
            assert_eq!(address, &format!("127.0.0.1:{port}"));
            assert!(reason.contains("refused"), "{reason}");
        }
        other => panic!("expected ConnectFailed: {other:?}"),
    }
    assert_eq!(
        code(&e),
        dcgm::raw::sys::DCGM_ST_CONNECTION_NOT_VALID,
        "{e:?}"
    );
    assert!(t0.elapsed() < Duration::from_secs(10));
}
