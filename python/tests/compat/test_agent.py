"""``dcgm.compat.dcgm_agent`` and ``dcgm_agent_internal``: NVIDIA's function list and
signatures, no ``ctypes.CDLL``, the project brief's three-argument ``dcgmGetLatestValues``,
bad input that raises instead of crashing, and a policy callback that raises. (Call-by-call
agreement with NVIDIA's bindings is ``test_api_differential.py``.)"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any, Dict

import pytest

from conftest import REPO, nvidia_bindings, run_python

COMPAT = REPO / "python" / "pysrc" / "dcgm" / "compat"

#: Dumps every public function of ``dcgm_agent`` with its parameters and defaults, and the
#: module-level names programs use.
SURFACE = r"""
import inspect, json, sys
if sys.argv[1] == "nvidia":
    import dcgm_agent
else:
    from dcgm.compat import dcgm_agent
out = {"functions": {}, "names": {}}
for name, fn in sorted(vars(dcgm_agent).items()):
    if inspect.isfunction(fn) and not name.startswith("_") and inspect.unwrap(fn).__module__ == dcgm_agent.__name__:
        sig = inspect.signature(inspect.unwrap(fn))
        out["functions"][name] = [
            [p.name, None if p.default is inspect.Parameter.empty else repr(p.default)] for p in sig.parameters.values()
        ]
for name in ("g_latestDiagResponseVer", "g_latestRunDiagVer"):
    out["names"][name] = getattr(dcgm_agent, name)
for name in ("dcgmFieldValueEnumeration_f", "dcgmFieldValueEntityEnumeration_f"):
    t = getattr(dcgm_agent, name)
    out["names"][name] = [t._restype_.__name__] + [a.__name__ if a.__name__.startswith("c_") and "POINTER" not in repr(a) else repr(a).split("'")[1].split(".")[-1] for a in t._argtypes_]
print(json.dumps(out))
"""

#: NVIDIA's three-argument form is this package's convenience (theirs needs the callback).
SIGNATURE_DIFFERENCES = {"dcgmGetLatestValues"}


def _surface(bindings: str) -> Dict[str, Any]:
    return json.loads(run_python(SURFACE, bindings=bindings, library="sim", args=[bindings]).stdout)  # type: ignore[no-any-return]


def test_every_function_of_nvidia_with_its_signature() -> None:
    nvidia_bindings()
    theirs, ours = _surface("nvidia"), _surface("ours")
    assert len(theirs["functions"]) == 100
    missing = sorted(set(theirs["functions"]) - set(ours["functions"]))
    assert not missing, "functions of NVIDIA's dcgm_agent not provided: %s" % missing
    for name, params in theirs["functions"].items():
        if name in SIGNATURE_DIFFERENCES:
            continue
        assert ours["functions"][name] == params, name
    # the documented difference keeps NVIDIA's parameters first, in order
    mine = ours["functions"]["dcgmGetLatestValues"]
    assert [p[0] for p in mine] == [p[0] for p in theirs["functions"]["dcgmGetLatestValues"]]
    assert mine[3:] == [["enumCB", "None"], ["userData", "None"]]
    assert ours["names"] == theirs["names"]


def test_no_ctypes_library_loading_in_the_compat_modules() -> None:
    loading = re.compile(r"\b(CDLL|PyDLL|WinDLL|cdll|pydll|LoadLibrary|find_library|dlopen)\s*[(.]")
    offenders = []
    for path in sorted(COMPAT.glob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if loading.search(code) and not code.strip().startswith(("``", '"', "'", "*")):
                offenders.append("%s:%d: %s" % (path.name, n, line.strip()))
    assert not offenders, "\n".join(offenders)


def test_calls_go_through_the_extension() -> None:
    code = (
        "from dcgm.compat import dcgm_agent, dcgm_structs, _ffi\n"
        "dcgm_agent.dcgmInit()\n"
        "fp = dcgm_agent.dcgmFP('dcgmGetAllDevices')\n"
        "print(dcgm_agent.dcgmFP is dcgm_structs._dcgmGetFunctionPointer, isinstance(fp, _ffi.FunctionPointer))\n"
        "dcgm_agent.dcgmShutdown()\n"
    )
    assert run_python(code, bindings="ours", library="sim").stdout.split() == ["True", "True"]


BRIEF_LATEST = r"""
import json
from dcgm.compat import dcgm_agent, dcgm_structs, dcgm_fields
dcgm_agent.dcgmInit()
handle = dcgm_agent.dcgmStartEmbedded(dcgm_structs.DCGM_OPERATION_MODE_AUTO)
group_id = dcgm_agent.dcgmGroupCreate(handle, dcgm_structs.DCGM_GROUP_DEFAULT, "all")
fg = dcgm_agent.dcgmFieldGroupCreate(handle, [dcgm_fields.DCGM_FI_DEV_GPU_UTIL, dcgm_fields.DCGM_FI_DEV_FB_USED], "gpu_basic")
dcgm_agent.dcgmWatchFields(handle, group_id, fg, 1000000, 0, 0)
dcgm_agent.dcgmUpdateAllFields(handle, 1)
values, num = dcgm_agent.dcgmGetLatestValues(handle, group_id, fg)
rows = [[v.gpuId, v.fieldId, v.value, v.status, v.entityGroupId, v.blank] for v in values]
# NVIDIA's call form, on the same watch: the callback sees the same GPUs and fields
seen = []
def cb(gpu, vals, n, user):
    for i in range(n):
        seen.append([gpu, vals[i].fieldId])
    return 0
