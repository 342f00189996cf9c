"""dcgm.burn: dcgm-burn's stress test from Python, on the simulator (the load modelled from the
simulated SM clock, labelled simulated), with one GPU weak, all healthy, and bad input."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

import pytest

import dcgm

H200 = {"model": "NVIDIA H200", "memory_mib": 143771}


def node(weak: Optional[int] = None, workload: str = "burn") -> Dict[str, Any]:
    return {
        "hostengines": [],
        "gpus": [dict(H200, workload=workload if i == weak else "burn") for i in range(4)],
    }


def test_healthy_gpus_give_a_healthy_simulated_report_with_modelled_tflops(sim_config: Any) -> None:
    sim_config(node())
    report = dcgm.burn(duration=1.5, interval=0.1, simulate=True)
    assert isinstance(report, dcgm.BurnReport)
    assert report.simulated is True
    assert report.status == "healthy" and report.exit_status == 0
    assert len(report) == 4 and [v.gpu for v in report.gpus] == [0, 1, 2, 3]
    for v in report.gpus:
        assert isinstance(v, dcgm.BurnVerdict)
        assert v.status == "healthy"
        # bf16 on a simulated H200 at full clock: 70 % of the 989 TFLOPS peak, modelled.
        assert v.tflops is not None and 650 < v.tflops < 720
        assert v.mismatches == 0
    assert json.loads(report.json)["simulated"] is True


def test_a_stuck_clock_is_named_with_its_evidence(sim_config: Any) -> None:
    sim_config(node(weak=2, workload="burn_stuck_clock"))
    report = dcgm.burn(duration=1.5, interval=0.1, simulate=True, gpus=[0, 1, 2, 3])
    assert report.status == "failure" and report.exit_status == 3
    weak = report.gpus[2]
    assert weak.status == "failure"
    slow = [f for f in weak.findings if f.kind == "slower_than_siblings"]
    assert len(slow) == 1
    assert isinstance(slow[0], dcgm.BurnFinding)
    assert slow[0].severity == "problem"
    assert abs(slow[0].evidence["sm_clock"] - 396) < 2
    assert slow[0].units["sm_clock"] == "MHz"
    assert "no throttle reason" in slow[0].explanation
    assert all(v.status == "healthy" for v in report.gpus if v.gpu != 2)


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(dcgm.DCGMError):
        dcgm.burn(duration=0, simulate=True)
    with pytest.raises(dcgm.DCGMError, match="bf16"):
        dcgm.burn(duration=1, dtype="int8", simulate=True)
