"""``dcgm.compat.dcgmvalue`` against NVIDIA's 4.6 ``dcgmvalue`` (read in a subprocess): the
same names and sentinel values, the same answers for real values, and the documented
improvement for blanks (every width recognised, printed as ``N/A``)."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

from conftest import nvidia_bindings, run_python

from dcgm.compat import dcgm_structs, dcgmvalue

#: values that are not blank in any width
NORMAL: List[Any] = [0, 1, -5, 100, 2**31 - 17, 2**40, 3.5, 0.0, -1.25, 1e12, "H200", "", "<<<x", "a>>>", None]
#: values NVIDIA's DcgmValue already counts as blank
NVIDIA_BLANKS: List[Any] = [
    dcgmvalue.DCGM_INT64_BLANK, dcgmvalue.DCGM_INT64_NOT_FOUND, dcgmvalue.DCGM_INT64_NOT_SUPPORTED,
    dcgmvalue.DCGM_INT64_NOT_PERMISSIONED, dcgmvalue.DCGM_FP64_BLANK, dcgmvalue.DCGM_FP64_NOT_SUPPORTED,
    dcgmvalue.DCGM_STR_BLANK, dcgmvalue.DCGM_STR_NOT_FOUND, dcgmvalue.DCGM_STR_NOT_SUPPORTED,
    dcgmvalue.DCGM_STR_NOT_PERMISSIONED,
]
#: the 32-bit sentinels, which NVIDIA's DcgmValue reports as real numbers
INT32_BLANKS = [
    dcgmvalue.DCGM_INT32_BLANK, dcgmvalue.DCGM_INT32_NOT_FOUND, dcgmvalue.DCGM_INT32_NOT_SUPPORTED,
    dcgmvalue.DCGM_INT32_NOT_PERMISSIONED,
]

_DUMP = r'''
import contextlib, io, json
{imports}
values = json.loads({values!r})
out = {{"names": sorted(n for n in dir(dcgmvalue) if not n.startswith("__")),
       "constants": {{n: [type(v).__name__, v] for n, v in vars(dcgmvalue).items()
                      if n.startswith("DCGM_") and isinstance(v, (int, float, str))}},
       "answers": [], "int32": []}}
for v in values:
    d = dcgmvalue.DcgmValue(v)
    out["answers"].append([d.IsBlank(), str(d), d.value])
for v in values + {int32}:
    if isinstance(v, int) and not isinstance(v, bool):
        d = dcgmvalue.DcgmValue(0)
        d.SetFromInt32(v)
        out["int32"].append([d.value, dcgmvalue.DCGM_INT32_IS_BLANK(v), dcgmvalue.DCGM_INT64_IS_BLANK(v),
                             dcgmvalue.DCGM_INT8_IS_BLANK(v)])
for s in [x for x in values if isinstance(x, str)]:
    out["int32"].append(dcgmvalue.DCGM_STR_IS_BLANK(s))
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    dcgmvalue.self_test()
out["self_test"] = buf.getvalue()
print(json.dumps(out))
'''


def _dump(imports: str) -> str:
    return _DUMP.format(imports=imports, values=json.dumps(NORMAL + NVIDIA_BLANKS), int32=INT32_BLANKS)


@pytest.fixture(scope="module")
def oracle() -> Dict[str, Any]:
    nvidia_bindings()
    return json.loads(run_python(_dump("import dcgmvalue"), bindings="nvidia", library="sim").stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def ours() -> Dict[str, Any]:
    code = _dump("from dcgm.compat import dcgmvalue")
    return json.loads(run_python(code, bindings="ours", library="sim").stdout)  # type: ignore[no-any-return]


def test_names_and_sentinel_values_are_nvidias(oracle: Dict[str, Any], ours: Dict[str, Any]) -> None:
    assert sorted(set(oracle["names"]) - set(ours["names"])) == []
    assert ours["constants"] == oracle["constants"]


def test_real_values_behave_as_nvidias(oracle: Dict[str, Any], ours: Dict[str, Any]) -> None:
    n = len(NORMAL)
    assert ours["answers"][:n] == oracle["answers"][:n]


def test_nvidias_blanks_are_blank_and_print_na(oracle: Dict[str, Any], ours: Dict[str, Any]) -> None:
    n = len(NORMAL)
    for theirs, mine in zip(oracle["answers"][n:], ours["answers"][n:]):
        assert theirs[0] is True and mine[0] is True
        assert mine[1] == "N/A"  # NVIDIA's prints the number or the <<<...>>> text
        assert mine[2] == theirs[2]


def test_helpers_and_self_test_answer_as_nvidias(oracle: Dict[str, Any], ours: Dict[str, Any]) -> None:
    assert ours["int32"] == oracle["int32"]
    assert ours["self_test"] == oracle["self_test"] == "Tests passed\n"


@pytest.mark.parametrize("sentinel", INT32_BLANKS)
def test_int32_sentinels_are_blank_here(sentinel: int) -> None:
    v = dcgmvalue.DcgmValue(sentinel)
    assert v.IsBlank() and str(v) == "N/A" and v.value == sentinel


def test_a_sentinel_read_from_a_structure_is_blank() -> None:
    config = dcgm_structs.c_dcgmDeviceConfig_v2()
    config.mPerfState.syncBoost = dcgm_structs.DCGM_INT32_NOT_SUPPORTED
    v = dcgmvalue.DcgmValue(config.mPerfState.syncBoost)
    assert v.IsBlank() and str(v) == "N/A"
    config.mPerfState.syncBoost = 1
    assert str(dcgmvalue.DcgmValue(config.mPerfState.syncBoost)) == "1"


def test_an_unknown_type_raises_as_nvidias() -> None:
    with pytest.raises(Exception, match="Unknown type"):
        dcgmvalue.DcgmValue([1]).IsBlank()
