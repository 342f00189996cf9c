"""NVIDIA's ``dcgm_agent_internal`` (the Python side of DCGM's test API, ``dcgm_test_apis.h``,
from DCGM's own test tree: not one of the installed binding modules), under NVIDIA's names
and argument orders, over the same function pointers as :mod:`dcgm.compat.dcgm_agent`.

The requests are the ctypes structures of :mod:`dcgm.compat.dcgm_structs_internal`
(``c_dcgmCreateFakeEntities_v2``, ``c_dcgmInjectFieldValue_v1``, ...); handles are the
``c_void_p`` handles of :mod:`dcgm.compat.dcgm_agent`. A non-zero return code is raised as its
``DCGMError_*`` class.

Provided: fake entities, injected field values (into DCGM's cache or, on the real library
in NVML injection mode, into the injected NVML), per-GPU field reads and watches, the NVML
injection controls, NVLink link states, cache-manager field info, the cache flush, telemetry
pause/resume, the NvSwitch backend and reloadable modules. Not provided: the vGPU functions of
NVIDIA's module (``dcgmVgpuConfigSet``/``Get``/``Enforce``, ``dcgmGetVgpuDeviceAttributes``,
``dcgmGetVgpuInstanceAttributes``): not wrapped yet. libdcgm 4.6 exports them (and so does
dcgm-sim); on a bare-metal GPU they answer zero vGPU counts or ``NOT_SUPPORTED``.

:func:`dcgmCreateFakeEntities`, :func:`dcgmInjectFieldValue`, :func:`dcgmInjectEntityFieldValue`
and :func:`dcgmEmptyCache` also take a :class:`dcgm.Handle` (with the request objects of
:mod:`dcgm.structs_internal` or these ctypes structures): they then go through
:mod:`dcgm.testing` on that handle. :mod:`dcgm.agent_internal` is a typed view of these four.

One difference: :func:`dcgmGetLatestValuesForFields` and :func:`dcgmGetFieldValuesSince` pass
the field ids as 16-bit values, as the C functions declare them (NVIDIA's pass 32-bit values,
which the library reads as the ids interleaved with zeros).
"""

from __future__ import annotations

from ctypes import *  # noqa: F401,F403  (NVIDIA's module exports ctypes' names)
from ctypes import byref, c_bool, c_char, c_char_p, c_double, c_int, c_int32, c_int64, c_longlong, c_uint, c_uint16, c_void_p, cast, py_object
from typing import Any, List, Optional, Tuple, Union as _OneOf  # (ctypes' Union stays NVIDIA's name)

from dcgm import _native, fields as _fields, structs as _structs, testing as _testing
from dcgm.compat import _layout, dcgm_agent, dcgm_fields, dcgm_structs  # noqa: F401 (dcgm_fields: NVIDIA's module imports it too)

try:
    from dcgm.compat import dcgm_structs_internal
except ImportError:  # pragma: no cover - while the module is being written
    dcgm_structs_internal = None  # type: ignore[assignment]


def _internal(name: str, c_name: str) -> Any:
    """``dcgm_structs_internal.<name>``, else the layout table's class of ``c_name``."""
    cls = getattr(dcgm_structs_internal, name, None) if dcgm_structs_internal is not None else None
    return cls if cls is not None else _layout.build(c_name)


def _internal_const(name: str) -> Any:
    v = getattr(dcgm_structs_internal, name, None) if dcgm_structs_internal is not None else None
    return v if v is not None else _layout.CONSTANTS[name]


#: The handle of the embedded host engine in NVIDIA's tests (``c_void_p(0x7fffffff)``).
DCGM_EMBEDDED_HANDLE = c_void_p(0x7FFFFFFF)

_dcgmIntCheckReturn = dcgm_structs._dcgmCheckReturn
dcgmDeviceConfig_t = getattr(dcgm_structs, "c_dcgmDeviceConfig_v2", None)
dcgmRecvUpdates_t = getattr(dcgm_structs, "_dcgmRecvUpdates_t", None)
dcgmInjectFieldValue_t = _internal("c_dcgmInjectFieldValue_v1", "dcgmFieldValue_v1")
if dcgm_structs_internal is not None and hasattr(dcgm_structs_internal, "_dcgmStatsFileType_t"):
    dcgmStatsFileType_t = dcgm_structs_internal._dcgmStatsFileType_t

