//! `doctor` end to end: the live path on the simulator, and replays of recordings, through
//! the built tool (`dcgm-doctor`, found through `CARGO_BIN_EXE_*`).

mod support;

use std::io::Write;
use std::process::Output;

fn run(args: &[&str]) -> Output {
    support::tool_command("doctor").args(args).output().unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn live_on_the_simulator_samples_every_gpu_and_labels_the_output_simulated() {
    let o = run(&["--simulate", "--duration", "1", "-d", "100", "--json"]);
    let code = o.status.code();
    assert!(matches!(code, Some(0 | 2 | 3)), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("# SIMULATED DATA"));
    let v = json(&o);
    assert_eq!(v["simulated"], true);
    let gpus = v["gpus"].as_array().unwrap();
    assert!(!gpus.is_empty());
    // At 100 ms for a second, every GPU gave several samples.
    assert!(
        v["samples"].as_u64().unwrap() >= 3 * gpus.len() as u64,
        "{v}"
    );
    // The simulator lists processes: the shared-GPU rule could judge.
    let nj = v["not_judged"].as_array().unwrap();
    assert!(!nj.iter().any(|n| n["kind"] == "shared_gpu"), "{nj:?}");

    let o = run(&["--simulate", "--duration", "0.5", "-i", "1"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("doctor: GPU 1,"), "{out}");
    assert!(
        out.lines().next().unwrap().contains("(SIMULATED DATA)"),
        "{out}"
    );
}

#[test]
fn live_faults_show_the_injected_xid_and_double_bit_error_as_hardware_errors() {
    // The faults preset: XID 13 on GPU 3 at 1.5 s, a double-bit ECC error on GPU 5 after it.
    let o = support::tool_command("doctor")
        .env("DCGM_SIM_CONFIG", "faults")
        .args(["--simulate", "--duration", "4", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    let v = json(&o);
    let hw: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "hardware_errors")
        .collect();
    let on = |gpu: u64, what: &str| {
        hw.iter().any(|f| {
            f["gpus"][0] == gpu
                && f["severity"] == "problem"
                && f["explanation"].as_str().unwrap().contains(what)
        })
    };
    assert!(on(3, "XID 13"), "{hw:?}");
    assert!(on(5, "ecc_dbe"), "{hw:?}");
}

#[test]
fn pid_not_on_any_gpu_is_an_error_saying_so() {
    let o = run(&["--simulate", "--duration", "0.5", "--pid", "4000000"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("process 4000000 runs on no GPU"));
}

/// A recording in a scratch directory: `lines` as the file, with a phases file beside it.
fn recording(name: &str, lines: &[String], phases: Option<&str>) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("doctor-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("trace.jsonl");
    let mut f = std::fs::File::create(&file).unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
    if let Some(p) = phases {
        std::fs::write(dir.join("trace-phases.txt"), p).unwrap();
    }
    file
}

/// `secs` seconds at 100 ms from t = 1000 s: tiny kernels first, then an idle GPU.
fn tiny_then_idle(secs: i64) -> Vec<String> {
    (0..secs * 10)
        .map(|i| {
            let tiny = i < secs * 5;
            format!(
                r#"{{"timestamp_ms":{},"entity_group":"GPU","entity_id":0,"gpu_utilization":{},"sm_active":{},"gr_engine_active":{},"fb_used":800}}"#,
                1_000_000 + i * 100,
                if tiny { 40 } else { 0 },
                if tiny { 0.001 } else { 0.0 },
                if tiny { 0.4 } else { 0.0 },
            )
        })
        .collect()
}

#[test]
fn replay_selects_a_phase_by_name_and_a_window_by_seconds() {
    let file = recording(
        "phases",
        &tiny_then_idle(20),
        Some("PHASE tiny 1000.0\nPHASE idle 1010.0\nPHASE end 1020.0\n"),
    );
    let f = file.to_str().unwrap();
    let kinds = |o: &Output| -> Vec<String> {
        json(o)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap().to_string())
            .collect()
    };
    let o = run(&["--replay", f, "--phase", "tiny", "--json"]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    assert_eq!(kinds(&o), ["launch_bound"]);
    let o = run(&["--replay", f, "--phase", "idle", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(kinds(&o).is_empty());
    let o = run(&["--replay", f, "--from", "12", "--to", "20", "--json"]);
    assert!(kinds(&o).is_empty(), "{o:?}");
    // The terminal summary, worst first, says what it could not judge.
    let o = run(&["--replay", f]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("PROBLEM  launch_bound on GPU 0"), "{out}");
    assert!(out.contains("not judged:"), "{out}");
    assert!(!out.contains("SIMULATED"), "{out}");
}

#[test]
fn replay_of_a_truncated_file_names_the_line() {
    let mut lines = tiny_then_idle(2);
    let last = lines.pop().unwrap();
    lines.push(last[..30].to_string());
    let file = recording("truncated", &lines, None);
    let o = run(&["--replay", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("line {}", lines.len())), "{err}");
    assert!(err.contains("cut short"), "{err}");
}

#[test]
fn a_phase_without_a_phases_file_is_an_error() {
    let file = recording("nophases", &tiny_then_idle(2), None);
    let o = run(&["--replay", file.to_str().unwrap(), "--phase", "tiny"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--phase needs a phases file"));
}

#[test]
fn pid_focuses_on_the_gpus_that_process_runs_on() {
    let node = dcgm_sim::config::SimConfig::default();
    let p = node.processes.iter().min_by_key(|p| p.gpus.len()).unwrap();
    let pid = p.pid.to_string();
    let o = run(&["--simulate", "--duration", "0.5", "--pid", &pid, "--json"]);
    let v = json(&o);
    let gpus: Vec<u32> = v["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_u64().unwrap() as u32)
        .collect();
    assert_eq!(gpus, p.gpus, "{v}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains(&format!("process {pid} runs on GPU")),
        "{notes}"
    );
}

#[test]
fn live_on_the_real_library_with_the_h200_capture_gives_no_finding_above_info() {
    let Some(lib) = support::real_libdcgm() else {
        return;
    };
    let yaml = dcgm::testing::shared_dir().join("fixtures/nvml-capture-h200.yaml");
    let o = support::tool_command("doctor")
        .env("NVML_INJECTION_MODE", "True")
        .env("NVML_YAML_FILE", &yaml)
        .args([
            "--lib",
            lib.to_str().unwrap(),
            "--embedded",
            "--duration",
            "1.5",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    // The injection library writes its own lines on stdout: the report is the object in it.
    let out = String::from_utf8_lossy(&o.stdout);
    let at = out.find("{\"findings\"").unwrap_or_else(|| panic!("{out}"));
    let v: serde_json::Value = serde_json::Deserializer::from_str(&out[at..])
        .into_iter()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(v["simulated"], false);
    assert!(v["samples"].as_u64().unwrap() > 0, "{v}");
    assert!(v["findings"].as_array().unwrap().is_empty(), "{v}");
    // The capture has no profiling fields: those kinds are not judged, never read as 0.
    let nj = v["not_judged"].to_string();
    assert!(
        nj.contains("launch_bound") && nj.contains("sm_active"),
        "{nj}"
    );
}

#[test]
fn ctrl_c_ends_sampling_early_and_still_judges_what_was_sampled() {
    let mut child = support::tool_command("doctor")
        .args(["--simulate", "--duration", "60", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until it samples (it says the data is simulated once connected), then interrupt.
    let mut err = child.stderr.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut err, &mut first).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let o = child.wait_with_output().unwrap();
    let v = json(&o);
    assert!(v["samples"].as_u64().unwrap() > 0, "{v}");
    assert!(v["notes"].to_string().contains("interrupted after"), "{v}");
}

#[test]
fn html_writes_a_self_contained_page_with_the_findings() {
    let file = recording("html", &tiny_then_idle(20), None);
    let page = file.with_file_name("report.html");
    let o = run(&[
        "--replay",
        file.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg") && html.contains("PROBLEM launch_bound</b>"));
    assert!(!html.contains("<script") && !html.contains("src="));
}

/// `doctor --simulate --json` for `secs` seconds on a node of H200s running these workload
/// profiles (GPU i runs `workloads[i]`), each GPU its own process unless `one_job`.
fn simulated_workloads(name: &str, workloads: &[&str], secs: &str, one_job: bool) -> Output {
    let dir = std::env::temp_dir().join(format!("doctor-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut toml = String::from("hostengines = []\n");
    for w in workloads {
        toml.push_str(&format!(
            "[[gpus]]\nmodel = \"NVIDIA H200\"\nmemory_mib = 143771\nworkload = \"{w}\"\n"
        ));
    }
    for (i, _) in workloads.iter().enumerate() {
        let (pid, gpus) = if one_job {
            (
                4000,
                format!("{:?}", (0..workloads.len()).collect::<Vec<_>>()),
            )
        } else {
            (4000 + i, format!("[{i}]"))
        };
        if one_job && i > 0 {
            break;
        }
        toml.push_str(&format!(
            "[[processes]]\npid = {pid}\nname = \"job{pid}\"\ngpus = {gpus}\nmemory_mib = 2000\n"
        ));
    }
    let cfg = dir.join("node.toml");
    std::fs::write(&cfg, toml).unwrap();
    support::tool_command("doctor")
        .env("DCGM_SIM_CONFIG", &cfg)
        .args(["--simulate", "--duration", secs, "--json"])
        .output()
        .unwrap()
}

/// The (kind, severity, gpus) of each finding of a `--json` report.
fn findings(o: &Output) -> Vec<(String, String, Vec<u64>)> {
    json(o)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["gpus"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|g| g.as_u64().unwrap())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn every_workload_profile_gives_its_finding_through_the_live_path() {
    // Each profile on a GPU of its own, all sampled at once: the finding each should give.
    let cases = [
        ("sawtooth", "input_starved", "problem"),
        ("pcie_bound", "pcie_transfer_bound", "problem"),
        ("tiny_kernels", "launch_bound", "problem"),
        ("memory_bound", "memory_bandwidth_bound", "warning"),
        ("memory_idle", "memory_held_idle", "warning"),
        ("power_capped", "power_capped", "warning"),
        ("thermal_throttle", "thermal_throttled", "warning"),
        ("steady", "compute_bound", "info"),
    ];
    let profiles: Vec<&str> = cases.iter().map(|c| c.0).collect();
    // Sawtooth beats every 1.2 s: 5 s holds the three beats a period needs, and more.
    let o = simulated_workloads("profiles", &profiles, "5", false);
    let got = findings(&o);
    assert_eq!(json(&o)["simulated"], true);
    for (gpu, (profile, kind, severity)) in cases.iter().enumerate() {
        let on: Vec<_> = got.iter().filter(|f| f.2 == [gpu as u64]).collect();
        assert!(
            on.iter().any(|f| f.0 == *kind && f.1 == *severity),
            "{profile} on GPU {gpu}: {on:?}"
        );
    }
    // Each profile gives its own finding and not another's problem.
    let problems = |gpu: u64| -> Vec<&str> {
        got.iter()
            .filter(|f| f.2 == [gpu] && f.1 == "problem")
            .map(|f| f.0.as_str())
            .collect()
    };
    for (gpu, (profile, kind, severity)) in cases.iter().enumerate() {
        let p = problems(gpu as u64);
        if *severity == "problem" {
            assert_eq!(p, [*kind], "{profile}: {got:?}");
        } else {
            assert!(p.is_empty(), "{profile}: {got:?}");
        }
    }
    // The steady profile is compute-bound and nothing else.
    let steady: Vec<_> = got.iter().filter(|f| f.2 == [7]).collect();
    assert_eq!(steady.len(), 1, "{steady:?}");
    // The power and thermal findings carry the time lost, from the violation counters.
    let v = json(&o);
    for kind in ["power_capped", "thermal_throttled"] {
        let f = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == kind)
            .unwrap();
        let lost = f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "violation_time")
            .unwrap_or_else(|| panic!("{f}"));
        assert!(lost["value"].as_f64().unwrap() > 0.0, "{f}");
    }
}

#[test]
fn a_straggler_among_eight_gpus_is_named_by_its_id() {
    for slow in [2usize, 6] {
        let mut w = vec!["steady"; 8];
        w[slow] = "straggler";
        let o = simulated_workloads(&format!("straggler{slow}"), &w, "2", true);
        let stragglers: Vec<Vec<u64>> = findings(&o)
            .into_iter()
            .filter(|f| f.0 == "straggler")
            .map(|f| f.2)
            .collect();
        assert_eq!(stragglers, [vec![slow as u64]], "{o:?}");
    }
}

#[test]
fn the_workloads_preset_shows_several_findings_at_once_labelled_simulated() {
    let o = support::tool_command("doctor")
        .env("DCGM_SIM_CONFIG", "workloads")
        .args(["--simulate", "--duration", "5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines().next().unwrap().contains("(SIMULATED DATA)"),
        "{out}"
    );
    for line in [
        "PROBLEM  straggler on GPU 3",
        "PROBLEM  input_starved on GPU 4",
        "PROBLEM  pcie_transfer_bound on GPU 5",
        "PROBLEM  launch_bound on GPU 6",
        "WARNING  shared_gpu on GPU 6",
        "WARNING  memory_held_idle on GPU 7",
        "INFO     compute_bound on GPU 0",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }
}

#[test]
fn a_gpu_that_stops_answering_mid_run_is_reported_and_the_rest_judged() {
    // GPU 1 of two stops answering 800 ms in (a simulated `lost` event: every field of it
    // blank from then on, as a GPU fallen off the bus reads).
    let dir = std::env::temp_dir();
    let cfg = dir.join(format!("doctor-lost-{}.json", std::process::id()));
    std::fs::write(
        &cfg,
        r#"{"gpus":[{"workload":"steady"},{"workload":"steady"}],"processes":[],
            "events":[{"at_ms":800,"gpu":1,"kind":"lost","value":1}]}"#,
    )
    .unwrap();
    let o = support::tool_command("doctor")
        .env("DCGM_SIM_CONFIG", &cfg)
        .args(["--simulate", "--duration", "2.5", "--json"])
        .output()
        .unwrap();
    std::fs::remove_file(&cfg).ok();
    assert!(o.status.code().is_some_and(|c| c != 1), "{o:?}");
    let v = json(&o);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("GPU 1 stopped sending readings after"),
        "{notes}"
    );
    assert_eq!(v["gpus"], serde_json::json!([0, 1]), "{v}");
    // GPU 0 was judged for the whole run, GPU 1 up to when it went silent.
    let on0 = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["gpus"] == serde_json::json!([0]) && f["kind"] == "compute_bound");
    assert!(on0, "{v}");
}
