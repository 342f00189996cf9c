"""Shared fixtures. The suite runs against the installed wheel (python/build_and_test.sh)
and the simulator shipped in it; the simulator is process-global, like libdcgm, so fixtures
close what they open before the configuration changes."""

from __future__ import annotations

import faulthandler
import gc
import os
import signal
import sys
import sysconfig
from typing import Any, Dict, Iterator, Optional

import pytest

import dcgm


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("DCGM_PY_EDITABLE") == "1":
        return  # a developer's `maturin develop` install, on purpose (python/README.md)
    site = os.path.realpath(sysconfig.get_paths()["purelib"])
    where = os.path.realpath(dcgm.__file__)
    assert where.startswith(site), "dcgm must be the installed wheel, not %s" % where


def release() -> None:
    """Drops every handle the test left to the garbage collector."""
    gc.collect()


# A test that hangs (a deadlock in the library or the simulator) would stall the whole run
# until CI's limit: after this long, every thread's stack goes to stderr and the process
# exits, so the run fails at once and says where it stood.
HANG_S = float(os.environ.get("DCGM_PY_TEST_HANG_S", "180"))


@pytest.fixture(autouse=True)
def hang_watchdog() -> Iterator[None]:
    faulthandler.dump_traceback_later(HANG_S, exit=True, file=sys.stderr)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """Python's own SIGINT handler for the test, as an interactive interpreter has it: a run
    started in the background by a non-interactive shell inherits SIGINT ignored, Python then
    installs no KeyboardInterrupt handler, and `_thread.interrupt_main()` does nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture
def handle() -> Iterator[dcgm.Handle]:
    h = dcgm.Handle.embedded(simulate=True)
    try:
        yield h
    finally:
        h.close()
        release()


@pytest.fixture
def sim_config() -> Iterator[Any]:
    """Call it with a dcgm-sim configuration (dict); the default node is restored after."""

    def apply(config: Optional[Dict[str, Any]]) -> None:
        release()
        dcgm.testing.configure_simulator(config)

    try:
        yield apply
    finally:
        release()
        dcgm.testing.configure_simulator(None)
