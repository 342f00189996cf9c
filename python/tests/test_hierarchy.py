"""Entity hierarchies on the default simulated node: GPU 7 in MIG mode with three GPU
instances, and two CPU sockets of 56 cores each."""

from __future__ import annotations

import dcgm


def test_mig_hierarchy_lists_gpu_7_s_instances_and_their_compute_instances(handle: dcgm.Handle) -> None:
    s = handle.system()
    assert s.mig_hierarchy() == [
        {
            "gpu": 7,
            "uuid": s.device_attributes(7)["uuid"],
            "instances": [
                {
                    "entity_id": 0, "nvml_instance_id": 1, "profile_id": 3, "slices": 3,
                    "compute_instances": [
                        {"entity_id": 0, "nvml_compute_instance_id": 0, "profile_id": 32, "slices": 3},
                    ],
                },
                {
                    "entity_id": 1, "nvml_instance_id": 2, "profile_id": 2, "slices": 2,
                    "compute_instances": [
                        {"entity_id": 1, "nvml_compute_instance_id": 0, "profile_id": 30, "slices": 1},
                        {"entity_id": 2, "nvml_compute_instance_id": 1, "profile_id": 30, "slices": 1},
                    ],
                },
                {
                    "entity_id": 2, "nvml_instance_id": 3, "profile_id": 1, "slices": 1,
                    "compute_instances": [
                        {"entity_id": 3, "nvml_compute_instance_id": 0, "profile_id": 30, "slices": 1},
                    ],
                },
            ],
        }
    ]
    assert s.entities(dcgm.EntityGroup.GPU_I) == [(dcgm.EntityGroup.GPU_I, i) for i in range(3)]


def test_cpu_hierarchy_lists_two_sockets_of_56_cores(handle: dcgm.Handle) -> None:
    assert handle.system().cpu_hierarchy() == [
        {"id": 0, "cores": list(range(56)), "serial": "SIM-CPU-0000"},
        {"id": 1, "cores": list(range(56, 112)), "serial": "SIM-CPU-0001"},
    ]
