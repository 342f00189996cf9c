//! Profiling: metric groups, pause and resume, and the module held by another client, against
//! dcgm-sim.
//!
//! The simulator is process-global and reads its configuration (`dcgmSimConfigure`) at the
//! next `dcgmInit`: every test takes the simulator lock, configures, opens its handle, and
//! closes every handle before returning.

mod common;

use common::*;
use dcgm::raw::sys::*;
use dcgm::*;

#[test]
fn profiling_metric_groups_and_pause() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let groups = Group::all_gpus(&h).profiling_metric_groups().unwrap();
    assert!(!groups.is_empty());
    assert!(groups.iter().all(|g| !g.fields.is_empty()));
    assert!(groups.iter().flat_map(|g| &g.fields).all(|f| f.is_known()));
    assert_eq!(h.system().profiling_metric_groups(3).unwrap(), groups);
    let empty = Group::create(&h, "beyond-prof-empty", GroupType::Empty).unwrap();
    assert!(matches!(
        empty.profiling_metric_groups(),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(
        code(&h.system().profiling_metric_groups(99).unwrap_err()),
        DCGM_ST_BADPARAM
    );
    // The simulated GPUs are Hopper: their metrics come from GPM, which cannot be paused.
    assert_eq!(
        code(&h.profiling_pause().unwrap_err()),
        DCGM_ST_NOT_SUPPORTED
    );
    assert_eq!(
        code(&h.profiling_resume().unwrap_err()),
        DCGM_ST_NOT_SUPPORTED
    );
    drop(empty);
    h.close().unwrap();
}

#[test]
fn profiling_held_by_another_client_says_what_to_do() {
    let _sim = sim(Some(r#"{"faults":{"profiling_in_use":true}}"#));
    let h = open(OperationMode::Auto);
    let e = Group::all_gpus(&h).profiling_metric_groups().unwrap_err();
    assert_eq!(code(&e), DCGM_ST_IN_USE);
    assert!(e.hint().is_some_and(|t| t.contains("profil")), "{e}");
    h.close().unwrap();
}
