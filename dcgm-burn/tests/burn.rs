//! `dcgm-burn` end to end through the built binary (`CARGO_BIN_EXE_dcgm-burn`): on dcgm-sim
//! with eight H200s under the `burn` profile, one of them weak in each way (a stuck clock, a
//! hot card, ECC errors under load), and without a GPU on this machine.

use std::path::PathBuf;
use std::process::{Command, Output};

/// The binary, without the variables that would pick another library or node.
fn burn() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dcgm-burn"));
    c.env_remove("DCGM_LIB_PATH")
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        .env_remove("CUDA_VISIBLE_DEVICES");
    c
}

/// A node of eight H200s running `burn`, GPU `weak` running `workload` instead.
fn node(name: &str, weak: Option<(usize, &str)>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("burn-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut toml = String::from("hostengines = []\n");
    for i in 0..8 {
        let w = match weak {
            Some((g, w)) if g == i => w,
            _ => "burn",
        };
        toml.push_str(&format!(
            "[[gpus]]\nmodel = \"NVIDIA H200\"\nmemory_mib = 143771\nworkload = \"{w}\"\n"
        ));
    }
    let p = dir.join("node.toml");
    std::fs::write(&p, toml).unwrap();
    p
}

/// `dcgm-burn --simulate --json FILE` on `node` for `secs`: its output and the report.
fn simulate(node: &PathBuf, secs: &str, extra: &[&str]) -> (Output, serde_json::Value) {
    let json = node.with_file_name("report.json");
    let o = burn()
        .env("DCGM_SIM_CONFIG", node)
        .args(["--simulate", "--duration", secs, "-d", "100", "--json"])
        .arg(&json)
        .args(extra)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no report ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o, serde_json::from_str(&text).unwrap())
}

fn gpu(report: &serde_json::Value, g: u64) -> &serde_json::Value {
    report["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["gpu"] == g)
        .unwrap()
}

/// The finding of `kind` on GPU `g`.
fn finding<'a>(report: &'a serde_json::Value, g: u64, kind: &str) -> &'a serde_json::Value {
    gpu(report, g)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} on GPU {g}: {}", gpu(report, g)))
}

fn evidence(f: &serde_json::Value, name: &str) -> f64 {
    f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_f64())
        .unwrap_or_else(|| panic!("no {name} in {f}"))
}

/// The GPUs other than `g` that have a finding above info.
fn others_flagged(report: &serde_json::Value, g: u64) -> Vec<u64> {
    report["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["gpu"] != g && v["status"] != "healthy")
        .map(|v| v["gpu"].as_u64().unwrap())
        .collect()
}

#[test]
fn eight_healthy_gpus_pass_with_exit_0_and_everything_is_labelled_simulated() {
    let (o, r) = simulate(&node("healthy", None), "2", &[]);
    assert_eq!(o.status.code(), Some(0), "{r}");
    assert_eq!(r["simulated"], true);
    assert_eq!(r["status"], "healthy");
    assert_eq!(r["gpus"].as_array().unwrap().len(), 8);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("SIMULATED DATA"), "{stdout}");
    assert!(stdout.contains("TFLOPS") && stdout.contains("(simulated)"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("# SIMULATED DATA"));
    for g in r["gpus"].as_array().unwrap() {
        // bf16 on an H200 at full clock, modelled: 70 % of the 989 TFLOPS peak.
        let t = g["tflops"].as_f64().unwrap();
        assert!((650.0..720.0).contains(&t), "{g}");
        assert!(g["peak_temp_c"].as_f64().unwrap() > 30.0);
        assert_eq!(g["compute"]["mismatches"], 0);
        assert!(!g["tflops_series"].as_array().unwrap().is_empty());
    }
}

#[test]
fn a_stuck_clock_is_named_slower_than_its_siblings_with_the_clock_as_evidence() {
    let (o, r) = simulate(&node("stuck", Some((2, "burn_stuck_clock"))), "2", &[]);
    assert_eq!(o.status.code(), Some(3), "{r}");
    let f = finding(&r, 2, "slower_than_siblings");
    assert_eq!(f["severity"], "problem");
    // Stuck at a fifth of 1980 MHz: a fifth of the TFLOPS.
    assert!((evidence(f, "below_median") - 0.8).abs() < 0.03, "{f}");
    assert!((evidence(f, "sm_clock") - 396.0).abs() < 2.0);
    assert!((evidence(f, "sm_clock_median") - 1980.0).abs() < 2.0);
    assert_eq!(evidence(f, "thermal_reason_share"), 0.0);
    let why = f["explanation"].as_str().unwrap();
    assert!(why.contains("no throttle reason"), "{why}");
    assert_eq!(gpu(&r, 2)["status"], "failure");
    assert!(others_flagged(&r, 2).is_empty(), "{r}");
}

#[test]
fn a_hot_card_is_named_thermally_throttled_and_slow_with_its_temperature() {
    let (o, r) = simulate(&node("hot", Some((5, "burn_hot"))), "2", &[]);
    assert_eq!(o.status.code(), Some(3), "{r}");
    let slow = finding(&r, 5, "slower_than_siblings");
    assert_eq!(evidence(slow, "thermal_reason_share"), 1.0);
    assert!(
        slow["explanation"]
            .as_str()
            .unwrap()
            .contains("thermally throttled")
    );
    let t = finding(&r, 5, "thermal_throttled");
    assert!(evidence(t, "clock_loss") >= 0.25, "{t}");
    let g = gpu(&r, 5);
    assert!(g["peak_temp_c"].as_f64().unwrap() >= 89.0, "{g}");
    assert!(g["thermal_throttled_s"].as_f64().unwrap() > 1.0);
    assert!(others_flagged(&r, 5).is_empty(), "{r}");
}

#[test]
fn ecc_errors_under_load_are_a_warning_with_their_count_and_exit_2() {
    let (o, r) = simulate(&node("ecc", Some((7, "burn_ecc"))), "2", &[]);
    assert_eq!(o.status.code(), Some(2), "{r}");
    let f = finding(&r, 7, "hardware_errors");
    assert_eq!(f["severity"], "warning");
    // Two a second for about two seconds.
    assert!(evidence(f, "ecc_sbe_new") >= 2.0, "{f}");
    assert!(gpu(&r, 7)["ecc_sbe"].as_f64().unwrap() >= 2.0);
    // Its TFLOPS are its siblings': ECC is its only fault.
    assert!(
        gpu(&r, 7)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["kind"] != "slower_than_siblings")
    );
    assert!(others_flagged(&r, 7).is_empty(), "{r}");
}

