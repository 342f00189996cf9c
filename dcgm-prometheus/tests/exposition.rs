//! The Prometheus renderer (on hand-made snapshots), event windows, device selection, and the
//! collector against dcgm-sim.

use std::collections::BTreeMap;
use std::time::Duration;

use dcgm::testing::{SimulatorLock, simulator_path};
use dcgm::{BlankKind, Entity, EntityGroup, FieldId, FieldValue, Value};
use dcgm_prometheus::*;
use dcgm_prometheus::{CLOCK_EVENT_REASONS, escape_help, escape_label_value, write_number};
use dcgm_reader::*;

fn fid(name: &str) -> FieldId {
    FieldId(dcgm::raw::sys::field_by_name(name).unwrap().id)
}

fn put(snap: &mut Snapshot, e: Entity, f: FieldId, v: Value) {
    let fv = FieldValue {
        entity: e,
        field: f,
        timestamp_us: 1,
        value: v,
        status: dcgm::ReturnCode::Ok,
    };
    snap.entry(e).or_default().insert(f, fv);
}

fn opts() -> LabelOptions {
    LabelOptions {
        hostname: Some("node-1".into()),
        ..LabelOptions::default()
    }
}

fn gpu(n: u32) -> EntityIdentity {
    EntityIdentity::gpu(
        n,
        &format!("GPU-{n}{n}{n}{n}"),
        &format!("00000000:{:02X}:00.0", 0x18 + n),
        "NVIDIA H100 80GB HBM3",
    )
}

fn gpu_instance(entity_id: u32, gpu: u32, instance_id: u32, profile: &str) -> EntityIdentity {
    EntityIdentity {
        entity: Entity::new(EntityGroup::GpuInstance, entity_id),
        mig: Some(MigInstance {
            instance_id: Some(instance_id),
            profile: profile.into(),
            slices: Some(1),
            uuid: None,
        }),
        ..self::gpu(gpu)
    }
}

fn render(counters: &str, ids: Vec<EntityIdentity>, snap: &Snapshot) -> String {
    let c = parse_counters(counters).unwrap();
    let mut r = Renderer::new(&c, ids, opts());
    let mut out = String::new();
    r.render(snap, &[], &mut out);
    out
}

/// Series of one metric: labels (in order) and value.
fn series(text: &str, metric: &str) -> Vec<(Vec<(String, String)>, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(metric) else {
            continue;
        };
        let (labels, value) = if let Some(r) = rest.strip_prefix('{') {
            let end = find_close(r);
            (parse_labels(&r[..end]), r[end + 1..].trim().to_string())
        } else if let Some(v) = rest.strip_prefix(' ') {
            (Vec::new(), v.trim().to_string())
        } else {
            continue;
        };
        out.push((labels, value));
    }
    out
}

fn find_close(s: &str) -> usize {
    let mut in_str = false;
    let mut esc = false;
    for (i, c) in s.char_indices() {
        match (in_str, esc, c) {
            (true, true, _) => esc = false,
            (true, false, '\\') => esc = true,
            (_, false, '"') => in_str = !in_str,
            (false, _, '}') => return i,
            _ => {}
        }
    }
    panic!("unterminated labels in {s:?}");
}

fn parse_labels(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while chars.peek().is_some() {
        let name: String = chars.by_ref().take_while(|c| *c != '=').collect();
        assert_eq!(chars.next(), Some('"'), "label {name} in {s:?}");
        let mut v = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => v.push('\n'),
                    Some(c) => v.push(c),
                    None => panic!("dangling escape"),
                },
                '"' => break,
                c => v.push(c),
            }
        }
        out.push((name, v));
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
    out
}

fn label<'a>(labels: &'a [(String, String)], name: &str) -> Option<&'a str> {
    labels
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn a_series_has_dcgm_exporters_labels_in_order() {
    let mut snap = Snapshot::new();
    put(&mut snap, Entity::gpu(0), FieldId(150), Value::Int(41));
    let text = render(
        "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (C).",
        vec![gpu(0)],
        &snap,
    );
    assert_eq!(
        text,
        "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (C).\n\
         # TYPE DCGM_FI_DEV_GPU_TEMP gauge\n\
         DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-0000\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",\
         modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"node-1\"} 41\n"
    );
}

#[test]
fn blank_values_are_left_out_never_a_sentinel() {
    let mut snap = Snapshot::new();
    put(&mut snap, Entity::gpu(0), FieldId(150), Value::Int(41));
    put(
        &mut snap,
        Entity::gpu(1),
        FieldId(150),
        Value::Blank(BlankKind::Blank),
    );
    put(
        &mut snap,
        Entity::gpu(0),
        fid("DCGM_FI_DEV_SM_CLOCK"),
        Value::Blank(BlankKind::NotSupported),
    );
    put(
        &mut snap,
        Entity::gpu(1),
        fid("DCGM_FI_DEV_SM_CLOCK"),
        Value::Blank(BlankKind::NotPermissioned),
    );
    // A string where a number is expected is left out too.
    put(
        &mut snap,
        Entity::gpu(0),
        fid("DCGM_FI_DEV_MEM_CLOCK"),
        Value::String("N/A".into()),
    );
    let text = render(
        "DCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_FI_DEV_SM_CLOCK, gauge, c\nDCGM_FI_DEV_MEM_CLOCK, gauge, m\n",
        vec![gpu(0), gpu(1)],
        &snap,
    );
    let temps = series(&text, "DCGM_FI_DEV_GPU_TEMP");
    assert_eq!(temps.len(), 1);
    assert_eq!(label(&temps[0].0, "gpu"), Some("0"));
    // A family without any value has no HELP/TYPE either.
    assert!(!text.contains("DCGM_FI_DEV_SM_CLOCK"), "{text}");
    assert!(!text.contains("DCGM_FI_DEV_MEM_CLOCK"), "{text}");
    for sentinel in [
        "2147483632",
        "2147483633",
        "1.4e14",
        "140000000000000",
        "N/A",
    ] {
        assert!(!text.contains(sentinel), "{sentinel} in {text}");
    }
}

#[test]
fn mig_instances_carry_gpu_i_profile_and_gpu_i_id() {
    let gi = Entity::new(EntityGroup::GpuInstance, 4);
    let mut snap = Snapshot::new();
    let fb = fid("DCGM_FI_DEV_FB_USED");
    put(&mut snap, Entity::gpu(0), fb, Value::Int(1000));
    put(&mut snap, gi, fb, Value::Int(250));
    let text = render(
        "DCGM_FI_DEV_FB_USED, gauge, used",
        vec![gpu_instance(4, 7, 2, "1g.10gb"), gpu(0)],
        &snap,
    );
    let s = series(&text, "DCGM_FI_DEV_FB_USED");
    assert_eq!(s.len(), 2);
    // GPUs in id order, the instance after GPU 0.
    assert_eq!(label(&s[0].0, "GPU_I_PROFILE"), None);
    assert_eq!(label(&s[0].0, "GPU_I_ID"), None);
    let names: Vec<&str> = s[1].0.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "gpu",
            "UUID",
            "pci_bus_id",
            "device",
            "modelName",
            "GPU_I_PROFILE",
            "GPU_I_ID",
            "hostname"
        ]
    );
    assert_eq!(label(&s[1].0, "gpu"), Some("7"));
    assert_eq!(label(&s[1].0, "device"), Some("nvidia7"));
    assert_eq!(label(&s[1].0, "GPU_I_PROFILE"), Some("1g.10gb"));
    assert_eq!(label(&s[1].0, "GPU_I_ID"), Some("2"));
    assert_eq!(s[1].1, "250");
}

