"""NVIDIA's ``DcgmGroup`` (DCGM 4.6): a group of GPUs (or other entities) and what can be done
with it, through its sub-objects ``config``, ``samples``, ``health``, ``policy``, ``discovery``,
``stats``, ``action`` and ``profiling``.

Differences from NVIDIA's, for the better:

* **Released when collected, or at exit.** A group this object created (``groupName=``) is
  destroyed by a ``weakref.finalize`` when the object is collected or the interpreter exits
  (NVIDIA's documents this and never does it, and keeps named groups of adopted handles in
  ``DcgmGroup.groups`` forever; here that registry holds them weakly). A policy set or a
  callback registered through ``.policy`` is cleared at the same moment, as NVIDIA's
  ``DcgmGroupPolicy.__del__`` does. :meth:`DcgmGroup.Delete` destroys it explicitly, once:
  the finalizer never destroys it again, nor a group given by id (``groupId=``) or a static one.
* **A deleted group raises a typed error.** After :meth:`DcgmGroup.Delete` the sub-objects stay
  (NVIDIA's become ``None``, so ``group.samples.X`` raised ``AttributeError``) and every method
  raises ``DCGMError_NotConfigured`` ("this DcgmGroup was deleted"), what the library answers
  for an unknown group id, without calling it (a new group may have reused the id). A shut
  down handle raises ``DCGMError_ConnectionNotValid``.
* **An addition** for the project brief's API: :meth:`DcgmGroup.RunDiagnostic` (NVIDIA's has
  it on ``.action`` only) answers a ``DcgmDiag.DcgmDiagResult`` with ``GetResult()``.
"""

from __future__ import annotations

import ctypes
import os  # noqa: F401 - in NVIDIA's module namespace too
import threading
import weakref
from typing import Any, Dict, List, Optional

from dcgm.compat import dcgm_agent, dcgm_field_helpers, dcgm_fields, dcgm_structs
from dcgm.compat.DcgmHandle import DcgmHandle  # noqa: F401 - in NVIDIA's module namespace too
from dcgm.compat.DcgmStatus import DcgmStatus as _DcgmStatus
from dcgm.compat._dcgm_exception import DcgmException as _DcgmException
from dcgm.compat._handle_state import _live_handle, _safely

logger = None  # NVIDIA's module logs through the test framework's ``logger`` when it exists


def _deleted_error() -> Exception:
    return dcgm_structs.DCGMError(dcgm_structs.DCGM_ST_NOT_CONFIGURED, "this DcgmGroup was deleted")


class _GroupState:
    """What the finalizer of a group needs, without the group itself: its handle object, its
    id, whether this object created it, and the policy state to clear."""

    __slots__ = ("dcgmHandle", "groupId", "created", "condition", "policySet", "deleted")

    def __init__(self, dcgmHandle: Any, groupId: Any, created: bool) -> None:
        self.dcgmHandle = dcgmHandle
        self.groupId = groupId
        self.created = created
        self.condition = 0
        self.policySet = False
        self.deleted = False


def _clear_policy(state: _GroupState) -> None:
    """Unregisters the callbacks and clears the policy set through this group's ``.policy``
    (what NVIDIA's ``DcgmGroupPolicy.__del__`` does); DCGM errors (a gone host engine, a
    policy already cleared) are ignored, as there."""
    raw = getattr(state.dcgmHandle, "handle", None)
    condition, state.condition = state.condition, 0
    policySet, state.policySet = state.policySet, False
    if raw is None:
        return
    if condition:
        try:
            dcgm_agent.dcgmPolicyUnregister(raw, state.groupId, condition)
        except dcgm_structs.DCGMError:
            pass
    if policySet:
        policy = dcgm_structs.c_dcgmPolicy_v1()
        policy.version = dcgm_structs.dcgmPolicy_version1
        policy.condition = 0
        try:
            dcgm_agent.dcgmPolicySet(raw, state.groupId, policy, None)
        except dcgm_structs.DCGMError:
            pass


def _finalize_group(state: _GroupState) -> None:
    """The finalizer of a group: clears its policy, destroys it if this object created it.
    Errors are ignored (the host engine may be gone)."""
    if state.deleted:
        return
    state.deleted = True
    try:
        _clear_policy(state)
        if state.created:
            raw = getattr(state.dcgmHandle, "handle", None)
            if raw is not None:
                dcgm_agent.dcgmGroupDestroy(raw, state.groupId)
    except Exception:  # noqa: BLE001 - nothing to report to at collection or exit
        pass


