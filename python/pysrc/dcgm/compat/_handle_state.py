"""The state every object of NVIDIA's object layer (``DcgmHandle``, ``DcgmGroup``,
``DcgmFieldGroup``, ``DcgmStatus``, ``DcgmSystem``, the field-value collections) shares about
its connection: whether the handle is still open, and the releases waiting for a point where a
call into the library is safe.

A finalizer (``weakref.finalize``) may run wherever the garbage collector happens to run:
inside an enumeration callback the library is executing (a DCGM call from there could deadlock
it), or on one of the library's own threads (a policy callback). There the release is queued
by :func:`_safely` and done at the next safe point: the next release, the next object-layer call
(:func:`_live_handle`), the end of the library call (:func:`_drain`), or exit.

Private to ``dcgm.compat``: it sits below the object-layer modules, so that none of them has to
import another for it.
"""

from __future__ import annotations

import atexit
import collections
import threading
from typing import Any, Callable, Tuple

from dcgm.compat import dcgm_structs


def _closed_error() -> Exception:
    return dcgm_structs.DCGMError(dcgm_structs.DCGM_ST_CONNECTION_NOT_VALID, "this DcgmHandle was shut down")


def _live_handle(dcgmHandle: Any) -> Any:
    """The raw handle of a ``DcgmHandle`` (or of any object with a ``handle`` attribute);
    ``DCGMError_ConnectionNotValid`` once it was shut down."""
    h = getattr(dcgmHandle, "handle", None)
    if h is None:
        raise _closed_error()
    if _pending:
        _drain()
    return h


_pending: "collections.deque[Tuple[Callable[..., None], Tuple[Any, ...]]]" = collections.deque()
_local = threading.local()


def _in_library_callback() -> bool:
    return bool(getattr(_local, "depth", 0)) or type(threading.current_thread()).__name__ == "_DummyThread"


class _callback_scope:
    """Marks the current thread as running inside a library callback (the collections'
    enumeration callbacks use it)."""

    __slots__ = ()

    def __enter__(self) -> None:
        _local.depth = getattr(_local, "depth", 0) + 1

    def __exit__(self, *_: Any) -> None:
        _local.depth -= 1


def _drain() -> None:
    """Runs the releases queued by :func:`_safely`, unless called from a library callback."""
    if not _pending or _in_library_callback():
        return
    while _pending:
        try:
            fn, args = _pending.popleft()
        except IndexError:
            return
        fn(*args)


def _safely(fn: Callable[..., None], *args: Any) -> None:
    """What a finalizer calls: ``fn(*args)`` now, or queued when not safe here."""
    if _in_library_callback():
        _pending.append((fn, args))
        return
    _drain()
    fn(*args)


# Registered at import, before any object-layer finalizer exists (every module that makes one
# imports this first): atexit runs it after weakref.finalize's exit hook.
atexit.register(_drain)
