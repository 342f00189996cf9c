//! Simulator parity by differential recording.
//!
//! The battery (`battery.rs`) makes several hundred raw calls through `dcgm-sys` and records each
//! one's return code and the shape of its answer. Recorded once on the real libdcgm 4.6.0 into
//! `tests/data/differential-real-4.6.0.tsv` (facts about the library; the library itself is
//! never in the repository), it is replayed here on dcgm-sim: every call must give the same
//! record, or be listed with its reason in `tests/data/differential-deviations.tsv`. Where the
//! real library is beside the checkout, the battery is also replayed on it, so a golden file
//! that no longer matches the library fails too.
//!
//! `DCGM_DIFF_RECORD=1 cargo test --test differential` re-records the golden file from the
//! real library. The simulator runs a one-H200 node modelled on the H200 capture the real
//! library replays (`sim_config()`).

mod battery;
mod connection_cases;
mod driver_vgpu_cases;
mod health_cases;
mod instances_cases;
mod mig_cases;
mod policy_cases;
mod raw_answers;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use battery::Battery;
use dcgm_sys::*;

const GOLDEN: &str = "tests/data/differential-real-4.6.0.tsv";
const DEVIATIONS: &str = "tests/data/differential-deviations.tsv";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A node like the captured H200: one GPU, no NvSwitch, no MIG, no CPU entities.
/// Its profiling fields are blank: the real build has no profiling module (not open source).
fn sim_config() -> &'static str {
    r#"{"gpus":[{"model":"NVIDIA H200","memory_mib":143771,"power_limit_w":700,"nvlinks":18}],
        "nvswitches":0,"cpus":[],"processes":[],"events":[],
        "faults":{"blank_fields":[1001,1002,1003,1004,1005,1006,1007,1008,1009,1010,1011,1012,1013,1014]}}"#
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    match std::env::var("DCGM_DIFF_TARGET").ok().as_deref() {
        Some(lib) => run_battery(lib),
        None => std::process::exit(drive()),
    }
}

/// In a child process: runs the battery on one library and prints its records.
fn run_battery(lib_path: &str) {
    if std::env::var_os("DCGM_DIFF_SIM").is_some() {
        dcgm::testing::configure_simulator(Some(sim_config())).unwrap();
    }
    let lib = DcgmLibrary::open_path(lib_path).expect("load the library");
    let mut b = Battery::new(&lib, 0);
    let mut h: dcgmHandle_t = 0;
    // SAFETY: plain out-pointer.
    let rc = unsafe { lib.dcgmStartEmbedded().unwrap()(DCGM_OPERATION_MODE_MANUAL, &mut h) };
    b.rec("lifecycle/start_before_init", Some(rc), "");
    // SAFETY: no arguments.
    let rc = unsafe { lib.dcgmInit().unwrap()() };
    b.rec("lifecycle/init", Some(rc), "");
    let mut p = dcgmStartEmbeddedV2Params_v3::new_versioned();
    p.opMode = DCGM_OPERATION_MODE_MANUAL;
    p.version = (p.version & 0x00ff_ffff) | (9 << 24);
    // SAFETY: a params struct valid for the call.
    let rc = unsafe {
        lib.dcgmStartEmbedded_v2().unwrap()((&mut p as *mut dcgmStartEmbeddedV2Params_v3).cast())
    };
    b.rec("lifecycle/start_bad_version", Some(rc), "");
    // SAFETY: plain out-pointer.
    let rc = unsafe { lib.dcgmStartEmbedded().unwrap()(DCGM_OPERATION_MODE_MANUAL, &mut h) };
    b.rec("lifecycle/start_embedded", Some(rc), "");
    b.h = h;
    b.discovery();
    b.groups();
    b.field_groups();
    b.watches_and_reads();
    b.single_field_api();
    b.field_metadata();
    b.error_texts();
    b.health_policy_config();
    b.hierarchy_and_more();
    b.field_support();
    b.mig_cases();
    b.raw_answer_cases();
    b.test_api();
    b.health_cases();
    b.mig_fake_cases();
    b.instance_cases();
    b.policy_cases();
    b.connection_cases();
    b.vgpu_cases();
    b.driver_cases();
    b.after_shutdown();
    for r in &b.records {
        println!("REC\t{}\t{}\t{}", r.id, r.rc, r.shape);
    }
}

type Records = BTreeMap<String, (String, String)>;

