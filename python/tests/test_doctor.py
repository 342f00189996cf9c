"""dcgm.doctor and dcgm.doctor_replay: the dcgm-doctor crate's findings from Python, live on the
simulator's workload profiles and replayed from dmon --json recordings."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import dcgm
from dcgm.testing import inject_value

H200 = {"model": "NVIDIA H200", "memory_mib": 143771}
TRACES = Path(
    os.environ.get(
        "DCGM_H200_TRACES",
        Path(os.environ.get("DCGM_SHARED_DIR") or Path(__file__).resolve().parents[2] / ".." / "shared")
        / "fixtures"
        / "h200-traces",
    )
)


def node(*workloads: str) -> Dict[str, Any]:
    return {
        "hostengines": [],
        "gpus": [dict(H200, workload=w) for w in workloads],
        "processes": [
            {"pid": 4000 + i, "name": "job%d" % i, "gpus": [i], "memory_mib": 2000}
            for i in range(len(workloads))
        ],
    }


def kinds_on(report: dcgm.DoctorReport, gpu: int) -> List[str]:
    return [f.kind for f in report.findings if f.gpus == [gpu]]


def test_live_findings_of_the_simulated_profiles_are_objects_with_the_crates_fields(
    sim_config: Any,
) -> None:
    # Three GPUs of different work, one job on each: the third idle, holding memory.
    sim_config(node("tiny_kernels", "pcie_bound", "memory_idle"))
    report = dcgm.doctor(duration=2.0, interval=0.1, simulate=True)
    assert report.simulated is True
    assert report.gpus == [0, 1, 2]
    assert report.samples >= 3 * 10
    assert kinds_on(report, 0) == ["launch_bound"]
    assert kinds_on(report, 1) == ["pcie_transfer_bound"]
    assert kinds_on(report, 2) == ["memory_held_idle"]
    launch = report.findings[0]
    assert launch.severity == "problem"
    assert launch.evidence["gpu_util_mean"] > 20.0
    assert launch.units["gpu_util_mean"] == "%"
    assert launch.evidence["sm_active_mean"] < 0.1 * launch.evidence["gpu_util_mean"] / 100
    start, end = launch.span
    assert 0 < start < end
    assert "too small" in launch.explanation and launch.advice
    assert "Finding(problem launch_bound on GPU [0]" in repr(launch)


def test_live_gpus_limits_the_gpus_judged_and_the_steady_profile_has_no_problem(
    sim_config: Any,
) -> None:
    sim_config(node("steady", "memory_idle", "steady"))
    report = dcgm.doctor(duration=1.5, gpus=[0, 1], simulate=True)
    assert report.gpus == [0, 1]
    assert kinds_on(report, 0) == ["compute_bound"]
    assert [f.severity for f in report.findings if f.gpus == [0]] == ["info"]
    assert kinds_on(report, 1) == ["memory_held_idle"]


def test_live_reads_the_process_lists_and_names_a_shared_gpus_processes(
    sim_config: Any,
) -> None:
    cfg = node("steady", "steady")
    cfg["processes"].append({"pid": 4100, "name": "intruder", "gpus": [0], "memory_mib": 3000})
    sim_config(cfg)
    report = dcgm.doctor(duration=1.5, simulate=True)
    assert "shared_gpu" not in report.not_judged
    shared = [f for f in report.findings if f.kind == "shared_gpu"]
    assert [f.gpus for f in shared] == [[0]], report.findings
    # The pids and their GPU memory are DCGM's (a simulated node's pids go unnamed here).
    assert "4000" in shared[0].explanation and "4100" in shared[0].explanation, shared[0]
    assert shared[0].evidence["processes"] == 2


def test_an_xid_and_a_double_bit_error_injected_mid_run_show_as_hardware_errors(
    sim_config: Any,
) -> None:
    sim_config(node("steady", "steady"))
    engine = dcgm.Handle.embedded(simulate=True)
    try:
        # The GIL is released while the doctor samples: this thread injects during the run,
        # once the doctor watches the ECC counter of both GPUs (its first read of them is the
        # baseline new errors are counted from; it follows the watch at once). A fixed delay
        # alone raced a slow start on a loaded machine: the errors then landed before the
        # baseline and were not new. Entities are (entity group, id) pairs.
        gpus = [(dcgm.EntityGroup.GPU, 0), (dcgm.EntityGroup.GPU, 1)]
        seen: List[bool] = []

        def doctor_watches() -> bool:
            vals = engine.system().entities_latest_values(gpus, ["DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"])
            return all(v.status == 0 and v.timestamp_us > 0 for v in vals)

        def inject() -> None:
            deadline = time.monotonic() + 30
            while not doctor_watches():
                if time.monotonic() > deadline:
                    return
                time.sleep(0.02)
            seen.append(True)
            time.sleep(0.3)
            inject_value(engine, 0, "DCGM_FI_DEV_XID_ERROR", 79)
            inject_value(engine, 1, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 2)

        assert not doctor_watches(), "the ECC counter is watched before the doctor starts"
        t = threading.Thread(target=inject)
        t.start()
        report = dcgm.doctor(duration=2.0, simulate=True)
        t.join()
    finally:
        engine.close()
    assert seen, "the doctor's watch of the ECC counter never showed within 30 s"
    hw = {f.gpus[0]: f for f in report.findings if f.kind == "hardware_errors"}
    assert sorted(hw) == [0, 1], report.findings
    assert hw[0].severity == "problem" and "XID 79" in hw[0].explanation
    assert hw[1].severity == "problem" and hw[1].evidence["ecc_dbe_new"] == 2


def test_bad_arguments_are_errors_that_say_what_to_give() -> None:
    with pytest.raises(dcgm.DCGMError, match="duration"):
        dcgm.doctor(duration=0, simulate=True)
    with pytest.raises(dcgm.DCGMError, match="interval"):
        dcgm.doctor(duration=1, interval=0, simulate=True)


def recording(tmp_path: Path, lines: List[Dict[str, Any]], phases: str = "") -> Path:
    f = tmp_path / "trace.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    if phases:
        (tmp_path / "trace-phases.txt").write_text(phases)
    return f


def tiny_then_idle(secs: int) -> List[Dict[str, Any]]:
    out = []
    for i in range(secs * 10):
        tiny = i < secs * 5
        out.append(
            {
                "timestamp_ms": 1_000_000 + i * 100,
                "entity_group": "GPU",
                "entity_id": 0,
                "gpu_utilization": 40 if tiny else 0,
                "sm_active": 0.001 if tiny else 0.0,
                "gr_engine_active": 0.4 if tiny else 0.0,
                "fb_used": 800,
            }
        )
    return out


def test_replay_judges_a_phase_a_range_or_all_of_a_recording(tmp_path: Path) -> None:
    f = recording(tmp_path, tiny_then_idle(20), "PHASE tiny 1000.0\nPHASE idle 1010.0\nPHASE end 1020.0\n")
    whole = dcgm.doctor_replay(f)
    assert [x.kind for x in whole.findings] == ["launch_bound"]
    assert whole.simulated is False
    assert "shared_gpu" in whole.not_judged
    assert [x.kind for x in dcgm.doctor_replay(str(f), "tiny").findings] == ["launch_bound"]
    assert dcgm.doctor_replay(f, "idle").findings == []
    assert dcgm.doctor_replay(f, start=12, end=20).findings == []
    with pytest.raises(ValueError, match="phase or start/end"):
        dcgm.doctor_replay(f, "tiny", start=1)


def test_replay_of_a_truncated_file_names_the_line(tmp_path: Path) -> None:
    lines = [json.dumps(x) for x in tiny_then_idle(2)]
    lines[-1] = lines[-1][:30]
    f = tmp_path / "cut.jsonl"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="line %d" % len(lines)):
        dcgm.doctor_replay(f)
    with pytest.raises(OSError, match="cannot open"):
        dcgm.doctor_replay(tmp_path / "absent.jsonl")
    with pytest.raises(ValueError, match="needs a phases file"):
        dcgm.doctor_replay(recording(tmp_path, tiny_then_idle(2)), "tiny")


def test_replay_of_the_h200_fixture_phases() -> None:
    trace = TRACES / "workloads.jsonl"
    if not trace.is_file():
        if os.environ.get("DCGM_REQUIRE_REAL") == "1":
            raise AssertionError("DCGM_REQUIRE_REAL=1 but %s is absent" % trace)
        pytest.skip("the H200 traces are absent (%s)" % trace)
    want = {
        "sawtooth_data_starved": "input_starved",
        "pcie_h2d_pageable": "pcie_transfer_bound",
        "tiny_kernels": "launch_bound",
        "memory_high_idle": "memory_held_idle",
    }
    for phase, kind in want.items():
        report = dcgm.doctor_replay(trace, phase)
        assert kind in [f.kind for f in report.findings], (phase, report.findings)
    steady = dcgm.doctor_replay(trace, "steady_matmul")
    assert {f.kind for f in steady.findings} >= {"compute_bound", "power_capped"}
    assert all(f.severity != "problem" for f in steady.findings)
    period = [f for f in dcgm.doctor_replay(trace, "sawtooth_data_starved").findings if f.kind == "input_starved"]
    assert 1.0 <= period[0].evidence["period"] <= 1.5
