"""The API-level differential battery of ``dcgm.compat``: several hundred calls of NVIDIA's
procedural API (``dcgm_agent``) and, from ``api_battery_objects.py`` where present, of the
object layer, run once on NVIDIA's bindings and once on this package's, on the same library.
Each call's outcome is described (return shape, the values that do not depend on timing, or
the exception class) so two runs can be compared case by case.

Case format (also for ``api_battery_objects.py``)
-------------------------------------------------

A case is a :class:`Case`: ``id`` (``"section/name"``, unique), ``code`` (Python source: an
expression, whose value is the answer, or statements that leave the answer in ``result``),
and optionally:

* ``mode``: ``"value"`` (default: the answer's type names, lengths, structure class names and
  every scalar value), ``"shape"`` (the same without scalar values: for answers that move
  with time), or ``"outcome"`` (only ``ok`` or the exception class);
* ``ignore``: attribute or key names whose values are not compared (timestamps, pids, ...),
  in ``"value"`` mode;
* ``nvidia``: ``False`` for a call that crashes NVIDIA's interpreter (a bad pointer handed to
  C); it runs on this package only, and ``expect`` says its outcome there (``"ok"`` or
  ``"raise:<ClassName>"``).

Every case of a run executes in ONE namespace, in order, so a case may use what earlier
cases bound (``h``, the embedded handle; ``g_all``, the default group; ...). The namespace
starts with ``dcgm_agent``, ``dcgm_structs``, ``dcgm_fields`` (and, for this package, every
other module of ``dcgm.compat`` under NVIDIA's name, also importable by that name), ctypes'
names, and the helpers of :data:`PRELUDE`. ``api_battery_objects.py`` defines ``CASES`` (a list
of cases) and optionally ``PRELUDE`` (source run once before them); its cases run after this
module's, before the closing ``shutdown`` section.

Running
-------

``python api_battery.py OUT.jsonl`` runs the whole battery in this interpreter and writes one
JSON line per case (``{"id", "outcome"}``), flushed as it goes, so a crash shows which case it
was. Which binding: ``DCGM_BATTERY_BINDINGS=nvidia`` (NVIDIA's modules on ``sys.path``) or
``ours`` (default); the library is whatever the environment gives either binding (see
``conftest.python_env``).
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class Case:
    """One call of the battery (see the module's doc)."""

    id: str
    code: str
    mode: str = "value"
    ignore: Tuple[str, ...] = ()
    nvidia: bool = True
    expect: Optional[str] = None


# ---- describing an answer

_MAX_DEPTH = 12


def _num(v: float) -> Any:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return float("%.9g" % v)


def describe(v: Any, mode: str = "value", ignore: Sequence[str] = (), depth: int = 0) -> Any:
    """A JSON-able description of ``v``: ``[type name, content]``; structures and unions as
    ``[class name, {field: description}]``, arrays and lists as ``[type name, length, [runs
    of (description, count)]]`` (equal neighbours collapse into one run)."""
    t = type(v).__name__
    values = mode == "value"
    if depth > _MAX_DEPTH:
        return [t, "..."]
    if v is None:
        return None
    if isinstance(v, bool):
        return ["bool", v if values else None]
    if isinstance(v, int):
        return ["int", v if values else None]
    if isinstance(v, float):
        return ["float", _num(v) if values else None]
    if isinstance(v, str):
        return ["str", v if values else None]
    if isinstance(v, (bytes, bytearray)):
        return [t, v.decode("latin-1") if values else None]
    if isinstance(v, ctypes._SimpleCData):  # type: ignore[attr-defined]
        return [t, describe(v.value, mode, ignore, depth + 1)]
    if isinstance(v, (ctypes.Structure, ctypes.Union)):
        out: Dict[str, Any] = {}
        # A union is described by its first member: the others are other views of the same
        # bytes (reading a double as text can fail, differently in each binding).
        fields = v._fields_[:1] if isinstance(v, ctypes.Union) else v._fields_
        for f in fields:
            name = f[0]
            if name.startswith("_"):
                continue
            try:
                sub = getattr(v, name)
            except Exception as e:  # noqa: BLE001
                out[name] = ["error", type(e).__name__]
                continue
            out[name] = describe(sub, "shape" if name in ignore else mode, ignore, depth + 1)
        return [t, out]
    if isinstance(v, (ctypes.Array, list, tuple)):
        return [t, len(v), _runs([describe(x, mode, ignore, depth + 1) for x in v])]
    if isinstance(v, dict):
        return [
            t,
            {
                str(k): describe(x, "shape" if str(k) in ignore else mode, ignore, depth + 1)
                for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))
            },
        ]
    if isinstance(v, ctypes._Pointer):  # type: ignore[attr-defined]
        return [t, bool(v)]
    if isinstance(v, BaseException):
        return ["exception", type(v).__name__]
    return [t, None]


def _runs(items: List[Any]) -> List[Any]:
    out: List[Any] = []
    for d in items:
        if out and out[-1][0] == d:
            out[-1][1] += 1
        else:
            out.append([d, 1])
    return out


def outcome_of(case: Case, ns: Dict[str, Any]) -> Any:
    """Runs one case in ``ns``; answers ``{"ok": description}`` or ``{"raise": class name,
    "code": DCGM code or None}``."""
    try:
        try:
            compiled = compile(case.code, case.id, "eval")
        except SyntaxError:
            ns.pop("result", None)
            exec(compile(case.code, case.id, "exec"), ns)  # noqa: S102 (the battery's own cases)
            value = ns.get("result")
        else:
            value = eval(compiled, ns)  # noqa: S307
    except Exception as e:  # noqa: BLE001 - the exception class is the answer
        code = getattr(e, "value", None)
        return {
            "raise": type(e).__name__,
            "code": code if isinstance(code, int) else None,
            "msg": str(e)[:300],  # for the reader of a difference; not compared
        }
    if case.mode == "outcome":
        return {"ok": None}
    return {"ok": describe(value, case.mode, case.ignore)}


# ---- the cases

#: Run first, on both bindings, before any case: helpers the cases use.
PRELUDE = r"""
from ctypes import *

def pairs(group, ids):
    out = []
    for i in ids:
        p = dcgm_structs.c_dcgmGroupEntityPair_t()
        p.entityGroupId = group
        p.entityId = i
        out.append(p)
    return out

class Collect:
    '''A dcgm_agent enumeration callback target: counts values per entity.'''
    def __init__(self):
        self.seen = {}
    def gpu_cb(self):
        def f(gpuId, values, n, user):
            for i in range(n):
                self.seen.setdefault((1, gpuId), []).append((values[i].fieldId, values[i].status))
            return 0
        return dcgm_agent.dcgmFieldValueEnumeration_f(f)
    def entity_cb(self):
        def f(group, entity, values, n, user):
            for i in range(n):
                self.seen.setdefault((group, entity), []).append((values[i].fieldId, values[i].status))
            return 0
        return dcgm_agent.dcgmFieldValueEntityEnumeration_f(f)
    def summary(self):
        return sorted((k[0], k[1], sorted(set(v))) for k, v in self.seen.items())

def version_of(cls, v):
    return dcgm_structs.make_dcgm_version(cls, v)

def values_summary(values):
    return [(v.fieldId, v.status, v.fieldType) for v in values]

def values2_summary(values):
    return [(v.entityGroupId, v.entityId, v.fieldId, v.status, v.fieldType) for v in values]
"""

GPU_IDS = [0, 1, 7, 8, 999, 2**31 - 1, -1]
FIELDS = [150, 155, 203, 252, 50, 54, 100]
STATIC_FIELDS = [50, 54]  # name, UUID: the same on every read


def _c(id: str, code: str, **kw: Any) -> Case:  # noqa: A002
    return Case(id, code, **kw)


