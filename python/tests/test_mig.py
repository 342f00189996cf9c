"""MIG management on the simulator: create GPU and compute instances, see them in the
hierarchy and read them, delete them; the errors the real libdcgm 4.6.0 gives."""

from __future__ import annotations

from typing import Any

import pytest

import dcgm
from dcgm import structs

NODE = {
    "gpus": [
        {"model": "NVIDIA H200", "memory_mib": 143771, "mig_mode": True},
        {"model": "NVIDIA H200", "memory_mib": 143771},
    ],
    "nvswitches": 0,
    "cpus": [],
    "processes": [],
}

# DCGM's profile constants (DcgmMigProfileGpuInstanceSlice3, ...Slice7, ...ComputeInstanceSlice1).
GI_3G, GI_7G, CI_1C = 3, 5, 30


def test_create_read_and_delete_instances(sim_config: Any) -> None:
    sim_config(NODE)
    with dcgm.Handle.embedded(simulate=True) as h:
        s = h.system()
        assert s.mig_hierarchy() == []
        gi = s.create_gpu_instance(0, GI_3G)
        # DCGM numbers a GPU's instances from gpu * 7; NVML's profile id of 3g is 9.
        assert gi == {
            "entity_id": 0, "nvml_instance_id": 1, "profile_id": 9, "slices": 3,
            "compute_instances": [],
        }
        ci = s.create_compute_instance(gi["entity_id"], CI_1C)
        assert ci == {"entity_id": 0, "nvml_compute_instance_id": 0, "profile_id": 0, "slices": 1}
        [gpu] = s.mig_hierarchy()
        assert gpu["gpu"] == 0 and gpu["instances"][0]["compute_instances"] == [ci]
        assert (dcgm.EntityGroup.GPU_CI, 0) in s.entities(dcgm.EntityGroup.GPU_CI)
        assert (dcgm.EntityGroup.GPU_I, 0) in s.entities(dcgm.EntityGroup.GPU_I)
        with pytest.raises(structs.DCGMError) as e:
            s.delete_gpu_instance(gi["entity_id"])
        assert e.value.code == structs.DCGM_ST_NVML_ERROR  # it still has a compute instance
        s.delete_compute_instance(ci["entity_id"])
        s.delete_gpu_instance(gi["entity_id"])
        assert s.mig_hierarchy() == []
        assert s.entities(dcgm.EntityGroup.GPU_I) == []


def test_errors_are_the_real_librarys(sim_config: Any) -> None:
    sim_config(NODE)
    with dcgm.Handle.embedded(simulate=True) as h:
        s = h.system()
        cases = [
            (lambda: s.create_gpu_instance(1, GI_3G), structs.DCGM_ST_NOT_SUPPORTED),  # no MIG mode
            (lambda: s.create_gpu_instance(9, GI_3G), structs.DCGM_ST_BADPARAM),  # no such GPU
            (lambda: s.create_compute_instance(40, CI_1C), structs.DCGM_ST_BADPARAM),
            (lambda: s.delete_gpu_instance(40), structs.DCGM_ST_INSTANCE_NOT_FOUND),
            (lambda: s.delete_compute_instance(40), structs.DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND),
        ]
        for call, code in cases:
            with pytest.raises(structs.DCGMError) as e:
                call()
            assert e.value.code == code
        s.create_gpu_instance(0, GI_7G)
        with pytest.raises(structs.DCGMError) as e:
            s.create_gpu_instance(0, GI_3G)
        assert e.value.code == structs.DCGM_ST_INSUFFICIENT_RESOURCES
        with pytest.raises(ValueError, match="not a GPU-instance profile"):
            s.create_gpu_instance(0, 30)
        with pytest.raises(ValueError, match="not a compute-instance profile"):
            s.create_compute_instance(0, GI_3G)
