"""The object layer of ``dcgm.compat`` (``pydcgm``, ``DcgmHandle``, ``DcgmSystem``,
``DcgmGroup``, ``DcgmFieldGroup``, ``DcgmStatus``, ``DcgmDiag``, ``DcgmMnDiag``, ``DcgmLogging``,
``dcgm_field_helpers``) on the simulator: every class, the typed errors after close and
delete, release on collection, and comparisons with NVIDIA's object layer on the same library.

Each session runs in a subprocess (DCGM's state is process-wide; NVIDIA's bindings and ours
never meet in one process) and prints one JSON document the test reads.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict

import pytest

from conftest import nvidia_bindings, run_python

OBJECT_MODULES = [
    "pydcgm", "DcgmHandle", "DcgmSystem", "DcgmGroup", "DcgmFieldGroup", "DcgmStatus",
    "DcgmDiag", "DcgmMnDiag", "DcgmLogging", "dcgm_field_helpers",
]


def _json(out: Any) -> Dict[str, Any]:
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    assert lines, "no JSON in the output\n--- stdout\n%s\n--- stderr\n%s" % (out.stdout, out.stderr)
    return json.loads(lines[-1])  # type: ignore[no-any-return]


# ---- the surface: every NVIDIA class, method and argument list is ours too

SURFACE = r"""
import inspect, json, sys, importlib
names = %r
prefix = sys.argv[1]
out = {}
for name in names:
    mod = importlib.import_module(prefix + name)
    entry = {}
    for attr, obj in vars(mod).items():
        if attr.startswith("__"):
            continue
        if inspect.isclass(obj) and obj.__module__ == mod.__name__:
            methods = {}
            for m in dir(obj):
                f = inspect.getattr_static(obj, m)
                if isinstance(f, (staticmethod, classmethod)):
                    f = f.__func__
                if inspect.isfunction(f) and (not m.startswith("_") or m in ("__init__", "__len__", "__getitem__", "_IsGroupIdStatic", "_ProcessValues", "_ProcessValuesV2", "__StopDcgm__")):
                    sig = inspect.signature(f)
                    methods[m] = [[p.name, repr(p.default) if p.default is not p.empty else None] for p in sig.parameters.values()]
            entry[attr] = {"class": methods, "attrs": sorted(k for k, v in vars(obj).items() if not k.startswith("__") and not callable(v) and not isinstance(v, (staticmethod, classmethod, property)))}
        elif inspect.isfunction(obj) and obj.__module__ == mod.__name__ and not attr.startswith("_"):
            entry[attr] = {"function": [p.name for p in inspect.signature(obj).parameters.values()]}
        elif isinstance(obj, (int, str)) and not attr.startswith("_") and attr.isupper():
            entry[attr] = {"constant": obj}
    entry["__names__"] = {"names": sorted(n for n in dir(mod) if not n.startswith("__"))}
    out[name] = entry
print(json.dumps(out))
""" % (OBJECT_MODULES,)


def test_every_nvidia_class_method_and_signature_is_provided() -> None:
    nvidia_bindings()
    theirs = _json(run_python(SURFACE, bindings="nvidia", library="sim", args=[""]))
    ours = _json(run_python(SURFACE, bindings="ours", library="sim", args=["dcgm.compat."]))
    missing = []
    for module, entries in theirs.items():
        for name, what in entries.items():
            mine = ours[module].get(name)
            if mine is None:
                missing.append("%s.%s" % (module, name))
                continue
            if "class" in what:
                lacking = sorted(set(what["attrs"]) - set(mine["attrs"]))
                if lacking:
                    missing.append("%s.%s attributes %s" % (module, name, lacking))
                for method, params in what["class"].items():
                    got = mine["class"].get(method)
                    if got is None:
                        missing.append("%s.%s.%s" % (module, name, method))
                    elif got[: len(params)] != params or any(d is None for _, d in got[len(params):]):
                        missing.append("%s.%s.%s%s != NVIDIA's %s" % (module, name, method, got, params))
            elif "names" in what:
                # every public name of NVIDIA's module namespace (pydcgm: the classes of the
                # object layer and the modules they import), but the module's name for itself and
                # ``pydcgm`` (which these modules import circularly in NVIDIA's)
                lacking = sorted(set(what["names"]) - set(mine["names"]) - {module, "pydcgm"})
                if lacking:
                    missing.append("%s lacks %s" % (module, lacking))
            elif "function" in what:
                if mine.get("function") != what["function"]:
                    missing.append("%s.%s(%s) != NVIDIA's %s" % (module, name, mine.get("function"), what["function"]))
            elif what != mine:
                missing.append("%s.%s = %s != NVIDIA's %s" % (module, name, mine, what))
    assert not missing, "\n".join(missing)
    # the project brief's conveniences are additions: NVIDIA's classes lack these names
    assert "GetAllGpus" not in theirs["DcgmSystem"]["DcgmSystem"]["class"]
    assert "RunDiagnostic" not in theirs["DcgmGroup"]["DcgmGroup"]["class"]
    assert "UpdateAllFields" not in theirs["DcgmHandle"]["DcgmHandle"]["class"]
    assert "DcgmGpu" not in theirs["DcgmSystem"] and "DcgmDiagResult" not in theirs["DcgmDiag"]


# ---- one session through every class on the simulator

SESSION = r"""
import gc, json, warnings
warnings.simplefilter("ignore", DeprecationWarning)
from dcgm.compat import pydcgm, dcgm_agent, dcgm_structs, dcgm_fields, dcgm_field_helpers, DcgmDiag, DcgmMnDiag, DcgmLogging
from dcgm.compat import DcgmHandle as DcgmHandleModule
out = {}
def err(f):
    try:
        f()
    except Exception as e:
        return type(e).__name__
    return "ok"

