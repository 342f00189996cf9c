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
    assert dcgm.CAPABILITIES["diagnostics"] == "3.3.9"  # each release in its own versions
    assert dcgm.CAPABILITIES["chip_architecture"] == "4.2.0"
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


# The package on every real DCGM release beside the checkout (../shared/realdcgm-*), each
# replaying the H200 capture through DCGM's injection NVML, in a process of its own (a process
# loads one libdcgm): the release is known, a reader with the default fields reads the GPU
# (fields the release lacks left out, never a failed read), and dcgm.compat's pydcgm too.
REAL_RELEASES = ["3.3.9", "4.1.1", "4.5.3", "4.6.0"]

PROBE_REAL = """
import json, os, sys, dcgm
lib = os.environ["DCGM_LIB_PATH"]
h = dcgm.Handle.embedded(library_path=lib)
out = {"version": h.dcgm_version, "gpus": list(h.system().gpu_ids()),
       "diagnostics": h.supports("diagnostics"), "knows_175": h.knows_field(175)}
del h
r = dcgm.DcgmReader(libraryPath=lib)
latest = r.GetLatestGpuValuesAsFieldIdDict()
out["reader"] = {str(g): {str(f): (v if isinstance(v, (int, float, str)) else None)
                          for f, v in d.items()} for g, d in latest.items()}
r.Shutdown()
from dcgm.compat import pydcgm, dcgm_structs
# NVIDIA's API as a pydcgm client writes it (its DcgmReader wants an nv-hostengine): an
# embedded handle, the default group, a field group watched and read back.
c = pydcgm.DcgmHandle(ipAddress=None, opMode=dcgm_structs.DCGM_OPERATION_MODE_AUTO)
g = c.GetSystem().GetDefaultGroup()
fg = pydcgm.DcgmFieldGroup(c, "release-probe", [150, 155])
g.samples.WatchFields(fg, 1000000, 3600.0, 0)
c.GetSystem().UpdateAllFields(True)
out["compat"] = {str(gpu): {str(f): (s.values[-1].value if s.values and isinstance(
                     s.values[-1].value, (int, float, str)) else None) for f, s in d.items()}
                 for gpu, d in g.samples.GetLatest(fg).values.items()}
print(json.dumps(out))
"""


def staged_real(release: str) -> str:
    """The release's library, staged loadable; skipped (failed under DCGM_REQUIRE_REAL=1) where
    ../shared is absent."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    shared = os.environ.get("DCGM_SHARED_DIR") or os.path.join(repo, "..", "shared")
    o = subprocess.run(
        ["bash", os.path.join(repo, "scripts", "real-dcgm.sh"), "dir", release],
        capture_output=True,
        text=True,
        env=dict(os.environ, DCGM_SHARED_DIR=shared),
    )
    if o.returncode != 0:
        why = "the real libdcgm %s is absent: %s" % (release, o.stderr.strip())
        if os.environ.get("DCGM_REQUIRE_REAL") == "1":
            pytest.fail(why + " (DCGM_REQUIRE_REAL=1)")
        pytest.skip(why)
    return os.path.join(o.stdout.strip(), "lib", "libdcgm.so.%s" % release.split(".")[0])


@pytest.mark.parametrize("release", REAL_RELEASES)
def test_the_package_reads_every_real_release(release: str) -> None:
    lib = staged_real(release)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    shared = os.environ.get("DCGM_SHARED_DIR") or os.path.join(repo, "..", "shared")
    env = dict(
        os.environ,
        DCGM_LIB_PATH=lib,
        NVML_INJECTION_MODE="True",
        NVML_YAML_FILE=os.path.join(shared, "fixtures", "nvml-capture-h200.yaml"),
    )
    for k in ("DCGM_SIM_CONFIG", "DCGM_SIM_FAULTS", "DCGM_SIM_VERSION", "DCGM_COMPAT_SIMULATE"):
        env.pop(k, None)
    o = subprocess.run(
        [sys.executable, "-c", PROBE_REAL], env=env, capture_output=True, text=True, timeout=180
    )
    assert o.returncode == 0, o.stderr[-2000:]
    got = json.loads(o.stdout.strip().splitlines()[-1])
    assert got["version"] == release
    assert got["gpus"] == [0]
    have = tuple(int(x) for x in release.split("."))
    assert got["diagnostics"]  # every release, in its own struct versions
    assert got["knows_175"] == (have >= (4, 6, 0))
    for who in ("reader", "compat"):
        gpu = got[who]["0"]
        # The H200 capture's temperature (150) and power (155), read on every release.
        assert gpu["150"] == 37, (who, gpu)
        assert abs(gpu["155"] - 78.413) < 0.01, (who, gpu)
        # No sentinel shown as a number (a blank is None or absent).
        # DCGM's sentinels: 0x7ffffff0.. (int32), 0x7ffffffffffffff0.. (int64), 2^47 + 0..3
        # (double).
        for f, v in gpu.items():
            if isinstance(v, int):
                assert not (0x7FFFFFF0 <= v <= 0x7FFFFFFF), (who, f, v)
                assert v < 0x7FFFFFFFFFFFFFF0, (who, f, v)
            if isinstance(v, float):
                assert not (140737488355328.0 <= v <= 140737488355331.0), (who, f, v)
