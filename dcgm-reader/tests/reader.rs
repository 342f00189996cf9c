//! The reader against dcgm-sim: options, shapes, since-reads, reconnection.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use dcgm::raw::sys::*;
use dcgm::testing::{SimulatorLock, simulator_path};
use dcgm::{BlankKind, Entity, EntityGroup, FieldId, OperationMode, Value};
use dcgm_reader::*;

fn fid(s: &str) -> FieldId {
    FieldId::parse(s).unwrap()
}

fn builder() -> ReaderBuilder {
    Reader::builder().library_path(simulator_path())
}

#[test]
fn default_reader_returns_the_thirty_upstream_fields_for_every_gpu() {
    let _s = SimulatorLock::new(None).unwrap();
    let mut r = builder().build().unwrap();
    let v = r.latest_by_id().unwrap();
    assert_eq!(v.len(), 8);
    // 24 of the 30, as the real H200 answers: Hopper reports no retired pages (it remaps
    // rows) and no legacy PCIe throughput, and there is no XID sample before the first XID.
    // Blanks are left out.
    let absent = [
        DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL,
        DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL,
        DCGM_FI_DEV_PAGE_RETIRED_PENDING,
        DCGM_FI_DEV_PCIE_TX_THROUGHPUT,
        DCGM_FI_DEV_PCIE_RX_THROUGHPUT,
        DCGM_FI_DEV_XID_ERROR,
    ];
    for fields in v.values() {
        assert_eq!(fields.len(), 24, "{fields:?}");
        assert!(fields.values().all(|x| !x.is_blank()));
        assert!(absent.iter().all(|f| !fields.contains_key(&FieldId(*f))));
    }
    assert_eq!(r.is_simulated(), Some(true));
    let temp = &v[&0][&FieldId(DCGM_FI_DEV_GPU_TEMP_CELSIUS)];
    assert!(matches!(temp, Value::Int(t) if (20..100).contains(t)));
}

#[test]
fn by_name_uses_the_library_tags() {
    let _s = SimulatorLock::new(None).unwrap();
    let mut r = builder()
        .field_names(&["DCGM_FI_DEV_POWER_USAGE", "gpu_temp"])
        .unwrap()
        .build()
        .unwrap();
    let v = r.latest_by_name().unwrap();
    let keys: Vec<&String> = v[&3].keys().collect();
    assert_eq!(keys, vec!["gpu_temp", "power_usage"]);
}