h = pydcgm.DcgmHandle(opMode=dcgm_structs.DCGM_OPERATION_MODE_AUTO)
raw = h.handle
s = h.GetSystem()
out["gpus"] = s.discovery.GetAllGpuIds()
out["supported"] = s.discovery.GetAllSupportedGpuIds()
out["name"] = s.discovery.GetGpuAttributes(0).identifiers.deviceName
out["topology"] = type(s.discovery.GetGpuTopology(0)).__name__
out["entities"] = s.discovery.GetEntityGroupEntities(dcgm_fields.DCGM_FE_GPU, True)
out["nvlink"] = type(s.discovery.GetNvLinkLinkStatus()).__name__
out["p2p"] = type(s.discovery.GetNvLinkP2PStatus()).__name__
out["gpu_status"] = s.discovery.GetGpuStatus(0)
out["select"] = err(lambda: s.discovery.SelectGpusByTopology(0xFF, 2, 0))
out["introspect"] = [err(lambda: s.introspect.memory.GetForHostengine()), err(lambda: s.introspect.cpuUtil.GetForHostengine())]
out["field_meta"] = s.fields.GetFieldById(dcgm_fields.DCGM_FI_DEV_GPU_TEMP).fieldId
out["field_tag"] = s.fields.GetFieldByTag("gpu_temp").fieldId
out["modules"] = type(s.modules.GetStatuses()).__name__
out["profiling"] = [err(s.profiling.Pause), err(s.profiling.Resume)]
s.UpdateAllFields(1)

g = s.GetGroupWithGpuIds("objects_g", [0, 1, 2])
out["group_gpus"] = g.GetGpuIds()
g.RemoveGpu(2); g.AddEntity(dcgm_fields.DCGM_FE_GPU, 3); g.RemoveEntity(dcgm_fields.DCGM_FE_GPU, 3)
out["group_entities"] = [(e.entityGroupId, e.entityId) for e in g.GetEntities()]
out["group_static_add"] = err(lambda: s.GetDefaultGroup().AddGpu(0))
out["group_no_args"] = err(lambda: pydcgm.DcgmGroup(h))
out["group_bad_gpu"] = err(lambda: g.AddGpu(999))
fg = pydcgm.DcgmFieldGroup(h, "objects_fg", [dcgm_fields.DCGM_FI_DEV_GPU_TEMP, dcgm_fields.DCGM_FI_DEV_POWER_USAGE, dcgm_fields.DCGM_FI_DEV_NAME])
out["fg_by_name"] = s.GetFieldGroupIdByName("objects_fg").value == fg.fieldGroupId.value
out["fg_by_id"] = pydcgm.DcgmFieldGroup(h, fieldGroupId=fg.fieldGroupId).name
g.samples.WatchFields(fg, 100000, 3600.0, 0)
g.samples.UpdateAllFields(1)
latest = g.samples.GetLatest_v2(fg)
out["latest_v2"] = {str(e): {str(f): [ts[0].fieldType, ts[0].isBlank, type(ts[0].value).__name__] for f, ts in d.items()} for e, d in latest.values[dcgm_fields.DCGM_FE_GPU].items()}
latest1 = g.samples.GetLatest(fg)
out["latest_v1_gpus"] = sorted(latest1.values)
dfvec = g.samples.GetAllSinceLastCall_v2(None, fg)
s.UpdateAllFields(1)
dfvec = g.samples.GetAllSinceLastCall_v2(dfvec, fg)
out["since_v2_counts"] = sorted(len(ts) >= 1 for d in dfvec.values[1].values() for ts in d.values())
dfvc = g.samples.GetAllSinceLastCall(None, fg)
out["since_v1_gpus"] = sorted(dfvc.values)
out["encoder"] = json.loads(json.dumps(latest.values[1][0][dcgm_fields.DCGM_FI_DEV_GPU_TEMP], cls=dcgm_field_helpers.FieldValueEncoder))[0]["FieldId"]
g.samples.UnwatchFields(fg)
out["health"] = [err(lambda: g.health.Set(dcgm_structs.DCGM_HEALTH_WATCH_PCIE)), err(g.health.Get), err(g.health.Check)]
out["policy"] = [err(g.policy.Get), err(lambda: g.policy.Register(dcgm_structs.DCGM_POLICY_COND_DBE, None))]
out["config"] = err(lambda: g.config.Get(dcgm_structs.DCGM_CONFIG_CURRENT_STATE))
out["group_topology"] = err(g.discovery.GetTopology)
out["stats"] = [err(lambda: g.stats.WatchPidFields(1000000, 3600, 0)), err(lambda: g.stats.GetPidInfo(1)),
                err(lambda: g.stats.WatchJobFields(1000000, 3600, 0)), err(lambda: g.stats.StartJobStats("objects_job")),
                err(lambda: g.stats.StopJobStats("objects_job")), err(lambda: g.stats.GetJobStats("objects_job")),
                err(lambda: g.stats.RemoveJob("objects_job")), err(g.stats.RemoveAllJobs)]
