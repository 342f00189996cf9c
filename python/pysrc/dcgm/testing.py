"""Helpers for tests: the simulator shipped in this package (``configure_simulator``,
``simulator``) and DCGM's test API, on the simulator or on a real libdcgm:

* ``create_fake_gpus(handle, n)``, ``create_fake_gpu_instances(handle, parent_gpu, n)``,
  ``create_fake_compute_instances(handle, parent_gpu_instance, n)``: create fake entities
  (``dcgmCreateFakeEntities``) and return their new ids;
* ``inject_value(handle, entity_or_gpu, field, value, timestamp=None)``: injects an int, float
  or str as the newest sample of a field (``dcgmInjectEntityFieldValue``); ``entity_or_gpu`` is
  a GPU id or an ``(entity_group, entity_id)`` pair, ``field`` an id, name or tag,
  ``timestamp`` seconds since 1970 (``None``: now), stored as ``round(timestamp * 1e6)``
  microseconds. An injected XID raises XID policy
  violations and health incidents as a real one does;
* ``empty_cache(handle)``: drops every cached sample and every watch (``dcgmEmptyCache``). On
  libdcgm 4.6.0 that includes the policy module's own watches: call it before registering
  policies, not after.

Errors are the ``DCGMError_*`` classes of :mod:`dcgm.structs`.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Dict, Iterator, Optional, Union

from dcgm import _native
from dcgm._native import (
    create_fake_compute_instances,
    create_fake_gpu_instances,
    create_fake_gpus,
    empty_cache,
    inject_value,
)

__all__ = [
    "Config",
    "configure_simulator",
    "create_fake_compute_instances",
    "create_fake_gpu_instances",
    "create_fake_gpus",
    "empty_cache",
    "inject_value",
    "simulator",
]

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