#[test]
fn label_rows_become_labels_on_every_series_of_the_entity() {
    let mut snap = Snapshot::new();
    for g in 0..2 {
        put(
            &mut snap,
            Entity::gpu(g),
            FieldId(150),
            Value::Int(40 + g as i64),
        );
        put(
            &mut snap,
            Entity::gpu(g),
            fid("DCGM_FI_DEV_SM_CLOCK"),
            Value::Int(1980),
        );
    }
    put(
        &mut snap,
        Entity::gpu(0),
        FieldId(1),
        Value::String("570.133.20".into()),
    );
    put(
        &mut snap,
        Entity::gpu(1),
        FieldId(1),
        Value::Blank(BlankKind::Blank),
    );
    put(
        &mut snap,
        Entity::gpu(0),
        fid("DCGM_FI_DEV_BRAND"),
        Value::String("NVIDIA \"Data\" Center".into()),
    );
    let text = render(
        "DCGM_FI_DEV_GPU_TEMP, gauge, t\n\
         DCGM_FI_DRIVER_VERSION, label, driver\n\
         DCGM_FI_DEV_SM_CLOCK, gauge, c\n\
         DCGM_FI_DEV_BRAND, label, brand\n",
        vec![gpu(0), gpu(1)],
        &snap,
    );
    // Label rows are not metrics.
    assert!(!text.contains("# TYPE DCGM_FI_DRIVER_VERSION"), "{text}");
    assert!(!text.contains("# HELP DCGM_FI_DEV_BRAND"), "{text}");
    for metric in ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_SM_CLOCK"] {
        let s = series(&text, metric);
        assert_eq!(s.len(), 2);
        assert_eq!(label(&s[0].0, "DCGM_FI_DRIVER_VERSION"), Some("570.133.20"));
        assert_eq!(
            label(&s[0].0, "DCGM_FI_DEV_BRAND"),
            Some("NVIDIA \"Data\" Center")
        );
        // Blank label values are left out, not written as empty or sentinel strings.
        assert_eq!(label(&s[1].0, "DCGM_FI_DRIVER_VERSION"), None);
        assert_eq!(label(&s[1].0, "DCGM_FI_DEV_BRAND"), None);
        // Label rows come after the fixed labels, sorted by name.
        let names: Vec<&str> = s[0].0.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(&names[6..], ["DCGM_FI_DEV_BRAND", "DCGM_FI_DRIVER_VERSION"]);
    }
}

#[test]
fn label_values_and_help_texts_are_escaped() {
    let mut id = gpu(0);
    id.model_name = "Model \"X\" \\ A\nB".into();
    let mut snap = Snapshot::new();
    put(&mut snap, Entity::gpu(0), FieldId(150), Value::Int(1));
    let c = parse_counters("DCGM_FI_DEV_GPU_TEMP, gauge, \"back\\slash, \"\"quoted\"\"\"").unwrap();
    let mut r = Renderer::new(
        &c,
        vec![id],
        LabelOptions {
            hostname: Some("host\"1".into()),
            ..LabelOptions::default()
        },
    );
    let mut text = String::new();
    r.render(&snap, &[], &mut text);
    assert!(
        text.contains("modelName=\"Model \\\"X\\\" \\\\ A\\nB\""),
        "{text}"
    );
    assert!(text.contains("hostname=\"host\\\"1\""), "{text}");
    // In HELP, only backslash and newline are escaped.
    assert!(
        text.contains("# HELP DCGM_FI_DEV_GPU_TEMP back\\\\slash, \"quoted\"\n"),
        "{text}"
    );
    let s = series(&text, "DCGM_FI_DEV_GPU_TEMP");
    assert_eq!(label(&s[0].0, "modelName"), Some("Model \"X\" \\ A\nB"));
    // The helpers.
    let mut v = String::new();
    escape_label_value("a\"b\\c\nd", &mut v);
    assert_eq!(v, "a\\\"b\\\\c\\nd");
    assert_eq!(escape_help("a\\b\nc\"d"), "a\\\\b\\nc\"d");
}

#[test]
fn families_are_sorted_with_one_help_and_type_each() {
    let mut snap = Snapshot::new();
    for g in 0..3 {
        put(&mut snap, Entity::gpu(g), FieldId(150), Value::Int(40));
        put(
            &mut snap,
            Entity::gpu(g),
            fid("DCGM_FI_DEV_SM_CLOCK"),
            Value::Int(1400),
        );
        put(
            &mut snap,
            Entity::gpu(g),
            fid("DCGM_FI_DEV_FB_FREE"),
            Value::Int(10),
        );
    }
    let text = render(
        "DCGM_FI_DEV_SM_CLOCK, gauge, c\nDCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_FI_DEV_FB_FREE, gauge, f\n",
        vec![gpu(2), gpu(0), gpu(1)],
        &snap,
    );
    let helps: Vec<&str> = text.lines().filter(|l| l.starts_with("# HELP")).collect();
    let types: Vec<&str> = text.lines().filter(|l| l.starts_with("# TYPE")).collect();
    assert_eq!(
        helps,
        [
            "# HELP DCGM_FI_DEV_FB_FREE f",
            "# HELP DCGM_FI_DEV_GPU_TEMP t",
            "# HELP DCGM_FI_DEV_SM_CLOCK c"
        ]
    );
    assert_eq!(types.len(), 3);
    // Each family's HELP and TYPE come right before its series, series in GPU order.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3 * 5);
    for (i, chunk) in lines.chunks(5).enumerate() {
        assert!(chunk[0].starts_with("# HELP"), "{i}");
        assert!(chunk[1].starts_with("# TYPE"), "{i}");
        for (g, l) in chunk[2..].iter().enumerate() {
            assert!(l.contains(&format!("{{gpu=\"{g}\",")), "{l}");
        }
    }
}

#[test]
fn alias_and_new_name_are_separate_families_with_their_own_spelling() {
    let mut snap = Snapshot::new();
    put(&mut snap, Entity::gpu(0), FieldId(150), Value::Int(44));
    put(
        &mut snap,
        Entity::gpu(0),
        fid("DCGM_FI_DEV_POWER_USAGE"),
        Value::Double(123.5),
    );
    let text = render(
        "DCGM_FI_DEV_GPU_TEMP, gauge, old\nDCGM_FI_DEV_GPU_TEMP_CELSIUS, gauge, new\nDCGM_FI_DEV_POWER_USAGE, gauge, w\n",
        vec![gpu(0)],
        &snap,
    );
    assert_eq!(series(&text, "DCGM_FI_DEV_GPU_TEMP")[0].1, "44");
    assert_eq!(series(&text, "DCGM_FI_DEV_GPU_TEMP_CELSIUS")[0].1, "44");
    assert_eq!(series(&text, "DCGM_FI_DEV_POWER_USAGE")[0].1, "123.5");
    assert!(!text.contains("DCGM_FI_DEV_BOARD_POWER_WATTS"), "{text}");
}

#[test]
fn numbers_are_written_as_prometheus_reads_them() {
    let cases = [
        (Value::Int(0), "0"),
        (Value::Int(-7), "-7"),
        (Value::Int(i64::MAX), "9223372036854775807"),
        (Value::Double(0.5), "0.5"),
        (Value::Double(3.0), "3"),
        (Value::Double(-2.25), "-2.25"),
        (Value::Double(1e20), "1e20"),
        (Value::Double(1.5e-7), "1.5e-7"),
        (Value::Double(f64::NAN), "NaN"),
        (Value::Double(f64::INFINITY), "+Inf"),
        (Value::Double(f64::NEG_INFINITY), "-Inf"),
    ];
    for (v, want) in cases {
        let mut s = String::new();
        assert!(write_number(&v, &mut s));
        assert_eq!(s, want);
        // Prometheus parses these as Go's ParseFloat does; Rust's parser agrees on them.
        let back: f64 = match want {
            "+Inf" => f64::INFINITY,
            w => w.parse().unwrap(),
        };
        match v {
            Value::Double(d) if d.is_nan() => assert!(back.is_nan()),
            Value::Double(d) => assert_eq!(back, d),
            Value::Int(i) => assert_eq!(back, i as f64),
            _ => unreachable!(),
        }
    }
    let mut s = String::new();
    assert!(!write_number(&Value::String("1".into()), &mut s));
    assert!(!write_number(&Value::Blank(BlankKind::Blank), &mut s));
    assert!(!write_number(&Value::Bytes(vec![1]), &mut s));
    assert!(s.is_empty());
}

#[test]
fn label_options_hostname_uuid_and_model_blanks() {
    let mut snap = Snapshot::new();
    put(&mut snap, Entity::gpu(0), FieldId(150), Value::Int(1));
    let c = parse_counters("DCGM_FI_DEV_GPU_TEMP, gauge, t").unwrap();
    let run = |o: LabelOptions| {
        let mut r = Renderer::new(&c, vec![gpu(0)], o);
        let mut t = String::new();
        r.render(&snap, &[], &mut t);
        series(&t, "DCGM_FI_DEV_GPU_TEMP").remove(0).0
    };
    let l = run(LabelOptions {
        hostname: None,
        ..opts()
    });
    assert_eq!(label(&l, "hostname"), None);
    assert_eq!(l.len(), 5);
    let l = run(LabelOptions {
        hostname_label: "hostname".into(),
        uuid_label: "uuid".into(),
        replace_blanks_in_model_name: true,
        ..opts()
    });
    assert_eq!(label(&l, "hostname"), Some("node-1"));
    assert_eq!(label(&l, "uuid"), Some("GPU-0000"));
    assert_eq!(label(&l, "UUID"), None);
    assert_eq!(label(&l, "modelName"), Some("NVIDIA-H100-80GB-HBM3"));
}

