//! Layout of the trickiest structs, as gcc lays out the DCGM 4.6 headers on x86_64, and the
//! completeness of the function table.

use core::mem::{offset_of, size_of};
use std::collections::HashSet;

use dcgm_sys::*;

#[test]
fn field_value_v1_has_padding_before_the_timestamp() {
    assert_eq!(offset_of!(dcgmFieldValue_v1, fieldType), 6);
    assert_eq!(offset_of!(dcgmFieldValue_v1, status), 8);
    assert_eq!(offset_of!(dcgmFieldValue_v1, ts), 16);
    assert_eq!(offset_of!(dcgmFieldValue_v1, value), 24);
}

#[test]
fn field_value_v2_keeps_its_explicit_unused_word() {
    assert_eq!(offset_of!(dcgmFieldValue_v2, fieldId), 12);
    assert_eq!(offset_of!(dcgmFieldValue_v2, unused), 20);
    assert_eq!(offset_of!(dcgmFieldValue_v2, ts), 24);
    assert_eq!(offset_of!(dcgmFieldValue_v2, value), 32);
}

#[test]
fn start_embedded_params_v3_pointers_are_eight_byte_aligned() {
    assert_eq!(offset_of!(dcgmStartEmbeddedV2Params_v3, version), 0);
    assert_eq!(offset_of!(dcgmStartEmbeddedV2Params_v3, opMode), 4);
    assert_eq!(offset_of!(dcgmStartEmbeddedV2Params_v3, dcgmHandle), 8);
    assert_eq!(offset_of!(dcgmStartEmbeddedV2Params_v3, logFile), 16);
    assert_eq!(offset_of!(dcgmStartEmbeddedV2Params_v3, severity), 24);
    assert_eq!(offset_of!(dcgmStartEmbeddedV2Params_v3, denyListCount), 28);
    assert_eq!(offset_of!(dcgmStartEmbeddedV2Params_v3, serviceAccount), 32);
    assert_eq!(offset_of!(dcgmStartEmbeddedV2Params_v3, denyList), 40);
    assert_eq!(dcgmStartEmbeddedV2Params_version, 0x0300_0068);
}

#[test]
fn start_embedded_params_v1_has_the_deny_list_right_after_the_count() {
    assert_eq!(offset_of!(dcgmStartEmbeddedV2Params_v1, denyList), 32);
    assert_eq!(offset_of!(dcgmStartEmbeddedV2Params_v2, denyList), 40);
}

#[test]
fn group_and_field_group_arrays_start_after_the_names() {
    assert_eq!(offset_of!(dcgmGroupInfo_v3, groupName), 8);
    assert_eq!(offset_of!(dcgmGroupInfo_v3, entityList), 264);
    assert_eq!(offset_of!(dcgmFieldGroupInfo_v1, fieldGroupId), 8);
    assert_eq!(offset_of!(dcgmFieldGroupInfo_v1, fieldGroupName), 16);
    assert_eq!(offset_of!(dcgmFieldGroupInfo_v1, fieldIds), 272);
    assert_eq!(offset_of!(dcgmAllFieldGroup_v1, fieldGroups), 8);
}

#[test]
fn field_summary_request_aligns_its_times() {
    assert_eq!(offset_of!(dcgmFieldSummaryRequest_v1, entityGroupId), 8);
    assert_eq!(offset_of!(dcgmFieldSummaryRequest_v1, startTime), 24);
    assert_eq!(offset_of!(dcgmFieldSummaryRequest_v1, response), 40);
    assert_eq!(offset_of!(dcgmSummaryResponse_t, values), 8);
}

#[test]
fn device_topology_uses_unsigned_long_masks() {
    assert_eq!(offset_of!(dcgmDeviceTopology_v2, cpuAffinityMask), 8);
    assert_eq!(offset_of!(dcgmDeviceTopology_v2, numGpus), 72);
    assert_eq!(offset_of!(dcgmDeviceTopology_v2, gpuPaths), 80);
    assert_eq!(size_of::<dcgmDeviceTopology_v2__bindgen_ty_1>(), 24);
    assert_eq!(offset_of!(dcgmDeviceTopology_v1, gpuPaths), 76);
    assert_eq!(offset_of!(dcgmGroupTopology_v2, slowestPath), 80);
}

#[test]
fn device_attributes_sub_structs_are_packed_back_to_back() {
    assert_eq!(offset_of!(dcgmDeviceAttributes_v3, clockSets), 4);
    assert_eq!(offset_of!(dcgmDeviceAttributes_v3, thermalSettings), 3084);
    assert_eq!(offset_of!(dcgmDeviceAttributes_v3, powerLimits), 3096);
    assert_eq!(offset_of!(dcgmDeviceAttributes_v3, identifiers), 3120);
    assert_eq!(offset_of!(dcgmDeviceAttributes_v3, memoryUsage), 5184);
    assert_eq!(offset_of!(dcgmDeviceAttributes_v3, settings), 5204);
}

