"""The request objects of DCGM's test API under the names of NVIDIA's ``dcgm_structs_internal``,
for :mod:`dcgm.agent_internal`: plain Python objects with the same attribute names as NVIDIA's
ctypes structures (not ctypes structures themselves: they are read by
:mod:`dcgm.agent_internal`, never passed to the library as memory).

Only the two structures that :mod:`dcgm.agent_internal` takes are here:
:class:`c_dcgmCreateFakeEntities_v2` and :class:`c_dcgmInjectFieldValue_v1`.
"""

from __future__ import annotations

from typing import List, Union

from dcgm import _native

#: Capacity of :attr:`c_dcgmCreateFakeEntities_v2.entityList`.
DCGM_MAX_HIERARCHY_INFO: int = _native.DCGM_MAX_HIERARCHY_INFO
#: Version word of :class:`c_dcgmCreateFakeEntities_v2`.
dcgmCreateFakeEntities_version2: int = _native.dcgmCreateFakeEntities_version2
#: Version word of :class:`c_dcgmInjectFieldValue_v1`.
dcgmInjectFieldValue_version1: int = _native.dcgmInjectFieldValue_version1


class c_dcgmGroupEntityPair_t:
    """An entity: ``entityGroupId`` (a ``DCGM_FE_*``) and ``entityId``."""

    def __init__(self, entityGroupId: int = 0, entityId: int = 0) -> None:
        self.entityGroupId = entityGroupId
        self.entityId = entityId

    def __repr__(self) -> str:
        return "c_dcgmGroupEntityPair_t(entityGroupId=%d, entityId=%d)" % (self.entityGroupId, self.entityId)


class c_dcgmMigHierarchyInfo_t:
    """One entry of a fake-entity request: the ``entity`` to create (set its
    ``entityGroupId``; the new id is written to its ``entityId``) and its ``parent``."""

    def __init__(self) -> None:
        self.entity = c_dcgmGroupEntityPair_t()
        self.parent = c_dcgmGroupEntityPair_t()

    def __repr__(self) -> str:
        return "c_dcgmMigHierarchyInfo_t(entity=%r, parent=%r)" % (self.entity, self.parent)


class c_dcgmCreateFakeEntities_v2:
    """A request for ``dcgmCreateFakeEntities``: the first ``numToCreate`` entries of
    ``entityList``."""

    def __init__(self) -> None:
        self.version = dcgmCreateFakeEntities_version2
        self.numToCreate = 0
        self.entityList: List[c_dcgmMigHierarchyInfo_t] = [
            c_dcgmMigHierarchyInfo_t() for _ in range(DCGM_MAX_HIERARCHY_INFO)
        ]


class c_dcgmFieldValue_v1_value:
    """The value of an injected sample: the member that ``fieldType`` names is used (``i64``
    for ``DCGM_FT_INT64``, ``dbl`` for ``DCGM_FT_DOUBLE``, ``str`` for ``DCGM_FT_STRING``)."""

    def __init__(self) -> None:
        self.i64 = 0
        self.dbl = 0.0
        self.str: Union[str, bytes] = ""


class c_dcgmInjectFieldValue_v1:
    """A sample to inject: ``fieldId``, ``fieldType`` (``ord(dcgm.fields.DCGM_FT_INT64)`` or the
    character itself), ``ts`` (microseconds since 1970; 0: now) and ``value``. ``status`` is
    kept for compatibility and not used."""

    def __init__(self) -> None:
        self.version = dcgmInjectFieldValue_version1
        self.fieldId = 0
        self.fieldType: Union[int, str] = 0
        self.status = 0
        self.ts = 0
        self.value = c_dcgmFieldValue_v1_value()


__all__ = [
    "DCGM_MAX_HIERARCHY_INFO",
    "c_dcgmCreateFakeEntities_v2",
    "c_dcgmFieldValue_v1_value",
    "c_dcgmGroupEntityPair_t",
    "c_dcgmInjectFieldValue_v1",
    "c_dcgmMigHierarchyInfo_t",
    "dcgmCreateFakeEntities_version2",
    "dcgmInjectFieldValue_version1",
]