class _GroupPart:
    """The shared constructor of the sub-objects: ``(dcgmHandle, groupId, dcgmGroup)``."""

    def __init__(self, dcgmHandle: Any, groupId: Any, dcgmGroup: Any) -> None:
        self._dcgmHandle = dcgmHandle
        self._groupId = groupId
        self._dcgmGroup = dcgmGroup

    def _live(self) -> Any:
        """The raw handle, after checking that the group and the handle are still alive."""
        group = self._dcgmGroup
        if group is not None and getattr(group, "_deleted", False):
            raise _deleted_error()
        return _live_handle(self._dcgmHandle)


class DcgmGroupConfig(_GroupPart):
    """The target configuration of the group's GPUs (clocks, power limits, modes)."""

    def Set(self, config: Any, checkStatusErrors: bool = True) -> None:
        """Sets ``config`` (a ``c_dcgmDeviceConfig_v2``) on every GPU of the group. Raises the
        error of the first GPU that failed (``checkStatusErrors``), as NVIDIA's: a failing call
        with no per-GPU error is not reported."""
        raw = self._live()
        status = _DcgmStatus()
        ret = dcgm_structs.DCGM_ST_OK
        try:
            ret = dcgm_agent.dcgmConfigSet(raw, self._groupId, config, status.handle)
        except dcgm_structs.DCGMError:
            pass
        if checkStatusErrors:
            status.ThrowExceptionOnErrors()
        dcgm_structs._dcgmCheckReturn(ret)

    def Get(self, configType: int) -> List[Any]:
        """The configuration of each GPU of the group (``configType``: ``DCGM_CONFIG_TARGET_STATE``
        or ``DCGM_CONFIG_CURRENT_STATE``): a list of ``c_dcgmDeviceConfig_v2``."""
        raw = self._live()
        status = _DcgmStatus()
        gpuIds = self._dcgmGroup.GetGpuIds()
        configs = dcgm_agent.dcgmConfigGet(raw, self._groupId, configType, len(gpuIds), status.handle)
        status.ThrowExceptionOnErrors()
        return configs

    def Enforce(self) -> None:
        """Applies the configuration set with :meth:`Set` again."""
        raw = self._live()
        status = _DcgmStatus()
        ret = dcgm_structs.DCGM_ST_OK
        try:
            ret = dcgm_agent.dcgmConfigEnforce(raw, self._groupId, status.handle)
        except dcgm_structs.DCGMError:
            pass
        status.ThrowExceptionOnErrors()
        dcgm_structs._dcgmCheckReturn(ret)


class DcgmGroupSamples(_GroupPart):
    """Watching fields on the group and reading their values."""

    def WatchFields(self, fieldGroup: Any, updateFreq: int, maxKeepAge: float, maxKeepSamples: int) -> None:
        """Starts recording the fields of ``fieldGroup`` (a ``DcgmFieldGroup``) every
        ``updateFreq`` µs, kept ``maxKeepAge`` s and at most ``maxKeepSamples`` (0: no limit)."""
        raw = self._live()
        ret = dcgm_agent.dcgmWatchFields(raw, self._groupId, dcgm_field_helpers._field_group_id(fieldGroup),
                                         updateFreq, maxKeepAge, maxKeepSamples)
        dcgm_structs._dcgmCheckReturn(ret)

    def UnwatchFields(self, fieldGroup: Any) -> None:
        """Stops recording the fields of ``fieldGroup``."""
        raw = self._live()
        ret = dcgm_agent.dcgmUnwatchFields(raw, self._groupId, dcgm_field_helpers._field_group_id(fieldGroup))
        dcgm_structs._dcgmCheckReturn(ret)

    def GetLatest(self, fieldGroup: Any) -> Any:
        """The latest value of each field for each GPU: a ``DcgmFieldValueCollection``
        (``.values[gpuId][fieldId][0].value``)."""
        dfvc = dcgm_field_helpers.DcgmFieldValueCollection(self._live(), self._groupId)
        dfvc.GetLatestValues(fieldGroup)
        return dfvc

    def GetLatest_v2(self, fieldGroup: Any) -> Any:
        """The latest value of each field for each entity: a ``DcgmFieldValueEntityCollection``
        (``.values[entityGroupId][entityId][fieldId][0].value``)."""
        dfvec = dcgm_field_helpers.DcgmFieldValueEntityCollection(self._live(), self._groupId)
        dfvec.GetLatestValues(fieldGroup)
        return dfvec

    def GetAllSinceLastCall(self, dfvc: Any, fieldGroup: Any) -> Any:
        """The values recorded since the previous call, by GPU. Pass ``None`` first, then what
        the previous call answered; at least the latest values are always there."""
        if dfvc is None:
            dfvc = dcgm_field_helpers.DcgmFieldValueCollection(self._live(), self._groupId)
            dfvc.GetLatestValues(fieldGroup)
        else:
            self._live()
            dfvc.GetAllSinceLastCall(fieldGroup)
            if len(dfvc.values) == 0:
                dfvc.GetLatestValues(fieldGroup)
        return dfvc

    def GetAllSinceLastCall_v2(self, dfvec: Any, fieldGroup: Any) -> Any:
        """As :meth:`GetAllSinceLastCall`, by entity (a ``DcgmFieldValueEntityCollection``)."""
        if dfvec is None:
            dfvec = dcgm_field_helpers.DcgmFieldValueEntityCollection(self._live(), self._groupId)
            dfvec.GetLatestValues(fieldGroup)
        else:
            self._live()
            dfvec.GetAllSinceLastCall(fieldGroup)
            if len(dfvec.values) == 0:
                dfvec.GetLatestValues(fieldGroup)
        return dfvec

    def UpdateAllFields(self, waitForUpdate: Any) -> None:
        """``DcgmHandle.UpdateAllFields``: updates every watched field of the host engine."""
        self._live()
        self._dcgmHandle.UpdateAllFields(waitForUpdate)