def lifecycle() -> Iterator[Case]:
    # Before any library is loaded: NVIDIA's dcgmInit needs dcgm_structs._dcgmInit() first.
    yield _c("lifecycle/agent_init_before_load", "dcgm_agent.dcgmInit()")
    yield _c("lifecycle/structs_init", "dcgm_structs._dcgmInit()")
    yield _c("lifecycle/agent_init", "dcgm_agent.dcgmInit()")
    yield _c("lifecycle/agent_init_twice", "dcgm_agent.dcgmInit()")
    yield _c("lifecycle/version_info", "dcgm_agent.dcgmVersionInfo()")
    yield _c("lifecycle/start_bad_mode", "dcgm_agent.dcgmStartEmbedded(99)")
    yield _c("lifecycle/start_list_mode", "dcgm_agent.dcgmStartEmbedded([])")
    yield _c("lifecycle/start_none_mode", "dcgm_agent.dcgmStartEmbedded(None)")
    yield _c("lifecycle/start", "h = result = dcgm_agent.dcgmStartEmbedded(dcgm_structs.DCGM_OPERATION_MODE_AUTO)")
    yield _c("lifecycle/handle_type", "type(h).__name__")
    yield _c("lifecycle/hostengine_healthy", "dcgm_agent.dcgmHostengineIsHealthy(h)")
    yield _c("lifecycle/hostengine_healthy_bad_handle", "dcgm_agent.dcgmHostengineIsHealthy(12345)")
    yield _c("lifecycle/server_run_unix", "dcgm_agent.dcgmServerRun(0, '/nonexistent-dir/dcgm.sock', 1)", mode="outcome")
    # (a refused dcgmConnect waits out DCGM's 5 s default timeout: the v2 form sets 100 ms)
    yield _c("lifecycle/connect_list_address", "dcgm_agent.dcgmConnect(['127.0.0.1'])")
    yield _c(
        "lifecycle/connect_v2_refused",
        "p = dcgm_structs.c_dcgmConnectV2Params_v2(); p.timeoutMs = 100\n"
        "result = dcgm_agent.dcgmConnect_v2('127.0.0.1:1', p)",
    )
    yield _c(
        "lifecycle/connect_v3_missing_socket",
        "p = dcgm_structs.c_dcgmConnectV3Params_v1(); p.timeoutMs = 100\n"
        "result = dcgm_agent.dcgmConnect_v3('unix:///nonexistent-dir/dcgm.sock', p)",
    )
    yield _c(
        "lifecycle/connect_v2_missing_socket",
        "p = dcgm_structs.c_dcgmConnectV2Params_v2(); p.timeoutMs = 100; p.addressIsUnixSocket = 1\n"
        "result = dcgm_agent.dcgmConnect_v2('/nonexistent-dir/dcgm.sock', p)",
    )
    yield _c(
        "lifecycle/connect_v2_bad_version",
        "p = dcgm_structs.c_dcgmConnectV2Params_v2(); p.timeoutMs = 100; p.addressIsUnixSocket = 1\n"
        "result = dcgm_agent.dcgmConnect_v2('/nonexistent-dir/dcgm.sock', p, version=7)",
    )
    yield _c("lifecycle/connect_v2_not_a_struct", "dcgm_agent.dcgmConnect_v2('127.0.0.1', 5)")
    yield _c("lifecycle/disconnect_embedded_unknown", "dcgm_agent.dcgmDisconnect(12345)")
    yield _c("lifecycle/logging_severity", "dcgm_agent.dcgmHostengineSetLoggingSeverity(h, 0, 4)")
    yield _c("lifecycle/logging_severity_bad", "dcgm_agent.dcgmHostengineSetLoggingSeverity(h, 99, 99)")
    yield _c("lifecycle/logging_severity_str", "dcgm_agent.dcgmHostengineSetLoggingSeverity(h, 'x', 4)")
    yield _c(
        "lifecycle/env_var_info",
        "e = dcgm_structs.c_dcgmEnvVarInfo_v1(); e.version = dcgm_structs.dcgmEnvVarInfo_version1\n"
        "e.envVarName = 'DCGM_BATTERY_NO_SUCH_VARIABLE'\n"
        "result = (dcgm_agent.dcgmHostengineEnvironmentVariableInfo(h, e), e.envVarValue, e.ret)",
    )
    yield _c(
        "lifecycle/env_var_info_bad_version",
        "e = dcgm_structs.c_dcgmEnvVarInfo_v1(); e.version = 1; e.envVarName = 'HOME'\n"
        "result = dcgm_agent.dcgmHostengineEnvironmentVariableInfo(h, e)",
    )
    yield _c("lifecycle/env_var_info_not_a_struct", "dcgm_agent.dcgmHostengineEnvironmentVariableInfo(h, 5)")


def discovery() -> Iterator[Case]:
    yield _c("discovery/all_devices", "gpus = result = dcgm_agent.dcgmGetAllDevices(h)")
    yield _c("discovery/all_supported", "dcgm_agent.dcgmGetAllSupportedDevices(h)")
    for label, handle in [("none", "None"), ("zero", "0"), ("unknown", "12345"), ("str", "'x'"), ("float", "1.5"), ("list", "[]")]:
        yield _c("discovery/all_devices_handle_%s" % label, "dcgm_agent.dcgmGetAllDevices(%s)" % handle)
        yield _c("discovery/all_supported_handle_%s" % label, "dcgm_agent.dcgmGetAllSupportedDevices(%s)" % handle)
    for gpu in GPU_IDS:
        g = str(gpu)
        yield _c("discovery/attributes/%s" % g, "dcgm_agent.dcgmGetDeviceAttributes(h, %s)" % g)
        yield _c("discovery/status/%s" % g, "dcgm_agent.dcgmGetGpuStatus(h, %s)" % g)
        yield _c("discovery/chip_arch/%s" % g, "dcgm_agent.dcgmGetGpuChipArchitecture(h, %s)" % g)
        yield _c("discovery/topology/%s" % g, "dcgm_agent.dcgmGetDeviceTopology(h, %s)" % g)
        yield _c("discovery/power_profiles/%s" % g, "dcgm_agent.dcgmGetDeviceWorkloadPowerProfileInfo(h, %s)" % g)
        yield _c("discovery/prof_metric_groups/%s" % g, "dcgm_agent.dcgmProfGetSupportedMetricGroups(h, %s)" % g)
    yield _c(
        "discovery/attributes_old_version",
        "dcgm_agent.dcgmGetDeviceAttributes(h, 0, version=version_of(dcgm_structs.c_dcgmDeviceAttributes_v3, 2))",
    )
    yield _c("discovery/attributes_zero_version", "dcgm_agent.dcgmGetDeviceAttributes(h, 0, 0)")
    yield _c("discovery/attributes_str_gpu", "dcgm_agent.dcgmGetDeviceAttributes(h, '0')")
    yield _c("discovery/attributes_none_gpu", "dcgm_agent.dcgmGetDeviceAttributes(h, None)")
    yield _c("discovery/attributes_float_gpu", "dcgm_agent.dcgmGetDeviceAttributes(h, 0.0)")
    yield _c("discovery/attributes_c_int_gpu", "dcgm_agent.dcgmGetDeviceAttributes(h, c_int(0)).identifiers.deviceName")
    yield _c("discovery/attributes_name", "dcgm_agent.dcgmGetDeviceAttributes(h, 0).identifiers.deviceName")
    yield _c("discovery/attributes_uuid_type", "type(dcgm_agent.dcgmGetDeviceAttributes(h, 0).identifiers.uuid).__name__")
    yield _c("discovery/status_float_gpu", "dcgm_agent.dcgmGetGpuStatus(h, 0.5)")
    yield _c("discovery/status_list_gpu", "dcgm_agent.dcgmGetGpuStatus(h, [0])")
    yield _c("discovery/status_bool_gpu", "dcgm_agent.dcgmGetGpuStatus(h, True)")
    yield _c("discovery/status_c_uint_gpu", "dcgm_agent.dcgmGetGpuStatus(h, c_uint(1))")
    for eg in [1, 3, 4, 5, 6, 7, 8, 9, 0, 99]:
        yield _c("discovery/entities/group%d" % eg, "dcgm_agent.dcgmGetEntityGroupEntities(h, %d, 0)" % eg)
    yield _c("discovery/entities_gpu_supported_only", "dcgm_agent.dcgmGetEntityGroupEntities(h, 1, 1)")
    yield _c("discovery/entities_str_group", "dcgm_agent.dcgmGetEntityGroupEntities(h, [1], 0)")
    yield _c("discovery/nvlink_status", "dcgm_agent.dcgmGetNvLinkLinkStatus(h)")
    yield _c("discovery/nvlink_status_bad_handle", "dcgm_agent.dcgmGetNvLinkLinkStatus(12345)")
    yield _c(
        "discovery/nvlink_p2p",
        "s = dcgm_structs.c_dcgmNvLinkP2PStatus_v1(); result = (dcgm_agent.dcgmGetNvLinkP2PStatus(h, s), s.numGpus)",
    )
    yield _c(
        "discovery/nvlink_p2p_bad_version",
        "s = dcgm_structs.c_dcgmNvLinkP2PStatus_v1(); result = dcgm_agent.dcgmGetNvLinkP2PStatus(h, s, version=5)",
    )
    yield _c("discovery/nvlink_p2p_not_a_struct", "dcgm_agent.dcgmGetNvLinkP2PStatus(h, 5)")
    yield _c("discovery/cpu_hierarchy", "dcgm_agent.dcgmGetCpuHierarchy(h)")
    yield _c("discovery/cpu_hierarchy_v2", "dcgm_agent.dcgmGetCpuHierarchy_v2(h)")
    yield _c(
        "discovery/cpu_owns_core",
        "c = dcgm_structs.c_dcgmCpuHierarchyOwnedCores_v1(); c.bitmask[0] = 5\n"
        "result = [bool(dcgm_agent.dcgmCpuHierarchyCpuOwnsCore(i, c)) for i in range(4)]",
    )
    yield _c("discovery/mig_hierarchy", "dcgm_agent.dcgmGetGpuInstanceHierarchy(h)")
    yield _c("discovery/mig_hierarchy_count", "dcgm_agent.dcgmGetGpuInstanceHierarchy(h).count")
    yield _c("discovery/mig_create_on_non_mig", "dcgm_agent.dcgmCreateMigEntity(h, 0, 0, 0, 0)")
    yield _c("discovery/mig_delete_unknown", "dcgm_agent.dcgmDeleteMigEntity(h, 4, 999, 0)")
    for mask, n, hint in [(0xFF, 2, 0), (0x1, 1, 0), (0x0, 1, 0), (0x3, 5, 0), (0xFF, 0, 0), (0xFF, 1, 1)]:
        yield _c(
            "discovery/select_by_topology/%x_%d_%d" % (mask, n, hint),
            "dcgm_agent.dcgmSelectGpusByTopology(h, %d, %d, %d)" % (mask, n, hint),
        )
    yield _c("discovery/select_by_topology_value", "dcgm_agent.dcgmSelectGpusByTopology(h, 1, 1, 0).value")
    for pid in [0, 1, 2, 3, 999]:
        yield _c("discovery/power_profile_name/%d" % pid, "dcgm_agent.dcgmPowerProfileIdToName(%d)" % pid)
    yield _c("discovery/power_profile_name_str", "dcgm_agent.dcgmPowerProfileIdToName('x')")
    yield _c("discovery/module_statuses", "dcgm_agent.dcgmModuleGetStatuses(h)")
    yield _c("discovery/module_statuses_bad_handle", "dcgm_agent.dcgmModuleGetStatuses(12345)")
    yield _c("discovery/module_denylist_unknown", "dcgm_agent.dcgmModuleDenylist(h, 99)")
    yield _c("discovery/module_denylist_core", "dcgm_agent.dcgmModuleDenylist(h, 0)")


