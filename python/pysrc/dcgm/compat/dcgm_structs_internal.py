"""The structures of DCGM's test API under the names of NVIDIA's ``dcgm_structs_internal``, as
real ctypes structures for :mod:`dcgm.compat.dcgm_agent_internal`: fake entities, injected
field values, cache-manager field info, NVLink link states for tests, MIG entity requests
and the NVML-injection records.

Every class is built from dcgm-sys's layout table (see :mod:`dcgm.compat._layout`), so sizes,
offsets and version words are the C ones. The plain-object request classes of
:mod:`dcgm.structs_internal` (what :mod:`dcgm.agent_internal` takes) are not these: these
are the memory the library reads.
"""

from __future__ import annotations

from ctypes import *  # noqa: F401,F403  (NVIDIA's module re-exports ctypes' names)

from dcgm.compat import _layout, dcgm_structs

_PrintableStructure = dcgm_structs._PrintableStructure

#: Capacity of ``c_dcgmCreateFakeEntities_v2.entityList``.
DCGM_MAX_HIERARCHY_INFO: int = _layout.CONSTANTS["DCGM_MAX_HIERARCHY_INFO"]

# ---- fake entities
c_dcgmGroupEntityPair_t = dcgm_structs.c_dcgmGroupEntityPair_t
c_dcgmMigHierarchyInfo_t = dcgm_structs.c_dcgmMigHierarchyInfo_t
c_dcgmCreateFakeEntities_v2 = dcgm_structs.c_dcgmCreateFakeEntities_v2
c_dcgmCreateFakeEntities_t = c_dcgmCreateFakeEntities_v2
dcgmCreateFakeEntities_version2: int = _layout.CONSTANTS["dcgmCreateFakeEntities_version2"]
dcgmCreateFakeEntities_version: int = dcgmCreateFakeEntities_version2

# ---- injected field values (the layout of dcgmFieldValue_v1, a class of its own)
c_dcgmFieldValue_v1_value = dcgm_structs.c_dcgmFieldValue_v1_value
c_dcgmInjectFieldValue_v1 = _layout.build_as("dcgmFieldValue_v1", "c_dcgmInjectFieldValue_v1", __name__)
c_dcgmInjectFieldValue_t = c_dcgmInjectFieldValue_v1
dcgmInjectFieldValue_version1: int = _layout.CONSTANTS["dcgmInjectFieldValue_version1"]
dcgmInjectFieldValue_version: int = dcgmInjectFieldValue_version1

# ---- cache-manager field info
for _name, _value in _layout.CONSTANTS.items():
    if _name.startswith("DcgmWatcherType") or _name in ("DCGM_CM_FIELD_INFO_NUM_WATCHERS", "DCGM_CMI_F_WATCHED"):
        globals()[_name] = _value
del _name, _value
c_dcgm_cm_field_info_watcher_t = dcgm_structs.c_dcgm_cm_field_info_watcher_t
c_dcgmCacheManagerFieldInfo_v4_t = dcgm_structs.c_dcgmCacheManagerFieldInfo_v4_t
c_dcgmCacheManagerFieldInfo_v4 = c_dcgmCacheManagerFieldInfo_v4_t
dcgmCacheManagerFieldInfo_version4: int = _layout.CONSTANTS["dcgmCacheManagerFieldInfo_version4"]

# ---- NVLink link state for tests
c_dcgmSetNvLinkLinkState_v1 = dcgm_structs.c_dcgmSetNvLinkLinkState_v1
dcgmSetNvLinkLinkState_version1: int = _layout.CONSTANTS["dcgmSetNvLinkLinkState_version1"]

# ---- MIG entity requests
for _name in ("DcgmMigCreateGpuInstance", "DcgmMigCreateComputeInstance", "DCGM_MIG_RECONFIG_DELAY_PROCESSING"):
    globals()[_name] = _layout.CONSTANTS[_name]
del _name
c_dcgmCreateMigEntity_v1 = dcgm_structs.c_dcgmCreateMigEntity_v1
c_dcgmDeleteMigEntity_v1 = dcgm_structs.c_dcgmDeleteMigEntity_v1
dcgmCreateMigEntity_version1: int = _layout.CONSTANTS["dcgmCreateMigEntity_version1"]
dcgmDeleteMigEntity_version1: int = _layout.CONSTANTS["dcgmDeleteMigEntity_version1"]

# ---- NVML injection
for _name, _value in _layout.CONSTANTS.items():
    if _name.startswith("INJECTION_") or _name.startswith("NVML_INJECTION_") or _name in ("NVML_MAX_FUNC_NAME_LENGTH", "NVML_MAX_FUNCS"):
        globals()[_name] = _value
del _name, _value
c_simpleValue_t = dcgm_structs.c_simpleValue_t
c_injectNvmlVal_t = dcgm_structs.c_injectNvmlVal_t
c_injectNvmlRet_t = dcgm_structs.c_injectNvmlRet_t
c_injectNvmlFuncCallInfo_t = dcgm_structs.c_injectNvmlFuncCallInfo_t
c_injectNvmlFuncCallCounts_t = dcgm_structs.c_injectNvmlFuncCallCounts_t
