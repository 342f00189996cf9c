"""NVIDIA's ``dcgm_structs`` (DCGM 4.6): the ``c_dcgm*`` ctypes structures, the constants, the
``DCGMError_*`` exceptions and the library loading, for programs written against NVIDIA's
Python bindings.

* Every structure and union is a real ``ctypes.Structure``/``ctypes.Union`` built from
  ``dcgm-sys``'s layout table (see :mod:`dcgm.compat._layout`), so sizes, offsets and version
  words are the C ones by construction; text fields read as ``str``, as NVIDIA's do.
* The exceptions are the package's own :class:`dcgm.structs.DCGMError` classes (one hierarchy
  for the whole package), with NVIDIA's ``SetAdditionalInfo`` and ``info``.
* The library is never loaded with ``ctypes.CDLL``: :func:`_dcgmInit` opens it through the
  extension (``libDcgmPath``, then :func:`dcgm.compat.use_library`'s choice, then ``dcgm-sys``'s
  search), and :func:`_dcgmGetFunctionPointer` answers callables that call into it with the
  GIL released.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from ctypes import *  # noqa: F401,F403  (NVIDIA's module re-exports ctypes' names; programs use them)
from typing import Any, Dict, Optional, Type

from dcgm import _native, structs as _pkg_structs
from dcgm.compat import _ffi, _layout

# ---- constants: every integer, float and string constant of dcgm-sys (DCGM_*, the version
# words, the enums), then the names NVIDIA's module spells differently (below).
globals().update({k: v for k, v in _layout.CONSTANTS.items() if not k.startswith("_")})

# the return codes (dcgm-sys's RETURN_CODES table)
globals().update({name: code for code, name in _pkg_structs.RETURN_CODE_NAMES.items()})

make_dcgm_version = _layout.make_dcgm_version

# ---- structures and unions
_PrintableStructure = _layout.DcgmStructure
_DcgmStructure = _layout.DcgmStructure
DcgmUnion = _layout.DcgmUnion
globals().update(_layout.all_classes())

# ---- exceptions
DCGMError = _pkg_structs.DCGMError
for _name in dir(_pkg_structs):
    if _name.startswith("DCGMError_"):
        globals()[_name] = getattr(_pkg_structs, _name)
del _name


def _set_additional_info(self: Any, msg: Any) -> None:
    """Adds ``msg`` to the exception's text (NVIDIA's ``DCGMError.SetAdditionalInfo``)."""
    self.info = msg
    base = self.message.rstrip(".")
    self.message = "%s: '%s'" % (base, msg)


if not hasattr(DCGMError, "SetAdditionalInfo"):
    DCGMError.SetAdditionalInfo = _set_additional_info  # type: ignore[attr-defined]
    DCGMError.info = None  # type: ignore[attr-defined]

#: code -> exception class, as NVIDIA's ``DCGMError._valClassMapping``.
_valClassMapping: Dict[int, Type[DCGMError]] = {
    code: _pkg_structs.dcgmExceptionClass(code) for code in _pkg_structs.RETURN_CODE_NAMES if code != 0
}
DCGMError._valClassMapping = _valClassMapping  # type: ignore[attr-defined]


def dcgmExceptionClass(error_code: int) -> Optional[Type[DCGMError]]:
    """The ``DCGMError_*`` class of a return code (``None`` for a code DCGM does not have, as
    NVIDIA's answers)."""
    return _valClassMapping.get(error_code)


class DcgmJSONEncoder(json.JSONEncoder):
    """Encodes structures (and arrays of them) as JSON objects of their fields."""

    def default(self, o: Any) -> Any:  # noqa: D102
        if isinstance(o, (ctypes.Structure, ctypes.Union)):
            return {name: getattr(o, name) for name, _ in o._fields_ if not name.startswith("_")}
        if isinstance(o, ctypes.Array):
            return [self.default(x) if isinstance(x, (ctypes.Structure, ctypes.Union)) else x for x in o]
        return json.JSONEncoder.default(self, o)


# ---- the library
class _Library:
    """What ``dcgmLib`` is once loaded: functions by attribute (``dcgmLib.dcgmInit``)."""

    def __init__(self, path: str, simulated: bool) -> None:
        self._path = path
        self.simulated = simulated

    def __getattr__(self, name: str) -> Any:
        fp = _ffi.function(name)
        if fp is None:
            raise AttributeError("%s is not exported by %s" % (name, self._path))
        return fp

    def __repr__(self) -> str:
        return "<libdcgm %s%s>" % (self._path, ", simulated" if self.simulated else "")


dcgmLib: Optional[_Library] = None
libLoadLock = threading.Lock()
_dcgmLib_refcount = 0


def _LoadDcgmLibrary(libDcgmPath: Optional[str] = None) -> None:
    """Opens libdcgm once for the process: ``libDcgmPath`` (a directory holding
    ``libdcgm.so.4``, or the file), else the choice of :func:`dcgm.compat.use_library` (or of
    ``python -m dcgm.compat --simulate``/``--library``), else ``dcgm-sys``'s search
    (``DCGM_LIB_PATH``, the sonames, the distribution directories). Raises
    ``DCGMError_LibraryNotFound`` with the places tried."""
    global dcgmLib
    with libLoadLock:
        if dcgmLib is not None:
            return
        from dcgm import compat as _compat

        path, simulate = _compat._library_choice()
        if libDcgmPath:
            path = libDcgmPath
        try:
            opened, simulated = _native.raw_open(path, simulate)
        except OSError as e:
            err = dcgmExceptionClass(DCGM_ST_LIBRARY_NOT_FOUND)(  # type: ignore[misc]  # noqa: F405
                DCGM_ST_LIBRARY_NOT_FOUND, "%s (pass simulate=True, or python -m dcgm.compat --simulate, to use the simulator)" % e  # noqa: F405
            )
            raise err from None
        dcgmLib = _Library(opened, simulated)


def _dcgmInit(libDcgmPath: Optional[str] = None) -> None:
    """Loads the library (see :func:`_LoadDcgmLibrary`) and counts one more user of it."""
    global _dcgmLib_refcount
    _LoadDcgmLibrary(libDcgmPath)
    with libLoadLock:
        _dcgmLib_refcount += 1


def _dcgmGetFunctionPointer(name: str) -> _ffi.FunctionPointer:
    """The C function ``name`` of the loaded library: ``DCGMError_Uninitialized`` before
    :func:`_dcgmInit`, ``DCGMError_FunctionNotFound`` for a function it lacks."""
    if dcgmLib is None:
        raise dcgmExceptionClass(DCGM_ST_UNINITIALIZED)()  # type: ignore[misc]  # noqa: F405
    fp = _ffi.function(name)
    if fp is None:
        raise dcgmExceptionClass(DCGM_ST_FUNCTION_NOT_FOUND)()  # type: ignore[misc]  # noqa: F405
    return fp


def _dcgmCheckReturn(ret: int) -> int:
    """Raises the ``DCGMError_*`` of a non-zero return code; answers the code."""
    if ret != DCGM_ST_OK:  # noqa: F405
        raise DCGMError(ret)
    return ret


def _dcgmShutdown() -> None:
    """``dcgmShutdown`` (the library stays loaded)."""
    global _dcgmLib_refcount
    _dcgmCheckReturn(_dcgmGetFunctionPointer("dcgmShutdown")())
    with libLoadLock:
        if _dcgmLib_refcount > 0:
            _dcgmLib_refcount -= 1


def _dcgmErrorString(result: int) -> Optional[bytes]:
    """The library's text for a return code."""
    fn = _dcgmGetFunctionPointer("errorString")
    fn.restype = c_char_p  # noqa: F405
    return fn(result)  # type: ignore[no-any-return]
