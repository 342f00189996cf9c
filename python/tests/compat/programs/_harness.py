"""Runs NVIDIA's programs twice on one library, once on NVIDIA's bindings and once on this
package through ``python -m dcgm.compat``, each in a process of its own with a timeout, and
compares their outputs.

Where things are: NVIDIA's bindings and programs in ``<repo>/../shared/nvidia-bindings-4.6.0``
(never copied into the repository); the real libdcgm from ``scripts/real-dcgm.sh dir`` with
DCGM's injection NVML replaying the H200 capture. The comparison allows what may differ
between two runs: values that move with time (the simulator's load, energy counters), and
the documented improvement that a blank is ``N/A`` / ``null`` / ``None`` where NVIDIA's shows
a sentinel number.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import pytest

REPO = Path(__file__).resolve().parents[4]
# `DCGM_SHARED_DIR` points elsewhere (.ci/run hides ../shared with it to prove these tests skip).
SHARED = Path(os.environ.get("DCGM_SHARED_DIR") or REPO.parent / "shared")
NVIDIA = SHARED / "nvidia-bindings-4.6.0"
BINDINGS = NVIDIA / "bindings" / "python3"
SAMPLES = NVIDIA / "sdk_samples" / "scripts"
HERE = Path(__file__).resolve().parent
COLLECTD_STANDIN = HERE / "collectd_standin"
SENDTO_FIX = HERE / "nvidia_sendto"
H200 = SHARED / "fixtures" / "nvml-capture-h200.yaml"

#: Bound of every program run (seconds).
TIMEOUT = 60


def require_real() -> bool:
    return os.environ.get("DCGM_REQUIRE_REAL") == "1"


def need_nvidia() -> None:
    """Skips (fails under DCGM_REQUIRE_REAL=1) where NVIDIA's bindings are absent."""
    if not BINDINGS.is_dir():
        msg = "NVIDIA's bindings are not at %s (../shared of the checkout)" % NVIDIA
        if require_real():
            pytest.fail(msg)
        pytest.skip(msg)


def need_compat(*modules: str) -> None:
    """Skips while a dcgm.compat module the program needs is not provided yet."""
    import importlib

    for m in modules:
        try:
            importlib.import_module("dcgm.compat." + m)
        except ImportError as e:
            pytest.skip("dcgm.compat.%s is not importable yet: %s" % (m, e))


@dataclass
class Library:
    """A library both bindings load: the packaged simulator, or the real libdcgm."""

    name: str
    libdir: str  # holds libdcgm.so.4 (a link to the simulator for "sim")
    env: Dict[str, str]
    ours: List[str]  # the python -m dcgm.compat option choosing it
    gpus: int  # how many GPUs it shows


def simulator(tmp: Path) -> Library:
    """The packaged simulator, its 8 GPUs idle (``load`` 0): the default node's training
    cycle swings power and temperature by half between two programs' runs, which would leave
    nothing to compare; idle, they stay within the comparison's drift."""
    import dcgm

    d = tmp / "simlib"
    d.mkdir(exist_ok=True)
    link = d / "libdcgm.so.4"
    if not link.exists():
        os.symlink(dcgm.simulator_path(), link)
    config = d / "idle-node.json"
    config.write_text(json.dumps({"gpus": [{"model": "H100", "load": 0.0} for _ in range(8)]}))
    return Library("sim", str(d), {"DCGM_SIM_CONFIG": str(config)}, ["--simulate"], 8)


def real_library() -> Library:
    """The real libdcgm 4.6.0 with the H200 capture; skips with the reason where absent."""
    r = subprocess.run(["bash", str(REPO / "scripts" / "real-dcgm.sh"), "dir"], capture_output=True, text=True,
                       timeout=120)
    why = (r.stderr or r.stdout).strip()
    if r.returncode != 0 or not H200.is_file():
        msg = "the real libdcgm is not available: %s" % (why or "no H200 capture at %s" % H200)
        if require_real():
            pytest.fail(msg)
        pytest.skip(msg)
    lib = Path(r.stdout.strip()) / "lib"
    env = {"NVML_INJECTION_MODE": "True", "NVML_YAML_FILE": str(H200)}
    return Library("real", str(lib), env, ["--library", str(lib / "libdcgm.so.4")], 1)


