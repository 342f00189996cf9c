"""NVIDIA's ``dcgm_agent`` (DCGM 4.6): the procedural API, one Python function per C function
of ``dcgm_agent.h``, under NVIDIA's names, argument orders, defaults and return shapes.

Every function calls C through :func:`dcgm.compat.dcgm_structs._dcgmGetFunctionPointer`: the
extension's function pointers over ``dcgm-sys``, with the GIL released during the call. No
``ctypes.CDLL`` is involved. Handles, group ids, field-group ids and status handles are the
``c_void_p`` values the functions return, as NVIDIA's are; a non-zero return code is raised as
its ``DCGMError_*`` class (``dcgm_structs._dcgmCheckReturn``).

Differences from NVIDIA's module, each better for the caller and nothing lost:

* :func:`dcgmInit` opens the library first if no one has (NVIDIA's raises
  ``DCGMError_Uninitialized`` unless ``dcgm_structs._dcgmInit()`` ran before).
* :func:`dcgmGetLatestValues` called with three arguments (handle, group, field group) answers
  ``(values, count)``: one :class:`LatestValue` per entity and field, with ``.gpuId``,
  ``.fieldId`` and ``.value``. With NVIDIA's five arguments it is NVIDIA's call.
* What would reach C as a bad pointer raises instead of crashing the interpreter: an int or
  other non-text where C takes a string (``ctypes.ArgumentError``), a callback that is not a
  ``CFUNCTYPE`` object (``ctypes.ArgumentError``), a status handle that
  :func:`dcgmStatusCreate` did not make or that was destroyed (``DCGMError_Badparam``), a
  ctypes object smaller than the structure the library fills (``TypeError``).
* A ``str``, or an int outside the C parameter's range (``-1`` for an unsigned id), where C
  takes a number raises ``ctypes.ArgumentError`` before the call; NVIDIA's ctypes passes the
  string's address or the int cut to 32 bits, and the library answers whatever that reads as.
* :func:`dcgmPolicyRegister_v2` keeps its callback and user data alive until
  :func:`dcgmPolicyUnregister` (with NVIDIA's, a callback collected while registered crashes
  the process at the next violation).
"""

from __future__ import annotations

import ctypes
import functools
from ctypes import *  # noqa: F401,F403  (NVIDIA's module exports ctypes' names; programs use them)
from ctypes import CFUNCTYPE, POINTER, addressof, byref, c_char_p, c_double, c_int, c_int32, c_int64, c_uint, c_uint16, c_uint32, c_uint64, c_void_p, py_object
from typing import Any, Callable, Dict, List, Optional, Tuple

from dcgm.compat import dcgm_structs
from dcgm.compat import dcgm_fields, dcgmvalue  # noqa: F401,E402 (NVIDIA's module imports them; programs reach them through it)


#: The newest diagnostic response and run-diagnostic versions these functions use.
g_latestDiagResponseVer = dcgm_structs.dcgmDiagResponse_version12
g_latestRunDiagVer = dcgm_structs.dcgmRunDiag_version10