out["action"] = [err(lambda: g.action.Validate(dcgm_structs.DCGM_POLICY_VALID_SV_SHORT)), err(lambda: g.action.RunDiagnostic(1)), err(lambda: g.action.RunSpecificTest("software"))]
out["profiling_groups"] = err(g.profiling.GetSupportedMetricGroups)
out["empty_profiling"] = err(s.GetEmptyGroup("objects_empty").profiling.GetSupportedMetricGroups)
out["run_diagnostic"] = g.RunDiagnostic(dcgm_structs.DCGM_DIAG_LVL_SHORT).GetResult()

st = pydcgm.DcgmStatus()
st.UpdateErrors()
out["status"] = [st.errors, err(st.ThrowExceptionOnErrors)]

d = DcgmDiag.DcgmDiag(gpuIds=[0, 1], testNamesStr="memory,pcie", paramsStr="memory.is_allowed=true")
out["diag"] = [d.numTests, d.numParams, d.GetStruct().entityIds, err(lambda: DcgmDiag.DcgmDiag(testNamesStr="5")),
               err(lambda: d.SetDebugLevel(9)), err(lambda: d.SetWatchFrequency(5)), DcgmDiag.ResultToString(0), err(lambda: DcgmDiag.ResultToString(99))]
resp = DcgmDiag.DcgmDiag(gpuIds=[0]).Execute(raw)
out["diag_execute"] = [DcgmDiag.GetGpuCount(resp), DcgmDiag.find_test_in_response(resp, "software") is not None,
                       DcgmDiag.check_diag_result_non_failing(resp, dcgm_structs.c_dcgmGroupEntityPair_t(1, 0), "software")]
mn = DcgmMnDiag.DcgmMnDiag(hostList=["a", "b"], testName="mnubergemm", parameters=["x.y=1"])
mn.AddHost("c"); mn.AddParameter("x.z=2")
out["mndiag"] = [mn.numHosts, mn.numParams, mn.GetStruct().testName, err(lambda: DcgmMnDiag.DcgmMnDiag().Execute(raw)), err(lambda: mn.AddHost("x" * 300))]
out["logging"] = [DcgmLogging.BASE_LOGGER, DcgmLogging.SYSLOG_LOGGER, DcgmLogging.CONSOLE_LOGGER, DcgmLogging.FILE_LOGGER]

# the brief's conveniences
gpu = s.GetAllGpus()[0]
v = gpu.GetFieldValue(dcgm_fields.DCGM_FI_DEV_GPU_TEMP)
out["gpu"] = [gpu.GetGpuId(), gpu.GetUuid().startswith("GPU-"), type(v.value).__name__, v.isBlank]
out["gpu_procs"] = [[type(p.pid).__name__, p.usedMemory > 0] for p in gpu.GetProcessStats()]

# typed errors after delete / close
dead = s.GetGroupWithGpuIds("objects_dead", [0])
dead.Delete(); dead.Delete()
out["deleted_group"] = [dead.GetId(), err(dead.GetGpuIds), err(lambda: dead.AddGpu(1)), err(lambda: dead.samples.GetLatest(fg)),
                        err(dead.health.Get), err(dead.policy.Trigger), err(lambda: dead.RunDiagnostic(1))]
dfg = pydcgm.DcgmFieldGroup(h, "objects_dead_fg", [dcgm_fields.DCGM_FI_DEV_GPU_TEMP])
dfg.Delete(); dfg.Delete()
out["deleted_fg"] = [dfg.fieldGroupId, err(lambda: g.samples.WatchFields(dfg, 1000000, 0, 0)), err(lambda: g.samples.GetLatest_v2(dfg))]

