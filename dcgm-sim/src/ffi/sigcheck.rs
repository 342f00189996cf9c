//! Compile-time checks that every exported function has exactly the type `dcgm-sys` declares
//! for it (`dcgm_sys::pfn::<name>`, i.e. the C prototype of DCGM 4.6): a signature that drifts
//! from the C API stops the build.
//!
//! Functions of `dcgm_sys::DcgmApi::SYMBOLS` the simulator does not export, on purpose (a
//! client resolving them sees missing symbols, as `DcgmApi::missing_symbols` reports):
//! - `dcgmNvswitchGetBackend` (NvSwitch backends are not simulated)
//! - the NVML-injection group: `dcgmCreateNvmlInjectionGpu`, `dcgmInjectNvmlDevice`,
//!   `dcgmInjectNvmlDeviceForFollowingCalls`, `dcgmInjectedNvmlDeviceReset`,
//!   `dcgmRemoveNvmlInjectedGpu`, `dcgmRestoreNvmlInjectedGpu`,
//!   `dcgmGetNvmlInjectFuncCallCount`, `dcgmResetNvmlInjectFuncCallCount`,
//!   `dcgmInjectEntityFieldValueToNvml` (the simulator has no NVML to inject into; fake
//!   entities and `dcgmInjectEntityFieldValue` cover what tests need)
//!
//! One line per exported function of the table; add a line with every new export.

const _: dcgm_sys::pfn::DcgmFieldGetById = crate::ffi::fields::DcgmFieldGetById;
const _: dcgm_sys::pfn::DcgmFieldGetByTag = crate::ffi::fields::DcgmFieldGetByTag;
const _: dcgm_sys::pfn::DcgmFieldsGetEntityGroupString =
    crate::ffi::fields::DcgmFieldsGetEntityGroupString;
const _: dcgm_sys::pfn::DcgmFieldsInit = crate::ffi::fields::DcgmFieldsInit;
const _: dcgm_sys::pfn::DcgmFieldsTerm = crate::ffi::fields::DcgmFieldsTerm;
const _: dcgm_sys::pfn::dcgmActionValidate = crate::ffi::diag::dcgmActionValidate;
const _: dcgm_sys::pfn::dcgmActionValidate_v2 = crate::ffi::diag::dcgmActionValidate_v2;
const _: dcgm_sys::pfn::dcgmAddFakeInstances = crate::ffi::unsupported::dcgmAddFakeInstances;
const _: dcgm_sys::pfn::dcgmAttachDriver = crate::ffi::driver_bind::dcgmAttachDriver;
const _: dcgm_sys::pfn::dcgmConfigEnforce = crate::ffi::config::dcgmConfigEnforce;
const _: dcgm_sys::pfn::dcgmConfigGet = crate::ffi::config::dcgmConfigGet;
const _: dcgm_sys::pfn::dcgmConfigSet = crate::ffi::config::dcgmConfigSet;
const _: dcgm_sys::pfn::dcgmConfigSetWorkloadPowerProfile =
    crate::ffi::config::dcgmConfigSetWorkloadPowerProfile;
const _: dcgm_sys::pfn::dcgmConnect = crate::ffi::lifecycle::dcgmConnect;
const _: dcgm_sys::pfn::dcgmConnect_v2 = crate::ffi::lifecycle::dcgmConnect_v2;
const _: dcgm_sys::pfn::dcgmConnect_v3 = crate::ffi::lifecycle::dcgmConnect_v3;
const _: dcgm_sys::pfn::dcgmDetachDriver = crate::ffi::driver_bind::dcgmDetachDriver;
const _: dcgm_sys::pfn::dcgmDiagSendHeartbeat = crate::ffi::diag::dcgmDiagSendHeartbeat;
const _: dcgm_sys::pfn::dcgmDisconnect = crate::ffi::lifecycle::dcgmDisconnect;
const _: dcgm_sys::pfn::dcgmEngineRun = crate::ffi::unsupported::dcgmEngineRun;
const _: dcgm_sys::pfn::dcgmEntitiesGetLatestValues =
    crate::ffi::values::dcgmEntitiesGetLatestValues;
