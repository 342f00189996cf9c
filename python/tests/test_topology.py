"""Topology on the default simulated node: 8 GPUs over 2 CPU sockets (GPUs 0-3 on the first,
4-7 on the second), every GPU with 18 NVLinks into the NvSwitch fabric."""

from __future__ import annotations

import pytest

import dcgm

SOCKET_0_CPUS = list(range(56))
ALL_LINKS = (1 << 18) - 1


def test_device_topology_lists_a_path_to_every_other_gpu(handle: dcgm.Handle) -> None:
    t = handle.system().device_topology(0)
    assert t["cpu_affinity"] == SOCKET_0_CPUS
    assert t["paths"] == [
        {"gpu": gpu, "pci": "NODE" if gpu < 4 else "SYS", "nvlinks": 18, "local_links": ALL_LINKS}
        for gpu in range(1, 8)
    ]


def test_a_group_is_numa_optimal_only_within_one_socket(handle: dcgm.Handle) -> None:
    assert handle.all_gpus().topology() == {
        "cpu_affinity": list(range(112)),
        "numa_optimal": False,
        "slowest_pci": "SYS",
        "slowest_nvlinks": 18,
    }
    assert handle.group("socket-0", gpus=[0, 1, 2, 3]).topology() == {
        "cpu_affinity": SOCKET_0_CPUS,
        "numa_optimal": True,
        "slowest_pci": "NODE",
        "slowest_nvlinks": 18,
    }


def test_select_gpus_by_topology_picks_from_the_candidates(handle: dcgm.Handle) -> None:
    s = handle.system()
    # One NvSwitch fabric: every choice is as good, and the simulator takes the lowest ids.
    assert s.select_gpus_by_topology(2) == [0, 1]
    assert s.select_gpus_by_topology(4) == [0, 1, 2, 3]
    assert s.select_gpus_by_topology(2, candidates=[2, 5, 6]) == [2, 5]
    with pytest.raises(dcgm.structs.DCGMError_InsufficientSize):
        s.select_gpus_by_topology(3, candidates=[2, 5])
