#!/usr/bin/env python3
"""NVIDIA's Python API against dcgm.compat, the same program text on both: each case runs in a
process of its own, once with NVIDIA's bindings on PYTHONPATH and once through
``python -m dcgm.compat``, on the same library (the wheel's simulator, or the real libdcgm
named by DCGM_BENCH_LIB), and prints microseconds per call, best of 5 rounds:

    DCGM_NVIDIA_PY=../shared/nvidia-bindings-4.6.0/bindings/python3 python python/bench/bench_compat.py
    DCGM_BENCH_LIB=/path/to/realdcgm/lib DCGM_NVIDIA_PY=... python python/bench/bench_compat.py

DCGM_BENCH_SIM names the simulator file to use instead of the wheel's (a debug wheel packs a
debug build of dcgm-sim, whose own cost then hides the bindings': build one with
``cargo build --release -p dcgm-sim`` and pass target/release/libdcgm_sim.so).

Cases: ``dcgm_agent.dcgmEntitiesGetLatestValues`` of the 30 default DcgmReader fields on every
GPU (8 on the simulator), ``DcgmGroup.samples.GetLatest_v2`` of the same, and
``DcgmReader.GetLatestGpuValuesAsFieldIdDict``. Without DCGM_NVIDIA_PY only ours is measured.
"""

import os
import subprocess
import sys
import tempfile

import dcgm

CASES = ("agent", "samples", "reader")

PROGRAM = r"""
import sys, timeit
import dcgm_structs, dcgm_agent, dcgm_fields, pydcgm, DcgmFieldGroup, DcgmReader
case, n = sys.argv[1], int(sys.argv[2])
fields = list(DcgmReader.defaultFieldIds)
if case == "reader":
    r = DcgmReader.DcgmReader(hostname=None)  # the embedded engine, on both bindings
    f = r.GetLatestGpuValuesAsFieldIdDict
else:
    handle = pydcgm.DcgmHandle(opMode=dcgm_structs.DCGM_OPERATION_MODE_AUTO)
    system = handle.GetSystem()
    gpus = system.discovery.GetAllSupportedGpuIds()
    group = pydcgm.DcgmGroup(handle, groupName="bench", groupType=dcgm_structs.DCGM_GROUP_EMPTY)
    for g in gpus:
        group.AddGpu(g)
    fg = DcgmFieldGroup.DcgmFieldGroup(handle, name="bench_fields", fieldIds=fields)
    group.samples.WatchFields(fg, 1000000, 3600.0, 0)
    handle.GetSystem().UpdateAllFields(True)
    if case == "agent":
        entities = []
        for g in gpus:
            e = dcgm_structs.c_dcgmGroupEntityPair_t()
            e.entityGroupId = dcgm_fields.DCGM_FE_GPU
            e.entityId = g
            entities.append(e)
        f = lambda: dcgm_agent.dcgmEntitiesGetLatestValues(handle.handle, entities, fields, 0)
    else:
        f = lambda: group.samples.GetLatest_v2(fg)
f()
print(min(timeit.timeit(f, number=n) / n * 1e6 for _ in range(5)))
"""


def run(case: str, ours: bool, nvidia_dir: "str | None", lib_dir: "str | None", n: int) -> float:
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "bench_case.py")
        with open(script, "w") as f:
            f.write(PROGRAM)
        env = dict(os.environ)
        sim = os.environ.get("DCGM_BENCH_SIM") or dcgm.simulator_path()
        if ours:
            if lib_dir:
                lib = ["--library", os.path.join(lib_dir, "libdcgm.so.4")]
            elif os.environ.get("DCGM_BENCH_SIM"):
                lib = ["--library", sim]
            else:
                lib = ["--simulate"]
            cmd = [sys.executable, "-m", "dcgm.compat", *lib, script, case, str(n)]
            # Where this `dcgm` is installed, and not NVIDIA's bindings.
            env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(dcgm.__file__)))
        else:
            if lib_dir is None:
                os.symlink(sim, os.path.join(d, "libdcgm.so.4"))
            env["PYTHONPATH"] = nvidia_dir or ""
            env["LD_LIBRARY_PATH"] = lib_dir or d
            cmd = [sys.executable, script, case, str(n)]
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=d)
        if out.returncode != 0:
            raise RuntimeError("%s (%s) failed:\n%s" % (case, "ours" if ours else "NVIDIA's", out.stderr[-2000:]))
        return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    lib_dir = os.environ.get("DCGM_BENCH_LIB")
    nvidia_dir = os.environ.get("DCGM_NVIDIA_PY")
    what = "real libdcgm in " + lib_dir if lib_dir else "simulator (8 GPUs, %s)" % (
        os.environ.get("DCGM_BENCH_SIM") or dcgm.simulator_path()
    )
    print("30 default fields x every GPU, %s; microseconds per call, best of 5" % what)
    print("%-48s %12s %12s %8s" % ("case", "NVIDIA's", "dcgm.compat", "ratio"))
    names = {
        "agent": "dcgm_agent.dcgmEntitiesGetLatestValues",
        "samples": "DcgmGroup.samples.GetLatest_v2",
        "reader": "DcgmReader.GetLatestGpuValuesAsFieldIdDict",
    }
    for case in CASES:
        n = 300 if case == "agent" else 100
        ours = run(case, True, nvidia_dir, lib_dir, n)
        if nvidia_dir:
            theirs = run(case, False, nvidia_dir, lib_dir, n)
            print("%-48s %12.1f %12.1f %7.1fx" % (names[case], theirs, ours, theirs / ours))
        else:
            print("%-48s %12s %12.1f %8s" % (names[case], "-", ours, "-"))


if __name__ == "__main__":
    main()
