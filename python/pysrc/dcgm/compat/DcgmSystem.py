"""NVIDIA's ``DcgmSystem`` (DCGM 4.6): the system-wide methods of one ``DcgmHandle``, with the
sub-objects ``discovery``, ``introspect`` (``memory``, ``cpuUtil``), ``fields``, ``modules`` and
``profiling``.

Every method raises ``DCGMError_ConnectionNotValid`` once its handle was shut down.

An addition for the API of the project brief (NVIDIA's ``DcgmSystem`` has no such name):
:meth:`DcgmSystem.GetAllGpus` answers one :class:`DcgmGpu` per GPU, with ``GetGpuId()``,
``GetUuid()``, ``GetFieldValue(fieldId)`` (an object with ``.value``) and ``GetProcessStats()``
(objects with ``.pid`` and ``.usedMemory``).
"""

from __future__ import annotations

import ctypes
import itertools
from typing import Any, List, Optional

from dcgm.compat import dcgm_agent, dcgm_fields, dcgm_structs
from dcgm.compat._handle_state import _live_handle


class DcgmSystemDiscovery:
    """What GPUs and other entities DCGM sees, and their attributes and topology."""

    def __init__(self, dcgmHandle: Any) -> None:
        self._dcgmHandle = dcgmHandle

    def GetAllGpuIds(self) -> List[int]:
        """The ids of every GPU DCGM knows (supported or not)."""
        return dcgm_agent.dcgmGetAllDevices(_live_handle(self._dcgmHandle))

    def GetAllSupportedGpuIds(self) -> List[int]:
        """The ids of the GPUs DCGM supports."""
        return dcgm_agent.dcgmGetAllSupportedDevices(_live_handle(self._dcgmHandle))

    def GetGpuAttributes(self, gpuId: int) -> Any:
        """A ``c_dcgmDeviceAttributes_v3`` of ``gpuId``."""
        return dcgm_agent.dcgmGetDeviceAttributes(_live_handle(self._dcgmHandle), gpuId)

    def GetGpuTopology(self, gpuId: int) -> Any:
        """A ``c_dcgmDeviceTopology_v1`` of ``gpuId``."""
        return dcgm_agent.dcgmGetDeviceTopology(_live_handle(self._dcgmHandle), gpuId)

    def GetEntityGroupEntities(self, entityGroupId: int, onlySupported: bool) -> List[int]:
        """The entity ids of an entity group (``DCGM_FE_*``), only the supported ones if
        ``onlySupported``."""
        flags = dcgm_structs.DCGM_GEGE_FLAG_ONLY_SUPPORTED if onlySupported else 0
        return dcgm_agent.dcgmGetEntityGroupEntities(_live_handle(self._dcgmHandle), entityGroupId, flags)

    def GetNvLinkLinkStatus(self) -> Any:
        """The state of every NvLink link (a ``c_dcgmNvLinkStatus_v*``)."""
        return dcgm_agent.dcgmGetNvLinkLinkStatus(_live_handle(self._dcgmHandle))

    def GetNvLinkP2PStatus(self) -> Any:
        """The NvLink peer-to-peer status of every GPU pair (a ``c_dcgmNvLinkP2PStatus_v1``)."""
        status = dcgm_structs.c_dcgmNvLinkP2PStatus_v1()
        status.numGpus = 0  # all of them
        dcgm_agent.dcgmGetNvLinkP2PStatus(_live_handle(self._dcgmHandle), status)
        return status

    def SelectGpusByTopology(self, inputGpuIds: int, numGpus: int, hintFlags: int) -> Any:
        """From the bitmask ``inputGpuIds``, the bitmask of the ``numGpus`` topologically closest
        GPUs (``hintFlags``: ``DCGM_TOPO_HINT_F_*``)."""
        return dcgm_agent.dcgmSelectGpusByTopology(_live_handle(self._dcgmHandle), inputGpuIds, numGpus, hintFlags)

    def GetGpuStatus(self, gpuId: int) -> Any:
        """The ``DcgmEntityStatus_t`` of ``gpuId``."""
        return dcgm_agent.dcgmGetGpuStatus(_live_handle(self._dcgmHandle), gpuId)