# release on collection, and no double release
gc.collect()
groups_before = len(dcgm_agent.dcgmGroupGetAllIds(raw))
g2 = s.GetEmptyGroup("objects_tmp")
during = len(dcgm_agent.dcgmGroupGetAllIds(raw))
del g2; gc.collect()
after = len(dcgm_agent.dcgmGroupGetAllIds(raw))
out["group_release"] = [during - groups_before, after - groups_before]
fgs_before = dcgm_agent.dcgmFieldGroupGetAll(raw).numFieldGroups
tmp = pydcgm.DcgmFieldGroup(h, "objects_tmp_fg", [dcgm_fields.DCGM_FI_DEV_GPU_TEMP])
del tmp; gc.collect()
out["fg_release"] = dcgm_agent.dcgmFieldGroupGetAll(raw).numFieldGroups - fgs_before
g3 = s.GetEmptyGroup("objects_explicit")
g3_id = g3.GetId().value
g3.Delete()
g4 = s.GetGroupWithGpuIds("objects_reuser", [0])  # may reuse the id of g3
del g3; gc.collect()
out["no_double_destroy"] = [g4.GetGpuIds(), g4.GetId().value == g3_id or True]
adopted = pydcgm.DcgmHandle(handle=raw)
del adopted; gc.collect()
out["adopted_kept"] = dcgm_agent.dcgmGetAllDevices(raw) == out["gpus"]
out["tracked"] = len(pydcgm.DcgmHandle.handles)

# the closed handle
keep = s.GetGroupWithGpuIds("objects_after_close", [0])
h.Shutdown(); h.Shutdown()
out["closed"] = [h.handle, err(s.discovery.GetAllGpuIds), err(keep.GetGpuIds), err(lambda: keep.samples.GetLatest(fg)),
                 err(lambda: h.UpdateAllFields(1)), err(lambda: pydcgm.DcgmFieldGroup(h, "late", [150])), err(lambda: s.GetEmptyGroup("late")),
                 err(keep.Delete), err(fg.Delete)]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def session() -> Dict[str, Any]:
    out = run_python(SESSION, bindings="ours", library="sim")
    assert "Exception ignored" not in out.stderr, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    return _json(out)


def test_discovery_and_system(session: Dict[str, Any]) -> None:
    assert session["gpus"] == list(range(8)) and session["supported"] == list(range(8))
    assert session["name"] and isinstance(session["name"], str)
    assert session["topology"].startswith("c_dcgmDeviceTopology")
    assert session["entities"] == list(range(8))
    assert session["nvlink"].startswith("c_dcgmNvLinkStatus") and session["p2p"] == "c_dcgmNvLinkP2PStatus_v1"
    assert session["field_meta"] == 150 and session["field_tag"] == 150
    assert session["modules"].startswith("c_dcgmModuleGetStatuses")
    assert session["select"] == "ok" and session["profiling"] == ["DCGMError_NotSupported"] * 2


def test_groups_and_field_groups(session: Dict[str, Any]) -> None:
    assert session["group_gpus"] == [0, 1, 2]
    assert session["group_entities"] == [[1, 0], [1, 1]]
    assert session["group_static_add"] == "DcgmException" and session["group_no_args"] == "DcgmException"
    assert session["group_bad_gpu"].startswith("DCGMError_")
    assert session["fg_by_name"] is True and session["fg_by_id"] == "objects_fg"


def test_samples(session: Dict[str, Any]) -> None:
    latest = session["latest_v2"]
    assert sorted(latest) == ["0", "1"]
    for byField in latest.values():
        assert byField["150"] == ["i", False, "int"]
        assert byField["155"] == ["d", False, "float"]
        assert byField["50"] == ["s", False, "str"]
    assert session["latest_v1_gpus"] == [0, 1] and session["since_v1_gpus"] == [0, 1]
    assert session["since_v2_counts"] and all(session["since_v2_counts"])
    assert session["encoder"] == 150


def test_sub_objects(session: Dict[str, Any]) -> None:
    assert session["health"][1:] == ["ok", "ok"]
    assert session["policy"][1] == "DcgmException"
    assert session["config"] in ("ok", "DCGMError_NotSupported")
    assert session["group_topology"] == "ok"
    assert all(x == "ok" or x.startswith("DCGMError_") for x in session["stats"]), session["stats"]
    assert all(x == "ok" or x.startswith("DCGMError_") for x in session["action"]), session["action"]
    assert session["empty_profiling"] == "DCGMError_GroupIsEmpty"
    assert session["run_diagnostic"] in ("Pass", "Fail", "Warn", "Skip")


def test_status_diag_mndiag_logging(session: Dict[str, Any]) -> None:
    assert session["status"] == [[], "ok"]
    assert session["diag"] == [2, 1, "0,1", "ValueError", "ValueError", "ValueError", "Pass", "ValueError"]
    assert session["diag_execute"][1] is True
    assert session["mndiag"] == [3, 2, "mnubergemm", "ValueError", "ValueError"]
    assert session["logging"] == [0, 1, 2, 3]


def test_brief_conveniences(session: Dict[str, Any]) -> None:
    assert session["gpu"] == [0, True, "int", False]
    assert session["gpu_procs"] and all(p == ["int", True] for p in session["gpu_procs"])


