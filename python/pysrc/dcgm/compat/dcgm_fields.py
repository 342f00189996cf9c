"""NVIDIA's ``dcgm_fields`` (DCGM 4.6): every ``DCGM_FI_*`` field id, the entity groups
(``DCGM_FE_*``), field types (``DCGM_FT_*``) and scopes (``DCGM_FS_*``), the field-metadata
structures and ``DcgmFieldGetById``/``DcgmFieldGetByTag`` and friends.

* The ids come from the package's field table (:mod:`dcgm.fields`, whose one source is
  ``dcgm-sys/data/fields.tsv``), under NVIDIA's names. DCGM 4.6.1's base-unit fields
  (1600-1612) are here too, so ``DCGM_FI_MAX_FIELDS`` is 4.6.1's 1613 (NVIDIA's 4.6.0: 1534). Pre-4.6 names resolve as NVIDIA's do:
  with a ``DeprecationWarning`` naming the 4.6 name, or ``AttributeError`` once
  ``DCGM_DEPRECATED`` is set to 0.
* A name DCGM never had but that readers expect (``DCGM_FI_DEV_MEM_USED``) raises
  ``AttributeError`` naming the field to use (``DCGM_FI_DEV_FB_USED``); no alias is invented.
* The names are made from :mod:`dcgm.fields` (the ids, the entity groups, the field types and
  scopes are its objects, not copies).
* The metadata functions ask the loaded library, as NVIDIA's do. Where no library is open yet
  (or it lacks the function) they answer from the package's table instead of raising
  ``DCGMError_Uninitialized`` (a deliberate difference: nothing is lost).
"""

from __future__ import annotations

import ctypes
from ctypes import *  # noqa: F401,F403  (NVIDIA's module re-exports ctypes' names)
from ctypes.util import find_library  # noqa: F401  (a name of NVIDIA's module)
from typing import Any as _Any, Dict as _Dict, Optional as _Optional, Tuple as _Tuple

from dcgm import fields as _fields
from dcgm.compat import _field_names, _layout, dcgm_structs

dcgmFP = dcgm_structs._dcgmGetFunctionPointer

# Field types and scopes: dcgm.fields' (one definition)
from dcgm.fields import (  # noqa: E402
    DCGM_FS_DEVICE as DCGM_FS_DEVICE,
    DCGM_FS_ENTITY as DCGM_FS_ENTITY,
    DCGM_FS_GLOBAL as DCGM_FS_GLOBAL,
    DCGM_FT_BINARY as DCGM_FT_BINARY,
    DCGM_FT_DOUBLE as DCGM_FT_DOUBLE,
    DCGM_FT_INT64 as DCGM_FT_INT64,
    DCGM_FT_STRING as DCGM_FT_STRING,
    DCGM_FT_TIMESTAMP as DCGM_FT_TIMESTAMP,
)

# Bits of DCGM_FI_DEV_CLOCKS_EVENT_REASONS, under both of NVIDIA's names.
for _reason in (
    "GPU_IDLE", "CLOCKS_SETTING", "SW_POWER_CAP", "HW_SLOWDOWN", "SYNC_BOOST", "SW_THERMAL",
    "HW_THERMAL", "HW_POWER_BRAKE", "DISPLAY_CLOCKS",
):
    globals()["DCGM_CLOCKS_EVENT_REASON_" + _reason] = _layout.CONSTANTS["DCGM_CLOCKS_EVENT_REASON_" + _reason]
    globals()["DCGM_CLOCKS_THROTTLE_REASON_" + _reason] = _layout.CONSTANTS["DCGM_CLOCKS_EVENT_REASON_" + _reason]
del _reason

# Entity groups (DCGM_FE_NONE ... DCGM_FE_CONNECTX)
for _name, _value in vars(_fields).items():
    if _name.startswith("DCGM_FE_") and _name != "DCGM_FE_COUNT":
        globals()[_name] = _value
del _name, _value

c_dcgm_field_eid_t = ctypes.c_uint32

#: pre-4.6 name -> 4.6 name: resolved by the module's ``__getattr__``, as NVIDIA's.
_DEPRECATED_ALIASES: _Dict[str, str] = _field_names.DEPRECATED_ALIASES

# The field ids (DCGM_FI_*), NVIDIA's names of them included.
globals().update(_field_names.FIELD_IDS)

#: Resolve pre-4.6 names (with a DeprecationWarning) while this is non-zero, as NVIDIA's.
DCGM_DEPRECATED = 1
# read at each resolution (here and in dcgm_structs), so that a program may set it at any time
_field_names.read_deprecated_switch(lambda: DCGM_DEPRECATED)


def __getattr__(name: str) -> _Any:
    """Pre-4.6 field names (deprecated, as NVIDIA's), and a clear error for names DCGM lacks."""
    return _field_names.resolve(__name__, name)


def _install_deprecated_alias_resolver() -> None:
    """Pre-4.6 names are resolved by the module's ``__getattr__`` from import on (NVIDIA's
    installs its resolver with this function); calling it again changes nothing."""


# ---- field metadata


class struct_c_dcgm_field_meta_t(dcgm_structs._DcgmStructure):
    """The opaque target of :data:`dcgm_field_meta_t` (never dereferenced)."""


