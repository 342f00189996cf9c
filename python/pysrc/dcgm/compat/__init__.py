# mypy: ignore-errors
# (NVIDIA's API is untyped and this module builds names at import; its parity is tested against
# NVIDIA's own modules in python/tests/compat, not by mypy.)
"""Drop-in modules for programs written against NVIDIA's DCGM Python bindings.

Two ways in:

* edited imports: ``from dcgm.compat import pydcgm, dcgm_agent, dcgm_structs, dcgm_fields``;
* no edits: ``python -m dcgm.compat [--simulate | --library PATH] SCRIPT [ARGS...]``, or
  :func:`install` (e.g. from a ``sitecustomize``): ``import pydcgm``, ``import dcgm_agent`` and
  the rest of NVIDIA's binding modules then resolve to these, ahead of any copy of NVIDIA's on
  ``sys.path``.

The library is the one the rest of the package finds; :func:`use_library` chooses another, or
the simulator shipped in the package, before the first ``dcgmInit``.
"""

from __future__ import annotations

import os
from typing import Optional, Tuple

#: NVIDIA's installed binding modules (DCGM 4.6), each provided here under its name.
MODULES = (
    "dcgm_agent",
    "dcgm_structs",
    "dcgm_fields",
    "dcgm_fields_internal",
    "dcgm_fields_collectd",
    "dcgmvalue",
    "dcgm_errors",
    "dcgm_field_helpers",
    "pydcgm",
    "DcgmHandle",
    "DcgmSystem",
    "DcgmGroup",
    "DcgmFieldGroup",
    "DcgmStatus",
    "DcgmDiag",
    "DcgmMnDiag",
    "DcgmLogging",
    "DcgmReader",
    "DcgmJsonReader",
    "dcgm_agent_internal",
    "dcgm_structs_internal",
)

_choice: Tuple[Optional[str], bool] = (None, False)

#: Environment variables ``python -m dcgm.compat`` sets for the program it runs (and its
#: children): ``DCGM_COMPAT_SIMULATE=1`` for the packaged simulator, ``DCGM_COMPAT_LIBRARY`` a
#: libdcgm file or directory.
SIMULATE_ENV = "DCGM_COMPAT_SIMULATE"
LIBRARY_ENV = "DCGM_COMPAT_LIBRARY"


def use_library(path: Optional[str] = None, simulate: bool = False) -> None:
    """Chooses the library the compat modules open at the first ``dcgmInit``: ``path`` (a
    libdcgm file, or a directory holding ``libdcgm.so.4``), or with ``simulate=True`` the
    dcgm-sim simulator shipped in this package (its values are simulated; ask
    ``dcgm_structs.dcgmLib.simulated``). Without a call: ``DCGM_COMPAT_LIBRARY`` /
    ``DCGM_COMPAT_SIMULATE``, then the package's normal search (``DCGM_LIB_PATH``, the
    sonames, the distribution directories), never the simulator."""
    global _choice
    _choice = (path, simulate)


def _library_choice() -> Tuple[Optional[str], bool]:
    path, simulate = _choice
    if path is None and not simulate:
        path = os.environ.get(LIBRARY_ENV) or None
        simulate = os.environ.get(SIMULATE_ENV, "") == "1"
    return path, simulate


from dcgm.compat._install import install, uninstall  # noqa: E402,F401  (the zero-edit way in)