def test_deleted_objects_raise_typed_errors(session: Dict[str, Any]) -> None:
    assert session["deleted_group"] == [None] + ["DCGMError_NotConfigured"] * 6
    assert session["deleted_fg"] == [None, "DCGMError_NoData", "DCGMError_NoData"]


def test_closed_handle_raises_typed_errors(session: Dict[str, Any]) -> None:
    closed = session["closed"]
    assert closed[0] is None
    assert closed[1:] == ["DCGMError_ConnectionNotValid"] * 8, closed


def test_release_on_collection(session: Dict[str, Any]) -> None:
    assert session["group_release"] == [1, 0]
    assert session["fg_release"] == 0
    assert session["no_double_destroy"][0] == [0]
    assert session["adopted_kept"] is True
    assert session["tracked"] == 1


EXIT = r"""
import warnings; warnings.simplefilter("ignore", DeprecationWarning)
from dcgm.compat import pydcgm, dcgm_agent, dcgm_structs
h = pydcgm.DcgmHandle()
s = h.GetSystem()
g = s.GetGroupWithGpuIds("exit_g", [0])
fg = pydcgm.DcgmFieldGroup(h, "exit_fg", [150])
st = pydcgm.DcgmStatus()
%s
print("{}")
"""


@pytest.mark.parametrize(
    "library,ending",
    [("sim", ""), ("sim", "h.Shutdown()"), ("sim", "dcgm_agent.dcgmShutdown()"),
     ("sim", "h.Shutdown(); dcgm_agent.dcgmShutdown()"), ("sim", "dcgm_agent.dcgmStopEmbedded(h.handle)"),
     ("real", "dcgm_agent.dcgmShutdown()")],
)
def test_exit_releases_cleanly(library: str, ending: str) -> None:
    """At exit the finalizers release what is left (groups, field group, status, handle),
    quietly, whatever the program closed itself (even the whole library)."""
    if library == "real":
        from conftest import require_real

        require_real()
    out = run_python(EXIT % ending, bindings="ours", library=library)
    assert out.returncode == 0
    assert "Exception ignored" not in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_field_value_from_structures() -> None:
    code = r"""
import json
from dcgm.compat import dcgm_structs, dcgm_field_helpers as H
def fv(fieldId, ft, status=0, **value):
    r = dcgm_structs.c_dcgmFieldValue_v1(); r.version = dcgm_structs.dcgmFieldValue_version1
    r.fieldId = fieldId; r.fieldType = ord(ft); r.status = status; r.ts = 7
    for k, v in value.items(): setattr(r.value, k, v)
    return H.DcgmFieldValue(r)
out = [vars(fv(150, "i", i64=42)), vars(fv(155, "d", dbl=1.5)), vars(fv(50, "s", str="H200")),
       vars(fv(150, "i", i64=0x7ffffffffffffff2)), vars(fv(155, "d", dbl=140737488355330.0)),
       vars(fv(150, "i", status=-16)), vars(fv(50, "s", str="<<<NOT_SUPPORTED>>>"))]
try:
    H.DcgmFieldValue(5)
except Exception as e:
    out.append(type(e).__name__)
ts = H.DcgmFieldValueTimeSeries()
for t in (5, 3, 9, 4):
    v = fv(150, "i", i64=t); v.ts = t; ts.InsertValue(v)
out.append([v.ts for v in ts.values] + [len(ts), ts[-1].ts])
print(json.dumps(out))
"""
    got = _json_list(run_python(code, bindings="ours", library="sim"))
    assert got[0] == {"ts": 7, "fieldId": 150, "fieldType": "i", "isBlank": False, "value": 42}
    assert got[1] == {"ts": 7, "fieldId": 155, "fieldType": "d", "isBlank": False, "value": 1.5}
    assert got[2] == {"ts": 7, "fieldId": 50, "fieldType": "s", "isBlank": False, "value": "H200"}
    assert got[3]["isBlank"] is True and got[4]["isBlank"] is True
    assert got[5] == {"ts": 7, "fieldId": 150, "fieldType": "i", "isBlank": True, "value": None}
    assert got[6]["isBlank"] is True
    assert got[7] == "Exception"
    assert got[8] == [3, 4, 5, 9, 4, 9]


def _json_list(out: Any) -> Any:
    lines = [line for line in out.stdout.splitlines() if line.startswith("[")]
    assert lines, out.stdout + out.stderr
    return json.loads(lines[-1])


# ---- the same program on NVIDIA's object layer and on ours, same library