def ensure_byte_strings() -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator factory, as NVIDIA's: the decorated function gets every ``str`` argument
    (positional or keyword) as its UTF-8 ``bytes``. This module's functions accept ``str``
    without it (the function pointers encode text themselves); it is here for code that
    decorates its own functions with it."""

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            args = tuple(a.encode("utf-8") if isinstance(a, str) else a for a in args)
            kwargs = {k: (v.encode("utf-8") if isinstance(v, str) else v) for k, v in kwargs.items()}
            return fn(*args, **kwargs)

        return wrapper

    return decorator


#: NVIDIA's shorthand for :func:`dcgm_structs._dcgmGetFunctionPointer`.
dcgmFP = dcgm_structs._dcgmGetFunctionPointer


def _call(name: str, *args: Any) -> int:
    """Calls C function ``name``; raises the ``DCGMError_*`` of a non-zero code, else 0."""
    ret = dcgm_structs._dcgmGetFunctionPointer(name)(*args)
    dcgm_structs._dcgmCheckReturn(ret)
    return ret  # type: ignore[no-any-return]


def _versioned(cls: Any, version: int) -> Any:
    obj = cls()
    obj.version = version
    return obj


# ---- checks of what would reach C as a pointer. NVIDIA's ctypes passes any int as an
# address and the library dereferences it (the interpreter dies); these raise first.

_TEXT = (str, bytes, bytearray, ctypes.c_char_p, type(None))


def _text(value: Any, what: str) -> Any:
    """``value`` if it can be passed as a C string (``str``, ``bytes``, a ``c_char`` array,
    ``None`` for NULL); else ``ctypes.ArgumentError``."""
    if isinstance(value, _TEXT) or (isinstance(value, ctypes.Array) and getattr(value, "_type_", None) is ctypes.c_char):
        return value
    raise ctypes.ArgumentError("%s: expected str or bytes, got %s" % (what, type(value).__name__))


def _callback(value: Any, what: str) -> Any:
    """``value`` if it can be passed as a C function pointer (a ``CFUNCTYPE`` object, or
    ``None``/0 for NULL, which the library refuses); else ``ctypes.ArgumentError``."""
    if value is None or isinstance(value, ctypes._CFuncPtr):  # type: ignore[attr-defined]
        return value
    if type(value) is int and value == 0:
        return None
    raise ctypes.ArgumentError(
        "%s: expected a ctypes CFUNCTYPE callback (e.g. dcgm_agent.dcgmFieldValueEnumeration_f(fn)), got %s"
        % (what, type(value).__name__)
    )


_CDATA = (ctypes.Structure, ctypes.Union, ctypes.Array, ctypes._SimpleCData)  # type: ignore[attr-defined]


def _room(obj: Any, cls: Any, what: str) -> None:
    """``TypeError`` if ``obj``, a ctypes object the library will fill, is smaller than
    ``cls`` (the library would write past its end)."""
    if isinstance(obj, _CDATA) and ctypes.sizeof(obj) < ctypes.sizeof(cls):
        raise TypeError(
            "%s must be a %s (%d bytes), not a %s of %d bytes"
            % (what, cls.__name__, ctypes.sizeof(cls), type(obj).__name__, ctypes.sizeof(obj))
        )


#: The status handles :func:`dcgmStatusCreate` made and :func:`dcgmStatusDestroy` has not
#: destroyed. A status handle is the address of a C++ object: any other number would be
#: dereferenced by the library.
_statuses: set = set()


def _address(v: Any) -> Any:
    if isinstance(v, ctypes.c_void_p):
        return v.value or 0
    if v is None:
        return 0
    return v


def _status(value: Any, what: str = "status_handle") -> Any:
    """``value`` if it is NULL or a live status handle; else ``DCGMError_Badparam``."""
    a = _address(value)
    if a == 0 or (type(a) is int and a in _statuses):
        return value
    raise dcgm_structs.dcgmExceptionClass(dcgm_structs.DCGM_ST_BADPARAM)(  # type: ignore[misc]
        dcgm_structs.DCGM_ST_BADPARAM,
        "%s %r is not a live status handle (make one with dcgmStatusCreate; it is invalid after dcgmStatusDestroy)"
        % (what, value),
    )


# ---- lifecycle and connections


def dcgmInit() -> int:
    """Starts DCGM in this process (``dcgmInit``), opening the library first if
    ``dcgm_structs._dcgmInit`` has not (see the module's doc)."""
    if dcgm_structs.dcgmLib is None:
        dcgm_structs._LoadDcgmLibrary()
    return _call("dcgmInit")


def dcgmShutdown() -> int:
    """Stops DCGM in this process (``dcgmShutdown``)."""
    ret = _call("dcgmShutdown")
    _policy_keep.clear()
    return ret


def dcgmStartEmbedded(opMode: int) -> c_void_p:
    """Starts a host engine inside this process in ``opMode``; answers its handle."""
    handle = c_void_p()
    _call("dcgmStartEmbedded", opMode, byref(handle))
    return handle


def dcgmStopEmbedded(dcgm_handle: Any) -> int:
    """Stops the embedded host engine of ``dcgm_handle``."""
    ret = _call("dcgmStopEmbedded", dcgm_handle)
    _forget_policies(dcgm_handle)
    return ret


def dcgmConnect(ip_address: Any) -> c_void_p:
    """Connects to the host engine at ``ip_address`` (``host[:port]``); answers the handle."""
    handle = c_void_p()
    _call("dcgmConnect", _text(ip_address, "ip_address"), byref(handle))
    return handle


def dcgmConnect_v2(ip_address: Any, connectParams: Any, version: int = dcgm_structs.dcgmConnectV2Params_version) -> c_void_p:
    """:func:`dcgmConnect` with a ``c_dcgmConnectV2Params_v2`` (its version set to
    ``version``); answers the handle."""
    connectParams.version = version
    handle = c_void_p()
    _room(connectParams, dcgm_structs.c_dcgmConnectV2Params_v1, "connectParams")
    _call("dcgmConnect_v2", _text(ip_address, "ip_address"), byref(connectParams), byref(handle))
    return handle


def dcgmConnect_v3(connection_string: Any, connectParams: Any, version: int = dcgm_structs.dcgmConnectV3Params_version) -> c_void_p:
    """Connects by a connection string with a ``c_dcgmConnectV3Params_v1`` (its version set to
    ``version``); answers the handle."""
    connectParams.version = version
    handle = c_void_p()
    _room(connectParams, dcgm_structs.c_dcgmConnectV3Params_v1, "connectParams")
    _call("dcgmConnect_v3", _text(connection_string, "connection_string"), byref(connectParams), byref(handle))
    return handle


def dcgmDisconnect(dcgm_handle: Any) -> int:
    """Closes a connection made by one of the ``dcgmConnect`` functions."""
    ret = _call("dcgmDisconnect", dcgm_handle)
    _forget_policies(dcgm_handle)
    return ret


def dcgmServerRun(portNumber: int, socketPath: Any, connectionType: int) -> int:
    """Starts a listener of the embedded host engine (``dcgmEngineRun``)."""
    return _call("dcgmEngineRun", portNumber, _text(socketPath, "socketPath"), connectionType)


# ---- discovery


def _gpu_list(name: str, dcgm_handle: Any) -> List[int]:
    ids = (c_uint * dcgm_structs.DCGM_MAX_NUM_DEVICES)()
    count = c_uint()
    _call(name, dcgm_handle, ids, byref(count))
    return list(ids[: count.value])


def dcgmGetAllSupportedDevices(dcgm_handle: Any) -> List[int]:
    """The ids of the GPUs DCGM supports, as a list of ints."""
    return _gpu_list("dcgmGetAllSupportedDevices", dcgm_handle)


def dcgmGetAllDevices(dcgm_handle: Any) -> List[int]:
    """The ids of every GPU DCGM sees, supported or not, as a list of ints."""
    return _gpu_list("dcgmGetAllDevices", dcgm_handle)


def dcgmGetDeviceAttributes(dcgm_handle: Any, gpuId: int, version: int = dcgm_structs.dcgmDeviceAttributes_version3) -> Any:
    """A GPU's ``c_dcgmDeviceAttributes_v3``; another ``version`` raises
    ``DCGMError_VerMismatch`` before any call."""
    if version != dcgm_structs.dcgmDeviceAttributes_version3:
        dcgm_structs._dcgmCheckReturn(dcgm_structs.DCGM_ST_VER_MISMATCH)
    attrs = _versioned(dcgm_structs.c_dcgmDeviceAttributes_v3, dcgm_structs.dcgmDeviceAttributes_version3)
    _call("dcgmGetDeviceAttributes", dcgm_handle, c_int(gpuId), byref(attrs))
    return attrs


def dcgmGetEntityGroupEntities(dcgm_handle: Any, entityGroup: int, flags: int) -> List[int]:
    """The ids of the entities of one entity group (``DCGM_FE_*``), as a list of ints."""
    capacity = dcgm_structs.DCGM_GROUP_MAX_ENTITIES_V2
    ids = (c_uint32 * capacity)()
    count = c_int32(capacity)
    _call("dcgmGetEntityGroupEntities", dcgm_handle, entityGroup, ids, byref(count), flags)
    return ids[: count.value]


def dcgmGetNvLinkLinkStatus(dcgm_handle: Any) -> Any:
    """The state of every NVLink of every GPU and NvSwitch (``c_dcgmNvLinkStatus_v5``)."""
    status = _versioned(dcgm_structs.c_dcgmNvLinkStatus_v5, dcgm_structs.dcgmNvLinkStatus_version)
    _call("dcgmGetNvLinkLinkStatus", dcgm_handle, byref(status))
    return status


def dcgmGetNvLinkP2PStatus(dcgm_handle: Any, inOutStatus: Any, version: int = dcgm_structs.dcgmNvLinkP2PStatus_version1) -> None:
    """Fills ``inOutStatus`` (a ``c_dcgmNvLinkP2PStatus_v1``, its version set to
    ``version``) with the GPU-to-GPU link status; answers ``None``."""
    inOutStatus.version = version
    _room(inOutStatus, dcgm_structs.c_dcgmNvLinkP2PStatus_v1, "inOutStatus")
    _call("dcgmGetNvLinkP2PStatus", dcgm_handle, byref(inOutStatus))


def dcgmGetGpuStatus(dcgm_handle: Any, gpuId: int) -> int:
    """A GPU's ``DcgmEntityStatus_t`` (int)."""
    status = c_uint()
    _call("dcgmGetGpuStatus", dcgm_handle, gpuId, byref(status))
    return status.value


def dcgmGetCpuHierarchy(dcgm_handle: Any) -> Any:
    """The CPUs and cores of the node (``c_dcgmCpuHierarchy_v1``)."""
    h = _versioned(dcgm_structs.c_dcgmCpuHierarchy_v1, dcgm_structs.dcgmCpuHierarchy_version1)
    _call("dcgmGetCpuHierarchy", dcgm_handle, byref(h))
    return h


def dcgmGetCpuHierarchy_v2(dcgm_handle: Any) -> Any:
    """The CPUs and cores of the node, with serial numbers (``c_dcgmCpuHierarchy_v2``)."""
    h = _versioned(dcgm_structs.c_dcgmCpuHierarchy_v2, dcgm_structs.dcgmCpuHierarchy_version2)
    _call("dcgmGetCpuHierarchy_v2", dcgm_handle, byref(h))
    return h


def dcgmCpuHierarchyCpuOwnsCore(core_id: int, owned_cores: Any) -> int:
    """Whether ``core_id`` is set in a CPU's ``ownedCores`` bitmask: the C function's answer
    (non-zero for yes), with no error check, as NVIDIA's."""
    ref = byref(owned_cores)
    _room(owned_cores, dcgm_structs.c_dcgmCpuHierarchyOwnedCores_v1, "owned_cores")
    return dcgm_structs._dcgmGetFunctionPointer("dcgmCpuHierarchyCpuOwnsCore")(core_id, ref)  # type: ignore[no-any-return]


def dcgmGetGpuChipArchitecture(dcgm_handle: Any, gpuId: int) -> int:
    """A GPU's ``dcgmChipArchitecture_t`` (int)."""
    arch = c_int32()
    _call("dcgmGetGpuChipArchitecture", dcgm_handle, gpuId, byref(arch))
    return arch.value


def dcgmGetGpuInstanceHierarchy(dcgm_handle: Any) -> Any:
    """The MIG hierarchy (``c_dcgmMigHierarchy_v2``)."""
    h = _versioned(
        dcgm_structs.c_dcgmMigHierarchy_v2, dcgm_structs.c_dcgmMigHierarchy_version2
    )
    _call("dcgmGetGpuInstanceHierarchy", dcgm_handle, byref(h))
    return h


def dcgmCreateMigEntity(dcgm_handle: Any, parentId: int, profile: int, createOption: int, flags: int) -> None:
    """Creates a GPU or compute instance; answers ``None``."""
    req = _versioned(
        dcgm_structs.c_dcgmCreateMigEntity_v1, dcgm_structs.c_dcgmCreateMigEntity_version1
    )
    req.parentId = parentId
    req.createOption = createOption
    req.profile = profile
    req.flags = flags
    _call("dcgmCreateMigEntity", dcgm_handle, byref(req))


def dcgmDeleteMigEntity(dcgm_handle: Any, entityGroupId: int, entityId: int, flags: int) -> None:
    """Deletes a GPU or compute instance; answers ``None``."""
    req = _versioned(
        dcgm_structs.c_dcgmDeleteMigEntity_v1, dcgm_structs.c_dcgmDeleteMigEntity_version1
    )
    req.entityGroupId = entityGroupId
    req.entityId = entityId
    req.flags = flags
    _call("dcgmDeleteMigEntity", dcgm_handle, byref(req))


# ---- groups


def dcgmGroupCreate(dcgm_handle: Any, type: int, groupName: Any) -> c_void_p:  # noqa: A002 (NVIDIA's name)
    """Creates a group (``DCGM_GROUP_EMPTY`` or ``DCGM_GROUP_DEFAULT*``); answers its id."""
    group = c_void_p()
    _call("dcgmGroupCreate", dcgm_handle, type, _text(groupName, "groupName"), byref(group))
    return group


def dcgmGroupDestroy(dcgm_handle: Any, group_id: Any) -> int:
    """Destroys a group."""
    return _call("dcgmGroupDestroy", dcgm_handle, group_id)


def dcgmGroupAddDevice(dcgm_handle: Any, group_id: Any, gpu_id: int) -> int:
    """Adds a GPU to a group."""
    return _call("dcgmGroupAddDevice", dcgm_handle, group_id, gpu_id)


def dcgmGroupAddEntity(dcgm_handle: Any, group_id: Any, entityGroupId: int, entityId: int) -> int:
    """Adds an entity (``DCGM_FE_*``, id) to a group."""
    return _call("dcgmGroupAddEntity", dcgm_handle, group_id, entityGroupId, entityId)


def dcgmGroupRemoveDevice(dcgm_handle: Any, group_id: Any, gpu_id: int) -> int:
    """Removes a GPU from a group."""
    return _call("dcgmGroupRemoveDevice", dcgm_handle, group_id, gpu_id)


def dcgmGroupRemoveEntity(dcgm_handle: Any, group_id: Any, entityGroupId: int, entityId: int) -> int:
    """Removes an entity from a group."""
    return _call("dcgmGroupRemoveEntity", dcgm_handle, group_id, entityGroupId, entityId)


def dcgmGroupGetInfo(dcgm_handle: Any, group_id: Any, version: int = dcgm_structs.c_dcgmGroupInfo_version3) -> Any:
    """A group's name and entities (``c_dcgmGroupInfo_v3``); another ``version`` raises
    ``DCGMError_VerMismatch`` before any call."""
    v3 = dcgm_structs.c_dcgmGroupInfo_version3
    if version != v3:
        dcgm_structs._dcgmCheckReturn(dcgm_structs.DCGM_ST_VER_MISMATCH)
    info = _versioned(dcgm_structs.c_dcgmGroupInfo_v3, v3)
    _call("dcgmGroupGetInfo", dcgm_handle, group_id, byref(info))
    return info


def dcgmGroupGetAllIds(dcgmHandle: Any) -> List[Optional[int]]:
    """The ids of every group, as a list (a ``c_void_p`` array's items: ``None`` for id 0)."""
    ids = (c_void_p * dcgm_structs.DCGM_MAX_NUM_GROUPS)()
    count = c_uint()
    _call("dcgmGroupGetAllIds", dcgmHandle, ids, byref(count))
    return list(ids[: count.value])


# ---- field groups


def dcgmFieldGroupCreate(dcgm_handle: Any, fieldIds: Any, fieldGroupName: Any) -> c_void_p:
    """Creates a field group of ``fieldIds`` (a sequence of field ids); answers its id."""
    ids = (c_uint16 * len(fieldIds))(*fieldIds)
    fg = c_void_p()
    _call("dcgmFieldGroupCreate", dcgm_handle, c_int32(len(fieldIds)), byref(ids), _text(fieldGroupName, "fieldGroupName"), byref(fg))
    return fg


def dcgmFieldGroupDestroy(dcgm_handle: Any, fieldGroupId: Any) -> int:
    """Destroys a field group."""
    return _call("dcgmFieldGroupDestroy", dcgm_handle, fieldGroupId)


def dcgmFieldGroupGetInfo(dcgm_handle: Any, fieldGroupId: Any) -> Any:
    """A field group's name and fields (``c_dcgmFieldGroupInfo_v1``)."""
    info = _versioned(dcgm_structs.c_dcgmFieldGroupInfo_v1, dcgm_structs.dcgmFieldGroupInfo_version1)
    info.fieldGroupId = fieldGroupId
    _call("dcgmFieldGroupGetInfo", dcgm_handle, byref(info))
    return info


def dcgmFieldGroupGetAll(dcgm_handle: Any) -> Any:
    """Every field group (``c_dcgmAllFieldGroup_v1``)."""
    every = _versioned(dcgm_structs.c_dcgmAllFieldGroup_v1, dcgm_structs.dcgmAllFieldGroup_version1)
    _call("dcgmFieldGroupGetAll", dcgm_handle, byref(every))
    return every


# ---- status handles


def dcgmStatusCreate() -> c_void_p:
    """Creates a status handle (a list of per-GPU errors some calls fill); answers it."""
    status = c_void_p()
    _call("dcgmStatusCreate", byref(status))
    if status.value:
        _statuses.add(status.value)
    return status


def dcgmStatusDestroy(status_handle: Any) -> int:
    """Destroys a status handle."""
    ret = _call("dcgmStatusDestroy", _status(status_handle))
    _statuses.discard(_address(status_handle))
    return ret


def dcgmStatusGetCount(status_handle: Any) -> int:
    """How many errors a status handle holds."""
    count = c_uint()
    _call("dcgmStatusGetCount", _status(status_handle), byref(count))
    return count.value


def dcgmStatusPopError(status_handle: Any) -> Any:
    """The oldest error of a status handle (``c_dcgmErrorInfo_v1``), removed from it; ``None``
    when there is none (no exception, as NVIDIA's)."""
    info = dcgm_structs.c_dcgmErrorInfo_v1()
    ret = dcgm_structs._dcgmGetFunctionPointer("dcgmStatusPopError")(_status(status_handle), byref(info))
    return info if ret == dcgm_structs.DCGM_ST_OK else None


def dcgmStatusClear(status_handle: Any) -> int:
    """Empties a status handle."""
    return _call("dcgmStatusClear", _status(status_handle))


# ---- configuration


def dcgmConfigSet(dcgm_handle: Any, group_id: Any, configToSet: Any, status_handle: Any) -> int:
    """Sets a group's configuration from ``configToSet`` (a ``c_dcgmDeviceConfig_v2``, its
    version set here); per-GPU failures go to ``status_handle``."""
    configToSet.version = dcgm_structs.dcgmDeviceConfig_version2
    ref = byref(configToSet)
    _room(configToSet, dcgm_structs.c_dcgmDeviceConfig_v2, "configToSet")
    return _call("dcgmConfigSet", dcgm_handle, group_id, ref, _status(status_handle))


def dcgmGetDeviceWorkloadPowerProfileInfo(dcgm_handle: Any, gpu_id: int) -> Tuple[Any, Any]:
    """A GPU's workload power profiles: ``(c_dcgmWorkloadPowerProfileProfilesInfo_v1,
    c_dcgmDeviceWorkloadPowerProfilesStatus_v1)``."""
    info = _versioned(
        dcgm_structs.c_dcgmWorkloadPowerProfileProfilesInfo_v1, dcgm_structs.dcgmWorkloadPowerProfileProfilesInfo_version1
    )
    status = _versioned(
        dcgm_structs.c_dcgmDeviceWorkloadPowerProfilesStatus_v1,
        dcgm_structs.dcgmDeviceWorkloadPowerProfileStatus_version1,
    )
    _call("dcgmGetDeviceWorkloadPowerProfileInfo", dcgm_handle, gpu_id, byref(info), byref(status))
    return (info, status)


def dcgmConfigGet(dcgm_handle: Any, group_id: Any, reqCfgType: int, count: int, status_handle: Any) -> List[Any]:
    """The target or current configuration (``reqCfgType``) of a group's GPUs: a list of
    ``count`` ``c_dcgmDeviceConfig_v2`` (entries beyond the group's GPUs keep ``gpuId``
    ``DCGM_INT32_BLANK``)."""
    version = dcgm_structs.dcgmDeviceConfig_version2
    configs = (dcgm_structs.c_dcgmDeviceConfig_v2 * count)()
    for c in configs:
        c.version = version
        c.gpuId = dcgm_structs.DCGM_INT32_BLANK
    _call("dcgmConfigGet", dcgm_handle, group_id, reqCfgType, count, configs, _status(status_handle))
    return list(configs[0:count])


def dcgmConfigEnforce(dcgm_handle: Any, group_id: Any, status_handle: Any) -> int:
    """Applies a group's target configuration again."""
    return _call("dcgmConfigEnforce", dcgm_handle, group_id, _status(status_handle))


def dcgmConfigSetWorkloadPowerProfile(dcgmHandle: Any, workloadPowerProfile: Any) -> int:
    """Sets a group's workload power profiles (a ``c_dcgmWorkloadPowerProfile_v1``)."""
    ref = byref(workloadPowerProfile)
    _room(workloadPowerProfile, dcgm_structs.c_dcgmWorkloadPowerProfile_v1, "workloadPowerProfile")
    return _call("dcgmConfigSetWorkloadPowerProfile", dcgmHandle, ref)


def dcgmPowerProfileIdToName(profileId: int) -> str:
    """The name of a workload power profile id; ``RuntimeError`` if the library has none."""
    name = c_char_p()
    _call("dcgmPowerProfileIdToName", c_uint32(profileId), byref(name))
    if not name.value:
        raise RuntimeError("the library has no name for power profile id %s" % (profileId,))
    return name.value.decode("utf-8")


# ---- fields: watches and values


def dcgmUpdateAllFields(dcgm_handle: Any, waitForUpdate: int) -> int:
    """Samples every watched field now (``waitForUpdate``: wait until done)."""
    return _call("dcgmUpdateAllFields", dcgm_handle, c_int(waitForUpdate))


#: ``int (*)(unsigned gpuId, dcgmFieldValue_v1 *values, int numValues, void *userData)``
dcgmFieldValueEnumeration_f = CFUNCTYPE(c_int32, c_uint32, POINTER(dcgm_structs.c_dcgmFieldValue_v1), c_int32, c_void_p)
#: ``int (*)(entityGroupId, entityId, dcgmFieldValue_v1 *values, int numValues, void *userData)``
dcgmFieldValueEntityEnumeration_f = CFUNCTYPE(
    c_int32, c_uint32, c_uint32, POINTER(dcgm_structs.c_dcgmFieldValue_v1), c_int32, c_void_p
)


def dcgmWatchFields(dcgm_handle: Any, groupId: Any, fieldGroupId: Any, updateFreq: int, maxKeepAge: float, maxKeepSamples: int) -> int:
    """Watches a field group on a group: sampled every ``updateFreq`` microseconds, kept
    ``maxKeepAge`` seconds / ``maxKeepSamples`` samples (0: no limit)."""
    return _call(
        "dcgmWatchFields", dcgm_handle, groupId, fieldGroupId, c_int64(updateFreq), c_double(maxKeepAge), c_int32(maxKeepSamples)
    )


def dcgmUnwatchFields(dcgm_handle: Any, groupId: Any, fieldGroupId: Any) -> int:
    """Ends a :func:`dcgmWatchFields`."""
    return _call("dcgmUnwatchFields", dcgm_handle, groupId, fieldGroupId)


def _since(name: str, dcgm_handle: Any, groupId: Any, fieldGroupId: Any, sinceTimestamp: int, enumCB: Any, userData: Any) -> int:
    nxt = c_int64()
    since = c_int64(sinceTimestamp)
    _call(name, dcgm_handle, groupId, fieldGroupId, since, byref(nxt), _callback(enumCB, "enumCB"), py_object(userData))
    return nxt.value


def dcgmGetValuesSince(dcgm_handle: Any, groupId: Any, fieldGroupId: Any, sinceTimestamp: int, enumCB: Any, userData: Any) -> int:
    """Calls ``enumCB`` (a :data:`dcgmFieldValueEnumeration_f`) per GPU with the samples newer
    than ``sinceTimestamp``; answers the timestamp to pass next time."""
    return _since("dcgmGetValuesSince", dcgm_handle, groupId, fieldGroupId, sinceTimestamp, enumCB, userData)


def dcgmGetValuesSince_v2(dcgm_handle: Any, groupId: Any, fieldGroupId: Any, sinceTimestamp: int, enumCB: Any, userData: Any) -> int:
    """:func:`dcgmGetValuesSince` per entity (``enumCB`` a
    :data:`dcgmFieldValueEntityEnumeration_f`)."""
    return _since("dcgmGetValuesSince_v2", dcgm_handle, groupId, fieldGroupId, sinceTimestamp, enumCB, userData)


class LatestValue:
    """One latest value, as the three-argument :func:`dcgmGetLatestValues` answers it:
    ``entityGroupId``, ``entityId``, ``gpuId`` (the entity id of a GPU; ``None`` for other
    entities), ``fieldId``, ``fieldType`` (``'i'``, ``'d'``, ``'s'``, ``'b'``...),
    ``status`` (its ``DCGM_ST_*``), ``ts`` (microseconds), ``value`` (an int, float, str or
    bytes; ``None`` when the field has no value) and ``blank`` (the :class:`dcgm.Blank` kind of
    an empty value, else ``None``)."""

    __slots__ = ("entityGroupId", "entityId", "gpuId", "fieldId", "fieldType", "status", "ts", "value", "blank")
    value: Any
    blank: Any

    def __init__(self, group: int, entity: int, fv: Any) -> None:
        from dcgm import Blank

        self.entityGroupId = group
        self.entityId = entity
        self.gpuId = entity if group == dcgm_structs.DCGM_FE_GPU else None
        self.fieldId = fv.fieldId
        self.fieldType = chr(fv.fieldType)
        self.status = fv.status
        self.ts = fv.ts
        self.value, self.blank = _decode(self.fieldType, fv.value, Blank) if fv.status == 0 else (None, None)

    def __repr__(self) -> str:
        return "LatestValue(entityGroupId=%d, entityId=%d, fieldId=%d, value=%r)" % (
            self.entityGroupId,
            self.entityId,
            self.fieldId,
            self.value,
        )


def _member(union: Any, *names: str) -> Any:
    for n in names:
        try:
            return getattr(union, n)
        except AttributeError:
            continue
    raise AttributeError(names[0])


def _decode(kind: str, union: Any, Blank: Any) -> Tuple[Any, Any]:
    """``(value, blank kind)`` of a field value's union by its type letter: a sentinel of any
    width (``DCGM_*_BLANK`` + 0..3: blank, not found, not supported, not permissioned) is
    ``(None, its dcgm.Blank)``."""
    kinds = list(Blank)
    if kind == "d":
        v = _member(union, "dbl")
        b = v - dcgm_structs.DCGM_FP64_BLANK
        if v >= dcgm_structs.DCGM_FP64_BLANK and b in (0, 1, 2, 3):
            return None, kinds[int(b)]
        return v, None
    if kind in ("i", "t"):
        v = _member(union, "i64", "i64_")
        for base in (dcgm_structs.DCGM_INT64_BLANK, dcgm_structs.DCGM_INT32_BLANK):
            if 0 <= v - base <= 3:
                return None, kinds[v - base]
        return v, None
    if kind == "s":
        v = _member(union, "str", "str_")
        v = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        for i, s in enumerate(("<<<NULL>>>", "<<<NOT_FOUND>>>", "<<<NOT_SUPPORTED>>>", "<<<NOT_PERM>>>")):
            if v == s:
                return None, kinds[i]
        return v, None
    return bytes(_member(union, "blob")), None


def _latest_convenience(dcgm_handle: Any, groupId: Any, fieldGroupId: Any) -> Tuple[List[LatestValue], int]:
    out: List[LatestValue] = []
    errors: List[BaseException] = []

    def collect(group: int, entity: int, values: Any, n: int, _user: Any) -> int:
        try:
            for i in range(n):
                out.append(LatestValue(group, entity, values[i]))
        except BaseException as e:  # noqa: BLE001 - re-raised after the C call returns
            errors.append(e)
            return 1
        return 0

    cb = dcgmFieldValueEntityEnumeration_f(collect)
    _call("dcgmGetLatestValues_v2", dcgm_handle, groupId, fieldGroupId, cb, None)
    if errors:
        raise errors[0]
    if any(v.ts == 0 for v in out):
        # A watch that has not sampled yet (the brief's program reads right after
        # dcgmWatchFields): one forced update, then the read again, so the convenience answers
        # the first samples rather than blanks. NVIDIA's callback form is left as it is.
        _call("dcgmUpdateAllFields", dcgm_handle, 1)
        out.clear()
        _call("dcgmGetLatestValues_v2", dcgm_handle, groupId, fieldGroupId, cb, None)
        if errors:
            raise errors[0]
    return out, len(out)


def dcgmGetLatestValues(dcgm_handle: Any, groupId: Any, fieldGroupId: Any, enumCB: Any = None, userData: Any = None) -> Any:
    """NVIDIA's call: calls ``enumCB`` (a :data:`dcgmFieldValueEnumeration_f`) once per GPU
    with the latest value of each field of the field group, ``userData`` passed through;
    answers 0.

    Called with three arguments (no ``enumCB``), answers ``(values, count)`` instead: a list
    of :class:`LatestValue` (``.gpuId``, ``.fieldId``, ``.value``...), one per entity of the
    group and field, and its length; values a fresh watch has not sampled yet are sampled
    first (one ``dcgmUpdateAllFields``). This form is this package's convenience (NVIDIA's
    function needs the callback)."""
    if enumCB is None:
        return _latest_convenience(dcgm_handle, groupId, fieldGroupId)
    return _call("dcgmGetLatestValues", dcgm_handle, groupId, fieldGroupId, _callback(enumCB, "enumCB"), py_object(userData))


def dcgmGetLatestValues_v2(dcgm_handle: Any, groupId: Any, fieldGroupId: Any, enumCB: Any, userData: Any) -> int:
    """:func:`dcgmGetLatestValues` per entity (``enumCB`` a
    :data:`dcgmFieldValueEntityEnumeration_f`); answers 0."""
    return _call("dcgmGetLatestValues_v2", dcgm_handle, groupId, fieldGroupId, _callback(enumCB, "enumCB"), py_object(userData))


_FV1 = dcgm_structs.c_dcgmFieldValue_v1
_FV2 = dcgm_structs.c_dcgmFieldValue_v2
_PAIR = dcgm_structs.c_dcgmGroupEntityPair_t


def dcgmEntityGetLatestValues(dcgmHandle: Any, entityGroup: int, entityId: int, fieldIds: Any) -> Any:
    """The latest value of each of ``fieldIds`` for one entity: a ``c_dcgmFieldValue_v1``
    array in the order of ``fieldIds``."""
    n = len(fieldIds)
    values = (_FV1 * n)()
    ids = (c_uint16 * n)(*fieldIds)
    _call("dcgmEntityGetLatestValues", dcgmHandle, c_uint(entityGroup), c_uint32(entityId), ids, c_uint(n), values)
    return values


def dcgmEntitiesGetLatestValues(dcgmHandle: Any, entities: Any, fieldIds: Any, flags: int) -> Any:
    """The latest value of each of ``fieldIds`` for each of ``entities`` (a sequence of
    ``c_dcgmGroupEntityPair_t`` or ``(entityGroupId, entityId)`` pairs): a
    ``c_dcgmFieldValue_v2`` array, entity by entity, field by field. ``flags``
    ``DCGM_FV_FLAG_LIVE_DATA`` reads the hardware instead of the cache.

    The hot path of pollers: the arrays go to C as their addresses, the handle as its number."""
    if type(entities) is str or type(fieldIds) is str or type(dcgmHandle) is str or type(flags) is str:
        dcgmHandle, entities, fieldIds, flags = (  # type: ignore[assignment]  # NVIDIA's str arguments pass as bytes
            x.encode("utf-8") if isinstance(x, str) else x for x in (dcgmHandle, entities, fieldIds, flags)
        )
    ne = len(entities)
    nf = len(fieldIds)
    values = (_FV2 * (ne * nf))()
    pairs = (_PAIR * ne)(*entities)
    ids = (c_uint16 * nf)(*fieldIds)
    if type(dcgmHandle) is c_void_p:
        dcgmHandle = dcgmHandle.value
    ret = dcgm_structs._dcgmGetFunctionPointer("dcgmEntitiesGetLatestValues")(
        dcgmHandle, addressof(pairs), ne, addressof(ids), nf, flags, addressof(values)
    )
    if ret:
        dcgm_structs._dcgmCheckReturn(ret)
    return values


dcgmEntitiesGetLatestValues._str_arguments_handled = True  # type: ignore[attr-defined]


def dcgmGetFieldSummary(
    dcgmHandle: Any, fieldId: int, entityGroupType: int, entityId: int, summaryMask: int, startTime: int, endTime: int
) -> Any:
    """Summaries (min, max, average, ... per ``summaryMask``) of one field of one entity over
    ``[startTime, endTime]``: the filled ``c_dcgmFieldSummaryRequest_v1``."""
    req = _versioned(dcgm_structs.c_dcgmFieldSummaryRequest_v1, dcgm_structs.dcgmFieldSummaryRequest_version1)
    req.fieldId = fieldId
    req.entityGroupType = entityGroupType
    req.entityId = entityId
    req.summaryTypeMask = summaryMask
    req.startTime = startTime
    req.endTime = endTime
    _call("dcgmGetFieldSummary", dcgmHandle, byref(req))
    return req


# ---- health


def dcgmHealthSet(dcgm_handle: Any, groupId: Any, systems: int) -> int:
    """Enables the health watches of ``systems`` (``DCGM_HEALTH_WATCH_*`` bits) on a group."""
    return _call("dcgmHealthSet", dcgm_handle, groupId, systems)


def dcgmHealthSet_v2(dcgm_handle: Any, groupId: Any, systems: int, updateInterval: int, maxKeepAge: float) -> int:
    """:func:`dcgmHealthSet` with a sampling interval (microseconds) and a keep age (s)."""
    params = _versioned(dcgm_structs.c_dcgmHealthSetParams_v2, dcgm_structs.dcgmHealthSetParams_version2)
    params.groupId = groupId
    params.systems = systems
    params.updateInterval = updateInterval
    params.maxKeepAge = maxKeepAge
    return _call("dcgmHealthSet_v2", dcgm_handle, byref(params))


def dcgmHealthGet(dcgm_handle: Any, groupId: Any) -> int:
    """The health watches enabled on a group (``DCGM_HEALTH_WATCH_*`` bits)."""
    systems = c_int32()
    _call("dcgmHealthGet", dcgm_handle, groupId, byref(systems))
    return systems.value


def dcgmHealthCheck(dcgm_handle: Any, groupId: Any, version: int = dcgm_structs.dcgmHealthResponse_version5) -> Any:
    """The health of a group's entities (``c_dcgmHealthResponse_v5``); another ``version``
    raises ``DCGMError_VerMismatch`` before any call."""
    if version != dcgm_structs.dcgmHealthResponse_version5:
        dcgm_structs._dcgmCheckReturn(dcgm_structs.DCGM_ST_VER_MISMATCH)
    resp = _versioned(dcgm_structs.c_dcgmHealthResponse_v5, dcgm_structs.dcgmHealthResponse_version5)
    _call("dcgmHealthCheck", dcgm_handle, groupId, byref(resp))
    return resp


# ---- policies


def dcgmPolicyGet(dcgm_handle: Any, group_id: Any, count: int, status_handle: Any) -> List[Any]:
    """The policies of a group's GPUs: a list of ``count`` ``c_dcgmPolicy_v1``."""
    policies = (dcgm_structs.c_dcgmPolicy_v1 * count)()
    for p in policies:
        p.version = dcgm_structs.dcgmPolicy_version1
    _call("dcgmPolicyGet", dcgm_handle, group_id, count, policies, _status(status_handle))
    return policies[0:count]


def dcgmPolicySet(dcgm_handle: Any, group_id: Any, policy: Any, status_handle: Any) -> int:
    """Sets a group's policy from ``policy`` (a ``c_dcgmPolicy_v1``, version set by the
    caller)."""
    ref = byref(policy)
    _room(policy, dcgm_structs.c_dcgmPolicy_v1, "policy")
    return _call("dcgmPolicySet", dcgm_handle, group_id, ref, _status(status_handle))


#: (handle, group) -> the callbacks and user data registered there, kept alive while the
#: library may call them.
_policy_keep: Dict[Tuple[Any, Any], List[Tuple[int, Any, Any]]] = {}


def _forget_policies(dcgm_handle: Any) -> None:
    """Drops the callbacks kept for a handle the library will not call back on any more."""
    h = _key(dcgm_handle)
    for k in [k for k in _policy_keep if k[0] == h]:
        del _policy_keep[k]


def _key(v: Any) -> Any:
    if isinstance(v, ctypes._SimpleCData):  # type: ignore[attr-defined]
        return v.value
    return v


def dcgmPolicyRegister_v2(dcgm_handle: Any, groupId: Any, condition: int, callback: Any, userData: Any) -> int:
    """Calls ``callback`` (a ``CFUNCTYPE(None, POINTER(c_dcgmPolicyCallbackResponse_v2),
    c_uint64)`` object) from the library's thread at each violation of ``condition``
    (``DCGM_POLICY_COND_*`` bits) on the group, with ``userData``. A callback that raises is
    reported (``sys.unraisablehook``) and later violations still arrive. The callback is kept
    alive until :func:`dcgmPolicyUnregister`."""
    data = py_object(userData)
    ret = _call("dcgmPolicyRegister_v2", dcgm_handle, groupId, condition, _callback(callback, "callback"), data)
    _policy_keep.setdefault((_key(dcgm_handle), _key(groupId)), []).append((condition, callback, data))
    return ret


def dcgmPolicyUnregister(dcgm_handle: Any, groupId: Any, condition: int) -> int:
    """Ends the registrations of ``condition`` on a group."""
    ret = _call("dcgmPolicyUnregister", dcgm_handle, groupId, condition)
    key = (_key(dcgm_handle), _key(groupId))
    kept = [k for k in _policy_keep.get(key, []) if k[0] & ~condition]
    if kept:
        _policy_keep[key] = kept
    else:
        _policy_keep.pop(key, None)
    return ret


def dcgmPolicyTrigger(dcgm_handle: Any) -> int:
    """Checks the policies now (in manual operation mode)."""
    return _call("dcgmPolicyTrigger", dcgm_handle)


# ---- diagnostics


def _raise_with(e: Any, info: str) -> None:
    e.SetAdditionalInfo(info)
    raise e


def helperDiagCheckReturn_v2(ret: int, response: Any) -> Any:
    """For a diagnostic response of version 11 or later: answers ``response`` when ``ret`` is
    0, else raises ``ret``'s ``DCGMError_*`` with the response's system errors added to its
    message."""
    assert response.version >= dcgm_structs.dcgmDiagResponse_version11, "Expected version %d or later, got %d" % (
        dcgm_structs.dcgmDiagResponse_version11,
        response.version,
    )
    try:
        dcgm_structs._dcgmCheckReturn(ret)
    except dcgm_structs.DCGMError as e:
        n = min(response.numErrors, dcgm_structs.DCGM_DIAG_RESPONSE_ERRORS_MAX)
        msgs = [err.msg for err in response.errors[:n] if err.testId == dcgm_structs.DCGM_DIAG_RESPONSE_SYSTEM_ERROR]
        if msgs:
            _raise_with(e, ", ".join(msgs))
        raise
    return response


def helperDiagCheckReturn_v1(ret: int, response: Any) -> Any:
    """For a diagnostic response of version 10 or earlier: as :func:`helperDiagCheckReturn_v2`
    with the response's ``systemError`` message."""
    assert response.version <= dcgm_structs.dcgmDiagResponse_version10, "Expected version %d or earlier, got %d " % (
        dcgm_structs.dcgmDiagResponse_version10,
        response.version,
    )
    try:
        dcgm_structs._dcgmCheckReturn(ret)
    except dcgm_structs.DCGMError as e:
        if response.systemError.msg != "":
            _raise_with(e, "%s" % response.systemError.msg)
        raise
    return response


def helperDiagCheckReturn(ret: int, response: Any) -> Any:
    """:func:`helperDiagCheckReturn_v2` or ``_v1`` by the response's version."""
    if response.version >= dcgm_structs.dcgmDiagResponse_version11:
        return helperDiagCheckReturn_v2(ret, response)
    return helperDiagCheckReturn_v1(ret, response)


def helperMnDiagCheckReturn(ret: int, response: Any) -> Any:
    """For a multi-node diagnostic response: answers ``response`` when ``ret`` is 0, else
    raises with the response's error messages added."""
    assert response.version >= dcgm_structs.dcgmMnDiagResponse_version1, "Expected version %d or later, got %d" % (
        dcgm_structs.dcgmMnDiagResponse_version1,
        response.version,
    )
    try:
        dcgm_structs._dcgmCheckReturn(ret)
    except dcgm_structs.DCGMError as e:
        n = min(response.numErrors, dcgm_structs.DCGM_MN_DIAG_RESPONSE_ERRORS_MAX)
        msgs = [response.errors[i].msg for i in range(n) if response.errors[i].msg]
        if msgs:
            _raise_with(e, ", ".join(msgs))
        raise
    return response


def _diag_response(version10: bool = False) -> Any:
    if version10:
        return _versioned(dcgm_structs.c_dcgmDiagResponse_v10, dcgm_structs.dcgmDiagResponse_version10)
    return _versioned(dcgm_structs.c_dcgmDiagResponse_v12, dcgm_structs.dcgmDiagResponse_version12)


def dcgmActionValidate_v2(dcgm_handle: Any, runDiagInfo: Any, runDiagVersion: int = dcgm_structs.dcgmRunDiag_version10) -> Any:
    """Runs the diagnostic ``runDiagInfo`` describes (its version set to ``runDiagVersion``):
    the response (``c_dcgmDiagResponse_v10`` for a ``dcgmRunDiag_version7`` request, else
    ``c_dcgmDiagResponse_v12``), checked by :func:`helperDiagCheckReturn`."""
    response = _diag_response(runDiagVersion == dcgm_structs.dcgmRunDiag_version7)
    runDiagInfo.version = runDiagVersion
    ref = byref(runDiagInfo)
    _room(runDiagInfo, dcgm_structs.c_dcgmRunDiag_v7, "runDiagInfo")
    ret = dcgm_structs._dcgmGetFunctionPointer("dcgmActionValidate_v2")(dcgm_handle, ref, byref(response))
    return helperDiagCheckReturn(ret, response)


def dcgmActionValidate(dcgm_handle: Any, group_id: Any, validate: int) -> Any:
    """Runs the diagnostic ``validate`` (``DCGM_POLICY_VALID_*``) on a group, through
    ``dcgmActionValidate_v2``; answers the ``c_dcgmDiagResponse_v12``."""
    response = _diag_response()
    info = _versioned(dcgm_structs.c_dcgmRunDiag_v10, dcgm_structs.dcgmRunDiag_version10)
    info.validate = validate
    info.groupId = group_id
    ret = dcgm_structs._dcgmGetFunctionPointer("dcgmActionValidate_v2")(dcgm_handle, byref(info), byref(response))
    return helperDiagCheckReturn(ret, response)


def dcgmRunDiagnostic(dcgm_handle: Any, group_id: Any, diagLevel: int) -> Any:
    """Runs the diagnostic of level ``diagLevel`` (``DCGM_DIAG_LVL_*``) on a group; answers
    the ``c_dcgmDiagResponse_v12``."""
    response = _diag_response()
    ret = dcgm_structs._dcgmGetFunctionPointer("dcgmRunDiagnostic")(dcgm_handle, group_id, diagLevel, byref(response))
    return helperDiagCheckReturn(ret, response)


def dcgmRunMnDiagnostic(dcgm_handle: Any, runMnDiagInfo: Any, runMnDiagVersion: int = dcgm_structs.dcgmRunMnDiag_version1) -> Any:
    """Runs a multi-node diagnostic; answers the ``c_dcgmMnDiagResponse_v1``."""
    response = _versioned(dcgm_structs.c_dcgmMnDiagResponse_v1, dcgm_structs.dcgmMnDiagResponse_version1)
    runMnDiagInfo.version = runMnDiagVersion
    ref = byref(runMnDiagInfo)
    _room(runMnDiagInfo, dcgm_structs.c_dcgmRunMnDiag_v1, "runMnDiagInfo")
    ret = dcgm_structs._dcgmGetFunctionPointer("dcgmRunMnDiagnostic")(dcgm_handle, ref, byref(response))
    return helperMnDiagCheckReturn(ret, response)


def dcgmStopMnDiagnostic(dcgm_handle: Any) -> int:
    """Stops a running multi-node diagnostic."""
    return _call("dcgmStopMnDiagnostic", dcgm_handle)


def dcgmDiagSendHeartbeat(dcgmHandle: Any) -> int:
    """Tells a running diagnostic its client is alive."""
    return _call("dcgmDiagSendHeartbeat", dcgmHandle)


# ---- process and job statistics, topology


def dcgmWatchPidFields(dcgm_handle: Any, groupId: Any, updateFreq: int, maxKeepAge: float, maxKeepSamples: int) -> int:
    """Watches the fields process statistics need on a group."""
    return _call("dcgmWatchPidFields", dcgm_handle, groupId, c_int64(updateFreq), c_double(maxKeepAge), c_int32(maxKeepSamples))


def dcgmGetPidInfo(dcgm_handle: Any, groupId: Any, pid: int) -> Any:
    """The statistics of process ``pid`` on a group's GPUs (``c_dcgmPidInfo_v2``)."""
    info = _versioned(dcgm_structs.c_dcgmPidInfo_v2, dcgm_structs.dcgmPidInfo_version2)
    info.pid = pid
    _call("dcgmGetPidInfo", dcgm_handle, groupId, byref(info))
    return info


def dcgmGetDeviceTopology(dcgm_handle: Any, gpuId: int) -> Any:
    """A GPU's links to the other GPUs and its CPU affinity (``c_dcgmDeviceTopology_v2``)."""
    topo = _versioned(dcgm_structs.c_dcgmDeviceTopology_v2, dcgm_structs.dcgmDeviceTopology_version2)
    _call("dcgmGetDeviceTopology", dcgm_handle, gpuId, byref(topo))
    return topo


def dcgmGetGroupTopology(dcgm_handle: Any, groupId: Any) -> Any:
    """The topology of a group's GPUs (``c_dcgmGroupTopology_v2``)."""
    topo = _versioned(dcgm_structs.c_dcgmGroupTopology_v2, dcgm_structs.dcgmGroupTopology_version2)
    _call("dcgmGetGroupTopology", dcgm_handle, groupId, byref(topo))
    return topo


def dcgmSelectGpusByTopology(dcgmHandle: Any, inputGpuIds: int, numGpus: int, hintFlags: int) -> c_int64:
    """The best ``numGpus`` of the ``inputGpuIds`` bitmask by topology: a ``c_int64`` bitmask
    (the ctypes object, as NVIDIA's)."""
    out = c_int64()
    _call("dcgmSelectGpusByTopology", dcgmHandle, c_uint64(inputGpuIds), c_uint32(numGpus), byref(out), c_uint64(hintFlags))
    return out


def dcgmWatchJobFields(dcgm_handle: Any, groupId: Any, updateFreq: int, maxKeepAge: float, maxKeepSamples: int) -> int:
    """Watches the fields job statistics need on a group."""
    return _call("dcgmWatchJobFields", dcgm_handle, groupId, c_int64(updateFreq), c_double(maxKeepAge), c_int32(maxKeepSamples))


def dcgmJobStartStats(dcgm_handle: Any, groupId: Any, jobid: Any) -> int:
    """Starts recording job ``jobid`` (text) on a group."""
    return _call("dcgmJobStartStats", dcgm_handle, groupId, _text(jobid, "jobid"))


def dcgmJobStopStats(dcgm_handle: Any, jobid: Any) -> int:
    """Stops recording job ``jobid``."""
    return _call("dcgmJobStopStats", dcgm_handle, _text(jobid, "jobid"))


def dcgmJobGetStats(dcgm_handle: Any, jobid: Any) -> Any:
    """The statistics of job ``jobid`` (``c_dcgmJobInfo_v3``)."""
    info = _versioned(dcgm_structs.c_dcgmJobInfo_v3, dcgm_structs.dcgmJobInfo_version3)
    _call("dcgmJobGetStats", dcgm_handle, _text(jobid, "jobid"), byref(info))
    return info


def dcgmJobRemove(dcgm_handle: Any, jobid: Any) -> int:
    """Forgets job ``jobid``."""
    return _call("dcgmJobRemove", dcgm_handle, _text(jobid, "jobid"))


def dcgmJobRemoveAll(dcgm_handle: Any) -> int:
    """Forgets every job."""
    return _call("dcgmJobRemoveAll", dcgm_handle)


# ---- introspection, modules, profiling, host engine


def dcgmIntrospectGetHostengineMemoryUsage(dcgm_handle: Any, waitIfNoData: Any = True) -> Any:
    """The host engine's memory use (``c_dcgmIntrospectMemory_v1``)."""
    mem = _versioned(dcgm_structs.c_dcgmIntrospectMemory_v1, dcgm_structs.dcgmIntrospectMemory_version1)
    _call("dcgmIntrospectGetHostengineMemoryUsage", dcgm_handle, byref(mem), waitIfNoData)
    return mem


def dcgmIntrospectGetHostengineCpuUtilization(dcgm_handle: Any, waitIfNoData: Any = True) -> Any:
    """The host engine's CPU use (``c_dcgmIntrospectCpuUtil_v1``)."""
    cpu = _versioned(dcgm_structs.c_dcgmIntrospectCpuUtil_v1, dcgm_structs.dcgmIntrospectCpuUtil_version1)
    _call("dcgmIntrospectGetHostengineCpuUtilization", dcgm_handle, byref(cpu), waitIfNoData)
    return cpu


def dcgmModuleDenylist(dcgmHandle: Any, moduleId: int) -> int:
    """Keeps module ``moduleId`` (``DcgmModuleId*``) from loading."""
    return _call("dcgmModuleDenylist", dcgmHandle, c_uint32(moduleId))


def dcgmModuleGetStatuses(dcgmHandle: Any) -> Any:
    """The load status of every module (``c_dcgmModuleGetStatuses_v1``)."""
    st = _versioned(dcgm_structs.c_dcgmModuleGetStatuses_v1, dcgm_structs.dcgmModuleGetStatuses_version1)
    _call("dcgmModuleGetStatuses", dcgmHandle, byref(st))
    return st


def dcgmProfGetSupportedMetricGroups(dcgmHandle: Any, gpuId: int) -> Any:
    """The profiling metric groups of a GPU (``c_dcgmProfGetMetricGroups_v3``)."""
    msg = _versioned(dcgm_structs.c_dcgmProfGetMetricGroups_v3, dcgm_structs.dcgmProfGetMetricGroups_version3)
    msg.gpuId = gpuId
    _call("dcgmProfGetSupportedMetricGroups", dcgmHandle, byref(msg))
    return msg


def dcgmProfPause(dcgmHandle: Any) -> int:
    """Pauses profiling metrics (so another profiler can run)."""
    return _call("dcgmProfPause", dcgmHandle)


def dcgmProfResume(dcgmHandle: Any) -> int:
    """Resumes profiling metrics after :func:`dcgmProfPause`."""
    return _call("dcgmProfResume", dcgmHandle)


def dcgmVersionInfo() -> Any:
    """The library's version (``c_dcgmVersionInfo_v2``)."""
    msg = _versioned(dcgm_structs.c_dcgmVersionInfo_v2, dcgm_structs.dcgmVersionInfo_version2)
    _call("dcgmVersionInfo", byref(msg))
    return msg


def dcgmHostengineSetLoggingSeverity(dcgmHandle: Any, logger: int, severity: int) -> int:
    """Sets the severity of one of the host engine's loggers."""
    msg = _versioned(dcgm_structs.c_dcgmSettingsSetLoggingSeverity_v2, dcgm_structs.dcgmSettingsSetLoggingSeverity_version2)
    msg.targetLogger = logger
    msg.targetSeverity = severity
    return _call("dcgmHostengineSetLoggingSeverity", dcgmHandle, byref(msg))


def dcgmHostengineIsHealthy(dcgmHandle: Any) -> Any:
    """The host engine's health (``c_dcgmHostengineHealth_v1``)."""
    msg = _versioned(dcgm_structs.c_dcgmHostengineHealth_v1, dcgm_structs.dcgmHostengineHealth_version1)
    _call("dcgmHostengineIsHealthy", dcgmHandle, byref(msg))
    return msg


def dcgmHostengineEnvironmentVariableInfo(dcgmHandle: Any, envVarInfo: Any) -> int:
    """Fills ``envVarInfo`` (a ``c_dcgmEnvVarInfo_v1`` naming a variable) with its value in
    the host engine's environment."""
    ref = byref(envVarInfo)
    _room(envVarInfo, dcgm_structs.c_dcgmEnvVarInfo_v1, "envVarInfo")
    return _call("dcgmHostengineEnvironmentVariableInfo", dcgmHandle, ref)


def dcgmAttachDriver(dcgmHandle: Any) -> int:
    """Attaches the host engine to the driver again (after :func:`dcgmDetachDriver`)."""
    return _call("dcgmAttachDriver", dcgmHandle)


def dcgmDetachDriver(dcgmHandle: Any) -> int:
    """Detaches the host engine from the driver (for a driver reload)."""
    return _call("dcgmDetachDriver", dcgmHandle)


# ---- str arguments as NVIDIA's functions see them: every public function gets each ``str``
# argument as UTF-8 ``bytes`` (NVIDIA decorates each with ensure_byte_strings), so a str
# handed to a structure field or iterated as a list behaves as it does there.


def _bytes_arguments(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for a in args:
            if isinstance(a, str):
                args = tuple(x.encode("utf-8") if isinstance(x, str) else x for x in args)
                break
        if kwargs:
            kwargs = {k: (v.encode("utf-8") if isinstance(v, str) else v) for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    return wrapper


for _name, _fn in list(globals().items()):
    if (
        _name.startswith("dcgm")
        and callable(_fn)
        and getattr(_fn, "__module__", None) == __name__
        and not isinstance(_fn, type)
        and not getattr(_fn, "_str_arguments_handled", False)
    ):
        globals()[_name] = _bytes_arguments(_fn)
del _name, _fn