#[test]
fn xid_series_carry_the_error_code() {
    let mut snap = Snapshot::new();
    put(
        &mut snap,
        Entity::gpu(0),
        fid("DCGM_FI_DEV_XID_ERRORS"),
        Value::Int(79),
    );
    let text = render(
        "DCGM_FI_DEV_XID_ERRORS, gauge, last xid",
        vec![gpu(0)],
        &snap,
    );
    let s = series(&text, "DCGM_FI_DEV_XID_ERRORS");
    assert_eq!(label(&s[0].0, "err_code"), Some("79"));
    assert_eq!(s[0].1, "79");
}

#[test]
fn the_simulated_marker() {
    let mut snap = Snapshot::new();
    put(&mut snap, Entity::gpu(0), FieldId(150), Value::Int(1));
    let c = parse_counters("DCGM_FI_DEV_GPU_TEMP, gauge, Temperature.").unwrap();
    let mut r = Renderer::new(&c, vec![gpu(0)], opts());
    let mut text = String::new();
    r.render(&snap, &[], &mut text);
    assert!(
        !text.contains("simulated"),
        "no marker unless asked: {text}"
    );
    r.mark_simulated(true);
    r.mark_simulated(true);
    r.render(&snap, &[], &mut text);
    assert!(
        text.ends_with("# TYPE dcgm_exporter_simulated gauge\ndcgm_exporter_simulated 1\n"),
        "{text}"
    );
    let help = text
        .lines()
        .find(|l| l.starts_with("# HELP DCGM_FI_DEV_GPU_TEMP"))
        .unwrap();
    assert_eq!(help.matches("simulated").count(), 1, "{help}");
    let mut r = Renderer::new(&c, vec![gpu(0)], opts());
    r.mark_simulated(false);
    r.render(&snap, &[], &mut text);
    assert!(text.ends_with("dcgm_exporter_simulated 0\n"), "{text}");
}

#[test]
fn the_output_buffer_is_reused() {
    let mut snap = Snapshot::new();
    for g in 0..8 {
        put(
            &mut snap,
            Entity::gpu(g),
            FieldId(150),
            Value::Int(40 + g as i64),
        );
        put(
            &mut snap,
            Entity::gpu(g),
            FieldId(1),
            Value::String("570.133.20".into()),
        );
    }
    let c =
        parse_counters("DCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_FI_DRIVER_VERSION, label, d").unwrap();
    let mut r = Renderer::new(&c, (0..8).map(gpu).collect(), opts());
    let mut out = String::new();
    r.render(&snap, &[], &mut out);
    let first = out.clone();
    let (ptr, cap) = (out.as_ptr(), out.capacity());
    for _ in 0..10 {
        r.render(&snap, &[], &mut out);
    }
    assert_eq!(out, first);
    assert_eq!(
        (out.as_ptr(), out.capacity()),
        (ptr, cap),
        "the buffer was reallocated"
    );
}

#[test]
fn xid_window_counts_errors_not_repeated_samples() {
    let s = 1_000_000i64;
    let mut w = EventWindow::new(
        ExporterCounter::XidErrorsCount,
        Duration::from_secs(60),
        Duration::from_secs(1),
    );
    // A host engine that re-samples the last XID every second: one error.
    for t in 0..10 {
        w.observe(0, 100 * s + t * s, if t < 3 { 0 } else { 79 });
    }
    // Another XID, then the first again: three errors in all.
    w.observe(0, 110 * s, 13);
    w.observe(0, 111 * s, 79);
    // The same XID again after a silence longer than two intervals: a new error.
    w.observe(1, 100 * s, 48);
    w.observe(1, 105 * s, 48);
    let mut out = Vec::new();
    w.prune(112 * s);
    w.counts_into(0, &mut out);
    assert_eq!(out, [(13, 1), (79, 2)]);
    w.counts_into(1, &mut out);
    assert_eq!(out, [(48, 2)]);
    w.counts_into(5, &mut out);
    assert!(out.is_empty());
    // Events leave the window.
    w.prune(100 * s + 60 * s + 4 * s);
    w.counts_into(0, &mut out);
    assert_eq!(out, [(13, 1), (79, 1)]);
    w.prune(1000 * s);
    w.counts_into(0, &mut out);
    assert!(out.is_empty());
}

#[test]
fn clock_event_window_counts_reasons_starting() {
    let s = 1_000_000i64;
    let mut w = EventWindow::new(
        ExporterCounter::ClockEventsCount,
        Duration::from_secs(300),
        Duration::from_secs(1),
    );
    // Idle, then power capped and thermal, thermal stays, power cap again.
    for (t, v) in [
        (0, 0x1),
        (1, 0x1),
        (2, 0x4 | 0x20),
        (3, 0x20),
        (4, 0x4 | 0x20),
        (5, 0),
    ] {
        w.observe(3, t * s, v);
    }
    let mut out = Vec::new();
    w.counts_into(3, &mut out);
    assert_eq!(out, [(0x1, 1), (0x4, 2), (0x20, 1)]);
    let names: BTreeMap<i64, &str> = CLOCK_EVENT_REASONS.into_iter().collect();
    assert_eq!(names[&0x4], "power_cap");
    assert_eq!(names[&0x40], "hw_thermal");
}

#[test]
fn windowed_rows_render_per_key_or_zero() {
    let s = 1_000_000i64;
    let now = 1_000 * s;
    let mut xid = EventWindow::new(
        ExporterCounter::XidErrorsCount,
        Duration::from_secs(300),
        Duration::from_secs(1),
    );
    xid.observe(1, now - 10 * s, 79);
    xid.prune(now);
    let mut clock = EventWindow::new(
        ExporterCounter::ClockEventsCount,
        Duration::from_secs(60),
        Duration::from_secs(1),
    );
    clock.observe(7, now - 5 * s, 0x40);
    clock.prune(now);
    let c = parse_counters("DCGM_EXP_XID_ERRORS_COUNT, counter, x\nDCGM_EXP_CLOCK_EVENTS_COUNT, counter, c\nDCGM_EXP_P2P_STATUS, gauge, p\n").unwrap();
    let ids = vec![
        gpu(0),
        gpu(1),
        gpu_instance(0, 7, 1, "3g.40gb"),
        gpu_instance(1, 7, 2, "1g.10gb"),
    ];
    let mut r = Renderer::new(&c, ids, opts());
    let mut text = String::new();
    r.render(&Snapshot::new(), &[xid, clock], &mut text);
    let x = series(&text, "DCGM_EXP_XID_ERRORS_COUNT");
    assert_eq!(x.len(), 4, "{text}");
    assert_eq!(label(&x[0].0, "xid"), None);
    assert_eq!(x[0].1, "0");
    assert_eq!(label(&x[1].0, "xid"), Some("79"));
    assert_eq!(label(&x[1].0, "window_size_in_ms"), Some("300000"));
    assert_eq!(x[1].1, "1");
    let c = series(&text, "DCGM_EXP_CLOCK_EVENTS_COUNT");
    assert_eq!(c.len(), 4);
    // Both instances of GPU 7 show its GPU's events, with their MIG labels.
    for (i, id) in [(2, "1"), (3, "2")] {
        assert_eq!(label(&c[i].0, "clock_event"), Some("hw_thermal"));
        assert_eq!(label(&c[i].0, "GPU_I_ID"), Some(id));
        assert_eq!(label(&c[i].0, "window_size_in_ms"), Some("60000"));
        assert_eq!(c[i].1, "1");
    }
    // Rows without their data (no P2P status given), and windowed rows without their window,
    // are left out.
    assert!(!text.contains("DCGM_EXP_P2P_STATUS"));
    r.render(&Snapshot::new(), &[], &mut text);
    assert!(!text.contains("DCGM_EXP_XID_ERRORS_COUNT"));
}

