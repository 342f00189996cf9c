"""NVIDIA's ``dcgm_fields_internal`` (DCGM 4.6): the ids of DCGM's internal fields (sample
buffers and process lists the public API answers in other shapes) and the first/last ids of
the field ranges the profiling and sysmon modules own.
"""

from __future__ import annotations

from ctypes import *  # noqa: F401,F403  (NVIDIA's module re-exports ctypes' names)
from ctypes.util import find_library  # noqa: F401  (a name of NVIDIA's module)

from dcgm import fields as _fields
from dcgm.compat import dcgm_fields, dcgm_structs

dcgmFP = dcgm_structs._dcgmGetFunctionPointer

# The internal fields: DCGM_FI_DEV_MEM_COPY_UTIL_SAMPLES, DCGM_FI_DEV_GPU_UTIL_SAMPLES,
# DCGM_FI_DEV_GRAPHICS_PIDS, DCGM_FI_DEV_COMPUTE_PIDS.
for _f in _fields.all_fields():
    if _f.internal and _f.name is not None:
        globals()[_f.name] = _f.field_id
del _f

# Field ranges, as (first, last) field of each range.
DCGM_FI_SYSMON_FIRST_ID = dcgm_fields.DCGM_FI_DEV_CPU_UTIL_TOTAL  # type: ignore[attr-defined]
DCGM_FI_SYSMON_LAST_ID = dcgm_fields.DCGM_FI_DEV_CPU_MODEL  # type: ignore[attr-defined]
DCGM_FI_PROF_FIRST_ID = dcgm_fields.DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO  # type: ignore[attr-defined]
DCGM_FI_PROF_LAST_ID = dcgm_fields.DCGM_FI_PROF_FP16_CYCLES_ACTIVE_TOTAL  # type: ignore[attr-defined]
DCGM_FI_PROF_PCIE_THROUGHPUT_FIRST = dcgm_fields.DCGM_FI_PROF_PCIE_TX_BYTES  # type: ignore[attr-defined]
DCGM_FI_PROF_PCIE_THROUGHPUT_LAST = dcgm_fields.DCGM_FI_PROF_PCIE_RX_BYTES  # type: ignore[attr-defined]
DCGM_FI_PROF_NVLINK_AGG_THROUGHPUT_FIRST = dcgm_fields.DCGM_FI_PROF_NVLINK_TX_BYTES  # type: ignore[attr-defined]
DCGM_FI_PROF_NVLINK_AGG_THROUGHPUT_LAST = dcgm_fields.DCGM_FI_PROF_NVLINK_RX_BYTES  # type: ignore[attr-defined]
DCGM_FI_PROF_NVLINK_THROUGHPUT_LEGACY_FIRST = dcgm_fields.DCGM_FI_PROF_NVLINK_L0_TX_BYTES  # type: ignore[attr-defined]
DCGM_FI_PROF_NVLINK_THROUGHPUT_LEGACY_LAST = dcgm_fields.DCGM_FI_PROF_NVLINK_L17_RX_BYTES  # type: ignore[attr-defined]
DCGM_FI_PROF_NVLINK_THROUGHPUT_PER_LINK_FIRST = dcgm_fields.DCGM_FI_PROF_NVLINK_TX_BYTES_PER_LINK  # type: ignore[attr-defined]
DCGM_FI_PROF_NVLINK_THROUGHPUT_PER_LINK_LAST = dcgm_fields.DCGM_FI_PROF_NVLINK_RX_BYTES_PER_LINK  # type: ignore[attr-defined]
DCGM_FI_PROF_C2C_THROUGHPUT_FIRST = dcgm_fields.DCGM_FI_PROF_C2C_TX_ALL_BYTES  # type: ignore[attr-defined]
DCGM_FI_PROF_C2C_THROUGHPUT_LAST = dcgm_fields.DCGM_FI_PROF_C2C_RX_DATA_BYTES  # type: ignore[attr-defined]
