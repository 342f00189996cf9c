"""Reader.run(interval, handler, count) and Reader.snapshots(interval, count): a snapshot every
interval, the GIL released while reading and waiting."""

from __future__ import annotations

import _thread
import threading
import time
from typing import Any, Dict, List, Tuple

import pytest

import dcgm

Snapshot = Dict[Tuple[int, int], Dict[int, dcgm.FieldValue]]


def check_snapshot(snap: Snapshot) -> None:
    assert sorted(snap) == [(dcgm.EntityGroup.GPU, i) for i in range(8)]
    v = snap[(1, 0)][150]
    assert (v.entity, v.field_id, v.blank) == ((dcgm.EntityGroup.GPU, 0), 150, None)
    assert isinstance(v.value, int) and 25 <= v.value <= 95  # gpu_temp in °C


def test_run_calls_the_handler_count_times_an_interval_apart() -> None:
    seen: List[Snapshot] = []
    times: List[float] = []

    def handler(snap: Snapshot) -> None:
        times.append(time.monotonic())
        seen.append(snap)

    with dcgm.Reader(["gpu_temp"], update_interval=0.05, simulate=True) as r:
        assert r.run(0.15, handler, count=3) == 3
        assert r.run(0.15, handler, count=0) == 0
    assert len(seen) == 3
    for snap in seen:
        check_snapshot(snap)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert all(g >= 0.14 for g in gaps), gaps


def test_run_stops_when_the_handler_returns_false_or_closes_the_reader() -> None:
    calls = [0]

    def twice(snap: Snapshot) -> bool:
        calls[0] += 1
        return calls[0] < 2  # None or True go on; False stops

    with dcgm.Reader(["gpu_temp"], simulate=True) as r:
        assert r.run(0.01, twice) == 2

        def uses_then_closes(snap: Snapshot) -> None:
            assert sorted(r.latest_by_id()) == list(range(8))  # the reader is free in the handler
            r.close()

        assert r.run(0.01, uses_then_closes) == 1
        assert r.run(0.01, uses_then_closes) == 0  # closed: nothing to read


def test_run_propagates_the_handler_s_exception() -> None:
    def broken(snap: Snapshot) -> None:
        raise KeyError("handler bug")

    with dcgm.Reader(["gpu_temp"], simulate=True) as r:
        with pytest.raises(KeyError, match="handler bug"):
            r.run(0.01, broken)
        with pytest.raises(TypeError):
            r.run(0.01, "not callable")  # type: ignore[arg-type]
        with pytest.raises(dcgm.structs.DCGMError_Badparam):
            r.run(-1.0, broken)


def test_snapshots_iterator() -> None:
    with dcgm.Reader(["gpu_temp"], update_interval=0.05, simulate=True) as r:
        it = r.snapshots(0.1, count=3)
        assert isinstance(it, dcgm.Snapshots) and it.interval == pytest.approx(0.1) and it.remaining == 3
        t0 = time.monotonic()
        snaps = list(it)
        elapsed = time.monotonic() - t0
        assert it.remaining == 0 and list(it) == []
        endless = r.snapshots(0.05)
        assert endless.remaining is None
        check_snapshot(next(endless))
        threading.Timer(0.2, r.close).start()
        more = list(endless)  # ends when the reader is closed
    assert len(snaps) == 3 and elapsed >= 0.19
    for s in snaps:
        check_snapshot(s)
    assert 1 <= len(more) <= 10


def test_the_gil_is_released_while_waiting() -> None:
    ticks = [0]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            ticks[0] += 1

    spinner = threading.Thread(target=spin)
    with dcgm.Reader(["gpu_temp"], simulate=True) as r:
        r.connect()
        spinner.start()
        try:
            snaps: List[Any] = [s for s in r.snapshots(0.2, count=3)]
        finally:
            stop.set()
            spinner.join()
    assert len(snaps) == 3
    assert ticks[0] > 1000, "the GIL was held while waiting between snapshots"


def test_ctrl_c_interrupts_the_wait_between_snapshots(ctrl_c: None) -> None:
    with dcgm.Reader(["gpu_temp"], simulate=True) as r:
        threading.Timer(0.3, _thread.interrupt_main).start()
        with pytest.raises(KeyboardInterrupt):
            r.run(60.0, lambda snap: None)
