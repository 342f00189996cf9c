"""A blank field value is ``value`` ``None`` in ``dcgm.compat`` (``isBlank`` true), NVIDIA's
sentinel number only behind ``DCGM_COMPAT_BLANK_SENTINELS=1`` /
``python -m dcgm.compat --blank-sentinels`` (issue 33, item 6).

Why: a published profiler written for NVIDIA's bindings reads ``DcgmGroup.samples
.GetAllSinceLastCall`` and averages every sample whose ``value is not None``. The first
profiling samples after a watch starts are blank, and NVIDIA's ``DcgmFieldValue`` keeps the
sentinel in ``value`` (``isBlank`` set), so the profiler reported ``sm_active =
140737488355328.0`` on the real libdcgm 4.6.0 through nv-hostengine. :data:`PROFILER` is a
client written that way; it runs unchanged under ``python -m dcgm.compat``, and on NVIDIA's
bindings as the oracle.

On the simulator, whose profiling fields have a reading from the first sample, the client
injects the blank first sample itself (``--inject-blank``: a ``DCGM_FP64_BLANK`` sample of
``DCGM_FI_PROF_SM_ACTIVE`` timestamped now, through ``dcgmInjectFieldValue``). On the real
library replaying the H200 capture (injection NVML: no profiling data at all) every
``DCGM_FI_PROF_SM_ACTIVE`` sample is blank, as the first ones are on a real GPU.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

from conftest import nvidia_bindings, python_env, run_python

from dcgm.compat import dcgmvalue

FP64_BLANK = 140737488355328.0

#: The client, written as the published profiler is: NVIDIA's imports, a watch, then
#: GetAllSinceLastCall, and the average of every sample whose value is not None.
PROFILER = r'''
import ctypes, json, sys, time
import pydcgm, dcgm_structs, dcgm_fields, dcgmvalue

DCGM_FI_PROF_SM_ACTIVE = 1002

handle = pydcgm.DcgmHandle(opMode=dcgm_structs.DCGM_OPERATION_MODE_AUTO)
system = handle.GetSystem()
group = system.GetGroupWithGpuIds("profiler", [0])
fieldGroup = pydcgm.DcgmFieldGroup(handle, "profiler_fields", [DCGM_FI_PROF_SM_ACTIVE])
group.samples.WatchFields(fieldGroup, 100000, 60.0, 0)

if "--inject-blank" in sys.argv:
    # the blank first profiling sample of a real GPU, where the library reads every sample
    v = dcgm_structs.c_dcgmFieldValue_v1()
    v.version = dcgm_structs.make_dcgm_version(dcgm_structs.c_dcgmFieldValue_v1, 1)
    v.fieldId = DCGM_FI_PROF_SM_ACTIVE
    v.fieldType = ord(dcgm_fields.DCGM_FT_DOUBLE)
    v.ts = int(time.time() * 1000000)
    v.value.dbl = dcgmvalue.DCGM_FP64_BLANK
    inject = dcgm_structs._dcgmGetFunctionPointer("dcgmInjectFieldValue")
    assert inject(handle.handle, 0, ctypes.byref(v)) == dcgm_structs.DCGM_ST_OK

dfvc = group.samples.GetAllSinceLastCall(None, fieldGroup)
time.sleep(0.3)
dfvc = group.samples.GetAllSinceLastCall(dfvc, fieldGroup)

samples = dfvc.values[0][DCGM_FI_PROF_SM_ACTIVE].values
values = [s.value for s in samples if s.value is not None]
average = sum(values) / len(values) if values else None
print("sm_active = %s" % ("N/A" if average is None else average))
print(json.dumps({"average": average,
                  "samples": [[s.value, s.isBlank] for s in samples],
                  "is_blank": [dcgmvalue.DCGM_FP64_IS_BLANK(s.value) for s in samples]}))
'''


def _result(out: "subprocess.CompletedProcess[str]") -> Dict[str, Any]:
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    assert lines, out.stdout + out.stderr
    return json.loads(lines[-1])  # type: ignore[no-any-return]


@pytest.fixture
def profiler(tmp_path: Path) -> Path:
    path = tmp_path / "profiler.py"
    path.write_text(PROFILER)
    return path


def _run(profiler: Path, library: str, env: Any = None, bindings: str = "ours") -> Dict[str, Any]:
    args = ["--inject-blank"] if library == "sim" else []
    return _result(run_python(profiler, bindings=bindings, library=library, args=args, env=env,
                              shadow=bindings == "ours"))


def _assert_no_sentinel_reaches_the_average(got: Dict[str, Any]) -> None:
    blanks = [s for s in got["samples"] if s[1]]
    assert blanks, got  # the client did see a blank sample
    assert all(value is None for value, _ in blanks), got
    assert all(value is None or value < 1e15 for value, _ in got["samples"]), got
    assert got["average"] is None or got["average"] < 1e15, got
    assert all(got["is_blank"][i] for i, s in enumerate(got["samples"]) if s[1]), got


def test_profiler_never_averages_a_blank_on_the_simulator(profiler: Path) -> None:
    got = _run(profiler, "sim")
    _assert_no_sentinel_reaches_the_average(got)
    readings = [value for value, blank in got["samples"] if not blank]
    assert readings and 0.0 <= got["average"] <= 1.0, got  # the simulated GPU's real readings


def test_profiler_never_averages_a_blank_on_the_real_library(profiler: Path, real_dir: Path) -> None:
    got = _run(profiler, "real")
    _assert_no_sentinel_reaches_the_average(got)
    assert got["average"] is None, got  # nothing but blanks: no reading rather than 1.4e14


def test_nvidias_bindings_average_the_sentinel(profiler: Path) -> None:
    """The oracle: the same client on NVIDIA's bindings counts the blank as a reading."""
    nvidia_bindings()
    got = _run(profiler, "sim", bindings="nvidia")
    assert [FP64_BLANK, True] in got["samples"], got
    assert got["average"] > 1e13, got


