"""Policy subscriptions: violations queue up in a bounded channel, read with get(timeout) or by
iterating, the GIL released while waiting."""

from __future__ import annotations

import _thread
import threading
import time
from typing import Any, Dict, List

import pytest

import dcgm

XID = dcgm.PolicyCondition.XID
XID_AT_300MS = {"events": [{"at_ms": 300, "gpu": 1, "kind": "xid", "value": 79}]}
THREE_XIDS = {
    "events": [
        {"at_ms": 300, "gpu": 0, "kind": "xid", "value": 31},
        {"at_ms": 350, "gpu": 1, "kind": "xid", "value": 43},
        {"at_ms": 400, "gpu": 2, "kind": "xid", "value": 79},
    ]
}


def wait_for(cond: Any, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return bool(cond())


def test_get_returns_the_violation_as_the_callback_gets_it(sim_config: Any) -> None:
    sim_config(XID_AT_300MS)
    with dcgm.Handle.embedded(simulate=True) as h:
        with h.all_gpus().policy_subscribe(XID, capacity=16) as sub:
            assert isinstance(sub, dcgm.PolicySubscription)
            assert (sub.active, sub.capacity, sub.conditions) == (True, 16, XID)
            v = sub.get(timeout=10.0)
            assert v is not None, "no violation delivered"
            assert sub.get(timeout=0) is None  # nothing more: None, at once
            assert sub.dropped == 0
        assert not sub.active
        assert sub.get() is None, "closed and drained: None without waiting"
        assert list(sub) == []
        sub.close()  # twice is fine
    assert v is not None
    assert (v["gpu"], v["condition"], v["condition_name"], v["xid"]) == (1, XID, "XID", 79)
    assert v["timestamp_us"] > 0 and "XID 79" in v["message"]


def test_iterating_yields_violations_in_order_until_closed(sim_config: Any) -> None:
    sim_config(THREE_XIDS)
    got: List[Dict[str, Any]] = []
    with dcgm.Handle.embedded(simulate=True) as h:
        sub = h.all_gpus().policy_subscribe(XID)
        assert sub.capacity == 1024
        # A watchdog closes the subscription from another thread: that ends the iteration.
        closer = threading.Timer(5.0, sub.close)
        closer.start()
        try:
            for v in sub:
                got.append(v)
                if len(got) == 3:
                    break
        finally:
            closer.cancel()
        sub.close()
    assert [(v["gpu"], v["xid"]) for v in got] == [(0, 31), (1, 43), (2, 79)]


def test_close_from_another_thread_wakes_a_blocked_get() -> None:
    with dcgm.Handle.embedded(simulate=True) as h:
        sub = h.all_gpus().policy_subscribe(dcgm.PolicyCondition.DBE)  # never violated here
        threading.Timer(0.3, sub.close).start()
        t0 = time.monotonic()
        assert sub.get() is None
        assert 0.25 < time.monotonic() - t0 < 5.0
        assert not sub.active


def test_a_full_channel_drops_and_counts(sim_config: Any) -> None:
    sim_config(THREE_XIDS)
    with dcgm.Handle.embedded(simulate=True) as h:
        sub = h.all_gpus().policy_subscribe(XID, capacity=1)
        assert wait_for(lambda: sub.dropped >= 2), "the two later violations must be dropped"
        first = sub.get(timeout=1.0)
        assert first is not None and (first["gpu"], first["xid"]) == (0, 31)
        assert sub.get(timeout=0.05) is None
        sub.close()
        assert sub.dropped == 2, "the count outlives close()"
        assert "dropped=2" in repr(sub)


def test_the_gil_is_released_while_waiting() -> None:
    ticks = [0]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            ticks[0] += 1

    with dcgm.Handle.embedded(simulate=True) as h:
        with h.all_gpus().policy_subscribe(dcgm.PolicyCondition.DBE) as sub:
            spinner = threading.Thread(target=spin)
            spinner.start()
            t0 = time.monotonic()
            got = sub.get(timeout=0.4)
            elapsed = time.monotonic() - t0
            stop.set()
            spinner.join()
    assert got is None and elapsed >= 0.35
    assert ticks[0] > 1000, "the GIL was held while waiting"


def test_bad_arguments(handle: dcgm.Handle) -> None:
    g = handle.all_gpus()
    with pytest.raises(dcgm.structs.DCGMError_Badparam):
        g.policy_subscribe(XID, capacity=0)
    with pytest.raises(dcgm.structs.DCGMError_Badparam):
        g.policy_subscribe(0)
    with g.policy_subscribe(XID) as sub:
        with pytest.raises(dcgm.structs.DCGMError_Badparam):
            g.policy_subscribe(XID)  # overlaps: DCGM unregisters per group and condition
        with pytest.raises(dcgm.structs.DCGMError_Badparam):
            sub.get(timeout=-1.0)


def test_ctrl_c_interrupts_a_blocked_get(ctrl_c: None) -> None:
    with dcgm.Handle.embedded(simulate=True) as h:
        with h.all_gpus().policy_subscribe(dcgm.PolicyCondition.DBE) as sub:  # never violated here
            # Late enough that the main thread is waiting in get() even on a loaded machine.
            threading.Timer(0.5, _thread.interrupt_main).start()
            with pytest.raises(KeyboardInterrupt):
                sub.get()
            assert sub.active
