//! The tools' automatic choice of engine: a local nv-hostengine when one answers (the real one
//! from `../shared/realdcgm-4.6.0`, on a port of its own named by `DCGM_HOSTENGINE_ADDRESS`),
//! else DCGM's embedded engine; `--embedded` and `--simulate` never look for one.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::{SilentPort, real_libdcgm};

fn nvml_capture() -> PathBuf {
    dcgm::testing::shared_dir().join("fixtures/nvml-capture-h200.yaml")
}

/// A port on loopback where nothing listens (a connect is refused).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The real nv-hostengine replaying the H200 capture on a port of its own, killed when dropped.
struct HostEngine {
    child: Child,
    address: String,
}

impl HostEngine {
    fn start(lib: &Path, log: &Path) -> HostEngine {
        let bin = lib.parent().unwrap().join("../bin/nv-hostengine");
        let port = closed_port();
        let child = Command::new(bin)
            .args(["-n", "-b", "127.0.0.1", "-p", &port.to_string(), "-f"])
            .arg(log)
            .env("NVML_INJECTION_MODE", "True")
            .env("NVML_YAML_FILE", nvml_capture())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nv-hostengine");
        let t0 = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "nv-hostengine does not listen on {port} after 30 s (log: {})",
                log.display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HostEngine {
            child,
            address: format!("127.0.0.1:{port}"),
        }
    }
}

impl Drop for HostEngine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a tool with `DCGM_HOSTENGINE_ADDRESS` set to `look_at`. `nvml` gives it the injection
/// NVML (what an embedded engine needs here, without a driver); without it only a host engine
/// can answer, so a tool that succeeds has used one.
fn run(name: &str, args: &[&str], look_at: &str, nvml: bool) -> Output {
    let mut cmd = support::tool_command(name);
    cmd.args(args)
        .env("DCGM_HOSTENGINE_ADDRESS", look_at)
        .env_remove("NVML_INJECTION_MODE")
        .env_remove("NVML_YAML_FILE")
        .stdin(Stdio::null());
    if nvml {
        cmd.env("NVML_INJECTION_MODE", "True")
            .env("NVML_YAML_FILE", nvml_capture());
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scratch(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dcgm-rs-auto-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const QUERY: [&str; 2] = ["--query-gpu=index,name", "--format=csv,noheader"];

#[test]
fn a_running_nv_hostengine_is_found_used_and_named_by_verbose() {
    let Some(lib) = real_libdcgm() else {
        return;
    };
    let dir = scratch("found");
    let engine = HostEngine::start(&lib, &dir.join("nv-hostengine.log"));
    let lib = lib.to_str().unwrap();
    // A refused address first: the next one in the list is tried.
    let look_at = format!("127.0.0.1:{},{}", closed_port(), engine.address);
    let mut args = vec!["--lib", lib, "--verbose"];
    args.extend(QUERY);
    let o = run("query", &args, &look_at, false);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!("using the nv-hostengine at {}", engine.address)),
        "{err}"
    );
    assert!(!err.contains("embedded"), "{err}");
    assert_eq!(text(&o.stdout), "0, NVIDIA H200\n");

    // -v is --verbose where the tool has no -v of its own; dmon reads through dcgm-reader.
    let o = run(
        "dmon",
        &["--lib", lib, "-v", "-e", "gpu_temp", "-c", "1"],
        &look_at,
        false,
    );
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!("using the nv-hostengine at {}", engine.address)),
        "{err}"
    );
    assert_eq!(
        text(&o.stdout)
            .lines()
            .filter(|l| l.starts_with("GPU 0"))
            .count(),
        1,
        "{}",
        text(&o.stdout)
    );

    // Without -v or --verbose the tool says nothing about it.
    let o = run(
        "query",
        &["--lib", lib, QUERY[0], QUERY[1]],
        &look_at,
        false,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "");
    drop(engine);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The five values under a sample section's heading of a `query -q` report.
fn sample_values(report: &str, heading: &str) -> Vec<String> {
    let lines: Vec<&str> = report.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == format!("    {heading}"))
        .unwrap_or_else(|| panic!("no {heading:?} in {report}"));
    lines[at + 1..at + 6]
        .iter()
        .map(|l| l.split_once(": ").map_or("", |(_, v)| v).to_string())
        .collect()
}

