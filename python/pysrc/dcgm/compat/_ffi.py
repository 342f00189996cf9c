"""Function pointers of the compat layer: what NVIDIA's ``dcgm_structs._dcgmGetFunctionPointer``
answers, without ``ctypes.CDLL``. A :class:`FunctionPointer` is called as a ctypes function
pointer is (ints, floats, ``bytes``, ``str``, ``None``, ctypes simple values, structures,
arrays, ``byref()``/``pointer()`` and ``CFUNCTYPE`` callbacks), and calls the C function
through ``dcgm-sys`` in the extension, with the GIL released. ``restype`` works as in ctypes
(``c_char_p``, ``POINTER(...)``, simple types); ``argtypes`` is accepted and not needed: each
argument is converted to the C parameter's declared type, with a range check.
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Optional, Tuple

from dcgm import _native

_SIMPLE = ctypes._SimpleCData  # type: ignore[attr-defined]
_POINTER = ctypes._Pointer  # type: ignore[attr-defined]
_CFUNC = ctypes._CFuncPtr  # type: ignore[attr-defined]
_ARG_OBJECT = type(ctypes.byref(ctypes.c_int()))
_ADDRESS_TYPES = (ctypes.c_char_p, ctypes.c_void_p, ctypes.c_wchar_p)


def _word(a: Any, keep: List[Any]) -> Any:
    t = type(a)
    if t is int or t is float or a is None:
        return a
    if t is bool:
        return int(a)
    if isinstance(a, _ARG_OBJECT):
        return ctypes.addressof(a._obj)  # type: ignore[attr-defined]  # byref()'s target (ctypes keeps it there)
    if isinstance(a, (ctypes.Structure, ctypes.Union, ctypes.Array)):
        return ctypes.addressof(a)
    if isinstance(a, _SIMPLE):
        if isinstance(a, ctypes.c_void_p):
            return a.value or 0
        if isinstance(a, _ADDRESS_TYPES):
            return ctypes.cast(a, ctypes.c_void_p).value or 0
        if isinstance(a, ctypes.py_object):
            keep.append(a)
            return id(a.value)
        v = a.value
        if isinstance(v, bytes):  # c_char
            return v[0] if v else 0
        return int(v) if isinstance(v, bool) else v
    if isinstance(a, (_POINTER, _CFUNC)):
        return ctypes.cast(a, ctypes.c_void_p).value or 0
    if isinstance(a, str):
        a = a.encode("utf-8")
    if isinstance(a, (bytes, bytearray)):
        buf = ctypes.c_char_p(bytes(a)) if isinstance(a, bytearray) else ctypes.c_char_p(a)
        keep.append(buf)
        return ctypes.cast(buf, ctypes.c_void_p).value
    raise ctypes.ArgumentError("don't know how to convert %s to a C argument" % t.__name__)


class FunctionPointer:
    """One C function of libdcgm, called through the extension (see the module's doc)."""

    __slots__ = ("__name__", "_index", "_arity", "restype", "argtypes", "errcheck")

    def __init__(self, name: str, index: int, arity: int) -> None:
        self.__name__ = name
        self._index = index
        self._arity = arity
        self.restype: Any = ctypes.c_int
        self.argtypes: Any = None
        self.errcheck: Any = None

    def __repr__(self) -> str:
        return "<dcgm.compat function %s>" % self.__name__

    def __call__(self, *args: Any) -> Any:
        if len(args) != self._arity:
            if len(args) < self._arity:
                raise ctypes.ArgumentError(
                    "%s takes %d arguments, %d given" % (self.__name__, self._arity, len(args))
                )
            # A C function ignores arguments beyond its parameters, as a ctypes call passes them.
            args = args[: self._arity]
        # Plain ints, floats and None go straight through; anything else is converted (and
        # `keep` holds what the converted addresses point into until the call returns).
        words: Any = args
        keep: List[Any] = []
        for a in args:
            if type(a) not in _PLAIN:
                words = [_word(x, keep) for x in args]
                break
        try:
            r = _raw_call(self._index, *words)
        except (TypeError, ValueError, OverflowError) as e:
            raise ctypes.ArgumentError(str(e)) from e
        restype = self.restype
        if restype is ctypes.c_int:
            result: Any = ((r + 0x80000000) & 0xFFFFFFFF) - 0x80000000
        else:
            result = _convert(restype, r)
        if self.errcheck is not None:
            return self.errcheck(result, self, args)
        return result


def _convert(restype: Any, r: int) -> Any:
    if restype is ctypes.c_int or restype is ctypes.c_int32:
        return ((r + 0x80000000) & 0xFFFFFFFF) - 0x80000000
    if restype is None:
        return None
    if restype is ctypes.c_char_p:
        return ctypes.c_char_p(r).value if r else None
    if isinstance(restype, type) and issubclass(restype, _POINTER):
        return ctypes.cast(ctypes.c_void_p(r), restype)
    if restype is ctypes.c_void_p:
        return r or None
    if isinstance(restype, type) and issubclass(restype, _SIMPLE):
        return restype(r).value
    return r


_raw_call = _native.raw_call
_PLAIN = frozenset((int, float, type(None)))
_cache: Dict[str, FunctionPointer] = {}


def function(name: str) -> Optional[FunctionPointer]:
    """The function pointer of ``name``, or ``None`` if the open library lacks it (or
    ``dcgm-sys`` does not bind it)."""
    fp = _cache.get(name)
    if fp is not None:
        return fp
    index = _native.raw_index(name)
    if index is None or not _native.raw_has(index):
        return None
    fp = FunctionPointer(name, index, _arity(index))
    _cache[name] = fp
    return fp


_ARITIES: Dict[int, int] = {}


def _arity(index: int) -> int:
    if not _ARITIES:
        for i, (n, a) in enumerate(_native.raw_arities()):
            _ARITIES[i] = a
    return _ARITIES[index]


def library() -> Optional[Tuple[str, bool]]:
    """``(path, is_simulator)`` of the library in use, or ``None`` before it is opened."""
    return _native.raw_library()