#[test]
fn device_selection_syntax() {
    assert_eq!("f".parse(), Ok(DeviceSelection::Flex));
    assert_eq!("g".parse(), Ok(DeviceSelection::Gpus(None)));
    assert_eq!("g:0,1".parse(), Ok(DeviceSelection::Gpus(Some(vec![0, 1]))));
    assert_eq!(
        "g:0-3".parse(),
        Ok(DeviceSelection::Gpus(Some(vec![0, 1, 2, 3])))
    );
    assert_eq!(
        " g:1, 4-5 ".parse(),
        Ok(DeviceSelection::Gpus(Some(vec![1, 4, 5])))
    );
    assert_eq!("i".parse(), Ok(DeviceSelection::GpuInstances(None)));
    assert_eq!(
        "i:0,2-4".parse(),
        Ok(DeviceSelection::GpuInstances(Some(vec![0, 2, 3, 4])))
    );
    for bad in [
        "", "x", "f:0", "g:", "g:a", "g:3-1", "g:0:1", "i:1-2-3", "gpu",
    ] {
        assert!(bad.parse::<DeviceSelection>().is_err(), "{bad:?} accepted");
    }
}

// Against dcgm-sim.

fn sim_collector(
    json: Option<&str>,
    devices: &str,
    counters: &str,
) -> (SimulatorLock, dcgm::Result<Collector>) {
    let lock = SimulatorLock::new(json).unwrap();
    let c = Collector::new(CollectorConfig {
        library_path: Some(simulator_path()),
        devices: devices.parse().unwrap(),
        collect_interval: Duration::from_millis(100),
        labels: opts(),
        ..CollectorConfig::new(parse_counters(counters).unwrap())
    });
    (lock, c)
}

const BASIC: &str = "DCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_FI_DEV_FB_USED, gauge, fb\nDCGM_FI_DRIVER_VERSION, label, d\n";

#[test]
fn collector_flex_replaces_a_mig_gpu_by_its_instances() {
    let (_l, c) = sim_collector(None, "f", BASIC);
    let mut c = c.unwrap();
    assert!(c.is_simulated());
    let ids = c.identities();
    assert_eq!(ids.len(), 7 + 3);
    assert!(
        ids[..7]
            .iter()
            .all(|i| i.entity.group == EntityGroup::Gpu && i.mig.is_none())
    );
    assert!(
        ids[7..]
            .iter()
            .all(|i| i.gpu == 7 && i.entity.group == EntityGroup::GpuInstance)
    );
    let gi_ids: Vec<u32> = ids[7..]
        .iter()
        .map(|i| i.mig.as_ref().unwrap().instance_id.unwrap())
        .collect();
    assert_eq!(gi_ids, [1, 2, 3]);
    let mut text = String::new();
    c.collect(&mut text).unwrap();
    let fb = series(&text, "DCGM_FI_DEV_FB_USED");
    assert_eq!(fb.len(), 10, "{text}");
    for (labels, value) in &fb {
        for l in [
            "gpu",
            "UUID",
            "pci_bus_id",
            "device",
            "modelName",
            "hostname",
            "DCGM_FI_DRIVER_VERSION",
        ] {
            assert!(
                label(labels, l).is_some_and(|v| !v.is_empty()),
                "{l} missing: {labels:?}"
            );
        }
        assert!(value.parse::<f64>().unwrap() > 0.0);
    }
    for (labels, _) in &fb[7..] {
        assert!(
            label(labels, "GPU_I_PROFILE").is_some_and(|p| p.ends_with('g') || p.contains("g."))
        );
        assert!(label(labels, "GPU_I_ID").is_some());
        assert_eq!(label(labels, "gpu"), Some("7"));
    }
    assert!(text.ends_with("dcgm_exporter_simulated 1\n"));
}

