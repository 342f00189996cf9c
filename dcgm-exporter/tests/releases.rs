//! The exporter on every real DCGM release beside the checkout (`../shared/realdcgm-*`, each
//! replaying the H200 capture through DCGM's injection NVML): its default counters export the
//! same series on each, and a counter whose field the release does not know has no series
//! and is named once in the log, never a failed collection or a sentinel value.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use dcgm::testing::{REAL_RELEASES, h200_capture, real_library};

fn exporter_once(lib: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dcgm-exporter"))
        .arg("--once")
        .args(args)
        .env("DCGM_LIB_PATH", lib)
        .env("NVML_INJECTION_MODE", "True")
        .env("NVML_YAML_FILE", h200_capture())
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        .output()
        .unwrap()
}

/// The metric names of the `DCGM_*` series in an exposition.
fn series(out: &str) -> BTreeSet<String> {
    out.lines()
        .filter(|l| l.starts_with("DCGM_"))
        .map(|l| l.split(['{', ' ']).next().unwrap().to_string())
        .collect()
}

/// No value in the exposition is one of DCGM's blank sentinels (or its i32/u32 ones).
fn assert_no_sentinel(v: &str, out: &str) {
    for line in out.lines().filter(|l| l.starts_with("DCGM_")) {
        let value = line.rsplit(' ').next().unwrap();
        for s in [
            "140737488355328",
            "140737488355329",
            "140737488355330",
            "140737488355331",
            "9223372036854775792",
            "2147483632",
            "2147483647",
            "4294967295",
        ] {
            assert!(
                !value.starts_with(s),
                "{v}: a sentinel shown as data: {line}"
            );
        }
    }
}

#[test]
fn the_default_counters_export_the_same_series_on_every_release() {
    let mut first: Option<(String, BTreeSet<String>)> = None;
    for v in REAL_RELEASES {
        let Some(lib) = real_library(v) else { return };
        let o = exporter_once(&lib, &[]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{v}: {o:?}");
        let names = series(&out);
        assert!(
            names.contains("DCGM_FI_DEV_GPU_TEMP") && names.contains("DCGM_FI_DEV_POWER_USAGE"),
            "{v}: {names:?}"
        );
        assert_no_sentinel(v, &out);
        match &first {
            None => first = Some((v.to_string(), names)),
            Some((w, want)) => assert_eq!(&names, want, "{v} against {w}"),
        }
    }
}

#[test]
fn a_counter_the_release_lacks_has_no_series_and_is_named_once() {
    let dir = std::env::temp_dir().join(format!("exporter-releases-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let counters = dir.join("counters.csv");
    // 150 and 155 are in every release; 1501 came with DCGM 4.5 (in 4.5.3, not in 4.1.1),
    // 175 with 4.6.0 (measured with DcgmFieldGetById on each library).
    std::fs::write(
        &counters,
        "DCGM_FI_DEV_GPU_TEMP, gauge, t\n\
         DCGM_FI_DEV_PCIE_CORRECTABLE_ERROR_TOTAL, counter, pcie\n\
         DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY, gauge, fabric\n\
         DCGM_FI_DEV_POWER_USAGE, gauge, p\n",
    )
    .unwrap();
    for (v, lacks) in [
        ("3.3.9", &["1501", "175"][..]),
        ("4.1.1", &["1501", "175"]),
        ("4.5.3", &["175"]),
        ("4.6.0", &[]),
    ] {
        let Some(lib) = real_library(v) else { return };
        let o = exporter_once(&lib, &["-f", counters.to_str().unwrap()]);
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{v}: {o:?}");
        let names = series(&out);
        for always in ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE"] {
            assert!(names.contains(always), "{v}: no {always} in\n{out}");
        }
        let said: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("fields not in this DCGM release"))
            .collect();
        if lacks.is_empty() {
            assert!(said.is_empty(), "{v}: {err}");
            assert!(
                names.contains("DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY"),
                "{v}: {out}"
            );
        } else {
            assert_eq!(said.len(), 1, "{v}: said once\n{err}");
            assert!(said[0].contains(&format!("({v})")), "{v}: {}", said[0]);
            let listed: Vec<&str> = said[0]
                .rsplit("left out: ")
                .next()
                .unwrap()
                .split(", ")
                .collect();
            assert_eq!(listed, lacks, "{v}: {}", said[0]);
            for name in [
                "DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY",
                "DCGM_FI_DEV_PCIE_CORRECTABLE_ERROR_TOTAL",
            ] {
                let id = dcgm::FieldId::parse(name).unwrap().0.to_string();
                if lacks.contains(&id.as_str()) {
                    assert!(!names.contains(name), "{v}: a series for {name}:\n{out}");
                }
            }
        }
        assert_no_sentinel(v, &out);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