def groups() -> Iterator[Case]:
    S = "dcgm_structs."
    yield _c("groups/create_default", "g_all = result = dcgm_agent.dcgmGroupCreate(h, %sDCGM_GROUP_DEFAULT, 'battery_all')" % S)
    yield _c("groups/create_empty", "g_e = result = dcgm_agent.dcgmGroupCreate(h, %sDCGM_GROUP_EMPTY, 'battery_empty')" % S)
    yield _c("groups/create_empty_bytes", "g_b = result = dcgm_agent.dcgmGroupCreate(h, %sDCGM_GROUP_EMPTY, b'battery_bytes')" % S)
    yield _c("groups/create_nvswitches", "dcgm_agent.dcgmGroupCreate(h, %sDCGM_GROUP_DEFAULT_NVSWITCHES, 'battery_sw')" % S)
    yield _c("groups/create_instances", "dcgm_agent.dcgmGroupCreate(h, %sDCGM_GROUP_DEFAULT_INSTANCES, 'battery_gi')" % S)
    yield _c("groups/create_cis", "dcgm_agent.dcgmGroupCreate(h, %sDCGM_GROUP_DEFAULT_COMPUTE_INSTANCES, 'battery_ci')" % S)
    yield _c("groups/create_entities", "dcgm_agent.dcgmGroupCreate(h, 5, 'battery_every')")
    yield _c("groups/create_name_none", "dcgm_agent.dcgmGroupCreate(h, %sDCGM_GROUP_EMPTY, None)" % S)
    yield _c("groups/create_name_empty", "dcgm_agent.dcgmGroupCreate(h, %sDCGM_GROUP_EMPTY, '')" % S, mode="outcome")
    yield _c("groups/create_name_list", "dcgm_agent.dcgmGroupCreate(h, %sDCGM_GROUP_EMPTY, ['x'])" % S)
    yield _c("groups/create_bad_handle", "dcgm_agent.dcgmGroupCreate(12345, 0, 'battery')")
    yield _c("groups/create_name_int", "dcgm_agent.dcgmGroupCreate(h, 0, 123)", nvidia=False, expect="raise:ArgumentError")
    yield _c("groups/info_default", "dcgm_agent.dcgmGroupGetInfo(h, g_all)")
    yield _c("groups/info_empty", "dcgm_agent.dcgmGroupGetInfo(h, g_e)")
    yield _c("groups/info_name", "dcgm_agent.dcgmGroupGetInfo(h, g_all).groupName")
    yield _c("groups/info_count", "dcgm_agent.dcgmGroupGetInfo(h, g_all).count")
    yield _c("groups/info_unknown", "dcgm_agent.dcgmGroupGetInfo(h, 12345)")
    yield _c("groups/info_all_gpus_id", "dcgm_agent.dcgmGroupGetInfo(h, %sDCGM_GROUP_ALL_GPUS).count" % S)
    yield _c("groups/info_all_nvswitches_id", "dcgm_agent.dcgmGroupGetInfo(h, %sDCGM_GROUP_ALL_NVSWITCHES).count" % S)
    yield _c("groups/info_old_version", "dcgm_agent.dcgmGroupGetInfo(h, g_all, version=version_of(dcgm_structs.c_dcgmGroupInfo_v3, 2))")
    yield _c("groups/info_str_group", "dcgm_agent.dcgmGroupGetInfo(h, 'x')")
    yield _c("groups/all_ids", "dcgm_agent.dcgmGroupGetAllIds(h)")
    yield _c("groups/all_ids_bad_handle", "dcgm_agent.dcgmGroupGetAllIds(12345)")
    for gpu in [0, 1, 7, 8, 999, -1]:
        yield _c("groups/add_device/%d" % gpu, "dcgm_agent.dcgmGroupAddDevice(h, g_e, %d)" % gpu)
    yield _c("groups/add_device_twice", "dcgm_agent.dcgmGroupAddDevice(h, g_e, 0)")
    yield _c("groups/add_device_unknown_group", "dcgm_agent.dcgmGroupAddDevice(h, 12345, 0)")
    yield _c("groups/add_device_str", "dcgm_agent.dcgmGroupAddDevice(h, g_e, 'zero')")
    yield _c("groups/info_after_add", "dcgm_agent.dcgmGroupGetInfo(h, g_e)")
    for eg, eid in [(1, 2), (1, 999), (3, 0), (7, 0), (8, 0), (4, 0), (6, 0), (99, 0), (0, 0)]:
        yield _c("groups/add_entity/%d_%d" % (eg, eid), "dcgm_agent.dcgmGroupAddEntity(h, g_b, %d, %d)" % (eg, eid))
    yield _c("groups/add_entity_unknown_group", "dcgm_agent.dcgmGroupAddEntity(h, 12345, 1, 0)")
    yield _c("groups/info_after_add_entity", "dcgm_agent.dcgmGroupGetInfo(h, g_b)")
    yield _c("groups/remove_device", "dcgm_agent.dcgmGroupRemoveDevice(h, g_e, 1)")
    yield _c("groups/remove_device_absent", "dcgm_agent.dcgmGroupRemoveDevice(h, g_e, 5)")
    yield _c("groups/remove_device_unknown_group", "dcgm_agent.dcgmGroupRemoveDevice(h, 12345, 0)")
    yield _c("groups/remove_entity", "dcgm_agent.dcgmGroupRemoveEntity(h, g_b, 1, 2)")
    yield _c("groups/remove_entity_absent", "dcgm_agent.dcgmGroupRemoveEntity(h, g_b, 1, 6)")
    yield _c("groups/remove_entity_unknown_group", "dcgm_agent.dcgmGroupRemoveEntity(h, 12345, 1, 0)")
    yield _c("groups/info_after_remove", "dcgm_agent.dcgmGroupGetInfo(h, g_e)")
    yield _c("groups/create_then_destroy", "t = dcgm_agent.dcgmGroupCreate(h, 0, 'tmp'); result = dcgm_agent.dcgmGroupDestroy(h, t)")
    yield _c("groups/destroy_twice", "dcgm_agent.dcgmGroupDestroy(h, t)")
    yield _c("groups/info_destroyed", "dcgm_agent.dcgmGroupGetInfo(h, t)")
    yield _c("groups/destroy_unknown", "dcgm_agent.dcgmGroupDestroy(h, 12345)")
    yield _c("groups/destroy_all_gpus", "dcgm_agent.dcgmGroupDestroy(h, %sDCGM_GROUP_ALL_GPUS)" % S)
    yield _c("groups/destroy_str", "dcgm_agent.dcgmGroupDestroy(h, 'x')")
    yield _c("groups/destroy_float", "dcgm_agent.dcgmGroupDestroy(h, 1.0)")
    # last: NVIDIA's creates a group here (the library reads the str's address as the type)
    yield _c("groups/create_type_str", "dcgm_agent.dcgmGroupCreate(h, 'x', 'battery')")


