"""Drop-in modules for programs written against NVIDIA's DCGM Python bindings.

Two ways in:

* edited imports: ``from dcgm.compat import pydcgm, dcgm_agent, dcgm_structs, dcgm_fields``;
* no edits: ``python -m dcgm.compat [--simulate | --library PATH] SCRIPT [ARGS...]``, or
  :func:`install` (e.g. from a ``sitecustomize``): ``import pydcgm``, ``import dcgm_agent`` and
  the rest of NVIDIA's binding modules then resolve to these, ahead of any copy of NVIDIA's on
  ``sys.path``.

The library is the one the rest of the package finds; :func:`use_library` chooses another, or
the simulator shipped in the package, before the first ``dcgmInit``.

A blank field value (``isBlank``) has ``value`` ``None`` here, where NVIDIA's bindings keep
DCGM's sentinel number; ``DCGM_COMPAT_BLANK_SENTINELS=1`` keeps the number (see
:func:`blank_sentinels`).
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


#: ``DCGM_COMPAT_BLANK_SENTINELS=1`` (or ``python -m dcgm.compat --blank-sentinels``): a blank
#: field value's ``value`` is NVIDIA's sentinel number (``140737488355328.0``,
#: ``9223372036854775794``, ``"<<<NOT_SUPPORTED>>>"``...), as NVIDIA's bindings give it, instead
#: of ``None``. Read each time values are made, so it can be set or cleared at any point.
BLANK_SENTINELS_ENV = "DCGM_COMPAT_BLANK_SENTINELS"


def blank_sentinels() -> bool:
    """Whether blank field values carry NVIDIA's sentinel number in ``value``
    (``DCGM_COMPAT_BLANK_SENTINELS=1``) rather than ``None`` (the default).

    By default ``dcgm_field_helpers.DcgmFieldValue`` (what ``DcgmGroup.samples`` and the
    collections and watchers fill) and ``DcgmReader``'s samples give a blank value (``isBlank``
    true: no sample yet, not found, not supported, not permissioned, an error status) as
    ``value`` ``None``, so that a client that skips ``value is None`` never averages or
    exports a sentinel such as ``140737488355328.0``. ``isBlank`` is the same either way."""
    return os.environ.get(BLANK_SENTINELS_ENV, "") == "1"


def _library_choice() -> Tuple[Optional[str], bool]:
    path, simulate = _choice
    if path is None and not simulate:
        path = os.environ.get(LIBRARY_ENV) or None
        simulate = os.environ.get(SIMULATE_ENV, "") == "1"
    return path, simulate


from dcgm.compat._install import install, uninstall  # noqa: E402,F401  (the zero-edit way in)
