"""The simulator is shipped in the wheel and used only when asked for."""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
from typing import Any

import pytest

import dcgm
import dcgm.structs as dcgm_structs

no_real_libdcgm = pytest.mark.skipif(
    ctypes.util.find_library("dcgm") is not None, reason="a real libdcgm is installed here"
)


def test_simulator_is_in_the_package() -> None:
    p = dcgm.simulator_path()
    assert os.path.isfile(p)
    assert os.path.dirname(os.path.dirname(p)) == os.path.dirname(os.path.realpath(dcgm.__file__))


FRESH_PROCESS = """
import dcgm, dcgm.structs as s
try:
    dcgm.Handle.embedded()
except s.DCGMError_LibraryNotFound as e:
    print(e.value)
    print(e)
"""


@no_real_libdcgm
def test_without_simulate_a_fresh_process_lists_the_paths_tried() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DCGM_LIB_PATH", "DCGM_SIM"))}
    env["DCGM_SIM_LIB"] = dcgm.simulator_path()  # not a way to select the simulator either
    r = subprocess.run([sys.executable, "-c", FRESH_PROCESS], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    code, text = r.stdout.split("\n", 1)
    assert int(code) == dcgm_structs.DCGM_ST_LIBRARY_NOT_FOUND
    assert "tried" in text and "libdcgm.so.4 [soname search]" in text, text
    assert "/usr/lib/x86_64-linux-gnu/libdcgm.so.4" in text or "/usr/lib64/libdcgm.so.4" in text, text


@no_real_libdcgm
def test_without_simulate_the_simulator_is_never_a_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DCGM_LIB_PATH", raising=False)
    # This process has loaded the simulator, whose soname is libdcgm.so.4: the dynamic loader
    # would answer the soname search with it. It must not be used without simulate=True.
    with dcgm.Handle.embedded(simulate=True):
        with pytest.raises(dcgm_structs.DCGMError_LibraryNotFound) as e:
            dcgm.Handle.embedded()
    text = str(e.value)
    assert "libdcgm.so.4" in text and "tried" in text and "simulate=True" in text, text
    assert e.value.value == dcgm_structs.DCGM_ST_LIBRARY_NOT_FOUND
    with pytest.raises(dcgm_structs.DCGMError_LibraryNotFound):
        dcgm.Handle.connect("localhost")
    with pytest.raises(dcgm_structs.DCGMError_LibraryNotFound):
        dcgm.Reader(["gpu_temp"]).latest()
    with pytest.raises(dcgm_structs.DCGMError_LibraryNotFound):
        dcgm.DcgmReader(fieldIds=[150]).GetLatestGpuValuesAsFieldIdDict()


def test_simulated_values_are_labelled(handle: dcgm.Handle) -> None:
    assert handle.is_simulated
    with dcgm.Reader(["gpu_temp"], simulate=True) as r:
        r.connect()
        assert r.is_simulated is True
    r2 = dcgm.DcgmReader(fieldIds=[150], simulate=True)
    assert r2.IsSimulated() is None
    r2.Init()
    assert r2.IsSimulated() is True
    r2.Shutdown()


def test_explicit_library_path_is_the_simulator_too() -> None:
    with dcgm.Handle.embedded(library_path=dcgm.simulator_path()) as h:
        assert h.is_simulated and h.library_path == dcgm.simulator_path()


def test_configure_simulator(sim_config: Any) -> None:
    sim_config({"gpus": [{"model": "NVIDIA A100-SXM4-40GB", "memory_mib": 40960}, {}], "nvswitches": 0})
    with dcgm.Handle.embedded(simulate=True) as h:
        assert h.system().gpu_ids() == [0, 1]
        assert h.system().device_attributes(0)["name"] == "NVIDIA A100-SXM4-40GB"
    sim_config(None)
    with dcgm.Handle.embedded(simulate=True) as h:
        assert len(h.system().gpu_ids()) == 8


def test_bad_configuration_is_rejected() -> None:
    with pytest.raises(dcgm_structs.DCGMError_Badparam):
        dcgm.testing.configure_simulator('{"gpus": "not a list"}')
    dcgm.testing.configure_simulator(None)


def test_simulator_context_manager() -> None:
    with dcgm.testing.simulator({"gpus": [{}, {}, {}]}):
        with dcgm.Handle.embedded(simulate=True) as h:
            assert len(h.system().gpu_ids()) == 3
    with dcgm.Handle.embedded(simulate=True) as h:
        assert len(h.system().gpu_ids()) == 8


WITHOUT_SEPARATE_SIMULATOR = """
import json, os, dcgm
assert not os.path.exists(os.path.join(os.path.dirname(dcgm.__file__), "_sim")), dcgm.__file__
with dcgm.Handle.embedded(simulate=True) as h:
    print(json.dumps({"simulated": h.is_simulated, "gpus": len(h.system().gpu_ids()),
                      "library": h.library_path}))
try:
    dcgm.simulator_path()
except dcgm.structs.DCGMError_LibraryNotFound as e:
    print(json.dumps({"no_file": str(e)}))
"""


def test_a_package_built_without_the_separate_simulator_simulates_through_the_extension(
    tmp_path: Any,
) -> None:
    # As `pip install ./python` or `maturin build` lay the package out: no dcgm/_sim folder.
    import json
    import shutil

    pkg = os.path.dirname(os.path.realpath(dcgm.__file__))
    copy = tmp_path / "dcgm"
    shutil.copytree(pkg, copy, ignore=shutil.ignore_patterns("_sim", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DCGM_LIB_PATH", "DCGM_SIM"))}
    env["PYTHONPATH"] = str(tmp_path)
    r = subprocess.run(
        [sys.executable, "-c", WITHOUT_SEPARATE_SIMULATOR], capture_output=True, text=True, env=env,
        timeout=120, cwd=str(tmp_path),
    )
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.strip().splitlines()]
    assert lines[0]["simulated"] is True and lines[0]["gpus"] >= 1, lines
    assert lines[0]["library"].endswith(".so") and "_native" in lines[0]["library"], lines
    # Other programs need a loadable library file: its absence is said, not papered over.
    assert "no simulator" in lines[1]["no_file"], lines
