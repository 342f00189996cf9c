//! The example tools run against the simulator, output checked.

use std::path::PathBuf;
use std::process::{Command, Output};

fn tool(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let p = dir.join("examples").join(name);
    assert!(
        p.exists(),
        "{} not built (cargo test builds the examples)",
        p.display()
    );
    p
}

fn run(name: &str, args: &[&str]) -> Output {
    Command::new(tool(name))
        .args(args)
        .env_remove("DCGM_LIB_PATH")
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        .output()
        .unwrap()
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
    assert!(
        lines[0].starts_with("#Entity") && lines[0].contains("(simulated)"),
        "{out}"
    );
    assert!(lines[0].contains("TMPTR") && lines[0].contains("POWER"));
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
        "timestamp,entity_group,entity_id,DCGM_FI_DEV_FB_USED,DCGM_FI_DEV_FB_TOTAL"
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
    assert!(out.starts_with("Node: 8 GPU(s) (SIMULATED)"));
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
    let dir = std::env::temp_dir().join(format!("dcgm-rs-tools-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("node.json");
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
    assert!(out.trim_end().ends_with("Overall health: FAIL (SIMULATED)"));

    let o = run("health", &["--simulate"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Overall health: PASS"));
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
    let sim = tool("dmon")
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("libdcgm_sim.so");
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
        let mut cmd = Command::new(tool("discovery"));
        cmd.arg("--simulate")
            .env_remove("DCGM_LIB_PATH")
            .env_remove("DCGM_SIM_CONFIG")
            .env("DCGM_SIM_FAULTS", "blank_attributes");
        if json {
            cmd.arg("--json");
        }
        let o = cmd.output().unwrap();
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
