"""DCGM's test API under the names and argument orders of NVIDIA's ``dcgm_agent_internal``
(its Python test tree), over :mod:`dcgm.testing`. The requests are the objects of
:mod:`dcgm.structs_internal`; ``dcgmHandle`` is a :class:`dcgm.Handle` (this package has no
``dcgm_agent`` handles). Errors are raised as the ``DCGMError_*`` classes of
:mod:`dcgm.structs`, as NVIDIA's functions raise them.

Provided: :func:`dcgmCreateFakeEntities` (GPUs, GPU instances and compute instances),
:func:`dcgmInjectFieldValue`, :func:`dcgmInjectEntityFieldValue` (int, double and string
values) and :func:`dcgmEmptyCache`. The rest of NVIDIA's module (NVML injection, cache-manager
field info, NVLink link states, vGPU, ...) is not provided.

These are typed views of :mod:`dcgm.compat.dcgm_agent_internal`'s functions of the same names,
which take a :class:`dcgm.Handle` as well as NVIDIA's raw handles: one implementation.
"""

from __future__ import annotations

from dcgm._native import Handle
from dcgm.compat import dcgm_agent_internal as _impl
from dcgm.structs_internal import c_dcgmCreateFakeEntities_v2, c_dcgmInjectFieldValue_v1


def dcgmCreateFakeEntities(dcgmHandle: Handle, cfe: c_dcgmCreateFakeEntities_v2) -> c_dcgmCreateFakeEntities_v2:
    """Creates the first ``cfe.numToCreate`` entities of ``cfe.entityList`` (each
    ``entity.entityGroupId`` with its ``parent``), writes their new ids to
    ``entity.entityId`` and returns ``cfe``. Consecutive entries of one kind and parent are
    created in one call."""
    out: c_dcgmCreateFakeEntities_v2 = _impl.dcgmCreateFakeEntities(dcgmHandle, cfe)
    return out


def dcgmInjectEntityFieldValue(
    dcgmHandle: Handle, entityGroupId: int, entityId: int, value: c_dcgmInjectFieldValue_v1
) -> int:
    """Injects ``value`` (its ``fieldId``, ``fieldType``, ``ts`` and ``value``) as the newest
    sample of that field of the entity. Returns ``DCGM_ST_OK``."""
    return int(_impl.dcgmInjectEntityFieldValue(dcgmHandle, entityGroupId, entityId, value))


def dcgmInjectFieldValue(dcgmHandle: Handle, gpuId: int, value: c_dcgmInjectFieldValue_v1) -> int:
    """:func:`dcgmInjectEntityFieldValue` for GPU ``gpuId``."""
    return int(_impl.dcgmInjectFieldValue(dcgmHandle, gpuId, value))


def dcgmEmptyCache(dcgmHandle: Handle) -> int:
    """Drops every cached sample and every watch (see :func:`dcgm.testing.empty_cache`).
    Returns ``DCGM_ST_OK``."""
    return int(_impl.dcgmEmptyCache(dcgmHandle))


__all__ = [
    "dcgmCreateFakeEntities",
    "dcgmEmptyCache",
    "dcgmInjectEntityFieldValue",
    "dcgmInjectFieldValue",
]
