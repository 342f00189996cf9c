"""Health watches, diagnostics, process and job statistics, as plain dicts."""

from __future__ import annotations

import dcgm


def test_health(handle: dcgm.Handle) -> None:
    g = handle.group("health", gpus=[0, 1])
    g.health_set(dcgm.HealthSystem.MEM | dcgm.HealthSystem.PCIE)
    assert dcgm.HealthSystem(g.health_get()) == dcgm.HealthSystem.MEM | dcgm.HealthSystem.PCIE
    g.health_set(dcgm.HealthSystem.THERMAL, update_interval=1.0, max_keep_age=60.0)
    assert g.health_get() == dcgm.HealthSystem.THERMAL
    report = g.health_check()
    assert set(report) == {"overall", "healthy", "incidents"}
    assert report["overall"] in ("PASS", "WARN", "FAIL") and isinstance(report["incidents"], list)


def test_diagnostic(handle: dcgm.Handle) -> None:
    g = handle.group("diag", gpus=[0])
    r = g.run_diagnostic(1)
    assert r["overall"] in ("PASS", "SKIP", "WARN", "FAIL", "NOT RUN")
    assert r["tests"] and {"name", "plugin", "result", "results", "errors", "info"} <= set(r["tests"][0])
    for entity, result in r["tests"][0]["results"]:
        assert entity == (dcgm.EntityGroup.GPU, 0) and isinstance(result, str)
    assert isinstance(r["other_errors"], list)


# Keys process and job statistics share, flat in each per-GPU dict.
USAGE_KEYS = {
    "energy_joules", "max_memory_bytes", "sm_util", "mem_util", "pcie_rx", "pcie_tx",
    "sm_clock_mhz", "mem_clock_mhz", "start_time", "end_time", "pcie_replays",
    "ecc_single_bit", "ecc_double_bit", "xid_count", "xid_times", "violations",
    "overall_health", "incident_count",
}


def test_pid_and_job_stats(handle: dcgm.Handle) -> None:
    g = handle.all_gpus()
    g.watch_pid_fields(update_interval=1.0)
    g.watch_job_fields(update_interval=1.0)
    g.job_start("pytest-job")
    handle.update_all_fields()
    info = g.pid_info(4242)  # a process of the default simulated node
    assert info["pid"] == 4242 and info["gpus"]
    assert set(info["gpus"][0]) == USAGE_KEYS | {
        "gpu", "process_sm_util", "process_mem_util", "other_compute_pids", "other_graphics_pids"
    }
    assert info["gpus"][0]["energy_joules"] > 0 and info["summary"]["gpu"] is None
    assert set(info["gpus"][0]["sm_util"]) == {"min", "max", "average"}
    handle.job_stop("pytest-job")
    job = handle.job_stats("pytest-job")
    assert len(job["gpus"]) == 8 and "summary" in job
    assert set(job["gpus"][0]) == USAGE_KEYS | {
        "gpu", "power_w", "compute_processes", "graphics_processes"
    }
    assert job["summary"]["end_time"] >= job["summary"]["start_time"] > 0
    handle.job_remove("pytest-job")
    handle.job_remove_all()
