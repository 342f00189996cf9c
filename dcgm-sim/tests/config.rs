//! The node descriptions: the calm default, the `faults` preset, and errors that say where a
//! config file is wrong.

use dcgm_sim::config::{PRESETS, SimConfig};

#[test]
fn the_default_node_has_no_scripted_incidents() {
    assert!(SimConfig::default().events.is_empty());
    let preset = SimConfig::preset("default").unwrap();
    assert!(preset.events.is_empty());
    assert_eq!(preset.gpus.len(), 8);
}

#[test]
fn the_faults_preset_is_the_default_node_with_three_incidents() {
    let faults = SimConfig::preset("faults").unwrap();
    let events: Vec<(u64, u32, &str, i64)> = faults
        .events
        .iter()
        .map(|e| (e.at_ms, e.gpu, e.kind.as_str(), e.value))
        .collect();
    assert_eq!(
        events,
        [
            (1500, 3, "xid", 13),
            (2500, 5, "dbe", 1),
            (3500, 1, "thermal", 91)
        ]
    );
    let calm = SimConfig::preset("default").unwrap();
    assert_eq!(faults.gpus.len(), calm.gpus.len());
    assert_eq!(faults.gpus[3].uuid, calm.gpus[3].uuid);
    assert_eq!(PRESETS, ["default", "faults", "workloads", "burn"]);
    assert!(SimConfig::preset("calm").is_none());
    let burn = SimConfig::preset("burn").unwrap();
    assert_eq!(burn.gpus.len(), 8);
    assert!(burn.gpus.iter().all(|g| g.workload.name() == "burn"));
}

#[test]
fn a_toml_error_names_the_line_the_column_and_the_key() {
    let e = SimConfig::parse("seed = 7\n\n[[gpus]]\ncolour = \"red\"\n").unwrap_err();
    assert!(
        e.starts_with("line 4, column 1 (colour = \"red\"): unknown field `colour`"),
        "{e}"
    );
    let e = SimConfig::parse("seed = \"seven\"\n").unwrap_err();
    assert!(
        e.starts_with("line 1, column 8 (seed = \"seven\"): invalid type"),
        "{e}"
    );
}

#[test]
fn a_json_error_names_the_line_the_column_and_the_key() {
    let e = SimConfig::parse("{\"seed\": 1,\n \"gpu\": []}").unwrap_err();
    assert!(
        e.starts_with("line 2, column 6 (\"gpu\": []}): unknown field `gpu`"),
        "{e}"
    );
    assert!(!e.contains(" at line "), "the place is said once: {e}");
}

#[test]
fn a_gpu_names_its_workload_profile_and_an_unknown_one_is_an_error() {
    use dcgm_sim::config::Workload;
    let cfg = SimConfig::parse("[[gpus]]\nworkload = \"pcie_bound\"\n[[gpus]]\n").unwrap();
    assert_eq!(cfg.gpus[0].workload, Workload::PcieBound);
    assert_eq!(cfg.gpus[1].workload, Workload::Training);
    for w in Workload::ALL {
        let text = format!("[[gpus]]\nworkload = \"{}\"\n", w.name());
        assert_eq!(SimConfig::parse(&text).unwrap().gpus[0].workload, w);
    }
    let e = SimConfig::parse("[[gpus]]\nworkload = \"busy\"\n").unwrap_err();
    assert!(e.starts_with("line 2, column 12"), "{e}");
    assert!(e.contains("unknown variant `busy`"), "{e}");
}

#[test]
fn the_workloads_preset_runs_a_mix_and_leaves_the_default_node_on_its_training_cycle() {
    use dcgm_sim::config::Workload;
    let mix = SimConfig::preset("workloads").unwrap();
    assert_eq!(mix.gpus.len(), 8);
    let kinds: std::collections::BTreeSet<Workload> = mix.gpus.iter().map(|g| g.workload).collect();
    assert!(kinds.len() >= 6, "{kinds:?}");
    assert!(!kinds.contains(&Workload::Training));
    let calm = SimConfig::preset("default").unwrap();
    assert!(calm.gpus.iter().all(|g| g.workload == Workload::Training));
}

#[test]
fn a_duration_is_read_for_conditions_and_refused_on_instants() {
    let cfg = SimConfig::parse(
        "[[events]]\nat_ms = 10\ngpu = 0\nkind = \"thermal\"\nvalue = 91\nduration_ms = 2000\n",
    )
    .unwrap();
    assert_eq!(cfg.events[0].duration_ms, 2000);
    assert_eq!(
        SimConfig::parse("[[events]]\nkind = \"dbe\"\n")
            .unwrap()
            .events[0]
            .duration_ms,
        0
    );
    let e =
        SimConfig::parse("[[events]]\nkind = \"xid\"\nvalue = 79\nduration_ms = 5\n").unwrap_err();
    assert_eq!(
        e,
        "events[0]: kind \"xid\" is an instant and takes no duration_ms (only thermal, power, dbe, sbe, lost do)"
    );
}