const _: dcgm_sys::pfn::dcgmEntityGetLatestValues = crate::ffi::values::dcgmEntityGetLatestValues;
const _: dcgm_sys::pfn::dcgmErrorGetCategoryByCode =
    crate::ffi::failure_reasons::dcgmErrorGetCategoryByCode;
const _: dcgm_sys::pfn::dcgmErrorGetFormatMsgByCode =
    crate::ffi::failure_reasons::dcgmErrorGetFormatMsgByCode;
const _: dcgm_sys::pfn::dcgmErrorGetPriorityByCode =
    crate::ffi::failure_reasons::dcgmErrorGetPriorityByCode;
const _: dcgm_sys::pfn::dcgmFieldGroupCreate = crate::ffi::groups::dcgmFieldGroupCreate;
const _: dcgm_sys::pfn::dcgmFieldGroupDestroy = crate::ffi::groups::dcgmFieldGroupDestroy;
const _: dcgm_sys::pfn::dcgmFieldGroupGetAll = crate::ffi::groups::dcgmFieldGroupGetAll;
const _: dcgm_sys::pfn::dcgmFieldGroupGetInfo = crate::ffi::groups::dcgmFieldGroupGetInfo;
const _: dcgm_sys::pfn::dcgmGetAllDevices = crate::ffi::discovery::dcgmGetAllDevices;
const _: dcgm_sys::pfn::dcgmGetAllSupportedDevices =
    crate::ffi::discovery::dcgmGetAllSupportedDevices;
const _: dcgm_sys::pfn::dcgmGetCpuHierarchy = crate::ffi::discovery::dcgmGetCpuHierarchy;
const _: dcgm_sys::pfn::dcgmGetCpuHierarchy_v2 = crate::ffi::discovery::dcgmGetCpuHierarchy_v2;
const _: dcgm_sys::pfn::dcgmCpuHierarchyCpuOwnsCore =
    crate::ffi::discovery::dcgmCpuHierarchyCpuOwnsCore;
const _: dcgm_sys::pfn::dcgmGetDeviceAttributes = crate::ffi::discovery::dcgmGetDeviceAttributes;
const _: dcgm_sys::pfn::dcgmGetDeviceTopology = crate::ffi::topology::dcgmGetDeviceTopology;
const _: dcgm_sys::pfn::dcgmGetDeviceWorkloadPowerProfileInfo =
    crate::ffi::config::dcgmGetDeviceWorkloadPowerProfileInfo;
const _: dcgm_sys::pfn::dcgmGetEntityGroupEntities =
    crate::ffi::discovery::dcgmGetEntityGroupEntities;
const _: dcgm_sys::pfn::dcgmGetErrorMeta = crate::ffi::failure_reasons::dcgmGetErrorMeta;
const _: dcgm_sys::pfn::dcgmGetFieldSummary = crate::ffi::samples::dcgmGetFieldSummary;
const _: dcgm_sys::pfn::dcgmGetGpuChipArchitecture =
    crate::ffi::discovery::dcgmGetGpuChipArchitecture;
const _: dcgm_sys::pfn::dcgmGetGpuInstanceHierarchy =
    crate::ffi::discovery::dcgmGetGpuInstanceHierarchy;
const _: dcgm_sys::pfn::dcgmGetGpuStatus = crate::ffi::discovery::dcgmGetGpuStatus;
const _: dcgm_sys::pfn::dcgmGetGroupTopology = crate::ffi::topology::dcgmGetGroupTopology;
const _: dcgm_sys::pfn::dcgmGetLatestValues = crate::ffi::values::dcgmGetLatestValues;
const _: dcgm_sys::pfn::dcgmGetLatestValuesForFields =
    crate::ffi::values::dcgmGetLatestValuesForFields;
