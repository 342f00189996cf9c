"""``dcgm.compat``'s ``dcgm_fields``, ``dcgm_fields_internal``, ``dcgm_fields_collectd`` and
``dcgm_errors`` against NVIDIA's 4.6 modules (read in subprocesses): names, values, the
deprecated-name resolver, the field-metadata functions on the simulator and from the
package's table, the collectd table and helpers, the failure-reason look-ups; and the
``DCGM_FI_DEV_MEM_USED`` error."""

from __future__ import annotations

import contextlib
import io
import json
import warnings
from typing import Any, Dict

import pytest

from conftest import nvidia_bindings, run_python

from dcgm.compat import dcgm_errors, dcgm_fields, dcgm_fields_collectd, dcgm_fields_internal

#: ids whose metadata is compared (every kind of field: strings, ints, doubles, blobs, global,
#: NvSwitch, CPU, profiling, a pre-4.6 alias id and one that does not exist)
SAMPLE_IDS = [1, 2, 50, 54, 100, 112, 150, 155, 203, 204, 252, 253, 700, 780, 1001, 1100, 1421, 9999]
SAMPLE_TAGS = ["gpu_temp", "fb_used", "brand", "no_such_tag"]
COLLECTD_NAMES = ["sm_clock", "gpu_temp", "150", "155", "1", "no_such"]

_DUMP = r'''
import contextlib, ctypes, io, json, sys, warnings
{imports}

def plain(module):
    return {{n: [type(v).__name__, v] for n, v in vars(module).items()
            if not n.startswith("__") and isinstance(v, (int, float, str)) and not isinstance(v, bool)}}

def meta(m):
    if m is None:
        return None
    f = m.valueFormat.contents
    return [m.fieldId, m.fieldType, m.size, m.tag, m.scope, m.nvmlFieldId, m.entityLevel,
            f.shortName, f.unit, f.width]

out = {{"names": {{}}, "plain": {{}}}}
for name, module in (("fields", dcgm_fields), ("internal", dcgm_fields_internal),
                     ("collectd", dcgm_fields_collectd), ("errors", dcgm_errors)):
    out["names"][name] = sorted(n for n in dir(module) if not n.startswith("__"))
    out["plain"][name] = plain(module)
out["aliases"] = dcgm_fields._DEPRECATED_ALIASES
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    out["alias_value"] = dcgm_fields.DCGM_FI_DEV_GPU_TEMP
    out["alias_warning"] = [str(w[0].message), w[0].category.__name__]
dcgm_fields.DCGM_DEPRECATED = 0
try:
    dcgm_fields.DCGM_FI_DEV_GPU_TEMP
    out["alias_off"] = None
except AttributeError as e:
    out["alias_off"] = str(e)
dcgm_fields.DCGM_DEPRECATED = 1
out["collectd"] = [[k, v and [v.name, v.kind, v.used]] for k, v in dcgm_fields_collectd.CollectdMetadataDict.items()]
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    dcgm_fields_collectd.GenerateCollectdTypesDB()
out["typesdb"] = buf.getvalue()
out["by_name"] = [dcgm_fields_collectd.GetFieldByName(n) for n in {names}]
dcgm_structs._dcgmInit()
out["by_id"] = [meta(dcgm_fields.DcgmFieldGetById(i)) for i in {ids}]
out["by_tag"] = [meta(dcgm_fields.DcgmFieldGetByTag(t)) for t in {tags}]
out["tag_by_id"] = [dcgm_fields.DcgmFieldGetTagById(i) for i in {ids}]
out["id_by_tag"] = [dcgm_fields.DcgmFieldGetIdByTag(t) for t in {tags}]
out["errors"] = [[dcgm_errors.dcgmErrorGetPriorityByCode(c), dcgm_errors.dcgmErrorGetCategoryByCode(c)]
                 for c in range(0, 140)]
print(json.dumps(out))
'''

_NVIDIA_IMPORTS = "import dcgm_structs, dcgm_fields, dcgm_fields_internal, dcgm_fields_collectd, dcgm_errors"
_OUR_IMPORTS = (
    "from dcgm.compat import dcgm_structs, dcgm_fields, dcgm_fields_internal, "
    "dcgm_fields_collectd, dcgm_errors"
)


def _dump(imports: str) -> str:
    return _DUMP.format(imports=imports, names=COLLECTD_NAMES, ids=SAMPLE_IDS, tags=SAMPLE_TAGS)