ret = dcgm_agent.dcgmGetLatestValues(handle, group_id, fg, dcgm_agent.dcgmFieldValueEnumeration_f(cb), None)
gpus = dcgm_agent.dcgmGetAllSupportedDevices(handle)
dcgm_agent.dcgmUnwatchFields(handle, group_id, fg); dcgm_agent.dcgmFieldGroupDestroy(handle, fg)
dcgm_agent.dcgmGroupDestroy(handle, group_id); dcgm_agent.dcgmStopEmbedded(handle); dcgm_agent.dcgmShutdown()
print(json.dumps({"num": num, "rows": rows, "ret": ret, "seen": seen, "gpus": gpus}))
"""


@pytest.mark.parametrize("library", ["sim", "real"])
def test_brief_three_argument_get_latest_values(library: str) -> None:
    out = json.loads(run_python(BRIEF_LATEST, bindings="ours", library=library).stdout.strip().splitlines()[-1])
    gpus = out["gpus"]
    assert gpus and out["num"] == len(out["rows"]) == 2 * len(gpus)
    assert sorted((r[0], r[1]) for r in out["rows"]) == sorted((g, f) for g in gpus for f in (203, 252))
    for gpu, field, value, status, group, blank in out["rows"]:
        assert status == 0 and group == 1 and blank is None
        assert isinstance(value, int) and 0 <= value < 2**31 - 16, (gpu, field, value)  # a reading, not a sentinel
    assert out["ret"] == 0
    assert sorted(map(tuple, out["seen"])) == sorted((r[0], r[1]) for r in out["rows"])


BAD_INPUT = r"""
import ctypes, json
from dcgm.compat import dcgm_agent, dcgm_structs
res = {}
def t(name, f):
    try:
        f()
        res[name] = "ok"
    except Exception as e:
        res[name] = type(e).__name__
