//! Field offsets of the health, policy, stats and diagnostic structs, as gcc lays them out for
//! the DCGM 4.6 headers (x86_64 / aarch64, LP64), and the version words of the large responses.

use core::mem::{offset_of, size_of};

use dcgm_sys::*;

#[test]
fn health_set_params_v2() {
    assert_eq!(offset_of!(dcgmHealthSetParams_v2, groupId), 8);
    assert_eq!(offset_of!(dcgmHealthSetParams_v2, systems), 16);
    assert_eq!(offset_of!(dcgmHealthSetParams_v2, updateInterval), 24);
    assert_eq!(offset_of!(dcgmHealthSetParams_v2, maxKeepAge), 32);
    assert_eq!(size_of::<dcgmHealthSetParams_v2>(), 40);
}

#[test]
fn health_response_v5() {
    assert_eq!(offset_of!(dcgmHealthResponse_v5, overallHealth), 4);
    assert_eq!(offset_of!(dcgmHealthResponse_v5, incidentCount), 8);
    assert_eq!(offset_of!(dcgmHealthResponse_v5, incidents), 12);
    assert_eq!(offset_of!(dcgmIncidentInfo_t, error), 8);
    assert_eq!(offset_of!(dcgmIncidentInfo_t, entityInfo), 1036);
    assert_eq!(size_of::<dcgmIncidentInfo_t>(), 1044);
}

#[test]
fn policy() {
    assert_eq!(offset_of!(dcgmPolicy_v1, response), 24);
    assert_eq!(offset_of!(dcgmPolicy_v1, parms), 32);
    assert_eq!(offset_of!(dcgmPolicyConditionParams_t, val), 8);
    assert_eq!(offset_of!(dcgmPolicyCallbackResponse_v2, condition), 4);
    assert_eq!(offset_of!(dcgmPolicyCallbackResponse_v2, val), 8);
    assert_eq!(offset_of!(dcgmPolicyCallbackResponse_v2, gpuId), 24);
    assert_eq!(offset_of!(dcgmPolicyConditionDbe_t, location), 8);
    assert_eq!(offset_of!(dcgmPolicyConditionDbe_t, numerrors), 12);
    assert_eq!(offset_of!(dcgmPolicyConditionNvlink_t, fieldId), 8);
    assert_eq!(offset_of!(dcgmPolicyConditionNvlink_t, counter), 12);
}

#[test]
fn pid_and_job_stats() {
    assert_eq!(offset_of!(dcgmPidInfo_v2, numGpus), 12);
    assert_eq!(offset_of!(dcgmPidInfo_v2, summary), 16);
    assert_eq!(offset_of!(dcgmPidInfo_v2, gpus), 552);
    assert_eq!(size_of::<dcgmPidSingleInfo_t>(), 536);
    assert_eq!(offset_of!(dcgmJobInfo_v3, summary), 8);
    assert_eq!(offset_of!(dcgmJobInfo_v3, gpus), 1192);
    assert_eq!(size_of::<dcgmGpuUsageInfo_t>(), 1184);
    assert_eq!(offset_of!(dcgmProcessUtilInfo_t, smUtil), 8);
}

#[test]
fn run_diag_v10() {
    assert_eq!(offset_of!(dcgmRunDiag_v10, groupId), 16);
    assert_eq!(offset_of!(dcgmRunDiag_v10, validate), 24);
    assert_eq!(offset_of!(dcgmRunDiag_v10, testNames), 28);
    assert_eq!(offset_of!(dcgmRunDiag_v10, testParms), 1028);
    assert_eq!(offset_of!(dcgmRunDiag_v10, entityIds), 116706);
    assert_eq!(offset_of!(dcgmRunDiag_v10, ignoreErrorCodes), 118760);
}

#[test]
fn diag_response_v12() {
    assert_eq!(offset_of!(dcgmDiagResponse_v12, numEntities), 8);
    assert_eq!(offset_of!(dcgmDiagResponse_v12, tests), 12);
    assert_eq!(offset_of!(dcgmDiagResponse_v12, entities), 86732);
    assert_eq!(offset_of!(dcgmDiagResponse_v12, errors), 365260);
    assert_eq!(offset_of!(dcgmDiagResponse_v12, info), 382412);
    assert_eq!(offset_of!(dcgmDiagResponse_v12, results), 449484);
    assert_eq!(offset_of!(dcgmDiagResponse_v12, categories), 777164);
    assert_eq!(offset_of!(dcgmDiagResponse_v12, dcgmVersion), 777264);
    assert_eq!(offset_of!(dcgmDiagResponse_v12, driverVersion), 777276);
    assert_eq!(offset_of!(dcgmDiagResponse_v12, _unused), 777532);
    assert_eq!(offset_of!(dcgmDiagTestRun_v2, result), 64);
    assert_eq!(offset_of!(dcgmDiagTestRun_v2, resultIndices), 234);
    assert_eq!(offset_of!(dcgmDiagTestRun_v2, auxData), 2284);
    assert_eq!(offset_of!(dcgmDiagStatus_v1, errorCode), 140);
}

#[test]
fn mn_diag() {
    assert_eq!(offset_of!(dcgmRunMnDiag_v1, testName), 18436);
    assert_eq!(offset_of!(dcgmRunMnDiag_v1, testParms), 18692);
    assert_eq!(offset_of!(dcgmMnDiagResponse_v1, hosts), 16);
    assert_eq!(offset_of!(dcgmMnDiagResponse_v1, tests), 42640);
    assert_eq!(offset_of!(dcgmMnDiagResponse_v1, entities), 61024);
    assert_eq!(offset_of!(dcgmMnDiagResponse_v1, errors), 378976);
    assert_eq!(offset_of!(dcgmMnDiagResponse_v1, info), 396256);
    assert_eq!(offset_of!(dcgmMnDiagResponse_v1, results), 463840);
}

#[test]
fn boxed_versioned_words() {
    let diag = <dcgmDiagResponse_v12 as Versioned>::boxed_versioned();
    assert_eq!(diag.version, 0x0C15_5ABC);
    assert_eq!(diag.version, dcgmDiagResponse_version);
    assert_eq!(diag.numTests, 0);

    let health = <dcgmHealthResponse_v5 as Versioned>::boxed_versioned();
    assert_eq!(health.version, 0x0510_500C);
    assert_eq!(health.version, dcgmHealthResponse_version);
    assert_eq!(health.incidentCount, 0);

    let mn = <dcgmMnDiagResponse_v1 as Versioned>::boxed_versioned();
    assert_eq!(mn.version, dcgmMnDiagResponse_version1);

    // Words of structs that have a version macro but no version member.
    assert_eq!(dcgmMnDiagHosts_version1, 0x0100_0250);
    assert_eq!(dcgmMnDiagTestRun_version1, 0x0100_11F4);
}
