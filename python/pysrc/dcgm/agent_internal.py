"""DCGM's test API under the names and argument orders of NVIDIA's ``dcgm_agent_internal``
(its Python test tree), over :mod:`dcgm.testing`. The requests are the objects of
:mod:`dcgm.structs_internal`; ``dcgmHandle`` is a :class:`dcgm.Handle` (this package has no
``dcgm_agent`` handles). Errors are raised as the ``DCGMError_*`` classes of
:mod:`dcgm.structs`, as NVIDIA's functions raise them.

Provided: :func:`dcgmCreateFakeEntities` (GPUs, GPU instances and compute instances),
:func:`dcgmInjectFieldValue`, :func:`dcgmInjectEntityFieldValue` (int, double and string
values) and :func:`dcgmEmptyCache`. The rest of NVIDIA's module (NVML injection, cache-manager
field info, NVLink link states, vGPU, ...) is not provided.
"""

from __future__ import annotations

from typing import List, Optional, Tuple, Union

from dcgm import fields as _fields, structs as _structs, testing as _testing
from dcgm._native import Handle
from dcgm.structs_internal import c_dcgmCreateFakeEntities_v2, c_dcgmInjectFieldValue_v1

_Badparam = _structs.dcgmExceptionClass(_structs.DCGM_ST_BADPARAM)
_NotSupported = _structs.dcgmExceptionClass(_structs.DCGM_ST_NOT_SUPPORTED)


def _create_run(dcgmHandle: Handle, group: int, parent: Tuple[int, int], n: int) -> List[int]:
    if group == _fields.DCGM_FE_GPU:
        return _testing.create_fake_gpus(dcgmHandle, n)
    if group == _fields.DCGM_FE_GPU_I:
        if parent[0] != _fields.DCGM_FE_GPU:
            raise _Badparam(_structs.DCGM_ST_BADPARAM, "the parent of a GPU instance is a GPU (DCGM_FE_GPU)")
        return _testing.create_fake_gpu_instances(dcgmHandle, parent[1], n)
    if group == _fields.DCGM_FE_GPU_CI:
        if parent[0] != _fields.DCGM_FE_GPU_I:
            raise _Badparam(
                _structs.DCGM_ST_BADPARAM, "the parent of a compute instance is a GPU instance (DCGM_FE_GPU_I)"
            )
        return _testing.create_fake_compute_instances(dcgmHandle, parent[1], n)
    raise _NotSupported(
        _structs.DCGM_ST_NOT_SUPPORTED,
        "this package creates fake GPUs, GPU instances and compute instances only, not entities "
        "of group %d" % group,
    )


def dcgmCreateFakeEntities(dcgmHandle: Handle, cfe: c_dcgmCreateFakeEntities_v2) -> c_dcgmCreateFakeEntities_v2:
    """Creates the first ``cfe.numToCreate`` entities of ``cfe.entityList`` (each
    ``entity.entityGroupId`` with its ``parent``), writes their new ids to
    ``entity.entityId`` and returns ``cfe``. Consecutive entries of one kind and parent are
    created in one call."""
    n = cfe.numToCreate
    if not 0 <= n <= len(cfe.entityList):
        raise _Badparam(_structs.DCGM_ST_BADPARAM, "numToCreate must be 0 to %d, not %d" % (len(cfe.entityList), n))
    i = 0
    while i < n:
        first = cfe.entityList[i]
        key = (first.entity.entityGroupId, (first.parent.entityGroupId, first.parent.entityId))
        j = i + 1
        while j < n:
            e = cfe.entityList[j]
            if (e.entity.entityGroupId, (e.parent.entityGroupId, e.parent.entityId)) != key:
                break
            j += 1
        ids = _create_run(dcgmHandle, key[0], key[1], j - i)
        for k, new_id in enumerate(ids):
            cfe.entityList[i + k].entity.entityId = new_id
        i = j
    cfe.version = c_dcgmCreateFakeEntities_v2().version
    return cfe


def _value_of(value: c_dcgmInjectFieldValue_v1) -> Tuple[Union[int, float, str], Optional[float]]:
    t = value.fieldType
    kind = chr(t) if isinstance(t, int) else t
    if kind == _fields.DCGM_FT_INT64:
        v: Union[int, float, str] = int(value.value.i64)
    elif kind == _fields.DCGM_FT_DOUBLE:
        v = float(value.value.dbl)
    elif kind == _fields.DCGM_FT_STRING:
        s = value.value.str
        v = s.decode() if isinstance(s, bytes) else str(s)
    else:
        raise _Badparam(
            _structs.DCGM_ST_BADPARAM,
            "only DCGM_FT_INT64, DCGM_FT_DOUBLE and DCGM_FT_STRING values can be injected, not "
            "fieldType %r" % (t,),
        )
    ts = None if value.ts == 0 else value.ts / 1e6
    return v, ts


def dcgmInjectEntityFieldValue(
    dcgmHandle: Handle, entityGroupId: int, entityId: int, value: c_dcgmInjectFieldValue_v1
) -> int:
    """Injects ``value`` (its ``fieldId``, ``fieldType``, ``ts`` and ``value``) as the newest
    sample of that field of the entity. Returns ``DCGM_ST_OK``."""
    v, ts = _value_of(value)
    _testing.inject_value(dcgmHandle, (entityGroupId, entityId), value.fieldId, v, ts)
    return _structs.DCGM_ST_OK


def dcgmInjectFieldValue(dcgmHandle: Handle, gpuId: int, value: c_dcgmInjectFieldValue_v1) -> int:
    """:func:`dcgmInjectEntityFieldValue` for GPU ``gpuId``."""
    return dcgmInjectEntityFieldValue(dcgmHandle, _fields.DCGM_FE_GPU, gpuId, value)


def dcgmEmptyCache(dcgmHandle: Handle) -> int:
    """Drops every cached sample and every watch (see :func:`dcgm.testing.empty_cache`).
    Returns ``DCGM_ST_OK``."""
    _testing.empty_cache(dcgmHandle)
    return _structs.DCGM_ST_OK


__all__ = [
    "dcgmCreateFakeEntities",
    "dcgmEmptyCache",
    "dcgmInjectEntityFieldValue",
    "dcgmInjectFieldValue",
]