def field_groups() -> Iterator[Case]:
    yield _c("fieldgroups/create", "fg = result = dcgm_agent.dcgmFieldGroupCreate(h, %r, 'battery_fg')" % FIELDS)
    yield _c("fieldgroups/create_static", "fg_s = result = dcgm_agent.dcgmFieldGroupCreate(h, %r, 'battery_static')" % STATIC_FIELDS)
    yield _c("fieldgroups/create_tuple", "dcgm_agent.dcgmFieldGroupCreate(h, (150, 155), 'battery_tuple')")
    yield _c("fieldgroups/create_duplicate_name", "dcgm_agent.dcgmFieldGroupCreate(h, [150], 'battery_fg')")
    yield _c("fieldgroups/create_empty", "dcgm_agent.dcgmFieldGroupCreate(h, [], 'battery_none')")
    yield _c("fieldgroups/create_unknown_field", "dcgm_agent.dcgmFieldGroupCreate(h, [9999], 'battery_unknown')")
    yield _c("fieldgroups/create_zero_field", "dcgm_agent.dcgmFieldGroupCreate(h, [0], 'battery_zero')")
    yield _c("fieldgroups/create_too_many", "dcgm_agent.dcgmFieldGroupCreate(h, list(range(100, 300)), 'battery_many')")
    yield _c("fieldgroups/create_str_ids", "dcgm_agent.dcgmFieldGroupCreate(h, ['150'], 'battery_str')")
    yield _c("fieldgroups/create_int_ids", "dcgm_agent.dcgmFieldGroupCreate(h, 150, 'battery_int')")
    yield _c("fieldgroups/create_none_ids", "dcgm_agent.dcgmFieldGroupCreate(h, None, 'battery_nonelist')")
    yield _c("fieldgroups/create_overflow_id", "dcgm_agent.dcgmFieldGroupCreate(h, [70000], 'battery_ovf')")
    yield _c("fieldgroups/create_name_none", "dcgm_agent.dcgmFieldGroupCreate(h, [150], None)")
    yield _c("fieldgroups/create_long_name", "dcgm_agent.dcgmFieldGroupCreate(h, [150], 'n' * 300)", mode="outcome")
    yield _c("fieldgroups/create_bad_handle", "dcgm_agent.dcgmFieldGroupCreate(12345, [150], 'battery_h')")
    yield _c("fieldgroups/info", "dcgm_agent.dcgmFieldGroupGetInfo(h, fg)")
    yield _c("fieldgroups/info_fields", "i = dcgm_agent.dcgmFieldGroupGetInfo(h, fg); result = (i.numFieldIds, list(i.fieldIds[:i.numFieldIds]), i.fieldGroupName)")
    yield _c("fieldgroups/info_unknown", "dcgm_agent.dcgmFieldGroupGetInfo(h, 12345)")
    yield _c("fieldgroups/info_str", "dcgm_agent.dcgmFieldGroupGetInfo(h, 'x')")
    yield _c("fieldgroups/all", "dcgm_agent.dcgmFieldGroupGetAll(h)", mode="shape")
    yield _c("fieldgroups/all_count", "a = dcgm_agent.dcgmFieldGroupGetAll(h); result = a.numFieldGroups")
    yield _c("fieldgroups/all_bad_handle", "dcgm_agent.dcgmFieldGroupGetAll(12345)")
    yield _c("fieldgroups/destroy_tmp", "t = dcgm_agent.dcgmFieldGroupCreate(h, [150], 'battery_tmp'); result = dcgm_agent.dcgmFieldGroupDestroy(h, t)")
    yield _c("fieldgroups/destroy_twice", "dcgm_agent.dcgmFieldGroupDestroy(h, t)")
    yield _c("fieldgroups/info_destroyed", "dcgm_agent.dcgmFieldGroupGetInfo(h, t)")
    yield _c("fieldgroups/destroy_unknown", "dcgm_agent.dcgmFieldGroupDestroy(h, 12345)")


