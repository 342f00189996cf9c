//! `dcgm-doctor` live on every real DCGM release beside the checkout (`../shared/realdcgm-*`,
//! replaying the H200 capture through DCGM's injection NVML). These libraries are built from
//! NVIDIA's public source without the profiling module: DCGM 4.1.1 and 4.5.3 refuse a watch of
//! profiling fields with `DCGM_ST_MODULE_NOT_LOADED` (4.6.0 and 3.3.9 accept it and leave them
//! blank). The doctor samples the other fields, says which rules it could not judge without
//! them, and finds nothing wrong on the idle capture, on each release.

mod support;

use dcgm::testing::{REAL_RELEASES, h200_capture, real_library};
use std::process::Command;

#[test]
fn doctor_judges_what_every_release_serves_and_names_what_it_cannot() {
    for v in REAL_RELEASES {
        let Some(lib) = real_library(v) else { return };
        let o = Command::new(support::tool("doctor"))
            .args(["--duration", "2", "-d", "200", "--json", "--lib"])
            .arg(&lib)
            .env_remove("DCGM_LIB_PATH")
            .env("NVML_INJECTION_MODE", "True")
            .env("NVML_YAML_FILE", h200_capture())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{v}: {o:?}");
        // The injection NVML writes its own notes to stdout: the report is the JSON object.
        let out = String::from_utf8_lossy(&o.stdout);
        let json = &out[out
            .find('{')
            .unwrap_or_else(|| panic!("{v}: no JSON in {out}"))..];
        let report: serde_json::Value =
            serde_json::from_str(json.trim()).unwrap_or_else(|e| panic!("{v}: {e} in {json}"));
        let findings = report["findings"].as_array().unwrap();
        assert!(
            findings.iter().all(|f| f["severity"] == "info"),
            "{v}: {findings:?}"
        );
        // Without profiling fields, the rules that need them say so rather than judge.
        let not_judged = report["not_judged"].to_string();
        assert!(not_judged.contains("sm_active"), "{v}: {not_judged}");
        // Where the engine refused them, a note says so (in the JSON, and on stderr).
        let notes = report["notes"].to_string();
        if matches!(v, "4.1.1" | "4.5.3") {
            assert!(
                notes.contains("the profiling fields cannot be watched here")
                    && notes.contains("MODULE_NOT_LOADED"),
                "{v}: {notes}\n{err}"
            );
        }
    }
}
