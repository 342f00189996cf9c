"""Shared support of the ``dcgm.compat`` tests: where things are, and running Python in a
subprocess on one binding and one library.

The compat tests compare this package's NVIDIA-named modules with NVIDIA's own bindings (the
oracle, in ``<repo>/../shared/nvidia-bindings-4.6.0``, never copied into the repository), on
the same library: the dcgm-sim simulator the wheel ships, or the real libdcgm 4.6.0 replaying
the H200 capture (``scripts/real-dcgm.sh dir``). DCGM's state is process-wide and two
bindings must never meet in one process, so every session runs in a subprocess.

API (import it as ``from conftest import ...``; pytest puts this directory on ``sys.path``):

* Paths: ``REPO`` (the checkout), ``SHARED`` (``REPO/../shared``), ``NVIDIA_ROOT``
  (``SHARED/nvidia-bindings-4.6.0``), ``NVIDIA_BINDINGS`` (its ``bindings/python3``),
  ``NVIDIA_SAMPLES`` (its ``sdk_samples/scripts``), ``H200_CAPTURE`` (the NVML capture YAML),
  ``SIMULATOR`` (the packaged ``libdcgm_sim.so``).
* ``nvidia_bindings()``: ``NVIDIA_BINDINGS``, or skips the test (fails under
  ``DCGM_REQUIRE_REAL=1``) when absent.
* ``real_library_dir()``: the staged real library directory (``bin/``, ``lib/``), or ``None``
  with ``real_library_reason()`` saying why; ``require_real()`` answers it or skips (fails
  under ``DCGM_REQUIRE_REAL=1``).
* ``sim_link_dir()``: a directory holding ``libdcgm.so.4 -> SIMULATOR``, for NVIDIA's bindings
  (they load ``libdcgm.so.4`` from ``LD_LIBRARY_PATH``).
* ``python_env(bindings, library, env=None, sim_config=None)``: the environment of such a
  subprocess (see ``run_python``).
* ``run_python(code_or_script, bindings='nvidia'|'ours', library='sim'|'real', args=(),
  env=None, sim_config=None, shadow=False, timeout=120, cwd=None, check=True,
  input=None)``: runs Python source text (or a ``.py`` file, given as a ``Path`` or a path
  ending in ``.py``) in a fresh interpreter (this one's ``sys.executable``) and answers the
  ``subprocess.CompletedProcess`` (text mode). ``bindings='nvidia'`` puts NVIDIA's bindings
  on ``PYTHONPATH`` (``import dcgm_agent`` is theirs); ``'ours'`` leaves them off (import
  ``dcgm.compat``'s modules; with ``shadow=True`` the code runs under
  ``python -m dcgm.compat`` so that ``import dcgm_agent`` is ours). ``library='sim'`` is the
  packaged simulator (``sim_config``: a dcgm-sim configuration dict, or a preset name, given
  to it through ``DCGM_SIM_CONFIG``), ``'real'`` the real library with the H200 capture
  (skips when absent). ``check=True`` fails the test, with the output, on a non-zero exit.
* Fixtures ``nvidia`` (``nvidia_bindings()``) and ``real_dir`` (``require_real()``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Sequence, Union

import pytest

REPO = Path(__file__).resolve().parents[3]
# `DCGM_SHARED_DIR` points elsewhere (.ci/run hides ../shared with it to prove these tests skip).
SHARED = Path(os.environ.get("DCGM_SHARED_DIR") or REPO.parent / "shared")
NVIDIA_ROOT = SHARED / "nvidia-bindings-4.6.0"
NVIDIA_BINDINGS = NVIDIA_ROOT / "bindings" / "python3"
NVIDIA_SAMPLES = NVIDIA_ROOT / "sdk_samples" / "scripts"
H200_CAPTURE = SHARED / "fixtures" / "nvml-capture-h200.yaml"


def _simulator() -> Path:
    import dcgm

    return Path(dcgm.simulator_path())


SIMULATOR = _simulator()


def _require_real_env() -> bool:
    return os.environ.get("DCGM_REQUIRE_REAL") == "1"


def _missing(why: str) -> None:
    if _require_real_env():
        pytest.fail("%s (DCGM_REQUIRE_REAL=1)" % why)
    pytest.skip(why)


def nvidia_bindings() -> Path:
    """NVIDIA's bindings directory, or skip (fail under ``DCGM_REQUIRE_REAL=1``)."""
    if not (NVIDIA_BINDINGS / "dcgm_agent.py").is_file():
        _missing("NVIDIA's DCGM 4.6 bindings are not at %s (a fresh clone has no ../shared)" % NVIDIA_BINDINGS)
    return NVIDIA_BINDINGS


_real: Optional[Any] = None