dcgm_agent.dcgmInit()
h = dcgm_agent.dcgmStartEmbedded(dcgm_structs.DCGM_OPERATION_MODE_AUTO)
g = dcgm_agent.dcgmGroupCreate(h, dcgm_structs.DCGM_GROUP_DEFAULT, "all")
t("wrong_type_list", lambda: dcgm_agent.dcgmGetGpuStatus(h, [0]))
t("wrong_type_float", lambda: dcgm_agent.dcgmGetGpuStatus(h, 0.5))
t("name_as_int", lambda: dcgm_agent.dcgmGroupCreate(h, 0, 123))
t("callback_as_int", lambda: dcgm_agent.dcgmGetLatestValues(h, g, 1, 77, None))
t("status_unknown", lambda: dcgm_agent.dcgmStatusGetCount(123456))
t("struct_too_small", lambda: dcgm_agent.dcgmPolicySet(h, g, dcgm_structs.c_dcgmGroupEntityPair_t(), None))
t("version_checked_here", lambda: dcgm_agent.dcgmGetDeviceAttributes(h, 0, version=5))
p = dcgm_structs.c_dcgmPolicy_v1(); p.version = 7
t("version_checked_by_library", lambda: dcgm_agent.dcgmPolicySet(h, g, p, None))
t("unknown_gpu", lambda: dcgm_agent.dcgmGetDeviceTopology(h, 999))
t("unknown_group", lambda: dcgm_agent.dcgmGroupGetInfo(h, 12345))
dcgm_agent.dcgmStopEmbedded(h)
t("stopped_handle", lambda: dcgm_agent.dcgmGetAllDevices(h))
dcgm_agent.dcgmShutdown()
t("after_shutdown", lambda: dcgm_agent.dcgmGroupCreate(h, 0, "late"))
t("after_shutdown_values", lambda: dcgm_agent.dcgmEntitiesGetLatestValues(h, [(1, 0)], [150], 0))
print(json.dumps(res))
"""

BAD_INPUT_EXPECTED = {
    "wrong_type_list": "ArgumentError",
    "wrong_type_float": "ArgumentError",
    "name_as_int": "ArgumentError",
    "callback_as_int": "ArgumentError",
    "status_unknown": "DCGMError_Badparam",
    "struct_too_small": "TypeError",
    "version_checked_here": "DCGMError_VerMismatch",
    "version_checked_by_library": "DCGMError_VerMismatch",
    "unknown_gpu": None,  # the library's answer (checked against NVIDIA's by the battery)
    "unknown_group": "DCGMError_NotConfigured",
    "stopped_handle": "DCGMError_Uninitialized",
    "after_shutdown": "DCGMError_Uninitialized",
    "after_shutdown_values": "DCGMError_Uninitialized",
}


@pytest.mark.parametrize("library", ["sim", "real"])
def test_bad_input_raises_and_never_crashes(library: str) -> None:
    got = json.loads(run_python(BAD_INPUT, bindings="ours", library=library).stdout.strip().splitlines()[-1])
    for name, want in BAD_INPUT_EXPECTED.items():
        assert got[name] != "ok", name
        if want is not None:
            assert got[name] == want, (name, got[name])


POLICY_RAISES = r"""
import ctypes, json, sys, time
from dcgm.compat import dcgm_agent, dcgm_structs
calls = []
reported = []
sys.unraisablehook = lambda u: reported.append(type(u.exc_value).__name__)
def on_violation(resp, user):
    calls.append(resp.contents.condition)
    raise RuntimeError("a callback that fails")
CB = ctypes.CFUNCTYPE(None, ctypes.POINTER(dcgm_structs.c_dcgmPolicyCallbackResponse_v2), ctypes.c_uint64)
dcgm_agent.dcgmInit()
h = dcgm_agent.dcgmStartEmbedded(dcgm_structs.DCGM_OPERATION_MODE_AUTO)
g = dcgm_agent.dcgmGroupCreate(h, dcgm_structs.DCGM_GROUP_DEFAULT, "all")
p = dcgm_structs.c_dcgmPolicy_v1(); p.version = dcgm_structs.dcgmPolicy_version1
p.condition = dcgm_structs.DCGM_POLICY_COND_XID
p.parms[dcgm_structs.DCGM_POLICY_COND_IDX_XID].tag = 0
p.parms[dcgm_structs.DCGM_POLICY_COND_IDX_XID].val.boolean = True
dcgm_agent.dcgmPolicySet(h, g, p, None)
dcgm_agent.dcgmPolicyRegister_v2(h, g, dcgm_structs.DCGM_POLICY_COND_XID, CB(on_violation), None)  # kept alive by dcgm_agent
end = time.monotonic() + 10
while len(calls) < 3 and time.monotonic() < end:
    time.sleep(0.05)
dcgm_agent.dcgmPolicyUnregister(h, g, dcgm_structs.DCGM_POLICY_COND_XID)
dcgm_agent.dcgmStopEmbedded(h); dcgm_agent.dcgmShutdown()
print(json.dumps({"calls": calls, "reported": reported}))
"""

XIDS = {
    "events": [
        {"at_ms": 200, "gpu": 0, "kind": "xid", "value": 31},
        {"at_ms": 300, "gpu": 1, "kind": "xid", "value": 43},
        {"at_ms": 400, "gpu": 2, "kind": "xid", "value": 79},
    ]
}


def test_policy_callback_that_raises_is_reported_and_later_ones_arrive() -> None:
    out = json.loads(run_python(POLICY_RAISES, bindings="ours", library="sim", sim_config=XIDS).stdout.strip().splitlines()[-1])
    assert len(out["calls"]) == 3, out  # every violation reached the callback, after it raised
    assert set(out["calls"]) == {64}  # DCGM_POLICY_COND_XID
    assert out["reported"] == ["RuntimeError"] * 3


INTERNAL = r"""
import json
from dcgm.compat import dcgm_agent, dcgm_structs, dcgm_agent_internal, dcgm_structs_internal as si
dcgm_agent.dcgmInit()
h = dcgm_agent.dcgmStartEmbedded(dcgm_structs.DCGM_OPERATION_MODE_MANUAL)
before = dcgm_agent.dcgmGetAllDevices(h)
cfe = si.c_dcgmCreateFakeEntities_v2()
cfe.numToCreate = 2
for i in range(2):
    cfe.entityList[i].entity.entityGroupId = 1