COMPARE = r"""
import json, warnings
warnings.simplefilter("ignore", DeprecationWarning)
import pydcgm, dcgm_structs, dcgm_fields, dcgm_agent, dcgm_field_helpers, DcgmDiag, DcgmMnDiag
out = {}
def err(f):
    try:
        r = f()
    except Exception as e:
        return "raise:" + type(e).__name__
    return r if isinstance(r, (int, float, str, list, bool, type(None))) else type(r).__name__
h = pydcgm.DcgmHandle(opMode=dcgm_structs.DCGM_OPERATION_MODE_AUTO)
s = h.GetSystem()
out["gpus"] = s.discovery.GetAllGpuIds()
out["supported"] = s.discovery.GetAllSupportedGpuIds()
a = s.discovery.GetGpuAttributes(0)
out["attrs"] = [a.identifiers.deviceName, a.identifiers.uuid, a.identifiers.serial, a.identifiers.pciBusId]
out["bad_attrs"] = err(lambda: s.discovery.GetGpuAttributes(999))
out["entities"] = s.discovery.GetEntityGroupEntities(dcgm_fields.DCGM_FE_GPU, False)
out["status"] = s.discovery.GetGpuStatus(0)
out["field"] = [s.fields.GetFieldById(150).fieldId, s.fields.GetFieldByTag("gpu_temp").fieldId, s.fields.GetFieldById(65000)]
out["no_group"] = err(lambda: pydcgm.DcgmGroup(h))
ga = s.GetDefaultGroup()
out["default"] = [ga.GetGpuIds(), ga.GetId(), err(lambda: ga.AddGpu(0))]
g = s.GetGroupWithGpuIds("cmp_g", out["supported"][:2])
out["group"] = [g.GetGpuIds(), [(e.entityGroupId, e.entityId) for e in g.GetEntities()], err(lambda: g.AddGpu(999)), g.name]
fields = [dcgm_fields.DCGM_FI_DEV_NAME, dcgm_fields.DCGM_FI_DEV_UUID, dcgm_fields.DCGM_FI_DEV_GPU_TEMP, dcgm_fields.DCGM_FI_DEV_POWER_USAGE, dcgm_fields.DCGM_FI_DEV_FB_TOTAL]
fg = pydcgm.DcgmFieldGroup(h, "cmp_fg", fields)
out["fg"] = [fg.name, list(fg.fieldIds), fg.wasCreated, s.GetFieldGroupIdByName("cmp_fg").value == fg.fieldGroupId.value, s.GetFieldGroupIdByName("nope")]
again = pydcgm.DcgmFieldGroup(h, fieldGroupId=fg.fieldGroupId)
out["fg_by_id"] = [again.name, list(again.fieldIds)[:len(fields)], again.wasCreated]
out["fg_bad_id"] = err(lambda: pydcgm.DcgmFieldGroup(h, fieldGroupId=dcgm_structs.c_void_p(9999)))
g.samples.WatchFields(fg, 1000000, 3600.0, 0)
s.UpdateAllFields(1)
def summary(values):
    res = {}
    for k, d in values.items():
        for e, byField in (d.items() if isinstance(d, dict) else []):
            for f, ts in (byField.items() if isinstance(byField, dict) else [(e, byField)]):
                v = ts[-1]
                static = f in (dcgm_fields.DCGM_FI_DEV_NAME, dcgm_fields.DCGM_FI_DEV_UUID, dcgm_fields.DCGM_FI_DEV_FB_TOTAL)
                res["%s/%s/%s" % (k, e, f)] = [sorted(vars(v)), v.fieldType, v.isBlank, type(v.value).__name__, v.value if static else None]
    return res
out["latest_v2"] = summary(g.samples.GetLatest_v2(fg).values)
l1 = g.samples.GetLatest(fg).values
out["latest_v1"] = {"%s/%s" % (gpu, f): [v[-1].fieldType, type(v[-1].value).__name__] for gpu, d in l1.items() for f, v in d.items()}
out["since_v2"] = sorted(g.samples.GetAllSinceLastCall_v2(None, fg).values)
out["health"] = [err(lambda: g.health.Set(dcgm_structs.DCGM_HEALTH_WATCH_PCIE)), err(g.health.Get)]
out["policy_register_none"] = err(lambda: g.policy.Register(1, None))
out["empty_prof"] = err(s.GetEmptyGroup("cmp_empty").profiling.GetSupportedMetricGroups)
out["diag"] = [err(lambda: DcgmDiag.DcgmDiag(testNamesStr="5")), DcgmDiag.DcgmDiag(gpuIds=[0, 1]).GetStruct().entityIds,
               DcgmDiag.DcgmDiag(testNamesStr="2").GetStruct().validate, DcgmDiag.ResultToString(3)]
out["mndiag"] = [DcgmMnDiag.DcgmMnDiag(hostList=["a", "b"]).numHosts, err(lambda: DcgmMnDiag.DcgmMnDiag().Execute(h.handle))]
out["validate"] = err(lambda: [t.name for t in g.action.RunDiagnostic(1).tests[:1]])
st = pydcgm.DcgmStatus(); st.UpdateErrors()
out["status"] = [st.errors, st.ThrowExceptionOnErrors()]
g.samples.UnwatchFields(fg)
g.Delete()
out["deleted_id"] = g.GetId()
fg.Delete()
out["deleted_fg"] = fg.fieldGroupId
print(json.dumps(out))
"""


