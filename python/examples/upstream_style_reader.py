#!/usr/bin/env python3
"""Watches GPU temperature, power, memory and utilisation with a DcgmReader subclass, the way
scripts written for NVIDIA's DcgmReader.py do: override CustomFieldHandler, call Process()
periodically, and read the Get...Dict forms.

Only the imports differ between NVIDIA's bindings and the `dcgm` wheel. To run it without a
GPU, point libdcgm's search at the simulator shipped in the wheel:

    DCGM_LIB_PATH=$(python -c 'import dcgm; print(dcgm.simulator_path())') \
        python upstream_style_reader.py --count 3
"""

import argparse
import time

# With NVIDIA's bindings (datacenter-gpu-manager-4), use these imports instead:
#   import sys
#   sys.path.append("/usr/share/datacenter-gpu-manager-4/bindings/python3")
#   from DcgmReader import DcgmReader
#   import dcgm_fields
#   import dcgm_structs
from dcgm import DcgmReader
import dcgm.fields as dcgm_fields
import dcgm.structs as dcgm_structs

WATCHED = [
    dcgm_fields.DCGM_FI_DEV_GPU_TEMP,
    dcgm_fields.DCGM_FI_DEV_POWER_USAGE,
    dcgm_fields.DCGM_FI_DEV_FB_USED,
    dcgm_fields.DCGM_FI_DEV_GPU_UTIL,
    dcgm_fields.DCGM_FI_DEV_SM_CLOCK,
]
# Read (and kept by DCGM) but not handed to CustomFieldHandler.
NOT_REPORTED = [dcgm_fields.DCGM_FI_DEV_SM_CLOCK]


class GpuWatcher(DcgmReader):
    """Prints each field and remembers the GPUs that ran hotter than a limit."""

    def __init__(self, temperatureLimit, **kwargs):
        DcgmReader.__init__(self, **kwargs)
        self.temperatureLimit = temperatureLimit
        self.hotGpus = {}

    def CustomFieldHandler(self, gpuId, fieldId, fieldTag, val):
        if fieldId == dcgm_fields.DCGM_FI_DEV_GPU_TEMP and val.value > self.temperatureLimit:
            self.hotGpus[gpuId] = max(val.value, self.hotGpus.get(gpuId, 0))
        print("  GPU %d (%s) %-18s %s" % (gpuId, self.m_gpuIdToBusId.get(gpuId, "?"), fieldTag, val.value))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3, help="Process() cycles")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between cycles")
    parser.add_argument("--limit", type=int, default=40, help="temperature limit in C")
    args = parser.parse_args()

    watcher = GpuWatcher(
        args.limit,
        fieldIds=WATCHED,
        ignoreList=NOT_REPORTED,
        updateFrequency=int(args.interval * 1000000),
        maxKeepAge=600.0,
        gpuIds=[0, 1],
    )
    try:
        for cycle in range(args.count):
            print("cycle %d" % (cycle + 1))
            watcher.Process()
            time.sleep(args.interval)

        print("latest values by field name:")
        for gpuId, values in sorted(watcher.GetLatestGpuValuesAsFieldNameDict().items()):
            print("  GPU %d: %s" % (gpuId, ", ".join("%s=%s" % kv for kv in sorted(values.items()))))

        watcher.GetAllGpuValuesAsFieldIdDictSinceLastCall()
        time.sleep(args.interval)
        print("samples since the previous call:")
        for gpuId, series in sorted(watcher.GetAllGpuValuesAsFieldIdDictSinceLastCall().items()):
            for fieldId, samples in sorted(series.items()):
                print(
                    "  GPU %d %-18s %d sample(s), last %s at %d"
                    % (gpuId, dcgm_fields.DcgmFieldGetTagById(fieldId), len(samples), samples[-1].value, samples[-1].ts)
                )

        for gpuId, peak in sorted(watcher.hotGpus.items()):
            print("GPU %d (%s) reached %d C (limit %d C)" % (gpuId, watcher.m_gpuIdToUUId[gpuId], peak, args.limit))
    except dcgm_structs.dcgmExceptionClass(dcgm_structs.DCGM_ST_CONNECTION_NOT_VALID):
        print("nv-hostengine is not reachable")
    finally:
        watcher.Shutdown()


if __name__ == "__main__":
    main()