#[test]
fn collector_gpus_and_instances_by_id() {
    let (_l, c) = sim_collector(None, "g", BASIC);
    let mut c = c.unwrap();
    assert_eq!(c.identities().len(), 8);
    let mut text = String::new();
    c.collect(&mut text).unwrap();
    let temps = series(&text, "DCGM_FI_DEV_GPU_TEMP");
    assert_eq!(temps.len(), 8);
    let gpus: Vec<&str> = temps
        .iter()
        .map(|(l, _)| label(l, "gpu").unwrap())
        .collect();
    assert_eq!(gpus, ["0", "1", "2", "3", "4", "5", "6", "7"]);
    for (l, v) in &temps {
        let t: f64 = v.parse().unwrap();
        assert!((20.0..100.0).contains(&t), "{t}");
        assert_eq!(
            label(l, "device"),
            Some(format!("nvidia{}", label(l, "gpu").unwrap()).as_str())
        );
        assert_eq!(label(l, "GPU_I_PROFILE"), None);
    }
    drop(c);
    drop(_l);

    let (_l, c) = sim_collector(None, "g:1-3", BASIC);
    let ids: Vec<u32> = c.unwrap().identities().iter().map(|i| i.gpu).collect();
    assert_eq!(ids, [1, 2, 3]);
    drop(_l);

    let (_l, c) = sim_collector(None, "i:0,2", BASIC);
    let c = c.unwrap();
    let ids: Vec<(EntityGroup, u32)> = c
        .identities()
        .iter()
        .map(|i| (i.entity.group, i.entity.id))
        .collect();
    assert_eq!(
        ids,
        [(EntityGroup::GpuInstance, 0), (EntityGroup::GpuInstance, 2)]
    );
    drop(c);
    drop(_l);

    let (_l, c) = sim_collector(None, "g:9", BASIC);
    assert!(matches!(c, Err(dcgm::Error::InvalidArgument(_))));
    drop(_l);
    let (_l, c) = sim_collector(Some(r#"{"gpus":[{},{}]}"#), "i", BASIC);
    assert!(
        matches!(c, Err(dcgm::Error::InvalidArgument(_))),
        "no MIG, no instances"
    );
}

#[test]
fn collector_counts_xids_and_clock_events_and_shows_ecc_errors() {
    let config = r#"{"gpus":[{},{},{}],"events":[
        {"at_ms":0,"gpu":1,"kind":"xid","value":79},
        {"at_ms":0,"gpu":2,"kind":"thermal","value":95},
        {"at_ms":0,"gpu":2,"kind":"dbe","value":2}]}"#;
    let counters = "DCGM_FI_DEV_XID_ERRORS, gauge, last\n\
                    DCGM_EXP_XID_ERRORS_COUNT, counter, xids\n\
                    DCGM_EXP_CLOCK_EVENTS_COUNT, counter, clocks\n\
                    DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, counter, dbe\n\
                    DCGM_EXP_GPU_HEALTH_STATUS, gauge, health\n";
    let (_l, c) = sim_collector(Some(config), "g", counters);
    let mut c = c.unwrap();
    assert!(c.ignored().is_empty());
    let mut text = String::new();
    c.collect(&mut text).unwrap();
    std::thread::sleep(Duration::from_millis(450));
    c.collect(&mut text).unwrap();
    assert_eq!(series(&text, "DCGM_EXP_GPU_HEALTH_STATUS").len(), 3 * 11);
    let xids = series(&text, "DCGM_EXP_XID_ERRORS_COUNT");
    let by_gpu =
        |s: &[(Vec<(String, String)>, String)], g: &str| -> Vec<(Option<String>, String)> {
            s.iter()
                .filter(|(l, _)| label(l, "gpu") == Some(g))
                .map(|(l, v)| {
                    (
                        label(l, "xid")
                            .or(label(l, "clock_event"))
                            .map(String::from),
                        v.clone(),
                    )
                })
                .collect()
        };
    assert_eq!(by_gpu(&xids, "0"), [(None, "0".to_string())], "{text}");
    // Re-sampled every 100 ms, still one error.
    assert_eq!(
        by_gpu(&xids, "1"),
        [(Some("79".to_string()), "1".to_string())],
        "{text}"
    );
    // Only GPU 1 had an XID: a GPU without one has no XID sample in DCGM (NO_DATA), so no
    // DCGM_FI_DEV_XID_ERRORS series.
    let last = series(&text, "DCGM_FI_DEV_XID_ERRORS");
    assert_eq!(last.len(), 1, "{text}");
    assert_eq!(label(&last[0].0, "gpu"), Some("1"));
    assert_eq!(label(&last[0].0, "err_code"), Some("79"));
    let clocks = series(&text, "DCGM_EXP_CLOCK_EVENTS_COUNT");
    let g2 = by_gpu(&clocks, "2");
    assert!(
        g2.contains(&(Some("sw_thermal".to_string()), "1".to_string())),
        "{g2:?}"
    );
    assert!(
        g2.contains(&(Some("hw_thermal".to_string()), "1".to_string())),
        "{g2:?}"
    );
    let dbe = series(&text, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL");
    let dbe: Vec<&str> = dbe.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(dbe, ["0", "0", "2"]);
}

#[test]
fn collector_leaves_blank_fields_out() {
    let config = r#"{"faults":{"blank_fields":[150]}}"#;
    let (_l, c) = sim_collector(Some(config), "g", BASIC);
    let mut c = c.unwrap();
    let mut text = String::new();
    c.collect(&mut text).unwrap();
    assert!(!text.contains("DCGM_FI_DEV_GPU_TEMP"), "{text}");
    assert_eq!(series(&text, "DCGM_FI_DEV_FB_USED").len(), 8);
}

// NvSwitches, NVLinks, CPUs and cores; health and P2P rows.

use dcgm::{GpuP2pStatus, HealthReport, HealthResult, HealthSystems, Incident, P2pStatus};
use dcgm_prometheus::{EntitySelection, GpuHealth, HEALTH_WATCHES, OtherEntity};

const FABRIC: &str = "DCGM_FI_DEV_GPU_TEMP, gauge, g\n\
                      DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS, gauge, t\n\
                      DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX, counter, tx\n\
                      DCGM_FI_DEV_CPU_TEMP_CELSIUS, gauge, c\n\
                      DCGM_FI_DEV_CPU_UTIL_TOTAL, gauge, u\n\
                      DCGM_FI_DRIVER_VERSION, label, d\n";

fn others() -> Vec<OtherEntity> {
    vec![
        OtherEntity::CpuCore { cpu: 0, core: 7 },
        OtherEntity::Cpu { id: 0 },
        OtherEntity::SwitchLink { switch: 1, link: 5 },
        OtherEntity::gpu_link(&gpu(0), 3),
        OtherEntity::Switch { id: 1 },
    ]
}

#[test]
fn switch_link_and_cpu_series_carry_dcgm_exporters_labels() {
    let counters =
        format!("{FABRIC}DCGM_FI_DEV_SERIAL, label, s\nDCGM_FI_DEV_CPU_MODEL, label, m\n");
    let c = parse_counters(&counters).unwrap();
    let mut r = Renderer::new(&c, vec![gpu(0)], opts());
    r.set_other_entities(others());
    let order: Vec<EntityGroup> = r.other_entities().map(OtherEntity::group).collect();
    use EntityGroup::*;
    assert_eq!(order, [Switch, Link, Link, Cpu, CpuCore]);
    // Every entity has every field: each row is written for the entities of its level only,
    // and each label row labels the entities of its level, or every entity when global.
    let mut snap = Snapshot::new();
    let mut entities = vec![Entity::gpu(0)];
    entities.extend(others().iter().map(OtherEntity::entity));
    for (n, e) in entities.into_iter().enumerate() {
        for f in [
            "DCGM_FI_DEV_GPU_TEMP",
            "DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS",
            "DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX",
            "DCGM_FI_DEV_CPU_TEMP_CELSIUS",
            "DCGM_FI_DEV_CPU_UTIL_TOTAL",
        ] {
            put(&mut snap, e, fid(f), Value::Int(40 + n as i64));
        }
        put(
            &mut snap,
            e,
            fid("DCGM_FI_DRIVER_VERSION"),
            Value::String("570.1".into()),
        );
        put(
            &mut snap,
            e,
            fid("DCGM_FI_DEV_SERIAL"),
            Value::String("1652".into()),
        );
        put(
            &mut snap,
            e,
            fid("DCGM_FI_DEV_CPU_MODEL"),
            Value::String("Grace".into()),
        );
    }
    let mut text = String::new();
    r.render(&snap, &[], &mut text);
    let host = "hostname=\"node-1\"";
    let dv = "DCGM_FI_DRIVER_VERSION=\"570.1\"";
    let expected = [
        format!(
            "DCGM_FI_DEV_CPU_TEMP_CELSIUS{{cpu=\"0\",{host},DCGM_FI_DEV_CPU_MODEL=\"Grace\",{dv}}} 42"
        ),
        format!("DCGM_FI_DEV_CPU_UTIL_TOTAL{{cpucore=\"7\",cpu=\"0\",{host},{dv}}} 41"),
        format!(
            "DCGM_FI_DEV_GPU_TEMP{{gpu=\"0\",UUID=\"GPU-0000\",pci_bus_id=\"00000000:18:00.0\",\
             device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",{host},\
             DCGM_FI_DEV_SERIAL=\"1652\",{dv}}} 40"
        ),
        format!(
            "DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX{{nvlink=\"3\",gpu=\"0\",gpu_uuid=\"GPU-0000\",\
             pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\",model_name=\"NVIDIA H100 80GB HBM3\",\
             {host},{dv}}} 44"
        ),
        format!(
            "DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX{{nvlink=\"5\",nvswitch=\"nvswitch1\",{host},{dv}}} 43"
        ),
        format!("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS{{nvswitch=\"nvswitch1\",{host},{dv}}} 45"),
    ];
    let got: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(got, expected, "{text}");
    assert_eq!(text.matches("# HELP").count(), 5);
    assert_eq!(text.matches("# TYPE").count(), 5);
}

#[test]
fn other_entities_without_values_or_hostname() {
    let c = parse_counters(FABRIC).unwrap();
    let mut r = Renderer::new(
        &c,
        vec![gpu(0)],
        LabelOptions {
            hostname: None,
            ..LabelOptions::default()
        },
    );
    r.set_other_entities(others());
    let mut snap = Snapshot::new();
    let sw = OtherEntity::Switch { id: 1 }.entity();
    put(
        &mut snap,
        sw,
        fid("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS"),
        Value::Int(50),
    );
    let core = OtherEntity::CpuCore { cpu: 0, core: 7 }.entity();
    put(
        &mut snap,
        core,
        fid("DCGM_FI_DEV_CPU_UTIL_TOTAL"),
        Value::Blank(BlankKind::NotSupported),
    );
    // Values may come from several snapshots (one per reader).
    let mut cpus = Snapshot::new();
    put(
        &mut cpus,
        OtherEntity::Cpu { id: 0 }.entity(),
        fid("DCGM_FI_DEV_CPU_TEMP_CELSIUS"),
        Value::Double(51.5),
    );
    let mut text = String::new();
    r.render_snapshots(&[&snap, &cpus], &[], &mut text);
    let got: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        got,
        [
            "DCGM_FI_DEV_CPU_TEMP_CELSIUS{cpu=\"0\"} 51.5",
            "DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS{nvswitch=\"nvswitch1\"} 50",
        ],
        "{text}"
    );
    assert!(!text.contains("CPU_UTIL_TOTAL"), "blank: no family");
}

fn incident(gpu: u32, system: HealthSystems, result: HealthResult, code: u32) -> Incident {
    Incident {
        system,
        result,
        error_code: code,
        error_name: None,
        category: None,
        severity: None,
        suggestion: None,
        message: String::new(),
        entity: Entity::gpu(gpu),
    }
}

