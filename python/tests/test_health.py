"""Health watches of a group, and the report of a check as a dict."""

from __future__ import annotations

import dcgm

HS = dcgm.HealthSystem


def test_health_set_chooses_the_watched_systems(handle: dcgm.Handle) -> None:
    g = handle.group("health", gpus=[0, 1])
    assert g.health_get() == 0  # nothing watched yet
    g.health_set(HS.MEM | HS.PCIE)
    assert HS(g.health_get()) == HS.MEM | HS.PCIE
    g.health_set(HS.THERMAL, update_interval=1.0, max_keep_age=60.0)  # replaces, not adds
    assert g.health_get() == HS.THERMAL


def test_a_quiet_node_passes_its_health_check(handle: dcgm.Handle) -> None:
    g = handle.group("health-check", gpus=[0, 1])
    g.health_set(HS.THERMAL | HS.MEM | HS.PCIE)
    assert g.health_check() == {"overall": "PASS", "healthy": True, "incidents": []}
