"""examples/upstream_style_reader.py runs against the simulator, selected through
DCGM_LIB_PATH as a user would (the script itself has no simulator-specific code)."""

from __future__ import annotations

import os
import subprocess
import sys

import dcgm

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "upstream_style_reader.py")


def test_upstream_style_example_runs() -> None:
    env = dict(os.environ, DCGM_LIB_PATH=dcgm.simulator_path())
    r = subprocess.run(
        [sys.executable, EXAMPLE, "--count", "2", "--interval", "0.3", "--limit", "30"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "cycle 2" in out
    assert "GPU 0 (" in out and "gpu_temp" in out and "power_usage" in out
    assert "sm_clock" not in out.split("latest values")[0], "ignoreList is honoured by Process()"
    assert "samples since the previous call:" in out
    assert "reached" in out
