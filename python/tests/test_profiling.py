"""Profiling: the metric groups of a simulated Hopper GPU, and pausing profiling."""

from __future__ import annotations

import time

import pytest

import dcgm
import dcgm.fields as F

HOPPER_METRIC_GROUPS = [
    {"major": 0, "minor": 0, "fields": [F.DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO]},
    {"major": 0, "minor": 1, "fields": [F.DCGM_FI_PROF_SM_UTIL_RATIO, F.DCGM_FI_PROF_SM_OCCUPANCY_RATIO]},
    {
        "major": 0,
        "minor": 2,
        "fields": [
            F.DCGM_FI_PROF_TENSOR_UTIL_RATIO, F.DCGM_FI_PROF_DRAM_UTIL_RATIO, F.DCGM_FI_PROF_FP64_UTIL_RATIO,
            F.DCGM_FI_PROF_FP32_UTIL_RATIO, F.DCGM_FI_PROF_FP16_UTIL_RATIO,
        ],
    },
    {"major": 1, "minor": 0, "fields": [F.DCGM_FI_PROF_PCIE_TX_BYTES, F.DCGM_FI_PROF_PCIE_RX_BYTES]},
    {"major": 2, "minor": 0, "fields": [F.DCGM_FI_PROF_NVLINK_TX_BYTES, F.DCGM_FI_PROF_NVLINK_RX_BYTES]},
]


def test_metric_groups_of_a_gpu_and_of_a_group(handle: dcgm.Handle) -> None:
    assert handle.system().profiling_metric_groups(0) == HOPPER_METRIC_GROUPS
    assert handle.all_gpus().profiling_metric_groups() == HOPPER_METRIC_GROUPS


def test_profiling_cannot_be_paused_on_gpm_gpus(handle: dcgm.Handle) -> None:
    g = handle.group("profiling", gpus=[0])
    fields = [F.DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO, F.DCGM_FI_PROF_NVLINK_TX_BYTES]
    fg = handle.field_group("profiling-fields", fields)

    def sample() -> dict:
        time.sleep(0.1)  # a sample newer than the last one
        handle.update_all_fields()
        return {v.field_id: v for v in g.latest_values(fg)}

    with g.watch(fg, update_interval=0.05):
        running = sample()
        assert 0.0 < running[fields[0]].value <= 1.0 and running[fields[1]].value > 0
        # As libdcgm 4.6.0 on Hopper: the metrics come from GPM, which cannot be paused.
        with pytest.raises(dcgm.structs.DCGMError_NotSupported):
            handle.profiling_pause()
        with pytest.raises(dcgm.structs.DCGMError_NotSupported):
            handle.profiling_resume()
        resumed = sample()
        assert 0.0 < resumed[fields[0]].value <= 1.0 and resumed[fields[1]].value > 0
