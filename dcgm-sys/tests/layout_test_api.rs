//! Field offsets and version words of the test-API structs, as gcc lays them out for the
//! DCGM 4.6 headers (LP64), and the test-API entries of the function table.

use core::mem::{offset_of, size_of};

use dcgm_sys::*;

#[test]
fn create_fake_entities_v2() {
    assert_eq!(offset_of!(dcgmCreateFakeEntities_v2, numToCreate), 4);
    assert_eq!(offset_of!(dcgmCreateFakeEntities_v2, entityList), 8);
    assert_eq!(offset_of!(dcgmMigHierarchyInfo_t, parent), 8);
    assert_eq!(offset_of!(dcgmMigHierarchyInfo_t, sliceProfile), 16);
    assert_eq!(size_of::<dcgmCreateFakeEntities_v2>(), 8968);
    assert_eq!(dcgmCreateFakeEntities_version, 0x0200_2308);
}

#[test]
fn cache_manager_field_info_v4() {
    type T = dcgmCacheManagerFieldInfo_v4_t;
    assert_eq!(offset_of!(T, flags), 4);
    assert_eq!(offset_of!(T, entityId), 8);
    assert_eq!(offset_of!(T, entityGroupId), 12);
    assert_eq!(offset_of!(T, fieldId), 16);
    assert_eq!(offset_of!(T, lastStatus), 18);
    assert_eq!(offset_of!(T, oldestTimestamp), 24);
    assert_eq!(offset_of!(T, newestTimestamp), 32);
    assert_eq!(offset_of!(T, monitorIntervalUsec), 40);
    assert_eq!(offset_of!(T, maxAgeUsec), 48);
    assert_eq!(offset_of!(T, execTimeUsec), 56);
    assert_eq!(offset_of!(T, fetchCount), 64);
    assert_eq!(offset_of!(T, numSamples), 72);
    assert_eq!(offset_of!(T, numWatchers), 76);
    assert_eq!(offset_of!(T, watchers), 80);
    assert_eq!(
        offset_of!(dcgm_cm_field_info_watcher_t, monitorIntervalUsec),
        8
    );
    assert_eq!(dcgmCacheManagerFieldInfo_version4, 0x0400_0140);
}

#[test]
fn nvlink_state_and_mig_entity_requests() {
    assert_eq!(offset_of!(dcgmSetNvLinkLinkState_v1, linkId), 12);
    assert_eq!(offset_of!(dcgmSetNvLinkLinkState_v1, linkState), 16);
    assert_eq!(dcgmSetNvLinkLinkState_version1, 0x0100_0018);
    assert_eq!(offset_of!(dcgmCreateMigEntity_v1, createOption), 12);
    assert_eq!(offset_of!(dcgmCreateMigEntity_v1, flags), 16);
    assert_eq!(dcgmCreateMigEntity_version, 0x0100_0014);
    assert_eq!(offset_of!(dcgmDeleteMigEntity_v1, flags), 12);
    assert_eq!(dcgmDeleteMigEntity_version, 0x0100_0010);
    assert_eq!(dcgmInjectFieldValue_version, 0x0100_1018);
    assert_eq!(dcgmModulesReloadable_version, 0x0100_0008);
}

#[test]
fn table_uses_the_exported_name_of_entity_injection() {
    assert!(DcgmApi::SYMBOLS.contains(&"dcgmInjectEntityFieldValue"));
    // Declared by dcgm_test_apis.h but not exported by libdcgm 4.6.
    assert!(!DcgmApi::SYMBOLS.contains(&"dcgmEntityInjectFieldValue"));
    for f in [
        "dcgmCreateFakeEntities",
        "dcgmInjectFieldValue",
        "dcgmGetCacheManagerFieldInfo",
        "dcgmEmptyCache",
        "dcgmSetEntityNvLinkLinkState",
        "dcgmPauseTelemetryForDiag",
        "dcgmResumeTelemetryForDiag",
        "dcgmMarkModulesReloadable",
        "dcgmCreateMigEntity",
        "dcgmDeleteMigEntity",
    ] {
        assert!(DcgmApi::SYMBOLS.contains(&f), "{f} missing");
    }
}

#[test]
fn nvml_injection_values() {
    assert_eq!(size_of::<injectNvmlVal_t>(), 13352);
    assert_eq!(offset_of!(injectNvmlVal_t, type_), 13344);
    assert_eq!(offset_of!(injectNvmlRet_t, values), 8);
    assert_eq!(offset_of!(injectNvmlRet_t, valueCount), 66768);
    assert_eq!(size_of::<injectNvmlRet_t>(), 66776);
    assert_eq!(offset_of!(injectNvmlFuncCallInfo_t, funcCallCount), 1024);
    assert_eq!(offset_of!(injectNvmlFuncCallCounts_t, numFuncs), 1052672);
    for f in [
        "dcgmCreateNvmlInjectionGpu",
        "dcgmInjectNvmlDevice",
        "dcgmInjectNvmlDeviceForFollowingCalls",
        "dcgmInjectedNvmlDeviceReset",
        "dcgmRemoveNvmlInjectedGpu",
        "dcgmRestoreNvmlInjectedGpu",
        "dcgmGetNvmlInjectFuncCallCount",
        "dcgmResetNvmlInjectFuncCallCount",
        "dcgmInjectEntityFieldValueToNvml",
    ] {
        assert!(DcgmApi::SYMBOLS.contains(&f), "{f} missing");
    }
}
