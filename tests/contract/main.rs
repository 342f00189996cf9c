//! The contract suite: what must hold on any libdcgm, written once and run against dcgm-sim and
//! against the real libdcgm 4.6.0 beside the checkout (`../shared/realdcgm-4.6.0`).
//!
//! `cargo test --test contract` runs both. This binary starts itself once per library: a process
//! can hold only one of them (both are `libdcgm.so.4`, and the real library's modules bind to
//! whichever was loaded first). The real library runs with DCGM's injection NVML replaying the
//! H200 capture in `../shared/fixtures`. Where the real library is absent (a user's fresh
//! clone) the real tier prints why and is skipped, or fails when `DCGM_REQUIRE_REAL=1` (CI).
//!
//! Arguments: optional substring filters on case names (a case runs if any matches).

mod reader;
mod safe_layer;
mod since_exact;
#[path = "../support/mod.rs"]
mod support;
mod target;
mod test_api;
mod tools;

use std::panic::AssertUnwindSafe;
use std::process::Command;
use std::time::Instant;

use target::{Kind, Target};

/// One contract: a name, the check, and the library it does not apply to, with the reason.
pub struct Case {
    /// What is checked, as printed.
    pub name: &'static str,
    /// The check: panics when the contract does not hold.
    pub run: fn(&Target),
    /// A library the case does not apply to, and why.
    pub not_on: Option<(Kind, &'static str)>,
}

/// A case that applies to every library.
pub const fn case(name: &'static str, run: fn(&Target)) -> Case {
    Case {
        name,
        run,
        not_on: None,
    }
}

fn all_cases() -> Vec<Case> {
    let mut v = safe_layer::cases();
    v.extend(reader::cases());
    v.extend(since_exact::cases());
    v.extend(tools::cases());
    // Last: these add fake GPUs and injected values to the shared engine.
    v.extend(test_api::cases());
    v
}

/// Substring filters on case names (any matches); none: every case.
fn filters() -> Vec<String> {
    std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if std::env::var_os(since_exact::MANUAL_CHILD).is_some() {
        // A MANUAL-mode engine of its own, without the run's AUTO-mode keeper.
        since_exact::manual_mode_alone(&Target::from_env());
        return;
    }
    if std::env::var_os("DCGM_CONTRACT_TARGET").is_some() {
        std::process::exit(run_cases());
    }
    std::process::exit(drive());
}

/// Runs this binary once per library and sums up.
fn drive() -> i32 {
    let exe = std::env::current_exe().unwrap();
    let mut failed = false;
    let mut summary = Vec::new();
    for kind in [Kind::Sim, Kind::Real] {
        let mut cmd = Command::new(&exe);
        cmd.args(std::env::args().skip(1))
            .env("DCGM_CONTRACT_TARGET", kind.name())
            .env_remove("DCGM_LIB_PATH")
            .env_remove("DCGM_SIM_CONFIG")
            .env_remove("DCGM_SIM_FAULTS");
        if kind == Kind::Real {
            match target::stage_real() {
                Ok(dir) => {
                    cmd.env("DCGM_CONTRACT_REAL_DIR", dir)
                        .env("NVML_INJECTION_MODE", "True")
                        .env("NVML_YAML_FILE", target::h200_capture());
                }
                Err(why) => {
                    let line = format!("contract[real]: SKIPPED, {why}");
                    println!("{line}");
                    if std::env::var("DCGM_REQUIRE_REAL").as_deref() == Ok("1") {
                        println!("DCGM_REQUIRE_REAL=1: the real tier must run here");
                        failed = true;
                    }
                    summary.push(line);
                    continue;
                }
            }
        }
        let status = cmd.status().expect("start the contract run");
        failed |= !status.success();
        summary.push(format!(
            "contract[{}]: {}",
            kind.name(),
            if status.success() { "ok" } else { "FAILED" }
        ));
    }
    println!("\n{}", summary.join("\n"));
    i32::from(failed)
}

/// Runs every case against this process's library and prints one line per case.
fn run_cases() -> i32 {
    let t = Target::from_env();
    let name = t.kind.name();
    // One embedded handle for the whole run: later handles share its engine, so the real
    // library's two-second engine stop is paid once, not per case.
    let keeper = t.embedded();
    let version = keeper
        .system()
        .library_version()
        .ok()
        .and_then(|v| v.version)
        .unwrap_or_default();
    println!(
        "contract[{name}]: {} {version} ({})",
        if t.is_real() {
            "real libdcgm"
        } else {
            "dcgm-sim"
        },
        t.lib.display()
    );
    // One line per failure, not a backtrace: the case name follows it.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("(panic)");
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()));
        println!("  panicked at {}: {msg}", at.unwrap_or_default());
    }));
    let filters = filters();
    let (mut passed, mut failed, mut skipped) = (0, Vec::new(), 0);
    for c in all_cases() {
        if !filters.is_empty() && !filters.iter().any(|f| c.name.contains(f.as_str())) {
            continue;
        }
        if let Some((k, why)) = c.not_on
            && k == t.kind
        {
            println!("contract[{name}] n/a  {}: {why}", c.name);
            skipped += 1;
            continue;
        }
        let t0 = Instant::now();
        match std::panic::catch_unwind(AssertUnwindSafe(|| (c.run)(&t))) {
            Ok(()) => {
                passed += 1;
                println!(
                    "contract[{name}] ok   {} ({} ms)",
                    c.name,
                    t0.elapsed().as_millis()
                );
            }
            Err(_) => {
                println!("contract[{name}] FAIL {}", c.name);
                failed.push(c.name);
            }
        }
    }
    drop(keeper);
    println!(
        "contract[{name}]: {passed} passed, {} failed, {skipped} not applicable",
        failed.len()
    );
    if !failed.is_empty() {
        println!("contract[{name}] failed: {}", failed.join(", "));
    }
    let _ = std::fs::remove_dir_all(&t.scratch);
    i32::from(!failed.is_empty())
}
