"""NVLink on the default simulated node: 8 GPUs with 18 links each, 4 NvSwitches with 64."""

from __future__ import annotations

import dcgm


def test_every_gpu_and_nvswitch_link_is_up(handle: dcgm.Handle) -> None:
    links = handle.system().nvlink_status()
    assert links == {
        "gpus": {gpu: ["up"] * 18 for gpu in range(8)},
        "switches": {switch: ["up"] * 64 for switch in range(4)},
    }


def test_every_pair_of_gpus_is_peer_to_peer_ok(handle: dcgm.Handle) -> None:
    assert handle.system().nvlink_p2p_status() == {
        gpu: {peer: "Ok" for peer in range(8) if peer != gpu} for gpu in range(8)
    }
