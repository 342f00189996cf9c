//! Diagnostics: levels, requests and typed results, against dcgm-sim.
//!
//! The simulator is process-global and reads its configuration (`dcgmSimConfigure`) at the
//! next `dcgmInit`: every test takes the simulator lock, configures, opens its handle, and
//! closes every handle before returning.

mod common;

use std::time::Duration;

use common::*;
use dcgm::raw::sys::*;
use dcgm::*;

#[test]
fn diagnostic_levels_and_typed_results() {
    let _sim = sim(Some(
        r#"{"events":[{"at_ms":0,"gpu":1,"kind":"dbe","value":2}]}"#,
    ));
    let h = open(OperationMode::Auto);
    let g = Group::with_gpus(&h, "beyond-diag", &[0, 1]).unwrap();

    let counts: Vec<usize> = [
        DiagLevel::Short,
        DiagLevel::Medium,
        DiagLevel::Long,
        DiagLevel::ExtraLong,
    ]
    .iter()
    .map(|l| g.run_diagnostic(*l).unwrap().tests.len())
    .collect();
    assert_eq!(counts, vec![1, 3, 7, 9]);

    let short = g.run_diagnostic(DiagLevel::Short).unwrap();
    assert_eq!(short.tests[0].name, "software");
    assert_eq!(short.overall(), DiagResult::Pass);

    let r = g.run_diagnostic(DiagLevel::Medium).unwrap();
    assert_eq!(r.overall(), DiagResult::Fail);
    assert_eq!(r.entities.len(), 2);
    assert!(
        r.entities
            .iter()
            .all(|e| e.serial.is_some() && e.sku_device_id.is_some())
    );
    assert!(!r.dcgm_version.is_empty());
    assert_eq!(r.driver_version, "570.133.20");
    assert!(r.other_errors.is_empty());
    let mem = r.test("memory").expect("memory test");
    assert_eq!(mem.result, DiagResult::Fail);
    assert_eq!(mem.category.as_deref(), Some("Hardware"));
    assert_eq!(
        mem.results,
        vec![
            (Entity::gpu(0), DiagResult::Pass),
            (Entity::gpu(1), DiagResult::Fail)
        ]
    );
    assert_eq!(mem.errors.len(), 1);
    let err = &mem.errors[0];
    assert_eq!(err.entity, Some(Entity::gpu(1)));
    assert_eq!(err.code, DCGM_FR_VOLATILE_DBE_DETECTED);
    assert_eq!(err.code_name, Some("DCGM_FR_VOLATILE_DBE_DETECTED"));
    assert_eq!(err.severity, Some(ErrorSeverity::Isolate));
    assert_eq!(err.category, Some(ErrorCategory::HardwareMemory));
    assert_eq!(r.test("pcie").unwrap().result, DiagResult::Pass);

    // Named tests, through dcgmActionValidate_v2.
    let req = DiagRequest::tests(["pcie", "memory"])
        .param("memory.minimum_allocation_percentage=50")
        .verbose(true)
        .fail_early(true)
        .timeout(Duration::from_secs(60));
    let r = g.run_diag(&req).unwrap();
    let names: Vec<&str> = r.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["pcie", "memory"]);
    let r = g.run_diag(&DiagRequest::level(DiagLevel::Long)).unwrap();
    assert_eq!(r.tests.len(), 7);

    // MIG GPUs skip the hardware tests, with an explanation.
    let mig = Group::with_gpus(&h, "beyond-diag-mig", &[7]).unwrap();
    let r = mig.run_diagnostic(DiagLevel::Medium).unwrap();
    let pcie = r.test("pcie").unwrap();
    assert_eq!(pcie.result, DiagResult::Skip);
    assert!(
        pcie.info.iter().any(|m| m.contains("MIG")),
        "{:?}",
        pcie.info
    );

    // Wrong inputs.
    let e = g
        .run_diag(&DiagRequest::tests(["no_such_test"]))
        .unwrap_err();
    assert_eq!(code(&e), DCGM_ST_BADPARAM, "{e}");
    let many: Vec<String> = (0..21).map(|i| format!("t{i}")).collect();
    assert!(matches!(
        g.run_diag(&DiagRequest::tests(many)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        g.run_diag(&DiagRequest::level(DiagLevel::Short).param("no-equals-sign")),
        Err(Error::InvalidArgument(_))
    ));
    let empty = Group::create(&h, "beyond-diag-empty", GroupType::Empty).unwrap();
    let e = empty.run_diagnostic(DiagLevel::Short).unwrap_err();
    assert_eq!(code(&e), DCGM_ST_GROUP_IS_EMPTY, "{e}");

    h.stop_diagnostic().unwrap();
    drop((g, mig, empty));
    h.close().unwrap();
}
