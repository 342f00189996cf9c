#!/usr/bin/env python3
"""Latest values of the 30 default DcgmReader fields on every GPU (8 simulated ones by default),
read from Python through the wheel: the upstream-compatible DcgmReader dict form and the
snake_case Reader, and, in the same run, NVIDIA's own DcgmReader on the same library where its
Python bindings are given (they are not installable from PyPI):

    python python/bench/bench_latest.py                                   # after installing the wheel
    DCGM_NVIDIA_PY=/path/to/DCGM/testing/python3 python python/bench/bench_latest.py
    DCGM_BENCH_LIB=/opt/dcgm/lib python python/bench/bench_latest.py      # a real libdcgm.so.4 instead

DCGM_BENCH_LIB names the directory of a real libdcgm.so.4; both readers then load it (embedded
engine) instead of the wheel's simulator.
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


def nvidia(path: str, lib_dir: "str | None") -> float:
    """NVIDIA's DcgmReader on the same library, in a process of its own (libdcgm's init
    and shutdown are process-wide)."""
    with tempfile.TemporaryDirectory() as d:
        if lib_dir is None:
            os.symlink(dcgm.simulator_path(), os.path.join(d, "libdcgm.so.4"))
            lib_dir = d
        out = subprocess.run(
            [sys.executable, "-c", NVIDIA, path, lib_dir, str(N // 10)],
            capture_output=True, text=True, check=True,
        )
        return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    lib_dir = os.environ.get("DCGM_BENCH_LIB")
    if lib_dir:
        lib = os.path.join(lib_dir, "libdcgm.so.4")
        what, ours_kw, reader_kw = "real libdcgm at " + lib, {"libraryPath": lib}, {"library_path": lib}
    else:
        what, ours_kw, reader_kw = "simulator", {"simulate": True}, {"simulate": True}
    reader = dcgm.DcgmReader(hostname=None, **ours_kw)
    shape = reader.GetLatestGpuValuesAsFieldIdDict()
    size = f"30 default fields ({len(next(iter(shape.values())))} with a value) x {len(shape)} GPUs, {what}"
    ours = best_of(reader.GetLatestGpuValuesAsFieldIdDict)
    print(f"dcgm DcgmReader.GetLatestGpuValuesAsFieldIdDict: {ours:.1f} us per call ({size})")
    reader.Shutdown()

    r = dcgm.Reader(**reader_kw)
    print(f"dcgm.Reader.latest: {best_of(r.latest):.1f} us per call ({size})")
    r.close()

    path = os.environ.get("DCGM_NVIDIA_PY")
    if path:
        theirs = nvidia(path, lib_dir)
        print(f"NVIDIA DcgmReader.GetLatestGpuValuesAsFieldIdDict: {theirs:.1f} us per call, same library")
        print(f"ratio: {theirs / ours:.1f}x")
    else:
        print("NVIDIA's DcgmReader: not measured (set DCGM_NVIDIA_PY to DCGM's testing/python3)")


if __name__ == "__main__":
    main()