_call = dcgm_agent._call
_bytes_arguments = dcgm_agent._bytes_arguments


def dcgmGetLatestValuesForFields(dcgmHandle: Any, gpuId: int, fieldIds: Any) -> Any:
    """The latest value of each of ``fieldIds`` for one GPU: a ``c_dcgmFieldValue_v1`` array."""
    n = len(fieldIds)
    values = (dcgm_structs.c_dcgmFieldValue_v1 * n)()
    ids = (c_uint16 * n)(*fieldIds)
    _call("dcgmGetLatestValuesForFields", dcgmHandle, c_int(gpuId), ids, c_uint(n), values)
    return values


def dcgmGetMultipleValuesForField(
    dcgmHandle: Any, gpuId: int, fieldId: int, maxCount: int, startTs: int, endTs: int, order: int
) -> List[Any]:
    """Up to ``maxCount`` samples of one field of one GPU between ``startTs`` and ``endTs``
    (microseconds, 0 for open), in ``order`` (``DCGM_ORDER_ASCENDING``/``DESCENDING``): a list
    of ``c_dcgmFieldValue_v1``."""
    count = c_int(maxCount)
    values = (dcgm_structs.c_dcgmFieldValue_v1 * maxCount)()
    _call(
        "dcgmGetMultipleValuesForField",
        dcgmHandle,
        c_int(gpuId),
        c_uint(fieldId),
        byref(count),
        c_int64(startTs),
        c_int64(endTs),
        c_uint(order),
        values,
    )
    return values[: int(count.value)]


def dcgmWatchFieldValue(dcgmHandle: Any, gpuId: int, fieldId: int, updateFreq: int, maxKeepAge: float, maxKeepEntries: int) -> int:
    """Watches one field of one GPU (every ``updateFreq`` microseconds)."""
    return _call(
        "dcgmWatchFieldValue",
        dcgmHandle,
        c_int(gpuId),
        c_uint(fieldId),
        c_longlong(updateFreq),
        c_double(maxKeepAge),
        c_int(maxKeepEntries),
    )


def dcgmUnwatchFieldValue(dcgmHandle: Any, gpuId: int, fieldId: int, clearCache: int) -> int:
    """Ends a :func:`dcgmWatchFieldValue` (``clearCache``: drop its samples)."""
    return _call("dcgmUnwatchFieldValue", dcgmHandle, c_int(gpuId), c_uint(fieldId), c_int(clearCache))


def _value_ref(value: Any) -> Any:
    ref = byref(value)
    dcgm_agent._room(value, dcgmInjectFieldValue_t, "value")
    return ref


# ---- the test API on a dcgm.Handle (what dcgm.agent_internal offers), through dcgm.testing

_Badparam = _structs.dcgmExceptionClass(_structs.DCGM_ST_BADPARAM)
_NotSupported = _structs.dcgmExceptionClass(_structs.DCGM_ST_NOT_SUPPORTED)


def _create_run(dcgmHandle: _native.Handle, group: int, parent: Tuple[int, int], n: int) -> List[int]:
    if group == _fields.DCGM_FE_GPU:
        return _testing.create_fake_gpus(dcgmHandle, n)
    if group == _fields.DCGM_FE_GPU_I:
        if parent[0] != _fields.DCGM_FE_GPU:
            raise _Badparam(_structs.DCGM_ST_BADPARAM, "the parent of a GPU instance is a GPU (DCGM_FE_GPU)")
        return _testing.create_fake_gpu_instances(dcgmHandle, parent[1], n)
    if group == _fields.DCGM_FE_GPU_CI:
        if parent[0] != _fields.DCGM_FE_GPU_I:
            raise _Badparam(
                _structs.DCGM_ST_BADPARAM, "the parent of a compute instance is a GPU instance (DCGM_FE_GPU_I)"
            )
        return _testing.create_fake_compute_instances(dcgmHandle, parent[1], n)
    raise _NotSupported(
        _structs.DCGM_ST_NOT_SUPPORTED,
        "this package creates fake GPUs, GPU instances and compute instances only, not entities "
        "of group %d" % group,
    )