def _compare(library: str) -> None:
    nvidia_bindings()
    theirs = _json(run_python(COMPARE, bindings="nvidia", library=library))
    ours = _json(run_python(COMPARE, bindings="ours", library=library, shadow=True))
    assert sorted(ours) == sorted(theirs)
    diffs = {k: (ours[k], theirs[k]) for k in theirs if ours[k] != theirs[k]}
    assert not diffs, json.dumps(diffs, indent=1)


def test_same_answers_as_nvidia_on_the_simulator() -> None:
    _compare("sim")


def test_same_answers_as_nvidia_on_the_real_library(real_dir: Any) -> None:
    _compare("real")


# ---- speed: DcgmGroup.samples.GetLatest_v2 of 30 fields x 8 GPUs

SPEED = r"""
import json, sys, timeit, warnings
warnings.simplefilter("ignore", DeprecationWarning)
import pydcgm, dcgm_structs, dcgm_fields
h = pydcgm.DcgmHandle(opMode=dcgm_structs.DCGM_OPERATION_MODE_AUTO)
s = h.GetSystem()
g = s.GetDefaultGroup()
ids = [f for f in range(1, 1200) if s.fields.GetFieldById(f) is not None and s.fields.GetFieldById(f).fieldType in ("i", "d", b"i", b"d")][:30]
fg = pydcgm.DcgmFieldGroup(h, "speed", ids)
g.samples.WatchFields(fg, 1000000, 3600.0, 0)
s.UpdateAllFields(1)
n = sum(len(ts) for byEntity in g.samples.GetLatest_v2(fg).values.values() for byField in byEntity.values() for ts in byField.values())
t = min(timeit.repeat(lambda: g.samples.GetLatest_v2(fg), number=100, repeat=5)) / 100
print(json.dumps({"values": n, "ms": t * 1000}))
"""


def test_get_latest_v2_reads_what_nvidia_reads() -> None:
    """30 fields x 8 GPUs through both bindings: the same number of values. The speed of the
    two is a benchmark (python/bench/bench_compat.py, case ``samples``), not asserted here: a
    timing on a loaded CI machine is not a test."""
    nvidia_bindings()
    theirs = _json(run_python(SPEED, bindings="nvidia", library="sim"))
    ours = _json(run_python(SPEED, bindings="ours", library="sim", shadow=True))
    print("GetLatest_v2 30x8: NVIDIA %.3f ms, ours %.3f ms (%.1fx)" % (theirs["ms"], ours["ms"], theirs["ms"] / ours["ms"]))
    assert ours["values"] == theirs["values"] == 240


def test_module_docstrings_name_the_differences() -> None:
    import importlib

    for name in OBJECT_MODULES:
        mod = importlib.import_module("dcgm.compat." + name)
        assert mod.__doc__ and re.search(r"NVIDIA", mod.__doc__), name


def test_subclass_hooks_see_structures_and_callback_errors_raise() -> None:
    """A subclass overriding ``_ProcessValues`` still gets NVIDIA's ``c_dcgmFieldValue_v1``
    list and builds the same values as the fast reader; an exception inside it reaches the
    caller."""
    code = r"""
import json, warnings
warnings.simplefilter("ignore", DeprecationWarning)
from dcgm.compat import pydcgm, dcgm_field_helpers as H
h = pydcgm.DcgmHandle(); s = h.GetSystem(); g = s.GetDefaultGroup()
fg = pydcgm.DcgmFieldGroup(h, "sub", [50, 150, 155, 203, 221])
g.samples.WatchFields(fg, 1000000, 3600, 0); s.UpdateAllFields(1)
class Sub(H.DcgmFieldValueEntityCollection):
    def _ProcessValues(self, eg, e, values):
        self.raw = type(values[0]).__name__
        super()._ProcessValues(eg, e, values)
class Sub1(H.DcgmFieldValueCollection):
    def _ProcessValues(self, gpu, values):
        super()._ProcessValues(gpu, values)
class Bad(H.DcgmFieldValueEntityCollection):
    def _ProcessValues(self, eg, e, values):
        raise KeyError("boom")
def summ(values):
    out = {}
    def walk(prefix, d):
        for k, v in d.items():
            if isinstance(v, dict):
                walk(prefix + [k], v)
            else:
                out["/".join(map(str, prefix + [k]))] = [vars(x) if k != 221 else [x.value.pid, x.isBlank] for x in v.values]
    walk([], values)
    return out
fast = g.samples.GetLatest_v2(fg)
sub = Sub(h.handle, g.GetId()); sub.GetLatestValues(fg)
fast1 = g.samples.GetLatest(fg)
sub1 = Sub1(h.handle, g.GetId()); sub1.GetLatestValues(fg)
try:
    Bad(h.handle, g.GetId()).GetLatestValues(fg)
    bad = "no raise"
except KeyError as e:
    bad = "KeyError"
print(json.dumps({"raw": sub.raw, "v2": summ(fast.values) == summ(sub.values), "v1": summ(fast1.values) == summ(sub1.values),
                  "n": len(summ(fast.values)), "bad": bad}))
"""
    got = _json(run_python(code, bindings="ours", library="sim"))
    assert got == {"raw": "c_dcgmFieldValue_v1", "v2": True, "v1": True, "n": 40, "bad": "KeyError"}