def watches_and_values() -> Iterator[Case]:
    yield _c("values/watch", "dcgm_agent.dcgmWatchFields(h, g_all, fg, 1000000, 0, 0)")
    yield _c("values/watch_static", "dcgm_agent.dcgmWatchFields(h, g_all, fg_s, 1000000, 3600.0, 10)")
    yield _c("values/watch_unknown_group", "dcgm_agent.dcgmWatchFields(h, 12345, fg, 1000000, 0, 0)")
    yield _c("values/watch_unknown_fg", "dcgm_agent.dcgmWatchFields(h, g_all, 12345, 1000000, 0, 0)")
    yield _c("values/watch_negative_freq", "dcgm_agent.dcgmWatchFields(h, g_e, fg, -5, 0, 0)")
    yield _c("values/watch_str_freq", "dcgm_agent.dcgmWatchFields(h, g_all, fg, 'often', 0, 0)")
    yield _c("values/watch_bad_handle", "dcgm_agent.dcgmWatchFields(12345, g_all, fg, 1000000, 0, 0)")
    yield _c("values/update_all", "dcgm_agent.dcgmUpdateAllFields(h, 1)")
    yield _c("values/update_all_nowait", "dcgm_agent.dcgmUpdateAllFields(h, 0)")
    yield _c("values/update_all_bad_handle", "dcgm_agent.dcgmUpdateAllFields(12345, 1)")
    yield _c("values/update_all_str", "dcgm_agent.dcgmUpdateAllFields(h, 'yes')")
    yield _c(
        "values/latest_callback",
        "c = Collect(); cb = c.gpu_cb(); r = dcgm_agent.dcgmGetLatestValues(h, g_all, fg, cb, None); result = (r, c.summary())",
    )
    yield _c(
        "values/latest_callback_v2",
        "c = Collect(); cb = c.entity_cb(); r = dcgm_agent.dcgmGetLatestValues_v2(h, g_all, fg, cb, None); result = (r, c.summary())",
    )
    yield _c(
        "values/latest_callback_user_data",
        "seen = []\n"
        "def f(gpu, values, n, user):\n"
        "    seen.append(cast(user, py_object).value)\n"
        "    return 0\n"
        "cb = dcgm_agent.dcgmFieldValueEnumeration_f(f)\n"
        "dcgm_agent.dcgmGetLatestValues(h, g_all, fg_s, cb, {'k': 1})\n"
        "result = seen",
    )
    yield _c(
        "values/latest_static_values",
        "vals = []\n"
        "def f(gpu, values, n, user):\n"
        "    for i in range(n):\n"
        "        vals.append((gpu, values[i].fieldId, values[i].value.str))\n"
        "    return 0\n"
        "cb = dcgm_agent.dcgmFieldValueEnumeration_f(f)\n"
        "dcgm_agent.dcgmGetLatestValues(h, g_all, fg_s, cb, None)\n"
        "result = sorted(vals)",
    )
    yield _c(
        "values/latest_callback_stops",
        "n_calls = [0]\n"
        "def f(gpu, values, n, user):\n"
        "    n_calls[0] += 1\n"
        "    return 1\n"
        "cb = dcgm_agent.dcgmFieldValueEnumeration_f(f)\n"
        "result = (dcgm_agent.dcgmGetLatestValues(h, g_all, fg, cb, None), n_calls[0])",
    )
    yield _c("values/latest_null_callback", "dcgm_agent.dcgmGetLatestValues(h, g_all, fg, None, None)", nvidia=False, expect="ok")
    yield _c("values/latest_python_function", "dcgm_agent.dcgmGetLatestValues(h, g_all, fg, lambda *a: 0, None)")
    yield _c("values/latest_int_callback", "dcgm_agent.dcgmGetLatestValues(h, g_all, fg, 0, None)")
    yield _c("values/latest_unknown_group", "c = Collect(); dcgm_agent.dcgmGetLatestValues(h, 12345, fg, c.gpu_cb(), None)")
    yield _c("values/latest_unknown_fg", "c = Collect(); dcgm_agent.dcgmGetLatestValues(h, g_all, 12345, c.gpu_cb(), None)")
    yield _c("values/latest_v2_unknown_group", "c = Collect(); dcgm_agent.dcgmGetLatestValues_v2(h, 12345, fg, c.entity_cb(), None)")
    yield _c("values/latest_v2_empty_group", "c = Collect(); r = dcgm_agent.dcgmGetLatestValues_v2(h, g_e, fg, c.entity_cb(), None); result = (r, c.summary())")
    yield _c(
        "values/since_zero",
        "c = Collect(); ts = dcgm_agent.dcgmGetValuesSince(h, g_all, fg_s, 0, c.gpu_cb(), None); result = (ts > 0, c.summary())",
    )
    yield _c(
        "values/since_v2_zero",
        "c = Collect(); ts = dcgm_agent.dcgmGetValuesSince_v2(h, g_all, fg_s, 0, c.entity_cb(), None); result = (ts > 0, c.summary())",
    )
    yield _c(
        "values/since_future",
        "c = Collect(); ts = dcgm_agent.dcgmGetValuesSince(h, g_all, fg_s, 2**62, c.gpu_cb(), None); result = c.summary()",
    )
    yield _c("values/since_unknown_group", "c = Collect(); dcgm_agent.dcgmGetValuesSince(h, 12345, fg, 0, c.gpu_cb(), None)")
    yield _c("values/since_str_ts", "c = Collect(); dcgm_agent.dcgmGetValuesSince(h, g_all, fg, 'now', c.gpu_cb(), None)")
    for gpu in [0, 1, 7, 8, 999]:
        yield _c("values/entity_latest/gpu%d" % gpu, "values_summary(dcgm_agent.dcgmEntityGetLatestValues(h, 1, %d, %r))" % (gpu, FIELDS))
    yield _c("values/entity_latest_type", "dcgm_agent.dcgmEntityGetLatestValues(h, 1, 0, [150, 155])", mode="shape")
    yield _c("values/entity_latest_static", "[v.value.str for v in dcgm_agent.dcgmEntityGetLatestValues(h, 1, 0, %r)]" % STATIC_FIELDS)
    yield _c("values/entity_latest_unknown_field", "values_summary(dcgm_agent.dcgmEntityGetLatestValues(h, 1, 0, [9999, 0]))")
    yield _c("values/entity_latest_unwatched", "values_summary(dcgm_agent.dcgmEntityGetLatestValues(h, 1, 0, [110, 111]))")
    yield _c("values/entity_latest_no_fields", "dcgm_agent.dcgmEntityGetLatestValues(h, 1, 0, [])")
    yield _c("values/entity_latest_switch", "values_summary(dcgm_agent.dcgmEntityGetLatestValues(h, 3, 0, [150]))")
    yield _c("values/entity_latest_cpu", "values_summary(dcgm_agent.dcgmEntityGetLatestValues(h, 7, 0, [1100]))")
    yield _c("values/entity_latest_bad_group", "values_summary(dcgm_agent.dcgmEntityGetLatestValues(h, 99, 0, [150]))")
    yield _c("values/entity_latest_str_fields", "dcgm_agent.dcgmEntityGetLatestValues(h, 1, 0, 'abc')")
    yield _c("values/entity_latest_negative_entity", "values_summary(dcgm_agent.dcgmEntityGetLatestValues(h, 1, -1, [150]))")
    yield _c("values/entity_latest_bad_handle", "dcgm_agent.dcgmEntityGetLatestValues(12345, 1, 0, [150])")
    yield _c("values/entities_latest", "values2_summary(dcgm_agent.dcgmEntitiesGetLatestValues(h, pairs(1, gpus), %r, 0))" % FIELDS)
    yield _c("values/entities_latest_shape", "dcgm_agent.dcgmEntitiesGetLatestValues(h, pairs(1, [0]), [150, 155], 0)", mode="shape")
    yield _c("values/entities_latest_live", "values2_summary(dcgm_agent.dcgmEntitiesGetLatestValues(h, pairs(1, [0, 1]), [150, 155, 203], dcgm_structs.DCGM_FV_FLAG_LIVE_DATA))")
    yield _c("values/entities_latest_tuples", "values2_summary(dcgm_agent.dcgmEntitiesGetLatestValues(h, [(1, 0), (1, 1)], [150], 0))")
    yield _c("values/entities_latest_unknown", "values2_summary(dcgm_agent.dcgmEntitiesGetLatestValues(h, pairs(1, [999]) + pairs(99, [0]), [150, 9999], 0))")
    yield _c("values/entities_latest_live_unknown", "values2_summary(dcgm_agent.dcgmEntitiesGetLatestValues(h, pairs(1, [999]), [150], 1))")
    yield _c("values/entities_latest_none", "dcgm_agent.dcgmEntitiesGetLatestValues(h, [], [150], 0)")
    yield _c("values/entities_latest_no_fields", "dcgm_agent.dcgmEntitiesGetLatestValues(h, pairs(1, [0]), [], 0)")
    yield _c("values/entities_latest_ints", "dcgm_agent.dcgmEntitiesGetLatestValues(h, [0, 1], [150], 0)")
    yield _c("values/entities_latest_static", "[(v.entityId, v.value.str) for v in dcgm_agent.dcgmEntitiesGetLatestValues(h, pairs(1, gpus), [50], 0)]")
    yield _c("values/entities_latest_bad_handle", "dcgm_agent.dcgmEntitiesGetLatestValues(12345, pairs(1, [0]), [150], 0)")
    yield _c(
        "values/field_summary",
        "dcgm_agent.dcgmGetFieldSummary(h, 150, 1, 0, dcgm_structs.DCGM_SUMMARY_MAX | dcgm_structs.DCGM_SUMMARY_MIN, 0, 0)",
        mode="shape",
    )
    yield _c("values/field_summary_unwatched", "dcgm_agent.dcgmGetFieldSummary(h, 110, 1, 0, 1, 0, 0)")
    yield _c("values/field_summary_unknown_gpu", "dcgm_agent.dcgmGetFieldSummary(h, 150, 1, 999, 1, 0, 0)")
    yield _c("values/field_summary_no_mask", "dcgm_agent.dcgmGetFieldSummary(h, 150, 1, 0, 0, 0, 0)")
    yield _c("values/field_summary_string_field", "dcgm_agent.dcgmGetFieldSummary(h, 50, 1, 0, 1, 0, 0)")
    yield _c("values/unwatch", "dcgm_agent.dcgmUnwatchFields(h, g_all, fg_s)")
    yield _c("values/unwatch_twice", "dcgm_agent.dcgmUnwatchFields(h, g_all, fg_s)")
    yield _c("values/unwatch_unknown_group", "dcgm_agent.dcgmUnwatchFields(h, 12345, fg)")
    yield _c("values/unwatch_unknown_fg", "dcgm_agent.dcgmUnwatchFields(h, g_all, 12345)")
    yield _c("values/entity_latest_after_unwatch", "values_summary(dcgm_agent.dcgmEntityGetLatestValues(h, 1, 0, %r))" % STATIC_FIELDS, mode="shape")


def status_handles() -> Iterator[Case]:
    yield _c("status/create", "st = dcgm_agent.dcgmStatusCreate(); result = type(st).__name__")
    yield _c("status/count_new", "dcgm_agent.dcgmStatusGetCount(st)")
    yield _c("status/pop_empty", "dcgm_agent.dcgmStatusPopError(st)")
    yield _c("status/clear", "dcgm_agent.dcgmStatusClear(st)")
    yield _c("status/count_none", "dcgm_agent.dcgmStatusGetCount(None)")
    yield _c("status/pop_none", "dcgm_agent.dcgmStatusPopError(None)")
    yield _c("status/clear_none", "dcgm_agent.dcgmStatusClear(None)")
    yield _c("status/destroy_none", "dcgm_agent.dcgmStatusDestroy(None)")
    yield _c("status/count_str", "dcgm_agent.dcgmStatusGetCount('x')", nvidia=False, expect="raise:DCGMError_Badparam")
    yield _c("status/count_unknown", "dcgm_agent.dcgmStatusGetCount(12345)", nvidia=False, expect="raise:DCGMError_Badparam")
    yield _c(
        "status/destroy_created",
        "st2 = dcgm_agent.dcgmStatusCreate(); result = dcgm_agent.dcgmStatusDestroy(st2)",
    )
    yield _c("status/count_destroyed", "dcgm_agent.dcgmStatusGetCount(st2)", nvidia=False, expect="raise:DCGMError_Badparam")
    yield _c("status/destroy_twice", "dcgm_agent.dcgmStatusDestroy(st2)", nvidia=False, expect="raise:DCGMError_Badparam")