fn parse(text: &str, prefix: &str) -> Records {
    text.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let mut it = l.splitn(3, '\t');
            let id = it.next().unwrap().to_string();
            let rc = it.next().unwrap_or("").to_string();
            let shape = it.next().unwrap_or("").to_string();
            (id, (rc, shape))
        })
        .collect()
}

fn record_on(lib: &str, sim: bool, real_env: bool) -> Records {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env("DCGM_DIFF_TARGET", lib)
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        .env_remove("DCGM_LIB_PATH");
    if sim {
        cmd.env("DCGM_DIFF_SIM", "1");
    }
    if real_env {
        cmd.env("NVML_INJECTION_MODE", "True").env(
            "NVML_YAML_FILE",
            dcgm::testing::shared_dir().join("fixtures/nvml-capture-h200.yaml"),
        );
    }
    let out = cmd.output().expect("run the battery");
    assert!(
        out.status.success(),
        "the battery crashed on {lib}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    parse(&String::from_utf8_lossy(&out.stdout), "REC\t")
}

fn stage_real() -> Result<PathBuf, String> {
    let out = Command::new("bash")
        .arg(root().join("scripts/real-dcgm.sh"))
        .arg("dir")
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn write_golden(r: &Records) {
    let mut s = String::from(
        "# Return code and answer shape of each battery call on the real libdcgm 4.6.0\n\
         # (DCGM's injection NVML replaying ../shared/fixtures/nvml-capture-h200.yaml).\n\
         # Re-record: DCGM_DIFF_RECORD=1 cargo test --test differential\n",
    );
    for (id, (rc, shape)) in r {
        s += &format!("{id}\t{rc}\t{shape}\n");
    }
    std::fs::write(root().join(GOLDEN), s).unwrap();
}

fn compare(
    name: &str,
    golden: &Records,
    got: &Records,
    deviations: &BTreeMap<String, String>,
    explain: bool,
) -> usize {
    let mut unexplained = 0;
    let mut explained = 0;
    let ids: std::collections::BTreeSet<&String> = golden.keys().chain(got.keys()).collect();
    for id in ids {
        let (g, s) = (golden.get(id), got.get(id));
        if g == s {
            continue;
        }
        if explain && deviations.contains_key(id.as_str()) {
            explained += 1;
            continue;
        }
        unexplained += 1;
        println!("differential[{name}] DIFFERS {id}: real {g:?}, {name} {s:?}");
    }
    println!(
        "differential[{name}]: {} calls, {} equal, {explained} listed deviations, {unexplained} unexplained",
        got.len(),
        got.len() - explained - unexplained
    );
    if explain {
        for id in deviations.keys() {
            if golden.get(id) == got.get(id) {
                println!(
                    "differential[{name}] note: deviation {id} no longer differs: remove it from {DEVIATIONS}"
                );
            }
        }
    }
    unexplained
}

fn drive() -> i32 {
    let real = stage_real();
    if std::env::var("DCGM_DIFF_RECORD").as_deref() == Ok("1") {
        let dir = real.expect("recording needs the real library");
        let r = record_on(dir.join("lib/libdcgm.so.4").to_str().unwrap(), false, true);
        write_golden(&r);
        println!("differential: recorded {} calls into {GOLDEN}", r.len());
        return 0;
    }
    let golden = parse(&std::fs::read_to_string(root().join(GOLDEN)).unwrap(), "");
    let deviations: BTreeMap<String, String> = std::fs::read_to_string(root().join(DEVIATIONS))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (id, why) = l.split_once('\t').unwrap_or((l, ""));
            assert!(!why.trim().is_empty(), "deviation {id} has no reason");
            (id.to_string(), why.to_string())
        })
        .collect();
    let sim = dcgm::testing::simulator_path();
    let mut bad = compare(
        "sim",
        &golden,
        &record_on(sim.to_str().unwrap(), true, false),
        &deviations,
        true,
    );
    match real {
        Ok(dir) => {
            let r = record_on(dir.join("lib/libdcgm.so.4").to_str().unwrap(), false, true);
            bad += compare("real", &golden, &r, &deviations, false);
        }
        Err(why) => {
            println!("differential[real]: SKIPPED, {why}");
            if std::env::var("DCGM_REQUIRE_REAL").as_deref() == Ok("1") {
                return 1;
            }
        }
    }
    i32::from(bad > 0)
}