#[test]
fn the_html_report_has_a_tflops_chart_per_gpu_and_the_verdict() {
    let n = node("html", Some((1, "burn_stuck_clock")));
    let html = n.with_file_name("report.html");
    let (_, r) = simulate(
        &n,
        "1.5",
        &["--html", html.to_str().unwrap(), "-i", "0,1,2"],
    );
    assert_eq!(r["gpus"].as_array().unwrap().len(), 3, "-i chose three");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(page.matches("TFLOPS (modelled, SIMULATED)").count(), 3);
    assert!(page.contains("<caption>Verdict</caption>"));
    assert!(page.contains("slower_than_siblings"));
    assert!(page.contains("Power (W)") && page.contains("Temperature"));
    // The doctor's kinds burn does not judge by are not listed as "not judged".
    assert!(!page.contains("shared_gpu"), "{page}");
    assert!(!page.contains("<script"));
}

#[test]
fn without_a_gpu_it_says_so_in_one_line_and_exits_5() {
    let o = burn().args(["--duration", "1"]).output().unwrap();
    if o.status.code() != Some(5) && std::path::Path::new("/dev/nvidiactl").exists() {
        dcgm::testing::skip("this machine has an NVIDIA driver: the no-GPU path is not taken");
        return;
    }
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no NVIDIA driver") && err.contains("--simulate"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn bad_input_gets_a_clear_error() {
    let o = burn()
        .args(["--simulate", "--duration", "1", "--corrupt-result", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs real GPUs"));
    let o = burn().args(["--duration", "2d"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "clap's status for a bad flag");
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown unit"));
    let o = burn()
        .args(["--simulate", "--duration", "1", "-i", "42"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("GPU 42 is not one DCGM knows"));
}

#[test]
fn ctrl_c_stops_the_burn_early_and_what_was_sampled_is_judged() {
    let n = node("sigint", None);
    let mut child = burn()
        .env("DCGM_SIM_CONFIG", &n)
        .args(["--simulate", "--duration", "60", "-d", "100"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first live lines, then interrupt.
    let mut out = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let t0 = std::time::Instant::now();
    while !String::from_utf8_lossy(&seen).contains("TFLOPS") {
        use std::io::Read;
        let k = out.read(&mut buf).unwrap();
        assert!(k > 0 && t0.elapsed().as_secs() < 30, "no live line");
        seen.extend_from_slice(&buf[..k]);
    }
    // SAFETY: kill(2) with a pid this test spawned and a valid signal.
    assert_eq!(unsafe { libc_kill(child.id() as i32, 2) }, 0);
    let mut rest = String::new();
    use std::io::Read;
    out.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(t0.elapsed().as_secs() < 30, "did not stop early");
    assert_eq!(status.code(), Some(0), "{rest}");
    assert!(rest.contains("note: stopped after"), "{rest}");
    assert!(rest.contains("verdict: every GPU healthy"), "{rest}");
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}