def config() -> Iterator[Case]:
    for state in (0, 1):
        yield _c("config/get_%d" % state, "dcgm_agent.dcgmConfigGet(h, g_all, %d, len(gpus), st)" % state, mode="shape")
        yield _c("config/get_%d_gpu_ids" % state, "[c.gpuId for c in dcgm_agent.dcgmConfigGet(h, g_all, %d, len(gpus), st)]" % state)
        yield _c("config/get_%d_extra" % state, "[c.gpuId for c in dcgm_agent.dcgmConfigGet(h, g_all, %d, len(gpus) + 2, st)]" % state)
    yield _c("config/get_type", "type(dcgm_agent.dcgmConfigGet(h, g_all, 0, 1, st)[0]).__name__")
    yield _c("config/get_bad_type", "dcgm_agent.dcgmConfigGet(h, g_all, 7, 1, st)")
    yield _c("config/get_zero", "dcgm_agent.dcgmConfigGet(h, g_all, 0, 0, st)")
    yield _c("config/get_unknown_group", "dcgm_agent.dcgmConfigGet(h, 12345, 0, 1, st)")
    yield _c("config/get_no_status", "[c.gpuId for c in dcgm_agent.dcgmConfigGet(h, g_all, 1, 1, None)]")
    yield _c("config/get_current_values", "c = dcgm_agent.dcgmConfigGet(h, g_all, 1, 1, st)[0]; result = (c.gpuId, c.eccMode, c.computeMode)")
    yield _c(
        "config/set_blank",
        "c = dcgm_structs.c_dcgmDeviceConfig_v2()\n"
        "c.gpuId = dcgm_structs.DCGM_INT32_BLANK; c.eccMode = dcgm_structs.DCGM_INT32_BLANK; c.computeMode = dcgm_structs.DCGM_INT32_BLANK\n"
        "c.perfState.syncBoost = dcgm_structs.DCGM_INT32_BLANK; c.perfState.targetClocks.memClock = dcgm_structs.DCGM_INT32_BLANK\n"
        "c.perfState.targetClocks.smClock = dcgm_structs.DCGM_INT32_BLANK; c.powerLimit.val = dcgm_structs.DCGM_INT32_BLANK\n"
        "for i in range(len(c.workloadPowerProfiles)): c.workloadPowerProfiles[i] = dcgm_structs.DCGM_INT32_BLANK\n"
        "result = dcgm_agent.dcgmConfigSet(h, g_all, c, st)",
    )
    yield _c("config/set_not_a_struct", "dcgm_agent.dcgmConfigSet(h, g_all, 5, st)")
    yield _c("config/set_unknown_group", "dcgm_agent.dcgmConfigSet(h, 12345, dcgm_structs.c_dcgmDeviceConfig_v2(), st)")
    yield _c("config/enforce", "dcgm_agent.dcgmConfigEnforce(h, g_all, st)")
    yield _c("config/enforce_unknown_group", "dcgm_agent.dcgmConfigEnforce(h, 12345, st)")
    yield _c("config/status_count_after", "dcgm_agent.dcgmStatusGetCount(st)")
    yield _c("config/status_pop_after", "dcgm_agent.dcgmStatusPopError(st)")
    yield _c("config/status_clear_after", "dcgm_agent.dcgmStatusClear(st)")
    yield _c(
        "config/workload_power_profile",
        "w = dcgm_structs.c_dcgmWorkloadPowerProfile_v1(); w.version = dcgm_structs.dcgmWorkloadPowerProfile_version1\n"
        "w.groupId = g_all; w.action = 99\n"
        "result = dcgm_agent.dcgmConfigSetWorkloadPowerProfile(h, w)",
    )
    yield _c(
        "config/workload_power_profile_bad_version",
        "w = dcgm_structs.c_dcgmWorkloadPowerProfile_v1(); w.version = 0; w.groupId = g_all\n"
        "result = dcgm_agent.dcgmConfigSetWorkloadPowerProfile(h, w)",
    )
    yield _c("config/workload_power_profile_not_a_struct", "dcgm_agent.dcgmConfigSetWorkloadPowerProfile(h, None)")


def health() -> Iterator[Case]:
    yield _c("health/get_initial", "dcgm_agent.dcgmHealthGet(h, g_all)")
    yield _c("health/set", "dcgm_agent.dcgmHealthSet(h, g_all, dcgm_structs.DCGM_HEALTH_WATCH_PCIE | dcgm_structs.DCGM_HEALTH_WATCH_MEM)")
    yield _c("health/get", "dcgm_agent.dcgmHealthGet(h, g_all)")
    yield _c("health/set_all", "dcgm_agent.dcgmHealthSet(h, g_all, dcgm_structs.DCGM_HEALTH_WATCH_ALL)")
    yield _c("health/get_all", "dcgm_agent.dcgmHealthGet(h, g_all)")
    yield _c("health/set_v2", "dcgm_agent.dcgmHealthSet_v2(h, g_all, dcgm_structs.DCGM_HEALTH_WATCH_THERMAL, 1000000, 60.0)")
    yield _c("health/get_after_v2", "dcgm_agent.dcgmHealthGet(h, g_all)")
    yield _c("health/set_v2_zero", "dcgm_agent.dcgmHealthSet_v2(h, g_all, 0, 0, 0)")
    yield _c("health/set_unknown_group", "dcgm_agent.dcgmHealthSet(h, 12345, 1)")
    yield _c("health/get_unknown_group", "dcgm_agent.dcgmHealthGet(h, 12345)")
    yield _c("health/set_str", "dcgm_agent.dcgmHealthSet(h, g_all, 'all')")
    yield _c("health/set_again", "dcgm_agent.dcgmHealthSet(h, g_all, dcgm_structs.DCGM_HEALTH_WATCH_MEM)")
    yield _c("health/check", "r = dcgm_agent.dcgmHealthCheck(h, g_all); result = (type(r).__name__, r.overallHealth, r.incidentCount)")
    yield _c("health/check_shape", "dcgm_agent.dcgmHealthCheck(h, g_all)", mode="shape")
    yield _c("health/check_old_version", "dcgm_agent.dcgmHealthCheck(h, g_all, version=version_of(dcgm_structs.c_dcgmHealthResponse_v5, 4))")
    yield _c("health/check_unknown_group", "dcgm_agent.dcgmHealthCheck(h, 12345)")
    yield _c("health/check_empty_group", "r = dcgm_agent.dcgmHealthCheck(h, g_e); result = (r.overallHealth, r.incidentCount)")


def policy() -> Iterator[Case]:
    yield _c("policy/get", "dcgm_agent.dcgmPolicyGet(h, g_all, 1, st)", mode="shape")
    yield _c("policy/get_values", "p = dcgm_agent.dcgmPolicyGet(h, g_all, 1, st)[0]; result = (p.condition, p.mode, p.action, p.validation)")
    yield _c("policy/get_all", "len(dcgm_agent.dcgmPolicyGet(h, g_all, len(gpus), st))")
    yield _c("policy/get_zero", "dcgm_agent.dcgmPolicyGet(h, g_all, 0, st)")
    yield _c("policy/get_unknown_group", "dcgm_agent.dcgmPolicyGet(h, 12345, 1, st)")
    yield _c(
        "policy/set_xid",
        "p = dcgm_structs.c_dcgmPolicy_v1(); p.version = dcgm_structs.dcgmPolicy_version1\n"
        "p.condition = dcgm_structs.DCGM_POLICY_COND_XID; p.parms[6].tag = 0; p.parms[6].val.boolean = True\n"
        "result = dcgm_agent.dcgmPolicySet(h, g_all, p, st)",
    )
    yield _c("policy/get_after_set", "p = dcgm_agent.dcgmPolicyGet(h, g_all, 1, st)[0]; result = p.condition")
    yield _c(
        "policy/set_bad_version",
        "p = dcgm_structs.c_dcgmPolicy_v1(); p.version = 0; p.condition = 1\nresult = dcgm_agent.dcgmPolicySet(h, g_all, p, st)",
    )
    yield _c("policy/set_not_a_struct", "dcgm_agent.dcgmPolicySet(h, g_all, 1, st)")
    yield _c(
        "policy/set_unknown_group",
        "p = dcgm_structs.c_dcgmPolicy_v1(); p.version = dcgm_structs.dcgmPolicy_version1\nresult = dcgm_agent.dcgmPolicySet(h, 12345, p, st)",
    )
    yield _c(
        "policy/register",
        "POLICY_CB = CFUNCTYPE(None, c_void_p, c_uint64)\n"
        "def on_violation(resp, user):\n"
        "    pass\n"
        "pcb = POLICY_CB(on_violation)\n"
        "result = dcgm_agent.dcgmPolicyRegister_v2(h, g_all, dcgm_structs.DCGM_POLICY_COND_XID, pcb, 0)",
    )
    yield _c("policy/register_python_function", "dcgm_agent.dcgmPolicyRegister_v2(h, g_all, 1, lambda *a: None, 0)")
    yield _c("policy/register_none_callback", "dcgm_agent.dcgmPolicyRegister_v2(h, g_all, 1, None, 0)")
    yield _c("policy/register_unknown_group", "dcgm_agent.dcgmPolicyRegister_v2(h, 12345, 1, pcb, 0)")
    yield _c("policy/trigger", "dcgm_agent.dcgmPolicyTrigger(h)")
    yield _c("policy/unregister", "dcgm_agent.dcgmPolicyUnregister(h, g_all, dcgm_structs.DCGM_POLICY_COND_XID)")
    yield _c("policy/unregister_again", "dcgm_agent.dcgmPolicyUnregister(h, g_all, dcgm_structs.DCGM_POLICY_COND_XID)")
    yield _c("policy/unregister_unknown_group", "dcgm_agent.dcgmPolicyUnregister(h, 12345, 1)")
    yield _c("policy/trigger_bad_handle", "dcgm_agent.dcgmPolicyTrigger(12345)")


