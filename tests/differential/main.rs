//! Simulator parity by differential recording, per DCGM release.
//!
//! The battery (`battery.rs` and the `*_cases.rs` areas) makes several hundred raw calls
//! through `dcgm-sys` and records each one's return code and the shape of its answer. For each
//! release in [`RELEASES`] (4.6.0, 4.5.3, 4.1.1, 3.3.9) it is recorded once on that real
//! libdcgm (DCGM's injection NVML replaying the H200 capture) into
//! `tests/data/differential-real-<release>.tsv` (facts about the library; the library itself is
//! never in the repository). Each run replays it on dcgm-sim in that release's personality
//! (`DCGM_SIM_VERSION=<release>`): every call must give the golden record, or be listed with
//! its reason in `tests/data/differential-deviations-<release>.tsv` (a call id, an id prefix
//! ending in `*`, or the rule `@missing-symbol`: a function the release does not export is
//! recorded `missing` there and answers `DCGM_ST_FUNCTION_NOT_FOUND` on the simulator). Where a
//! real library is beside the checkout (`../shared/realdcgm-<release>`, staged by
//! `scripts/real-dcgm.sh dir <release>`), the battery is replayed on it too, so a golden file
//! that no longer matches its library fails. All runs are child processes started at once;
//! one summary line per run, and any unexplained difference fails the test.
//!
//! `DCGM_DIFF_RECORD=1 cargo test --test differential` re-records every golden file whose real
//! library is present; `DCGM_DIFF_RELEASES=4.5.3,3.3.9` limits a run or a recording to those
//! releases. The simulator runs a one-H200 node modelled on the H200 capture the real
//! libraries replay (`sim_config()`). On DCGM 3.x the calls naming CPU entities are recorded as
//! `skipped` (its sysmon module crashes where /sys/class/hwmon is absent).

mod battery;
mod connection_cases;
mod driver_vgpu_cases;
mod health_cases;
mod instances_cases;
mod mig_cases;
mod policy_cases;
mod raw_answers;
mod sample_cases;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use battery::Battery;
use dcgm_sys::*;

/// The releases with a golden file, each recorded from its real library; 4.6.0 is the one
/// the simulator implements, the others are its personalities (`DCGM_SIM_VERSION`).
const RELEASES: [&str; 4] = ["4.6.0", "4.5.3", "4.1.1", "3.3.9"];

/// Tells the child which release it runs as (the battery leaves out what crashes a release).
const RELEASE_ENV: &str = "DCGM_DIFF_RELEASE";

fn golden_path(release: &str) -> String {
    format!("tests/data/differential-real-{release}.tsv")
}

fn deviations_path(release: &str) -> String {
    format!("tests/data/differential-deviations-{release}.tsv")
}

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
    let release = std::env::var(RELEASE_ENV).unwrap_or_default();
    // DCGM 3.x's sysmon module reads /sys/class/hwmon without checking that it opened: on a
    // machine without it, asking the embedded engine about CPU entities crashes the process.
    b.cpu_entities = !release.starts_with("3.");
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
    b.sample_cases();
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

/// One run of the battery in a child process: on dcgm-sim in `release`'s personality, or on
/// the real library of `release` (DCGM's injection NVML replaying the H200 capture).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Sim,
    Real,
}

fn battery_command(lib: &Path, release: &str, target: Target) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env("DCGM_DIFF_TARGET", lib)
        .env(RELEASE_ENV, release)
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        .env_remove("DCGM_SIM_VERSION")
        .env_remove("DCGM_LIB_PATH");
    match target {
        Target::Sim => {
            cmd.env("DCGM_DIFF_SIM", "1")
                .env("DCGM_SIM_VERSION", release);
        }
        Target::Real => {
            cmd.env("NVML_INJECTION_MODE", "True").env(
                "NVML_YAML_FILE",
                dcgm::testing::shared_dir().join("fixtures/nvml-capture-h200.yaml"),
            );
        }
    }
    cmd
}

