//! `DCGM_EXP_GPU_INFO`, families of value-1 series set by the caller, and
//! `DCGM_EXP_POD_FB_USED` from DCGM's running-process lists: on hand-made values and against
//! dcgm-sim.

use std::collections::BTreeMap;
use std::time::Duration;

use dcgm::testing::{SimulatorLock, simulator_path};
use dcgm::{Entity, EntityGroup, FieldId, FieldValue, Value};
use dcgm_prometheus::*;
use dcgm_reader::Snapshot;

type Labels = BTreeMap<String, String>;

/// The series of `metric`: labels and value (values in these tests need no unescaping).
fn series(text: &str, metric: &str) -> Vec<(Labels, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix(metric)?.strip_prefix('{'))
        .map(|rest| {
            let end = rest.rfind('}').unwrap();
            let labels = rest[..end]
                .split("\",")
                .map(|kv| {
                    let (k, v) = kv.split_once("=\"").unwrap();
                    (k.to_string(), v.trim_end_matches('"').to_string())
                })
                .collect();
            (labels, rest[end + 1..].trim().to_string())
        })
        .collect()
}

fn opts() -> LabelOptions {
    LabelOptions {
        hostname: Some("node-1".into()),
        ..LabelOptions::default()
    }
}

fn gpu(n: u32) -> EntityIdentity {
    EntityIdentity::gpu(n, &format!("GPU-{n}"), &format!("0:{n}"), "H100")
}

fn mig(entity_id: u32, gpu_id: u32, instance_id: u32) -> EntityIdentity {
    EntityIdentity {
        entity: Entity::new(EntityGroup::GpuInstance, entity_id),
        mig: Some(MigInstance {
            instance_id: Some(instance_id),
            profile: "1g.10gb".into(),
            slices: Some(1),
            uuid: None,
        }),
        ..gpu(gpu_id)
    }
}

fn value(name: &str, v: Value) -> (FieldId, FieldValue) {
    let field = FieldId::by_name(name).unwrap();
    (
        field,
        FieldValue {
            entity: Entity::gpu(0),
            field,
            timestamp_us: 1,
            value: v,
            status: dcgm::ReturnCode::Ok,
        },
    )
}

#[test]
fn gpu_info_is_one_series_per_entity_and_blank_values_stay_out_of_its_labels() {
    let counters =
        parse_counters("DCGM_EXP_GPU_INFO, gauge, identity\nDCGM_FI_DEV_GPU_TEMP, gauge, t\n")
            .unwrap();
    let mut r = Renderer::new(&counters, vec![gpu(0), mig(5, 1, 2), mig(6, 1, 3)], opts());
    let mut out = String::new();
    // Before any info is known the row is left out, HELP and TYPE too.
    r.render(&Snapshot::new(), &[], &mut out);
    assert!(!out.contains("DCGM_EXP_GPU_INFO"), "{out}");

    let full: BTreeMap<FieldId, FieldValue> = [
        value("DCGM_FI_DRIVER_VERSION", Value::String("570.1".into())),
        value("DCGM_FI_DEV_VBIOS_VERSION", Value::String("96.00".into())),
        value("DCGM_FI_CUDA_GPU_COMPUTE_CAPABILITY", Value::Int(9 << 16)),
        value("DCGM_FI_DEV_MIG_MODE", Value::Int(0)),
    ]
    .into_iter()
    .collect();
    let blank: BTreeMap<FieldId, FieldValue> = [
        value("DCGM_FI_DRIVER_VERSION", Value::String("570.1".into())),
        value(
            "DCGM_FI_DEV_VBIOS_VERSION",
            Value::Blank(dcgm::BlankKind::Blank),
        ),
        value(
            "DCGM_FI_CUDA_GPU_COMPUTE_CAPABILITY",
            Value::Int(8 << 16 | 6),
        ),
        value("DCGM_FI_DEV_MIG_MODE", Value::Int(1)),
    ]
    .into_iter()
    .collect();
    r.set_gpu_info(Some(BTreeMap::from([
        (0, GpuInfo::from_values(&full)),
        (1, GpuInfo::from_values(&blank)),
    ])));
    r.render(&Snapshot::new(), &[], &mut out);
    assert!(out.contains("# TYPE DCGM_EXP_GPU_INFO gauge\n"), "{out}");
    let info = series(&out, "DCGM_EXP_GPU_INFO");
    assert_eq!(info.len(), 3, "{out}");
    assert!(info.iter().all(|(_, v)| v == "1"));
    let g0 = &info[0].0;
    for (k, v) in [
        ("gpu", "0"),
        ("UUID", "GPU-0"),
        ("pci_bus_id", "0:0"),
        ("device", "nvidia0"),
        ("modelName", "H100"),
        ("hostname", "node-1"),
        ("driver_version", "570.1"),
        ("vbios_version", "96.00"),
        ("cuda_compute_capability", "9.0"),
        ("mig_mode", "disabled"),
    ] {
        assert_eq!(g0.get(k).map(String::as_str), Some(v), "{k}: {g0:?}");
    }
    // The MIG instances: their own identity labels, the parent GPU's info, and no VBIOS label
    // where DCGM had none (never empty, never a sentinel).
    for (labels, _) in &info[1..] {
        assert_eq!(labels["gpu"], "1");
        assert_eq!(labels["cuda_compute_capability"], "8.6");
        assert_eq!(labels["mig_mode"], "enabled");
        assert!(!labels.contains_key("vbios_version"), "{labels:?}");
        assert!(labels.contains_key("GPU_I_ID"));
    }
    assert_ne!(info[1].0["GPU_I_ID"], info[2].0["GPU_I_ID"]);
    dcgm::testing::assert_no_sentinel(&out);
}

