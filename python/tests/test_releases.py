"""The DCGM release answering a handle, and what it can do (``Handle.dcgm_version``,
``Handle.supports``, ``Handle.knows_field``), on the simulator speaking older releases."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import dcgm

PROBE = """
import json, dcgm
h = dcgm.Handle.embedded(simulate=True)
print(json.dumps({
    "version": h.dcgm_version,
    "supports": {name: h.supports(name) for name in dcgm.CAPABILITIES},
    "knows": [h.knows_field(150), h.knows_field("DCGM_FI_DEV_GPU_TEMP"), h.knows_field(65000)],
}))
"""


def probe(release: str) -> dict:
    env = dict(os.environ, DCGM_SIM_VERSION=release)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_capabilities_name_their_first_release() -> None:
    assert dcgm.CAPABILITIES["diagnostics"] == "4.2.0"
    assert dcgm.CAPABILITIES["topology_v2"] == "4.6.0"
    assert len(dcgm.CAPABILITIES) >= 11


@pytest.mark.parametrize("release", ["3.3.9", "4.1.1", "4.6.0"])
def test_a_handle_knows_its_release_and_what_it_lacks(release: str) -> None:
    got = probe(release)
    assert got["version"] == release
    have = tuple(int(x) for x in release.split("."))
    for name, since in dcgm.CAPABILITIES.items():
        first = tuple(int(x) for x in since.split("."))
        assert got["supports"][name] == (have >= first), (name, since, got)
    assert got["knows"] == [True, True, False]


def test_an_unknown_capability_is_a_value_error_naming_the_known_ones() -> None:
    h = dcgm.Handle.embedded(simulate=True)
    with pytest.raises(ValueError, match="diagnostics"):
        h.supports("warp_drive")
