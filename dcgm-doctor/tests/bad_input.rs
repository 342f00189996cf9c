//! Replay files and phases files that are not what `dmon --json` writes: each a typed error
//! naming its line, never a panic and never a guess.

use dcgm_doctor::replay::{self, ReplayError, Selection};
use dcgm_doctor::{Field, Kind};

const GOOD: &str = r#"{"timestamp_ms":1000,"entity_group":"GPU","entity_id":0,"gpu_utilization":50,"sm_active":null}"#;

fn read(text: &str) -> Result<replay::Trace, ReplayError> {
    replay::read(text.as_bytes())
}

#[test]
fn a_file_cut_mid_sample_is_truncated_at_its_last_line() {
    let text = format!("{GOOD}\n{GOOD}\n{}", &GOOD[..40]);
    match read(&text) {
        Err(e @ ReplayError::Truncated { line: 3 }) => {
            assert!(e.to_string().contains("line 3"), "{e}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_line_that_is_not_json_is_named() {
    let text = format!("{GOOD}\nGPU 0 50 %\n{GOOD}\n");
    match read(&text) {
        Err(e @ ReplayError::Json { line: 2, .. }) => assert!(e.to_string().starts_with("line 2:")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_broken_line_in_the_middle_is_malformed_not_truncated() {
    let text = format!("{GOOD}\n{}\n{GOOD}\n", &GOOD[..40]);
    assert!(matches!(
        read(&text),
        Err(ReplayError::Json { line: 2, .. })
    ));
}

#[test]
fn a_json_value_that_is_not_an_object_is_named() {
    assert!(matches!(
        read(&format!("{GOOD}\n[1,2]\n")),
        Err(ReplayError::NotObject { line: 2 })
    ));
}

#[test]
fn a_sample_without_a_timestamp_names_the_key() {
    let text = r#"{"entity_group":"GPU","entity_id":0}"#;
    assert!(matches!(
        read(text),
        Err(ReplayError::MissingKey {
            line: 1,
            key: "timestamp_ms"
        })
    ));
}

#[test]
fn a_field_that_is_a_string_is_a_bad_value() {
    let text = r#"{"timestamp_ms":1,"entity_group":"GPU","entity_id":0,"gpu_utilization":"N/A"}"#;
    match read(text) {
        Err(ReplayError::BadValue { line: 1, key, .. }) => assert_eq!(key, "gpu_utilization"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_empty_file_has_no_gpu_samples() {
    assert!(matches!(read(""), Err(ReplayError::Empty)));
    let switch = r#"{"timestamp_ms":1,"entity_group":"Switch","entity_id":0}"#;
    assert!(matches!(read(switch), Err(ReplayError::Empty)));
}

#[test]
fn null_is_unknown_never_zero() {
    let t = read(GOOD).unwrap();
    let s = &t.window.gpu(0)[0];
    assert_eq!(s.get(Field::GpuUtil), Some(50.0));
    assert_eq!(s.get(Field::SmActive), None);
    assert!(!t.fields.contains(&Field::SmActive));
}

#[test]
fn a_trace_with_no_profiling_fields_says_which_kinds_it_could_not_judge() {
    // Twenty seconds of a GPU at 40 % utilisation, with no profiling field at all.
    let text: String = (0..200)
        .map(|i| {
            format!(
                r#"{{"timestamp_ms":{},"entity_group":"GPU","entity_id":0,"gpu_utilization":40,"sm_active":null,"fb_used":900}}"#,
                i * 100
            ) + "\n"
        })
        .collect();
    let r = dcgm_doctor::judge(&read(&text).unwrap().window);
    let nj: Vec<Kind> = r.not_judged.iter().map(|n| n.kind).collect();
    for k in [
        Kind::PcieTransferBound,
        Kind::LaunchBound,
        Kind::ComputeBound,
        Kind::MemoryBandwidthBound,
        Kind::PowerCapped,
    ] {
        assert!(nj.contains(&k), "{k} missing from {nj:?}");
    }
    let why = &r
        .not_judged
        .iter()
        .find(|n| n.kind == Kind::LaunchBound)
        .unwrap()
        .reason;
    assert!(why.contains("sm_active"), "{why}");
    // What is present still gives findings: utilisation alone shows the starved GPU.
    assert!(
        r.of_kind(Kind::InputStarved).next().is_some(),
        "{:?}",
        r.findings
    );
    // And a blank SM activity is never read as an idle one.
    assert!(r.of_kind(Kind::LaunchBound).next().is_none());
}

#[test]
fn a_phases_file_line_that_is_not_a_phase_is_named() {
    match replay::phases("PHASE a 1\nPHASE b\n") {
        Err(e @ ReplayError::BadPhase { line: 2, .. }) => assert!(e.to_string().contains("line 2")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unknown_phase_lists_the_known_ones() {
    let t = read(GOOD).unwrap();
    let phases = replay::phases("PHASE warmup 0.5\nPHASE run 0.9\n").unwrap();
    let sel = Selection::Phase {
        name: "train".into(),
        settle_s: 0.0,
    };
    match replay::select(&t.window, &phases, &sel) {
        Err(ReplayError::NoSuchPhase { name, known }) => {
            assert_eq!(name, "train");
            assert_eq!(known, "warmup, run");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_time_window_outside_the_trace_is_an_empty_selection() {
    let t = read(GOOD).unwrap();
    let sel = Selection::Range {
        from_s: Some(100.0),
        to_s: Some(200.0),
    };
    assert!(matches!(
        replay::select(&t.window, &[], &sel),
        Err(ReplayError::EmptySelection { .. })
    ));
}
