"""Process and job statistics, as dicts: what both share sits flat in each per-GPU dict. The
default simulated node runs process 4242 on GPUs 0-6 (62000 MiB on each) and 5151 on GPU 7."""

from __future__ import annotations

import pytest

import dcgm

MIB = 1 << 20
# Keys process and job statistics share, flat in each per-GPU dict.
USAGE_KEYS = {
    "energy_joules", "max_memory_bytes", "sm_util", "mem_util", "pcie_rx", "pcie_tx",
    "sm_clock_mhz", "mem_clock_mhz", "start_time", "end_time", "pcie_replays",
    "ecc_single_bit", "ecc_double_bit", "xid_count", "xid_times", "violations",
    "overall_health", "incident_count",
}
QUIET = {"pcie_replays": 0, "ecc_single_bit": 0, "ecc_double_bit": 0, "xid_count": 0, "xid_times": [],
         "overall_health": "PASS", "incident_count": 0}
NO_VIOLATION = {k: 0.0 for k in ("power", "thermal", "reliability", "board_limit", "low_utilization", "sync_boost")}


def assert_summary_within(s: dict, low: float, high: float) -> None:
    """min <= average <= max (the average to rounding), all within [low, high]."""
    assert low <= s["min"] <= s["max"] <= high, s
    assert s["min"] - 1e-6 <= s["average"] <= s["max"] + 1e-6, s


def assert_quiet_usage(u: dict, max_memory_bytes: int) -> None:
    assert {k: u[k] for k in QUIET} == QUIET
    assert u["violations"] == NO_VIOLATION
    assert u["max_memory_bytes"] == max_memory_bytes
    assert u["mem_clock_mhz"] == {"min": 2619.0, "max": 2619.0, "average": 2619.0}
    assert_summary_within(u["sm_clock_mhz"], 210.0, 1980.0)  # an H100 clocks its SMs down when idle
    assert_summary_within(u["sm_util"], 0.0, 100.0)
    assert_summary_within(u["mem_util"], 0.0, 100.0)


def test_pid_info_reports_the_process_on_each_of_its_gpus(handle: dcgm.Handle) -> None:
    g = handle.all_gpus()
    g.watch_pid_fields(update_interval=1.0)
    handle.update_all_fields()
    info = g.pid_info(4242)
    assert info["pid"] == 4242
    assert [x["gpu"] for x in info["gpus"]] == list(range(7))
    for x in info["gpus"]:
        assert set(x) == USAGE_KEYS | {
            "gpu", "process_sm_util", "process_mem_util", "other_compute_pids", "other_graphics_pids"
        }
        assert (x["other_compute_pids"], x["other_graphics_pids"]) == ([], [])
        assert x["energy_joules"] > 0 and x["start_time"] > 0 and x["end_time"] is None
        assert_quiet_usage(x, 62000 * MIB)
    assert info["summary"]["gpu"] is None
    assert_quiet_usage(info["summary"], 62000 * MIB)
    assert [x["gpu"] for x in g.pid_info(5151)["gpus"]] == [7]
    with pytest.raises(dcgm.structs.DCGMError_NoData):
        g.pid_info(1)  # no such process


def test_job_stats_cover_the_job_s_gpus_and_processes_until_removed(handle: dcgm.Handle) -> None:
    g = handle.all_gpus()
    g.watch_job_fields(update_interval=1.0)
    g.job_start("pytest-job")
    g.job_start("other-job")
    handle.update_all_fields()
    handle.job_stop("pytest-job")
    job = handle.job_stats("pytest-job")
    assert set(job) == {"gpus", "summary"}
    assert [x["gpu"] for x in job["gpus"]] == list(range(8))
    assert [[p["pid"] for p in x["compute_processes"]] for x in job["gpus"]] == [[4242]] * 7 + [[5151]]
    for x in job["gpus"]:
        assert set(x) == USAGE_KEYS | {"gpu", "power_w", "compute_processes", "graphics_processes"}
        assert x["graphics_processes"] == []
        assert_summary_within(x["power_w"], 50.0, 700.0)
        assert_quiet_usage(x, (62000 if x["gpu"] < 7 else 9000) * MIB)
    s = job["summary"]
    assert s["gpu"] is None and [p["pid"] for p in s["compute_processes"]] == [4242, 5151]
    assert s["end_time"] >= s["start_time"] > 0
    assert_quiet_usage(s, 62000 * MIB)
    handle.job_remove("pytest-job")
    with pytest.raises(dcgm.structs.DCGMError_NoData):
        handle.job_stats("pytest-job")
    handle.job_stop("other-job")
    assert [x["gpu"] for x in handle.job_stats("other-job")["gpus"]] == list(range(8))
    handle.job_remove_all()
    with pytest.raises(dcgm.structs.DCGMError_NoData):
        handle.job_stats("other-job")
