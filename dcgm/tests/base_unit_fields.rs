//! DCGM 4.6.1's base-unit fields (ids 1600-1612, `DCGM_FI_DEV_SM_CLOCK_HERTZ` and the like) on
//! engines of earlier releases: the simulator in its default 4.6.0 personality, and every real
//! library beside the checkout (`../shared/realdcgm-*`, all 4.6.0 or older; skipped where
//! absent). Such a field is left out of field groups and reads as a `NOT_FOUND` blank beside
//! the fields the release knows: it never fails a group or a read.

mod common;

use common::*;
use dcgm::raw::sys::{DCGM_ST_OK, DCGM_ST_UNKNOWN_FIELD};
use dcgm::testing::{REAL_RELEASES, real_library};
use dcgm::*;

const TEMP: FieldId = FieldId(150);

fn sm_clock_hertz() -> FieldId {
    FieldId::parse("DCGM_FI_DEV_SM_CLOCK_HERTZ").unwrap()
}

/// What a handle does with `DCGM_FI_DEV_SM_CLOCK_HERTZ` beside the GPU temperature, one line
/// each (printed by the real-library child, compared directly on the simulator).
fn probe(h: &Handle) -> Vec<String> {
    let hz = sm_clock_hertz();
    let mut lines = vec![format!(
        "KNOWS {}={} {}={}",
        TEMP.0,
        h.knows_field(TEMP),
        hz.0,
        h.knows_field(hz)
    )];
    let g = Group::with_gpus(h, "base-unit-probe", &[0]).unwrap();
    let fg = FieldGroup::create(h, "base-unit-probe", &[TEMP, hz]).unwrap();
    let ids = |f: &[FieldId]| f.iter().map(|f| f.0).collect::<Vec<_>>();
    lines.push(format!(
        "FIELD_GROUP fields={:?} left_out={:?}",
        ids(fg.fields()),
        ids(fg.left_out())
    ));
    let _w = g.watch(&fg, WatchOptions::default()).unwrap();
    h.update_all_fields(true).unwrap();
    let group_read: Vec<String> = g
        .latest_values(&fg)
        .unwrap()
        .iter()
        .map(|v| format!("{}:{}", v.field.0, shape(&v.value)))
        .collect();
    lines.push(format!("GROUP_READ {}", group_read.join(" ")));
    let read = h
        .system()
        .entities_latest_values(&[Entity::gpu(0)], &[TEMP, hz])
        .unwrap();
    let entity_read: Vec<String> = read
        .iter()
        .map(|v| format!("{}:{}:{}", v.field.0, shape(&v.value), v.status.raw()))
        .collect();
    lines.push(format!("ENTITY_READ {}", entity_read.join(" ")));
    lines
}

/// A value's kind: `int` for a number, the blank kind for a blank.
fn shape(v: &Value) -> String {
    match v {
        Value::Int(_) => "int".into(),
        Value::Blank(k) => format!("{k:?}"),
        other => format!("{other:?}"),
    }
}

/// The lines every engine of 4.6.0 or before gives.
fn expected() -> Vec<String> {
    vec![
        "KNOWS 150=true 1603=false".into(),
        "FIELD_GROUP fields=[150] left_out=[1603]".into(),
        "GROUP_READ 150:int".into(),
        format!("ENTITY_READ 150:int:{DCGM_ST_OK} 1603:NotFound:{DCGM_ST_UNKNOWN_FIELD}"),
    ]
}

#[test]
fn the_registry_knows_4_6_1_s_base_unit_fields_as_4_6_1_s() {
    let hz = sm_clock_hertz();
    assert_eq!(hz, FieldId(1603));
    assert_eq!(FieldId::by_name("DCGM_FI_DEV_SM_CLOCK_HERTZ"), Some(hz));
    assert_eq!(FieldId::parse("sm_clock_hertz").unwrap(), hz);
    assert_eq!(hz.field_type(), Some(FieldType::Int64));
    let since = |f: FieldId| dcgm::raw::sys::field_by_id(f.0).unwrap().since;
    assert_eq!(since(hz), Some((4, 6, 1)));
    assert_eq!(since(TEMP), None);
}

#[test]
fn the_simulator_as_4_6_0_leaves_a_base_unit_field_out_and_reads_it_blank() {
    let s = Sim::new(None);
    let h = s.handle(OperationMode::Auto);
    assert_eq!(h.dcgm_version().unwrap().to_string(), "4.6.0");
    assert_eq!(probe(&h), expected());
}

#[test]
fn the_simulator_as_4_6_1_knows_the_base_unit_fields() {
    let s = Sim::new(Some(r#"{"dcgm_version": "4.6.1"}"#));
    let h = s.handle(OperationMode::Auto);
    assert_eq!(h.dcgm_version().unwrap().to_string(), "4.6.1");
    for id in 1600..=1612 {
        assert!(h.knows_field(FieldId(id)), "{id}");
    }
    let fg = FieldGroup::create(&h, "base-unit-4.6.1", &[TEMP, sm_clock_hertz()]).unwrap();
    assert_eq!(fg.fields(), &[TEMP, sm_clock_hertz()]);
    assert!(fg.left_out().is_empty());
}

#[test]
fn every_real_release_leaves_a_base_unit_field_out_and_reads_it_blank() {
    for v in REAL_RELEASES {
        // Absent on a clone without ../shared: reported skipped once (the releases come
        // together).
        let Some(lib) = real_library(v) else { return };
        let o = dcgm::testing::run_release_child("base_unit_child", &lib);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{v}: {out}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got: Vec<String> = ["KNOWS ", "FIELD_GROUP ", "GROUP_READ ", "ENTITY_READ "]
            .iter()
            .map(|key| {
                out.lines()
                    .find(|l| l.starts_with(key))
                    .unwrap_or_else(|| panic!("{v}: no {key} in {out}"))
                    .to_string()
            })
            .collect();
        assert_eq!(got, expected(), "{v}");
    }
}

/// The child of the test above: one real library per process.
#[test]
#[ignore = "run by every_real_release_leaves_a_base_unit_field_out_and_reads_it_blank"]
fn base_unit_child() {
    let lib = std::env::var("RELEASE_CHILD_LIB").unwrap();
    let h = Handle::builder().library_path(&lib).embedded().unwrap();
    for line in probe(&h) {
        println!("{line}");
    }
}
