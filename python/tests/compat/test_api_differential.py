"""The API-level differential: the battery of ``api_battery.py`` (NVIDIA's ``dcgm_agent`` and,
from ``api_battery_objects.py``, the object layer) run on NVIDIA's bindings and on
``dcgm.compat``, each binding in ONE subprocess per library.

* Simulator: ours against NVIDIA's, live, on the packaged dcgm-sim.
* Real library (the H200 capture): ours against the golden file
  ``python/tests/data/compat-api-real-4.6.0.json``, NVIDIA's answers recorded there; NVIDIA's
  bindings are run too, so a golden file the library no longer matches fails.
  ``DCGM_DIFF_RECORD=1`` re-records the golden file from NVIDIA's bindings on the real library.

A case may differ only if :data:`TOLERATED` lists it, with its reason (each one a documented
improvement). Cases NVIDIA's interpreter cannot survive (``nvidia=False``) run on ours only and
must give their ``expect``.
"""

from __future__ import annotations

import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

import api_battery
from conftest import H200_CAPTURE, NVIDIA_BINDINGS, REPO, nvidia_bindings, real_library_dir, real_library_reason, run_python

BATTERY = Path(api_battery.__file__).resolve()
GOLDEN = REPO / "python" / "tests" / "data" / "compat-api-real-4.6.0.json"

_RANGE = (
    "an int outside the C parameter's range is ctypes.ArgumentError before the call (a negative "
    "value of an unsigned parameter's signed twin, such as -1 for a u32 id, converts as C converts "
    "it and the library answers); NVIDIA's ctypes passes it cut to 32 bits"
)
_STR_AS_NUMBER = (
    "a str where the C parameter is a number is ctypes.ArgumentError; NVIDIA's ctypes passes the "
    "string's address (truncated) as the number and the library answers whatever that reads as"
)

#: case id -> why ours may differ from NVIDIA's (on either library).
TOLERATED: Dict[str, str] = {
    "lifecycle/agent_init_before_load": (
        "dcgm_agent.dcgmInit() opens the library itself; NVIDIA's raises DCGMError_Uninitialized "
        "unless dcgm_structs._dcgmInit() ran first (the project brief's program calls dcgmInit first)"
    ),
    "values/entity_latest_negative_entity": _RANGE,
    "groups/add_device_str": _STR_AS_NUMBER,
    "groups/create_type_str": _STR_AS_NUMBER,
    "health/set_str": _STR_AS_NUMBER,
}


