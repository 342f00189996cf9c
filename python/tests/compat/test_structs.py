"""``dcgm.compat.dcgm_structs`` against NVIDIA's 4.6 ``dcgm_structs`` (the oracle, read in a
subprocess so that the two bindings never meet in one process) and against dcgm-sys's layout
table: every public name, constant and version word, every class's field names, field types,
nested types, size and offsets; and the blank sentinels the structures print as ``N/A``."""

from __future__ import annotations

import ctypes
import json
import timeit
from typing import Any, Dict

import pytest

from conftest import nvidia_bindings, run_python

from dcgm.compat import _layout, dcgm_structs, dcgm_structs_internal

#: A description of a binding module: public names, plain constants, ctypes classes.
DESCRIBE = r'''
import ctypes, json, sys

def tdesc(t):
    if isinstance(t, type) and issubclass(t, ctypes.Array):
        return "%s*%d" % (tdesc(t._type_), t._length_)
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        return "P:" + tdesc(t._type_)
    if isinstance(t, type) and issubclass(t, (ctypes.Structure, ctypes.Union)):
        return "S:" + t.__qualname__
    return t.__name__

def describe(module):
    out = {"names": [], "constants": {}, "classes": {}}
    for name in dir(module):
        if name.startswith("__"):
            continue
        out["names"].append(name)
        v = getattr(module, name)
        if isinstance(v, (int, float, str)) and not isinstance(v, bool):
            out["constants"][name] = [type(v).__name__, v]
        elif (isinstance(v, type) and issubclass(v, (ctypes.Structure, ctypes.Union))
              and "_fields_" in vars(v)):
            out["classes"][name] = {
                "union": issubclass(v, ctypes.Union),
                "size": ctypes.sizeof(v),
                "qualname": v.__qualname__,
                "fields": [[f[0], tdesc(f[1]), getattr(v, f[0]).offset]
                           for f in v._fields_ if not f[0].startswith("_align_")],
            }
    return out
'''

_ORACLE = DESCRIBE + r'''
import dcgm_structs
print(json.dumps(describe(dcgm_structs)))
'''

#: NVIDIA's classes whose layout is deliberately the C one, not NVIDIA's (python/README.md).
LAYOUT_DIFFERENCES = {
    # NVIDIA's ctypes class is 6 bytes (three plain members); the C union is 4 (bit fields).
    "c_dcgm_link_t",
}


def _describe(module: Any) -> Dict[str, Any]:
    scope: Dict[str, Any] = {}
    exec(DESCRIBE, scope)  # noqa: S102 (the test's own description code)
    return scope["describe"](module)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def oracle() -> Dict[str, Any]:
    nvidia_bindings()
    proc = run_python(_ORACLE, bindings="nvidia", library="sim")
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def ours() -> Dict[str, Any]:
    return _describe(dcgm_structs)


def test_layout_table_and_ctypes_classes_agree() -> None:
    assert _layout.check() == []


def test_every_public_name_of_nvidias_module_is_provided(oracle: Dict[str, Any], ours: Dict[str, Any]) -> None:
    missing = sorted(set(oracle["names"]) - set(ours["names"]))
    assert missing == []


def test_constants_and_version_words_equal_nvidias(oracle: Dict[str, Any], ours: Dict[str, Any]) -> None:
    differ = {
        name: (value, ours["constants"].get(name))
        for name, value in oracle["constants"].items()
        if ours["constants"].get(name) != value
    }
    assert differ == {}
    versions = [n for n in oracle["constants"] if "_version" in n]
    assert len(versions) > 100


def test_every_class_has_nvidias_fields_sizes_offsets_and_nested_types(
    oracle: Dict[str, Any], ours: Dict[str, Any]
) -> None:
    problems = []
    for name, theirs in oracle["classes"].items():
        if name in LAYOUT_DIFFERENCES:
            continue
        mine = ours["classes"].get(name)
        if mine is None:
            problems.append("%s: missing" % name)
            continue
        for key in ("union", "size", "qualname", "fields"):
            if mine[key] != theirs[key]:
                problems.append("%s.%s: NVIDIA %r, ours %r" % (name, key, theirs[key], mine[key]))
    assert problems == []
    assert len(oracle["classes"]) > 100


def test_link_id_keeps_the_c_layout_with_nvidias_field_names() -> None:
    link = dcgm_structs.c_dcgm_link_t()
    assert ctypes.sizeof(link) == 4  # the C size; NVIDIA's class is 6 bytes
    assert [f[0] for f in link._fields_] == ["type", "index", "id"]
    link.raw = (2 << 24) | (5 << 8) | dcgm_structs.DCGM_FE_GPU
    assert (link.type, link.index, link.id) == (dcgm_structs.DCGM_FE_GPU, 5, 2)
    assert ctypes.c_uint32.from_buffer(link).value == link.raw


