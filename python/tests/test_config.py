"""GPU configuration of a group: the target that config_set records, the current state of the
GPUs, and config_enforce applying the target again."""

from __future__ import annotations

from typing import Any, Dict, Optional

import dcgm

NOTHING_SET: Dict[str, Any] = {
    "ecc_mode": None,
    "compute_mode": None,
    "power_limit_w": None,
    "sm_app_clock_mhz": None,
    "mem_app_clock_mhz": None,
    "sync_boost": None,
}
# A simulated H100 as it boots: ECC on, default compute mode, 700 W, application clocks at
# the top of its one supported pair (2619 MHz memory, 1980 MHz SM).
DEFAULT_H100: Dict[str, Any] = {
    "ecc_mode": True,
    "compute_mode": "default",
    "power_limit_w": 700,
    "sm_app_clock_mhz": 1980,
    "mem_app_clock_mhz": 2619,
    "sync_boost": False,
}


def config(gpu: int, base: Dict[str, Any], **changes: Optional[Any]) -> Dict[str, Any]:
    return dict(base, gpu=gpu, **changes)


def test_config_set_records_the_target_and_changes_the_current_state(handle: dcgm.Handle) -> None:
    g = handle.group("config", gpus=[0, 1])
    assert g.config_get() == [config(0, NOTHING_SET), config(1, NOTHING_SET)]
    assert g.config_get(current=True) == [config(0, DEFAULT_H100), config(1, DEFAULT_H100)]
    g.config_set(power_limit_w=500, compute_mode="exclusive_process")
    changed = {"power_limit_w": 500, "compute_mode": "exclusive_process"}
    assert g.config_get() == [config(0, NOTHING_SET, **changed), config(1, NOTHING_SET, **changed)]
    assert g.config_get(current=True) == [config(0, DEFAULT_H100, **changed), config(1, DEFAULT_H100, **changed)]
    s = handle.system()
    assert [s.device_attributes(gpu)["power_limit_w"] for gpu in (0, 1, 2)] == [500, 500, 700]


def test_config_enforce_applies_the_target_of_the_group_s_gpus_only(handle: dcgm.Handle) -> None:
    g = handle.group("enforce", gpus=[0, 1])
    g.config_set(power_limit_w=450, compute_mode="prohibited")
    g.config_enforce()
    changed = {"power_limit_w": 450, "compute_mode": "prohibited"}
    assert g.config_get(current=True) == [config(0, DEFAULT_H100, **changed), config(1, DEFAULT_H100, **changed)]
    assert g.config_get() == [config(0, NOTHING_SET, **changed), config(1, NOTHING_SET, **changed)]
    # A group whose GPU has no target: enforcing changes nothing.
    other = handle.group("no-target", gpus=[2])
    other.config_enforce()
    assert other.config_get(current=True) == [config(2, DEFAULT_H100)]
    assert other.config_get() == [config(2, NOTHING_SET)]