def diagnostics() -> Iterator[Case]:
    yield _c("diag/run_unknown_group", "dcgm_agent.dcgmRunDiagnostic(h, 12345, 1)")
    yield _c("diag/run_bad_level", "dcgm_agent.dcgmRunDiagnostic(h, g_all, 99)", mode="outcome")
    yield _c("diag/validate_unknown_group", "dcgm_agent.dcgmActionValidate(h, 12345, 1)")
    yield _c(
        "diag/validate_v2_bad_version",
        "r = dcgm_structs.c_dcgmRunDiag_v10(); r.groupId = g_all; r.validate = 1\n"
        "result = dcgm_agent.dcgmActionValidate_v2(h, r, runDiagVersion=3)",
    )
    yield _c("diag/validate_v2_not_a_struct", "dcgm_agent.dcgmActionValidate_v2(h, 5)")
    yield _c(
        "diag/validate_v2_v7_unknown_group",
        "r = dcgm_structs.c_dcgmRunDiag_v7(); r.groupId = 12345; r.validate = 1\n"
        "result = dcgm_agent.dcgmActionValidate_v2(h, r, runDiagVersion=dcgm_structs.dcgmRunDiag_version7)",
    )
    yield _c("diag/mn_not_a_struct", "dcgm_agent.dcgmRunMnDiagnostic(h, 5)")
    yield _c("diag/mn_bad_version", "dcgm_agent.dcgmRunMnDiagnostic(h, dcgm_structs.c_dcgmRunMnDiag_v1(), runMnDiagVersion=1)")
    yield _c("diag/stop_mn", "dcgm_agent.dcgmStopMnDiagnostic(h)", mode="outcome")
    yield _c("diag/heartbeat", "dcgm_agent.dcgmDiagSendHeartbeat(h)")
    yield _c("diag/heartbeat_bad_handle", "dcgm_agent.dcgmDiagSendHeartbeat(12345)")
    for name, ver in [("v2", 11), ("v1", 10)]:
        yield _c(
            "diag/helper_%s_ok" % name,
            "r = dcgm_structs.c_dcgmDiagResponse_v%d(); r.version = dcgm_structs.dcgmDiagResponse_version%d\n"
            "result = type(dcgm_agent.helperDiagCheckReturn(0, r)).__name__" % (12 if ver == 11 else 10, 12 if ver == 11 else 10),
        )
        yield _c(
            "diag/helper_%s_error" % name,
            "r = dcgm_structs.c_dcgmDiagResponse_v%d(); r.version = dcgm_structs.dcgmDiagResponse_version%d\n"
            "result = dcgm_agent.helperDiagCheckReturn(-1, r)" % (12 if ver == 11 else 10, 12 if ver == 11 else 10),
        )
    yield _c(
        "diag/helper_v2_error_info",
        "r = dcgm_structs.c_dcgmDiagResponse_v12(); r.version = dcgm_structs.dcgmDiagResponse_version12\n"
        "r.numErrors = 2; r.errors[0].testId = dcgm_structs.DCGM_DIAG_RESPONSE_SYSTEM_ERROR; r.errors[0].msg = 'boom'\n"
        "r.errors[1].testId = 0; r.errors[1].msg = 'other'\n"
        "try:\n"
        "    dcgm_agent.helperDiagCheckReturn(-3, r)\n"
        "except dcgm_structs.DCGMError as e:\n"
        "    result = (type(e).__name__, 'boom' in str(e), 'other' in str(e))",
    )
    yield _c(
        "diag/helper_v1_error_info",
        "r = dcgm_structs.c_dcgmDiagResponse_v10(); r.version = dcgm_structs.dcgmDiagResponse_version10\n"
        "r.systemError.msg = 'sys boom'\n"
        "try:\n"
        "    dcgm_agent.helperDiagCheckReturn(-1, r)\n"
        "except dcgm_structs.DCGMError as e:\n"
        "    result = (type(e).__name__, 'sys boom' in str(e))",
    )
    yield _c(
        "diag/helper_v2_wrong_version",
        "r = dcgm_structs.c_dcgmDiagResponse_v10(); r.version = dcgm_structs.dcgmDiagResponse_version10\n"
        "result = dcgm_agent.helperDiagCheckReturn_v2(0, r)",
    )
    yield _c(
        "diag/helper_v1_direct",
        "r = dcgm_structs.c_dcgmDiagResponse_v10(); r.version = dcgm_structs.dcgmDiagResponse_version10\n"
        "result = type(dcgm_agent.helperDiagCheckReturn_v1(0, r)).__name__",
    )
    yield _c(
        "diag/helper_v1_wrong_version",
        "r = dcgm_structs.c_dcgmDiagResponse_v12(); r.version = dcgm_structs.dcgmDiagResponse_version12\n"
        "result = dcgm_agent.helperDiagCheckReturn_v1(0, r)",
    )
    yield _c(
        "diag/helper_mn_error_info",
        "r = dcgm_structs.c_dcgmMnDiagResponse_v1(); r.version = dcgm_structs.dcgmMnDiagResponse_version1\n"
        "r.numErrors = 1; r.errors[0].msg = 'mn boom'\n"
        "try:\n"
        "    dcgm_agent.helperMnDiagCheckReturn(-1, r)\n"
        "except dcgm_structs.DCGMError as e:\n"
        "    result = (type(e).__name__, 'mn boom' in str(e))",
    )
    yield _c("diag/latest_versions", "(dcgm_agent.g_latestDiagResponseVer, dcgm_agent.g_latestRunDiagVer)")


def stats() -> Iterator[Case]:
    yield _c("stats/watch_pid", "dcgm_agent.dcgmWatchPidFields(h, g_all, 1000000, 3600.0, 0)")
    yield _c("stats/watch_pid_unknown_group", "dcgm_agent.dcgmWatchPidFields(h, 12345, 1000000, 3600.0, 0)")
    yield _c("stats/pid_info_unknown", "dcgm_agent.dcgmGetPidInfo(h, g_all, 999999)")
    yield _c("stats/pid_info_zero", "dcgm_agent.dcgmGetPidInfo(h, g_all, 0)")
    yield _c("stats/pid_info_unknown_group", "dcgm_agent.dcgmGetPidInfo(h, 12345, 1)")
    yield _c("stats/watch_job", "dcgm_agent.dcgmWatchJobFields(h, g_all, 1000000, 3600.0, 0)")
    yield _c("stats/watch_job_unknown_group", "dcgm_agent.dcgmWatchJobFields(h, 12345, 1000000, 3600.0, 0)")
    yield _c("stats/job_start", "dcgm_agent.dcgmJobStartStats(h, g_all, 'battery_job')")
    yield _c("stats/job_start_twice", "dcgm_agent.dcgmJobStartStats(h, g_all, 'battery_job')")
    yield _c("stats/job_start_bytes", "dcgm_agent.dcgmJobStartStats(h, g_all, b'battery_job2')")
    yield _c("stats/job_start_unknown_group", "dcgm_agent.dcgmJobStartStats(h, 12345, 'battery_job3')")
    yield _c("stats/job_start_empty_name", "dcgm_agent.dcgmJobStartStats(h, g_all, '')")
    yield _c("stats/job_start_long_name", "dcgm_agent.dcgmJobStartStats(h, g_all, 'j' * 100)")
    yield _c("stats/job_start_int_name", "dcgm_agent.dcgmJobStartStats(h, g_all, 5)", nvidia=False, expect="raise:ArgumentError")
    yield _c("stats/job_get_running", "j = dcgm_agent.dcgmJobGetStats(h, 'battery_job'); result = (type(j).__name__, j.numGpus)")
    yield _c("stats/job_stop", "dcgm_agent.dcgmJobStopStats(h, 'battery_job')")
    yield _c("stats/job_stop_twice", "dcgm_agent.dcgmJobStopStats(h, 'battery_job')")
    yield _c("stats/job_stop_unknown", "dcgm_agent.dcgmJobStopStats(h, 'no_such_job')")
    yield _c("stats/job_get", "j = dcgm_agent.dcgmJobGetStats(h, 'battery_job'); result = (j.numGpus, j.summary.gpuId)")
    yield _c("stats/job_get_unknown", "dcgm_agent.dcgmJobGetStats(h, 'no_such_job')")
    yield _c("stats/job_remove", "dcgm_agent.dcgmJobRemove(h, 'battery_job')")
    yield _c("stats/job_remove_unknown", "dcgm_agent.dcgmJobRemove(h, 'battery_job')")
    yield _c("stats/job_remove_all", "dcgm_agent.dcgmJobRemoveAll(h)")
    yield _c("stats/job_get_after_remove_all", "dcgm_agent.dcgmJobGetStats(h, 'battery_job2')")
    yield _c("stats/group_topology", "dcgm_agent.dcgmGetGroupTopology(h, g_all)")
    yield _c("stats/group_topology_empty", "dcgm_agent.dcgmGetGroupTopology(h, g_e)")
    yield _c("stats/group_topology_unknown", "dcgm_agent.dcgmGetGroupTopology(h, 12345)")