#[test]
fn nvlink_status_v5_switches_follow_36_links_per_gpu() {
    assert_eq!(offset_of!(dcgmNvLinkStatus_v5, gpus), 8);
    assert_eq!(offset_of!(dcgmNvLinkStatus_v5, numNvSwitches), 4744);
    assert_eq!(offset_of!(dcgmNvLinkStatus_v5, nvSwitches), 4748);
    assert_eq!(offset_of!(dcgmNvLinkStatus_v4, numNvSwitches), 2440);
}

#[test]
fn prof_metric_groups_v3_puts_the_gpu_id_after_an_unused_word() {
    assert_eq!(offset_of!(dcgmProfGetMetricGroups_v3, gpuId), 8);
    assert_eq!(offset_of!(dcgmProfGetMetricGroups_v3, numMetricGroups), 12);
    assert_eq!(offset_of!(dcgmProfGetMetricGroups_v3, metricGroups), 16);
    assert_eq!(offset_of!(dcgmProfMetricGroupInfo_v2, fieldIds), 8);
}

#[test]
fn cpu_hierarchy_cores_are_eight_byte_aligned() {
    assert_eq!(offset_of!(dcgmCpuHierarchyCpu_v1, ownedCores), 8);
    assert_eq!(offset_of!(dcgmCpuHierarchyOwnedCores_v1, bitmask), 8);
    assert_eq!(offset_of!(dcgmCpuHierarchy_v2, cpus), 8);
    assert_eq!(offset_of!(dcgmCpuHierarchyCpu_v2, serial), 144);
}

#[test]
fn config_and_power_profile_offsets() {
    assert_eq!(offset_of!(dcgmConfig_v2, perfState), 16);
    assert_eq!(offset_of!(dcgmConfig_v2, powerLimit), 32);
    assert_eq!(offset_of!(dcgmConfig_v2, workloadPowerProfiles), 40);
    assert_eq!(offset_of!(dcgmWorkloadPowerProfile_v1, groupId), 8);
    assert_eq!(offset_of!(dcgmWorkloadPowerProfile_v1, action), 16);
    assert_eq!(
        offset_of!(dcgmWorkloadPowerProfileProfilesInfo_v1, profileCount),
        11224
    );
}

#[test]
fn error_meta_and_error_info_offsets() {
    assert_eq!(offset_of!(dcgm_error_meta_t, msgFormat), 8);
    assert_eq!(offset_of!(dcgm_error_meta_t, severity), 24);
    assert_eq!(offset_of!(dcgmErrorInfo_t, fieldId), 4);
    assert_eq!(offset_of!(dcgmErrorInfo_t, status), 8);
}

#[test]
fn link_id_packs_type_index_and_parent_like_the_c_bitfield() {
    // gcc: type = DCGM_FE_SWITCH, index = 0x1234, switchId = 0xAB gives raw 0xAB123403.
    let link = dcgm_link_t::new(DCGM_FE_SWITCH, 0x1234, 0xAB);
    assert_eq!(link.raw(), 0xAB12_3403);
    assert_eq!(link.type_(), DCGM_FE_SWITCH);
    assert_eq!(link.index(), 0x1234);
    assert_eq!(link.parent_id(), 0xAB);
    assert_eq!(link.switchId(), 0xAB);

    let gpu_link = dcgm_link_t::from_raw(0x0500_0701);
    assert_eq!(gpu_link.type_(), DCGM_FE_GPU);
    assert_eq!(gpu_link.index(), 7);
    assert_eq!(gpu_link.gpuId(), 5);
    assert_eq!(size_of::<dcgm_link_t>(), 4);
    assert_eq!(align_of::<dcgm_link_t>(), 1);
    assert_eq!(dcgmLink_version1, 0x0100_0004);
}

#[test]
fn link_id_constructor_drops_type_bits_above_eight() {
    assert_eq!(dcgm_link_t::new(0x1FF, 0, 0).type_(), 0xFF);
}

#[test]
fn version_words_without_a_version_member_match_dcgm() {
    assert_eq!(dcgmSettingsSetLoggingSeverity_version1, 0x0100_0008);
    assert_eq!(dcgmSettingsSetLoggingSeverity_version, 0x0200_000C);
    assert_eq!(dcgmInjectFieldValue_version, dcgmFieldValue_version1);
}

