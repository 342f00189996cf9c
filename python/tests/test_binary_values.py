"""The binary fields DCGM documents are decoded: the PID lists into dcgm.RunningProcess, the
accounting data into dcgm.AccountingStats, with pydcgm's attribute names too; other blobs stay
bytes."""

from __future__ import annotations

import struct
import time
from typing import Any, List

import pytest

import dcgm
import dcgm.fields as F

MIB = 1 << 20
RUNNING_PROCESS_V1 = 0x0100_0010  # sizeof 16, version 1
ACCOUNTING_STATS_V1 = 0x0100_0028  # sizeof 40, version 1


def test_compute_pids_in_the_snake_case_api(handle: dcgm.Handle) -> None:
    g = handle.all_gpus()
    fg = handle.field_group("pids", [F.DCGM_FI_DEV_COMPUTE_PIDS, F.DCGM_FI_DEV_GRAPHICS_PIDS])
    assert F.DCGM_FI_DEV_COMPUTE_PIDS == 221 and F.DCGM_FI_DEV_GRAPHICS_PIDS == 220
    with g.watch(fg, update_interval=0.1):
        handle.update_all_fields()
        values = g.latest_values(fg)
    compute = {v.entity_id: v for v in values if v.field_id == 221}
    p = compute[0].value
    assert isinstance(p, dcgm.RunningProcess)
    assert (p.pid, p.memory_used_bytes) == (4242, 62000 * MIB)
    assert (p.memoryUsed, p.version) == (62000 * MIB, RUNNING_PROCESS_V1)  # pydcgm's names
    assert p == dcgm.RunningProcess(4242, 62000 * MIB) and hash(p) == hash(dcgm.RunningProcess(4242, 62000 * MIB))
    assert repr(p) == "RunningProcess(pid=4242, memory_used_bytes=%d)" % (62000 * MIB)
    assert "RunningProcess(pid=4242" in repr(compute[0])
    last = compute[7].value
    assert isinstance(last, dcgm.RunningProcess) and last.pid == 5151
    raw = compute[0].raw_value
    assert isinstance(raw, bytes) and len(raw) == 16
    assert dcgm.RunningProcess.from_bytes(raw) == p
    assert struct.unpack("=IIQ", raw) == (RUNNING_PROCESS_V1, 4242, 62000 * MIB)
    graphics = [v for v in values if v.field_id == 220]
    assert graphics and all(v.is_blank for v in graphics), "no graphics process on the simulated node"


def test_compute_pids_in_the_reader() -> None:
    with dcgm.Reader([221, "gpu_temp"], update_interval=0.05, simulate=True) as r:
        by_id = r.latest_by_id()
        by_name = r.latest_by_name()
        time.sleep(0.15)
        since = r.since_last_call()
    p = by_id[0][221]
    assert isinstance(p, dcgm.RunningProcess) and (p.pid, p.memory_used_bytes) == (4242, 62000 * MIB)
    assert by_name[7]["compute_pids"] == dcgm.RunningProcess(5151, 9000 * MIB)
    temp = by_id[0][150]
    assert isinstance(temp, int) and 25 <= temp <= 95  # gpu_temp in °C, beside the decoded blob
    samples = since[(F.DCGM_FE_GPU, 0)][221]
    assert samples and all(s.value == p for s in samples)


def test_compute_pids_in_dcgm_reader() -> None:
    with dcgm.DcgmReader(fieldIds=[F.DCGM_FI_DEV_COMPUTE_PIDS], updateFrequency=50000, simulate=True) as r:
        latest = r.GetLatestGpuValuesAsFieldIdDict()
        since = r.GetAllGpuValuesAsFieldNameDictSinceLastCall()
    v = latest[0][221]
    assert (v.pid, v.memoryUsed) == (4242, 62000 * MIB)  # as pydcgm's c_dcgmRunningProcess_t
    series: List[Any] = since[0]["compute_pids"]
    assert series and all((s.value.pid, s.value.memoryUsed) == (4242, 62000 * MIB) for s in series)
    assert series[0].fieldType == "b"


def test_accounting_stats_decode() -> None:
    blob = struct.pack("=IIIIQQQ", ACCOUNTING_STATS_V1, 77, 50, 20, 3 * 1024 * MIB, 1_700_000_000_000_000, 5_000_000)
    assert len(blob) == 40
    a = dcgm.AccountingStats.from_bytes(blob)
    assert (a.pid, a.gpu_utilization, a.memory_utilization) == (77, 50, 20)
    assert (a.max_memory_bytes, a.start_time_us, a.active_time_us) == (3 * 1024 * MIB, 1_700_000_000_000_000, 5_000_000)
    # pydcgm's c_dcgmDevicePidAccountingStats_v1 names
    assert (a.gpuUtilization, a.memoryUtilization, a.maxMemoryUsage) == (50, 20, 3 * 1024 * MIB)
    assert (a.startTimestamp, a.activeTimeUsec, a.version) == (1_700_000_000_000_000, 5_000_000, ACCOUNTING_STATS_V1)
    assert a == dcgm.AccountingStats(77, 50, 20, 3 * 1024 * MIB, 1_700_000_000_000_000, 5_000_000)
    assert a != dcgm.AccountingStats(77)
    assert "pid=77" in repr(a)


@pytest.mark.parametrize(
    "cls, blob",
    [
        (dcgm.RunningProcess, b"\x01\x02"),  # too short
        (dcgm.RunningProcess, struct.pack("=IIQ", 0x0200_0010, 1, 2)),  # another version
        (dcgm.AccountingStats, struct.pack("=IIQ", RUNNING_PROCESS_V1, 1, 2)),  # another struct
    ],
)
def test_blobs_that_do_not_decode_are_refused(cls: Any, blob: bytes) -> None:
    with pytest.raises(ValueError):
        cls.from_bytes(blob)


def test_other_values_keep_their_type(handle: dcgm.Handle) -> None:
    g = handle.group("raw", gpus=[0])
    fg = handle.field_group("raw-values", ["gpu_temp", "power_usage", F.DCGM_FI_DEV_NAME])
    with g.watch(fg):
        handle.update_all_fields()
        vals = g.latest_values(fg)
    for v in vals:
        assert v.raw_value == v.value
    assert sorted(type(v.value).__name__ for v in vals) == ["float", "int", "str"]
