//! The structured form of a collection ([`Exposition`]) holds exactly the text's series: the
//! structured families, written back in the text format, give the text's series lines byte
//! for byte, for every kind of row (GPU and MIG fields, label rows, workload labels, XID error
//! codes, event windows, health, P2P, GPU info, per-owner memory, info families, NvSwitch,
//! NVLink and CPU rows), on dcgm-sim.

use std::fmt::Write as _;

use dcgm::testing::{SimulatorLock, simulator_path};
use dcgm_prometheus::*;

/// The structured form written as text series lines (`name{labels} value`), in its order.
fn as_text(exp: &Exposition) -> String {
    let mut out = String::new();
    for f in &exp.families {
        for s in &f.samples {
            let _ = write!(out, "{}{{", f.name);
            for (i, (n, v)) in s.labels().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{n}=\"");
                escape_label_value(v, &mut out);
                out.push('"');
            }
            out.push_str("} ");
            assert!(write_number(&s.value, &mut out), "{s:?}");
            out.push('\n');
        }
    }
    out
}

/// The text's series lines, without comments and without `dcgm_exporter_simulated`.
fn series_lines(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with(SIMULATED_METRIC))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn counters() -> Vec<Counter> {
    let mut text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dcgm-exporter/etc/default-counters.csv"
    ))
    .unwrap();
    text.push_str(
        "DCGM_EXP_GPU_HEALTH_STATUS, gauge, health\n\
         DCGM_EXP_P2P_STATUS, gauge, p2p\n\
         DCGM_EXP_POD_FB_USED, gauge, \"Memory of a pod's processes, in MiB.\"\n\
         DCGM_FI_DEV_FB_TOTAL, gauge, total\n\
         DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS, gauge, t\n\
         DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX, counter, tx\n\
         DCGM_FI_DEV_CPU_TEMP_CELSIUS, gauge, cpu t\n\
         DCGM_FI_DEV_CPU_UTIL_TOTAL, gauge, core util\n",
    );
    parse_counters(&text).unwrap()
}

#[test]
fn the_structured_form_holds_the_texts_series_exactly() {
    // An XID on GPU 2 from the start, so that the XID rows have series.
    let _lock = SimulatorLock::new(Some(
        r#"{"events": [{"at_ms": 0, "gpu": 2, "kind": "xid", "value": 79}]}"#,
    ))
    .unwrap();
    let mut collector = Collector::new(CollectorConfig {
        library_path: Some(simulator_path()),
        switches: "g".parse::<EntitySelection>().unwrap(),
        cpus: "i".parse::<EntitySelection>().unwrap(),
        collect_interval: std::time::Duration::from_millis(100),
        labels: LabelOptions {
            hostname: Some("node \"1\"".into()),
            ..LabelOptions::default()
        },
        ..CollectorConfig::new(counters())
    })
    .unwrap();
    // Workload labels on GPU 0 (two pods: two series each), none elsewhere.
    collector.set_workload_labels(|id| {
        if id.gpu == 0 && id.mig.is_none() {
            vec![
                vec![
                    ("pod".into(), "a\\b".into()),
                    ("namespace".into(), "n".into()),
                ],
                vec![
                    ("pod".into(), "c".into()),
                    ("not a label".into(), "x".into()),
                ],
            ]
        } else {
            Vec::new()
        }
    });
    collector.set_owner_memory(Some(vec![(
        1,
        vec![("pod_uid".into(), "u-1".into())],
        3 * 1_048_576 / 2,
    )]));
    collector.set_info_family("DCGM_EXP_HPC_JOB_INFO", "jobs", |id| {
        vec![vec![("hpc_job".into(), format!("job-{}", id.gpu))]]
    });
    let (mut text, mut exp) = (String::new(), Exposition::default());
    for _ in 0..3 {
        collector.collect_structured(&mut text, &mut exp).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(120));
    }
    collector.collect_structured(&mut text, &mut exp).unwrap();
    let lines = series_lines(&text);
    assert_eq!(as_text(&exp), lines);
    assert_eq!(exp.simulated, Some(true));
    // Every kind of row is there, so that the comparison covers it.
    for name in [
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_XID_ERRORS",
        "DCGM_EXP_XID_ERRORS_COUNT",
        "DCGM_EXP_CLOCK_EVENTS_COUNT",
        "DCGM_EXP_GPU_HEALTH_STATUS",
        "DCGM_EXP_P2P_STATUS",
        "DCGM_EXP_GPU_INFO",
        "DCGM_EXP_POD_FB_USED",
        "DCGM_EXP_HPC_JOB_INFO",
        "DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS",
        "DCGM_FI_DEV_CPU_UTIL_TOTAL",
    ] {
        let f = exp
            .family(name)
            .unwrap_or_else(|| panic!("no {name} in\n{lines}"));
        assert!(!f.samples.is_empty(), "{name}");
    }
    let temp = exp.family("DCGM_FI_DEV_GPU_TEMP").unwrap();
    assert_eq!(temp.help, "GPU die temperature in degrees Celsius.");
    assert_eq!(temp.kind, MetricKind::Gauge);
    assert!(matches!(temp.field, Some(CounterField::Dcgm(_))));
    let pod = temp
        .samples
        .iter()
        .find(|s| s.label("pod") == Some("a\\b"))
        .unwrap();
    assert_eq!(pod.label("hostname"), Some("node \"1\""));
    assert_eq!(pod.label("gpu"), Some("0"));
    // A name that is not a label name is left out, as in the text.
    assert!(
        temp.samples
            .iter()
            .all(|s| s.label("not a label").is_none())
    );

    // The plain collection writes the same text.
    let mut plain = String::new();
    collector.collect(&mut plain).unwrap();
    assert!(plain.starts_with("# HELP"));
}
