#!/usr/bin/env python3
"""Latest values of the 30 default DcgmReader fields on 8 simulated GPUs, read from Python
through the wheel: the upstream-compatible DcgmReader dict form and the snake_case Reader.

    python python/bench/bench_latest.py            # after installing the wheel
"""

import timeit

import dcgm


def main() -> None:
    n = 2000
    reader = dcgm.DcgmReader(simulate=True, hostname=None)
    reader.GetLatestGpuValuesAsFieldIdDict()
    t = timeit.timeit(reader.GetLatestGpuValuesAsFieldIdDict, number=n)
    print(f"DcgmReader.GetLatestGpuValuesAsFieldIdDict: {t / n * 1e6:.1f} us per call (30 fields x 8 GPUs)")
    reader.Shutdown()

    r = dcgm.Reader(simulate=True)
    r.latest()
    t = timeit.timeit(r.latest, number=n)
    print(f"dcgm.Reader.latest: {t / n * 1e6:.1f} us per call (30 fields x 8 GPUs)")


if __name__ == "__main__":
    main()
