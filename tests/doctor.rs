//! `doctor` end to end: the live path on the simulator, and replays of recordings, through
//! the built tool (`cargo build --example doctor` first).

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
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let yaml = root.join("../shared/fixtures/nvml-capture-h200.yaml");
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