class DcgmSystemIntrospect:
    """DCGM's view of itself: ``memory`` and ``cpuUtil`` of the host engine."""

    def __init__(self, dcgmHandle: Any) -> None:
        self._handle = dcgmHandle
        self.memory = DcgmSystemIntrospectMemory(dcgmHandle)
        self.cpuUtil = DcgmSystemIntrospectCpuUtil(dcgmHandle)


class DcgmSystemIntrospectMemory:
    """The memory the host engine uses."""

    def __init__(self, dcgmHandle: Any) -> None:
        self._dcgmHandle = dcgmHandle

    def GetForHostengine(self, waitIfNoData: bool = True) -> Any:
        """A ``c_dcgmIntrospectMemory_v1`` of the host engine (``waitIfNoData=False``: raise
        ``DCGMError_NoData`` rather than wait for the first measurement)."""
        return dcgm_agent.dcgmIntrospectGetHostengineMemoryUsage(_live_handle(self._dcgmHandle), waitIfNoData)


class DcgmSystemIntrospectCpuUtil:
    """The CPU the host engine uses."""

    def __init__(self, dcgmHandle: Any) -> None:
        self._dcgmHandle = dcgmHandle

    def GetForHostengine(self, waitIfNoData: bool = True) -> Any:
        """A ``c_dcgmIntrospectCpuUtil_v1`` of the host engine."""
        return dcgm_agent.dcgmIntrospectGetHostengineCpuUtilization(_live_handle(self._dcgmHandle), waitIfNoData)


class DcgmSystemFields:
    """Field metadata (needs no handle)."""

    def GetFieldById(self, fieldId: int) -> Any:
        """The ``dcgm_fields.c_dcgm_field_meta_t`` of ``fieldId``, or ``None``."""
        return dcgm_fields.DcgmFieldGetById(fieldId)

    def GetFieldByTag(self, tag: str) -> Any:
        """The metadata of the field tagged ``tag`` (``"gpu_temp"``), or ``None``."""
        return dcgm_fields.DcgmFieldGetByTag(tag)


class DcgmSystemModules:
    """DCGM's modules: their status, and keeping one from loading."""

    def __init__(self, dcgmHandle: Any) -> None:
        self._dcgmHandle = dcgmHandle

    def Denylist(self, moduleId: int) -> None:
        """Keeps module ``moduleId`` (``DcgmModuleId*``) from loading (``DCGMError_InUse`` once
        it is loaded)."""
        dcgm_agent.dcgmModuleDenylist(_live_handle(self._dcgmHandle), moduleId)

    def GetStatuses(self) -> Any:
        """A ``c_dcgmModuleGetStatuses_v1`` of every module."""
        return dcgm_agent.dcgmModuleGetStatuses(_live_handle(self._dcgmHandle))


class DcgmSystemProfiling:
    """Pausing and resuming DCGM's profiling metrics (``DCGM_FI_PROF_*``), for tools such as
    Nsight that need the counters; paused, those fields read blank."""

    def __init__(self, dcgmHandle: Any) -> None:
        self._dcgmHandle = dcgmHandle

    def Pause(self) -> Any:
        """Pauses profiling (a no-op when paused)."""
        return dcgm_agent.dcgmProfPause(_live_handle(self._dcgmHandle))

    def Resume(self) -> Any:
        """Resumes profiling (a no-op when running)."""
        return dcgm_agent.dcgmProfResume(_live_handle(self._dcgmHandle))


class DcgmGpuProcess:
    """A process running on a GPU (an addition for the project brief's API): ``pid`` and
    ``usedMemory`` (bytes of GPU memory it uses; also as ``memoryUsed``, the C name)."""

    __slots__ = ("pid", "usedMemory")

    def __init__(self, pid: int, usedMemory: int) -> None:
        self.pid = pid
        self.usedMemory = usedMemory

    @property
    def memoryUsed(self) -> int:
        return self.usedMemory

    def __repr__(self) -> str:
        return "DcgmGpuProcess(pid=%d, usedMemory=%d)" % (self.pid, self.usedMemory)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DcgmGpuProcess) and (other.pid, other.usedMemory) == (self.pid, self.usedMemory)

    def __hash__(self) -> int:
        return hash((self.pid, self.usedMemory))


_scratch = itertools.count()
_FI_COMPUTE_PIDS = 221  # dcgm_fields_internal.DCGM_FI_DEV_COMPUTE_PIDS