def test_nested_union_classes_are_attributes_of_their_owner() -> None:
    assert dcgm_structs.c_dcgmPolicyCallbackResponse_v2.Value.__qualname__ == "c_dcgmPolicyCallbackResponse_v2.Value"
    assert dcgm_structs.c_dcgmSummaryResponse_t.ResponseValue.__name__ == "ResponseValue"
    assert not hasattr(dcgm_structs, "Value")


def test_text_fields_read_and_accept_str() -> None:
    a = dcgm_structs.c_dcgmDeviceAttributes_v3()
    a.identifiers.deviceName = "NVIDIA H200"
    assert a.identifiers.deviceName == "NVIDIA H200"
    assert isinstance(a.identifiers.deviceName, str)


def test_handle_fields_read_as_none_when_zero_like_nvidias() -> None:
    assert dcgm_structs.c_dcgmFieldGroupInfo_v1().fieldGroupId is None
    assert dcgm_structs.c_dcgmRunDiag_v10().groupId is None


# ---- blank sentinels


def test_int32_sentinel_in_a_struct_field_prints_na_and_equals_the_number() -> None:
    config = dcgm_structs.c_dcgmDeviceConfig_v2()
    config.mPerfState.syncBoost = 2147483634
    value = config.mPerfState.syncBoost
    assert value == 2147483634 == dcgm_structs.DCGM_INT32_NOT_SUPPORTED
    assert str(value) == "N/A" and "%s" % value == "N/A" and "{}".format(value) == "N/A"
    assert "%d" % value == "2147483634" and "{:d}".format(value) == "2147483634"
    assert repr(value) == "2147483634"
    assert json.dumps(value) == "2147483634"
    assert value + 1 == 2147483635 and hash(value) == hash(2147483634)
    assert value.blank_name == "DCGM_INT32_NOT_SUPPORTED"
    assert "syncBoost: N/A" in str(config.mPerfState)


def test_every_width_of_sentinel_is_recognised_where_the_width_matches() -> None:
    s = dcgm_structs.c_dcgmStatSummaryInt64_t()
    s.average = dcgm_structs.DCGM_INT64_BLANK
    assert str(s.average) == "N/A"
    f = dcgm_structs.c_dcgmStatSummaryFp64_t()
    f.maxValue = dcgm_structs.DCGM_FP64_NOT_FOUND
    assert str(f.maxValue) == "N/A" and f.maxValue == dcgm_structs.DCGM_FP64_NOT_FOUND
    i = dcgm_structs.c_dcgmDeviceIdentifiers_v1()
    i.serial = dcgm_structs.DCGM_STR_NOT_SUPPORTED
    assert str(i.serial) == "N/A" and i.serial == "<<<NOT_SUPPORTED>>>"
    v = dcgm_structs.c_dcgmFieldValue_v1()
    v.value.i64 = dcgm_structs.DCGM_INT64_NOT_PERMISSIONED
    assert str(v.value.i64) == "N/A"
    # an int32 sentinel in a 64-bit field is a real number there
    s.average = dcgm_structs.DCGM_INT32_BLANK
    assert str(s.average) == str(dcgm_structs.DCGM_INT32_BLANK)


def test_ids_versions_counts_and_masks_are_never_blanked() -> None:
    c = dcgm_structs.c_dcgmDeviceConfig_v2()
    c.gpuId = dcgm_structs.DCGM_INT32_BLANK
    c.version = dcgm_structs.DCGM_INT32_NOT_FOUND
    assert type(c.gpuId) is int and type(c.version) is int
    g = dcgm_structs.c_dcgmGroupInfo_v3()
    g.count = dcgm_structs.DCGM_INT32_BLANK
    assert type(g.count) is int
    w = dcgm_structs.c_dcgmDeviceWorkloadPowerProfilesStatus_v1()
    assert "mProfileMask" not in type(w)._blank_
    assert all(not _layout._NOT_BLANK.match(n) for cls in _layout.all_classes().values() for n in cls._blank_)


def test_attribute_reads_stay_fast() -> None:
    c = dcgm_structs.c_dcgmDeviceConfig_v2()
    c.mPerfState.syncBoost = 2147483634
    perf = c.mPerfState
    n = 20000
    plain = min(timeit.repeat("c.gpuId", globals={"c": c}, number=n, repeat=3)) / n
    blank = min(timeit.repeat("p.syncBoost", globals={"p": perf}, number=n, repeat=3)) / n
    print("read of an int field: %.0f ns, of a sentinel field: %.0f ns" % (plain * 1e9, blank * 1e9))
    assert plain < 5e-6 and blank < 10e-6


# ---- the rest of the module


def test_dcgm_fi_ids_are_reachable_from_dcgm_structs() -> None:
    assert dcgm_structs.DCGM_FI_DEV_FB_USED == 252
    assert dcgm_structs.DCGM_FI_DEV_GPU_TEMP_CELSIUS == 150


