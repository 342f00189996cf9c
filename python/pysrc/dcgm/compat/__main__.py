"""``python -m dcgm.compat``: runs a program written for NVIDIA's DCGM Python bindings on this
package, without editing it.

    python -m dcgm.compat [--simulate | --library PATH] [--blank-sentinels] SCRIPT [ARGS...]
    python -m dcgm.compat [--simulate | --library PATH] [--blank-sentinels] -m MODULE [ARGS...]

It installs the import hook (:func:`dcgm.compat.install`), so that ``import pydcgm``,
``import dcgm_agent`` and the rest of NVIDIA's binding modules are this package's even when
the script sits in NVIDIA's bindings directory; chooses the library; then runs SCRIPT as
``python SCRIPT ARGS...`` would: as ``__main__``, with ``sys.argv = [SCRIPT, *ARGS]`` and the
script's directory first on ``sys.path``, with Python's exit status and tracebacks.
"""

from __future__ import annotations

import argparse
import builtins
import os
import runpy
import signal
import sys
import types
from typing import List, Optional, Sequence, Tuple

from dcgm import compat

_DESCRIPTION = """\
Run a Python program written for NVIDIA's DCGM Python bindings (pydcgm, dcgm_agent,
dcgm_structs, dcgm_fields, DcgmReader, ...) on the dcgm package, with no edit to it.

The binding modules are this package's (dcgm.compat), ahead of any copy of NVIDIA's on
sys.path, so the program can be run from NVIDIA's own bindings directory; anything else it
imports (NVIDIA's common/ helpers, its own modules) is found as usual. SCRIPT then runs as
"python SCRIPT ARGS..." would: as __main__, sys.argv = [SCRIPT, ARGS...], the script's
directory first on sys.path, and Python's exit status and tracebacks.

The library is the package's usual one (DCGM_LIB_PATH, the installed libdcgm.so.4) unless
--simulate or --library says otherwise; the choice is also put in the environment
(DCGM_COMPAT_SIMULATE=1 or DCGM_COMPAT_LIBRARY=PATH) for the program's child processes
that use dcgm.compat.

A blank field value (no sample yet, e.g. the first profiling samples after a watch starts;
not supported; an error) has value None here, and isBlank true. NVIDIA's bindings put DCGM's
sentinel number in value (140737488355328.0, 9223372036854775794, "<<<NOT_SUPPORTED>>>"),
which a program that averages every value that is not None reports as a reading.
--blank-sentinels gives NVIDIA's number back (it sets DCGM_COMPAT_BLANK_SENTINELS=1, which
does the same without this command)."""

_EPILOG = """\
examples:
  python -m dcgm.compat --simulate dcgm_example.py
  cd /usr/share/datacenter-gpu-manager-4/bindings/python3
  python -m dcgm.compat dcgm_telegraf.py -e -i 10
  python -m dcgm.compat --library /usr/lib/x86_64-linux-gnu -m mytool --verbose"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m dcgm.compat",
        usage="%(prog)s [-h] [--simulate | --library PATH] [--blank-sentinels] (SCRIPT | -m MODULE) [ARGS ...]",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    lib = p.add_mutually_exclusive_group()
    lib.add_argument(
        "--simulate",
        action="store_true",
        help="use the dcgm-sim simulator shipped in this package (simulated GPUs, no driver needed)",
    )
    lib.add_argument(
        "--library",
        metavar="PATH",
        help="use this libdcgm: a libdcgm.so.4 file, or a directory holding one",
    )
    p.add_argument(
        "--blank-sentinels",
        action="store_true",
        help="a blank field value's value is NVIDIA's sentinel number, as NVIDIA's bindings give it, "
        "instead of None (sets %s=1)" % compat.BLANK_SENTINELS_ENV,
    )
    p.add_argument("-m", dest="module", metavar="MODULE", help="run library module MODULE as a script (like python -m)")
    p.add_argument("script", nargs="?", metavar="SCRIPT", help="the program to run")
    p.add_argument("args", nargs="*", metavar="ARGS", help="the program's own arguments, passed to it untouched")
    return p


def _split(argv: Sequence[str]) -> Tuple[List[str], Optional[str], Optional[str], List[str]]:
    """Separates this command's own options from the program and the program's arguments
    (which may look like options: they are never parsed here)."""
    own: List[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if a == "-m":
            if i + 1 >= len(argv):
                own.append(a)  # argparse reports the missing MODULE
                return own, None, None, []
            return own, None, argv[i + 1], list(argv[i + 2 :])
        if a.startswith("-m") and len(a) > 2:
            return own, None, a[2:], list(argv[i + 1 :])
        if a == "--library":
            own.extend(argv[i : i + 2])
            i += 2
            continue
        if a.startswith("-") and a != "-":
            own.append(a)
            i += 1
            continue
        break
    if i < len(argv):
        return own, argv[i], None, list(argv[i + 1 :])
    return own, None, None, []


def _choose_library(simulate: bool, library: Optional[str]) -> None:
    if library is not None:
        path = os.path.abspath(library)
        compat.use_library(path)
        os.environ[compat.LIBRARY_ENV] = path
        os.environ.pop(compat.SIMULATE_ENV, None)
    elif simulate:
        compat.use_library(simulate=True)
        os.environ[compat.SIMULATE_ENV] = "1"
        os.environ.pop(compat.LIBRARY_ENV, None)


def _trim(tb: Optional[types.TracebackType], code_file: str) -> Optional[types.TracebackType]:
    """Drops the frames of this runner from a traceback, so that it starts in the program as
    Python's own would."""
    t = tb
    while t is not None and t.tb_frame.f_code.co_filename != code_file:
        t = t.tb_next
    return t if t is not None else tb