#[test]
fn query_q_sample_sections_read_the_samples_a_host_engine_keeps() {
    let Some(lib) = real_libdcgm() else {
        return;
    };
    let dir = scratch("samples");
    let engine = HostEngine::start(&lib, &dir.join("nv-hostengine.log"));
    let lib = lib.to_str().unwrap();
    // Another client watches the power and the clocks every 100 ms (as an exporter would): the
    // engine keeps their samples, and the report's window finds them.
    let mut watcher = support::tool_command("dmon");
    watcher
        .args(["--lib", lib, "-s", "pc", "-d", "100", "-c", "40"])
        .env("DCGM_HOSTENGINE_ADDRESS", &engine.address)
        .env_remove("NVML_INJECTION_MODE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut watcher = watcher.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let o = run(
        "query",
        &["--lib", lib, "-q", "-d", "POWER,CLOCK"],
        &engine.address,
        false,
    );
    let _ = watcher.kill();
    let _ = watcher.wait();
    let report = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for (heading, unit) in [
        ("Power Samples", " W"),
        ("SM Clock Samples", " MHz"),
        ("Memory Clock Samples", " MHz"),
    ] {
        let v = sample_values(&report, heading);
        let secs: f64 = v[0].strip_suffix(" sec").unwrap().parse().unwrap();
        let n: usize = v[1].parse().unwrap();
        assert!(n >= 3 && secs > 0.0, "{heading}: {v:?}\n{report}");
        assert!(v[2..].iter().all(|x| x.ends_with(unit)), "{v:?}");
    }
    // The capture's memory clock, every sample of it.
    assert_eq!(
        sample_values(&report, "Memory Clock Samples")[2..],
        ["3201 MHz", "3201 MHz", "3201 MHz"]
    );
    drop(engine);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn with_no_engine_answering_the_embedded_engine_starts_and_verbose_says_why() {
    let Some(lib) = real_libdcgm() else {
        return;
    };
    let dir = scratch("none");
    let port = closed_port();
    let socket = dir.join("no-engine.sock");
    let look_at = format!("127.0.0.1:{port},unix://{}", socket.display());
    let mut args = vec!["--lib", lib.to_str().unwrap(), "--verbose"];
    args.extend(QUERY);
    let o = run("query", &args, &look_at, true);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    let said = err
        .lines()
        .find(|l| l.starts_with("no nv-hostengine answered at "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        said.contains(&format!("127.0.0.1:{port}: Connection refused"))
            && said.contains(&format!("unix://{}: No such file", socket.display()))
            && said.contains(": starting DCGM's embedded engine (looked for "),
        "{said}"
    );
    assert_eq!(text(&o.stdout), "0, NVIDIA H200\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_listener_that_never_answers_costs_the_probe_deadline_then_the_engine_is_embedded() {
    let Some(lib) = real_libdcgm() else {
        return;
    };
    let port = SilentPort::open();
    let mut args = vec!["--lib", lib.to_str().unwrap(), "--verbose"];
    args.extend(QUERY);
    let t0 = Instant::now();
    let o = run("query", &args, &port.address, true);
    let took = t0.elapsed();
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "no nv-hostengine answered at {}: accepts connections but no DCGM answer came \
             within the probe's 300 ms",
            port.address
        )),
        "{err}"
    );
    assert_eq!(text(&o.stdout), "0, NVIDIA H200\n");
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert_eq!(
        port.accepted(),
        2,
        "the probe's TCP connect, then libdcgm's"
    );
}

#[test]
fn embedded_and_simulate_never_look_for_a_host_engine() {
    // The simulator stands in for the library: what is checked is that nothing connects.
    let sim = dcgm::testing::simulator_path();
    let sim = sim.to_str().unwrap();
    let port = SilentPort::open();
    for args in [
        &["--lib", sim, "--embedded", "--verbose"][..],
        &["--simulate", "--verbose"][..],
    ] {
        let mut args = args.to_vec();
        args.extend(QUERY);
        let o = run("query", &args, &port.address, false);
        let err = text(&o.stderr);
        assert!(o.status.success(), "{args:?}: {err}");
        assert!(
            err.contains("embedded engine (--embedded)")
                || err.contains("(--simulate never looks for an nv-hostengine)"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("using the nv-hostengine"), "{args:?}: {err}");
    }
    assert_eq!(port.accepted(), 0, "no probe");
    // The automatic choice, for contrast: the probe's TCP connect, then the simulator's
    // refusal of an address other than its own, which the `dcgm` crate looks at once more to
    // say why.
    let o = run(
        "query",
        &["--lib", sim, QUERY[0], QUERY[1]],
        &port.address,
        false,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(port.accepted(), 2, "the automatic choice probes");
}

#[test]
fn embedded_and_host_cannot_be_given_together() {
    let o = run(
        "query",
        &["--embedded", "--host", "localhost", QUERY[0], QUERY[1]],
        "",
        false,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("cannot be used with"));
}

#[test]
fn stat_keeps_gpustats_v_for_its_version_and_takes_verbose() {
    let o = run("stat", &["-v"], "", false);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).starts_with("stat "), "{}", text(&o.stdout));
    let o = run("stat", &["--simulate", "--verbose"], "", false);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("starting dcgm-sim's embedded engine"),
        "{}",
        text(&o.stderr)
    );
}