class DcgmGroupHealth(_GroupPart):
    """The health watches of the group."""

    def Set(self, systems: int, updateInterval: Optional[int] = None, maxKeepAge: Optional[float] = None) -> None:
        """Enables the health watches ``systems`` (``DCGM_HEALTH_WATCH_*`` bits); with both
        ``updateInterval`` (µs) and ``maxKeepAge`` (s), ``dcgmHealthSet_v2``."""
        raw = self._live()
        if updateInterval is None or maxKeepAge is None:
            ret = dcgm_agent.dcgmHealthSet(raw, self._groupId, systems)
        else:
            ret = dcgm_agent.dcgmHealthSet_v2(raw, self._groupId, systems, updateInterval, maxKeepAge)
        dcgm_structs._dcgmCheckReturn(ret)

    def Get(self) -> int:
        """The enabled ``DCGM_HEALTH_WATCH_*`` bits."""
        return dcgm_agent.dcgmHealthGet(self._live(), self._groupId)

    def Check(self, version: int = dcgm_structs.dcgmHealthResponse_version5) -> Any:
        """The incidents since the previous check (a ``c_dcgmHealthResponse_v5``)."""
        return dcgm_agent.dcgmHealthCheck(self._live(), self._groupId, version)


class DcgmGroupPolicy(_GroupPart):
    """Violation policies of the group and callbacks on their conditions. What is set or
    registered here is cleared when the group is deleted or collected."""

    def __init__(self, dcgmHandle: Any, groupId: Any, dcgmGroup: Any) -> None:
        super().__init__(dcgmHandle, groupId, dcgmGroup)
        self._policy = None
        state = getattr(dcgmGroup, "_state", None)
        self._state: _GroupState = state if state is not None else _GroupState(dcgmHandle, groupId, False)

    @property
    def _condition(self) -> int:
        return self._state.condition

    @_condition.setter
    def _condition(self, value: int) -> None:
        self._state.condition = value

    def Get(self, statusHandle: Any = None) -> List[Any]:
        """The policy of each GPU of the group (``c_dcgmPolicy_v1``); ``statusHandle`` an optional
        ``DcgmStatus`` for per-GPU errors. An empty group raises ``pydcgm.DcgmException``."""
        raw = self._live()
        if statusHandle:
            statusHandle = statusHandle.handle
        count = len(self._dcgmGroup.GetGpuIds())
        if count <= 0:
            raise _DcgmException("This group has no GPUs, cannot retrieve policies")
        return dcgm_agent.dcgmPolicyGet(raw, self._groupId, count, statusHandle)

    def Set(self, policy: Any, statusHandle: Any = None) -> None:
        """Sets ``policy`` (a ``c_dcgmPolicy_v1``) on every GPU of the group."""
        raw = self._live()
        if statusHandle:
            statusHandle = statusHandle.handle
        dcgm_agent.dcgmPolicySet(raw, self._groupId, policy, statusHandle)
        self._policy = policy
        self._state.policySet = True

    def Register(self, condition: int, callback: Any = None, userData: Any = None) -> None:
        """Calls ``callback`` (from another thread) when one of ``condition``
        (``DCGM_POLICY_COND_*`` bits) is violated. ``callback`` is required
        (``pydcgm.DcgmException`` without)."""
        raw = self._live()
        if callback is None:
            raise _DcgmException("Callback must be provided to register that is not None")
        dcgm_agent.dcgmPolicyRegister_v2(raw, self._groupId, condition, callback, userData)
        self._state.condition |= condition

    def Unregister(self, condition: int) -> None:
        """Removes every callback of ``condition``."""
        dcgm_agent.dcgmPolicyUnregister(self._live(), self._groupId, condition)
        self._state.condition &= ~condition

    def Trigger(self) -> None:
        """Has the policy manager check now (needed in ``DCGM_OPERATION_MODE_MANUAL``)."""
        dcgm_agent.dcgmPolicyTrigger(self._live())