def _load(path: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            outcome = row["outcome"]
            outcome.pop("msg", None)
            out[row["id"]] = outcome
    return out


def run_battery(bindings: str, library: str) -> Dict[str, Any]:
    """The battery's outcomes on one binding and library: ``{case id: outcome}``."""
    fd, out = tempfile.mkstemp(prefix="dcgm-battery-%s-%s-" % (bindings, library), suffix=".jsonl")
    os.close(fd)
    try:
        proc = run_python(
            BATTERY,
            bindings=bindings,
            library=library,
            args=[out],
            env={"DCGM_BATTERY_BINDINGS": bindings},
            timeout=300,
            check=False,
        )
        results = _load(out)
    finally:
        os.unlink(out)
    if proc.returncode != 0:
        last = list(results)[-1] if results else "(none)"
        pytest.fail(
            "the battery died on %s bindings / %s library (exit %d) after case %s\n%s"
            % (bindings, library, proc.returncode, last, proc.stderr[-4000:])
        )
    return results


def compare(name: str, theirs: Dict[str, Any], ours: Dict[str, Any]) -> Tuple[List[str], int, List[str]]:
    """``(unexplained differences, agreeing count, tolerated ids that agree now)``."""
    bad: List[str] = []
    agree = 0
    stale: List[str] = []
    for cid, want in theirs.items():
        got = ours.get(cid)
        if got == want:
            agree += 1
            if cid in TOLERATED:
                stale.append(cid)
            continue
        if cid in TOLERATED:
            continue
        bad.append("%s DIFFERS %s:\n  NVIDIA's: %s\n  ours:     %s" % (name, cid, json.dumps(want)[:600], json.dumps(got)[:600]))
    return bad, agree, stale


def check_ours_only(ours: Dict[str, Any]) -> List[str]:
    """The cases NVIDIA's bindings cannot run: ours must give each case's ``expect``."""
    cases, _ = api_battery.all_cases()
    bad = []
    for c in cases:
        if c.nvidia:
            continue
        got = ours.get(c.id)
        if got is None:
            bad.append("%s: no outcome" % c.id)
            continue
        outcome = "ok" if "ok" in got else "raise:%s" % got["raise"]
        if outcome != c.expect:
            bad.append("%s: ours %s, expected %s" % (c.id, outcome, c.expect))
    return bad


def _report(name: str, theirs: Dict[str, Any], ours: Dict[str, Any]) -> None:
    bad, agree, stale = compare(name, theirs, ours)
    tolerated = sum(1 for cid in theirs if cid in TOLERATED and ours.get(cid) != theirs[cid])
    print(
        "api differential[%s]: %d cases, %d agree, %d tolerated differences, %d unexplained, %d ours-only"
        % (name, len(theirs), agree, tolerated, len(bad), len(set(ours) - set(theirs)))
    )
    for cid in stale:
        print("api differential[%s] note: %s no longer differs; remove it from TOLERATED" % (name, cid))
    missing = [cid for cid in theirs if cid not in ours]
    assert not missing, "cases ours did not answer: %s" % missing
    only_ours = check_ours_only(ours)
    assert not bad and not only_ours, "\n".join(bad + only_ours)


def test_battery_is_large_enough() -> None:
    cases, _ = api_battery.all_cases()
    agent = api_battery.agent_cases() + list(api_battery.shutdown())
    assert len(agent) >= 300, "the dcgm_agent battery has %d cases" % len(agent)
    assert len({c.id for c in cases}) == len(cases)
    for c in cases:
        assert c.mode in ("value", "shape", "outcome"), c.id
        assert c.nvidia or c.expect, "%s: an ours-only case needs expect" % c.id


def test_tolerated_cases_exist() -> None:
    ids = {c.id for c in api_battery.all_cases()[0]}
    assert not set(TOLERATED) - ids, "TOLERATED names cases the battery lacks"
    assert all(why.strip() for why in TOLERATED.values())


def test_simulator_ours_against_nvidia() -> None:
    nvidia_bindings()
    with ThreadPoolExecutor(2) as pool:
        theirs_f = pool.submit(run_battery, "nvidia", "sim")
        ours_f = pool.submit(run_battery, "ours", "sim")
        theirs, ours = theirs_f.result(), ours_f.result()
    _report("sim", theirs, ours)


def _golden() -> Dict[str, Any]:
    with open(GOLDEN) as f:
        data = json.load(f)
    return data["cases"]  # type: ignore[no-any-return]


def _write_golden(cases: Dict[str, Any]) -> None:
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "about": (
            "NVIDIA's DCGM 4.6.0 Python bindings' answers to the dcgm.compat API battery "
            "(python/tests/compat/api_battery.py) on the real libdcgm 4.6.0 with DCGM's injection NVML "
            "replaying ../shared/fixtures/nvml-capture-h200.yaml (one H200). Facts about the library "
            "and the bindings, recorded by running them; nothing of NVIDIA's is copied. Re-record: "
            "DCGM_DIFF_RECORD=1 python -m pytest python/tests/compat/test_api_differential.py"
        ),
        "capture": H200_CAPTURE.name,
        "cases": cases,
    }
    with open(GOLDEN, "w") as f:
        json.dump(doc, f, indent=0, sort_keys=True)
        f.write("\n")


def test_real_library_ours_against_golden() -> None:
    if real_library_dir() is None:
        if os.environ.get("DCGM_REQUIRE_REAL") == "1":
            pytest.fail("the real library is required: %s" % real_library_reason())
        if not GOLDEN.is_file():
            pytest.skip("no golden file and no real library: %s" % real_library_reason())
        pytest.skip("the real libdcgm 4.6.0 is not available: %s" % real_library_reason())
    have_nvidia = (NVIDIA_BINDINGS / "dcgm_agent.py").is_file()
    if os.environ.get("DCGM_DIFF_RECORD") == "1":
        nvidia_bindings()
        _write_golden(run_battery("nvidia", "real"))
    if not GOLDEN.is_file():
        pytest.fail("%s is missing: record it with DCGM_DIFF_RECORD=1" % GOLDEN)
    golden = _golden()
    jobs = {"ours": ("ours", "real")}
    if have_nvidia:
        jobs["nvidia"] = ("nvidia", "real")
    with ThreadPoolExecutor(len(jobs)) as pool:
        futures = {k: pool.submit(run_battery, *v) for k, v in jobs.items()}
        results = {k: f.result() for k, f in futures.items()}
    if "nvidia" in results:
        stale = [cid for cid in set(golden) | set(results["nvidia"]) if golden.get(cid) != results["nvidia"].get(cid)]
        assert not stale, (
            "NVIDIA's bindings on the real library no longer give the golden file's answers for %s: "
            "re-record with DCGM_DIFF_RECORD=1" % sorted(stale)[:20]
        )
    _report("real", golden, results["ours"])