/// Every function `dcgm_agent.h` of DCGM 4.6.0 declares.
const AGENT_FUNCTIONS: [&str; 99] = [
    "dcgmActionValidate",
    "dcgmActionValidate_v2",
    "dcgmAddFakeInstances",
    "dcgmAttachDriver",
    "dcgmConfigEnforce",
    "dcgmConfigGet",
    "dcgmConfigSet",
    "dcgmConfigSetWorkloadPowerProfile",
    "dcgmConnect",
    "dcgmConnect_v2",
    "dcgmConnect_v3",
    "dcgmDetachDriver",
    "dcgmDiagSendHeartbeat",
    "dcgmDisconnect",
    "dcgmEngineRun",
    "dcgmEntitiesGetLatestValues",
    "dcgmEntityGetLatestValues",
    "dcgmFieldGroupCreate",
    "dcgmFieldGroupDestroy",
    "dcgmFieldGroupGetAll",
    "dcgmFieldGroupGetInfo",
    "dcgmGetAllDevices",
    "dcgmGetAllSupportedDevices",
    "dcgmGetCpuHierarchy",
    "dcgmGetCpuHierarchy_v2",
    "dcgmGetDeviceAttributes",
    "dcgmGetDeviceTopology",
    "dcgmGetDeviceWorkloadPowerProfileInfo",
    "dcgmGetEntityGroupEntities",
    "dcgmGetFieldSummary",
    "dcgmGetGpuChipArchitecture",
    "dcgmGetGpuInstanceHierarchy",
    "dcgmGetGpuStatus",
    "dcgmGetGroupTopology",
    "dcgmGetLatestValues",
    "dcgmGetLatestValuesForFields",
    "dcgmGetLatestValues_v2",
    "dcgmGetNvLinkLinkStatus",
    "dcgmGetNvLinkP2PStatus",
    "dcgmGetPidInfo",
    "dcgmGetValuesSince",
    "dcgmGetValuesSince_v2",
    "dcgmGroupAddDevice",
    "dcgmGroupAddEntity",
    "dcgmGroupCreate",
    "dcgmGroupDestroy",
    "dcgmGroupGetAllIds",
    "dcgmGroupGetInfo",
    "dcgmGroupRemoveDevice",
    "dcgmGroupRemoveEntity",
    "dcgmHealthCheck",
    "dcgmHealthGet",
    "dcgmHealthSet",
    "dcgmHealthSet_v2",
    "dcgmHostengineEnvironmentVariableInfo",
    "dcgmHostengineIsHealthy",
    "dcgmHostengineSetLoggingSeverity",
    "dcgmHostengineVersionInfo",
    "dcgmInit",
    "dcgmIntrospectGetHostengineCpuUtilization",
    "dcgmIntrospectGetHostengineMemoryUsage",
    "dcgmJobGetStats",
    "dcgmJobRemove",
    "dcgmJobRemoveAll",
    "dcgmJobStartStats",
    "dcgmJobStopStats",
    "dcgmModuleDenylist",
    "dcgmModuleGetStatuses",
    "dcgmModuleIdToName",
    "dcgmPolicyGet",
    "dcgmPolicyRegister_v2",
    "dcgmPolicySet",
    "dcgmPolicyTrigger",
    "dcgmPolicyUnregister",
    "dcgmPowerProfileIdToName",
    "dcgmProfGetSupportedMetricGroups",
    "dcgmProfPause",
    "dcgmProfResume",
    "dcgmRunDiagnostic",
    "dcgmRunMnDiagnostic",
    "dcgmSelectGpusByTopology",
    "dcgmShutdown",
    "dcgmStartEmbedded",
    "dcgmStartEmbedded_v2",
    "dcgmStatusClear",
    "dcgmStatusCreate",
    "dcgmStatusDestroy",
    "dcgmStatusGetCount",
    "dcgmStatusPopError",
    "dcgmStopDiagnostic",
    "dcgmStopEmbedded",
    "dcgmStopMnDiagnostic",
    "dcgmUnwatchFields",
    "dcgmUpdateAllFields",
    "dcgmVersionInfo",
    "dcgmWatchFields",
    "dcgmWatchJobFields",
    "dcgmWatchPidFields",
    "errorString",
];

#[test]
fn function_table_has_no_duplicate_symbols() {
    let unique: HashSet<&str> = DcgmApi::SYMBOLS.iter().copied().collect();
    assert_eq!(unique.len(), DcgmApi::SYMBOLS.len());
}

#[test]
fn function_table_covers_every_agent_function() {
    let unique: HashSet<&str> = AGENT_FUNCTIONS.iter().copied().collect();
    assert_eq!(unique.len(), AGENT_FUNCTIONS.len());
    let missing: Vec<&str> = AGENT_FUNCTIONS
        .iter()
        .copied()
        .filter(|f| !DcgmApi::SYMBOLS.contains(f))
        .collect();
    assert!(missing.is_empty(), "missing from DcgmApi: {missing:?}");
}

#[test]
fn function_table_covers_the_field_and_error_functions() {
    for f in [
        "DcgmFieldGetById",
        "DcgmFieldGetByTag",
        "DcgmFieldsInit",
        "DcgmFieldsTerm",
        "DcgmFieldsGetEntityGroupString",
        "dcgmGetErrorMeta",
        "dcgmErrorGetPriorityByCode",
        "dcgmErrorGetCategoryByCode",
        "dcgmErrorGetFormatMsgByCode",
    ] {
        assert!(DcgmApi::SYMBOLS.contains(&f), "{f} missing");
    }
}

#[test]
fn failure_reason_table_is_indexed_by_code() {
    assert_eq!(FAILURE_REASONS.len(), DCGM_FR_ERROR_SENTINEL as usize + 1);
    for (i, (code, _)) in FAILURE_REASONS.iter().enumerate() {
        assert_eq!(*code as usize, i);
    }
    assert_eq!(
        failure_reason_name(DCGM_FR_CLOCK_THROTTLE_POWER),
        Some("DCGM_FR_CLOCKS_EVENT_POWER")
    );
}