class DcgmGroupDiscovery(_GroupPart):
    """The topology of the group."""

    def GetTopology(self) -> Any:
        """A ``c_dcgmGroupTopology_v1`` of the group."""
        return dcgm_agent.dcgmGetGroupTopology(self._live(), self._groupId)


class DcgmGroupStats(_GroupPart):
    """Process and job statistics of the group."""

    def WatchPidFields(self, updateFreq: int, maxKeepAge: float, maxKeepSamples: int) -> None:
        """Starts recording the fields :meth:`GetPidInfo` reads."""
        ret = dcgm_agent.dcgmWatchPidFields(self._live(), self._groupId, updateFreq, maxKeepAge, maxKeepSamples)
        dcgm_structs._dcgmCheckReturn(ret)

    def GetPidInfo(self, pid: int) -> Any:
        """A ``c_dcgmPidInfo_v2`` of process ``pid`` on the group's GPUs."""
        return dcgm_agent.dcgmGetPidInfo(self._live(), self._groupId, pid)

    def WatchJobFields(self, updateFreq: int, maxKeepAge: float, maxKeepSamples: int) -> None:
        """Starts recording the fields :meth:`GetJobStats` reads."""
        ret = dcgm_agent.dcgmWatchJobFields(self._live(), self._groupId, updateFreq, maxKeepAge, maxKeepSamples)
        dcgm_structs._dcgmCheckReturn(ret)

    def StartJobStats(self, jobId: str) -> None:
        """Starts the job ``jobId`` (unique) on the group."""
        ret = dcgm_agent.dcgmJobStartStats(self._live(), self._groupId, jobId)
        dcgm_structs._dcgmCheckReturn(ret)

    def StopJobStats(self, jobId: str) -> None:
        """Stops the job ``jobId``."""
        ret = dcgm_agent.dcgmJobStopStats(self._live(), jobId)
        dcgm_structs._dcgmCheckReturn(ret)

    def GetJobStats(self, jobId: str) -> Any:
        """A ``c_dcgmJobInfo_v3`` of the job ``jobId``."""
        return dcgm_agent.dcgmJobGetStats(self._live(), jobId)

    def RemoveJob(self, jobId: str) -> Any:
        """Forgets the job ``jobId``."""
        return dcgm_agent.dcgmJobRemove(self._live(), jobId)

    def RemoveAllJobs(self) -> Any:
        """Forgets every job."""
        return dcgm_agent.dcgmJobRemoveAll(self._live())


class DcgmGroupAction(_GroupPart):
    """Diagnostics of the group."""

    def Validate(self, validate: int) -> Any:
        """Runs the validation ``validate`` (``DCGM_POLICY_VALID_*``): a ``c_dcgmDiagResponse_v12``."""
        raw = self._live()
        info = dcgm_structs.c_dcgmRunDiag_v10()
        info.version = dcgm_structs.dcgmRunDiag_version10
        info.validate = validate
        info.groupId = self._groupId
        return dcgm_agent.dcgmActionValidate_v2(raw, info)

    def RunDiagnostic(self, diagLevel: int) -> Any:
        """Runs the diagnostic of level ``diagLevel`` (``DCGM_DIAG_LVL_*``): a
        ``c_dcgmDiagResponse_v12``."""
        return dcgm_agent.dcgmRunDiagnostic(self._live(), self._groupId, diagLevel)

    def RunSpecificTest(self, testName: Any) -> Any:
        """Runs the one diagnostic test ``testName``: a ``c_dcgmDiagResponse_v12``."""
        raw = self._live()
        info = dcgm_structs.c_dcgmRunDiag_v10()
        info.version = dcgm_structs.dcgmRunDiag_version10
        name = testName.encode("utf-8") if isinstance(testName, str) else bytes(testName)
        field = type(info).testNames
        width = field.size // dcgm_structs.DCGM_MAX_TEST_NAMES
        ctypes.memmove(ctypes.addressof(info) + field.offset, name[: width - 1], min(len(name), width - 1))
        info.groupId = self._groupId
        info.validate = dcgm_structs.DCGM_POLICY_VALID_NONE
        return dcgm_agent.dcgmActionValidate_v2(raw, info)


