"""NVIDIA's ``dcgm_errors`` (DCGM 4.6): the failure reasons (``DCGM_FR_*``), their severities
(``DCGM_ERROR_*``) and categories (``DCGM_FR_EC_*``), each reason's message template
(``DCGM_FR_<REASON>_MSG``) and next step (``DCGM_FR_<REASON>_NEXT``), and the library's
look-ups by code.

The codes are dcgm-sys's constants. The message templates and next steps are the library's
own (``dcgmGetErrorMeta``), read when first asked for: they need the library open (after
``dcgmInit``), where NVIDIA's module carries a copy of the header's text.
"""

from __future__ import annotations

import ctypes
from typing import Any as _Any, Dict as _Dict, List as _List, Optional as _Optional, Tuple as _Tuple

from dcgm.compat import _layout, dcgm_structs

for _name, _value in _layout.CONSTANTS.items():
    if _name.startswith("DCGM_FR_") or _name.startswith("DCGM_ERROR_"):
        globals()[_name] = _value
del _name, _value

#: every failure-reason code (aliases excluded): C name -> code
_REASONS: _Dict[str, int] = {
    name: value
    for name, value in _layout.CONSTANTS.items()
    if name.startswith("DCGM_FR_")
    and not name.startswith("DCGM_FR_EC_")
    and name not in ("DCGM_FR_CLOCK_THROTTLE_THERMAL", "DCGM_FR_CLOCK_THROTTLE_POWER", "DCGM_FR_THROTTLING_VIOLATION")
}
_texts: _Dict[int, _Tuple[_Optional[str], _Optional[str]]] = {}


def _meta_texts(code: int) -> _Tuple[_Optional[str], _Optional[str]]:
    """``(message template, next step)`` of a reason, from the library's error table."""
    got = _texts.get(code)
    if got is not None:
        return got
    if dcgm_structs.dcgmLib is None:
        raise AttributeError(
            "the DCGM_FR_*_MSG and _NEXT texts are the library's: call dcgm_agent.dcgmInit() "
            "(or dcgm_structs._dcgmInit()) first"
        )
    fn = dcgm_structs._dcgmGetFunctionPointer("dcgmGetErrorMeta")
    meta_t = _layout.build("dcgm_error_meta_t")
    fn.restype = ctypes.POINTER(meta_t)
    ptr = fn(code)
    if not ptr:
        got = (None, None)
    else:
        raw = ctypes.cast(ptr, ctypes.c_void_p).value or 0
        words = (ctypes.c_void_p * 2).from_address(raw + meta_t.msgFormat.offset)
        msg, nxt = (ctypes.string_at(w).decode("utf-8", "replace") if w else None for w in words)
        got = (msg, nxt)
    _texts[code] = got
    return got


def __getattr__(name: str) -> _Any:
    """``DCGM_FR_<REASON>_MSG`` and ``_NEXT``, from the library (see the module's doc)."""
    for suffix, which in (("_MSG", 0), ("_NEXT", 1)):
        if name.endswith(suffix) and name[: -len(suffix)] in _REASONS:
            text = _meta_texts(_REASONS[name[: -len(suffix)]])[which]
            if text is not None:
                return text
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def __dir__() -> _List[str]:
    names = list(globals())
    for reason in _REASONS:
        names.append(reason + "_MSG")
        names.append(reason + "_NEXT")
    return sorted(names)


def dcgmErrorGetPriorityByCode(code: int) -> int:
    """The severity (``DCGM_ERROR_*``) of a failure reason, as the library answers."""
    fn = dcgm_structs._dcgmGetFunctionPointer("dcgmErrorGetPriorityByCode")
    return fn(code)  # type: ignore[no-any-return]


def dcgmErrorGetCategoryByCode(code: int) -> int:
    """The category (``DCGM_FR_EC_*``) of a failure reason, as the library answers."""
    fn = dcgm_structs._dcgmGetFunctionPointer("dcgmErrorGetCategoryByCode")
    return fn(code)  # type: ignore[no-any-return]


def dcgmErrorGetFormatMsgByCode(code: int) -> _Optional[str]:
    """The printf-style message template of a failure reason (``None`` for an unknown one)."""
    fn = dcgm_structs._dcgmGetFunctionPointer("dcgmErrorGetFormatMsgByCode")
    fn.restype = ctypes.c_char_p
    ret = fn(code)
    return ret.decode("utf-8") if isinstance(ret, bytes) else ret