def _is_runner(filename: str) -> bool:
    return filename == __file__ or "runpy" in os.path.basename(filename)


def _runner_only(tb: Optional[types.TracebackType]) -> bool:
    """Whether a traceback lies in this runner and runpy only (the module was not found)."""
    while tb is not None:
        if not _is_runner(tb.tb_frame.f_code.co_filename):
            return False
        tb = tb.tb_next
    return True


def _report_uncaught(exc: BaseException, code_file: Optional[str]) -> int:
    """What Python does with an exception nobody caught: sys.excepthook, status 1 (a
    KeyboardInterrupt ends the process by SIGINT, as Python 3.8+ does)."""
    tb = exc.__traceback__
    if code_file is not None:
        tb = _trim(tb, code_file)
    else:
        while tb is not None and tb.tb_next is not None and _is_runner(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
    exc.__traceback__ = tb
    sys.excepthook(type(exc), exc, tb)
    if isinstance(exc, KeyboardInterrupt):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
    return 1


def _run_script(script: str) -> None:
    if os.path.isdir(script) or not script.endswith((".py", ".pyw")) and _is_zip(script):
        # A directory or zip application with a __main__.py: runpy does what python does.
        runpy.run_path(script, run_name="__main__")
        return
    with open(script, "rb") as f:
        source = f.read()
    path = os.path.abspath(script)
    code = compile(source, path, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__dict__.update(
        {
            "__file__": path,
            "__cached__": None,
            "__package__": None,
            "__spec__": None,
            "__builtins__": builtins,
        }
    )
    try:
        from importlib.machinery import SourceFileLoader

        main.__loader__ = SourceFileLoader("__main__", path)
    except Exception:  # pragma: no cover
        pass
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as e:
        raise _Uncaught(e, path) from None


def _is_zip(path: str) -> bool:
    import zipfile

    try:
        return zipfile.is_zipfile(path)
    except OSError:
        return False


class _Uncaught(Exception):
    """Carries an exception the program did not catch out of the runner."""

    def __init__(self, exc: BaseException, code_file: Optional[str]) -> None:
        super().__init__()
        self.exc = exc
        self.code_file = code_file


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    own, script, module, args = _split(argv)
    parser = _parser()
    opts = parser.parse_args(own)
    if script is None and module is None:
        parser.error("give the SCRIPT to run (or -m MODULE)")
    _choose_library(opts.simulate, opts.library)
    if opts.blank_sentinels:
        os.environ[compat.BLANK_SENTINELS_ENV] = "1"
    compat.install()

    if module is not None:
        sys.argv = [module] + args
        if sys.path:
            sys.path[0] = os.getcwd()
        else:
            sys.path.append(os.getcwd())
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        except SystemExit:
            raise
        except ImportError as e:
            if _runner_only(e.__traceback__):
                print("%s: %s" % (sys.executable, e), file=sys.stderr)
                return 1
            return _report_uncaught(e, None)
        except BaseException as e:
            return _report_uncaught(e, None)
        return 0

    assert script is not None
    if not os.path.exists(script):
        print(
            "%s: can't open file %r: [Errno 2] No such file or directory" % (sys.executable, os.path.abspath(script)),
            file=sys.stderr,
        )
        return 2
    sys.argv = [script] + args
    here = os.path.dirname(os.path.realpath(script))
    if sys.path:
        sys.path[0] = here
    else:
        sys.path.append(here)
    try:
        _run_script(script)
    except _Uncaught as u:
        return _report_uncaught(u.exc, u.code_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
