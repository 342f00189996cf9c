"""Enumerations of the dcgm package, generated from the native module's tables."""

from __future__ import annotations

import enum

from dcgm import _native


class Blank(enum.Enum):
    """Why a field has no value. DCGM encodes these as sentinel numbers; this package never
    hands such a number out as a value."""

    #: No value (not sampled yet, or no data).
    BLANK = "blank"
    #: The entity was not found.
    NOT_FOUND = "not_found"
    #: The field is not supported on this entity.
    NOT_SUPPORTED = "not_supported"
    #: The caller may not read this field.
    NOT_PERMISSIONED = "not_permissioned"


def _names(pairs: list[tuple[str, int]], strip: str = "") -> dict[str, int]:
    return {name[len(strip):] if name.startswith(strip) else name: value for name, value in pairs}


#: Entity kinds (``DCGM_FE_*``): ``EntityGroup.GPU == dcgm.fields.DCGM_FE_GPU``.
EntityGroup = enum.IntEnum(  # type: ignore[misc]
    "EntityGroup",
    _names([(n, v) for n, v, _ in _native.entity_groups()], "DCGM_FE_"),
    module=__name__,
)

#: Health watch systems (``DCGM_HEALTH_WATCH_*``), combinable with ``|``.
HealthSystem = enum.IntFlag(  # type: ignore[misc]
    "HealthSystem", _names(_native.health_systems()), module=__name__
)

#: Policy conditions (``DCGM_POLICY_COND_*``), combinable with ``|``.
PolicyCondition = enum.IntFlag(  # type: ignore[misc]
    "PolicyCondition", _names(_native.policy_conditions()), module=__name__
)
