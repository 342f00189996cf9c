//! Every tool on the simulator speaking each release that `tests/releases.rs` runs on the real
//! library (`--simulate` with `DCGM_SIM_VERSION`): the tools behave as on the real release. The
//! output is whole and sentinel-free, and a feature the release lacks says so in one line with
//! exit status 4 (`NotInRelease`). Unlike the real builds beside the checkout, the simulator
//! runs diagnostics, so where the release has them `diag` succeeds.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

/// The releases of `tests/releases.rs`.
const RELEASES: [&str; 4] = ["3.3.9", "4.1.1", "4.5.3", "4.6.0"];

/// A tool on the simulator speaking `version` (None: the default), on the node of `config`
/// (None: the default node).
fn run(version: Option<&str>, config: Option<&Path>, tool: &str, args: &[&str]) -> Output {
    let mut c = support::tool_command(tool);
    c.arg("--simulate")
        .args(args)
        .env_remove("DCGM_SIM_VERSION");
    if let Some(v) = version {
        c.env("DCGM_SIM_VERSION", v);
    }
    if let Some(p) = config {
        c.env("DCGM_SIM_CONFIG", p);
    }
    c.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `true` when `version` is older than `than`.
fn older(version: &str, than: &str) -> bool {
    dcgm::DcgmVersion::parse(version) < dcgm::DcgmVersion::parse(than)
}

/// A config file for the simulator, written once under cargo's temporary folder for tests.
fn config_file(name: &str, toml: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sim-releases-{name}.toml"));
    std::fs::write(&p, toml).unwrap();
    p
}

/// Two GPUs on one CPU socket with no NVLink between them: the PCIe part of the path alone.
/// (The simulator has no PCIe switches, so the real test's PXB node has no twin here.)
const TWO_PCIE_GPUS: &str = r#"
nvswitches = 0
processes = []
hostengines = []

[[cpus]]
cores = 8

[[gpus]]
nvlinks = 0

[[gpus]]
nvlinks = 0
"#;

#[test]
fn topology_is_the_same_on_every_release() {
    // Before 4.6.0 the library writes the version-1 layout, which the safe layer decodes: the
    // matrix must not change, on the default node (18 NVLinks through the switches) and on
    // a node of two GPUs joined by PCIe only.
    let pcie = config_file("two-pcie-gpus", TWO_PCIE_GPUS);
    for config in [None, Some(pcie.as_path())] {
        let want = run(None, config, "topology", &[]);
        assert_eq!(want.status.code(), Some(0), "{want:?}");
        let want = text(&want.stdout);
        let row = want.lines().find(|l| l.starts_with("GPU0")).unwrap();
        assert!(row.contains(if config.is_some() { "NODE" } else { "NV18" }));
        for v in RELEASES {
            let o = run(Some(v), config, "topology", &[]);
            let out = text(&o.stdout);
            assert_eq!(o.status.code(), Some(0), "{v}: {o:?}");
            assert_eq!(out, want, "{v} {config:?}");
            assert!(!out.contains(" ? "), "{v}: an unknown path in\n{out}");
        }
    }
}

#[test]
fn a_feature_the_release_lacks_is_one_line_and_exit_status_4() {
    for v in RELEASES {
        // NVLink status, health and diagnostics are asked in each release's own versions
        // (NVLink status v3, health response v4, RunDiag v8 with response v10 on 3.3.9): they
        // work on every release, as on the real libraries (tests/releases.rs).
        let cases: [(&str, &[&str], &str); 3] = [
            ("nvlink", &[], "3.3.9"),
            ("health", &["-c", "1"], "3.3.9"),
            ("diag", &["-r", "1"], "3.3.9"),
        ];
        for (tool, args, needs) in cases {
            let o = run(Some(v), None, tool, args);
            let err = text(&o.stderr);
            if older(v, needs) {
                assert_eq!(o.status.code(), Some(4), "{v} {tool}: {o:?}");
                let line = err
                    .lines()
                    .find(|l| l.contains("not in this DCGM release"))
                    .unwrap_or_else(|| panic!("{v} {tool}: {err}"));
                assert!(
                    line.contains(&format!("needs DCGM {needs} or later; this is {v}")),
                    "{v} {tool}: {line}"
                );
            } else {
                assert_eq!(o.status.code(), Some(0), "{v} {tool}: {o:?}");
                assert!(
                    !err.contains("not in this DCGM release"),
                    "{v} {tool}: {err}"
                );
            }
            dcgm::testing::assert_no_sentinel(&text(&o.stdout));
        }
    }
}

#[test]
fn the_everyday_tools_are_whole_on_every_release_and_verbose_names_it() {
    for v in RELEASES {
        for (tool, args) in [
            ("query", &["-q", "-d", "CLOCK,PERFORMANCE,POWER"][..]),
            (
                "query",
                &["--query-gpu=index,name,temperature.gpu", "--format=csv"],
            ),
            ("dmon", &["-c", "1"]),
            ("discovery", &[]),
            ("stat", &[]),
        ] {
            let o = run(Some(v), None, tool, args);
            assert_eq!(o.status.code(), Some(0), "{v} {tool} {args:?}: {o:?}");
            let out = text(&o.stdout);
            assert!(!out.trim().is_empty(), "{v} {tool}: no output");
            dcgm::testing::assert_no_sentinel(&out);
        }
        let o = run(Some(v), None, "discovery", &["--verbose"]);
        let err = text(&o.stderr);
        assert!(err.contains(&format!("DCGM {v}")), "{v}: {err}");
    }
}

#[test]
fn the_variable_wins_over_the_config_key_and_unset_is_4_6_0() {
    let keyed = config_file("keyed-4.1.1", "dcgm_version = \"4.1.1\"\n");
    let said = |version: Option<&str>, config: Option<&Path>| {
        let o = run(version, config, "discovery", &["--verbose"]);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        text(&o.stderr)
    };
    assert!(said(None, None).contains("DCGM 4.6.0"));
    assert!(said(None, Some(&keyed)).contains("DCGM 4.1.1"));
    assert!(said(Some("4.5.3"), Some(&keyed)).contains("DCGM 4.5.3"));
    // The key alone is enough to make the simulator answer as that release: its diagnostic
    // response (v11 there) names it.
    let o = run(None, Some(&keyed), "diag", &["-r", "1", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(
        text(&o.stdout).contains("\"dcgm_version\": \"4.1.1\""),
        "{o:?}"
    );
}

#[test]
fn a_release_the_simulator_does_not_speak_is_a_config_error_naming_those_it_does() {
    for (bad, says) in [
        ("5.0.0", "3.3.9 and 4.0.0 to 4.6.x"),
        ("3.3.8", "3.3.9 and 4.0.0 to 4.6.x"),
        ("4.5", "MAJOR.MINOR.PATCH"),
    ] {
        let o = run(Some(bad), None, "dmon", &["-c", "1"]);
        let err = text(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{bad}: {o:?}");
        let line = err
            .lines()
            .find(|l| l.starts_with("error:"))
            .unwrap_or_else(|| panic!("{bad}: {err}"));
        assert!(
            line.contains("the simulator did not start"),
            "{bad}: {line}"
        );
        assert!(line.contains(&format!("DCGM_SIM_VERSION={bad}")), "{line}");
        assert!(line.contains(says), "{bad}: {line}");
    }
    let bad = config_file("keyed-5.0.0", "dcgm_version = \"5.0.0\"\n");
    let o = run(None, Some(&bad), "dmon", &["-c", "1"]);
    let err = text(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{o:?}");
    assert!(err.contains("dcgm_version"), "{err}");
    assert!(err.contains("line 1"), "names the line: {err}");
}

/// One GPU with an XID 79 half a second after the engine starts.
const ONE_GPU_XID: &str = r#"
nvswitches = 0
processes = []
hostengines = []

[[gpus]]
nvlinks = 0

[[events]]
at_ms = 500
gpu = 0
kind = "xid"
value = 79
"#;

/// A violation reaches `policy` on every release, through the registration the release
/// exports: `dcgmPolicyRegister` (begin and finish callbacks, a version-1 response without the
/// GPU) on 3.3.9, `dcgmPolicyRegister_v2` from 4.0. Reported once, on its GPU.
#[test]
fn policy_reports_an_xid_on_every_release() {
    let config = config_file("one-gpu-xid", ONE_GPU_XID);
    for v in RELEASES {
        let o = run(
            Some(v),
            Some(&config),
            "policy",
            &["--xid", "--json", "-n", "2", "-t", "4"],
        );
        assert_eq!(o.status.code(), Some(0), "{v}: {o:?}");
        let err = text(&o.stderr);
        assert!(err.contains("Listening for XID on 1 GPU(s)"), "{v}: {err}");
        let out = text(&o.stdout);
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 1, "{v}: one violation, once: {out}");
        assert_eq!(lines[0]["gpu"], 0, "{v}: {out}");
        assert_eq!(lines[0]["detail"]["xid"], 79, "{v}: {out}");
        assert_eq!(lines[0]["simulated"], true, "{v}: {out}");
    }
}
