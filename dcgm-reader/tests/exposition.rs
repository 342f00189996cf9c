//! The Prometheus renderer (on hand-made snapshots), event windows, device selection, and the
//! collector against dcgm-sim.

use std::collections::BTreeMap;
use std::time::Duration;

use dcgm::testing::{SimulatorLock, simulator_path};
use dcgm::{BlankKind, Entity, EntityGroup, FieldId, FieldValue, Value};
use dcgm_reader::exposition::{CLOCK_EVENT_REASONS, escape_help, escape_label_value, write_number};
use dcgm_reader::*;

fn fid(name: &str) -> FieldId {
    FieldId(dcgm::sys::field_by_name(name).unwrap().id)
}

fn put(snap: &mut Snapshot, e: Entity, f: FieldId, v: Value) {
    let fv = FieldValue {
        entity: e,
        field: f,
        timestamp_us: 1,
        value: v,
        status: 0,
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
            instance_id,
            profile: profile.into(),
            slices: 1,
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
         modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-1\"} 41\n"
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
            "Hostname"
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
    assert!(text.contains("Hostname=\"host\\\"1\""), "{text}");
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
    assert_eq!(label(&l, "Hostname"), None);
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
    // Rows not computed here, and windowed rows without their window, are left out.
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
        .map(|i| i.mig.as_ref().unwrap().instance_id)
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
            "Hostname",
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
    let ignored: Vec<&str> = c.ignored().iter().map(|c| c.metric_name.as_str()).collect();
    assert_eq!(ignored, ["DCGM_EXP_GPU_HEALTH_STATUS"]);
    let mut text = String::new();
    c.collect(&mut text).unwrap();
    std::thread::sleep(Duration::from_millis(450));
    c.collect(&mut text).unwrap();
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
    let last = series(&text, "DCGM_FI_DEV_XID_ERRORS");
    assert_eq!(label(&last[1].0, "err_code"), Some("79"));
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
