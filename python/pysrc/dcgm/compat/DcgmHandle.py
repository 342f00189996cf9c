"""NVIDIA's ``DcgmHandle`` (DCGM 4.6): one connection to DCGM, an embedded host engine or a
remote one (by IP address or unix socket), or an adopted raw handle (``handle=``).

Differences from NVIDIA's, for the better:

* **Released when collected, or at interpreter exit.** A handle this object opened (embedded
  or connected) is stopped or disconnected by a ``weakref.finalize`` when the object is
  collected or the interpreter exits; NVIDIA's keeps every handle in ``DcgmHandle.handles``,
  so none is ever collected. ``handles`` here holds the objects weakly (a ``WeakSet``), and
  :meth:`Shutdown` / :meth:`reset` still close them explicitly, once: the finalizer never
  stops a handle twice. An adopted ``handle=`` is the caller's and is never released here.
  A release that falls inside a library callback (the garbage collector may run anywhere) or
  on one of the library's threads is queued and done at the next safe point (the next
  object-layer call, the end of the library call, or exit), never from inside the library.
* **A closed handle raises a typed error.** After :meth:`Shutdown`, ``handle`` is ``None`` (as
  NVIDIA's), and every method of the object layer that would use it raises
  ``DCGMError_ConnectionNotValid`` ("this DcgmHandle was shut down") instead of passing a null
  handle to the library (NVIDIA's then gets ``DCGMError_Badparam`` from the real library).
* :meth:`UpdateAllFields` exists (NVIDIA's ``DcgmGroup.samples.UpdateAllFields`` calls it, and
  NVIDIA's ``DcgmHandle`` lacks it, so that raises ``AttributeError`` there).
* :meth:`GetIpAddress` answers ``None`` for an adopted handle (NVIDIA's raises
  ``AttributeError``).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Optional

from dcgm.compat import dcgm_agent, dcgm_structs
from dcgm.compat._handle_state import _live_handle, _safely


def _release(raw: Any, embedded: bool) -> None:
    """The finalizer of an opened handle: stops the embedded host engine or disconnects.
    Errors are ignored: the library may already be shut down by the program."""
    try:
        if embedded:
            dcgm_agent.dcgmStopEmbedded(raw)
        else:
            dcgm_agent.dcgmDisconnect(raw)
    except Exception:  # noqa: BLE001 - nothing to report to at collection or exit
        pass


class DcgmHandle:
    """A connection to DCGM.

    * ``handle``: adopt a raw handle (from ``dcgm_agent.dcgmStartEmbedded`` / ``dcgmConnect*``);
      the caller keeps owning it.
    * otherwise ``ipAddress`` (``"host"`` or ``"host:port"``) or ``unixSocketPath`` connects to a
      running host engine (``timeoutMs``: 0 = DCGM's default of 5 s; ``persistAfterDisconnect``
      keeps this connection's watches after it ends); neither starts an embedded host engine in
      ``opMode`` (a ``DCGM_OPERATION_MODE_*``). Both together raise ``DCGMError_Badparam``.
    * ``decoratorHandle``: NVIDIA's test-framework tracking flag (see :meth:`reset`).
    """

    handleLock = threading.Lock()
    #: The handles this class opened and tracks for :meth:`reset` (held weakly).
    handles: "weakref.WeakSet[DcgmHandle]" = weakref.WeakSet()

    def __init__(self, handle: Any = None, ipAddress: Optional[str] = None,
                 opMode: int = dcgm_structs.DCGM_OPERATION_MODE_AUTO, persistAfterDisconnect: bool = False,
                 unixSocketPath: Optional[str] = None, timeoutMs: int = 0, decoratorHandle: Optional[bool] = None) -> None:
        self._handleCreated = False
        self._persistAfterDisconnect = persistAfterDisconnect
        self._finalizer: Optional[weakref.finalize] = None
        self._ipAddress = ipAddress

        if handle is not None:
            self.handle = handle
            self._fromDecorator = True if decoratorHandle is None else decoratorHandle
            return
        self._fromDecorator = False if decoratorHandle is None else decoratorHandle

        if ipAddress is not None and unixSocketPath is not None:
            raise dcgm_structs.DCGMError(dcgm_structs.DCGM_ST_BADPARAM, "ipAddress and unixSocketPath cannot both be given")

        dcgm_structs._dcgmInit()
        dcgm_agent.dcgmInit()

        if ipAddress is None and unixSocketPath is None:
            self.handle = dcgm_agent.dcgmStartEmbedded(opMode)
            self.isEmbedded = True
        else:
            params = dcgm_structs.c_dcgmConnectV3Params_v1()
            params.version = dcgm_structs.c_dcgmConnectV3Params_version
            params.timeoutMs = timeoutMs
            params.persistAfterDisconnect = 1 if persistAfterDisconnect else 0
            address = "tcp://" + ipAddress if ipAddress is not None else "unix://" + str(unixSocketPath)
            self.handle = dcgm_agent.dcgmConnect_v3(address, params)
            self.isEmbedded = False
        self._handleCreated = True
        self._finalizer = weakref.finalize(self, _safely, _release, self.handle, self.isEmbedded)
        if not self._fromDecorator:
            with DcgmHandle.handleLock:
                DcgmHandle.handles.add(self)

    @classmethod
    def reset(cls) -> None:
        """Shuts down every handle this class opened and still tracks."""
        with cls.handleLock:
            cleanup = list(cls.handles)
            cls.handles = weakref.WeakSet()
        for handle in cleanup:
            if handle._handleCreated:
                handle.Shutdown()

    def GetSystem(self) -> Any:
        """A ``DcgmSystem`` of this handle."""
        from dcgm.compat.DcgmSystem import DcgmSystem

        return DcgmSystem(self)

    def __StopDcgm__(self) -> None:
        """Stops the embedded host engine, or disconnects from the remote one."""
        raw = _live_handle(self)
        if self.isEmbedded:
            dcgm_agent.dcgmStopEmbedded(raw)
        else:
            dcgm_agent.dcgmDisconnect(raw)

    def FromDecorator(self) -> bool:
        """Whether NVIDIA's test framework owns this handle (an adopted one, by default)."""
        return self._fromDecorator

    def Shutdown(self) -> None:
        """Closes the handle this object opened (a no-op for an adopted or closed one); the
        object's methods then raise ``DCGMError_ConnectionNotValid``."""
        if not self._handleCreated:
            return
        if self.FromDecorator():
            from dcgm.compat.DcgmGroup import DcgmGroup

            DcgmGroup.clear(self)
        finalizer, self._finalizer = self._finalizer, None
        if finalizer is not None:
            finalizer.detach()
        try:
            self.__StopDcgm__()
        except AttributeError:
            pass
        finally:
            self._handleCreated = False
            self.handle = None

    @staticmethod
    def Unload() -> None:
        """``dcgmShutdown``: DCGM leaves the process (every handle ends)."""
        dcgm_agent.dcgmShutdown()

    def GetIpAddress(self) -> Optional[str]:
        """The IP address this handle connected to; ``None`` for an embedded (or adopted) one."""
        return self._ipAddress

    def UpdateAllFields(self, waitForUpdate: Any) -> None:
        """Asks the host engine to update every watched field now (``waitForUpdate``: block
        until done). An addition: NVIDIA's ``DcgmGroup.samples.UpdateAllFields`` calls it."""
        dcgm_structs._dcgmCheckReturn(dcgm_agent.dcgmUpdateAllFields(_live_handle(self), waitForUpdate))

    def __repr__(self) -> str:
        state = "closed" if getattr(self, "handle", None) is None else (
            "adopted" if not self._handleCreated else ("embedded" if self.isEmbedded else "connected"))
        return "<DcgmHandle %s>" % state
