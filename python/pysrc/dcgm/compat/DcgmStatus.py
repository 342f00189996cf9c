"""NVIDIA's ``DcgmStatus`` (DCGM 4.6): a status handle collecting per-entity errors of a call
(config, policy). Its library handle is destroyed when the object is collected, as NVIDIA's
``__del__`` does (here through ``weakref.finalize``, so also at exit, and never twice)."""

from __future__ import annotations

import weakref
from typing import Any, List

from dcgm.compat import dcgm_agent, dcgm_structs
from dcgm.compat._handle_state import _safely


def _destroy_status(handle: Any) -> None:
    try:
        dcgm_agent.dcgmStatusDestroy(handle)
    except Exception:  # noqa: BLE001 - nothing to report to at collection or exit
        pass


class DcgmStatus:
    """``handle``: the library's status handle, to pass where a call takes one; ``errors``: the
    ``c_dcgmErrorInfo_v1`` taken from it so far."""

    def __init__(self) -> None:
        self.handle = dcgm_agent.dcgmStatusCreate()
        self.errors: List[Any] = []
        self._finalizer = weakref.finalize(self, _safely, _destroy_status, self.handle)

    def UpdateErrors(self) -> None:
        """Moves the errors recorded in the handle to ``errors``."""
        count = dcgm_agent.dcgmStatusGetCount(self.handle)
        for _ in range(count):
            self.errors.append(dcgm_agent.dcgmStatusPopError(self.handle))

    def ThrowExceptionOnErrors(self) -> None:
        """Raises the ``DCGMError_*`` of the first recorded error, if any."""
        self.UpdateErrors()
        for value in self.errors:
            if value is not None:
                raise dcgm_structs.DCGMError(value.status)