class DcgmGroupProfiling(_GroupPart):
    """Profiling metrics of the group."""

    def GetSupportedMetricGroups(self) -> Any:
        """The profiling metric groups of the group's first GPU (a
        ``c_dcgmProfGetMetricGroups_v3``); an empty group raises ``DCGMError_GroupIsEmpty``."""
        raw = self._live()
        gpuIds = self._dcgmGroup.GetGpuIds()
        if len(gpuIds) < 1:
            raise dcgm_structs.DCGMError_GroupIsEmpty
        return dcgm_agent.dcgmProfGetSupportedMetricGroups(raw, gpuIds[0])


class DcgmGroup:
    """A DCGM group, bound to ``groupId`` (an existing group, or ``DCGM_GROUP_ALL_GPUS``) or,
    with ``groupName``, to a new group of type ``groupType`` (``DCGM_GROUP_EMPTY`` by default)
    that this object owns: destroyed by :meth:`Delete`, or when the object is collected. One of
    the two is required (``pydcgm.DcgmException``)."""

    #: Named groups of test-framework handles, per handle (held weakly here).
    groups: "weakref.WeakKeyDictionary[Any, weakref.WeakValueDictionary]" = weakref.WeakKeyDictionary()
    groupLock = threading.RLock()

    def __init__(self, dcgmHandle: Any, groupId: Any = None, groupName: Optional[str] = None,
                 groupType: int = dcgm_structs.DCGM_GROUP_EMPTY) -> None:
        self._dcgmHandle = dcgmHandle
        self._deleted = False
        if groupId is None and groupName is None:
            raise _DcgmException("Either groupId or groupName is required")
        created = groupId is None
        if created:
            groupId = dcgm_agent.dcgmGroupCreate(_live_handle(dcgmHandle), groupType, groupName)
        self._groupId = groupId
        self._state = _GroupState(dcgmHandle, groupId, created)
        self._finalizer = weakref.finalize(self, _safely, _finalize_group, self._state)

        self.name = groupName
        self.config = DcgmGroupConfig(dcgmHandle, groupId, self)
        self.samples = DcgmGroupSamples(dcgmHandle, groupId, self)
        self.health = DcgmGroupHealth(dcgmHandle, groupId, self)
        self.policy = DcgmGroupPolicy(dcgmHandle, groupId, self)
        self.discovery = DcgmGroupDiscovery(dcgmHandle, groupId, self)
        self.stats = DcgmGroupStats(dcgmHandle, groupId, self)
        self.action = DcgmGroupAction(dcgmHandle, groupId, self)
        self.profiling = DcgmGroupProfiling(dcgmHandle, groupId, self)

        fromDecorator = getattr(dcgmHandle, "FromDecorator", None)
        if fromDecorator is not None and fromDecorator() and self.name is not None:
            with DcgmGroup.groupLock:
                named = DcgmGroup.groups.get(dcgmHandle)
                if named is None:
                    named = DcgmGroup.groups[dcgmHandle] = weakref.WeakValueDictionary()
                if self.name not in named:
                    named[self.name] = self

    def Delete(self) -> None:
        """Clears what ``.policy`` set, destroys the group if it is not a static one, and leaves
        this object deleted (its methods raise ``DCGMError_NotConfigured``). Again: a no-op."""
        if self._deleted:
            return
        state = self._state
        self._finalizer.detach()
        _clear_policy(state)
        self._deleted = True
        state.deleted = True
        if self._groupId is not None and not self._IsGroupIdStatic():
            dcgm_structs._dcgmCheckReturn(dcgm_agent.dcgmGroupDestroy(_live_handle(self._dcgmHandle), self._groupId))
            with DcgmGroup.groupLock:
                named = DcgmGroup.groups.get(self._dcgmHandle)
                if named is not None and self.name in named:
                    del named[self.name]
        self._groupId = None

    @classmethod
    def clear(cls, dcgmHandle: Any = None) -> None:
        """Stops tracking the named groups (of ``dcgmHandle``, or of every handle)."""
        with cls.groupLock:
            if dcgmHandle is None:
                cls.groups = weakref.WeakKeyDictionary()
            elif dcgmHandle in cls.groups:
                del cls.groups[dcgmHandle]

    @classmethod
    def reset(cls) -> None:
        """Deletes every tracked named group, then stops tracking."""
        with cls.groupLock:
            for named in list(cls.groups.values()):
                for group in list(named.values()):
                    group.Delete()
        cls.clear()

    def _IsGroupIdStatic(self) -> bool:
        return self._groupId == dcgm_structs.DCGM_GROUP_ALL_GPUS or self._groupId == dcgm_structs.DCGM_GROUP_ALL_NVSWITCHES

    def _raw(self) -> Any:
        if self._deleted:
            raise _deleted_error()
        return _live_handle(self._dcgmHandle)

    def AddGpu(self, gpuId: int) -> None:
        """Adds GPU ``gpuId`` (a static group raises ``pydcgm.DcgmException``)."""
        if self._IsGroupIdStatic():
            raise _DcgmException("Can't add a GPU to a static group")
        dcgm_structs._dcgmCheckReturn(dcgm_agent.dcgmGroupAddDevice(self._raw(), self._groupId, gpuId))

    def AddEntity(self, entityGroupId: int, entityId: int) -> None:
        """Adds the entity ``(entityGroupId, entityId)``."""
        if self._IsGroupIdStatic():
            raise _DcgmException("Can't add an entity to a static group")
        dcgm_structs._dcgmCheckReturn(dcgm_agent.dcgmGroupAddEntity(self._raw(), self._groupId, entityGroupId, entityId))

    def RemoveGpu(self, gpuId: int) -> None:
        """Removes GPU ``gpuId``."""
        if self._IsGroupIdStatic():
            raise _DcgmException("Can't remove a GPU from a static group")
        dcgm_structs._dcgmCheckReturn(dcgm_agent.dcgmGroupRemoveDevice(self._raw(), self._groupId, gpuId))

    def RemoveEntity(self, entityGroupId: int, entityId: int) -> None:
        """Removes the entity ``(entityGroupId, entityId)``."""
        if self._IsGroupIdStatic():
            raise _DcgmException("Can't remove an entity from a static group")
        dcgm_structs._dcgmCheckReturn(dcgm_agent.dcgmGroupRemoveEntity(self._raw(), self._groupId, entityGroupId, entityId))

    def GetGpuIds(self) -> List[int]:
        """The ids of the group's GPUs (other entities left out)."""
        info = dcgm_agent.dcgmGroupGetInfo(self._raw(), self._groupId)
        return [info.entityList[i].entityId for i in range(info.count)
                if info.entityList[i].entityGroupId == dcgm_fields.DCGM_FE_GPU]

    def GetEntities(self) -> List[Any]:
        """The group's entities (``c_dcgmGroupEntityPair_t``)."""
        info = dcgm_agent.dcgmGroupGetInfo(self._raw(), self._groupId)
        return info.entityList[0:info.count]

    def GetId(self) -> Any:
        """The group id (``None`` once deleted)."""
        return self._groupId

    def RunDiagnostic(self, diagLevel: int) -> Any:
        """Runs the diagnostic of level ``diagLevel`` (``DCGM_DIAG_LVL_*``) on the group: a
        ``DcgmDiag.DcgmDiagResult`` whose ``GetResult()`` is the overall outcome (``"Pass"``,
        ``"Fail"``, ``"Warn"``, ``"Skip"``, ``"Not Run"``) and ``GetResponse()`` the
        ``c_dcgmDiagResponse_v12``. Where this installation cannot run diagnostics (no NVVS
        binary), the result is ``"Not Run"`` with the error in ``.error``; any other error
        raises. An addition for the project brief's API (NVIDIA's has ``action.RunDiagnostic``)."""
        from dcgm.compat.DcgmDiag import DcgmDiagResult, _DIAG_UNAVAILABLE

        try:
            return DcgmDiagResult(self.action.RunDiagnostic(diagLevel))
        except dcgm_structs.DCGMError as e:
            if e.value in _DIAG_UNAVAILABLE:
                return DcgmDiagResult(None, e)
            raise

    def __repr__(self) -> str:
        return "<DcgmGroup %s%s>" % (self.name or self._groupId, " deleted" if self._deleted else "")
