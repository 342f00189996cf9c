"""Host-engine introspection: the memory and CPU the engine itself uses."""

from __future__ import annotations

import pytest

import dcgm

MIB = 1 << 20


def test_hostengine_memory_grows_with_groups(handle: dcgm.Handle) -> None:
    s = handle.system()
    before = s.hostengine_memory_bytes()
    assert 40 * MIB <= before < 41 * MIB  # the simulated engine's base, plus its bookkeeping
    g = handle.group("introspection", gpus=[0])
    assert s.hostengine_memory_bytes() == before + 8192
    g.destroy()
    assert s.hostengine_memory_bytes() == before


def test_hostengine_cpu_utilization_is_kernel_plus_user(handle: dcgm.Handle) -> None:
    u = handle.system().hostengine_cpu_utilization()
    assert set(u) == {"total", "kernel", "user"}
    assert 0.0 < u["total"] < 0.01  # a fraction of one CPU: the simulated engine idles
    assert u["total"] == pytest.approx(u["kernel"] + u["user"])
    assert 0.0 < u["kernel"] < u["user"]