def _create_on_handle(dcgmHandle: _native.Handle, cfe: Any) -> Any:
    """:func:`dcgmCreateFakeEntities` on a :class:`dcgm.Handle`: consecutive entries of one
    kind and parent are created in one call."""
    n = cfe.numToCreate
    if not 0 <= n <= len(cfe.entityList):
        raise _Badparam(_structs.DCGM_ST_BADPARAM, "numToCreate must be 0 to %d, not %d" % (len(cfe.entityList), n))
    i = 0
    while i < n:
        first = cfe.entityList[i]
        key = (first.entity.entityGroupId, (first.parent.entityGroupId, first.parent.entityId))
        j = i + 1
        while j < n:
            e = cfe.entityList[j]
            if (e.entity.entityGroupId, (e.parent.entityGroupId, e.parent.entityId)) != key:
                break
            j += 1
        ids = _create_run(dcgmHandle, key[0], key[1], j - i)
        for k, new_id in enumerate(ids):
            cfe.entityList[i + k].entity.entityId = new_id
        i = j
    return cfe


def _value_of(value: Any) -> Tuple[_OneOf[int, float, str], Optional[float]]:
    """An injected value's (value, timestamp in seconds or ``None`` for now)."""
    t = value.fieldType
    kind = chr(t) if isinstance(t, int) else t.decode() if isinstance(t, bytes) else t
    if kind == _fields.DCGM_FT_INT64:
        v: _OneOf[int, float, str] = int(value.value.i64)
    elif kind == _fields.DCGM_FT_DOUBLE:
        v = float(value.value.dbl)
    elif kind == _fields.DCGM_FT_STRING:
        s = value.value.str
        v = s.decode() if isinstance(s, bytes) else str(s)
    else:
        raise _Badparam(
            _structs.DCGM_ST_BADPARAM,
            "only DCGM_FT_INT64, DCGM_FT_DOUBLE and DCGM_FT_STRING values can be injected, not "
            "fieldType %r" % (t,),
        )
    ts = None if value.ts == 0 else value.ts / 1e6
    return v, ts


# ---- NVIDIA's functions


def dcgmInjectFieldValue(dcgmHandle: Any, gpuId: int, value: Any) -> int:
    """Injects ``value`` (a ``c_dcgmInjectFieldValue_v1``: ``version``, ``fieldId``,
    ``fieldType``, ``ts``, ``value``) as the newest sample of that field of GPU ``gpuId``."""
    if isinstance(dcgmHandle, _native.Handle):
        return dcgmInjectEntityFieldValue(dcgmHandle, _fields.DCGM_FE_GPU, gpuId, value)
    return _call("dcgmInjectFieldValue", dcgmHandle, c_uint(gpuId), _value_ref(value))


def dcgmInjectEntityFieldValue(dcgmHandle: Any, entityGroupId: int, entityId: int, value: Any) -> int:
    """:func:`dcgmInjectFieldValue` for any entity (``DCGM_FE_*``, id)."""
    if isinstance(dcgmHandle, _native.Handle):
        v, ts = _value_of(value)
        _testing.inject_value(dcgmHandle, (entityGroupId, entityId), value.fieldId, v, ts)
        return _structs.DCGM_ST_OK
    return _call("dcgmInjectEntityFieldValue", dcgmHandle, c_uint(entityGroupId), c_uint(entityId), _value_ref(value))


def dcgmInjectEntityFieldValueToNvml(dcgmHandle: Any, entityGroupId: int, entityId: int, value: Any) -> int:
    """Injects ``value`` into the injected NVML (the real library in NVML injection mode)."""
    return _call("dcgmInjectEntityFieldValueToNvml", dcgmHandle, c_uint(entityGroupId), c_uint(entityId), _value_ref(value))


def dcgmCreateNvmlInjectionGpu(dcgmHandle: Any, index: int) -> int:
    """Adds an injected NVML GPU at ``index``."""
    return _call("dcgmCreateNvmlInjectionGpu", dcgmHandle, c_uint(index))