def test_a_field_name_dcgm_lacks_names_the_one_to_use() -> None:
    with pytest.raises(AttributeError, match="DCGM_FI_DEV_FB_USED"):
        dcgm_structs.DCGM_FI_DEV_MEM_USED  # noqa: B018


def test_error_classes_as_nvidias() -> None:
    assert dcgm_structs.dcgmExceptionClass(0) is dcgm_structs.DCGMError_Ok
    assert dcgm_structs.dcgmExceptionClass(dcgm_structs.DCGM_ST_BADPARAM) is dcgm_structs.DCGMError_Badparam
    assert dcgm_structs.dcgmExceptionClass(-12345) is None
    assert isinstance(dcgm_structs.DCGMError(dcgm_structs.DCGM_ST_NO_DATA), dcgm_structs.DCGMError_NoData)


def test_json_encoder_handles_structures_arrays_and_blanks() -> None:
    c = dcgm_structs.c_dcgmDeviceConfig_v2()
    c.gpuId = 3
    c.mPerfState.syncBoost = dcgm_structs.DCGM_INT32_NOT_SUPPORTED
    doc = json.loads(json.dumps(c, cls=dcgm_structs.DcgmJSONEncoder))
    assert doc["gpuId"] == 3
    assert doc["mPerfState"]["syncBoost"] == dcgm_structs.DCGM_INT32_NOT_SUPPORTED
    assert doc["mWorkloadPowerProfiles"] == [0] * 8
    arr = (dcgm_structs.c_dcgmGroupEntityPair_t * 2)()
    assert json.loads(json.dumps(arr, cls=dcgm_structs.DcgmJSONEncoder)) == [
        {"entityGroupId": 0, "entityId": 0}
    ] * 2


def test_wrapped_structure_decodes_text_and_encodes_on_set() -> None:
    s = dcgm_structs.c_dcgmDeviceIdentifiers_v1()
    w = dcgm_structs._WrappedStructure(s)
    w.uuid = "GPU-1"
    assert s.uuid == "GPU-1" and w.uuid == "GPU-1"


def test_structs_internal_classes_are_the_c_layouts() -> None:
    inject = dcgm_structs_internal.c_dcgmInjectFieldValue_v1
    assert ctypes.sizeof(inject) == ctypes.sizeof(dcgm_structs.c_dcgmFieldValue_v1)
    assert dcgm_structs_internal.dcgmInjectFieldValue_version1 == _layout.make_dcgm_version(inject, 1)
    assert [f[0] for f in inject._fields_] == ["version", "fieldId", "fieldType", "status", "ts", "value"]
    fake = dcgm_structs_internal.c_dcgmCreateFakeEntities_v2()
    assert len(fake.entityList) == dcgm_structs_internal.DCGM_MAX_HIERARCHY_INFO
    assert dcgm_structs_internal.dcgmCreateFakeEntities_version2 == _layout.make_dcgm_version(fake, 2)
    info = dcgm_structs_internal.c_dcgmCacheManagerFieldInfo_v4
    assert dcgm_structs_internal.dcgmCacheManagerFieldInfo_version4 == _layout.make_dcgm_version(info, 4)


_SYNC_BOOST = r"""
from ctypes import byref, c_void_p
from dcgm.compat import dcgm_structs as s
s._dcgmInit()
fp = s._dcgmGetFunctionPointer
assert fp("dcgmInit")() == 0
h = c_void_p()
assert fp("dcgmStartEmbedded")(s.DCGM_OPERATION_MODE_MANUAL, byref(h)) == 0
fp("dcgmUpdateAllFields")(h, 1)
cfg = (s.c_dcgmDeviceConfig_v2 * 1)()
cfg[0].version = s.dcgmDeviceConfig_version2
assert fp("dcgmConfigGet")(h, s.DCGM_GROUP_ALL_GPUS, s.DCGM_CONFIG_CURRENT_STATE, 1, cfg, None) == 0
value = cfg[0].mPerfState.syncBoost
print("Sync Boost : %s" % value, int(value), value == s.DCGM_INT32_NOT_SUPPORTED)
fp("dcgmStopEmbedded")(h)
fp("dcgmShutdown")()
"""


def test_the_real_librarys_sync_boost_sentinel_prints_na() -> None:
    """The H200's sync boost is DCGM_INT32_NOT_SUPPORTED, which NVIDIA's dcgm_example.py
    prints as 2147483634."""
    out = run_python(_SYNC_BOOST, bindings="ours", library="real").stdout
    assert "Sync Boost : N/A 2147483634 True" in out


def test_int_fields_accept_what_int_takes_like_nvidias() -> None:
    c = dcgm_structs.c_dcgmDeviceConfig_v2()
    c.gpuId = "5"
    c.mEccMode = 1.9
    assert (c.gpuId, c.mEccMode) == (5, 1)