def introspection() -> Iterator[Case]:
    yield _c("introspect/memory", "dcgm_agent.dcgmIntrospectGetHostengineMemoryUsage(h)", mode="shape")
    yield _c("introspect/memory_nowait", "dcgm_agent.dcgmIntrospectGetHostengineMemoryUsage(h, False)", mode="outcome")
    yield _c("introspect/memory_bad_handle", "dcgm_agent.dcgmIntrospectGetHostengineMemoryUsage(12345)")
    yield _c("introspect/cpu", "dcgm_agent.dcgmIntrospectGetHostengineCpuUtilization(h)", mode="shape")
    yield _c("introspect/cpu_nowait", "dcgm_agent.dcgmIntrospectGetHostengineCpuUtilization(h, waitIfNoData=False)", mode="outcome")
    yield _c("introspect/cpu_bad_handle", "dcgm_agent.dcgmIntrospectGetHostengineCpuUtilization(12345)")
    yield _c("prof/pause", "dcgm_agent.dcgmProfPause(h)")
    yield _c("prof/pause_twice", "dcgm_agent.dcgmProfPause(h)")
    yield _c("prof/resume", "dcgm_agent.dcgmProfResume(h)")
    yield _c("prof/resume_twice", "dcgm_agent.dcgmProfResume(h)")
    yield _c("prof/pause_bad_handle", "dcgm_agent.dcgmProfPause(12345)")
    yield _c("prof/metric_groups_count", "dcgm_agent.dcgmProfGetSupportedMetricGroups(h, 0).numMetricGroups")
    yield _c("module/names", "[(s.id, s.status) for s in dcgm_agent.dcgmModuleGetStatuses(h).statuses[:dcgm_agent.dcgmModuleGetStatuses(h).numStatuses]]", mode="shape")
    yield _c("driver/attach", "dcgm_agent.dcgmAttachDriver(h)")
    yield _c("driver/attach_bad_handle", "dcgm_agent.dcgmAttachDriver(12345)")
    yield _c("driver/detach_bad_handle", "dcgm_agent.dcgmDetachDriver(12345)")
    yield _c("driver/detach_str_handle", "dcgm_agent.dcgmDetachDriver('x')")


def module_names() -> Iterator[Case]:
    for name in (
        "dcgmFP",
        "ensure_byte_strings",
        "dcgmFieldValueEnumeration_f",
        "dcgmFieldValueEntityEnumeration_f",
        "helperDiagCheckReturn",
        "helperDiagCheckReturn_v1",
        "helperDiagCheckReturn_v2",
        "helperMnDiagCheckReturn",
        "c_void_p",
        "byref",
        "dcgm_structs",
    ):
        yield _c("names/%s" % name, "hasattr(dcgm_agent, %r)" % name)
    yield _c("names/callback_types", "(dcgm_agent.dcgmFieldValueEnumeration_f._restype_.__name__, [t.__name__ for t in dcgm_agent.dcgmFieldValueEntityEnumeration_f._argtypes_])")
    yield _c(
        "names/ensure_byte_strings_wraps",
        "@dcgm_agent.ensure_byte_strings()\n"
        "def f(a, b=None, c=3):\n"
        "    return (a, b, c)\n"
        "result = (f('x', b='y', c=4), f(1), f.__name__)",
    )
    yield _c("names/fp_missing", "dcgm_agent.dcgmFP('dcgmNoSuchFunction')")
    yield _c("names/fp_type", "callable(dcgm_agent.dcgmFP('dcgmInit'))")


def shutdown() -> Iterator[Case]:
    yield _c("shutdown/stop_embedded", "dcgm_agent.dcgmStopEmbedded(h)")
    yield _c("shutdown/stop_embedded_twice", "dcgm_agent.dcgmStopEmbedded(h)")
    yield _c("shutdown/devices_after_stop", "dcgm_agent.dcgmGetAllDevices(h)")
    yield _c("shutdown/group_create_after_stop", "dcgm_agent.dcgmGroupCreate(h, 0, 'late')")
    yield _c("shutdown/group_info_after_stop", "dcgm_agent.dcgmGroupGetInfo(h, g_all)")
    yield _c("shutdown/attributes_after_stop", "dcgm_agent.dcgmGetDeviceAttributes(h, 0)")
    yield _c("shutdown/latest_after_stop", "dcgm_agent.dcgmEntitiesGetLatestValues(h, pairs(1, [0]), [150], 0)")
    yield _c("shutdown/watch_after_stop", "dcgm_agent.dcgmWatchFields(h, g_all, fg, 1000000, 0, 0)")
    yield _c("shutdown/health_after_stop", "dcgm_agent.dcgmHealthCheck(h, g_all)")
    yield _c("shutdown/shutdown", "dcgm_agent.dcgmShutdown()")
    yield _c("shutdown/devices_after_shutdown", "dcgm_agent.dcgmGetAllDevices(h)")
    yield _c("shutdown/group_destroy_after_shutdown", "dcgm_agent.dcgmGroupDestroy(h, g_all)")
    yield _c("shutdown/fg_info_after_shutdown", "dcgm_agent.dcgmFieldGroupGetInfo(h, fg)")
    yield _c("shutdown/status_count_after_shutdown", "dcgm_agent.dcgmStatusGetCount(st)")
    yield _c("shutdown/version_after_shutdown", "dcgm_agent.dcgmVersionInfo().version")
    yield _c("shutdown/start_without_init", "dcgm_agent.dcgmStartEmbedded(dcgm_structs.DCGM_OPERATION_MODE_AUTO)")
    yield _c("shutdown/shutdown_twice", "dcgm_agent.dcgmShutdown()")
    yield _c("shutdown/reinit", "dcgm_agent.dcgmInit()")
    yield _c("shutdown/restart", "h2 = dcgm_agent.dcgmStartEmbedded(dcgm_structs.DCGM_OPERATION_MODE_AUTO); result = dcgm_agent.dcgmGetAllDevices(h2)")
    yield _c("shutdown/old_handle_after_restart", "dcgm_agent.dcgmGroupGetInfo(h, g_all)", mode="outcome")
    yield _c("shutdown/final_stop", "dcgm_agent.dcgmStopEmbedded(h2)")
    yield _c("shutdown/final_shutdown", "dcgm_agent.dcgmShutdown()")


def agent_cases() -> List[Case]:
    """This module's cases, without the closing ``shutdown`` section."""
    out: List[Case] = []
    for section in (
        lifecycle,
        discovery,
        groups,
        field_groups,
        watches_and_values,
        status_handles,
        config,
        health,
        policy,
        diagnostics,
        stats,
        introspection,
        module_names,
    ):
        out.extend(section())
    return out


def _objects_module() -> Any:
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "api_battery_objects.py")
    if not os.path.exists(path):
        return None
    import importlib.util

    spec = importlib.util.spec_from_file_location("api_battery_objects", path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["api_battery_objects"] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def all_cases() -> Tuple[List[Case], Optional[str]]:
    """Every case in running order, and the object module's prelude (or ``None``)."""
    cases = agent_cases()
    prelude = None
    objects = _objects_module()
    if objects is not None:
        cases.extend(getattr(objects, "CASES", []))
        prelude = getattr(objects, "PRELUDE", None)
    cases.extend(shutdown())
    ids = [c.id for c in cases]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError("duplicate battery case ids: %s" % dupes)
    return cases, prelude


# ---- the runner (in the subprocess)


def _namespace(bindings: str) -> Dict[str, Any]:
    ns: Dict[str, Any] = {"__name__": "battery"}
    if bindings == "nvidia":
        import dcgm_agent  # noqa: F401 (NVIDIA's, from PYTHONPATH)
        import dcgm_fields
        import dcgm_structs

        ns.update(dcgm_agent=dcgm_agent, dcgm_structs=dcgm_structs, dcgm_fields=dcgm_fields)
    else:
        import importlib

        from dcgm import compat

        for name in compat.MODULES:
            try:
                mod = importlib.import_module("dcgm.compat." + name)
            except ImportError:
                continue
            sys.modules.setdefault(name, mod)
            ns[name] = mod
        if "dcgm_fields" not in ns:
            import dcgm.fields as fields

            ns["dcgm_fields"] = fields
    return ns


def run(out_path: str, bindings: str) -> None:
    """Runs every case in order, writing one JSON line per case to ``out_path``."""
    cases, obj_prelude = all_cases()
    first_object = len(agent_cases())
    ns = _namespace(bindings)
    exec(compile(PRELUDE, "PRELUDE", "exec"), ns)  # noqa: S102
    with open(out_path, "w") as out:
        for i, case in enumerate(cases):
            if i == first_object and obj_prelude is not None:
                try:
                    exec(compile(obj_prelude, "api_battery_objects.PRELUDE", "exec"), ns)  # noqa: S102
                    prelude = {"ok": None}
                except Exception as e:  # noqa: BLE001
                    prelude = {"raise": type(e).__name__, "code": None}
                out.write(json.dumps({"id": "objects/PRELUDE", "outcome": prelude}) + "\n")
            if not case.nvidia and bindings == "nvidia":
                continue
            t0 = time.perf_counter()
            outcome = outcome_of(case, ns)
            took = round(time.perf_counter() - t0, 4)
            out.write(json.dumps({"id": case.id, "outcome": outcome, "s": took}) + "\n")
            out.flush()


def main(argv: List[str]) -> int:
    if len(argv) != 2:
        print("usage: api_battery.py OUT.jsonl  (DCGM_BATTERY_BINDINGS=nvidia|ours)", file=sys.stderr)
        return 2
    run(argv[1], os.environ.get("DCGM_BATTERY_BINDINGS", "ours"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
