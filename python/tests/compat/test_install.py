"""The zero-edit ways in: dcgm.compat.install() (also from a sitecustomize) and
``python -m dcgm.compat``. Each case runs in a process of its own, with NVIDIA's bindings
directory first on sys.path, so that the hook is shown to win over NVIDIA's copies."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import pytest

from programs import _harness as h

# Light modules (no library is opened) that exist in this package.
LIGHT = ["dcgm_structs", "DcgmReader", "DcgmJsonReader"]


def env(pythonpath: List[Path]) -> Dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("DCGM_COMPAT_") and k != "PYTHONPATH"}
    e["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    return e


def py(code: str, pythonpath: List[Path], *args: str, cwd: Path = Path("/")) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args, "-c", textwrap.dedent(code)], env=env(pythonpath), cwd=str(cwd),
                          capture_output=True, text=True, timeout=60)


def nvidia_first() -> List[Path]:
    h.need_nvidia()
    return [h.BINDINGS]


def test_install_shadows_nvidia_copies() -> None:
    r = py(
        """
        import sys
        sys.path.insert(0, %r)
        import dcgm.compat
        dcgm.compat.install()
        import dcgm_structs, DcgmReader, DcgmJsonReader, common
        from DcgmReader import DcgmReader as R
        assert sys.modules["dcgm_structs"] is dcgm.compat.dcgm_structs
        assert dcgm_structs.__name__ == "dcgm.compat.dcgm_structs", dcgm_structs.__name__
        assert dcgm_structs.__spec__.name == "dcgm.compat.dcgm_structs"
        assert R is dcgm.compat.DcgmReader.DcgmReader
        assert DcgmJsonReader.DcgmReader is R
        # non-binding helpers stay NVIDIA's
        assert common.__file__.startswith(%r), common.__file__
        import importlib
        importlib.reload(dcgm_structs)
        assert sys.modules["dcgm_structs"] is dcgm.compat.dcgm_structs
        dcgm.compat.install()  # twice is harmless
        from dcgm.compat import _install
        assert sum(isinstance(f, _install.CompatFinder) for f in sys.meta_path) == 1
        dcgm.compat.uninstall()
        assert "dcgm_structs" not in sys.modules and not _install.is_installed()
        import dcgm_structs as theirs
        assert theirs.__file__.startswith(%r), theirs.__file__
        print("ok")
        """ % (str(h.BINDINGS), str(h.BINDINGS), str(h.BINDINGS)),
        nvidia_first(),
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_every_module_name_is_hooked() -> None:
    r = py(
        """
        import sys, importlib.util
        import dcgm.compat
        dcgm.compat.install()
        from dcgm.compat._install import CompatFinder
        f = sys.meta_path[0]
        assert isinstance(f, CompatFinder)
        missing = [n for n in dcgm.compat.MODULES if f.find_spec(n) is None]
        assert not missing, missing
        assert f.find_spec("common") is None and f.find_spec("dcgm_structs", ["x"]) is None
        assert f.find_spec("collectd") is None
        print("ok")
        """,
        [],
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_install_warns_about_modules_imported_before() -> None:
    r = py(
        """
        import warnings, dcgm_structs
        import dcgm.compat
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            dcgm.compat.install()
        assert any("dcgm_structs" in str(x.message) for x in w), [str(x.message) for x in w]
        print("ok")
        """,
        nvidia_first(),
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_sitecustomize(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import dcgm.compat\ndcgm.compat.install()\n")
    r = py(
        """
        import sys, dcgm_structs, DcgmReader
        assert dcgm_structs.__name__ == "dcgm.compat.dcgm_structs", dcgm_structs.__file__
        assert DcgmReader.__name__ == "dcgm.compat.DcgmReader"
        print("ok")
        """,
        [site] + nvidia_first(),
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# --- python -m dcgm.compat ---

SCRIPT = """\
import os, sys
print("argv", sys.argv)
print("path0", sys.path[0])
print("name", __name__, os.path.basename(__file__))
import dcgm_structs
print("structs", dcgm_structs.__name__)
print("env", os.environ.get("DCGM_COMPAT_SIMULATE"), os.environ.get("DCGM_COMPAT_LIBRARY"))
from dcgm import compat
print("choice", compat._library_choice())
if "raise" in sys.argv:
    def inner():
        raise ValueError("boom")
    inner()
