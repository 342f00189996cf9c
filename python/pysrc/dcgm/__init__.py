"""NVIDIA DCGM for Python, built on dcgm-rs.

Two ways in:

* The names of NVIDIA's bindings: :mod:`dcgm.fields` (``dcgm_fields``), :mod:`dcgm.structs`
  (``dcgm_structs``: return codes and ``DCGMError_*`` exceptions) and :class:`DcgmReader`.
* A Pythonic API: :class:`Handle` (``Handle.embedded()``, ``Handle.connect(address)``),
  :class:`System`, :class:`Group`, :class:`FieldGroup`, :class:`Watch`, :class:`FieldValue`,
  and :class:`Reader`.

Every call into DCGM releases the GIL. Values with no data are :class:`Blank` members, never
sentinel numbers. The dcgm-sim simulator ships inside the package and is used only when asked
for (``simulate=True``); values read through it are labelled (``handle.is_simulated``).
"""

from __future__ import annotations

import atexit as _atexit
import os as _os

from typing import Dict

from dcgm import _native
from dcgm._native import (
    AccountingStats,
    BurnFinding,
    BurnReport,
    BurnVerdict,
    DoctorReport,
    Finding,
    burn,
    doctor,
    doctor_replay,
    FieldGroup,
    FieldMeta,
    FieldValue,
    Group,
    Handle,
    PolicyRegistration,
    PolicySubscription,
    Reader,
    RunningProcess,
    SinceCursor,
    Snapshots,
    System,
    Watch,
)

__version__: str = _native.__version__
#: The capability names ``Handle.supports`` takes, with the first DCGM release of each.
CAPABILITIES: Dict[str, str] = dict(_native.CAPABILITIES)

_SIM = _os.path.realpath(_os.path.join(_os.path.dirname(__file__), "_sim", "libdcgm_sim.so"))
# The extension module links the simulator too (python/src/lib.rs): a package built without the
# separate library (``pip install ./python``, ``maturin build``, the sdist) simulates through
# the extension itself. Other programs need the separate file (``simulator_path()``): the
# extension cannot be loaded outside Python.
_native._set_packaged_simulator(_SIM if _os.path.isfile(_SIM) else _os.path.realpath(_native.__file__))
_atexit.register(_native._at_exit)

from dcgm import fields, structs  # noqa: E402
from dcgm._enums import Blank, EntityGroup, HealthSystem, PolicyCondition  # noqa: E402
from dcgm.reader import DcgmReader, defaultFieldIds, entity_group_id_to_string  # noqa: E402
from dcgm.structs import DCGMError, dcgmExceptionClass  # noqa: E402
from dcgm import testing  # noqa: E402


def simulator_path() -> str:
    """The path of the dcgm-sim library shipped in this package (``libdcgm.so.4`` stand-in).

    Use it to point other DCGM clients at the simulator, e.g. a directory with a
    ``libdcgm.so.4`` link to it on ``LD_LIBRARY_PATH``. Raises ``DCGMError_LibraryNotFound``
    if this installation has no simulator.
    """
    if not _os.path.isfile(_SIM):
        raise structs.dcgmExceptionClass(structs.DCGM_ST_LIBRARY_NOT_FOUND)(
            structs.DCGM_ST_LIBRARY_NOT_FOUND,
            "this installation of the dcgm package has no simulator (looked for %s)" % _SIM,
        )
    return _SIM


__all__ = [
    "AccountingStats",
    "CAPABILITIES",
    "Blank",
    "DCGMError",
    "DcgmReader",
    "BurnFinding",
    "BurnReport",
    "BurnVerdict",
    "DoctorReport",
    "EntityGroup",
    "FieldGroup",
    "FieldMeta",
    "FieldValue",
    "Finding",
    "Group",
    "Handle",
    "HealthSystem",
    "PolicyCondition",
    "PolicyRegistration",
    "PolicySubscription",
    "Reader",
    "RunningProcess",
    "SinceCursor",
    "Snapshots",
    "System",
    "Watch",
    "dcgmExceptionClass",
    "defaultFieldIds",
    "burn",
    "doctor",
    "doctor_replay",
    "entity_group_id_to_string",
    "fields",
    "simulator_path",
    "structs",
    "testing",
]