#[test]
fn auto_mode_prefers_a_running_hostengine_and_falls_back_to_embedded() {
    let _s = SimulatorLock::new(None).unwrap();
    let mut r = builder().build().unwrap();
    r.connect().unwrap();
    assert_eq!(r.mode(), Some(&ChosenMode::Standalone("localhost".into())));
    drop(r);
    drop(_s);
    let _s = SimulatorLock::new(Some(r#"{"hostengines": []}"#)).unwrap();
    let mut r = builder().build().unwrap();
    r.connect().unwrap();
    assert_eq!(r.mode(), Some(&ChosenMode::Embedded));
    let mut r2 = builder()
        .connection(Connection::Remote("10.9.9.9".into()))
        .build()
        .unwrap();
    assert!(
        r2.connect().is_err(),
        "an explicit remote host is never replaced by embedded"
    );
}

#[test]
fn gpu_subset_ignore_list_and_blank_filtering() {
    let json = format!(
        r#"{{"faults":{{"unsupported_fields":[{}]}}}}"#,
        DCGM_FI_DEV_MEM_CLOCK
    );
    let _s = SimulatorLock::new(Some(&json)).unwrap();
    let fields = [fid("gpu_temp"), fid("sm_clock"), fid("memory_clock")];
    let mut r = builder()
        .fields(&fields)
        .gpu_ids(&[1, 5])
        .ignore(&[fid("sm_clock")])
        .build()
        .unwrap();
    let v = r.latest_by_id().unwrap();
    assert_eq!(v.keys().copied().collect::<Vec<_>>(), vec![1, 5]);
    assert_eq!(
        v[&1].keys().copied().collect::<Vec<_>>(),
        vec![fid("gpu_temp")],
        "ignored and blank dropped"
    );
    let gpus = r.gpus().unwrap();
    assert_eq!(gpus.len(), 2);
    assert!(gpus[0].uuid.starts_with("GPU-") && gpus[1].pci_bus_id.starts_with("00000000:"));

    let mut keep = builder()
        .fields(&fields)
        .gpu_ids(&[1])
        .ignore_blank(false)
        .build()
        .unwrap();
    let v = keep.latest_by_id().unwrap();
    assert_eq!(
        v[&1][&fid("memory_clock")],
        Value::Blank(BlankKind::NotSupported)
    );
}

#[test]
fn entities_mig_switches_and_cpus() {
    let _s = SimulatorLock::new(None).unwrap();
    let ents = [
        Entity::new(EntityGroup::GpuInstance, 1),
        Entity::new(EntityGroup::ComputeInstance, 2),
        Entity::new(EntityGroup::Switch, 0),
        Entity::new(EntityGroup::Cpu, 1),
    ];
    let fields = [
        fid("fb_used"),
        fid("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS"),
        fid("DCGM_FI_DEV_CPU_TEMP_CELSIUS"),
    ];
    let mut r = builder().entities(&ents).fields(&fields).build().unwrap();
    let snap = r.latest().unwrap();
    assert!(snap[&ents[0]].contains_key(&fid("fb_used")));
    assert!(snap[&ents[1]].contains_key(&fid("fb_used")));
    assert!(snap[&ents[2]].contains_key(&fid("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS")));
    assert!(snap[&ents[3]].contains_key(&fid("DCGM_FI_DEV_CPU_TEMP_CELSIUS")));
    assert!(
        r.latest_by_id().unwrap().is_empty(),
        "no GPU entities in this reader"
    );
}

#[test]
fn field_interval_map_watches_each_set_at_its_own_rate() {
    let _s = SimulatorLock::new(None).unwrap();
    let map = BTreeMap::from([
        (Duration::from_millis(5), vec![fid("gpu_temp")]),
        (Duration::from_secs(60), vec![fid("fb_total")]),
    ]);
    let mut r = builder()
        .connection(Connection::Embedded)
        .field_intervals(map)
        .build()
        .unwrap();
    r.since_last_call().unwrap();
    std::thread::sleep(Duration::from_millis(60));
    let since = r.since_last_call().unwrap();
    let g0 = &since[&Entity::gpu(0)];
    assert!(
        g0[&fid("gpu_temp")].len() >= 5,
        "fast field sampled often: {}",
        g0[&fid("gpu_temp")].len()
    );
    assert!(
        !g0.contains_key(&fid("fb_total")),
        "slow field not sampled again yet"
    );
}

#[test]
fn since_last_call_has_data_at_once_and_never_repeats_or_skips() {
    let _s = SimulatorLock::new(None).unwrap();
    let interval = Duration::from_millis(2);
    let mut r = builder()
        .connection(Connection::Embedded)
        .fields(&[fid("gpu_temp"), fid("total_energy_consumption")])
        .update_frequency(interval)
        .build()
        .unwrap();
    let first = r.since_last_call().unwrap();
    assert_eq!(
        first.len(),
        8,
        "unlike upstream, the first call returns data"
    );
    let mut last: HashMap<(Entity, FieldId), i64> = HashMap::new();
    let record = |m: &BTreeMap<Entity, BTreeMap<FieldId, Vec<Sample>>>,
                  last: &mut HashMap<_, i64>| {
        for (e, fields) in m {
            for (f, samples) in fields {
                for s in samples {
                    if let Some(prev) = last.get(&(*e, *f)) {
                        assert!(s.timestamp_us > *prev, "repeated or out of order");
                        let gap = s.timestamp_us - prev;
                        assert!(gap <= 2_000 + 1, "a sample was skipped: gap {gap} µs");
                    }
                    last.insert((*e, *f), s.timestamp_us);
                }
            }
        }
    };
    // Drop the forced first sample's irregular spacing: start tracking after it.
    let second = r.since_last_call().unwrap();
    record(&second, &mut last);
    let mut total = 0;
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(3));
        let m = r.since_last_call().unwrap();
        total += m
            .values()
            .flat_map(|f| f.values())
            .map(Vec::len)
            .sum::<usize>();
        record(&m, &mut last);
    }
    assert!(total > 100, "samples kept arriving: {total}");
}

