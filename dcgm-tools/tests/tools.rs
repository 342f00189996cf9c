//! The example tools run against the simulator, output checked.

mod support;

use std::process::{Command, Output};

use support::{SilentPort, real_libdcgm, tool};

fn run(name: &str, args: &[&str]) -> Output {
    support::tool_command(name).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn dmon_prints_a_labelled_table_with_na_for_blanks() {
    let o = run(
        "dmon",
        &[
            "--simulate",
            "-e",
            "gpu_temp,power_usage,fan_speed",
            "-c",
            "2",
            "-d",
            "50",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("#Entity"), "{out}");
    assert!(!out.contains("simulated"), "said once, on stderr: {out}");
    assert!(lines[0].contains("gpu_temp") && lines[0].contains("power_usage"));
    let rows: Vec<&&str> = lines.iter().filter(|l| l.starts_with("GPU ")).collect();
    assert_eq!(rows.len(), 16, "2 samples x 8 GPUs:\n{out}");
    for r in rows {
        let cols: Vec<&str> = r.split_whitespace().collect();
        let temp: i64 = cols[2].parse().unwrap();
        assert!((20..100).contains(&temp));
        assert_eq!(cols[4], "N/A", "fan speed is not supported: {r}");
    }
    assert!(String::from_utf8_lossy(&o.stderr).contains("SIMULATED"));
}

#[test]
fn dmon_csv_and_json_and_mig_entities() {
    let o = run(
        "dmon",
        &[
            "--simulate",
            "-e",
            "fb_used,fb_total",
            "-i",
            "7,gi:0,ci:1",
            "-c",
            "1",
            "--csv",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap(),
        "timestamp,entity_group,entity_id,fb_used,fb_total"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().any(|r| r[1] == "GPU_I" && r[2] == "0"));
    assert!(rows.iter().any(|r| r[1] == "GPU_CI" && r[2] == "1"));

    let o = run(
        "dmon",
        &[
            "--simulate",
            "-e",
            "gpu_temp,fan_speed",
            "-i",
            "0",
            "-c",
            "1",
            "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    assert_eq!(v["entity_group"], "GPU");
    assert_eq!(v["simulated"], true);
    assert!(v["gpu_temp"].as_i64().is_some());
    assert!(v["fan_speed"].is_null(), "blank is null, not a number");
}

#[test]
fn dmon_rejects_unknown_fields_with_a_clear_error() {
    let o = run("dmon", &["--simulate", "-e", "not_a_field", "-c", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown field"));
}

#[test]
fn query_gpu_matches_nvidia_smi_csv() {
    let o = run(
        "query",
        &[
            "--simulate",
            "--query-gpu=index,name,utilization.gpu,memory.used,fan.speed",
            "--format=csv,noheader,nounits",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split(", ").collect()).collect();
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[3][0], "3");
    assert!(rows[3][1].contains("H100"));
    let util: i64 = rows[3][2].parse().unwrap();
    assert!((0..=100).contains(&util));
    let mem: i64 = rows[3][3].parse().unwrap();
    assert!(mem > 0);
    assert_eq!(rows[3][4], "[N/A]");

    let o = run(
        "query",
        &[
            "--simulate",
            "--query-gpu=memory.used,power.draw",
            "--format=csv",
            "-i",
            "1",
        ],
    );
    let out = stdout(&o);
    let mut l = out.lines();
    assert_eq!(l.next().unwrap(), "memory.used [MiB], power.draw [W]");
    let row = l.next().unwrap();
    assert!(row.contains(" MiB, ") && row.ends_with(" W"), "{row}");
}

#[test]
fn query_compute_apps_lists_the_simulated_processes() {
    let o = run(
        "query",
        &[
            "--simulate",
            "--query-compute-apps=pid,gpu_index,used_memory",
            "--format=csv,noheader,nounits",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(
        rows.len(),
        8,
        "the training job on 7 GPUs and the server on GPU 7:\n{out}"
    );
    assert!(rows.contains(&"4242, 0, 62000"));
    assert!(rows.contains(&"5151, 7, 9000"));
}

#[test]
fn discovery_shows_the_tree_and_json() {
    let o = run("discovery", &["--simulate"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(out.starts_with("Node: 8 GPU(s)\n"), "{out}");
    assert!(out.contains("GPU instance 0") && out.contains("compute instance"));
    assert!(out.contains("NvSwitches: 0, 1, 2, 3"));
    assert!(out.contains("CPU 1: 56 cores (56-111)"));
    let o = run("discovery", &["--simulate", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["gpus"].as_array().unwrap().len(), 8);
    assert_eq!(v["gpus"][7]["mig_instances"].as_array().unwrap().len(), 3);
}

#[test]
fn topology_prints_the_matrix() {
    let o = run("topology", &["--simulate"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("GPU0") && lines[0].contains("CPU Affinity"));
    assert!(lines[1].starts_with("GPU0") && lines[1].contains(" X ") && lines[1].contains("NV18"));
    assert!(lines[1].ends_with("0-55"));
    assert!(lines[8].ends_with("56-111"));
}

#[test]
fn nvlink_shows_every_link_up() {
    let o = run("nvlink", &["--simulate", "--json"]);
    assert!(o.status.success(), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["gpus"].as_array().unwrap().len(), 8);
    assert_eq!(v["gpus"][0]["links"].as_array().unwrap().len(), 18);
    assert!(
        v["gpus"][0]["links"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l == "Up")
    );
    assert_eq!(v["nvswitches"].as_array().unwrap().len(), 4);
}

#[test]
fn tools_without_a_library_say_what_to_install() {
    let o = Command::new(tool("discovery"))
        .args(["--lib", "/nonexistent/libdcgm.so.4"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/nonexistent/libdcgm.so.4") && err.contains("datacenter-gpu-manager-4-core"),
        "{err}"
    );
}

fn run_with_config(name: &str, args: &[&str], config: &str) -> Output {
    run_with_config_file(name, args, "node.json", config)
}

/// Runs a tool on the node that `config` describes, written to a file `file_name` (`.json` or
/// `.toml`) that `DCGM_SIM_CONFIG` names.
fn run_with_config_file(name: &str, args: &[&str], file_name: &str, config: &str) -> Output {
    // Tests run in parallel: each call its own folder.
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("dcgm-rs-tools-{}-{name}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(file_name);
    std::fs::write(&path, config).unwrap();
    let out = Command::new(tool(name))
        .args(args)
        .env("DCGM_SIM_CONFIG", &path)
        .env_remove("DCGM_LIB_PATH")
        .env_remove("DCGM_SIM_FAULTS")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// Runs a tool on a preset node (`DCGM_SIM_CONFIG=faults`).
fn run_with_preset(name: &str, args: &[&str], preset: &str) -> Output {
    Command::new(tool(name))
        .args(args)
        .env_remove("DCGM_LIB_PATH")
        .env("DCGM_SIM_CONFIG", preset)
        .env_remove("DCGM_SIM_FAULTS")
        .output()
        .unwrap()
}

/// Runs a tool on the default simulated node with `DCGM_SIM_FAULTS` set.
fn run_with_faults(name: &str, args: &[&str], faults: &str) -> Output {
    Command::new(tool(name))
        .args(args)
        .env_remove("DCGM_LIB_PATH")
        .env_remove("DCGM_SIM_CONFIG")
        .env("DCGM_SIM_FAULTS", faults)
        .output()
        .unwrap()
}

const EVENTS: &str = r#"{"events":[
    {"at_ms":150,"gpu":2,"kind":"dbe","value":1},
    {"at_ms":200,"gpu":5,"kind":"xid","value":79},
    {"at_ms":250,"gpu":1,"kind":"thermal","value":95}]}"#;

#[test]
fn health_reports_scripted_incidents_with_severity_and_exit_status() {
    let o = run_with_config("health", &["--simulate", "-c", "4", "-d", "150"], EVENTS);
    assert_eq!(o.status.code(), Some(3), "failures exit with 3: {o:?}");
    let out = stdout(&o);
    assert!(
        out.contains("GPU 2")
            && out.contains("MEM")
            && out.contains("DCGM_FR_VOLATILE_DBE_DETECTED"),
        "{out}"
    );
    assert!(out.contains("GPU 5") && out.contains("PCIE"), "{out}");
    assert!(out.contains("GPU 1") && out.contains("THERMAL"), "{out}");
    assert!(out.trim_end().ends_with("Overall health: FAIL"), "{out}");

    let o = run("health", &["--simulate"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Overall health: PASS"));
}

#[test]
fn the_default_node_is_calm_and_the_faults_preset_is_not() {
    // Both past the last of the preset's incidents (3.5 s), side by side.
    let spawn = |preset: Option<&str>| {
        let mut c = Command::new(tool("health"));
        c.args(["--simulate", "-s", "all", "-c", "2", "-d", "4000", "--json"])
            .env_remove("DCGM_LIB_PATH")
            .env_remove("DCGM_SIM_FAULTS")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        match preset {
            Some(p) => c.env("DCGM_SIM_CONFIG", p),
            None => c.env_remove("DCGM_SIM_CONFIG"),
        };
        c.spawn().unwrap()
    };
    let (calm, named_calm, faults) = (spawn(None), spawn(Some("default")), spawn(Some("faults")));
    for child in [calm, named_calm] {
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        let last = stdout(&o).lines().last().unwrap().to_string();
        let v: serde_json::Value = serde_json::from_str(&last).unwrap();
        assert_eq!(v["overall"], "PASS", "{last}");
    }
    let o = faults.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    let out = stdout(&o);
    // As on libdcgm 4.6.0: the DBE fails GPU 5, the thermal slowdown warns on GPU 1, and
    // GPU 3's XID 13 (an application's fault) is no health incident.
    for code in [
        "DCGM_FR_VOLATILE_DBE_DETECTED",
        "DCGM_FR_CLOCKS_EVENT_THERMAL",
    ] {
        assert!(out.contains(code), "{code}: {out}");
    }
    let last: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(last["results"]["GPU 3"], "PASS", "{out}");
}

#[test]
fn a_bad_simulator_config_is_named_with_its_line_and_key_not_the_driver() {
    let bad = "seed = 7\n\n[[gpus]]\ncolour = \"red\"\n";
    for (name, args) in [
        ("discovery", &["--simulate"][..]),
        ("dmon", &["--simulate", "-c", "1"][..]),
        ("health", &["--simulate", "-c", "1"][..]),
    ] {
        let o = run_with_config_file(name, args, "node.toml", bad);
        assert_eq!(o.status.code(), Some(1), "{name}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        let line = err
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_else(|| panic!("{name}: no error line in {err}"));
        // The file's path (a folder of this call's own) and the place in it.
        let folder =
            std::env::temp_dir().join(format!("dcgm-rs-tools-{}-{name}-", std::process::id()));
        assert!(
            line.contains(&format!("DCGM_SIM_CONFIG={}", folder.display())),
            "{name}: {line}"
        );
        assert!(
            line.contains("node.toml: line 4, column 1"),
            "{name}: {line}"
        );
        assert!(line.contains("unknown field `colour`"), "{name}: {line}");
        assert!(!err.contains("driver"), "{name}: {err}");
        assert!(!err.contains("nv-hostengine"), "{name}: {err}");
    }

    let o = run_with_preset("discovery", &["--simulate"], "no-such-preset");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "DCGM_SIM_CONFIG=no-such-preset: no such file, and not a preset name (default, faults, workloads, burn)"
        ),
        "{err}"
    );
}

#[test]
fn policy_streams_violations_as_json_lines() {
    let o = run_with_config(
        "policy",
        &["--simulate", "--json", "-n", "3", "-t", "10"],
        EVENTS,
    );
    assert!(o.status.success(), "{o:?}");
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["condition"], "DBE");
    assert_eq!(lines[0]["gpu"], 2);
    assert_eq!(lines[1]["detail"]["xid"], 79);
    assert_eq!(lines[2]["detail"]["temperature_c"], 95);
    assert!(lines.iter().all(|l| l["simulated"] == true));
}

#[test]
fn diag_prints_per_test_per_gpu_results() {
    let o = run("diag", &["--simulate", "-r", "1", "-g", "0,1"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("GPU0") && lines[0].contains("GPU1"));
    assert!(
        lines[1].starts_with("software") && lines[1].matches("PASS").count() == 2,
        "{out}"
    );

    let dbe_now = r#"{"events":[{"at_ms":0,"gpu":1,"kind":"dbe","value":2}]}"#;
    let o = run_with_config("diag", &["--simulate", "-r", "2", "--json"], dbe_now);
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["overall"], "FAIL");
    let memory = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "memory")
        .unwrap();
    let gpu1 = memory["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["entity"] == "GPU 1")
        .unwrap();
    assert_eq!(gpu1["result"], "FAIL");
    let names: Vec<&str> = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["software", "pcie", "memory"]);
}

#[test]
fn the_simulator_on_the_library_path_is_not_used_unless_asked_for() {
    let dir = std::env::temp_dir().join(format!("dcgm-rs-soname-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sim = tool("dmon").parent().unwrap().join("libdcgm_sim.so");
    let link = dir.join("libdcgm.so.4");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&sim, &link).unwrap();
    let o = Command::new(tool("discovery"))
        .env("LD_LIBRARY_PATH", &dir)
        .env_remove("DCGM_LIB_PATH")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("only used when asked for"), "{err}");
}

#[test]
fn discovery_shows_na_for_blank_attributes_never_a_sentinel() {
    for json in [false, true] {
        let args: &[&str] = if json {
            &["--simulate", "--json"]
        } else {
            &["--simulate"]
        };
        let o = run_with_faults("discovery", args, "blank_attributes");
        assert!(o.status.success(), "{o:?}");
        let out = stdout(&o);
        dcgm::testing::assert_no_sentinel(&out);
        if json {
            assert!(out.contains("\"power_limit_w\": null"), "{out}");
        } else {
            assert!(out.contains("memory N/A MiB, power limit N/A W"), "{out}");
        }
    }
}

/// Runs a tool with stdout on a pipe, reads one line, closes the pipe (as `| head -1` does) and
/// returns the tool's exit status and stderr once it has noticed. The node is the `faults`
/// preset, so that `policy` has violations to print.
fn close_pipe_after_one_line(name: &str, args: &[&str]) -> (std::process::ExitStatus, String) {
    use std::io::{BufRead, Read};
    let mut child = Command::new(tool(name))
        .args(args)
        .env_remove("DCGM_LIB_PATH")
        .env("DCGM_SIM_CONFIG", "faults")
        .env_remove("DCGM_SIM_FAULTS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(!first.is_empty(), "{name} printed nothing");
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status, err)
}

#[test]
fn every_streaming_tool_exits_quietly_when_its_reader_goes_away() {
    for (name, args) in [
        (
            "query",
            &["--simulate", "--query-gpu=index,name", "-l", "1"][..],
        ),
        ("dmon", &["--simulate", "-d", "100"][..]),
        ("health", &["--simulate", "-c", "20", "-d", "100"][..]),
        (
            "policy",
            &[
                "--simulate",
                "--xid",
                "--dbe",
                "--max-temp",
                "85",
                "-t",
                "20",
            ][..],
        ),
    ] {
        let (status, err) = close_pipe_after_one_line(name, args);
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(!err.contains("Broken pipe"), "{name}: {err}");
        assert_ne!(status.code(), Some(101), "{name}: {err}");
    }
}

#[test]
fn a_bad_host_is_named_with_why_it_could_not_be_reached() {
    for (host, why) in [
        ("127.0.0.1:1", "refused"),
        ("no-such-host.invalid", "does not resolve"),
    ] {
        for name in ["discovery", "dmon"] {
            let mut args = vec!["--simulate", "--host", host];
            if name == "dmon" {
                args.extend(["-c", "1"]);
            }
            let o = run(name, &args);
            assert_eq!(o.status.code(), Some(1), "{name} {host}: {o:?}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains("could not connect") && err.contains(host) && err.contains(why),
                "{name} {host}: {err}"
            );
            assert!(!err.contains("was lost"), "{name} {host}: {err}");
        }
    }
}

#[test]
fn policy_from_the_readme_reports_the_faults_presets_violations_within_seconds() {
    let start = std::time::Instant::now();
    let o = run_with_preset(
        "policy",
        &[
            "--simulate",
            "--xid",
            "--dbe",
            "--max-temp",
            "85",
            "--json",
            "-n",
            "3",
            "-t",
            "8",
        ],
        "faults",
    );
    assert!(o.status.success(), "{o:?}");
    assert!(start.elapsed().as_secs() < 8, "stopped by the timeout");
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let conditions: Vec<&str> = lines
        .iter()
        .map(|l| l["condition"].as_str().unwrap())
        .collect();
    assert_eq!(conditions.len(), 3, "{lines:?}");
    for c in ["XID", "DBE", "Thermal"] {
        assert!(
            conditions.iter().any(|x| x.eq_ignore_ascii_case(c)),
            "{c} in {conditions:?}"
        );
    }
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Listening for"), "status on stderr: {err}");
}

#[test]
fn health_prints_a_line_per_check_with_every_gpus_result() {
    let o = run("health", &["--simulate", "-c", "3", "-d", "100"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let out = stdout(&o);
    let checks: Vec<&str> = out.lines().filter(|l| l.starts_with("Check ")).collect();
    assert_eq!(checks.len(), 3, "{out}");
    assert!(checks[0].starts_with("Check 1/3 of ") && checks[2].starts_with("Check 3/3 of "));
    for c in &checks {
        assert!(
            c.contains("MEM") && c.contains("THERMAL"),
            "systems named: {c}"
        );
        for g in 0..8 {
            assert!(c.contains(&format!("GPU {g} PASS")), "{c}");
        }
    }

    let o = run("health", &["--simulate", "-c", "2", "-d", "100", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let rounds: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rounds.len(), 2, "a JSON line per check even when all pass");
    assert_eq!(rounds[1]["check"], 2);
    assert_eq!(rounds[0]["overall"], "PASS");
    assert_eq!(rounds[0]["results"].as_object().unwrap().len(), 8);
    assert_eq!(rounds[0]["results"]["GPU 3"], "PASS");
    assert!(
        rounds[0]["systems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "MEM")
    );
    assert!(rounds[0]["incidents"].as_array().unwrap().is_empty());
}

#[test]
fn every_tool_lists_its_exit_statuses_in_help() {
    for name in [
        "diag",
        "discovery",
        "dmon",
        "dcgm-exporter",
        "exporter",
        "health",
        "nvlink",
        "policy",
        "query",
        "stat",
        "top",
        "topology",
    ] {
        let o = run(name, &["--help"]);
        assert!(o.status.success(), "{name}: {o:?}");
        let help = stdout(&o);
        assert!(help.contains("Exit status: 0 "), "{name}: {help}");
        assert!(help.contains("1 "), "{name}: {help}");
        if name == "health" || name == "diag" {
            assert!(help.contains("0 pass, 2 warn, 3 fail"), "{name}: {help}");
        }
    }
}

/// What every tool says on stderr, once, when its data comes from the simulator.
const SIMULATED_LINE: &str = "# SIMULATED DATA: reading from dcgm-sim, not from real GPUs";

#[test]
fn every_tool_says_once_on_stderr_that_its_data_is_simulated_and_nowhere_else() {
    // `top` needs a terminal: tests/top.rs checks it there.
    let runs: Vec<(&str, &[&str])> = vec![
        ("diag", &["-r", "1"]),
        ("discovery", &[]),
        ("dmon", &["-c", "2", "-d", "50"]),
        ("exporter", &["--out", "-", "--count", "1"]),
        ("health", &["-c", "2", "-d", "50"]),
        ("nvlink", &[]),
        ("policy", &["-t", "0.3"]),
        ("query", &["--query-gpu=index,name"]),
        ("stat", &[]),
        ("topology", &[]),
    ];
    let children: Vec<_> = runs
        .iter()
        .map(|(name, args)| {
            let child = Command::new(tool(name))
                .arg("--simulate")
                .args(*args)
                .env_remove("DCGM_LIB_PATH")
                .env_remove("DCGM_SIM_CONFIG")
                .env_remove("DCGM_SIM_FAULTS")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (*name, child)
        })
        .collect();
    for (name, child) in children {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{name}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.matches(SIMULATED_LINE).count(), 1, "{name}: {err}");
        assert_eq!(
            err.to_lowercase().matches("simulated").count(),
            1,
            "{name}: {err}"
        );
        // The exporter's text carries `dcgm_exporter_simulated 1`: data, not a label.
        if name != "exporter" {
            let out = stdout(&o).to_lowercase();
            assert!(!out.contains("simulated"), "{name}: {out}");
        }
    }
}

#[test]
fn dmon_titles_every_format_with_the_field_name_as_typed_and_fills_the_units() {
    let fields = "DCGM_FI_DEV_GPU_UTIL,sm_clock,fb_used,DCGM_FI_DEV_GPU_TEMP";
    let o = run("dmon", &["--simulate", "-e", fields, "-i", "0", "-c", "1"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let titles: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        &titles[1..5],
        &[
            "DCGM_FI_DEV_GPU_UTIL",
            "sm_clock",
            "fb_used",
            "DCGM_FI_DEV_GPU_TEMP"
        ],
        "{out}"
    );
    let units: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(units, vec!["ID", "%", "MHz", "MiB", "C"], "{out}");

    let o = run(
        "dmon",
        &["--simulate", "-e", fields, "-i", "0", "-c", "1", "--csv"],
    );
    let out = stdout(&o);
    assert_eq!(
        out.lines().next().unwrap(),
        format!("timestamp,entity_group,entity_id,{fields}")
    );

    let o = run(
        "dmon",
        &["--simulate", "-e", fields, "-i", "0", "-c", "1", "--json"],
    );
    let v: serde_json::Value = serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    for name in fields.split(',') {
        assert!(v[name].as_i64().is_some(), "{name} in {v}");
    }
}

/// Checks that in a drawn tree every `├─` has a later sibling and no `└─` has one.
fn assert_tree_is_well_drawn(out: &str) {
    let lines: Vec<Vec<char>> = out.lines().map(|l| l.chars().collect()).collect();
    let branch_at = |l: &[char]| l.iter().position(|&c| c == '├' || c == '└');
    for (i, l) in lines.iter().enumerate() {
        let Some(col) = branch_at(l) else { continue };
        let next_sibling = lines[i + 1..]
            .iter()
            .filter_map(|n| branch_at(n))
            .take_while(|&c| c >= col)
            .any(|c| c == col);
        let text: String = l.iter().collect();
        if l[col] == '├' {
            assert!(next_sibling, "├─ without a later sibling: {text}\n{out}");
        } else {
            assert!(!next_sibling, "└─ with a later sibling: {text}\n{out}");
        }
    }
}

#[test]
fn discovery_draws_the_last_sibling_only_with_a_corner() {
    let o = run("discovery", &["--simulate"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert_tree_is_well_drawn(&out);
    assert!(
        out.contains("├─ CPU 0:") && out.contains("└─ CPU 1:"),
        "{out}"
    );
    assert!(out.contains("└─ GPU instance"), "{out}");
}

#[test]
fn query_names_the_simulated_processes() {
    let o = run(
        "query",
        &[
            "--simulate",
            "--query-compute-apps=pid,process_name",
            "--format=csv,noheader",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(!out.contains("[Not Found]"), "{out}");
    assert!(out.lines().any(|l| l == "4242, python3 train.py"), "{out}");
    assert!(out.lines().any(|l| l == "5151, tritonserver"), "{out}");
}

#[test]
fn a_simulated_a100_reports_a100_clocks() {
    let o = run_with_config(
        "query",
        &[
            "--simulate",
            "--query-gpu=name,clocks.max.sm,clocks.max.mem,clocks.mem",
            "--format=csv,noheader,nounits",
        ],
        r#"{"gpus":[{"model":"NVIDIA A100-SXM4-80GB"}]}"#,
    );
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&o).trim(), "NVIDIA A100-SXM4-80GB, 1410, 1593, 1593");
}

fn run_env(name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(tool(name));
    cmd.args(args)
        .env_remove("DCGM_LIB_PATH")
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        .env_remove("NO_COLOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn stat_prints_a_header_and_one_line_per_gpu_with_its_processes() {
    let o = run("stat", &["--simulate", "-P"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 9, "{out}");
    assert!(lines[0].starts_with("sim-node-0 "), "{}", lines[0]);
    assert!(lines[0].ends_with("  570.133.20"), "{}", lines[0]);
    for (i, l) in lines[1..].iter().enumerate() {
        assert!(
            l.starts_with(&format!("[{i}] NVIDIA H100 80GB HBM3 |")),
            "{l}"
        );
        let cols: Vec<&str> = l.split(" | ").collect();
        assert_eq!(cols.len(), 4, "{l}");
        assert!(
            cols[1].contains("°C,") && cols[1].ends_with(" / 700 W"),
            "{l}"
        );
        assert!(cols[2].ends_with(" / 81559 MB"), "{l}");
    }
    assert!(lines[1].ends_with(" | mlops(62000M)"), "{}", lines[1]);
    assert!(lines[8].ends_with(" | triton(9000M)"), "{}", lines[8]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("SIMULATED"));
}

#[test]
fn stat_colours_only_when_asked_and_never_with_no_color() {
    let forced = [("CLICOLOR_FORCE", "1")];
    let o = run_env("stat", &["--simulate"], &forced);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("\x1b["), "CLICOLOR_FORCE colours");
    let o = run_env("stat", &["--simulate", "--no-color"], &forced);
    assert!(o.status.success(), "{o:?}");
    assert!(!stdout(&o).contains('\x1b'), "{}", stdout(&o));
    let o = run_env("stat", &["--simulate"], &[]);
    assert!(!stdout(&o).contains('\x1b'), "no colours into a pipe");
}

#[test]
fn stat_watch_refreshes_until_its_reader_goes_away() {
    let (status, err) = close_pipe_after_one_line("stat", &["--simulate", "--watch", "0.2"]);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
}

#[test]
fn blank_struct_answers_show_as_na_in_discovery_and_empty_labels_in_the_exporter() {
    let with_fault = |name: &str, args: &[&str]| run_with_faults(name, args, "blank_structs");
    let o = with_fault("discovery", &["--simulate"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    dcgm::testing::assert_no_sentinel(&out);
    assert!(out.contains("(NVML id N/A, N/A slice(s))"), "{out}");
    let o = with_fault("discovery", &["--simulate", "--json"]);
    dcgm::testing::assert_no_sentinel(&stdout(&o));
    let o = with_fault("dcgm-exporter", &["--simulate", "--once"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    dcgm::testing::assert_no_sentinel(&out);
    assert!(out.contains("GPU_I_ID=\"\""), "{out}");
}

#[test]
fn the_textfile_collector_example_writes_a_prom_file() {
    let dir = std::env::temp_dir().join(format!("dcgm-rs-textfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("gpu.prom");
    let o = run(
        "exporter",
        &[
            "--simulate",
            "--count",
            "2",
            "--interval",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    // One series per counter and entity (GPUs, and the instances of MIG GPUs; no XID series
    // before the first XID), labelled as simulated, and no temporary file left.
    let temps = text.matches("\nDCGM_FI_DEV_GPU_TEMP{gpu=").count();
    assert!(temps >= 8, "{text}");
    assert_eq!(
        text.matches("\nDCGM_FI_DEV_FB_USED{gpu=").count(),
        temps,
        "{text}"
    );
    assert!(text.contains("simulated"), "{text}");
    assert!(!dir.join("gpu.prom.tmp").exists());
    let _ = std::fs::remove_dir_all(&dir);
    let bad = run("exporter", &["-d", "x:1", "--simulate"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// Waits at most `limit` for `child`; a child still running then is killed and `None`.
fn wait_at_most(
    mut child: std::process::Child,
    limit: std::time::Duration,
) -> Option<std::process::Output> {
    let t0 = std::time::Instant::now();
    while t0.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn every_host_tool_gives_up_on_a_silent_host_engine_and_names_it() {
    // libdcgm's own connect timeout covers only the TCP connect: against a port that accepts
    // and never answers, its handshake waits for minutes. The simulator answers `--host`
    // in-process, so only the real library shows the hang.
    let Some(lib) = real_libdcgm() else {
        return;
    };
    let port = SilentPort::open();
    let host = port.address.as_str();
    let lib = lib.to_str().unwrap();
    let tools: [(&str, &[&str]); 9] = [
        ("dmon", &["-c", "1"]),
        ("query", &["--query-gpu=index", "--format=csv"]),
        ("stat", &[]),
        ("health", &["-c", "1"]),
        ("discovery", &[]),
        ("diag", &["-r", "1"]),
        ("policy", &["--xid", "-t", "1"]),
        ("topology", &[]),
        ("nvlink", &[]),
    ];
    // Every tool at once (each waits on its own deadline), plus one on the default 5 s.
    let mut runs: Vec<(String, std::process::Child)> = Vec::new();
    for (name, extra) in tools {
        let mut cmd = Command::new(tool(name));
        cmd.args(["--lib", lib, "--host", host, "--connect-timeout", "1"])
            .args(extra);
        runs.push((format!("{name} --connect-timeout 1"), spawn_quiet(cmd)));
    }
    let mut cmd = Command::new(tool("query"));
    cmd.args([
        "--lib",
        lib,
        "--host",
        host,
        "--query-gpu=index",
        "--format=csv",
    ]);
    runs.push(("query (default timeout)".into(), spawn_quiet(cmd)));
    for (what, child) in runs {
        let o = wait_at_most(child, std::time::Duration::from_secs(30))
            .unwrap_or_else(|| panic!("{what}: still waiting on the silent {host} after 30 s"));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{what}: {err}");
        assert!(
            err.contains(&format!("no answer from the host engine at {host}"))
                && err.contains("--connect-timeout"),
            "{what}: {err}"
        );
    }
}

fn spawn_quiet(mut cmd: Command) -> std::process::Child {
    cmd.env_remove("DCGM_LIB_PATH")
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        // No driver here: the real library uses its injection NVML.
        .env("NVML_INJECTION_MODE", "True")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn the_textfile_collector_writes_to_stdout_for_out_dash() {
    let dir = std::env::temp_dir().join(format!("dcgm-rs-textfile-dash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = Command::new(tool("exporter"))
        .args(["--simulate", "--count", "1", "--out", "-"])
        .current_dir(&dir)
        .env_remove("DCGM_LIB_PATH")
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let text = stdout(&o);
    assert!(
        text.matches("\nDCGM_FI_DEV_GPU_TEMP{gpu=").count() >= 8,
        "{text}"
    );
    assert!(err.contains("to standard output"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert!(left.is_empty(), "no file is written: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Three processes on one GPU (the `workloads` preset's GPU 6 has two; a config adds a third):
/// libdcgm stores them at consecutive microseconds, and every tool lists all of them.
#[test]
fn every_process_of_a_shared_gpu_is_listed_by_query_and_stat() {
    let config = r#"{"gpus":[{},{}],"processes":[
        {"pid":7001,"name":"trainer-a","gpus":[1],"memory_mib":1000},
        {"pid":7002,"name":"trainer-b","gpus":[1],"memory_mib":2000},
        {"pid":7003,"name":"parent","gpus":[1],"memory_mib":300},
        {"pid":7004,"name":"other","gpus":[0],"memory_mib":400}]}"#;
    let o = run_with_config(
        "query",
        &[
            "--simulate",
            "--query-compute-apps=pid,gpu_index,used_memory",
            "--format=csv,noheader,nounits",
        ],
        config,
    );
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let mut rows: Vec<&str> = out.lines().collect();
    rows.sort_unstable();
    assert_eq!(
        rows,
        [
            "7001, 1, 1000",
            "7002, 1, 2000",
            "7003, 1, 300",
            "7004, 0, 400"
        ],
        "{out}"
    );
    let o = run_with_config("stat", &["--simulate", "-p", "--no-color"], config);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    for pid in ["7001", "7002", "7003", "7004"] {
        assert!(out.contains(pid), "stat -p lacks {pid}:\n{out}");
    }
}