@pytest.fixture(scope="module")
def oracle() -> Dict[str, Any]:
    nvidia_bindings()
    return json.loads(run_python(_dump(_NVIDIA_IMPORTS), bindings="nvidia", library="sim").stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def ours() -> Dict[str, Any]:
    return json.loads(run_python(_dump(_OUR_IMPORTS), bindings="ours", library="sim").stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("module", ["fields", "internal", "collectd", "errors"])
def test_every_public_name_of_nvidias_module_is_provided(oracle: Dict[str, Any], ours: Dict[str, Any], module: str) -> None:
    missing = set(oracle["names"][module]) - set(ours["names"][module])
    if module == "errors":
        # NVIDIA's composite help texts (no library counterpart); the per-reason _MSG/_NEXT
        # texts are the library's, listed by the module's __dir__.
        missing -= {"BUG_REPORT_MSG", "DEBUG_COOLING_MSG", "TRIAGE_RUN_FIELD_DIAG_MSG"}
    assert sorted(missing) == []


@pytest.mark.parametrize("module", ["fields", "internal", "collectd", "errors"])
def test_every_constant_equals_nvidias(oracle: Dict[str, Any], ours: Dict[str, Any], module: str) -> None:
    theirs = oracle["plain"][module]
    mine = ours["plain"][module]
    if module == "errors":
        theirs = {k: v for k, v in theirs.items() if v[0] != "str"}  # texts: the library's
    if "DCGM_FI_MAX_FIELDS" in theirs:
        # The one deliberate difference: our names also hold DCGM 4.6.1's base-unit fields
        # (1600-1612), so the bound is 4.6.1's (1613), where NVIDIA's 4.6.0 modules have 1534.
        theirs = dict(theirs)
        assert theirs.pop("DCGM_FI_MAX_FIELDS") == ["int", 1534]
        assert mine["DCGM_FI_MAX_FIELDS"] == ["int", 1613]
        assert mine["DCGM_FI_DEV_SM_CLOCK_HERTZ"] == ["int", 1603]
    differ = {k: (v, mine.get(k)) for k, v in theirs.items() if mine.get(k) != v}
    assert differ == {}


def test_deprecated_names_resolve_as_nvidias(oracle: Dict[str, Any], ours: Dict[str, Any]) -> None:
    assert ours["aliases"] == oracle["aliases"]
    for key in ("alias_value", "alias_warning", "alias_off"):
        assert ours[key] == oracle[key]


def test_field_metadata_from_the_library_is_nvidias(oracle: Dict[str, Any], ours: Dict[str, Any]) -> None:
    for key in ("by_id", "by_tag", "tag_by_id", "id_by_tag"):
        assert ours[key] == oracle[key], key


def test_field_metadata_without_a_library_comes_from_the_package_table(oracle: Dict[str, Any]) -> None:
    from dcgm.compat import dcgm_structs

    if dcgm_structs.dcgmLib is not None:
        pytest.skip("a library is open in this process")
    for fid, theirs in zip(SAMPLE_IDS, oracle["by_id"]):
        m = dcgm_fields.DcgmFieldGetById(fid)
        if theirs is None:
            assert m is None
            continue
        f = m.valueFormat.contents
        mine = [m.fieldId, m.fieldType, m.size, m.tag, m.scope, m.nvmlFieldId, m.entityLevel, f.shortName, f.unit, f.width]
        # the NVML field id is the library's (the package's table does not carry all of them)
        assert mine[:5] + mine[6:] == theirs[:5] + theirs[6:], fid


def test_collectd_table_and_helpers_are_nvidias(oracle: Dict[str, Any], ours: Dict[str, Any]) -> None:
    assert ours["collectd"] == oracle["collectd"]
    assert ours["typesdb"] == oracle["typesdb"]
    assert ours["by_name"] == oracle["by_name"]


def test_failure_reason_lookups_are_the_librarys(oracle: Dict[str, Any], ours: Dict[str, Any]) -> None:
    assert ours["errors"] == oracle["errors"]


def test_a_field_name_dcgm_lacks_raises_attribute_error_naming_fb_used() -> None:
    with pytest.raises(AttributeError) as info:
        dcgm_fields.DCGM_FI_DEV_MEM_USED  # noqa: B018
    assert "DCGM_FI_DEV_MEM_USED" in str(info.value) and "DCGM_FI_DEV_FB_USED" in str(info.value)
    assert not hasattr(dcgm_fields, "DCGM_FI_DEV_MEM_USED")
    with pytest.raises(AttributeError, match="has no attribute 'DCGM_FI_NO_SUCH'"):
        dcgm_fields.DCGM_FI_NO_SUCH  # noqa: B018


def test_current_names_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dcgm_fields.DCGM_FI_DEV_FB_USED == 252
        assert dcgm_fields_internal.DCGM_FI_DEV_COMPUTE_PIDS == 221
        assert dcgm_fields.DCGM_FI_DEV_CLOCK_THROTTLE_REASONS == dcgm_fields.DCGM_FI_DEV_CLOCKS_EVENT_REASONS


def test_collectd_module_reexports_the_field_modules() -> None:
    assert dcgm_fields_collectd.DCGM_FI_DEV_FB_USED == 252
    assert dcgm_fields_collectd.DCGM_FI_DEV_GPU_UTIL_SAMPLES == 211
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        dcgm_fields_collectd.GenerateCollectdTypesDB()
    assert "sm_clock" in out.getvalue()


def test_reason_texts_need_the_library_and_say_so() -> None:
    from dcgm.compat import dcgm_structs

    if dcgm_structs.dcgmLib is not None:
        pytest.skip("a library is open in this process")
    with pytest.raises(AttributeError, match="dcgmInit"):
        dcgm_errors.DCGM_FR_XID_ERROR_MSG  # noqa: B018
    assert "DCGM_FR_XID_ERROR_MSG" in dir(dcgm_errors)


def test_reason_texts_come_from_the_library() -> None:
    code = r"""
from dcgm.compat import dcgm_structs, dcgm_errors
dcgm_structs._dcgmInit()
print(dcgm_errors.DCGM_FR_VOLATILE_DBE_DETECTED_MSG == dcgm_errors.dcgmErrorGetFormatMsgByCode(dcgm_errors.DCGM_FR_VOLATILE_DBE_DETECTED))
print(isinstance(dcgm_errors.DCGM_FR_VOLATILE_DBE_DETECTED_NEXT, str))
"""
    assert run_python(code, bindings="ours", library="sim").stdout.split() == ["True", "True"]


def test_field_metadata_and_reason_lookups_match_nvidias_on_the_real_library() -> None:
    nvidia_bindings()
    theirs = json.loads(run_python(_dump(_NVIDIA_IMPORTS), bindings="nvidia", library="real").stdout)
    mine = json.loads(run_python(_dump(_OUR_IMPORTS), bindings="ours", library="real").stdout)
    for key in ("by_id", "by_tag", "tag_by_id", "id_by_tag", "errors"):
        assert mine[key] == theirs[key], key