const _: dcgm_sys::pfn::dcgmGetLatestValues_v2 = crate::ffi::values::dcgmGetLatestValues_v2;
const _: dcgm_sys::pfn::dcgmGetMultipleValuesForField =
    crate::ffi::samples::dcgmGetMultipleValuesForField;
const _: dcgm_sys::pfn::dcgmGetNvLinkLinkStatus = crate::ffi::nvlink::dcgmGetNvLinkLinkStatus;
const _: dcgm_sys::pfn::dcgmGetNvLinkP2PStatus = crate::ffi::nvlink::dcgmGetNvLinkP2PStatus;
const _: dcgm_sys::pfn::dcgmGetPidInfo = crate::ffi::stats::dcgmGetPidInfo;
const _: dcgm_sys::pfn::dcgmGetValuesSince = crate::ffi::values::dcgmGetValuesSince;
const _: dcgm_sys::pfn::dcgmGetValuesSince_v2 = crate::ffi::values::dcgmGetValuesSince_v2;
const _: dcgm_sys::pfn::dcgmGroupAddDevice = crate::ffi::groups::dcgmGroupAddDevice;
const _: dcgm_sys::pfn::dcgmGroupAddEntity = crate::ffi::groups::dcgmGroupAddEntity;
const _: dcgm_sys::pfn::dcgmGroupCreate = crate::ffi::groups::dcgmGroupCreate;
const _: dcgm_sys::pfn::dcgmGroupDestroy = crate::ffi::groups::dcgmGroupDestroy;
const _: dcgm_sys::pfn::dcgmGroupGetAllIds = crate::ffi::groups::dcgmGroupGetAllIds;
const _: dcgm_sys::pfn::dcgmGroupGetInfo = crate::ffi::groups::dcgmGroupGetInfo;
const _: dcgm_sys::pfn::dcgmGroupRemoveDevice = crate::ffi::groups::dcgmGroupRemoveDevice;
const _: dcgm_sys::pfn::dcgmGroupRemoveEntity = crate::ffi::groups::dcgmGroupRemoveEntity;
const _: dcgm_sys::pfn::dcgmHealthCheck = crate::ffi::health::dcgmHealthCheck;
const _: dcgm_sys::pfn::dcgmHealthGet = crate::ffi::health::dcgmHealthGet;
const _: dcgm_sys::pfn::dcgmHealthSet = crate::ffi::health::dcgmHealthSet;
const _: dcgm_sys::pfn::dcgmHealthSet_v2 = crate::ffi::health::dcgmHealthSet_v2;
const _: dcgm_sys::pfn::dcgmHostengineEnvironmentVariableInfo =
    crate::ffi::hostengine_settings::dcgmHostengineEnvironmentVariableInfo;
const _: dcgm_sys::pfn::dcgmHostengineIsHealthy = crate::ffi::lifecycle::dcgmHostengineIsHealthy;
const _: dcgm_sys::pfn::dcgmHostengineSetLoggingSeverity =
    crate::ffi::hostengine_settings::dcgmHostengineSetLoggingSeverity;
const _: dcgm_sys::pfn::dcgmHostengineVersionInfo =
    crate::ffi::lifecycle::dcgmHostengineVersionInfo;
const _: dcgm_sys::pfn::dcgmInit = crate::ffi::lifecycle::dcgmInit;
const _: dcgm_sys::pfn::dcgmIntrospectGetHostengineCpuUtilization =
    crate::ffi::introspection::dcgmIntrospectGetHostengineCpuUtilization;
const _: dcgm_sys::pfn::dcgmIntrospectGetHostengineMemoryUsage =
    crate::ffi::introspection::dcgmIntrospectGetHostengineMemoryUsage;
