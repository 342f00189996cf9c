#!/usr/bin/env python3
"""Latest values of the 30 default DcgmReader fields on 8 simulated GPUs, read from Python
through the wheel: the upstream-compatible DcgmReader dict form and the snake_case Reader, and,
in the same run, NVIDIA's own DcgmReader on the same simulator where its Python bindings are
given (they are not installable from PyPI):

    python python/bench/bench_latest.py                                   # after installing the wheel
    DCGM_NVIDIA_PY=/path/to/DCGM/testing/python3 python python/bench/bench_latest.py
"""

import os
import subprocess
import sys
import tempfile
import timeit

import dcgm

N = 3000


def best_of(f, rounds: int = 5) -> float:
    """Microseconds per call, the best of `rounds` rounds of N calls."""
    f()
    return min(timeit.timeit(f, number=N) / N * 1e6 for _ in range(rounds))


NVIDIA = """
import sys, timeit
sys.path.insert(0, sys.argv[1])
import dcgm_structs
dcgm_structs._LoadDcgmLibrary(sys.argv[2])
from DcgmReader import DcgmReader
r = DcgmReader(hostname=None)
f = r.GetLatestGpuValuesAsFieldIdDict
f()
n = int(sys.argv[3])
print(min(timeit.timeit(f, number=n) / n * 1e6 for _ in range(5)))
r.Shutdown()
"""


def nvidia(path: str) -> float:
    """NVIDIA's DcgmReader on the wheel's simulator, in a process of its own (libdcgm's init
    and shutdown are process-wide)."""
    with tempfile.TemporaryDirectory() as d:
        os.symlink(dcgm.simulator_path(), os.path.join(d, "libdcgm.so.4"))
        out = subprocess.run(
            [sys.executable, "-c", NVIDIA, path, d, str(N // 10)],
            capture_output=True, text=True, check=True,
        )
        return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    reader = dcgm.DcgmReader(simulate=True, hostname=None)
    ours = best_of(reader.GetLatestGpuValuesAsFieldIdDict)
    print(f"dcgm DcgmReader.GetLatestGpuValuesAsFieldIdDict: {ours:.1f} us per call (30 fields x 8 GPUs)")
    reader.Shutdown()

    r = dcgm.Reader(simulate=True)
    print(f"dcgm.Reader.latest: {best_of(r.latest):.1f} us per call (30 fields x 8 GPUs)")
    r.close()

    path = os.environ.get("DCGM_NVIDIA_PY")
    if path:
        theirs = nvidia(path)
        print(f"NVIDIA DcgmReader.GetLatestGpuValuesAsFieldIdDict: {theirs:.1f} us per call, same simulator")
        print(f"ratio: {theirs / ours:.1f}x")
    else:
        print("NVIDIA's DcgmReader: not measured (set DCGM_NVIDIA_PY to DCGM's testing/python3)")


if __name__ == "__main__":
    main()
