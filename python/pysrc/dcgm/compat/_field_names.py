"""The ``DCGM_FI_*`` names of NVIDIA's ``dcgm_fields`` (DCGM 4.6), and how a name outside them
resolves: a pre-4.6 name to the id of its 4.6 field, with a ``DeprecationWarning`` (an
``AttributeError`` once ``dcgm_fields.DCGM_DEPRECATED`` is 0), a name DCGM never had to an
``AttributeError`` naming the field to use.

``dcgm_fields`` defines these names and ``dcgm_structs`` answers them too
(``dcgm_structs.DCGM_FI_*``): both import this module, which imports neither.
"""

from __future__ import annotations

import warnings
from typing import Callable, Dict

from dcgm import fields as _fields
from dcgm.compat import _layout

#: Every ``DCGM_FI_*`` name of NVIDIA's ``dcgm_fields`` -> its field id: the public fields of
#: the package's table (the internal ones are ``dcgm_fields_internal``'s), then the names
#: NVIDIA's module adds.
FIELD_IDS: Dict[str, int] = {}
_internal = {f.name for f in _fields.all_fields() if f.internal}
for _f in _fields.all_fields():
    if _f.name is not None and _f.name not in _internal:
        FIELD_IDS[_f.name] = _f.field_id
del _f, _internal
# NVIDIA's module has this pre-4.6 name as a plain constant.
FIELD_IDS["DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"] = FIELD_IDS["DCGM_FI_DEV_CLOCKS_EVENT_REASONS"]
# NVIDIA's name of field 1421 (the C header's is DCGM_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST_NS)
FIELD_IDS["DCGM_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST_COUNT_NS"] = 1421
FIELD_IDS["DCGM_FI_SYSTEM_FIELD_UNKNOWN"] = _fields.DCGM_FI_SYSTEM_FIELD_UNKNOWN
FIELD_IDS["DCGM_FI_MAX_FIELDS"] = _fields.DCGM_FI_MAX_FIELDS
for _name in (
    "DCGM_FI_FIRST_NVSWITCH_FIELD_ID", "DCGM_FI_LAST_NVSWITCH_FIELD_ID",
    "DCGM_FI_DEV_FIRST_CONNECTX_FIELD_ID", "DCGM_FI_DEV_LAST_CONNECTX_FIELD_ID",
):
    FIELD_IDS[_name] = _layout.CONSTANTS[_name]
del _name

#: pre-4.6 name -> 4.6 name (NVIDIA's ``dcgm_fields._DEPRECATED_ALIASES``).
DEPRECATED_ALIASES: Dict[str, str] = dict(_fields.DEPRECATED_ALIASES)
DEPRECATED_ALIASES["DCGM_FI_UNKNOWN"] = "DCGM_FI_SYSTEM_FIELD_UNKNOWN"
del DEPRECATED_ALIASES["DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"]  # a plain constant (above)

#: names readers use that DCGM never had -> the field to use instead
_NOT_DCGM_NAMES: Dict[str, str] = {
    "DCGM_FI_DEV_MEM_USED": "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_MEM_FREE": "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_MEM_TOTAL": "DCGM_FI_DEV_FB_TOTAL",
}


def _nvidia_default() -> int:
    return 1


_deprecated_switch: Callable[[], int] = _nvidia_default


def read_deprecated_switch(read: Callable[[], int]) -> None:
    """Where :func:`resolve` reads ``DCGM_DEPRECATED`` from: ``dcgm_fields`` hands over its
    module variable at import (a program sets it there, as with NVIDIA's). Before that
    (``dcgm_structs.DCGM_FI_*`` with ``dcgm_fields`` never imported) no program can have set it,
    and it is NVIDIA's default, 1."""
    global _deprecated_switch
    _deprecated_switch = read


def _missing(module: str, name: str) -> AttributeError:
    """The ``AttributeError`` of a name the module lacks, naming the field to use where a
    similar name exists."""
    use = _NOT_DCGM_NAMES.get(name)
    if use is not None:
        return AttributeError(
            "module %r has no attribute %r: DCGM has no field of that name; use %s (%d) for "
            "the framebuffer memory it means" % (module, name, use, FIELD_IDS[use])
        )
    return AttributeError("module %r has no attribute %r" % (module, name))


def resolve(module: str, name: str) -> int:
    """What ``module.name`` is for a name outside :data:`FIELD_IDS`: the id of a pre-4.6 name's
    field, else an ``AttributeError``. Called from the module's ``__getattr__``, so that the
    warning points at the code that read the name."""
    if name in DEPRECATED_ALIASES:
        if _deprecated_switch() == 0:
            raise AttributeError("%s is deprecated and DCGM_DEPRECATED=0" % name)
        new_name = DEPRECATED_ALIASES[name]
        warnings.warn("%s is deprecated, use %s instead" % (name, new_name), DeprecationWarning, stacklevel=3)
        return FIELD_IDS[new_name]
    raise _missing(module, name)