const _: dcgm_sys::pfn::dcgmJobGetStats = crate::ffi::stats::dcgmJobGetStats;
const _: dcgm_sys::pfn::dcgmJobRemove = crate::ffi::stats::dcgmJobRemove;
const _: dcgm_sys::pfn::dcgmJobRemoveAll = crate::ffi::stats::dcgmJobRemoveAll;
const _: dcgm_sys::pfn::dcgmJobStartStats = crate::ffi::stats::dcgmJobStartStats;
const _: dcgm_sys::pfn::dcgmJobStopStats = crate::ffi::stats::dcgmJobStopStats;
const _: dcgm_sys::pfn::dcgmModuleDenylist = crate::ffi::modules::dcgmModuleDenylist;
const _: dcgm_sys::pfn::dcgmModuleGetStatuses = crate::ffi::modules::dcgmModuleGetStatuses;
const _: dcgm_sys::pfn::dcgmModuleIdToName = crate::ffi::modules::dcgmModuleIdToName;
const _: dcgm_sys::pfn::dcgmPolicyGet = crate::ffi::policy::dcgmPolicyGet;
const _: dcgm_sys::pfn::dcgmPolicyRegister_v2 = crate::ffi::policy::dcgmPolicyRegister_v2;
// DCGM 3.x's registration, outside the table (4.x does not export it).
const _: dcgm_sys::dcgmPolicyRegister_v1_t = crate::ffi::policy::dcgmPolicyRegister;
const _: dcgm_sys::pfn::dcgmPolicySet = crate::ffi::policy::dcgmPolicySet;
const _: dcgm_sys::pfn::dcgmPolicyTrigger = crate::ffi::policy::dcgmPolicyTrigger;
const _: dcgm_sys::pfn::dcgmPolicyUnregister = crate::ffi::policy::dcgmPolicyUnregister;
const _: dcgm_sys::pfn::dcgmPowerProfileIdToName = crate::ffi::config::dcgmPowerProfileIdToName;
const _: dcgm_sys::pfn::dcgmProfGetSupportedMetricGroups =
    crate::ffi::prof::dcgmProfGetSupportedMetricGroups;
const _: dcgm_sys::pfn::dcgmProfPause = crate::ffi::prof::dcgmProfPause;
const _: dcgm_sys::pfn::dcgmProfResume = crate::ffi::prof::dcgmProfResume;
const _: dcgm_sys::pfn::dcgmRunDiagnostic = crate::ffi::diag::dcgmRunDiagnostic;
const _: dcgm_sys::pfn::dcgmRunMnDiagnostic = crate::ffi::diag::dcgmRunMnDiagnostic;
const _: dcgm_sys::pfn::dcgmSelectGpusByTopology = crate::ffi::topology::dcgmSelectGpusByTopology;
const _: dcgm_sys::pfn::dcgmShutdown = crate::ffi::lifecycle::dcgmShutdown;
const _: dcgm_sys::pfn::dcgmStartEmbedded = crate::ffi::lifecycle::dcgmStartEmbedded;
const _: dcgm_sys::pfn::dcgmStartEmbedded_v2 = crate::ffi::lifecycle::dcgmStartEmbedded_v2;
const _: dcgm_sys::pfn::dcgmStatusClear = crate::ffi::config::dcgmStatusClear;
const _: dcgm_sys::pfn::dcgmStatusCreate = crate::ffi::config::dcgmStatusCreate;
const _: dcgm_sys::pfn::dcgmStatusDestroy = crate::ffi::config::dcgmStatusDestroy;
const _: dcgm_sys::pfn::dcgmStatusGetCount = crate::ffi::config::dcgmStatusGetCount;
const _: dcgm_sys::pfn::dcgmStatusPopError = crate::ffi::config::dcgmStatusPopError;
const _: dcgm_sys::pfn::dcgmStopDiagnostic = crate::ffi::diag::dcgmStopDiagnostic;
const _: dcgm_sys::pfn::dcgmStopEmbedded = crate::ffi::lifecycle::dcgmStopEmbedded;
const _: dcgm_sys::pfn::dcgmStopMnDiagnostic = crate::ffi::diag::dcgmStopMnDiagnostic;
const _: dcgm_sys::pfn::dcgmUnwatchFields = crate::ffi::values::dcgmUnwatchFields;
const _: dcgm_sys::pfn::dcgmUpdateAllFields = crate::ffi::lifecycle::dcgmUpdateAllFields;
const _: dcgm_sys::pfn::dcgmVersionInfo = crate::ffi::lifecycle::dcgmVersionInfo;
const _: dcgm_sys::pfn::dcgmWatchFields = crate::ffi::values::dcgmWatchFields;
const _: dcgm_sys::pfn::dcgmWatchJobFields = crate::ffi::stats::dcgmWatchJobFields;
const _: dcgm_sys::pfn::dcgmWatchPidFields = crate::ffi::stats::dcgmWatchPidFields;
const _: dcgm_sys::pfn::errorString = crate::ffi::lifecycle::errorString;
const _: dcgm_sys::pfn::dcgmCreateFakeEntities = crate::ffi::test_api::dcgmCreateFakeEntities;
const _: dcgm_sys::pfn::dcgmCreateMigEntity = crate::ffi::test_api::dcgmCreateMigEntity;
const _: dcgm_sys::pfn::dcgmDeleteMigEntity = crate::ffi::test_api::dcgmDeleteMigEntity;
const _: dcgm_sys::pfn::dcgmEmptyCache = crate::ffi::test_api::dcgmEmptyCache;
const _: dcgm_sys::pfn::dcgmGetCacheManagerFieldInfo =
    crate::ffi::test_api::dcgmGetCacheManagerFieldInfo;