/// Runs the commands at once (each child mostly waits: on the engine's threads, on timeouts),
/// each one's records or why it failed.
fn run_all(cmds: Vec<(String, Command)>) -> Vec<(String, Result<Records, String>)> {
    std::thread::scope(|s| {
        let handles: Vec<_> = cmds
            .into_iter()
            .map(|(name, mut cmd)| {
                s.spawn(move || {
                    let out = match cmd.output() {
                        Ok(o) => o,
                        Err(e) => return (name, Err(format!("cannot run the battery: {e}"))),
                    };
                    if !out.status.success() {
                        let err = String::from_utf8_lossy(&out.stderr);
                        let tail: Vec<&str> = err.lines().rev().take(20).collect();
                        let tail: Vec<&str> = tail.into_iter().rev().collect();
                        return (
                            name,
                            Err(format!(
                                "the battery crashed: {}\n{}",
                                out.status,
                                tail.join("\n")
                            )),
                        );
                    }
                    (
                        name,
                        Ok(parse(&String::from_utf8_lossy(&out.stdout), "REC\t")),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// The staged real library of `release`, or why there is none.
fn stage_real(release: &str) -> Result<PathBuf, String> {
    let out = Command::new("bash")
        .arg(root().join("scripts/real-dcgm.sh"))
        .arg("dir")
        .arg(release)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let soname = if release.starts_with("3.") {
        "libdcgm.so.3"
    } else {
        "libdcgm.so.4"
    };
    Ok(dir.join("lib").join(soname))
}

fn write_golden(release: &str, r: &Records) {
    let mut s = format!(
        "# Return code and answer shape of each battery call on the real libdcgm {release}\n\
         # (DCGM's injection NVML replaying ../shared/fixtures/nvml-capture-h200.yaml).\n\
         # Re-record: DCGM_DIFF_RECORD=1 cargo test --test differential\n"
    );
    for (id, (rc, shape)) in r {
        s += &format!("{id}\t{rc}\t{shape}\n");
    }
    std::fs::write(root().join(golden_path(release)), s).unwrap();
}

/// A release's listed deviations: call ids (an id ending in `*` lists every id it starts),
/// and the rule [`MISSING_RULE`], each with its reason.
struct Deviations {
    entries: BTreeMap<String, String>,
}

/// The rule entry: a function the real release does not export (recorded `missing`) answers
/// `DCGM_ST_FUNCTION_NOT_FOUND` on the simulator, which exports every function.
const MISSING_RULE: &str = "@missing-symbol";

impl Deviations {
    fn load(release: &str) -> Self {
        let path = root().join(deviations_path(release));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let entries = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let (id, why) = l.split_once('\t').unwrap_or((l, ""));
                assert!(!why.trim().is_empty(), "deviation {id} has no reason");
                (id.to_string(), why.to_string())
            })
            .collect();
        Self { entries }
    }

    /// The entry that lists this difference, if one does.
    fn listing(
        &self,
        id: &str,
        golden: Option<&(String, String)>,
        got: Option<&(String, String)>,
    ) -> Option<String> {
        if self.entries.contains_key(id) {
            return Some(id.to_string());
        }
        if let Some(p) = self
            .entries
            .keys()
            .find(|k| k.strip_suffix('*').is_some_and(|p| id.starts_with(p)))
        {
            return Some(p.clone());
        }
        let not_found = DCGM_ST_FUNCTION_NOT_FOUND.to_string();
        match (golden, got) {
            (Some((grc, gshape)), Some((src, sshape)))
                if self.entries.contains_key(MISSING_RULE)
                    && grc == "missing"
                    && *src == not_found
                    && gshape == sshape =>
            {
                Some(MISSING_RULE.to_string())
            }
            _ => None,
        }
    }
}

fn compare(
    name: &str,
    golden: &Records,
    got: &Records,
    deviations: Option<&Deviations>,
    deviations_file: &str,
) -> usize {
    let mut unexplained = 0;
    let mut explained = 0;
    let mut used = std::collections::BTreeSet::new();
    let ids: std::collections::BTreeSet<&String> = golden.keys().chain(got.keys()).collect();
    for id in ids {
        let (g, s) = (golden.get(id), got.get(id));
        if g == s {
            continue;
        }
        if let Some(entry) = deviations.and_then(|d| d.listing(id, g, s)) {
            used.insert(entry);
            explained += 1;
            continue;
        }
        unexplained += 1;
        println!("differential[{name}] DIFFERS {id}: real {g:?}, {name} {s:?}");
    }
    println!(
        "differential[{name}]: {} calls, {} equal, {explained} listed deviations, {unexplained} unexplained",
        got.len(),
        got.len().saturating_sub(explained + unexplained)
    );
    if let Some(d) = deviations {
        for id in d.entries.keys().filter(|k| !used.contains(*k)) {
            println!(
                "differential[{name}] note: deviation {id} no longer differs: remove it from {deviations_file}"
            );
        }
    }
    unexplained
}

/// The releases to run: all of [`RELEASES`], or those `DCGM_DIFF_RELEASES` names
/// (comma-separated).
fn releases() -> Vec<&'static str> {
    match std::env::var("DCGM_DIFF_RELEASES") {
        Ok(list) if !list.trim().is_empty() => RELEASES
            .into_iter()
            .filter(|r| list.split(',').any(|x| x.trim() == *r))
            .collect(),
        _ => RELEASES.to_vec(),
    }
}

fn drive() -> i32 {
    let releases = releases();
    let real: Vec<(&str, Result<PathBuf, String>)> =
        releases.iter().map(|r| (*r, stage_real(r))).collect();
    if std::env::var("DCGM_DIFF_RECORD").as_deref() == Ok("1") {
        let mut cmds = Vec::new();
        for (release, lib) in &real {
            match lib {
                Ok(lib) => cmds.push((
                    release.to_string(),
                    battery_command(lib, release, Target::Real),
                )),
                Err(why) => println!("differential[real {release}]: not recorded, {why}"),
            }
        }
        let mut bad = 0;
        for (release, r) in run_all(cmds) {
            match r {
                Ok(r) => {
                    write_golden(&release, &r);
                    println!(
                        "differential: recorded {} calls into {}",
                        r.len(),
                        golden_path(&release)
                    );
                }
                Err(why) => {
                    println!("differential[real {release}]: {why}");
                    bad += 1;
                }
            }
        }
        return i32::from(bad > 0);
    }
    let sim = dcgm::testing::simulator_path();
    let mut cmds = Vec::new();
    let mut goldens = BTreeMap::new();
    for (release, lib) in &real {
        let golden = match std::fs::read_to_string(root().join(golden_path(release))) {
            Ok(text) => parse(&text, ""),
            Err(e) => {
                println!(
                    "differential[{release}]: no golden file {}: {e}",
                    golden_path(release)
                );
                return 1;
            }
        };
        goldens.insert(release.to_string(), golden);
        cmds.push((
            format!("sim {release}"),
            battery_command(&sim, release, Target::Sim),
        ));
        if let Ok(lib) = lib {
            cmds.push((
                format!("real {release}"),
                battery_command(lib, release, Target::Real),
            ));
        }
    }
    let mut results: BTreeMap<String, Result<Records, String>> =
        run_all(cmds).into_iter().collect();
    let mut bad = 0;
    for (release, lib) in &real {
        let golden = &goldens[*release];
        let file = deviations_path(release);
        let deviations = Deviations::load(release);
        for target in [Target::Sim, Target::Real] {
            let name = match target {
                Target::Sim => format!("sim {release}"),
                Target::Real => format!("real {release}"),
            };
            match (results.remove(&name), lib) {
                (Some(Ok(got)), _) => {
                    let d = (target == Target::Sim).then_some(&deviations);
                    bad += compare(&name, golden, &got, d, &file);
                }
                (Some(Err(why)), _) => {
                    println!("differential[{name}]: {why}");
                    bad += 1;
                }
                (None, Err(why)) => {
                    println!("differential[{name}]: SKIPPED, {why}");
                    if std::env::var("DCGM_REQUIRE_REAL").as_deref() == Ok("1") {
                        bad += 1;
                    }
                }
                (None, Ok(_)) => unreachable!("every run has a result"),
            }
        }
    }
    i32::from(bad > 0)
}