def dcgmInjectNvmlDevice(dcgmHandle: Any, gpuId: int, key: Any, extraKeys: Any, extraKeyCount: int, injectNvmlRet: Any) -> int:
    """Sets what the injected NVML answers for ``key`` (text) of a GPU (``injectNvmlRet``, a
    ``c_injectNvmlRet_t``; ``extraKeys`` a ``c_injectNvmlVal_t`` array or ``None``)."""
    extra = None if extraKeys is None else byref(extraKeys)
    return _call(
        "dcgmInjectNvmlDevice",
        dcgmHandle,
        c_uint(gpuId),
        dcgm_agent._text(key, "key"),
        extra,
        c_uint(extraKeyCount),
        byref(injectNvmlRet),
    )


def dcgmInjectNvmlDeviceForFollowingCalls(
    dcgmHandle: Any, gpuId: int, key: Any, extraKeys: Any, extraKeyCount: int, injectNvmlRets: Any, retCount: int
) -> int:
    """Sets the injected NVML's answers for ``key`` for the next ``retCount`` calls."""
    extra = None if extraKeys is None else byref(extraKeys)
    return _call(
        "dcgmInjectNvmlDeviceForFollowingCalls",
        dcgmHandle,
        c_uint(gpuId),
        dcgm_agent._text(key, "key"),
        extra,
        c_uint(extraKeyCount),
        byref(injectNvmlRets),
        retCount,
    )


def dcgmGetNvmlInjectFuncCallCount(dcgmHandle: Any, funcCallInfo: Any) -> int:
    """Fills ``funcCallInfo`` (a ``c_injectNvmlFuncCallCounts_t``) with the injected NVML's
    per-function call counts."""
    return _call("dcgmGetNvmlInjectFuncCallCount", dcgmHandle, byref(funcCallInfo))


def dcgmResetNvmlInjectFuncCallCount(dcgmHandle: Any) -> int:
    """Zeroes the injected NVML's call counts."""
    return _call("dcgmResetNvmlInjectFuncCallCount", dcgmHandle)


def dcgmRemoveNvmlInjectedGpu(dcgmHandle: Any, uuid: Any) -> int:
    """Removes the injected NVML GPU of ``uuid`` (text)."""
    return _call("dcgmRemoveNvmlInjectedGpu", dcgmHandle, dcgm_agent._text(uuid, "uuid"))


def dcgmInjectedNvmlDeviceReset(dcgmHandle: Any, gpuId: int) -> int:
    """Resets an injected NVML GPU to its loaded state."""
    return _call("dcgmInjectedNvmlDeviceReset", dcgmHandle, c_uint(gpuId))


def dcgmRestoreNvmlInjectedGpu(dcgmHandle: Any, uuid: Any) -> int:
    """Restores an injected NVML GPU removed by :func:`dcgmRemoveNvmlInjectedGpu`."""
    return _call("dcgmRestoreNvmlInjectedGpu", dcgmHandle, dcgm_agent._text(uuid, "uuid"))


def dcgmSetEntityNvLinkLinkState(dcgmHandle: Any, entityGroupId: int, entityId: int, linkId: int, linkState: int) -> int:
    """Sets the state DCGM reports for one NVLink of a GPU or NvSwitch."""
    req = _internal("c_dcgmSetNvLinkLinkState_v1", "dcgmSetNvLinkLinkState_v1")()
    req.version = _internal_const("dcgmSetNvLinkLinkState_version1")
    req.entityGroupId = entityGroupId
    req.entityId = entityId
    req.linkId = linkId
    req.linkState = linkState
    return _call("dcgmSetEntityNvLinkLinkState", dcgmHandle, byref(req))


def dcgmGetCacheManagerFieldInfo(dcgmHandle: Any, entityId: int, entityGroupId: int, fieldId: int) -> Any:
    """The cache manager's bookkeeping of one field of one entity (a
    ``c_dcgmCacheManagerFieldInfo_v4``: watchers, sample counts, ...)."""
    cls = getattr(dcgm_structs_internal, "dcgmCacheManagerFieldInfo_v4", None) or _internal(
        "c_dcgmCacheManagerFieldInfo_v4", "dcgmCacheManagerFieldInfo_v4"
    )
    info = cls()
    info.version = _internal_const("dcgmCacheManagerFieldInfo_version4")
    info.entityId = entityId
    info.entityGroupId = entityGroupId
    info.fieldId = fieldId
    _call("dcgmGetCacheManagerFieldInfo", dcgmHandle, byref(info))
    return info