const _: dcgm_sys::pfn::dcgmGetFieldValuesSince = crate::ffi::test_api::dcgmGetFieldValuesSince;
const _: dcgm_sys::pfn::dcgmInjectEntityFieldValue =
    crate::ffi::test_api::dcgmInjectEntityFieldValue;
const _: dcgm_sys::pfn::dcgmInjectFieldValue = crate::ffi::test_api::dcgmInjectFieldValue;
const _: dcgm_sys::pfn::dcgmMarkModulesReloadable = crate::ffi::test_api::dcgmMarkModulesReloadable;
const _: dcgm_sys::pfn::dcgmPauseTelemetryForDiag = crate::ffi::test_api::dcgmPauseTelemetryForDiag;
const _: dcgm_sys::pfn::dcgmResumeTelemetryForDiag =
    crate::ffi::test_api::dcgmResumeTelemetryForDiag;
const _: dcgm_sys::pfn::dcgmSetEntityNvLinkLinkState =
    crate::ffi::test_api::dcgmSetEntityNvLinkLinkState;
const _: dcgm_sys::pfn::dcgmUnwatchFieldValue = crate::ffi::test_api::dcgmUnwatchFieldValue;
const _: dcgm_sys::pfn::dcgmWatchFieldValue = crate::ffi::test_api::dcgmWatchFieldValue;
const _: dcgm_sys::pfn::dcgmGetVgpuDeviceAttributes = crate::ffi::vgpu::dcgmGetVgpuDeviceAttributes;
const _: dcgm_sys::pfn::dcgmGetVgpuInstanceAttributes =
    crate::ffi::vgpu::dcgmGetVgpuInstanceAttributes;
const _: dcgm_sys::pfn::dcgmVgpuConfigEnforce = crate::ffi::vgpu::dcgmVgpuConfigEnforce;
const _: dcgm_sys::pfn::dcgmVgpuConfigGet = crate::ffi::vgpu::dcgmVgpuConfigGet;
const _: dcgm_sys::pfn::dcgmVgpuConfigSet = crate::ffi::vgpu::dcgmVgpuConfigSet;