#[test]
fn info_families_are_written_in_name_order_with_the_identity_labels() {
    let counters = parse_counters(
        "DCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_EXP_XID_ERRORS_COUNT, counter, x\nDCGM_FI_DEV_XID_ERRORS, gauge, x\n",
    )
    .unwrap();
    let mut r = Renderer::new(&counters, vec![gpu(0), gpu(1)], opts());
    let mut snap = Snapshot::new();
    for g in [0, 1] {
        let (f, mut v) = value("DCGM_FI_DEV_GPU_TEMP", Value::Int(40));
        v.entity = Entity::gpu(g);
        snap.entry(Entity::gpu(g)).or_default().insert(f, v);
    }
    r.set_info_family("DCGM_EXP_HPC_JOB_INFO", "jobs", |id| match id.gpu {
        0 => vec![
            vec![("hpc_job".to_string(), "a".to_string())],
            vec![("hpc_job".to_string(), "b".to_string())],
        ],
        _ => Vec::new(),
    });
    r.set_info_family("ZZ_LAST_INFO", "last", |_| {
        vec![vec![("bad label!".to_string(), "x".to_string())]]
    });
    let mut out = String::new();
    r.render(&snap, &[], &mut out);
    let families: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    let mut sorted = families.clone();
    sorted.sort_unstable();
    assert_eq!(families, sorted);
    assert!(families.contains(&"DCGM_EXP_HPC_JOB_INFO"));
    let jobs = series(&out, "DCGM_EXP_HPC_JOB_INFO");
    let on0: Vec<(&str, &str)> = jobs
        .iter()
        .map(|(l, _)| (l["gpu"].as_str(), l["hpc_job"].as_str()))
        .collect();
    assert_eq!(on0, [("0", "a"), ("0", "b")]);
    // The job series carry exactly the labels the GPU's own series do, and hpc_job.
    let temp0 = &series(&out, "DCGM_FI_DEV_GPU_TEMP")[0].0;
    let got: Vec<&String> = jobs[0].0.keys().filter(|k| *k != "hpc_job").collect();
    assert_eq!(got, temp0.keys().collect::<Vec<_>>());
    // A label name that is not one is left out.
    assert_eq!(series(&out, "ZZ_LAST_INFO")[0].0.len(), temp0.len());
    r.remove_info_family("DCGM_EXP_HPC_JOB_INFO");
    r.render(&snap, &[], &mut out);
    assert!(!out.contains("DCGM_EXP_HPC_JOB_INFO"));
}

#[test]
fn owner_memory_is_written_in_mib_with_the_physical_gpus_labels() {
    let counters = parse_counters("DCGM_EXP_POD_FB_USED, gauge, per pod\n").unwrap();
    let mut r = Renderer::new(&counters, vec![gpu(0), mig(5, 1, 2)], opts());
    let mut out = String::new();
    r.render(&Snapshot::new(), &[], &mut out);
    assert!(!out.contains("DCGM_EXP_POD_FB_USED"));
    let procs = [
        GpuProcess {
            gpu: 0,
            pid: 1,
            memory_used_bytes: 300 << 20,
        },
        GpuProcess {
            gpu: 0,
            pid: 2,
            memory_used_bytes: 200 << 20,
        },
        GpuProcess {
            gpu: 1,
            pid: 3,
            memory_used_bytes: 3 << 19,
        },
        GpuProcess {
            gpu: 1,
            pid: 4,
            memory_used_bytes: 1 << 20,
        },
    ];
    let memory = memory_by_owner(&procs, |p| {
        (p.pid != 4).then(|| vec![("pod".to_string(), format!("p{}", p.gpu))])
    });
    r.set_owner_memory(Some(memory));
    r.render(&Snapshot::new(), &[], &mut out);
    let s = series(&out, "DCGM_EXP_POD_FB_USED");
    let got: Vec<(&str, &str, &str)> = s
        .iter()
        .map(|(l, v)| (l["gpu"].as_str(), l["pod"].as_str(), v.as_str()))
        .collect();
    assert_eq!(got, [("0", "p0", "500"), ("1", "p1", "1.5")]);
    // On a GPU in MIG mode the series is the physical GPU's: no MIG labels.
    assert!(!s[1].0.contains_key("GPU_I_ID"));
}