#[test]
fn a_hostengine_restart_is_survived_without_the_caller_noticing() {
    let _s = SimulatorLock::new(Some(r#"{"faults":{"drop_after_calls":15,"down_ms":0}}"#)).unwrap();
    let mut r = builder()
        .connection(Connection::Remote("localhost".into()))
        .fields(&[fid("gpu_temp")])
        .build()
        .unwrap();
    for _ in 0..10 {
        let v = r.latest_by_id().unwrap();
        assert_eq!(v.len(), 8);
    }
    assert_eq!(r.reconnects(), 1);
}

#[test]
fn while_the_hostengine_is_down_reads_fail_and_then_recover() {
    let _s =
        SimulatorLock::new(Some(r#"{"faults":{"drop_after_calls":15,"down_ms":300}}"#)).unwrap();
    let mut r = builder()
        .connection(Connection::Remote("localhost".into()))
        .fields(&[fid("gpu_temp")])
        .build()
        .unwrap();
    let mut failed = false;
    for _ in 0..10 {
        if r.latest_by_id().is_err() {
            failed = true;
            break;
        }
    }
    assert!(
        failed,
        "reads fail while the host engine is down; stale data is never served"
    );
    std::thread::sleep(Duration::from_millis(350));
    assert_eq!(r.latest_by_id().unwrap().len(), 8);
    assert_eq!(r.reconnects(), 1);
}

#[test]
fn run_and_snapshots_deliver_at_an_interval() {
    let _s = SimulatorLock::new(None).unwrap();
    let mut r = builder()
        .connection(Connection::Embedded)
        .operation_mode(OperationMode::Auto)
        .fields(&[fid("gpu_temp")])
        .build()
        .unwrap();
    let mut n = 0;
    r.run(Duration::from_millis(1), Some(3), |snap| {
        assert_eq!(snap.len(), 8);
        n += 1;
        true
    })
    .unwrap();
    assert_eq!(n, 3);
    let snaps: Vec<_> = r.snapshots(Duration::from_millis(1)).take(2).collect();
    assert!(snaps.iter().all(|s| s.as_ref().unwrap().len() == 8));
}

#[test]
fn bad_options_are_rejected_before_connecting() {
    assert!(Reader::builder().fields(&[]).build().is_err());
    assert!(Reader::builder().fields(&[FieldId(9999)]).build().is_err());
    assert!(Reader::builder().field_names(&["not_a_field"]).is_err());
    assert!(
        Reader::builder()
            .update_frequency(Duration::ZERO)
            .build()
            .is_err()
    );
}

#[test]
fn latest_into_updates_in_place_and_drops_values_that_went_blank() {
    let _s = SimulatorLock::new(None).unwrap();
    let mut r = builder()
        .connection(Connection::Embedded)
        .operation_mode(OperationMode::Manual)
        // A forced update samples only fields that are due, as libdcgm does.
        .update_frequency(Duration::from_millis(1))
        .fields(&[fid("gpu_temp"), fid("sm_clock")])
        .gpu_ids(&[0, 1])
        .build()
        .unwrap();
    let mut snap = Snapshot::new();
    r.latest_into(&mut snap).unwrap();
    assert_eq!(snap.len(), 2);
    let first_ts = snap[&Entity::gpu(0)][&fid("gpu_temp")].timestamp_us;
    std::thread::sleep(Duration::from_millis(2));
    r.handle().unwrap().update_all_fields(true).unwrap();
    r.latest_into(&mut snap).unwrap();
    assert!(
        snap[&Entity::gpu(0)][&fid("gpu_temp")].timestamp_us > first_ts,
        "values were refreshed"
    );
    // A stale entry the reader did not write is removed.
    let stale = snap[&Entity::gpu(0)][&fid("gpu_temp")].clone();
    snap.entry(Entity::gpu(5))
        .or_default()
        .insert(fid("gpu_temp"), stale);
    r.latest_into(&mut snap).unwrap();
    assert_eq!(
        snap.keys().copied().collect::<Vec<_>>(),
        vec![Entity::gpu(0), Entity::gpu(1)]
    );
    assert_eq!(snap[&Entity::gpu(1)].len(), 2);
}