def _clean_env(extra_path: Sequence[Path], lib: Library) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DCGM_COMPAT_", "DCGM_SIM_", "NVML_")) and k not in ("PYTHONPATH", "DCGM_LIB_PATH")}
    env.update(lib.env)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in extra_path)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def nvidia_command(script: Path, args: Sequence[str], lib: Library, extra_path: Sequence[Path] = ()):  # type: ignore[no-untyped-def]
    """argv and environment of a run on NVIDIA's bindings (they find libdcgm.so.4 on
    LD_LIBRARY_PATH)."""
    env = _clean_env([*extra_path, BINDINGS], lib)
    env["LD_LIBRARY_PATH"] = lib.libdir + (os.pathsep + os.environ["LD_LIBRARY_PATH"]
                                           if os.environ.get("LD_LIBRARY_PATH") else "")
    return [sys.executable, str(script), *args], env


def ours_command(script: Path, args: Sequence[str], lib: Library, extra_path: Sequence[Path] = ()):  # type: ignore[no-untyped-def]
    """argv and environment of a run on this package: ``python -m dcgm.compat``, NVIDIA's
    bindings directory still on the path (shadowed by the hook)."""
    env = _clean_env([*extra_path, BINDINGS], lib)
    return [sys.executable, "-m", "dcgm.compat", *lib.ours, str(script), *args], env


@dataclass
class Run:
    argv: List[str]
    rc: int
    out: str
    err: str

    def describe(self) -> str:
        return "%s\nrc=%d\n--- stdout\n%s\n--- stderr\n%s" % (" ".join(self.argv), self.rc, self.out[-3000:],
                                                              self.err[-3000:])