class DcgmGpu:
    """One GPU of a ``DcgmSystem`` (an addition for the project brief's API; NVIDIA's bindings
    address GPUs by id only). Made by :meth:`DcgmSystem.GetAllGpus`."""

    def __init__(self, dcgmHandle: Any, gpuId: int) -> None:
        self._dcgmHandle = dcgmHandle
        self._gpuId = gpuId

    def GetGpuId(self) -> int:
        """The GPU's DCGM id."""
        return self._gpuId

    def GetAttributes(self) -> Any:
        """The GPU's ``c_dcgmDeviceAttributes_v3``."""
        return dcgm_agent.dcgmGetDeviceAttributes(_live_handle(self._dcgmHandle), self._gpuId)

    def GetUuid(self) -> str:
        """The GPU's UUID (``"GPU-…"``)."""
        return self.GetAttributes().identifiers.uuid

    def GetFieldValue(self, fieldId: int) -> Any:
        """The current value of field ``fieldId`` of this GPU, read live from the driver (no
        watch needed): a ``dcgm_field_helpers.DcgmFieldValue`` with ``.value``, ``.ts``,
        ``.fieldId`` and ``.isBlank``; ``.value`` is ``None`` when DCGM has no value (blank
        or an error status), never a sentinel number."""
        from dcgm.compat.dcgm_field_helpers import _from_struct

        raw = dcgm_agent.dcgmEntitiesGetLatestValues(
            _live_handle(self._dcgmHandle),
            [dcgm_structs.c_dcgmGroupEntityPair_t(dcgm_fields.DCGM_FE_GPU, self._gpuId)],
            [fieldId], dcgm_structs.DCGM_FV_FLAG_LIVE_DATA)
        value = _from_struct(raw[0])
        if value.isBlank:
            value.value = None
        return value

    def GetProcessStats(self) -> List[DcgmGpuProcess]:
        """The processes running on this GPU now (``DCGM_FI_DEV_COMPUTE_PIDS``): a list of
        :class:`DcgmGpuProcess` (``.pid``, ``.usedMemory``), empty when none runs. Watches the
        field on a scratch group for one update, and removes the watch and the group."""
        from dcgm.compat.DcgmFieldGroup import DcgmFieldGroup
        from dcgm.compat.DcgmGroup import DcgmGroup
        from dcgm.compat.dcgm_field_helpers import DcgmFieldValueEntityCollection

        raw = _live_handle(self._dcgmHandle)
        n = next(_scratch)
        group = DcgmGroup(self._dcgmHandle, groupName="dcgm.compat.procs.%d.%d" % (self._gpuId, n))
        fieldGroup = None
        try:
            group.AddGpu(self._gpuId)
            fieldGroup = DcgmFieldGroup(self._dcgmHandle, "dcgm.compat.procs.%d.%d" % (self._gpuId, n),
                                        [_FI_COMPUTE_PIDS])
            group.samples.WatchFields(fieldGroup, 1000000, 10.0, 0)
            try:
                dcgm_agent.dcgmUpdateAllFields(raw, 1)
                coll = DcgmFieldValueEntityCollection(raw, group.GetId())
                try:
                    coll.GetAllSinceLastCall(fieldGroup)
                except (dcgm_structs.DCGMError_Badparam, dcgm_structs.DCGMError_NoData):
                    # the real library refuses a since-query of a PID list that has no
                    # sample yet: the latest value (blank when no process runs) says it
                    coll = DcgmFieldValueEntityCollection(raw, group.GetId())
                    coll.GetLatestValues(fieldGroup)
            finally:
                group.samples.UnwatchFields(fieldGroup)
        finally:
            if fieldGroup is not None:
                fieldGroup.Delete()
            group.Delete()
        series = coll.values.get(dcgm_fields.DCGM_FE_GPU, {}).get(self._gpuId, {}).get(_FI_COMPUTE_PIDS)
        if not series or not len(series):
            return []
        latest = series[-1].ts
        out = []
        for v in series.values:
            if v.ts == latest and not v.isBlank and v.value is not None:
                out.append(DcgmGpuProcess(int(v.value.pid), int(v.value.memoryUsed)))
        return out

    def __repr__(self) -> str:
        return "<DcgmGpu %d>" % self._gpuId