def _stage_real() -> Any:
    global _real
    if _real is None:
        try:
            out = subprocess.run(
                ["bash", str(REPO / "scripts" / "real-dcgm.sh"), "dir"],
                capture_output=True,
                text=True,
                timeout=300,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            _real = (None, "scripts/real-dcgm.sh dir failed: %s" % e)
        else:
            if out.returncode == 0 and out.stdout.strip():
                _real = (Path(out.stdout.strip()), "")
            else:
                _real = (None, out.stderr.strip() or "scripts/real-dcgm.sh dir exited %d" % out.returncode)
    return _real


def real_library_dir() -> Optional[Path]:
    """The staged real libdcgm directory (``bin/``, ``lib/``), or ``None``."""
    d = _stage_real()[0]
    if d is not None and not H200_CAPTURE.is_file():
        return None
    return d  # type: ignore[no-any-return]


def real_library_reason() -> str:
    """Why :func:`real_library_dir` is ``None`` (empty when it is not)."""
    d, why = _stage_real()
    if d is not None and not H200_CAPTURE.is_file():
        return "the H200 capture is not at %s" % H200_CAPTURE
    return why  # type: ignore[no-any-return]


def require_real() -> Path:
    """The real library directory, or skip (fail under ``DCGM_REQUIRE_REAL=1``)."""
    d = real_library_dir()
    if d is None:
        _missing("the real libdcgm 4.6.0 is not available: %s" % real_library_reason())
    return d  # type: ignore[return-value]


_sim_link: Optional[Path] = None


def sim_link_dir() -> Path:
    """A directory whose ``libdcgm.so.4`` is a link to the packaged simulator (made once per
    test session, removed at exit)."""
    global _sim_link
    if _sim_link is None:
        d = Path(tempfile.mkdtemp(prefix="dcgm-compat-simlink-"))
        (d / "libdcgm.so.4").symlink_to(SIMULATOR)
        _sim_link = d
        import atexit
        import shutil

        atexit.register(shutil.rmtree, str(d), True)
    return _sim_link


#: Variables a test's environment may carry that would change which library or node a
#: subprocess gets, or what its values are; removed unless the call sets them.
_SCRUB = (
    "DCGM_SIM_CONFIG",
    "DCGM_SIM_FAULTS",
    "DCGM_LIB_PATH",
    "DCGM_COMPAT_SIMULATE",
    "DCGM_COMPAT_LIBRARY",
    "DCGM_COMPAT_BLANK_SENTINELS",
    "NVML_INJECTION_MODE",
    "NVML_YAML_FILE",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
)


def _sim_config_env(sim_config: Union[None, str, Mapping[str, Any]]) -> Optional[str]:
    if sim_config is None:
        return None
    if isinstance(sim_config, str):
        return sim_config
    fd, path = tempfile.mkstemp(prefix="dcgm-compat-sim-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(sim_config, f)
    import atexit

    atexit.register(lambda: os.path.exists(path) and os.unlink(path))
    return path


def python_env(
    bindings: str,
    library: str,
    env: Optional[Mapping[str, str]] = None,
    sim_config: Union[None, str, Mapping[str, Any]] = None,
) -> Dict[str, str]:
    """The environment for a subprocess on ``bindings`` ('nvidia' or 'ours') and ``library``
    ('sim' or 'real'), with ``env`` on top."""
    if bindings not in ("nvidia", "ours"):
        raise ValueError("bindings must be 'nvidia' or 'ours', not %r" % (bindings,))
    if library not in ("sim", "real"):
        raise ValueError("library must be 'sim' or 'real', not %r" % (library,))
    e = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    e["PYTHONDONTWRITEBYTECODE"] = "1"
    e["PYTHONUNBUFFERED"] = "1"
    if bindings == "nvidia":
        e["PYTHONPATH"] = str(nvidia_bindings())
    if library == "sim":
        if bindings == "nvidia":
            e["LD_LIBRARY_PATH"] = str(sim_link_dir())
        else:
            e["DCGM_COMPAT_SIMULATE"] = "1"
        cfg = _sim_config_env(sim_config)
        if cfg is not None:
            e["DCGM_SIM_CONFIG"] = cfg
    else:
        real = require_real()
        e["NVML_INJECTION_MODE"] = "True"
        e["NVML_YAML_FILE"] = str(H200_CAPTURE)
        if bindings == "nvidia":
            e["LD_LIBRARY_PATH"] = str(real / "lib")
        else:
            e["DCGM_COMPAT_LIBRARY"] = str(real / "lib" / "libdcgm.so.4")
    if env:
        e.update(env)
    return e


def run_python(
    code_or_script: Union[str, Path],
    bindings: str = "ours",
    library: str = "sim",
    args: Sequence[str] = (),
    env: Optional[Mapping[str, str]] = None,
    sim_config: Union[None, str, Mapping[str, Any]] = None,
    shadow: bool = False,
    timeout: float = 120,
    cwd: Union[None, str, Path] = None,
    check: bool = True,
    input: Optional[str] = None,  # noqa: A002 (subprocess's name)
) -> "subprocess.CompletedProcess[str]":
    """Runs Python code (source text, or a ``.py`` file) in a subprocess on one binding and
    one library; see the module's doc."""
    is_file = isinstance(code_or_script, Path) or (
        isinstance(code_or_script, str) and code_or_script.endswith(".py") and "\n" not in code_or_script
    )
    cmd = [sys.executable]
    if shadow:
        if bindings != "ours":
            raise ValueError("shadow=True runs under python -m dcgm.compat: bindings='ours' only")
        cmd += ["-m", "dcgm.compat"]
    if is_file:
        cmd.append(str(code_or_script))
    elif shadow:
        fd, path = tempfile.mkstemp(prefix="dcgm-compat-", suffix=".py")
        with os.fdopen(fd, "w") as f:
            f.write(str(code_or_script))
        cmd.append(path)
    else:
        cmd += ["-c", str(code_or_script)]
    cmd += list(args)
    try:
        out = subprocess.run(
            cmd,
            env=python_env(bindings, library, env, sim_config),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=str(cwd) if cwd is not None else None,
            input=input,
        )
    finally:
        if shadow and not is_file:
            os.unlink(cmd[-1 - len(args)])
    if check and out.returncode != 0:
        pytest.fail(
            "python (%s bindings, %s library) exited %d\n--- stdout\n%s\n--- stderr\n%s"
            % (bindings, library, out.returncode, out.stdout[-6000:], out.stderr[-6000:])
        )
    return out


@pytest.fixture
def nvidia() -> Path:
    """NVIDIA's bindings directory (skips when absent)."""
    return nvidia_bindings()


@pytest.fixture
def real_dir() -> Path:
    """The real library directory (skips when absent)."""
    return require_real()
