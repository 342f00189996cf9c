//! The loader: search order, errors that list every attempt, missing symbols, and the rule
//! that the simulator is never picked up by the default search.

use std::path::PathBuf;

use dcgm_sys::*;

fn sim_path() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let mut dir = exe.parent()?.to_path_buf();
    for _ in 0..3 {
        let c = dir.join("libdcgm_sim.so");
        if c.exists() {
            return Some(c);
        }
        dir.pop();
    }
    None
}

#[test]
fn nothing_found_lists_every_candidate_with_its_error() {
    let err = LibraryLoader::new()
        .use_env(false)
        .path("/definitely/not/here/libdcgm.so.4")
        .open()
        .unwrap_err();
    assert_eq!(err.attempts.len(), 1);
    assert_eq!(err.attempts[0].source, "explicit path");
    assert!(err.attempts[0].error.contains("no such file"));
    let text = err.to_string();
    assert!(text.contains("/definitely/not/here/libdcgm.so.4"));
    assert!(text.contains(DCGM_PACKAGE));
}

#[test]
fn default_search_tries_sonames_then_distribution_directories() {
    let c = LibraryLoader::new().use_env(false).candidates();
    let names: Vec<String> = c
        .iter()
        .map(|(p, _)| p.to_string_lossy().into_owned())
        .collect();
    assert_eq!(names[0], "libdcgm.so.4");
    assert_eq!(names[1], "libdcgm.so.3");
    assert!(names.contains(&"/usr/lib/x86_64-linux-gnu/libdcgm.so.4".to_string()));
    assert!(names.contains(&"/usr/lib64/libdcgm.so.4".to_string()));
}

#[test]
fn a_directory_path_means_the_sonames_inside_it() {
    let dir = std::env::temp_dir();
    let c = LibraryLoader::new().use_env(false).path(&dir).candidates();
    assert_eq!(c.len(), 2);
    assert_eq!(PathBuf::from(&c[0].0), dir.join("libdcgm.so.4"));
    assert_eq!(PathBuf::from(&c[1].0), dir.join("libdcgm.so.3"));
}

#[test]
fn a_library_without_dcgm_symbols_loads_with_every_function_missing() {
    // libm is a real shared library that exports none of DCGM's functions.
    let lib = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib/aarch64-linux-gnu/libm.so.6",
    ]
    .iter()
    .find(|p| std::path::Path::new(p).exists())
    .map(|p| DcgmLibrary::open_path(p).unwrap());
    let Some(lib) = lib else { return };
    assert_eq!(lib.missing_symbols().len(), DcgmApi::SYMBOLS.len());
    let err = lib.dcgmInit().unwrap_err();
    assert_eq!(err.symbol, "dcgmInit");
    assert!(err.to_string().contains("not available in this libdcgm"));
    assert!(!lib.is_simulator());
    assert_eq!(lib.major_version(), None);
}

#[test]
fn the_simulator_loads_by_path_and_says_so() {
    let Some(p) = sim_path() else {
        panic!("libdcgm_sim.so not built: cargo build -p dcgm-sim");
    };
    let lib = DcgmLibrary::open_path(&p).unwrap();
    assert!(lib.is_simulator());
    assert!(
        lib.missing_symbols().len() < 15,
        "{:?}",
        lib.missing_symbols()
    );
    assert_eq!(lib.major_version(), Some(4));
}

#[test]
fn symbol_table_has_every_agent_function_once() {
    let mut v = DcgmApi::SYMBOLS.to_vec();
    let n = v.len();
    v.sort();
    v.dedup();
    assert_eq!(v.len(), n);
    assert_eq!(n, 139);
}