def test_release_inside_a_library_callback_is_deferred() -> None:
    """A group collected while the library runs one of our enumeration callbacks is not
    destroyed from inside it (a DCGM call there could deadlock the library): it is queued and
    destroyed once the call returns."""
    code = r"""
import gc, json, warnings
warnings.simplefilter("ignore", DeprecationWarning)
from dcgm.compat import pydcgm, dcgm_agent, dcgm_field_helpers as H
from dcgm.compat import _handle_state as M
h = pydcgm.DcgmHandle(); s = h.GetSystem(); g = s.GetDefaultGroup()
fg = pydcgm.DcgmFieldGroup(h, "defer", [150])
g.samples.WatchFields(fg, 1000000, 3600, 0); s.UpdateAllFields(1)
doomed = [s.GetEmptyGroup("defer_me")]
before = len(dcgm_agent.dcgmGroupGetAllIds(h.handle))
seen = []
class Sub(H.DcgmFieldValueEntityCollection):
    def _ProcessValues(self, eg, e, values):
        if doomed:
            doomed.clear(); gc.collect()
            seen.append(len(M._pending))
        super()._ProcessValues(eg, e, values)
Sub(h.handle, g.GetId()).GetLatestValues(fg)
after = len(dcgm_agent.dcgmGroupGetAllIds(h.handle))
print(json.dumps({"queued": seen, "left": len(M._pending), "released": before - after}))
"""
    got = _json(run_python(code, bindings="ours", library="sim"))
    assert got == {"queued": [1], "left": 0, "released": 1}


# ---- a standalone host engine: connecting by unix socket, release seen from the engine

REMOTE = r"""
import gc, json, sys, warnings
warnings.simplefilter("ignore", DeprecationWarning)
import pydcgm
h = pydcgm.DcgmHandle(unixSocketPath=sys.argv[1], timeoutMs=5000)
s = h.GetSystem()
out = {"embedded": h.isEmbedded, "gpus": s.discovery.GetAllGpuIds()}
base = (len(s.GetAllGroupIds()), s.GetAllFieldGroups().numFieldGroups)
g = s.GetGroupWithGpuIds("remote_g", out["gpus"][:1])
fg = pydcgm.DcgmFieldGroup(h, "remote_fg", [150])
out["created"] = [len(s.GetAllGroupIds()) - base[0], s.GetAllFieldGroups().numFieldGroups - base[1]]
del g, fg
gc.collect()
out["after_collection"] = [len(s.GetAllGroupIds()) - base[0], s.GetAllFieldGroups().numFieldGroups - base[1]]
h.Shutdown()
print(json.dumps(out))
"""


def test_unix_socket_handle_and_release_seen_by_the_host_engine(real_dir: Any, tmp_path: Any) -> None:
    """``DcgmHandle(unixSocketPath=...)`` on a real nv-hostengine: a collected group and field
    group are destroyed in the host engine (NVIDIA's keep them until the connection ends)."""
    import os
    import subprocess
    import time

    from conftest import H200_CAPTURE

    nvidia_bindings()
    sock = tmp_path / "he.sock"
    env = dict(os.environ, NVML_INJECTION_MODE="True", NVML_YAML_FILE=str(H200_CAPTURE), LD_LIBRARY_PATH=str(real_dir / "lib"))
    engine = subprocess.Popen([str(real_dir / "bin" / "nv-hostengine"), "-n", "-d", str(sock), "--log-filename", str(tmp_path / "he.log")],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while not sock.exists() and time.time() < deadline and engine.poll() is None:
            time.sleep(0.1)
        if not sock.exists():
            pytest.skip("nv-hostengine did not start (exit %s)" % engine.poll())
        ours = _json(run_python(REMOTE, bindings="ours", library="real", shadow=True, args=[str(sock)]))
        theirs = _json(run_python(REMOTE, bindings="nvidia", library="real", args=[str(sock)]))
    finally:
        engine.terminate()
        try:
            engine.wait(timeout=20)
        except subprocess.TimeoutExpired:
            engine.kill()
            engine.wait()
    assert ours["embedded"] is False and ours["gpus"] == theirs["gpus"] == [0]
    assert ours["created"] == theirs["created"] == [1, 1]
    assert ours["after_collection"] == [0, 0]
    assert theirs["after_collection"] == [1, 1]  # NVIDIA's leak, fixed here