class DcgmSystem:
    """The system-wide methods of ``dcgmHandle`` (a ``DcgmHandle``), and its sub-objects
    ``discovery``, ``introspect``, ``fields``, ``modules``, ``profiling``."""

    def __init__(self, dcgmHandle: Any) -> None:
        self._dcgmHandle = dcgmHandle
        self.discovery = DcgmSystemDiscovery(self._dcgmHandle)
        self.introspect = DcgmSystemIntrospect(self._dcgmHandle)
        self.fields = DcgmSystemFields()
        self.modules = DcgmSystemModules(self._dcgmHandle)
        self.profiling = DcgmSystemProfiling(self._dcgmHandle)

    def UpdateAllFields(self, waitForUpdate: Any) -> None:
        """Asks the host engine for a field update cycle (the only one in
        ``DCGM_OPERATION_MODE_MANUAL``); ``waitForUpdate``: block until done."""
        dcgm_structs._dcgmCheckReturn(dcgm_agent.dcgmUpdateAllFields(_live_handle(self._dcgmHandle), waitForUpdate))

    def GetDefaultGroup(self) -> Any:
        """The ``DcgmGroup`` of all GPUs (``DCGM_GROUP_ALL_GPUS``; GPUs cannot be added or
        removed)."""
        from dcgm.compat.DcgmGroup import DcgmGroup

        return DcgmGroup(self._dcgmHandle, groupId=dcgm_structs.DCGM_GROUP_ALL_GPUS)

    def GetEmptyGroup(self, groupName: str) -> Any:
        """A new, empty ``DcgmGroup`` named ``groupName`` (destroyed when the object is deleted
        or collected)."""
        from dcgm.compat.DcgmGroup import DcgmGroup

        return DcgmGroup(self._dcgmHandle, groupName=groupName)

    def GetGroupWithGpuIds(self, groupName: str, gpuIds: Any) -> Any:
        """A new ``DcgmGroup`` named ``groupName`` holding ``gpuIds``."""
        group = self.GetEmptyGroup(groupName)
        for gpuId in gpuIds:
            group.AddGpu(gpuId)
        return group

    def GetGroupWithEntities(self, groupName: str, entities: Any) -> Any:
        """A new ``DcgmGroup`` holding ``entities`` (``c_dcgmGroupEntityPair_t``, or objects with
        ``entityGroupId`` and ``entityId``)."""
        group = self.GetEmptyGroup(groupName)
        for entity in entities:
            group.AddEntity(entity.entityGroupId, entity.entityId)
        return group

    def GetAllGroupIds(self) -> List[Any]:
        """The ids of every group of the host engine."""
        return dcgm_agent.dcgmGroupGetAllIds(_live_handle(self._dcgmHandle))

    def GetAllFieldGroups(self) -> Any:
        """A ``c_dcgmAllFieldGroup_v1`` of every field group."""
        return dcgm_agent.dcgmFieldGroupGetAll(_live_handle(self._dcgmHandle))

    def GetFieldGroupIdByName(self, name: str) -> Optional[ctypes.c_void_p]:
        """The id (a ``c_void_p``) of the field group named ``name``, or ``None``."""
        groups = self.GetAllFieldGroups()
        for i in range(groups.numFieldGroups):
            if groups.fieldGroups[i].fieldGroupName == name:
                return ctypes.c_void_p(groups.fieldGroups[i].fieldGroupId)
        return None

    def PauseTelemetryForDiag(self) -> None:
        """Pauses the modules' field updates (``dcgm_agent_internal``)."""
        from dcgm.compat import dcgm_agent_internal

        dcgm_agent_internal.dcgmPauseTelemetryForDiag(_live_handle(self._dcgmHandle))

    def ResumeTelemetryForDiag(self) -> None:
        """Resumes what :meth:`PauseTelemetryForDiag` paused."""
        from dcgm.compat import dcgm_agent_internal

        dcgm_agent_internal.dcgmResumeTelemetryForDiag(_live_handle(self._dcgmHandle))

    def GetAllGpus(self) -> List[DcgmGpu]:
        """One :class:`DcgmGpu` per GPU DCGM knows, in id order (an addition for the project
        brief's API)."""
        return [DcgmGpu(self._dcgmHandle, gpuId) for gpuId in self.discovery.GetAllGpuIds()]
