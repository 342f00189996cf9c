//! Every tool on every real DCGM release beside the checkout (`../shared/realdcgm-*`, replaying
//! the H200 capture through DCGM's injection NVML): the output is whole and sentinel-free, and
//! each release is asked in its own struct versions.

mod support;

use std::path::PathBuf;
use std::process::{Command, Output};

use dcgm::testing::{REAL_RELEASES as RELEASES, real_library as staged};

fn run(lib: &PathBuf, capture: &str, tool: &str, args: &[&str]) -> Output {
    Command::new(support::tool(tool))
        .args(args)
        .arg("--lib")
        .arg(lib)
        .env_remove("DCGM_LIB_PATH")
        .env("NVML_INJECTION_MODE", "True")
        .env(
            "NVML_YAML_FILE",
            dcgm::testing::shared_dir().join("fixtures").join(capture),
        )
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `true` when `version` is older than `than`.
fn older(version: &str, than: &str) -> bool {
    dcgm::DcgmVersion::parse(version) < dcgm::DcgmVersion::parse(than)
}

#[test]
fn topology_of_two_gpus_behind_one_switch_is_pxb_on_every_release() {
    for v in RELEASES {
        let Some(lib) = staged(v) else { return };
        let o = run(&lib, "nvml-capture-2xh200.yaml", "topology", &[]);
        let out = text(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{v}: {o:?}");
        let row = out
            .lines()
            .find(|l| l.starts_with("GPU0"))
            .unwrap_or_else(|| panic!("{v}: no GPU0 row in\n{out}"));
        assert!(row.contains("PXB"), "{v}: {row}");
        assert!(!out.contains(" ? "), "{v}: an unknown path in\n{out}");
    }
}

/// NVLink status and diagnostics are asked in each release's own versions (NVLink status v3,
/// RunDiag v8 with response v10 on 3.3.9; v4, and v10 with v11, on 4.1.1): every release
/// answers, never with "not in this DCGM release".
#[test]
fn nvlink_and_diag_answer_on_every_release() {
    for v in RELEASES {
        let Some(lib) = staged(v) else { return };
        let o = run(&lib, "nvml-capture-h200.yaml", "nvlink", &[]);
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{v} nvlink: {o:?}");
        // The capture's H200 has no NVLink injected: its row, with no link.
        assert!(out.contains("gpuId 0:"), "{v} nvlink: {out}");
        assert!(
            !err.contains("not in this DCGM release"),
            "{v} nvlink: {err}"
        );
        dcgm::testing::assert_no_sentinel(&out);
        let o = run(&lib, "nvml-capture-h200.yaml", "diag", &["-r", "1"]);
        let err = text(&o.stderr);
        // Built without nvvs: its own clear error, not a version problem.
        assert_eq!(o.status.code(), Some(1), "{v} diag: {o:?}");
        assert!(
            err.contains("DCGM_ST_NVVS_BINARY_NOT_FOUND"),
            "{v} diag: {err}"
        );
        assert!(!err.contains("VER_MISMATCH"), "{v} diag: {err}");
        assert!(!err.contains("not in this DCGM release"), "{v} diag: {err}");
        dcgm::testing::assert_no_sentinel(&text(&o.stdout));
    }
}

/// Health checks and policy callbacks are asked in each release's own versions (group info
/// v2, health response v4 and `dcgmPolicyRegister` on 3.3.9): they work on every release.
#[test]
fn health_and_policy_work_on_every_release() {
    for v in RELEASES {
        let Some(lib) = staged(v) else { return };
        let o = run(&lib, "nvml-capture-h200.yaml", "health", &["-c", "1"]);
        assert_eq!(o.status.code(), Some(0), "{v} health: {o:?}");
        let out = text(&o.stdout);
        assert!(out.contains("Overall health: PASS"), "{v}: {out}");
        dcgm::testing::assert_no_sentinel(&out);
        let o = run(
            &lib,
            "nvml-capture-h200.yaml",
            "policy",
            &["--xid", "-t", "1"],
        );
        assert_eq!(o.status.code(), Some(0), "{v} policy: {o:?}");
        let err = text(&o.stderr);
        assert!(err.contains("Listening for XID on 1 GPU(s)"), "{v}: {err}");
        assert!(!err.contains("not in this DCGM release"), "{v}: {err}");
    }
}

#[test]
fn the_everyday_tools_are_whole_on_every_release_and_verbose_names_it() {
    for v in RELEASES {
        let Some(lib) = staged(v) else { return };
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
            let o = run(&lib, "nvml-capture-h200.yaml", tool, args);
            assert_eq!(o.status.code(), Some(0), "{v} {tool} {args:?}: {o:?}");
            let out = text(&o.stdout);
            assert!(!out.trim().is_empty(), "{v} {tool}: no output");
            dcgm::testing::assert_no_sentinel(&out);
        }
        let o = run(&lib, "nvml-capture-h200.yaml", "discovery", &["--verbose"]);
        let err = text(&o.stderr);
        assert!(err.contains(&format!("DCGM {v}")), "{v}: {err}");
    }
}

/// libdcgm refuses a whole field group with one id it does not know: the reader's defaults
/// hold `DCGM_FI_DEV_PCIE_CORRECTABLE_ERROR_TOTAL` (1501, from 4.4.2), which 3.3.9 and 4.1.1
/// lack. It is left out there, the rest is read, and the field group says what it left out.
#[test]
fn the_readers_default_fields_read_on_every_release_with_the_newer_ones_left_out() {
    for v in RELEASES {
        let Some(lib) = staged(v) else { return };
        // A process of its own per release: one library per process, with its injection
        // variables.
        let o = dcgm::testing::run_release_child("reader_child", &lib);
        let out = text(&o.stdout);
        assert!(o.status.success(), "{v}: {out}\n{}", text(&o.stderr));
        let left_out = out
            .lines()
            .find_map(|l| l.strip_prefix("LEFT_OUT "))
            .unwrap_or_else(|| panic!("{v}: {out}"));
        if older(v, "4.4.2") {
            assert!(left_out.split(',').any(|f| f == "1501"), "{v}: {left_out}");
        } else {
            assert_eq!(left_out, "", "{v}");
        }
        assert!(out.contains("VALUES "), "{v}: {out}");
    }
}

/// The child of the test above (run in a process of its own: the library's environment).
#[test]
#[ignore = "run by the_readers_default_fields_read_on_every_release_with_the_newer_ones_left_out"]
fn reader_child() {
    let lib = std::env::var("RELEASE_CHILD_LIB").unwrap();
    let h = dcgm::Handle::builder()
        .library_path(&lib)
        .embedded()
        .unwrap();
    let ids: Vec<dcgm::FieldId> = dcgm_reader::DEFAULT_FIELD_IDS
        .iter()
        .map(|f| dcgm::FieldId(*f))
        .collect();
    let fg = dcgm::FieldGroup::create(&h, "release-defaults", &ids).unwrap();
    let left: Vec<String> = fg.left_out().iter().map(|f| f.0.to_string()).collect();
    println!("LEFT_OUT {}", left.join(","));
    let mut r = dcgm_reader::Reader::builder()
        .library_path(&lib)
        .build()
        .unwrap();
    let snap = r.latest().unwrap();
    println!("VALUES {} bytes of snapshot", format!("{snap:?}").len());
}