#[test]
fn health_status_rows_per_gpu_and_watch() {
    let mut h = GpuHealth::new([7, 0, 1, 0]);
    assert_eq!(h.gpus().collect::<Vec<_>>(), [0, 1, 7]);
    use dcgm::raw::sys::{
        DCGM_FR_TEMP_VIOLATION, DCGM_FR_VOLATILE_DBE_DETECTED, DCGM_FR_VOLATILE_SBE_DETECTED,
    };
    let report = HealthReport {
        overall: HealthResult::Fail,
        incidents: vec![
            incident(
                1,
                HealthSystems::MEM,
                HealthResult::Fail,
                DCGM_FR_VOLATILE_DBE_DETECTED,
            ),
            incident(
                1,
                HealthSystems::MEM,
                HealthResult::Warn,
                DCGM_FR_VOLATILE_SBE_DETECTED,
            ),
            incident(
                7,
                HealthSystems::THERMAL,
                HealthResult::Warn,
                DCGM_FR_TEMP_VIOLATION,
            ),
            incident(0, HealthSystems::ALL, HealthResult::Fail, 9999),
        ],
    };
    h.apply(&report);
    // Not one of ours: another GPU, a MIG instance, a watch dcgm-exporter does not report.
    assert!(!h.record(&incident(3, HealthSystems::PCIE, HealthResult::Fail, 1)));
    let mut gi = incident(0, HealthSystems::SM, HealthResult::Fail, 1);
    gi.entity = Entity::new(EntityGroup::GpuInstance, 0);
    assert!(!h.record(&gi));
    assert!(!h.record(&incident(
        0,
        HealthSystems::NVSWITCH_FATAL,
        HealthResult::Fail,
        1
    )));

    let c =
        parse_counters("DCGM_EXP_GPU_HEALTH_STATUS, gauge, h\nDCGM_FI_DRIVER_VERSION, label, d\n")
            .unwrap();
    let ids = vec![
        gpu(0),
        gpu(1),
        gpu_instance(0, 7, 1, "3g.40gb"),
        gpu_instance(1, 7, 2, "1g.10gb"),
    ];
    let mut r = Renderer::new(&c, ids, opts());
    let mut snap = Snapshot::new();
    put(
        &mut snap,
        Entity::new(EntityGroup::GpuInstance, 0),
        fid("DCGM_FI_DRIVER_VERSION"),
        Value::String("570.1".into()),
    );
    let mut text = String::new();
    r.render(&snap, &[], &mut text);
    assert!(
        !text.contains("DCGM_EXP_GPU_HEALTH_STATUS"),
        "no check yet: left out"
    );
    *r.health_mut() = Some(h.clone());
    r.render(&snap, &[], &mut text);
    let s = series(&text, "DCGM_EXP_GPU_HEALTH_STATUS");
    assert_eq!(s.len(), 3 * HEALTH_WATCHES.len(), "{text}");
    let watches: Vec<&str> = s[..11]
        .iter()
        .map(|(l, _)| label(l, "health_watch").unwrap())
        .collect();
    assert_eq!(
        watches,
        [
            "PCIE", "NVLINK", "PMU", "MCU", "MEM", "SM", "INFOROM", "THERMAL", "POWER", "DRIVER",
            "ALL"
        ]
    );
    let find = |gpu: &str, watch: &str| {
        s.iter()
            .find(|(l, _)| label(l, "gpu") == Some(gpu) && label(l, "health_watch") == Some(watch))
            .unwrap_or_else(|| panic!("no {gpu}/{watch} in {text}"))
    };
    let (l, v) = find("1", "MEM");
    assert_eq!(
        (label(l, "health_error_code"), v.as_str()),
        (Some("DCGM_FR_VOLATILE_DBE_DETECTED"), "20")
    );
    let (l, v) = find("0", "MEM");
    assert_eq!(
        (label(l, "health_error_code"), v.as_str()),
        (Some("DCGM_FR_OK"), "0")
    );
    let (l, v) = find("0", "ALL");
    assert_eq!(
        (label(l, "health_error_code"), v.as_str()),
        (Some("DCGM_FR_UNKNOWN(9999)"), "20")
    );
    let (l, v) = find("7", "THERMAL");
    assert_eq!(
        (label(l, "health_error_code"), v.as_str()),
        (Some("DCGM_FR_TEMP_VIOLATION"), "10")
    );
    // GPU 7 is exported as MIG instances: its health series are the whole GPU's, labelled
    // with the labels of its first instance's label rows.
    assert_eq!(label(l, "device"), Some("nvidia7"));
    assert_eq!(label(l, "UUID"), Some("GPU-7777"));
    assert_eq!(label(l, "GPU_I_PROFILE"), None);
    assert_eq!(label(l, "DCGM_FI_DRIVER_VERSION"), Some("570.1"));
    assert_eq!(label(l, "hostname"), Some("node-1"));
    // The next check passes again.
    r.health_mut().as_mut().unwrap().apply(&HealthReport {
        overall: HealthResult::Pass,
        incidents: vec![],
    });
    r.render(&snap, &[], &mut text);
    assert!(
        series(&text, "DCGM_EXP_GPU_HEALTH_STATUS")
            .iter()
            .all(|(_, v)| v == "0")
    );
}