if "exit" in sys.argv:
    sys.exit(7)
"""


def run_main(args: List[str], cwd: Path, pythonpath: List[Path]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dcgm.compat", *args], env=env(pythonpath), cwd=str(cwd),
                          capture_output=True, text=True, timeout=60)


def test_main_runs_a_script_as_python_would(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(SCRIPT)
    other = tmp_path / "elsewhere"
    other.mkdir()
    r = run_main(["--simulate", str(tmp_path / "prog.py"), "-e", "--help", "x"], other, nvidia_first())
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines["argv"] == repr([str(tmp_path / "prog.py"), "-e", "--help", "x"])
    assert lines["path0"] == str(tmp_path.resolve())
    assert lines["name"] == "__main__ prog.py"
    assert lines["structs"] == "dcgm.compat.dcgm_structs"
    assert lines["env"] == "1 None"
    assert lines["choice"] == "(None, True)"

    lib = tmp_path / "libdcgm.so.4"
    r = run_main(["--library", str(lib), "prog.py"], tmp_path, [])
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines["argv"] == repr(["prog.py"])
    assert lines["env"] == "None %s" % lib
    assert lines["choice"] == repr((str(lib), False))


def test_main_exit_status_and_traceback(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(SCRIPT)
    ours = run_main(["--simulate", "prog.py", "raise"], tmp_path, [])
    assert ours.returncode == 1
    tb = ours.stderr
    assert tb.startswith("Traceback (most recent call last):\n  File \"%s\"" % (tmp_path / "prog.py")), tb
    assert "ValueError: boom" in tb and "in inner" in tb
    assert "dcgm/compat/__main__.py" not in tb and "runpy" not in tb, tb
    assert run_main(["prog.py", "exit"], tmp_path, []).returncode == 7
    missing = run_main(["nothere.py"], tmp_path, [])
    assert missing.returncode == 2 and "can't open file" in missing.stderr


def test_main_module_form_and_help(tmp_path: Path) -> None:
    pkg = tmp_path / "tool"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text("import sys, dcgm_structs\nprint(sys.argv, dcgm_structs.__name__)\n")
    r = run_main(["--simulate", "-m", "tool", "-x", "y"], tmp_path, [])
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "%r dcgm.compat.dcgm_structs" % ([str(pkg / "__main__.py"), "-x", "y"],)
    r = run_main(["-m", "no_such_tool"], tmp_path, [])
    assert r.returncode == 1 and "No module named no_such_tool" in r.stderr, r.stderr
    r = run_main(["--help"], tmp_path, [])
    assert r.returncode == 0
    for words in ("SCRIPT", "--simulate", "--library", "-m MODULE", "NVIDIA", "sys.path"):
        assert words in r.stdout, words
    r = run_main([], tmp_path, [])
    assert r.returncode == 2 and "SCRIPT" in r.stderr
    r = run_main(["--simulate", "--library", "x", "prog.py"], tmp_path, [])
    assert r.returncode == 2 and "not allowed with" in r.stderr


@pytest.mark.parametrize("sig_exit", [True])
def test_main_keyboard_interrupt_ends_by_sigint(tmp_path: Path, sig_exit: bool) -> None:
    (tmp_path / "k.py").write_text("raise KeyboardInterrupt\n")
    r = run_main(["k.py"], tmp_path, [])
    assert r.returncode == -2, (r.returncode, r.stderr)
    assert r.stderr.rstrip().endswith("KeyboardInterrupt")