back = dcgm_agent_internal.dcgmCreateFakeEntities(h, cfe)
new = [cfe.entityList[i].entity.entityId for i in range(2)]
v = si.c_dcgmInjectFieldValue_v1()
v.version = si.dcgmInjectFieldValue_version1
v.fieldId = 150; v.fieldType = ord("i"); v.ts = 0; v.value.i64 = 71
r1 = dcgm_agent_internal.dcgmInjectFieldValue(h, new[0], v)
v.value.i64 = 72
r2 = dcgm_agent_internal.dcgmInjectEntityFieldValue(h, 1, new[1], v)
read = [x.value.i64 for x in dcgm_agent.dcgmEntitiesGetLatestValues(h, [(1, new[0]), (1, new[1])], [150], 0)]
r3 = dcgm_agent_internal.dcgmEmptyCache(h)
after = [x.status for x in dcgm_agent.dcgmEntitiesGetLatestValues(h, [(1, new[0])], [150], 0)]
err = None
try:
    dcgm_agent_internal.dcgmInjectFieldValue(h, 9999, v)
except dcgm_structs.DCGMError as e:
    err = type(e).__name__
dcgm_agent.dcgmStopEmbedded(h); dcgm_agent.dcgmShutdown()
print(json.dumps({"before": before, "new": new, "same": back is cfe, "rc": [r1, r2, r3], "read": read, "after": after, "err": err}))
"""


@pytest.mark.parametrize("library", ["sim", "real"])
def test_agent_internal_fake_entities_injection_and_cache(library: str) -> None:
    out = json.loads(run_python(INTERNAL, bindings="ours", library=library).stdout.strip().splitlines()[-1])
    assert out["same"] and out["rc"] == [0, 0, 0]
    assert len(out["new"]) == 2 and not set(out["new"]) & set(out["before"])
    assert out["read"] == [71, 72]
    assert out["after"] != [0]  # the cache was emptied
    assert out["err"] is not None and out["err"].startswith("DCGMError_")


def test_agent_internal_names_and_argument_orders() -> None:
    from dcgm.compat import dcgm_agent_internal as ai

    # NVIDIA's dcgm_agent_internal (DCGM's testing/python3), the functions libdcgm 4.6 exports
    want = {
        "dcgmCreateFakeEntities": ["dcgmHandle", "cfe"],
        "dcgmInjectFieldValue": ["dcgmHandle", "gpuId", "value"],
        "dcgmInjectEntityFieldValue": ["dcgmHandle", "entityGroupId", "entityId", "value"],
        "dcgmEmptyCache": ["dcgmHandle"],
        "dcgmGetLatestValuesForFields": ["dcgmHandle", "gpuId", "fieldIds"],
        "dcgmGetMultipleValuesForField": ["dcgmHandle", "gpuId", "fieldId", "maxCount", "startTs", "endTs", "order"],
        "dcgmWatchFieldValue": ["dcgmHandle", "gpuId", "fieldId", "updateFreq", "maxKeepAge", "maxKeepEntries"],
        "dcgmUnwatchFieldValue": ["dcgmHandle", "gpuId", "fieldId", "clearCache"],
        "dcgmInjectEntityFieldValueToNvml": ["dcgmHandle", "entityGroupId", "entityId", "value"],
        "dcgmCreateNvmlInjectionGpu": ["dcgmHandle", "index"],
        "dcgmInjectNvmlDevice": ["dcgmHandle", "gpuId", "key", "extraKeys", "extraKeyCount", "injectNvmlRet"],
        "dcgmInjectNvmlDeviceForFollowingCalls": [
            "dcgmHandle", "gpuId", "key", "extraKeys", "extraKeyCount", "injectNvmlRets", "retCount",
        ],
        "dcgmGetNvmlInjectFuncCallCount": ["dcgmHandle", "funcCallInfo"],
        "dcgmResetNvmlInjectFuncCallCount": ["dcgmHandle"],
        "dcgmRemoveNvmlInjectedGpu": ["dcgmHandle", "uuid"],
        "dcgmInjectedNvmlDeviceReset": ["dcgmHandle", "gpuId"],
        "dcgmRestoreNvmlInjectedGpu": ["dcgmHandle", "uuid"],
        "dcgmSetEntityNvLinkLinkState": ["dcgmHandle", "entityGroupId", "entityId", "linkId", "linkState"],
        "dcgmGetCacheManagerFieldInfo": ["dcgmHandle", "entityId", "entityGroupId", "fieldId"],
        "dcgmGetFieldValuesSince": ["dcgmHandle", "groupId", "sinceTimestamp", "fieldIds", "enumCB", "userData"],
        "dcgmStopDiagnostic": ["dcgm_handle"],
        "dcgmPauseTelemetryForDiag": ["dcgmHandle"],
        "dcgmResumeTelemetryForDiag": ["dcgmHandle"],
        "dcgmNvswitchGetBackend": ["dcgmHandle"],
        "dcgmMarkModulesReloadable": ["dcgmHandle", "moduleMask"],
    }
    for name, params in want.items():
        assert list(inspect.signature(getattr(ai, name)).parameters) == params, name
    assert ai.DCGM_EMBEDDED_HANDLE.value == 0x7FFFFFFF


def test_str_arguments_reach_c_as_bytes() -> None:
    from dcgm.compat import dcgm_agent

    @dcgm_agent.ensure_byte_strings()
    def f(*args: Any, **kwargs: Any) -> Any:
        return args, kwargs

    assert f("a", 1, b="c", d=2) == ((b"a", 1), {"b": b"c", "d": 2})
    assert f.__name__ == "f"
    assert inspect.unwrap(dcgm_agent.dcgmGroupCreate).__name__ == "dcgmGroupCreate"


def test_module_doc_lists_the_differences() -> None:
    from dcgm.compat import dcgm_agent

    doc = dcgm_agent.__doc__ or ""
    for phrase in ("dcgmInit", "three arguments", "ArgumentError", "dcgmPolicyRegister_v2"):
        assert phrase in doc, phrase
    assert Path(dcgm_agent.__file__).parent.parts[-2:] == ("dcgm", "compat")


BLANKS = r"""
import json
from dcgm.compat import dcgm_agent, dcgm_structs
dcgm_agent.dcgmInit()
h = dcgm_agent.dcgmStartEmbedded(dcgm_structs.DCGM_OPERATION_MODE_AUTO)
g = dcgm_agent.dcgmGroupCreate(h, dcgm_structs.DCGM_GROUP_DEFAULT, "all")
fg = dcgm_agent.dcgmFieldGroupCreate(h, [150, 203, 155, 50], "blanks")
dcgm_agent.dcgmWatchFields(h, g, fg, 1000000, 0, 0)
dcgm_agent.dcgmUpdateAllFields(h, 1)
values, n = dcgm_agent.dcgmGetLatestValues(h, g, fg)
print(json.dumps([[v.gpuId, v.fieldId, v.fieldType, v.value, v.blank and v.blank.name] for v in values if v.gpuId == 0]))
dcgm_agent.dcgmStopEmbedded(h); dcgm_agent.dcgmShutdown()
"""


def test_three_argument_form_shows_sentinels_as_blank() -> None:
    cfg = {"faults": {"blank_fields": [203], "unsupported_fields": [150]}}
    rows = json.loads(run_python(BLANKS, bindings="ours", library="sim", sim_config=cfg).stdout.strip().splitlines()[-1])
    by_field = {r[1]: r for r in rows}
    assert by_field[150][3:] == [None, "NOT_SUPPORTED"]
    assert by_field[203][3:] == [None, "BLANK"]
    assert by_field[155][2] == "d" and isinstance(by_field[155][3], float) and by_field[155][4] is None
    assert by_field[50][2] == "s" and by_field[50][3].startswith("NVIDIA") and by_field[50][4] is None