#[test]
fn p2p_status_rows_per_gpu_and_peer() {
    let c = parse_counters("DCGM_EXP_P2P_STATUS, gauge, p\n").unwrap();
    let mut r = Renderer::new(&c, vec![gpu(0), gpu(1)], opts());
    r.set_p2p(Some(vec![
        GpuP2pStatus {
            gpu: 1,
            peers: vec![(0, P2pStatus::Ok), (2, P2pStatus::TopologyNotSupported)],
        },
        GpuP2pStatus {
            gpu: 2,
            peers: vec![(0, P2pStatus::Ok)],
        },
        GpuP2pStatus {
            gpu: 0,
            peers: vec![(1, P2pStatus::GpuNotSupported), (2, P2pStatus::Unknown)],
        },
    ]));
    let mut text = String::new();
    r.render(&Snapshot::new(), &[], &mut text);
    let s = series(&text, "DCGM_EXP_P2P_STATUS");
    let got: Vec<(&str, &str, &str, &str)> = s
        .iter()
        .map(|(l, v)| {
            (
                label(l, "gpu").unwrap(),
                label(l, "peer_gpu").unwrap(),
                label(l, "link_status").unwrap(),
                v.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("0", "1", "GPUNotSupported", "2"),
            ("0", "2", "Unknown", "6"),
            ("1", "0", "OK", "0"),
            ("1", "2", "TopologyNotSupported", "3"),
        ],
        "{text}"
    );
    assert_eq!(label(&s[0].0, "UUID"), Some("GPU-0000"));
    r.set_p2p(None);
    r.render(&Snapshot::new(), &[], &mut text);
    assert!(!text.contains("DCGM_EXP_P2P_STATUS"));
}

#[test]
fn switch_and_cpu_selection_syntax() {
    assert_eq!("f".parse(), Ok(EntitySelection::Flex));
    assert_eq!("g".parse(), Ok(EntitySelection::Major(None)));
    assert_eq!(
        "g:1,3".parse(),
        Ok(EntitySelection::Major(Some(vec![1, 3])))
    );
    assert_eq!("i".parse(), Ok(EntitySelection::Minor(None)));
    assert_eq!(
        "i:0-2,8".parse(),
        Ok(EntitySelection::Minor(Some(vec![0, 1, 2, 8])))
    );
    for bad in ["", "s", "s:0", "l:1", "c:2", "f:0", "g:x", "i:3-1"] {
        assert!(bad.parse::<EntitySelection>().is_err(), "{bad:?} accepted");
    }
    assert_eq!(EntitySelection::default(), EntitySelection::Flex);
}

fn sim_collector_with(
    json: Option<&str>,
    devices: &str,
    switches: &str,
    cpus: &str,
    counters: &str,
) -> (SimulatorLock, dcgm::Result<Collector>) {
    let lock = SimulatorLock::new(json).unwrap();
    let c = Collector::new(CollectorConfig {
        library_path: Some(simulator_path()),
        devices: devices.parse().unwrap(),
        switches: switches.parse().unwrap(),
        cpus: cpus.parse().unwrap(),
        collect_interval: Duration::from_millis(100),
        labels: opts(),
        ..CollectorConfig::new(parse_counters(counters).unwrap())
    });
    (lock, c)
}

fn collect(c: &mut Collector) -> String {
    let mut text = String::new();
    c.collect(&mut text).unwrap();
    text
}

#[test]
fn collector_exports_switches_links_cpus_and_cores() {
    let (_l, c) = sim_collector_with(None, "f", "f", "f", FABRIC);
    let mut c = c.unwrap();
    let text = collect(&mut c);
    let temps = series(&text, "DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS");
    let names: Vec<&str> = temps
        .iter()
        .map(|(l, _)| label(l, "nvswitch").unwrap())
        .collect();
    assert_eq!(
        names,
        ["nvswitch0", "nvswitch1", "nvswitch2", "nvswitch3"],
        "{text}"
    );
    for (l, v) in &temps {
        assert_eq!(l.len(), 3, "nvswitch, hostname, driver version: {l:?}");
        assert_eq!(label(l, "hostname"), Some("node-1"));
        assert!(label(l, "DCGM_FI_DRIVER_VERSION").is_some_and(|v| !v.is_empty()));
        assert!((30.0..90.0).contains(&v.parse::<f64>().unwrap()), "{v}");
    }
    let links = series(&text, "DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX");
    // 8 GPUs x 18 links (GPU 7's too: flex exports its MIG instances, and its links) and
    // 4 NvSwitches x 64 links.
    assert_eq!(links.len(), 8 * 18 + 4 * 64);
    let (gpu_links, switch_links): (Vec<_>, Vec<_>) =
        links.iter().partition(|(l, _)| label(l, "gpu").is_some());
    assert_eq!(gpu_links.len(), 144);
    for (l, _) in &gpu_links {
        for name in [
            "nvlink",
            "gpu",
            "gpu_uuid",
            "pci_bus_id",
            "device",
            "model_name",
            "hostname",
        ] {
            assert!(
                label(l, name).is_some_and(|v| !v.is_empty()),
                "{name}: {l:?}"
            );
        }
        assert_eq!(label(l, "nvswitch"), None);
        assert_eq!(label(l, "UUID"), None);
    }
    let last = &gpu_links[143].0;
    assert_eq!(
        (label(last, "gpu"), label(last, "nvlink")),
        (Some("7"), Some("17"))
    );
    assert_eq!(label(last, "device"), Some("nvidia7"));
    assert_eq!(
        label(last, "gpu_uuid"),
        c.identities()
            .iter()
            .find(|i| i.gpu == 7)
            .map(|i| i.uuid.as_str())
    );
    for (i, (l, v)) in switch_links.iter().enumerate() {
        assert_eq!(
            label(l, "nvswitch"),
            Some(format!("nvswitch{}", i / 64).as_str())
        );
        assert_eq!(label(l, "nvlink"), Some((i % 64).to_string().as_str()));
        assert!(v.parse::<f64>().unwrap() >= 0.0);
    }
    let cpus = series(&text, "DCGM_FI_DEV_CPU_TEMP_CELSIUS");
    let ids: Vec<&str> = cpus.iter().map(|(l, _)| label(l, "cpu").unwrap()).collect();
    assert_eq!(ids, ["0", "1"]);
    let cores = series(&text, "DCGM_FI_DEV_CPU_UTIL_TOTAL");
    assert_eq!(cores.len(), 112);
    for (i, (l, v)) in cores.iter().enumerate() {
        assert_eq!(label(l, "cpucore"), Some(i.to_string().as_str()));
        assert_eq!(label(l, "cpu"), Some(if i < 56 { "0" } else { "1" }));
        assert!((0.0..=1.0).contains(&v.parse::<f64>().unwrap()));
    }
    // GPU rows are unchanged: 7 GPUs and GPU 7's 3 instances.
    assert_eq!(series(&text, "DCGM_FI_DEV_GPU_TEMP").len(), 10);
    assert_eq!(c.other_entities().len(), 4 + 400 + 2 + 112);
    // Steady state: a second collection gives the same series.
    let again = collect(&mut c);
    assert_eq!(again.lines().count(), text.lines().count());
}

#[test]
fn collector_switch_and_cpu_selections() {
    let count = |text: &str, metric: &str| series(text, metric).len();
    let (_l, c) = sim_collector_with(None, "g", "g:1", "g:1", FABRIC);
    let text = collect(&mut c.unwrap());
    let sw = series(&text, "DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS");
    assert_eq!(sw.len(), 1);
    assert_eq!(label(&sw[0].0, "nvswitch"), Some("nvswitch1"));
    let links = series(&text, "DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX");
    assert_eq!(links.len(), 8 * 18, "g: no switch links, GPU links still");
    assert!(links.iter().all(|(l, _)| label(l, "nvswitch").is_none()));
    let cpu = series(&text, "DCGM_FI_DEV_CPU_TEMP_CELSIUS");
    assert_eq!(cpu.len(), 1);
    assert_eq!(label(&cpu[0].0, "cpu"), Some("1"));
    assert_eq!(count(&text, "DCGM_FI_DEV_CPU_UTIL_TOTAL"), 0, "g: no cores");
    drop(_l);

    let (_l, c) = sim_collector_with(None, "g:1-2", "i:0-1", "i:54-57", FABRIC);
    let text = collect(&mut c.unwrap());
    assert_eq!(
        count(&text, "DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS"),
        0,
        "i: no switch"
    );
    let links = series(&text, "DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX");
    let switch_links: Vec<(&str, &str)> = links
        .iter()
        .filter_map(|(l, _)| Some((label(l, "nvswitch")?, label(l, "nvlink")?)))
        .collect();
    assert_eq!(switch_links.len(), 4 * 2);
    assert!(switch_links.iter().all(|(_, n)| *n == "0" || *n == "1"));
    assert_eq!(
        links.len() - switch_links.len(),
        2 * 18,
        "the links of GPUs 1 and 2"
    );
    assert_eq!(count(&text, "DCGM_FI_DEV_CPU_TEMP_CELSIUS"), 0, "i: no CPU");
    let cores = series(&text, "DCGM_FI_DEV_CPU_UTIL_TOTAL");
    let cores: Vec<(&str, &str)> = cores
        .iter()
        .map(|(l, _)| (label(l, "cpucore").unwrap(), label(l, "cpu").unwrap()))
        .collect();
    assert_eq!(cores, [("54", "0"), ("55", "0"), ("56", "1"), ("57", "1")]);
    drop(_l);

    // MIG instances only (-d i): no GPU links, as dcgm-exporter.
    let (_l, c) = sim_collector_with(None, "i", "g", "g", FABRIC);
    let text = collect(&mut c.unwrap());
    assert_eq!(count(&text, "DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX"), 0);
    assert_eq!(count(&text, "DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS"), 4);
    drop(_l);

    for (s, p) in [("g:4", "f"), ("i:64", "f"), ("f", "g:2"), ("f", "i:112")] {
        let (_l, c) = sim_collector_with(None, "g", s, p, FABRIC);
        assert!(
            matches!(c, Err(dcgm::Error::InvalidArgument(_))),
            "-s {s} -p {p}: {c:?}"
        );
    }
    // Without NvSwitch or CPU rows nothing is looked up, so the selections are not checked.
    let (_l, c) = sim_collector_with(None, "g", "g:4", "i:112", BASIC);
    assert_eq!(c.unwrap().other_entities().len(), 0);
    drop(_l);
    // A node without NvSwitches: switch rows export nothing, the rest works.
    let (_l, c) = sim_collector_with(
        Some(r#"{"gpus":[{},{}],"nvswitches":0}"#),
        "f",
        "f",
        "f",
        FABRIC,
    );
    let text = collect(&mut c.unwrap());
    assert!(
        !text.contains("DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS"),
        "{text}"
    );
    assert_eq!(
        count(&text, "DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX"),
        2 * 18
    );
    assert_eq!(count(&text, "DCGM_FI_DEV_CPU_TEMP_CELSIUS"), 2);
}

#[test]
fn collector_exports_health_checks_and_p2p_status() {
    let config = r#"{"gpus":[{},{},{}],"events":[{"at_ms":600,"gpu":1,"kind":"dbe","value":2}]}"#;
    let counters = "DCGM_EXP_GPU_HEALTH_STATUS, gauge, h\n\
                    DCGM_EXP_P2P_STATUS, gauge, p\n\
                    DCGM_FI_DRIVER_VERSION, label, d\n";
    let (_l, c) = sim_collector_with(Some(config), "g", "f", "f", counters);
    let mut c = c.unwrap();
    assert!(c.ignored().is_empty());
    let text = collect(&mut c);
    let h = series(&text, "DCGM_EXP_GPU_HEALTH_STATUS");
    assert_eq!(h.len(), 3 * 11, "{text}");
    assert!(h.iter().all(|(l, v)| v == "0"
        && label(l, "health_error_code") == Some("DCGM_FR_OK")
        && label(l, "DCGM_FI_DRIVER_VERSION").is_some()));
    let p = series(&text, "DCGM_EXP_P2P_STATUS");
    let pairs: Vec<(&str, &str, &str, &str)> = p
        .iter()
        .map(|(l, v)| {
            (
                label(l, "gpu").unwrap(),
                label(l, "peer_gpu").unwrap(),
                label(l, "link_status").unwrap(),
                v.as_str(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("0", "1", "OK", "0"),
            ("0", "2", "OK", "0"),
            ("1", "0", "OK", "0"),
            ("1", "2", "OK", "0"),
            ("2", "0", "OK", "0"),
            ("2", "1", "OK", "0"),
        ]
    );
    // The uncorrectable ECC errors at 600 ms show in the next check, and in every check while
    // the volatile count holds them (as libdcgm 4.6.0 judges it: the count stays until a
    // reset).
    std::thread::sleep(Duration::from_millis(900));
    let text = collect(&mut c);
    let h = series(&text, "DCGM_EXP_GPU_HEALTH_STATUS");
    let bad: Vec<(&str, &str, &str, &str)> = h
        .iter()
        .filter(|(_, v)| v != "0")
        .map(|(l, v)| {
            (
                label(l, "gpu").unwrap(),
                label(l, "health_watch").unwrap(),
                label(l, "health_error_code").unwrap(),
                v.as_str(),
            )
        })
        .collect();
    assert_eq!(
        bad,
        [("1", "MEM", "DCGM_FR_VOLATILE_DBE_DETECTED", "20")],
        "{text}"
    );
    let text = collect(&mut c);
    let again: Vec<(String, String)> = series(&text, "DCGM_EXP_GPU_HEALTH_STATUS")
        .into_iter()
        .filter(|(_, v)| v != "0")
        .map(|(l, v)| (label(&l, "health_error_code").unwrap().to_string(), v))
        .collect();
    assert_eq!(
        again,
        [(
            "DCGM_FR_VOLATILE_DBE_DETECTED".to_string(),
            "20".to_string()
        )],
        "{text}"
    );
    drop(c);
    drop(_l);

    // Without NvSwitches the GPUs cannot reach each other; -d limits the GPUs reported.
    let config = r#"{"gpus":[{},{},{}],"nvswitches":0}"#;
    let (_l, c) = sim_collector_with(Some(config), "g:1", "f", "f", counters);
    let text = collect(&mut c.unwrap());
    assert_eq!(series(&text, "DCGM_EXP_GPU_HEALTH_STATUS").len(), 11);
    let p = series(&text, "DCGM_EXP_P2P_STATUS");
    let pairs: Vec<(&str, &str, &str)> = p
        .iter()
        .map(|(l, v)| {
            (
                label(l, "peer_gpu").unwrap(),
                label(l, "link_status").unwrap(),
                v.as_str(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("0", "TopologyNotSupported", "3"),
            ("2", "TopologyNotSupported", "3")
        ]
    );
    assert!(p.iter().all(|(l, _)| label(l, "gpu") == Some("1")));
}

#[test]
fn workload_labels_give_one_series_per_label_set_and_follow_their_entity() {
    let temp = fid("DCGM_FI_DEV_GPU_TEMP");
    let mut snap = Snapshot::new();
    put(&mut snap, Entity::gpu(0), temp, Value::Int(40));
    put(&mut snap, Entity::gpu(1), temp, Value::Int(41));
    let c = parse_counters("DCGM_FI_DEV_GPU_TEMP, gauge, temperature\n").unwrap();
    let mut r = Renderer::new(&c, vec![gpu(0), gpu(1)], opts());
    r.set_workload_labels(|id| match id.gpu {
        0 => vec![
            vec![("hpc_job".into(), "job-1".into())],
            vec![
                ("hpc_job".into(), "job \"2\"".into()),
                ("not a label".into(), "dropped".into()),
            ],
        ],
        _ => Vec::new(),
    });
    let mut out = String::new();
    r.render(&snap, &[], &mut out);
    let series: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(series.len(), 3, "{out}");
    assert!(series[0].contains("gpu=\"0\"") && series[0].ends_with(",hpc_job=\"job-1\"} 40"));
    assert!(
        series[1].ends_with(",hpc_job=\"job \\\"2\\\"\"} 40"),
        "{}",
        series[1]
    );
    assert!(!out.contains("dropped"));
    assert!(series[2].contains("gpu=\"1\"") && !series[2].contains("hpc_job"));
    // New identities (as when MIG profile names resolve) keep the labels of their entity.
    r.set_identities(vec![gpu(1), gpu(0)]);
    r.render(&snap, &[], &mut out);
    assert_eq!(out.matches("hpc_job=").count(), 2, "{out}");
    // No label sets: the plain series again.
    r.set_workload_labels(|_| Vec::new());
    r.render(&snap, &[], &mut out);
    assert!(!out.contains("hpc_job"), "{out}");
}

#[test]
fn the_renderer_writes_into_any_fmt_or_io_writer_and_leaves_empty_families_out() {
    let counters = parse_counters(
        "DCGM_FI_DEV_GPU_TEMP, gauge, Temperature.\n\
         DCGM_FI_DEV_SM_CLOCK, gauge, SM clock.\n\
         DCGM_FI_DEV_POWER_USAGE, gauge, Power.\n",
    )
    .unwrap();
    let mut snap = Snapshot::new();
    put(&mut snap, Entity::gpu(0), FieldId(150), Value::Int(41));
    put(
        &mut snap,
        Entity::gpu(0),
        fid("DCGM_FI_DEV_POWER_USAGE"),
        Value::Double(312.5),
    );
    // The SM clock is blank: its family (HELP and TYPE too) must be left out.
    put(
        &mut snap,
        Entity::gpu(0),
        fid("DCGM_FI_DEV_SM_CLOCK"),
        Value::Blank(BlankKind::Blank),
    );
    let mut r = Renderer::new(&counters, vec![gpu(0)], opts());
    let mut text = String::new();
    r.render(&snap, &[], &mut text);
    assert!(text.contains("DCGM_FI_DEV_GPU_TEMP{"), "{text}");
    assert!(text.contains("} 312.5\n"), "{text}");
    assert!(!text.contains("SM_CLOCK"), "{text}");

    // fmt::Write: appended, as render() writes it.
    let mut appended = String::from("# before\n");
    r.render_to(&[&snap], &[], &mut appended).unwrap();
    assert_eq!(appended, format!("# before\n{text}"));

    // io::Write: the same bytes.
    let mut bytes = Vec::new();
    r.render_io(&[&snap], &[], &mut bytes).unwrap();
    assert_eq!(bytes, text.as_bytes());

    // An io error comes back as it was.
    struct Full(usize);
    impl std::io::Write for Full {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.0 < b.len() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    "disk full",
                ));
            }
            self.0 -= b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let err = r
        .render_io(&[&snap], &[], &mut Full(10))
        .expect_err("a writer that fills up");
    assert_eq!(err.kind(), std::io::ErrorKind::StorageFull);
}

/// The user's health story as the exporter shows it: the battery's injections (an NVLink CRC
/// burst, an uncontained XID, a PCIe replay storm; `tests/differential/health_cases.rs`),
/// through DCGM's test API into GPUs 1, 3 and 5 of the default node, give a non-zero
/// `DCGM_EXP_GPU_HEALTH_STATUS` on exactly those GPUs, each with the watch, code and severity
/// value the real libdcgm 4.6.0 reported for it (the golden file's `health/case/story`:
/// NVLink 70 FAIL, all 81 FAIL, PCIe 3 WARN).
#[test]
fn collector_shows_the_health_story_on_exactly_the_three_gpus() {
    use dcgm::raw::sys::*;
    use std::time::SystemTime;
    let counters = "DCGM_EXP_GPU_HEALTH_STATUS, gauge, h\n";
    let (_l, c) = sim_collector_with(None, "g", "f", "f", counters);
    let mut c = c.unwrap();
    collect(&mut c);
    // The collector's engine is this process's simulator: a handle of its own injects there.
    let h = dcgm::Handle::builder()
        .library_path(simulator_path())
        .embedded()
        .unwrap();
    let ago = |s: u64| Some(SystemTime::now() - Duration::from_secs(s));
    let inject = |gpu: u32, field: u16, v: i64, s: u64| {
        dcgm::testing::inject_value(&h, Entity::gpu(gpu), FieldId(field), v, ago(s)).unwrap();
    };
    inject(1, DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL, 0, 50);
    inject(1, DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL, 1_000_000, 20);
    inject(3, DCGM_FI_DEV_XID_ERROR, 95, 1);
    inject(5, DCGM_FI_DEV_PCIE_LINK_GEN, 5, 5);
    inject(5, DCGM_FI_DEV_PCIE_LINK_WIDTH, 16, 5);
    inject(5, DCGM_FI_DEV_PCIE_REPLAY_TOTAL, 0, 50);
    inject(5, DCGM_FI_DEV_PCIE_REPLAY_TOTAL, 500, 10);
    std::thread::sleep(Duration::from_millis(300));
    let text = collect(&mut c);
    let mut bad: Vec<(String, String, String, String)> =
        series(&text, "DCGM_EXP_GPU_HEALTH_STATUS")
            .into_iter()
            .filter(|(_, v)| v != "0")
            .map(|(l, v)| {
                (
                    label(&l, "gpu").unwrap().to_string(),
                    label(&l, "health_watch").unwrap().to_string(),
                    label(&l, "health_error_code").unwrap().to_string(),
                    v,
                )
            })
            .collect();
    bad.sort();
    let want: Vec<(String, String, String, String)> = [
        ("1", "NVLINK", "DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD", "20"),
        ("3", "ALL", "DCGM_FR_UNCONTAINED_ERROR", "20"),
        ("5", "PCIE", "DCGM_FR_PCI_REPLAY_RATE", "10"),
    ]
    .iter()
    .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()))
    .collect();
    assert_eq!(bad, want, "{text}");
}
