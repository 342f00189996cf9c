//! Every exported libdcgm function this crate binds, in one table.
//!
//! The table holds the 99 functions of `dcgm_agent.h`, the field-metadata functions of
//! `dcgm_fields.h`, the failure-reason functions of `dcgm_errors.h`, the helper of
//! `dcgm_helpers.h`, and the exported functions of DCGM's internal test header whose
//! arguments are public or plain C types. Parameter names are the C ones.

use std::ffi::{c_char, c_int, c_void};

use crate::*;

crate::library::dcgm_api! {
    // Lifecycle and connections.

    /// Initialises DCGM for the process (not reference-counted by the library).
    fn dcgmInit() -> dcgmReturn_t;
    /// Tears down every connection and the embedded engine of the process.
    fn dcgmShutdown() -> dcgmReturn_t;
    /// Runs a host-engine listener inside this process (TCP, unix socket or vsock, by
    /// `dcgmConnectionType_t`).
    fn dcgmEngineRun(portNumber: u16, socketPath: *const c_char, connectionType: u32) -> dcgmReturn_t;
    /// Starts the embedded host engine.
    fn dcgmStartEmbedded(opMode: dcgmOperationMode_t, pDcgmHandle: *mut dcgmHandle_t) -> dcgmReturn_t;
    /// Starts the embedded host engine with logging and module options; accepts params
    /// versions 1 to 3 (pass a `dcgmStartEmbeddedV2Params_v3` cast to the v1 pointer).
    fn dcgmStartEmbedded_v2(params: *mut dcgmStartEmbeddedV2Params_v1) -> dcgmReturn_t;
    /// Stops the embedded host engine.
    fn dcgmStopEmbedded(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Connects to a host engine at `"ip"` or `"ip:port"`.
    fn dcgmConnect(ipAddress: *const c_char, pDcgmHandle: *mut dcgmHandle_t) -> dcgmReturn_t;
    /// Connects to a host engine by TCP address or unix socket path, with options.
    fn dcgmConnect_v2(ipAddress: *const c_char, connectParams: *mut dcgmConnectV2Params_t, pDcgmHandle: *mut dcgmHandle_t) -> dcgmReturn_t;
    /// Connects to a host engine by connection string (`tcp://`, `unix://`, `vsock://`).
    fn dcgmConnect_v3(connectionString: *const c_char, connectParams: *mut dcgmConnectV3Params_t, pDcgmHandle: *mut dcgmHandle_t) -> dcgmReturn_t;
    /// Closes a connection to a host engine.
    fn dcgmDisconnect(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;

    // Versions, host-engine settings and modules.

    /// Version of the client library.
    fn dcgmVersionInfo(pVersionInfo: *mut dcgmVersionInfo_t) -> dcgmReturn_t;
    /// Version of the host engine behind a handle.
    fn dcgmHostengineVersionInfo(pDcgmHandle: dcgmHandle_t, pVersionInfo: *mut dcgmVersionInfo_t) -> dcgmReturn_t;
    /// Changes the host engine's log severity at run time.
    fn dcgmHostengineSetLoggingSeverity(pDcgmHandle: dcgmHandle_t, logging: *mut dcgmSettingsSetLoggingSeverity_t) -> dcgmReturn_t;
    /// Asks whether the host engine is healthy.
    fn dcgmHostengineIsHealthy(pDcgmHandle: dcgmHandle_t, heHealth: *mut dcgmHostengineHealth_t) -> dcgmReturn_t;
    /// Reads one of the host engine's environment variables.
    fn dcgmHostengineEnvironmentVariableInfo(pDcgmHandle: dcgmHandle_t, pEnvVarInfo: *mut dcgmEnvVarInfo_t) -> dcgmReturn_t;
    /// Text for a return code, or NULL for unknown codes.
    fn errorString(result: dcgmReturn_t) -> *const c_char;
    /// The name of a module; the string belongs to the library.
    fn dcgmModuleIdToName(id: dcgmModuleId_t, name: *mut *const c_char) -> dcgmReturn_t;
    /// Prevents a module from being loaded (only before it loads).
    fn dcgmModuleDenylist(pDcgmHandle: dcgmHandle_t, moduleId: dcgmModuleId_t) -> dcgmReturn_t;
    /// The load state of every module.
    fn dcgmModuleGetStatuses(pDcgmHandle: dcgmHandle_t, moduleStatuses: *mut dcgmModuleGetStatuses_t) -> dcgmReturn_t;
    /// Lets the host engine open the NVIDIA driver again after a detach.
    fn dcgmAttachDriver(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Makes the host engine release the NVIDIA driver (for driver upgrades).
    fn dcgmDetachDriver(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;

    // Discovery.

    /// Ids of every GPU, supported or not.
    fn dcgmGetAllDevices(pDcgmHandle: dcgmHandle_t, gpuIdList: *mut u32, count: *mut c_int) -> dcgmReturn_t;
    /// Ids of the GPUs DCGM supports.
    fn dcgmGetAllSupportedDevices(pDcgmHandle: dcgmHandle_t, gpuIdList: *mut u32, count: *mut c_int) -> dcgmReturn_t;
    /// Static attributes of a GPU.
    fn dcgmGetDeviceAttributes(pDcgmHandle: dcgmHandle_t, gpuId: u32, pDcgmAttr: *mut dcgmDeviceAttributes_t) -> dcgmReturn_t;
    /// Whether a GPU is usable, lost, fake, detached...
    fn dcgmGetGpuStatus(pDcgmHandle: dcgmHandle_t, gpuId: u32, status: *mut DcgmEntityStatus_t) -> dcgmReturn_t;
    /// The workload power profiles a GPU offers and which are requested and enforced.
    fn dcgmGetDeviceWorkloadPowerProfileInfo(pDcgmHandle: dcgmHandle_t, gpuId: u32, profilesInfo: *mut dcgmWorkloadPowerProfileProfilesInfo_v1, profilesStatus: *mut dcgmDeviceWorkloadPowerProfilesStatus_v1) -> dcgmReturn_t;
    /// The entities of one entity group; `numEntities` is the capacity in and the count out.
    fn dcgmGetEntityGroupEntities(dcgmHandle: dcgmHandle_t, entityGroup: dcgm_field_entity_group_t, entities: *mut dcgm_field_eid_t, numEntities: *mut c_int, flags: u32) -> dcgmReturn_t;
    /// The architecture of a GPU.
    fn dcgmGetGpuChipArchitecture(dcgmHandle: dcgmHandle_t, gpuId: u32, chipArchitecture: *mut dcgmChipArchitecture_t) -> dcgmReturn_t;
    /// Every MIG GPU and compute instance of the node.
    fn dcgmGetGpuInstanceHierarchy(dcgmHandle: dcgmHandle_t, hierarchy: *mut dcgmMigHierarchy_v2) -> dcgmReturn_t;
    /// NVLink states of every GPU and NvSwitch.
    fn dcgmGetNvLinkLinkStatus(dcgmHandle: dcgmHandle_t, linkStatus: *mut dcgmNvLinkStatus_v5) -> dcgmReturn_t;
    /// Peer-to-peer status between GPUs.
    fn dcgmGetNvLinkP2PStatus(dcgmHandle: dcgmHandle_t, linkStatus: *mut dcgmNvLinkP2PStatus_v1) -> dcgmReturn_t;
    /// CPUs of the node and the cores each owns.
    fn dcgmGetCpuHierarchy(dcgmHandle: dcgmHandle_t, cpuHierarchy: *mut dcgmCpuHierarchy_v1) -> dcgmReturn_t;
    /// CPUs of the node, their cores and serial numbers.
    fn dcgmGetCpuHierarchy_v2(dcgmHandle: dcgmHandle_t, cpuHierarchy: *mut dcgmCpuHierarchy_v2) -> dcgmReturn_t;
    /// Whether a core belongs to a CPU's owned-core mask (1) or not (0).
    fn dcgmCpuHierarchyCpuOwnsCore(coreId: u32, ownedCores: *const dcgmCpuHierarchyOwnedCores_v1) -> u32;

    // Groups.

    /// Creates a group, empty or pre-filled by `type_`.
    fn dcgmGroupCreate(pDcgmHandle: dcgmHandle_t, type_: dcgmGroupType_t, groupName: *const c_char, pDcgmGrpId: *mut dcgmGpuGrp_t) -> dcgmReturn_t;
    /// Destroys a group.
    fn dcgmGroupDestroy(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t) -> dcgmReturn_t;
    /// Adds a GPU to a group.
    fn dcgmGroupAddDevice(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, gpuId: u32) -> dcgmReturn_t;
    /// Adds any entity to a group.
    fn dcgmGroupAddEntity(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, entityGroupId: dcgm_field_entity_group_t, entityId: dcgm_field_eid_t) -> dcgmReturn_t;
    /// Removes a GPU from a group.
    fn dcgmGroupRemoveDevice(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, gpuId: u32) -> dcgmReturn_t;
    /// Removes any entity from a group.
    fn dcgmGroupRemoveEntity(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, entityGroupId: dcgm_field_entity_group_t, entityId: dcgm_field_eid_t) -> dcgmReturn_t;
    /// A group's name and members.
    fn dcgmGroupGetInfo(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, pDcgmGroupInfo: *mut dcgmGroupInfo_t) -> dcgmReturn_t;
    /// Ids of every group; the array needs room for `DCGM_MAX_NUM_GROUPS` entries.
    fn dcgmGroupGetAllIds(pDcgmHandle: dcgmHandle_t, groupIdList: *mut dcgmGpuGrp_t, count: *mut u32) -> dcgmReturn_t;

    // Field groups.

    /// Creates a field group.
    fn dcgmFieldGroupCreate(dcgmHandle: dcgmHandle_t, numFieldIds: c_int, fieldIds: *const u16, fieldGroupName: *const c_char, dcgmFieldGroupId: *mut dcgmFieldGrp_t) -> dcgmReturn_t;
    /// Destroys a field group.
    fn dcgmFieldGroupDestroy(dcgmHandle: dcgmHandle_t, dcgmFieldGroupId: dcgmFieldGrp_t) -> dcgmReturn_t;
    /// A field group's name and fields (set `fieldGroupId` first).
    fn dcgmFieldGroupGetInfo(dcgmHandle: dcgmHandle_t, fieldGroupInfo: *mut dcgmFieldGroupInfo_t) -> dcgmReturn_t;
    /// Every field group.
    fn dcgmFieldGroupGetAll(dcgmHandle: dcgmHandle_t, allGroupInfo: *mut dcgmAllFieldGroup_t) -> dcgmReturn_t;

    // Status objects.

    /// Creates a status object that collects per-entity errors.
    fn dcgmStatusCreate(statusHandle: *mut dcgmStatus_t) -> dcgmReturn_t;
    /// Destroys a status object.
    fn dcgmStatusDestroy(statusHandle: dcgmStatus_t) -> dcgmReturn_t;
    /// Number of errors a status object holds.
    fn dcgmStatusGetCount(statusHandle: dcgmStatus_t, count: *mut u32) -> dcgmReturn_t;
    /// Removes and returns the oldest error of a status object (NO_DATA when empty).
    fn dcgmStatusPopError(statusHandle: dcgmStatus_t, pDcgmErrorInfo: *mut dcgmErrorInfo_t) -> dcgmReturn_t;
    /// Drops every error of a status object.
    fn dcgmStatusClear(statusHandle: dcgmStatus_t) -> dcgmReturn_t;

    // Configuration.

    /// Applies a configuration to every GPU of a group.
    fn dcgmConfigSet(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, pDeviceConfig: *mut dcgmConfig_t, statusHandle: dcgmStatus_t) -> dcgmReturn_t;
    /// The target or current configuration of each GPU of a group.
    fn dcgmConfigGet(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, type_: dcgmConfigType_t, count: c_int, deviceConfigList: *mut dcgmConfig_t, statusHandle: dcgmStatus_t) -> dcgmReturn_t;
    /// Sets, replaces or clears workload power profiles of a group.
    fn dcgmConfigSetWorkloadPowerProfile(pDcgmHandle: dcgmHandle_t, workloadPowerProfile: *mut dcgmWorkloadPowerProfile_t) -> dcgmReturn_t;
    /// Re-applies the target configuration (after a reset, for example).
    fn dcgmConfigEnforce(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, statusHandle: dcgmStatus_t) -> dcgmReturn_t;
    /// The name of a workload power profile; the string belongs to the library.
    fn dcgmPowerProfileIdToName(id: dcgmPowerProfileType_t, name: *mut *const c_char) -> dcgmReturn_t;

    // Watches and values.

    /// Starts sampling a field group on a group (interval in µs, age in s).
    fn dcgmWatchFields(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, fieldGroupId: dcgmFieldGrp_t, updateFreq: i64, maxKeepAge: f64, maxKeepSamples: c_int) -> dcgmReturn_t;
    /// Stops sampling a field group on a group.
    fn dcgmUnwatchFields(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, fieldGroupId: dcgmFieldGrp_t) -> dcgmReturn_t;
    /// Samples since a timestamp, per GPU, through a callback.
    fn dcgmGetValuesSince(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, fieldGroupId: dcgmFieldGrp_t, sinceTimestamp: i64, nextSinceTimestamp: *mut i64, enumCB: dcgmFieldValueEnumeration_f, userData: *mut c_void) -> dcgmReturn_t;
    /// Samples since a timestamp, per entity, through a callback.
    fn dcgmGetValuesSince_v2(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, fieldGroupId: dcgmFieldGrp_t, sinceTimestamp: i64, nextSinceTimestamp: *mut i64, enumCB: dcgmFieldValueEntityEnumeration_f, userData: *mut c_void) -> dcgmReturn_t;
    /// Latest samples, per GPU, through a callback.
    fn dcgmGetLatestValues(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, fieldGroupId: dcgmFieldGrp_t, enumCB: dcgmFieldValueEnumeration_f, userData: *mut c_void) -> dcgmReturn_t;
    /// Latest samples, per entity, through a callback.
    fn dcgmGetLatestValues_v2(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, fieldGroupId: dcgmFieldGrp_t, enumCB: dcgmFieldValueEntityEnumeration_f, userData: *mut c_void) -> dcgmReturn_t;
    /// Latest values of fields for one GPU.
    fn dcgmGetLatestValuesForFields(pDcgmHandle: dcgmHandle_t, gpuId: c_int, fields: *mut u16, count: u32, values: *mut dcgmFieldValue_v1) -> dcgmReturn_t;
    /// Latest values of fields for one entity.
    fn dcgmEntityGetLatestValues(pDcgmHandle: dcgmHandle_t, entityGroup: dcgm_field_entity_group_t, entityId: c_int, fields: *mut u16, count: u32, values: *mut dcgmFieldValue_v1) -> dcgmReturn_t;
    /// Latest values of fields for many entities (`entityCount * fieldCount` outputs).
    fn dcgmEntitiesGetLatestValues(pDcgmHandle: dcgmHandle_t, entities: *mut dcgmGroupEntityPair_t, entityCount: u32, fields: *mut u16, fieldCount: u32, flags: u32, values: *mut dcgmFieldValue_v2) -> dcgmReturn_t;
    /// Min/max/average/... of one field of one entity over a time range.
    fn dcgmGetFieldSummary(pDcgmHandle: dcgmHandle_t, request: *mut dcgmFieldSummaryRequest_t) -> dcgmReturn_t;
    /// Samples every watched field now (needed in manual mode); 1 waits for the update.
    fn dcgmUpdateAllFields(pDcgmHandle: dcgmHandle_t, waitForUpdate: c_int) -> dcgmReturn_t;

    // Process and job statistics (watches).

    /// Starts the watches process statistics need (interval in µs, age in s).
    fn dcgmWatchPidFields(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, updateFreq: i64, maxKeepAge: f64, maxKeepSamples: c_int) -> dcgmReturn_t;
    /// Starts the watches job statistics need (interval in µs, age in s).
    fn dcgmWatchJobFields(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, updateFreq: i64, maxKeepAge: f64, maxKeepSamples: c_int) -> dcgmReturn_t;
    /// Starts recording a job (the id is a NUL-terminated string of up to 64 bytes).
    fn dcgmJobStartStats(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, jobId: *mut c_char) -> dcgmReturn_t;
    /// Stops recording a job.
    fn dcgmJobStopStats(pDcgmHandle: dcgmHandle_t, jobId: *mut c_char) -> dcgmReturn_t;
    /// Forgets a job.
    fn dcgmJobRemove(pDcgmHandle: dcgmHandle_t, jobId: *mut c_char) -> dcgmReturn_t;
    /// Forgets every job.
    fn dcgmJobRemoveAll(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;

    // Topology, introspection, profiling.

    /// A GPU's CPU affinity and paths to the other GPUs.
    fn dcgmGetDeviceTopology(pDcgmHandle: dcgmHandle_t, gpuId: u32, pDcgmDeviceTopology: *mut dcgmDeviceTopology_v2) -> dcgmReturn_t;
    /// A group's common CPU affinity and slowest path.
    fn dcgmGetGroupTopology(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, pDcgmGroupTopology: *mut dcgmGroupTopology_v2) -> dcgmReturn_t;
    /// Picks `numGpus` of the candidate GPUs (bitmasks) with the best connections.
    fn dcgmSelectGpusByTopology(pDcgmHandle: dcgmHandle_t, inputGpuIds: u64, numGpus: u32, outputGpuIds: *mut u64, hintFlags: u64) -> dcgmReturn_t;
    /// Memory the host engine uses.
    fn dcgmIntrospectGetHostengineMemoryUsage(pDcgmHandle: dcgmHandle_t, memoryInfo: *mut dcgmIntrospectMemory_t, waitIfNoData: c_int) -> dcgmReturn_t;
    /// CPU time the host engine uses.
    fn dcgmIntrospectGetHostengineCpuUtilization(pDcgmHandle: dcgmHandle_t, cpuUtil: *mut dcgmIntrospectCpuUtil_t, waitIfNoData: c_int) -> dcgmReturn_t;
    /// The profiling metric groups a GPU supports.
    fn dcgmProfGetSupportedMetricGroups(pDcgmHandle: dcgmHandle_t, metricGroups: *mut dcgmProfGetMetricGroups_t) -> dcgmReturn_t;
    /// Pauses profiling so another tool (Nsight, CUPTI) can use the counters.
    fn dcgmProfPause(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Resumes profiling after a pause.
    fn dcgmProfResume(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Adds fake MIG instances (for tests).
    fn dcgmAddFakeInstances(pDcgmHandle: dcgmHandle_t, hierarchy: *mut dcgmMigHierarchy_v2) -> dcgmReturn_t;
    /// Runs the policy checks now (needed in manual mode).
    fn dcgmPolicyTrigger(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Stops a running diagnostic.
    fn dcgmStopDiagnostic(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Stops a running multi-node diagnostic.
    fn dcgmStopMnDiagnostic(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Tells a diagnostic started with the heartbeat flag that the client is still there.
    fn dcgmDiagSendHeartbeat(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;

    // Field metadata (dcgm_fields.h).

    /// Metadata of a field id, or NULL; the pointer dies with `dcgmShutdown`.
    fn DcgmFieldGetById(fieldId: u16) -> dcgm_field_meta_p;
    /// Metadata of a field by tag, or NULL; the pointer dies with `dcgmShutdown`.
    fn DcgmFieldGetByTag(tag: *const c_char) -> dcgm_field_meta_p;
    /// Builds the field-metadata table (done by `dcgmInit`); 0 on success.
    fn DcgmFieldsInit() -> c_int;
    /// Frees the field-metadata table (done by `dcgmShutdown`); 0 on success.
    fn DcgmFieldsTerm() -> c_int;
    /// The name of an entity group (`"GPU"`, `"Switch"`, ...).
    fn DcgmFieldsGetEntityGroupString(entityGroupId: dcgm_field_entity_group_t) -> *const c_char;

    // Failure reasons (dcgm_errors.h).

    /// The library's description of a failure reason, or NULL.
    fn dcgmGetErrorMeta(error: dcgmError_t) -> *const dcgm_error_meta_t;
    /// The severity of a failure reason.
    fn dcgmErrorGetPriorityByCode(code: u32) -> dcgmErrorSeverity_t;
    /// The category of a failure reason.
    fn dcgmErrorGetCategoryByCode(code: u32) -> dcgmErrorCategory_t;
    /// The printf-style message template of a failure reason.
    fn dcgmErrorGetFormatMsgByCode(code: u32) -> *const c_char;

    // Exported functions of the internal test header.

    /// Samples of one field of one GPU in a time range; `count` is the capacity in and the
    /// number returned out.
    fn dcgmGetMultipleValuesForField(pDcgmHandle: dcgmHandle_t, gpuId: c_int, fieldId: u16, count: *mut c_int, startTs: i64, endTs: i64, order: dcgmOrder_t, values: *mut dcgmFieldValue_v1) -> dcgmReturn_t;
    /// Samples of a list of fields since a timestamp, per GPU, through a callback.
    fn dcgmGetFieldValuesSince(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, sinceTimestamp: i64, fieldIds: *mut u16, numFieldIds: c_int, nextSinceTimestamp: *mut i64, enumCB: dcgmFieldValueEnumeration_f, userData: *mut c_void) -> dcgmReturn_t;
    /// Starts sampling one field of one GPU (interval in µs, age in s).
    fn dcgmWatchFieldValue(pDcgmHandle: dcgmHandle_t, gpuId: c_int, fieldId: u16, updateFreq: i64, maxKeepAge: f64, maxKeepSamples: c_int) -> dcgmReturn_t;
    /// Stops sampling one field of one GPU, optionally dropping its cached samples.
    fn dcgmUnwatchFieldValue(pDcgmHandle: dcgmHandle_t, gpuId: c_int, fieldId: u16, clearCache: c_int) -> dcgmReturn_t;
    /// Injects a sample of a field for a GPU (for tests).
    fn dcgmInjectFieldValue(pDcgmHandle: dcgmHandle_t, gpuId: u32, dcgmInjectFieldValue: *mut dcgmInjectFieldValue_t) -> dcgmReturn_t;
    /// Injects a sample of a field for any entity (for tests). This is the name the library
    /// exports; `dcgm_test_apis.h` declares it as `dcgmEntityInjectFieldValue`, a symbol
    /// libdcgm 4.6 does not export.
    fn dcgmInjectEntityFieldValue(pDcgmHandle: dcgmHandle_t, entityGroupId: dcgm_field_entity_group_t, entityId: dcgm_field_eid_t, dcgmInjectFieldValue: *mut dcgmInjectFieldValue_t) -> dcgmReturn_t;
    /// Creates fake GPUs, NvSwitches, CPUs and MIG instances (for tests); the new ids are
    /// written back into the request.
    fn dcgmCreateFakeEntities(pDcgmHandle: dcgmHandle_t, createFakeEntities: *mut dcgmCreateFakeEntities_v2) -> dcgmReturn_t;
    /// The cache manager's view of one (entity, field): watch, samples and watchers.
    fn dcgmGetCacheManagerFieldInfo(pDcgmHandle: dcgmHandle_t, fieldInfo: *mut dcgmCacheManagerFieldInfo_v4_t) -> dcgmReturn_t;
    /// Forces the state a link of a GPU or NvSwitch reports (for tests).
    fn dcgmSetEntityNvLinkLinkState(pDcgmHandle: dcgmHandle_t, linkState: *mut dcgmSetNvLinkLinkState_v1) -> dcgmReturn_t;
    /// Creates a MIG GPU or compute instance.
    fn dcgmCreateMigEntity(pDcgmHandle: dcgmHandle_t, cme: *mut dcgmCreateMigEntity_t) -> dcgmReturn_t;
    /// Deletes a MIG GPU or compute instance.
    fn dcgmDeleteMigEntity(pDcgmHandle: dcgmHandle_t, dme: *mut dcgmDeleteMigEntity_t) -> dcgmReturn_t;
    /// Adds a GPU to the injection NVML (`NVML_INJECTION_MODE`); `index` must be the next
    /// NVML index.
    fn dcgmCreateNvmlInjectionGpu(pDcgmHandle: dcgmHandle_t, index: u32) -> dcgmReturn_t;
    /// Makes the injection NVML answer `key` (an NVML function name without `nvmlDeviceGet`)
    /// for a GPU with `injectNvmlRet`.
    fn dcgmInjectNvmlDevice(pDcgmHandle: dcgmHandle_t, gpuId: u32, key: *const c_char, extraKeys: *const injectNvmlVal_t, extraKeyCount: u32, injectNvmlRet: *const injectNvmlRet_t) -> dcgmReturn_t;
    /// Makes the injection NVML answer the next `retCount` calls of `key` with `injectNvmlRets`.
    fn dcgmInjectNvmlDeviceForFollowingCalls(pDcgmHandle: dcgmHandle_t, gpuId: u32, key: *const c_char, extraKeys: *const injectNvmlVal_t, extraKeyCount: u32, injectNvmlRets: *const injectNvmlRet_t, retCount: u32) -> dcgmReturn_t;
    /// Drops what was injected into the injection NVML for a GPU.
    fn dcgmInjectedNvmlDeviceReset(pDcgmHandle: dcgmHandle_t, gpuId: u32) -> dcgmReturn_t;
    /// Makes the injection NVML hide the GPU with this UUID.
    fn dcgmRemoveNvmlInjectedGpu(pDcgmHandle: dcgmHandle_t, uuid: *const c_char) -> dcgmReturn_t;
    /// Makes the injection NVML show a GPU hidden by `dcgmRemoveNvmlInjectedGpu` again.
    fn dcgmRestoreNvmlInjectedGpu(pDcgmHandle: dcgmHandle_t, uuid: *const c_char) -> dcgmReturn_t;
    /// How often the injection NVML's functions were called.
    fn dcgmGetNvmlInjectFuncCallCount(pDcgmHandle: dcgmHandle_t, nvmlFuncCallCounts: *mut injectNvmlFuncCallCounts_t) -> dcgmReturn_t;
    /// Resets the injection NVML's call counts.
    fn dcgmResetNvmlInjectFuncCallCount(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Injects a field value into the injection NVML (only fields DCGM maps to NVML).
    fn dcgmInjectEntityFieldValueToNvml(pDcgmHandle: dcgmHandle_t, entityGroupId: dcgm_field_entity_group_t, entityId: dcgm_field_eid_t, dcgmInjectFieldValue: *mut dcgmInjectFieldValue_t) -> dcgmReturn_t;
    /// Drops every cached sample and every watch.
    fn dcgmEmptyCache(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Pauses sampling while a diagnostic runs.
    fn dcgmPauseTelemetryForDiag(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Resumes sampling after a diagnostic.
    fn dcgmResumeTelemetryForDiag(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t;
    /// Marks modules as allowed to be unloaded and reloaded.
    fn dcgmMarkModulesReloadable(pDcgmHandle: dcgmHandle_t, msg: *mut dcgmModulesReloadable_v1) -> dcgmReturn_t;
    /// Whether an NvSwitch backend is active, and its name.
    fn dcgmNvswitchGetBackend(pDcgmHandle: dcgmHandle_t, active: *mut bool, backendName: *mut c_char, backendNameLength: u32) -> dcgmReturn_t;
    /// Sets the vGPU configuration of a group (libdcgm 4.6 checks the version, then answers
    /// `DCGM_ST_NOT_SUPPORTED`).
    fn dcgmVgpuConfigSet(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, pDeviceConfig: *mut dcgmDeviceVgpuConfig_v1, statusHandle: dcgmStatus_t) -> dcgmReturn_t;
    /// The vGPU configuration of each GPU of a group (libdcgm 4.6 checks the versions, then
    /// answers `DCGM_ST_NOT_SUPPORTED`).
    fn dcgmVgpuConfigGet(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, type_: dcgmConfigType_t, count: c_int, deviceConfigList: *mut dcgmDeviceVgpuConfig_v1, statusHandle: dcgmStatus_t) -> dcgmReturn_t;
    /// Enforces the vGPU configuration of a group (`DCGM_ST_NOT_SUPPORTED` in libdcgm 4.6).
    fn dcgmVgpuConfigEnforce(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, statusHandle: dcgmStatus_t) -> dcgmReturn_t;
    /// The vGPU attributes of a physical GPU (watches the vGPU fields it reads first).
    fn dcgmGetVgpuDeviceAttributes(pDcgmHandle: dcgmHandle_t, gpuId: u32, pDcgmVgpuAttr: *mut dcgmVgpuDeviceAttributes_v7) -> dcgmReturn_t;
    /// The attributes of one vGPU instance.
    fn dcgmGetVgpuInstanceAttributes(pDcgmHandle: dcgmHandle_t, vgpuId: u32, pDcgmVgpuInstanceAttr: *mut dcgmVgpuInstanceAttributes_v1) -> dcgmReturn_t;

    // Functions taking the health, policy, statistics and diagnostic types.

    /// Reads a process's statistics (set `pid` in the struct first).
    fn dcgmGetPidInfo(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, pidInfo: *mut dcgmPidInfo_t) -> dcgmReturn_t;
    /// Reads a job's statistics.
    fn dcgmJobGetStats(pDcgmHandle: dcgmHandle_t, jobId: *mut c_char, pJobInfo: *mut dcgmJobInfo_t) -> dcgmReturn_t;
    /// Enables health watches on a group.
    fn dcgmHealthSet(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, systems: dcgmHealthSystems_t) -> dcgmReturn_t;
    /// Enables health watches on a group with a sampling interval and age.
    fn dcgmHealthSet_v2(pDcgmHandle: dcgmHandle_t, params: *mut dcgmHealthSetParams_v2) -> dcgmReturn_t;
    /// The health watches enabled on a group.
    fn dcgmHealthGet(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, systems: *mut dcgmHealthSystems_t) -> dcgmReturn_t;
    /// Health incidents of a group since the previous check.
    fn dcgmHealthCheck(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, results: *mut dcgmHealthResponse_t) -> dcgmReturn_t;
    /// Sets the policy of a group.
    fn dcgmPolicySet(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, policy: *mut dcgmPolicy_t, statusHandle: dcgmStatus_t) -> dcgmReturn_t;
    /// The policy of each GPU of a group.
    fn dcgmPolicyGet(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, count: c_int, policy: *mut dcgmPolicy_t, statusHandle: dcgmStatus_t) -> dcgmReturn_t;
    /// Registers a callback for policy violations; it runs on a DCGM thread.
    fn dcgmPolicyRegister_v2(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, condition: dcgmPolicyCondition_t, callback: fpRecvUpdates, userData: u64) -> dcgmReturn_t;
    /// Unregisters the policy callbacks of some conditions.
    fn dcgmPolicyUnregister(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, condition: dcgmPolicyCondition_t) -> dcgmReturn_t;
    /// Runs a diagnostic of a given length on a group (deprecated form).
    fn dcgmActionValidate(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, validate: dcgmPolicyValidation_t, response: *mut dcgmDiagResponse_v12) -> dcgmReturn_t;
    /// Runs a diagnostic described in full by a run request.
    fn dcgmActionValidate_v2(pDcgmHandle: dcgmHandle_t, drd: *mut dcgmRunDiag_v10, response: *mut dcgmDiagResponse_v12) -> dcgmReturn_t;
    /// Runs a diagnostic level on a group.
    fn dcgmRunDiagnostic(pDcgmHandle: dcgmHandle_t, groupId: dcgmGpuGrp_t, diagLevel: dcgmDiagnosticLevel_t, diagResponse: *mut dcgmDiagResponse_v12) -> dcgmReturn_t;
    /// Runs a diagnostic across several nodes.
    fn dcgmRunMnDiagnostic(pDcgmHandle: dcgmHandle_t, drmnd: *const dcgmRunMnDiag_v1, response: *mut dcgmMnDiagResponse_v1) -> dcgmReturn_t;
}
