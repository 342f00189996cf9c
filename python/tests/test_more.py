"""Configuration, profiling, topology, NVLink, MIG, CPU, introspection, modules, GPU status."""

from __future__ import annotations

import gc

import pytest

import dcgm


def test_config(handle: dcgm.Handle) -> None:
    g = handle.group("config", gpus=[0, 1])
    g.config_set(power_limit_w=500, compute_mode="exclusive_process")
    target = g.config_get()
    assert [c["gpu"] for c in target] == [0, 1]
    assert all(c["power_limit_w"] == 500 and c["compute_mode"] == "exclusive_process" for c in target)
    assert len(g.config_get(current=True)) == 2
    g.config_enforce()


def test_topology_nvlink_mig_cpu(handle: dcgm.Handle) -> None:
    s = handle.system()
    t = s.device_topology(0)
    assert {p["gpu"] for p in t["paths"]} == set(range(1, 8))
    assert isinstance(handle.all_gpus().topology()["numa_optimal"], bool)
    assert len(s.select_gpus_by_topology(2)) == 2
    links = s.nvlink_status()
    assert sorted(links["gpus"]) == list(range(8)) and all(isinstance(x, str) for x in links["gpus"][0])
    assert isinstance(s.nvlink_p2p_status(), dict)
    mig = s.mig_hierarchy()
    assert [m["gpu"] for m in mig] == [7] and mig[0]["instances"]
    cpus = s.cpu_hierarchy()
    assert len(cpus) == 2 and cpus[0]["cores"]


def test_introspection_modules_status_profiling(handle: dcgm.Handle) -> None:
    s = handle.system()
    assert s.hostengine_memory_bytes() > 0
    assert set(s.hostengine_cpu_utilization()) == {"total", "kernel", "user"}
    assert "Core" in s.module_statuses()
    assert s.gpu_status(0) == "Ok"
    assert s.chip_architecture(0) == "Hopper"
    groups = s.profiling_metric_groups(0)
    assert groups and all(isinstance(f, int) for f in groups[0]["fields"])
    assert handle.all_gpus().profiling_metric_groups()
    handle.profiling_pause()
    handle.profiling_resume()


def test_deny_modules_on_the_embedded_engine() -> None:
    gc.collect()  # the deny list applies when this handle starts the engine
    with dcgm.Handle.embedded(simulate=True, deny_modules=["Diag", "profiling", 8]) as h:
        assert h.system().gpu_ids() == list(range(8))
    with pytest.raises(dcgm.structs.DCGMError_Badparam, match="no-such-module"):
        dcgm.Handle.embedded(simulate=True, deny_modules=["no-such-module"])
    with pytest.raises(dcgm.structs.DCGMError_Badparam, match="at most 16"):
        dcgm.Handle.embedded(simulate=True, deny_modules=list(range(17)))
