"""Several Python threads read at once; the GIL is released during every DCGM call."""

from __future__ import annotations

import threading
import time
from typing import Any, List, Tuple

import dcgm

SLOW_MS = 40


def test_threads_read_in_parallel_with_the_gil_released(sim_config: Any) -> None:
    # Every simulated call takes SLOW_MS: four threads doing CALLS reads each finish in about
    # CALLS * SLOW_MS only if they wait for the library at the same time, GIL released.
    sim_config({"faults": {"slow_ms": SLOW_MS}})
    threads_n, calls = 4, 6
    with dcgm.Handle.embedded(simulate=True) as h:
        g = h.all_gpus()
        fg = h.field_group("threads", [150, 155])
        w = g.watch(fg)
        h.update_all_fields()
        errors: List[BaseException] = []
        counts = [0] * threads_n
        ticks = [0]
        stop = threading.Event()

        def spin() -> None:  # pure Python: only runs while the readers do not hold the GIL
            while not stop.is_set():
                ticks[0] += 1

        def read(i: int) -> None:
            try:
                for _ in range(calls):
                    vals = g.latest_values(fg)
                    assert len(vals) == 16 and not any(v.is_blank for v in vals)
                    counts[i] += 1
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        spinner = threading.Thread(target=spin)
        spinner.start()
        workers = [threading.Thread(target=read, args=(i,)) for i in range(threads_n)]
        t0 = time.monotonic()
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        elapsed = time.monotonic() - t0
        stop.set()
        spinner.join()
        w.close()
    assert not errors, errors
    assert counts == [calls] * threads_n
    serial = threads_n * calls * SLOW_MS / 1000.0
    assert elapsed < 0.6 * serial, "reads did not overlap: %.2fs for %.2fs of serial work" % (elapsed, serial)
    assert ticks[0] > 1000, "the GIL was held during DCGM calls"


def test_readers_in_threads(sim_config: Any) -> None:
    sim_config(None)
    results: List[Any] = []
    errors: List[BaseException] = []

    def run() -> None:
        try:
            with dcgm.Reader(["gpu_temp"], simulate=True, embedded=True) as r:
                for _ in range(5):
                    results.append(r.latest_by_id())
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 20 and all(sorted(r) == list(range(8)) for r in results)


def test_one_reader_shared_by_threads_repeats_no_sample() -> None:
    errors: List[BaseException] = []
    latest: List[Any] = []
    since: List[Tuple[Tuple[int, int], int, int]] = []
    with dcgm.Reader(["gpu_temp", "power_usage"], update_interval=0.02, simulate=True) as r:

        def run() -> None:
            try:
                for _ in range(10):
                    got = r.since_last_call()
                    since.extend((e, f, v.timestamp_us) for e, fields in got.items() for f, vs in fields.items() for v in vs)
                    latest.append(r.latest())
                    time.sleep(0.005)
            except BaseException as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
    assert len(latest) == 40
    for snap in latest:
        assert sorted(snap) == [(dcgm.EntityGroup.GPU, i) for i in range(8)]
        assert all(set(fields) == {150, 155} for fields in snap.values())
    # Every caller gets the samples since the previous call, whoever made it: none twice.
    assert since and len(set(since)) == len(since)
    assert {e for e, _, _ in since} == {(dcgm.EntityGroup.GPU, i) for i in range(8)}
