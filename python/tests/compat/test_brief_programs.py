"""The project brief's three example programs (issue 19, item 6), with only their imports
added (``brief/*.py``), run on the simulator and on the real library (skipped with the reason
where it is absent): each must exit cleanly and print real values, not blank sentinels, not
``None``, not nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Optional

import pytest

import dcgm

from conftest import run_python

BRIEF = Path(__file__).resolve().parent / "brief"
LIBRARIES = ["sim", "real"]

# blank sentinels of every width (dcgmvalue's DCGM_*_BLANK and the codes above them)
_SENTINELS = (0x70, 0x7FFFFFF0, 0x7FFFFFFFFFFFFFF0)


def _is_sentinel(text: str) -> bool:
    try:
        n = int(text)
    except ValueError:
        try:
            return float(text) >= 140737488355328.0
        except ValueError:
            return False
    return any(base <= n <= base + 0xF for base in _SENTINELS[1:])


def _real_number(text: str) -> bool:
    return re.fullmatch(r"-?\d+(\.\d+)?", text) is not None and not _is_sentinel(text)


def _lines(library: str, program: str, env: "Optional[Dict[str, str]]" = None) -> List[List[str]]:
    if library == "real":
        from conftest import require_real

        require_real()
    out = run_python(BRIEF / program, bindings="ours", library=library, timeout=180, env=env)
    assert "Traceback" not in out.stderr and "Exception ignored" not in out.stderr, out.stderr
    lines = [line.split() for line in out.stdout.splitlines() if line.strip()]
    assert lines, "%s printed nothing\n--- stderr\n%s" % (program, out.stderr)
    return lines


@pytest.mark.parametrize("library", LIBRARIES)
def test_reader_program(library: str) -> None:
    """``DcgmReader().GetLatestGpuValuesAsFieldDict()``: one line per GPU, its id, utilization
    and temperature."""
    # `dcgm.DcgmReader()` finds its library as the package does: DCGM_LIB_PATH names it (the
    # simulator by its explicit path, labelled simulated; or the real libdcgm).
    if library == "sim":
        lib = dcgm.simulator_path()
    else:
        from conftest import require_real

        lib = str(require_real() / "lib" / "libdcgm.so.4")
    lines = _lines(library, "brief_reader.py", env={"DCGM_LIB_PATH": lib})
    assert len(lines) == (8 if library == "sim" else 1)
    for i, line in enumerate(lines):
        assert len(line) == 3 and line[0] == str(i), line
        assert _real_number(line[1]) and _real_number(line[2]), line


@pytest.mark.parametrize("library", LIBRARIES)
def test_object_program(library: str) -> None:
    """``DcgmSystem.GetAllGpus()`` (id, UUID, utilization, processes) and
    ``GetDefaultGroup().RunDiagnostic(...).GetResult()``."""
    lines = _lines(library, "brief_objects.py")
    gpus = [line for line in lines if len(line) == 3 and line[1].startswith("GPU-")]
    assert len(gpus) == (8 if library == "sim" else 1), lines
    for line in gpus:
        assert _real_number(line[0]) and _real_number(line[2]), line
    procs = [line for line in lines if len(line) == 2]
    if library == "sim":  # the simulated node runs processes on its GPUs
        assert procs and all(_real_number(p[0]) and int(p[1]) > 0 for p in procs), procs
    result = " ".join(lines[-1])
    if library == "sim":
        assert result in ("Pass", "Fail", "Warn", "Skip"), result
    else:  # the staged real library has no NVVS binary: the result says so
        assert result in ("Pass", "Fail", "Warn", "Skip") or result.startswith("Not Run ("), result


@pytest.mark.parametrize("library", LIBRARIES)
def test_agent_program(library: str) -> None:
    """``dcgm_agent.dcgmGetLatestValues(handle, group, fieldGroup)`` -> ``(values, count)``:
    GPU id, field id and value of each value."""
    lines = _lines(library, "brief_agent.py")
    assert len(lines) == (16 if library == "sim" else 2), lines
    for line in lines:
        assert len(line) == 3 and _real_number(line[0]) and line[1] in ("203", "252"), line
        assert _real_number(line[2]), line