@pytest.mark.parametrize("library", ["sim", "real"])
def test_the_environment_switch_keeps_nvidias_sentinel(profiler: Path, library: str) -> None:
    if library == "real":
        from conftest import require_real

        require_real()
    got = _run(profiler, library, env={"DCGM_COMPAT_BLANK_SENTINELS": "1"})
    blanks = [s for s in got["samples"] if s[1]]
    assert blanks and all(value == FP64_BLANK for value, _ in blanks), got
    assert all(got["is_blank"][i] for i, s in enumerate(got["samples"]) if s[1]), got
    if library == "real":
        assert got["average"] == FP64_BLANK, got  # the number the issue reports
    else:
        assert got["average"] > 1e13, got


def test_the_runner_argument_keeps_nvidias_sentinel(profiler: Path) -> None:
    """``python -m dcgm.compat --blank-sentinels`` sets the switch for the program it runs."""
    out = subprocess.run(
        [sys.executable, "-m", "dcgm.compat", "--simulate", "--blank-sentinels", str(profiler), "--inject-blank"],
        env=python_env("ours", "sim"), capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    got = _result(out)
    assert [FP64_BLANK, True] in got["samples"], got
    assert got["average"] > 1e13, got
    help_text = subprocess.run([sys.executable, "-m", "dcgm.compat", "--help"], env=python_env("ours", "sim"),
                               capture_output=True, text=True, timeout=60).stdout
    assert "--blank-sentinels" in help_text and "DCGM_COMPAT_BLANK_SENTINELS" in help_text


def test_the_switch_is_off_unless_set_to_1(profiler: Path) -> None:
    got = _run(profiler, "sim", env={"DCGM_COMPAT_BLANK_SENTINELS": "0"})
    _assert_no_sentinel_reaches_the_average(got)


# ---- DcgmFieldValue made from structures (the general decoder), with and without the switch

STRUCTURES = r"""
import json, math
from dcgm.compat import dcgm_structs, dcgm_field_helpers as H
def fv(fieldId, ft, status=0, **value):
    r = dcgm_structs.c_dcgmFieldValue_v1(); r.version = dcgm_structs.dcgmFieldValue_version1
    r.fieldId = fieldId; r.fieldType = ord(ft); r.status = status; r.ts = 7
    for k, v in value.items(): setattr(r.value, k, v)
    v = H.DcgmFieldValue(r)
    return [v.value, v.isBlank]
print(json.dumps([fv(150, "i", i64=0x7ffffffffffffff2), fv(1002, "d", dbl=140737488355328.0),
                  fv(50, "s", str="<<<NOT_SUPPORTED>>>"), fv(150, "i", status=-16), fv(150, "i", i64=42),
                  fv(155, "d", dbl=1.5), fv(50, "s", str="H200"), str(fv(155, "d", dbl=float("nan"))),
                  H.dcgmvalue.DCGM_INT64_IS_BLANK(None)]))
"""


def test_field_values_from_structures_blank_is_none_unless_switched() -> None:
    default = json.loads(run_python(STRUCTURES, bindings="ours", library="sim").stdout.splitlines()[-1])
    assert default[:7] == [[None, True], [None, True], [None, True], [None, True], [42, False], [1.5, False],
                           ["H200", False]]
    assert default[7] == "[nan, False]" and default[8] is True  # a NaN is a reading, as NVIDIA's
    kept = json.loads(run_python(STRUCTURES, bindings="ours", library="sim",
                                 env={"DCGM_COMPAT_BLANK_SENTINELS": "1"}).stdout.splitlines()[-1])
    # NVIDIA's values: the sentinels; an error status has no value there either
    assert kept[:4] == [[0x7FFFFFFFFFFFFFF2, True], [FP64_BLANK, True], ["<<<NOT_SUPPORTED>>>", True], [None, True]]
    assert kept[4:7] == default[4:7]


# ---- DcgmReader: None by default, NVIDIA's sentinel behind the switch

READER = r"""
import json
from dcgm.compat.DcgmReader import DcgmReader
r = DcgmReader(fieldIds=[1002, 150], updateFrequency=100000, hostname=None, ignoreBlank=False)
print(json.dumps([r.GetLatestGpuValuesAsFieldIdDict()[0], r.GetLatestGpuValuesAsFieldNameDict()[0],
                  r.GetLatestEntityValuesAsFieldIdDict()[1][0]]))
r.Shutdown()
"""


def test_dcgm_reader_blank_is_none_unless_switched(real_dir: Path) -> None:
    default = json.loads(run_python(READER, bindings="ours", library="real").stdout.splitlines()[-1])
    assert default[0]["1002"] is None and default[1]["sm_active"] is None and default[2]["1002"] is None
    assert isinstance(default[0]["150"], int)
    kept = json.loads(run_python(READER, bindings="ours", library="real",
                                 env={"DCGM_COMPAT_BLANK_SENTINELS": "1"}).stdout.splitlines()[-1])
    assert kept[0]["1002"] == kept[1]["sm_active"] == kept[2]["1002"] == FP64_BLANK


def test_dcgm_reader_sentinels_per_type_and_kind() -> None:
    from dcgm import Blank
    from dcgm.compat.DcgmReader import _sentinel

    assert _sentinel("d", Blank.BLANK) == dcgmvalue.DCGM_FP64_BLANK
    assert _sentinel("d", Blank.NOT_SUPPORTED) == dcgmvalue.DCGM_FP64_NOT_SUPPORTED
    assert _sentinel("i", Blank.NOT_FOUND) == dcgmvalue.DCGM_INT64_NOT_FOUND
    assert _sentinel("t", Blank.NOT_PERMISSIONED) == dcgmvalue.DCGM_INT64_NOT_PERMISSIONED
    assert _sentinel("s", Blank.NOT_SUPPORTED) == dcgmvalue.DCGM_STR_NOT_SUPPORTED
    assert _sentinel("s", Blank.BLANK) == dcgmvalue.DCGM_STR_BLANK
    assert _sentinel("b", Blank.BLANK) is None and _sentinel("d", None) is None


# ---- dcgmvalue's DCGM_*_IS_BLANK accept None (NVIDIA's raise TypeError)


@pytest.mark.parametrize("name", ["DCGM_INT8_IS_BLANK", "DCGM_INT32_IS_BLANK", "DCGM_INT64_IS_BLANK",
                                  "DCGM_FP64_IS_BLANK", "DCGM_STR_IS_BLANK"])
def test_is_blank_helpers_accept_none(name: str) -> None:
    assert getattr(dcgmvalue, name)(None) is True


def test_is_blank_helpers_keep_their_answers_for_values() -> None:
    assert dcgmvalue.DCGM_INT8_IS_BLANK(0x70) and not dcgmvalue.DCGM_INT8_IS_BLANK(0x6F)
    assert dcgmvalue.DCGM_INT32_IS_BLANK(dcgmvalue.DCGM_INT32_NOT_SUPPORTED) and not dcgmvalue.DCGM_INT32_IS_BLANK(5)
    assert dcgmvalue.DCGM_INT64_IS_BLANK(dcgmvalue.DCGM_INT64_BLANK) and not dcgmvalue.DCGM_INT64_IS_BLANK(0)
    assert not dcgmvalue.DCGM_INT64_IS_BLANK(dcgmvalue.DCGM_INT32_BLANK)  # NVIDIA's answer
    assert dcgmvalue.DCGM_FP64_IS_BLANK(FP64_BLANK) and not dcgmvalue.DCGM_FP64_IS_BLANK(0.88)
    assert not dcgmvalue.DCGM_FP64_IS_BLANK(float("nan"))
    assert dcgmvalue.DCGM_STR_IS_BLANK("<<<NOT_FOUND>>>") and not dcgmvalue.DCGM_STR_IS_BLANK("H200")
    for f in (dcgmvalue.DCGM_INT8_IS_BLANK, dcgmvalue.DCGM_INT64_IS_BLANK, dcgmvalue.DCGM_FP64_IS_BLANK,
              dcgmvalue.DCGM_STR_IS_BLANK):
        assert type(f(None)) is bool and type(f("<<<NULL>>>" if f is dcgmvalue.DCGM_STR_IS_BLANK else 1)) is bool
    assert dcgmvalue.DcgmValue(None).IsBlank()
