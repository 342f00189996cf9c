"""Policy callbacks: called from DCGM's thread with the GIL taken; exceptions are reported
through sys.unraisablehook and counted, not lost."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Dict, List

import pytest

import dcgm

XID_AT_300MS = {"events": [{"at_ms": 300, "gpu": 1, "kind": "xid", "value": 79}]}


def wait_for(cond: Any, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return bool(cond())


def test_conditions_enum() -> None:
    c = dcgm.PolicyCondition.XID | dcgm.PolicyCondition.DBE
    assert int(c) == 0x41
    assert dcgm.PolicyCondition.ALL & dcgm.PolicyCondition.THERMAL == dcgm.PolicyCondition.THERMAL
    assert int(dcgm.PolicyCondition.ALL) == 0x7F  # the seven conditions


def test_policy_set_and_get(handle: dcgm.Handle) -> None:
    g = handle.group("policy", gpus=[0, 1])
    g.policy_set(dbe=True, thermal_max_c=85)
    got = g.policy_get()
    assert sorted(got) == [0, 1]
    for p in got.values():
        assert p["dbe"] is True and p["thermal_max_c"] == 85 and p["xid"] is False
        assert p["conditions"] == dcgm.PolicyCondition.DBE | dcgm.PolicyCondition.THERMAL


def test_callback_receives_violations(sim_config: Any) -> None:
    sim_config(XID_AT_300MS)
    got: List[Dict[str, Any]] = []
    threads: List[int] = []

    def on_violation(v: Dict[str, Any]) -> None:
        threads.append(threading.get_ident())
        got.append(v)

    with dcgm.Handle.embedded(simulate=True) as h:
        with h.all_gpus().policy_register(dcgm.PolicyCondition.XID, on_violation) as reg:
            assert wait_for(lambda: got), "no violation delivered"
            assert reg.calls >= 1 and reg.errors == 0 and reg.active
        assert not reg.active
    v = got[0]
    assert (v["gpu"], v["condition"], v["condition_name"], v["xid"]) == (1, dcgm.PolicyCondition.XID, "XID", 79)
    assert v["timestamp_us"] > 0 and "XID 79" in v["message"]
    assert threads[0] != threading.get_ident(), "delivered on DCGM's thread"


def test_exception_in_callback_is_reported_and_counted(sim_config: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sim_config(XID_AT_300MS)
    reported: List[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u))

    def broken(v: Dict[str, Any]) -> None:
        raise ValueError("handler bug %d" % v["xid"])

    with dcgm.Handle.embedded(simulate=True) as h:
        reg = h.all_gpus().policy_register(dcgm.PolicyCondition.XID, broken)
        assert wait_for(lambda: reg.errors >= 1)
        assert reg.calls >= 1
        reg.unregister()
        reg.unregister()  # twice is fine
    assert reported and isinstance(reported[0].exc_value, ValueError)
    assert "handler bug 79" in str(reported[0].exc_value)


def test_overlapping_registration_is_refused(handle: dcgm.Handle) -> None:
    g = handle.all_gpus()
    with g.policy_register(dcgm.PolicyCondition.XID | dcgm.PolicyCondition.DBE, lambda v: None):
        with pytest.raises(dcgm.structs.DCGMError_Badparam):
            g.policy_register(dcgm.PolicyCondition.DBE, lambda v: None)
    with pytest.raises(TypeError):
        g.policy_register(dcgm.PolicyCondition.XID, "not callable")  # type: ignore[arg-type]
