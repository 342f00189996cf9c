"""Field ids, entity groups and field types, under the names of NVIDIA's ``dcgm_fields``.

Every ``DCGM_FI_*`` name of DCGM 4.6 and every pre-4.6 name of the same field (still used by
dcgm-exporter counter files and older scripts) is a module constant, as is every ``DCGM_FE_*``
entity group. DCGM 4.6.1's base-unit fields (1600-1612, such as ``DCGM_FI_DEV_SM_CLOCK_HERTZ``)
are here too, their ``FieldMeta.since`` ``"4.6.1"``: a library of 4.6.0 or older does not know
them, and the package leaves them out of its field groups. They are generated at import from the native module's field table, whose one
source is ``dcgm-sys/data/fields.tsv``.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Union

from dcgm import _native
from dcgm._native import FieldMeta

#: Field types (``FieldMeta.field_type``).
DCGM_FT_BINARY = "b"
DCGM_FT_DOUBLE = "d"
DCGM_FT_INT64 = "i"
DCGM_FT_STRING = "s"
DCGM_FT_TIMESTAMP = "t"

#: Field scopes (``FieldMeta.scope``).
DCGM_FS_GLOBAL = 0
DCGM_FS_ENTITY = 1
DCGM_FS_DEVICE = DCGM_FS_ENTITY

#: No field (DCGM 4.6 name; ``DCGM_FI_UNKNOWN`` is the older one).
DCGM_FI_SYSTEM_FIELD_UNKNOWN = 0
DCGM_FI_UNKNOWN = DCGM_FI_SYSTEM_FIELD_UNKNOWN
#: One past the last field id of the table: DCGM 4.6.1's 1613 (4.6.0's is 1534).
DCGM_FI_MAX_FIELDS: int = _native.DCGM_FI_MAX_FIELDS

DCGM_FE_COUNT: int = _native.DCGM_FE_COUNT
#: entity group -> DCGM's display name (``1 -> "GPU"``).
ENTITY_GROUP_NAMES: Dict[int, str] = {}
for _name, _value, _display in _native.entity_groups():
    globals()[_name] = _value
    ENTITY_GROUP_NAMES[_value] = _display

_TABLE: List[FieldMeta] = _native.field_table()
_BY_ID: Dict[int, FieldMeta] = {f.field_id: f for f in _TABLE}
_BY_TAG: Dict[str, FieldMeta] = {f.tag: f for f in _TABLE}

#: pre-4.6 name -> DCGM 4.6 name (``"DCGM_FI_DEV_GPU_TEMP" -> "DCGM_FI_DEV_GPU_TEMP_CELSIUS"``).
DEPRECATED_ALIASES: Dict[str, str] = {}
#: DCGM 4.6.1 name -> DCGM 4.6.0 name (``"DCGM_FI_DEV_CPU_UTIL_RATIO" -> "DCGM_FI_DEV_CPU_UTIL_TOTAL"``).
NEWER_NAMES: Dict[str, str] = {}

for _f in _TABLE:
    assert _f.name is not None
    globals()[_f.name] = _f.field_id
    for _alias in _f.deprecated_aliases:
        globals()[_alias] = _f.field_id
        DEPRECATED_ALIASES[_alias] = _f.name
    for _alias in _f.newer_names:
        globals()[_alias] = _f.field_id
        NEWER_NAMES[_alias] = _f.name

del _name, _value, _display, _f, _alias


def all_fields() -> List[FieldMeta]:
    """Every field DCGM 4.6.0 defines and the ones 4.6.1 added (``since``), in id order."""
    return list(_TABLE)


def field_info(field: Union[int, str]) -> Optional[FieldMeta]:
    """A field's metadata by id, 4.6 name, pre-4.6 alias or tag; ``None`` if unknown."""
    return _native.field_info(field)


def field_id(field: Union[int, str]) -> int:
    """A field's id by id, name, alias or tag; raises ``DCGMError_UnknownField`` if unknown."""
    meta = _native.field_info(field)
    if meta is None:
        from dcgm.structs import DCGM_ST_UNKNOWN_FIELD, DCGMError

        raise DCGMError(DCGM_ST_UNKNOWN_FIELD, "unknown field %r" % (field,))
    return meta.field_id


def field_tag(field: Union[int, str]) -> str:
    """A field's tag (``"gpu_temp"``), the key of DcgmReader's field-name dicts."""
    return _BY_ID[field_id(field)].tag


def entity_group_name(entity_group: int) -> str:
    """DCGM's name of an entity group (``"GPU"``, ``"GPU_I"``, ...); ``"None"`` if unknown."""
    return ENTITY_GROUP_NAMES.get(entity_group, "None")


def DcgmFieldsInit() -> None:
    """Kept for pydcgm scripts: the table needs no initialisation."""


def DcgmFieldGetById(fieldId: int) -> Optional[FieldMeta]:
    """A field's metadata by id, or ``None``."""
    return _BY_ID.get(fieldId)


def DcgmFieldGetByTag(tag: str) -> Optional[FieldMeta]:
    """A field's metadata by tag, or ``None``."""
    return _BY_TAG.get(tag)


def DcgmFieldGetTagById(fieldId: int) -> Optional[str]:
    """A field's tag by id, or ``None``."""
    f = _BY_ID.get(fieldId)
    return f.tag if f is not None else None


def DcgmFieldGetIdByTag(fieldTag: str) -> Optional[int]:
    """A field's id by tag, or ``None``."""
    f = _BY_TAG.get(fieldTag)
    return f.field_id if f is not None else None