dcgm_field_meta_t = ctypes.POINTER(struct_c_dcgm_field_meta_t)
_PrintableStructure = dcgm_structs._PrintableStructure

SHORTNAME_LENGTH = 10
UNIT_LENGTH = 4
TAG_LENGTH = 48

#: How a field's value is shown: short name, unit, column width (from dcgm-sys's layout).
c_dcgm_field_output_format_t = _layout.build("dcgm_field_output_format_t")
dcgm_field_output_format_t = ctypes.POINTER(c_dcgm_field_output_format_t)
#: A field's metadata: id, type, size, tag, scope, NVML id, entity level and output format.
c_dcgm_field_meta_t = _layout.build("dcgm_field_meta_t")


class pySamplingProperties:
    """Sampling properties of one event type (NVIDIA's plain holder class)."""

    def __init__(
        self,
        name: _Any,
        sampling_type: _Any,
        sample_val_type: _Any,
        timeIntervalIdle: _Any,
        timeIntervalBoost: _Any,
        min_value: _Any,
        max_value: _Any,
    ) -> None:
        self.name = name
        self.sampling_type = sampling_type
        self.timeIntervalIdle = timeIntervalIdle
        self.timeIntervalBoost = timeIntervalBoost
        self.min_value = min_value
        self.max_value = max_value
        self.sample_val_type = sample_val_type


def _library_function(name: str) -> _Optional[_Any]:
    """The library's function ``name``, or None where no library is open or it lacks it."""
    if dcgm_structs.dcgmLib is None:
        return None
    try:
        return dcgmFP(name)
    except dcgm_structs.DCGMError:
        return None


def DcgmFieldsInit() -> None:
    """Initialises the library's field table (``dcgmInit`` does too); nothing to do before a
    library is open."""
    fn = _library_function("DcgmFieldsInit")
    if fn is None:
        return
    ret = fn()
    assert ret == 0, "Got return %d from DcgmFieldsInit" % ret


#: field id -> (metadata, its output format): the package-table answers, kept alive so that
#: ``valueFormat`` stays a valid pointer.
_table_metas: _Dict[int, _Tuple[_Any, _Any]] = {}


def _from_table(meta: _Any) -> _Any:
    kept = _table_metas.get(meta.field_id)
    if kept is None:
        fmt = c_dcgm_field_output_format_t()
        fmt.shortName = meta.short_name.encode("utf-8")[: SHORTNAME_LENGTH - 1]
        fmt.unit = meta.unit.encode("utf-8")[: UNIT_LENGTH - 1]
        fmt.width = meta.width
        m = c_dcgm_field_meta_t()
        m.fieldId = meta.field_id
        m.fieldType = meta.field_type.encode("ascii")
        m.size = meta.size
        m.tag = meta.tag.encode("utf-8")[: TAG_LENGTH - 1]
        m.scope = meta.scope
        m.nvmlFieldId = meta.nvml_field_id
        m.entityLevel = meta.entity_level
        m.valueFormat = ctypes.pointer(fmt)
        kept = (m, fmt)
        _table_metas[meta.field_id] = kept
    out = c_dcgm_field_meta_t()
    ctypes.memmove(ctypes.addressof(out), ctypes.addressof(kept[0]), ctypes.sizeof(out))
    return out


def _copy(ptr: _Any) -> _Any:
    if not ptr:
        return None
    out = c_dcgm_field_meta_t()
    ctypes.memmove(ctypes.addressof(out), ptr, ctypes.sizeof(out))
    return out


def DcgmFieldGetById(fieldId: int) -> _Optional[_Any]:
    """The metadata (a ``c_dcgm_field_meta_t`` copy) of the field ``fieldId``; ``None`` for
    an id DCGM does not have."""
    DcgmFieldsInit()
    fn = _library_function("DcgmFieldGetById")
    if fn is None:
        meta = _fields.DcgmFieldGetById(int(fieldId))
        return None if meta is None else _from_table(meta)
    fn.restype = ctypes.POINTER(c_dcgm_field_meta_t)
    return _copy(fn(fieldId))


def DcgmFieldGetByTag(tag: str) -> _Optional[_Any]:
    """The metadata (a ``c_dcgm_field_meta_t`` copy) of the field tagged ``tag`` (e.g.
    ``"gpu_temp"``); ``None`` for a tag DCGM does not have."""
    DcgmFieldsInit()
    fn = _library_function("DcgmFieldGetByTag")
    if fn is None:
        meta = _fields.DcgmFieldGetByTag(tag)
        return None if meta is None else _from_table(meta)
    fn.restype = ctypes.POINTER(c_dcgm_field_meta_t)
    return _copy(fn(ctypes.c_char_p(tag.encode("utf-8"))))


def DcgmFieldGetTagById(fieldId: int) -> _Optional[str]:
    """The tag of the field ``fieldId``, or ``None``."""
    field = DcgmFieldGetById(fieldId)
    return field.tag if field else None


def DcgmFieldGetIdByTag(fieldTag: str) -> _Optional[int]:
    """The id of the field tagged ``fieldTag``, or ``None``."""
    field = DcgmFieldGetByTag(fieldTag)
    return field.fieldId if field else None
