//! Every tool in `examples/` against the library under test: exit 0, no blank sentinel in the
//! output, N/A where the library has no value.

use std::process::{Command, Output};

use dcgm::testing::assert_no_sentinel;

use crate::support::tool;
use crate::target::{Kind, Target};
use crate::{Case, case};

pub fn cases() -> Vec<Case> {
    vec![
        case("tool_discovery", |t| {
            ok(t, "discovery", &[]);
        }),
        case("tool_discovery_json", |t| {
            ok(t, "discovery", &["--json"]);
        }),
        case("tool_query", |t| {
            let out = ok(
                t,
                "query",
                &[
                    "--query-gpu=index,name,uuid,temperature.gpu,power.draw,memory.total",
                    "--format=csv",
                ],
            );
            assert!(out.lines().count() >= 2, "{out}");
        }),
        case("tool_dmon", |t| {
            let out = ok(
                t,
                "dmon",
                &["-e", "gpu_temp,power_usage,fb_used", "-c", "2", "-d", "200"],
            );
            assert!(out.lines().any(|l| l.starts_with("GPU ")), "{out}");
        }),
        case("tool_dmon_profiling_first_row", |t| {
            // A profiling field is blank on its first sample after a watch (and always on the
            // real build here, which has no profiling module): the row says N/A, never a
            // number it does not have.
            let out = ok(
                t,
                "dmon",
                &[
                    "-e",
                    "gpu_temp,DCGM_FI_PROF_SM_ACTIVE",
                    "-c",
                    "1",
                    "-d",
                    "100",
                ],
            );
            let row = out.lines().find(|l| l.starts_with("GPU ")).expect("a row");
            let prof = row.split_whitespace().nth(3).unwrap();
            match t.kind {
                Kind::Real => assert_eq!(prof, "N/A", "{out}"),
                Kind::Sim => assert!(prof == "N/A" || prof.parse::<f64>().is_ok(), "{out}"),
            }
        }),
        case("tool_diag_runs_or_names_what_is_missing", |t| {
            let o = run_with(t, "diag", &["-r", "1"], true);
            let err = String::from_utf8_lossy(&o.stderr);
            if o.status.code() == Some(NOT_IN_RELEASE) {
                // Every release from 3.3.9 has diagnostics: none of the targets should say
                // this; if one does, it must be older than the oldest the SDK decodes.
                assert!(t.older_than("3.3.9"), "{o:?}");
                not_in_release(t, "diag", &o);
            }
            match t.kind {
                Kind::Sim => assert!(o.status.success(), "{o:?}"),
                // The real build has no nvvs: a typed error that says what to install.
                Kind::Real => {
                    assert_eq!(o.status.code(), Some(1), "{o:?}");
                    assert!(err.contains("DCGM_ST_NVVS_BINARY_NOT_FOUND"), "{err}");
                    assert!(err.contains("datacenter-gpu-manager-4"), "{err}");
                }
            }
            assert!(!err.contains("panicked"), "{err}");
            assert_no_sentinel(&String::from_utf8_lossy(&o.stdout));
        }),
        case("tool_exporter_once", |t| {
            let o = Command::new(tool("dcgm-exporter"))
                .arg("--once")
                .env("DCGM_LIB_PATH", &t.lib)
                .output()
                .unwrap();
            assert!(o.status.success(), "{o:?}");
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(
                out.lines()
                    .any(|l| l.starts_with("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"")),
                "{out}"
            );
            assert_no_sentinel(&out);
        }),
        case("tool_health", |t| {
            ok(t, "health", &["-s", "all", "-c", "1"]);
        }),
        case("tool_stat", |t| {
            let out = ok(t, "stat", &[]);
            assert!(out.lines().any(|l| l.starts_with("[0] ")), "{out}");
            let json = ok(t, "stat", &["--json"]);
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert!(!v["gpus"].as_array().unwrap().is_empty(), "{json}");
        }),
        case("tool_topology", |t| {
            let out = ok(t, "topology", &[]);
            assert!(out.contains("GPU0"), "{out}");
        }),
        case("tool_nvlink", |t| {
            ok(t, "nvlink", &[]);
        }),
        case("tool_policy_runs_and_stops", |t| {
            ok(
                t,
                "policy",
                &["--xid", "--dbe", "--max-temp", "85", "-t", "1"],
            );
        }),
        Case {
            name: "tool_discovery_on_the_default_injected_gpu",
            run: |t| {
                // DCGM's default injected GPU leaves most attributes blank: the output says N/A.
                let o = run_with(t, "discovery", &[], false);
                assert!(o.status.success(), "{o:?}");
                let out = String::from_utf8_lossy(&o.stdout);
                assert_no_sentinel(&out);
                assert!(out.contains("N/A"), "{out}");
            },
            not_on: Some((Kind::Sim, "the default injected GPU is the real library's")),
        },
        Case {
            name: "tools_on_the_default_injected_gpu",
            run: |t| {
                // Every tool on a GPU that leaves most answers blank: it runs to its end and
                // prints no sentinel. `health` may report the GPU unhealthy (exit 3).
                let runs: [(&str, &[&str]); 7] = [
                    (
                        "query",
                        &[
                            "--query-gpu=index,name,temperature.gpu,power.draw,memory.total",
                            "--format=csv",
                        ],
                    ),
                    ("dmon", &["-c", "1", "-d", "100"]),
                    ("health", &["-s", "all", "-c", "1"]),
                    ("topology", &[]),
                    ("nvlink", &[]),
                    ("discovery", &["--json"]),
                    ("stat", &["--json"]),
                ];
                for (name, args) in runs {
                    let o = run_with(t, name, args, false);
                    let code = o.status.code();
                    // On 3.3.9 and 4.1.1 the default injected GPU's power is unreadable and
                    // `health` warns (exit 2, measured): a warning it must name.
                    let warns = name == "health"
                        && code == Some(2)
                        && t.older_than("4.5.0")
                        && String::from_utf8_lossy(&o.stdout).contains("DCGM_FR_POWER_UNREADABLE");
                    assert!(
                        code == Some(0) || (name == "health" && code == Some(3)) || warns,
                        "{name}: {o:?}"
                    );
                    assert_no_sentinel(&String::from_utf8_lossy(&o.stdout));
                }
            },
            not_on: Some((Kind::Sim, "the default injected GPU is the real library's")),
        },
    ]
}

/// A tool's exit status when the release lacks what it was asked for.
const NOT_IN_RELEASE: i32 = 4;

/// A tool that said the release lacks the feature: exit status 4, nothing on stdout, and one
/// line naming this release (the simulator's banner aside). The case is then not applicable:
/// the panic message carries the name `run_cases` looks for.
fn not_in_release(t: &Target, name: &str, o: &Output) -> ! {
    let line = says_not_in_release(t, name, o);
    panic!("NotInRelease: {name}: {line}");
}

/// Checks that a tool said, as its one line with exit status 4, that this release lacks what
/// it was asked for; returns the line.
fn says_not_in_release(t: &Target, name: &str, o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("# SIMULATED DATA"))
        .collect();
    assert!(t.release.is_some(), "{name} exited 4 on DCGM 4.6.0: {err}");
    assert_eq!(o.status.code(), Some(NOT_IN_RELEASE), "{name}: {o:?}");
    assert!(o.stdout.is_empty(), "{name}: {o:?}");
    assert_eq!(lines.len(), 1, "{name}: one line: {err}");
    assert!(
        lines[0].contains("not in this DCGM release")
            && lines[0].ends_with(&format!("this is {})", t.version())),
        "{name}: {err}"
    );
    lines[0].to_string()
}

fn run_with(t: &Target, name: &str, args: &[&str], capture: bool) -> Output {
    let mut cmd = Command::new(tool(name));
    cmd.args(args).arg("--lib").arg(&t.lib);
    if t.kind == Kind::Real && !capture {
        cmd.env_remove("NVML_YAML_FILE");
    }
    cmd.output().unwrap()
}

/// Runs the tool, checks exit 0 and a sentinel-free stdout, returns stdout.
fn ok(t: &Target, name: &str, args: &[&str]) -> String {
    let o = run_with(t, name, args, true);
    if o.status.code() == Some(NOT_IN_RELEASE) {
        not_in_release(t, name, &o);
    }
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{name} {args:?} exited {:?}\nstdout:\n{out}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    assert_no_sentinel(&out);
    out
}