// Against dcgm-sim.

fn sim(json: &str, counters: &str) -> (SimulatorLock, Collector) {
    let lock = SimulatorLock::new(Some(json)).unwrap();
    let c = Collector::new(CollectorConfig {
        library_path: Some(simulator_path()),
        collect_interval: Duration::from_millis(100),
        labels: opts(),
        ..CollectorConfig::new(parse_counters(counters).unwrap())
    })
    .unwrap();
    (lock, c)
}

#[test]
fn collector_gpu_info_agrees_with_dcgms_device_attributes() {
    let vbios = FieldId::by_name("DCGM_FI_DEV_VBIOS_VERSION").unwrap().0;
    let json = format!(
        r#"{{"gpus": [{{}}, {{"mig": [{{"profile": "3g.40gb", "slices": 3}}]}}],
            "faults": {{"blank_fields": [{vbios}]}}}}"#
    );
    let (_lock, mut c) = sim(&json, "DCGM_EXP_GPU_INFO, gauge, identity\n");
    let mut out = String::new();
    c.collect(&mut out).unwrap();
    let info = series(&out, "DCGM_EXP_GPU_INFO");
    assert_eq!(info.len(), c.identities().len(), "{out}");
    let h = dcgm::Handle::builder()
        .library_path(simulator_path())
        .embedded()
        .unwrap();
    for (labels, _) in &info {
        let g: u32 = labels["gpu"].parse().unwrap();
        let a = h.system().device_attributes(g).unwrap();
        assert_eq!(labels["UUID"], a.uuid);
        assert_eq!(Some(&labels["driver_version"]), a.driver_version.as_ref());
        // A blank VBIOS leaves the label out.
        assert!(!labels.contains_key("vbios_version"), "{labels:?}");
        let mig = labels.contains_key("GPU_I_ID");
        assert_eq!(labels["mig_mode"], if mig { "enabled" } else { "disabled" });
        assert!(labels["cuda_compute_capability"].contains('.'));
    }
    assert!(info.iter().any(|(l, _)| l.contains_key("GPU_I_ID")));
    dcgm::testing::assert_no_sentinel(&out);
}

#[test]
fn collector_lists_the_processes_the_simulator_runs() {
    let processes: [(u32, &[u32], u64); 3] =
        [(301, &[0, 2], 1000), (302, &[0], 250), (303, &[1], 4096)];
    let json = format!(
        r#"{{"gpus": [{{}}, {{}}, {{}}], "processes": [{}]}}"#,
        processes
            .iter()
            .map(|(pid, gpus, mib)| format!(
                r#"{{"pid": {pid}, "gpus": {gpus:?}, "memory_mib": {mib}}}"#
            ))
            .collect::<Vec<_>>()
            .join(",")
    );
    let (_lock, mut c) = sim(&json, "DCGM_EXP_POD_FB_USED, gauge, per pod\n");
    let mut got: Vec<(u32, u32, u64)> = c
        .running_processes()
        .unwrap()
        .into_iter()
        .map(|p| (p.gpu, p.pid, p.memory_used_bytes >> 20))
        .collect();
    got.sort_unstable();
    let mut want: Vec<(u32, u32, u64)> = processes
        .iter()
        .flat_map(|&(pid, gpus, mib)| gpus.iter().map(move |&g| (g, pid, mib)))
        .collect();
    want.sort_unstable();
    assert_eq!(got, want);
    // Summed per owner (here: by pid parity) and exported per GPU.
    let procs = c.running_processes().unwrap();
    let memory = memory_by_owner(&procs, |p| {
        Some(vec![("pod".to_string(), format!("odd{}", p.pid % 2))])
    });
    c.set_owner_memory(Some(memory));
    let mut out = String::new();
    c.collect(&mut out).unwrap();
    let s = series(&out, "DCGM_EXP_POD_FB_USED");
    let mut per: Vec<(String, String, f64)> = s
        .iter()
        .map(|(l, v)| (l["gpu"].clone(), l["pod"].clone(), v.parse().unwrap()))
        .collect();
    per.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let sum = |gpu: u32, odd: u64| -> f64 {
        want.iter()
            .filter(|(g, pid, _)| *g == gpu && u64::from(*pid) % 2 == odd)
            .map(|(_, _, m)| *m as f64)
            .sum()
    };
    let expect: Vec<(String, String, f64)> = [(0, 0), (0, 1), (1, 1), (2, 1)]
        .iter()
        .map(|&(g, o)| (g.to_string(), format!("odd{o}"), sum(g, o)))
        .collect();
    assert_eq!(per, expect);
}
