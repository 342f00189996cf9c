"""Helpers for tests that run against the simulator shipped in this package."""

from __future__ import annotations

import contextlib
import json
from typing import Any, Dict, Iterator, Optional, Union

from dcgm import _native

Config = Union[str, Dict[str, Any], None]


def configure_simulator(config: Config = None, library_path: Optional[str] = None) -> None:
    """Replaces the simulator's configuration: a dcgm-sim config as JSON or TOML text, or a
    dict (sent as JSON); ``None`` returns to ``DCGM_SIM_CONFIG`` or the default node (8 H100
    GPUs). It applies at the next ``dcgmInit``, that is once no handle on the simulator is
    open: close handles and readers (or let them be collected) first.
    """
    text = json.dumps(config) if isinstance(config, dict) else config
    _native.configure_simulator(text, library_path)


@contextlib.contextmanager
def simulator(config: Config = None, library_path: Optional[str] = None) -> Iterator[None]:
    """Configures the simulator for a ``with`` block and returns it to the default after."""
    configure_simulator(config, library_path)
    try:
        yield
    finally:
        configure_simulator(None, library_path)