def run(argv: List[str], env: Dict[str, str], timeout: float = TIMEOUT, cwd: Path = BINDINGS) -> Run:
    try:
        p = subprocess.run(argv, env=env, cwd=str(cwd), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        pytest.fail("timed out after %ss: %s\n%s\n%s" % (timeout, " ".join(argv), out[-2000:], err[-2000:]))
    return Run(argv, p.returncode, p.stdout, p.stderr)


# --- comparing ---

#: DCGM's blank sentinels (DCGM_INT32_*, DCGM_INT64_*, DCGM_FP64_*), as NVIDIA's bindings print them.
_INT32_BLANK = 0x7FFFFFF0
_INT64_BLANK = 0x7FFFFFFFFFFFFFF0
_FP64_BLANK = 140737488355328.0


def is_sentinel(x: float) -> bool:
    if isinstance(x, int) and not isinstance(x, bool):
        return _INT32_BLANK <= x <= _INT32_BLANK + 15 or _INT64_BLANK <= x <= _INT64_BLANK + 15
    return isinstance(x, float) and _FP64_BLANK <= x <= _FP64_BLANK + 16


def close(a: float, b: float) -> bool:
    """Two readings of one value at two times: equal, or within the simulator's drift
    between two programs' runs (20 %, at least 5)."""
    if a == b:
        return True
    if isinstance(a, float) and math.isnan(a) and isinstance(b, float) and math.isnan(b):
        return True
    return abs(a - b) <= max(5.0, 0.2 * max(abs(a), abs(b)))


_NUM = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_TOKEN = re.compile(r"N/A|None|null|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _num(s: str) -> float:
    return float(s) if any(c in s for c in ".eE") else int(s)


def text_diff(nvidia: str, ours: str) -> List[str]:
    """Line-by-line differences that are not allowed: the text between numbers must be the
    same; numbers must be :func:`close`; NVIDIA's sentinel may be ours ``N/A``/``None``."""
    problems: List[str] = []
    a_lines, b_lines = nvidia.splitlines(), ours.splitlines()
    if len(a_lines) != len(b_lines):
        problems.append("%d lines on NVIDIA's bindings, %d on ours" % (len(a_lines), len(b_lines)))
    for i, (a, b) in enumerate(zip(a_lines, b_lines)):
        a, b = mask_volatile(a), mask_volatile(b)
        if _TOKEN.sub("#", a) != _TOKEN.sub("#", b):
            problems.append("line %d: %r != %r" % (i + 1, a, b))
            continue
        for ta, tb in zip(_TOKEN.findall(a), _TOKEN.findall(b)):
            if ta == tb:
                continue
            na = _NUM.fullmatch(ta)
            nb = _NUM.fullmatch(tb)
            if na and nb and close(_num(ta), _num(tb)):
                continue
            if na and not nb and is_sentinel(_num(ta)):
                continue  # the documented improvement: a blank shown as N/A
            problems.append("line %d: %r != %r" % (i + 1, a, b))
            break
    return problems


#: Readings that follow the load, which the simulator varies with time (its jobs start, run and
#: idle), and rates over the sampling window: between two programs' runs they move too much to
#: compare; both sides must still have a number, or both none. Everything else (ids, UUIDs,
#: bus ids, names, memory sizes, error counters, violations) is compared.
VOLATILE = {"nvlink_throughput_total", "pcie_tx_throughput", "pcie_rx_throughput", "power_usage", "gpu_temp",
            "memory_temp", "sm_clock", "gpu_utilization", "mem_copy_utilization", "total_energy_consumption"}


#: The ids of the VOLATILE fields (dicts keyed by field id print those).
VOLATILE_IDS = (100, 140, 150, 155, 156, 200, 201, 203, 204, 449)

_N = r"-?\d+(?:\.\d+)?"
_TAGS = "|".join(sorted(VOLATILE, key=len, reverse=True))
_MASKS = [
    re.compile(r"(\b(?:%s)\b'?(?:\(\d+\))?(?::| =|=| \[) ?)%s" % (_TAGS, _N)),
    re.compile(r"((?<![\d.])(?:%s): )%s" % ("|".join(map(str, VOLATILE_IDS)), _N)),
]
_VOLATILE_LINE = re.compile(r"^Values for (?:%s):" % _TAGS)


def mask_volatile(line: str) -> str:
    """A line with the readings of VOLATILE fields replaced by ``~`` (``tag=1``, ``'tag': 1``,
    ``tag(155) = 1``, ``tag [1]``, ``155: 1``)."""
    if _VOLATILE_LINE.match(line):
        return _VOLATILE_LINE.match(line).group(0) + " ~"  # type: ignore[union-attr]
    for m in _MASKS:
        line = m.sub(lambda g: g.group(1) + "~", line)
    return line


def json_diff(nvidia: Dict[str, Any], ours: Dict[str, Any], where: str = "") -> List[str]:
    """The same keys; strings equal; numbers :func:`close`; NVIDIA's sentinel or null may be
    ours null."""
    problems: List[str] = []
    if list(nvidia) != list(ours):
        problems.append("%skeys differ: %r != %r" % (where, list(nvidia), list(ours)))
    for k in nvidia:
        if k not in ours:
            continue
        a, b = nvidia[k], ours[k]
        if a == b:
            continue
        if k in VOLATILE and isinstance(a, (int, float)) and isinstance(b, (int, float)) and not is_sentinel(a):
            continue
        if b is None and (a is None or (isinstance(a, (int, float)) and is_sentinel(a))):
            continue
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not is_sentinel(a) and close(a, b):
            continue
        problems.append("%s%s: %r != %r" % (where, k, a, b))
    return problems


class UdpListener:
    """A UDP socket on 127.0.0.1 that collects datagrams."""

    def __init__(self) -> None:
        import socket

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]

    def receive(self, count: int, timeout: float, alive: Any = None) -> List[bytes]:
        """Up to ``count`` datagrams within ``timeout`` s; stops early once ``alive()`` is
        false and nothing more is queued."""
        import socket
        import time

        got: List[bytes] = []
        deadline = time.monotonic() + timeout
        while len(got) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.sock.settimeout(min(left, 0.2))
            try:
                got.append(self.sock.recv(65536))
            except socket.timeout:
                if alive is not None and not alive():
                    break
            except OSError:
                break
        return got

    def close(self) -> None:
        self.sock.close()


def stream_program(argv: List[str], env: Dict[str, str], listener: UdpListener, count: int,
                   timeout: float = 30.0) -> "tuple[List[Dict[str, Any]], Run]":
    """Starts a program that publishes to ``listener``, takes ``count`` datagrams (JSON
    objects), then stops it; returns them and how the program ended."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(argv, env=env, cwd=str(BINDINGS), stdout=out, stderr=err, text=True)
        try:
            got = listener.receive(count, timeout, lambda: p.poll() is None)
        finally:
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)
        out.seek(0)
        err.seek(0)
        result = Run(argv, p.returncode, out.read(), err.read())
    return [json.loads(g.decode("utf-8")) for g in got], result


def library_values(lib: Library, field_ids: Optional[Sequence[int]] = None) -> Dict[str, Dict[str, Any]]:
    """The library's latest values by GPU UUID and tag, read with NVIDIA's own DcgmReader in
    a process of its own (for checking what the programs send)."""
    code = (
        "import json, DcgmReader as R\n"
        "r = R.DcgmReader(hostname=None%s)\n"
        "d = r.GetLatestGpuValuesAsFieldNameDict()\n"
        "print(json.dumps({r.m_gpuIdToUUId[g]: v for g, v in d.items()}))\n"
        "r.Shutdown()\n" % ("" if field_ids is None else ", fieldIds=%r" % (list(field_ids),))
    )
    argv, env = nvidia_command(Path("-c"), [], lib)
    argv = [sys.executable, "-c", code]
    r = run(argv, env)
    assert r.rc == 0, r.describe()
    return json.loads(r.out.strip().splitlines()[-1])


def private_hostengine(lib: Library, commands: "List[tuple[List[str], Dict[str, str]]]",
                       timeout: float = 120, fresh: bool = False) -> List[Run]:
    """Runs ``commands`` (argv, env) one after the other, from NVIDIA's bindings directory,
    against an nv-hostengine of the real library at 127.0.0.1:5555, all inside a network
    namespace of their own (``unshare -rn``) so that no other host engine or test sees it;
    where no such namespace can be made, on the host's port 5555 if it is free. Skips with
    the reason otherwise (fails under DCGM_REQUIRE_REAL=1). ``fresh``: a new host engine for each command (the samples one
    program made DCGM cache then do not reach the next one's since-last-call reads)."""
    engine = Path(lib.libdir).parent / "bin" / "nv-hostengine"
    if not engine.is_file():
        msg = "the real library has no nv-hostengine at %s" % engine
        if require_real():
            pytest.fail(msg)
        pytest.skip(msg)
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, text=True, timeout=30) \
        if _which("unshare") else None
    namespace = probe is not None and probe.returncode == 0
    if not namespace and _port_in_use(5555):
        msg = ("a private nv-hostengine needs a network namespace (unshare -rn: %s), or else a free port "
               "5555 on this host, which is in use" % ("not found" if probe is None else probe.stderr.strip()))
        if require_real():
            pytest.fail(msg)
        pytest.skip(msg)
    env = dict(lib.env)
    env["LD_LIBRARY_PATH"] = lib.libdir
    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    with tempfile.TemporaryDirectory() as d:
        spec = {
            "hostengine": [str(engine), "-n", "-p", "5555", "--pid", os.path.join(d, "he.pid"),
                           "-f", os.path.join(d, "he.log"), "--log-level", "ERROR"],
            "env": env,
            "port": 5555,
            "fresh": fresh,
            "namespace": namespace,
            "commands": [{"argv": a, "env": e, "cwd": str(BINDINGS), "timeout": TIMEOUT} for a, e in commands],
        }
        with open(os.path.join(d, "spec.json"), "w") as f:
            json.dump(spec, f)
        argv = (["unshare", "-rn"] if namespace else []) + [
            sys.executable, str(HERE / "hostengine_runner.py"), os.path.join(d, "spec.json")]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        assert p.returncode == 0 and p.stdout.strip(), "runner failed: %s\n%s" % (p.stdout[-2000:], p.stderr[-2000:])
        answer = json.loads(p.stdout.strip().splitlines()[-1])
        assert "results" in answer, answer
    runs = []
    for (a, _e), r in zip(commands, answer["results"]):
        assert r["rc"] is not None, "timed out: %s\n%s" % (" ".join(a), r["err"])
        runs.append(Run(a, r["rc"], r["out"], r["err"]))
    return runs


def _port_in_use(port: int) -> bool:
    import socket

    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _which(name: str) -> bool:
    import shutil

    return shutil.which(name) is not None