def dcgmCreateFakeEntities(dcgmHandle: Any, cfe: Any) -> Any:
    """Creates the first ``cfe.numToCreate`` entities of ``cfe.entityList`` (a
    ``c_dcgmCreateFakeEntities_v2``; each entry's ``entity.entityGroupId`` and ``parent``),
    writes their new ids into ``entity.entityId`` and answers ``cfe``."""
    cfe.version = _internal_const("dcgmCreateFakeEntities_version2")
    if isinstance(dcgmHandle, _native.Handle):
        return _create_on_handle(dcgmHandle, cfe)
    ref = byref(cfe)
    dcgm_agent._room(cfe, _internal("c_dcgmCreateFakeEntities_v2", "dcgmCreateFakeEntities_v2"), "cfe")
    _call("dcgmCreateFakeEntities", dcgmHandle, ref)
    return cfe


#: ``int (*)(unsigned gpuId, dcgmFieldValue_v1 *values, int numValues, void *userData)``
dcgmFieldValueEnumeration_f = dcgm_agent.dcgmFieldValueEnumeration_f


def dcgmGetFieldValuesSince(dcgmHandle: Any, groupId: Any, sinceTimestamp: int, fieldIds: Any, enumCB: Any, userData: Any) -> int:
    """Calls ``enumCB`` per GPU of the group with the samples of ``fieldIds`` newer than
    ``sinceTimestamp``; answers the timestamp to pass next time."""
    ids = (c_uint16 * len(fieldIds))(*fieldIds)
    nxt = c_int64()
    _call(
        "dcgmGetFieldValuesSince",
        dcgmHandle,
        groupId,
        c_int64(sinceTimestamp),
        ids,
        c_int32(len(fieldIds)),
        byref(nxt),
        dcgm_agent._callback(enumCB, "enumCB"),
        py_object(userData),
    )
    return nxt.value


def dcgmStopDiagnostic(dcgm_handle: Any) -> int:
    """Stops a running diagnostic."""
    return _call("dcgmStopDiagnostic", dcgm_handle)


def dcgmPauseTelemetryForDiag(dcgmHandle: Any) -> int:
    """Pauses DCGM's sampling while a diagnostic runs."""
    return _call("dcgmPauseTelemetryForDiag", dcgmHandle)


def dcgmResumeTelemetryForDiag(dcgmHandle: Any) -> int:
    """Resumes sampling after :func:`dcgmPauseTelemetryForDiag`."""
    return _call("dcgmResumeTelemetryForDiag", dcgmHandle)


def dcgmNvswitchGetBackend(dcgmHandle: Any) -> str:
    """The name of the NvSwitch module's backend (text)."""
    length = 10
    active = c_bool()
    name = (c_char * length)()
    _call("dcgmNvswitchGetBackend", dcgmHandle, byref(active), name, c_uint(length))
    return (cast(name, c_char_p).value or b"").decode("utf-8")


def dcgmEmptyCache(dcgmHandle: Any) -> int:
    """Drops every cached sample and every watch."""
    if isinstance(dcgmHandle, _native.Handle):
        _testing.empty_cache(dcgmHandle)
        return _structs.DCGM_ST_OK
    return _call("dcgmEmptyCache", dcgmHandle)


def dcgmMarkModulesReloadable(dcgmHandle: Any, moduleMask: int) -> int:
    """Marks the modules of ``moduleMask`` reloadable; answers the mask of those that could
    not be."""
    info = dcgm_structs.c_dcgmModulesReloadable_v1()
    info.version = dcgm_structs.dcgmModulesReloadable_version1
    info.moduleMask = moduleMask
    _call("dcgmMarkModulesReloadable", dcgmHandle, byref(info))
    return int(info.moduleMask)


for _name, _fn in list(globals().items()):
    if _name.startswith("dcgm") and callable(_fn) and getattr(_fn, "__module__", None) == __name__ and not isinstance(_fn, type):
        globals()[_name] = _bytes_arguments(_fn)
del _name, _fn
