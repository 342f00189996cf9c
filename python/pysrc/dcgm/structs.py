"""Return codes and exceptions, under the names of NVIDIA's ``dcgm_structs``.

Every ``DCGM_ST_*`` code is a module constant. Every error a DCGM call returns is raised as
the ``DCGMError_<Name>`` subclass of :class:`DCGMError` of its code (``DCGMError_Badparam``,
``DCGMError_NotSupported``, ...), so code written for pydcgm catches the same names. The codes
and names come from the native module (``dcgm_sys::RETURN_CODES``), not from a copy.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

from dcgm import _native

_CODES = _native.return_codes()

#: code -> C name (``-1 -> "DCGM_ST_BADPARAM"``).
RETURN_CODE_NAMES: Dict[int, str] = {code: name for code, name, _, _ in _CODES}
#: code -> one-line description.
RETURN_CODE_DESCRIPTIONS: Dict[int, str] = {code: text for code, _, text, _ in _CODES}

for _code, _name, _text, _suffix in _CODES:
    globals()[_name] = _code


class DCGMError(Exception):
    """A DCGM error. ``value`` (also ``code``) is the ``dcgmReturn_t``; ``message`` says what
    failed; ``hint`` says what to do about it, where the cause is known.

    ``DCGMError(code)`` builds the subclass of that code, as pydcgm does.
    """

    value: int
    code: int
    message: str
    hint: Optional[str]

    #: The code of this class (``DCGM_ST_GENERIC_ERROR`` for the base class).
    _dcgm_code: int = -3

    def __new__(
        cls, value: Optional[int] = None, message: Optional[str] = None, hint: Optional[str] = None
    ) -> "DCGMError":
        if cls is DCGMError and value is not None:
            cls = _CLASSES.get(value, DCGMError)
        return super().__new__(cls, value, message, hint)

    def __init__(
        self, value: Optional[int] = None, message: Optional[str] = None, hint: Optional[str] = None
    ) -> None:
        if value is None:
            value = type(self)._dcgm_code
        text = message if message is not None else RETURN_CODE_DESCRIPTIONS.get(
            value, "DCGM error with code %d" % value
        )
        super().__init__(text)
        self.value = value
        self.code = value
        self.message = text
        self.hint = hint

    @property
    def name(self) -> str:
        """The C name of the code (``DCGM_ST_BADPARAM``)."""
        return RETURN_CODE_NAMES.get(self.value, "DCGM_ST_<unknown>")

    def __str__(self) -> str:
        if self.hint and "hint:" not in self.message:
            return "%s (hint: %s)" % (self.message, self.hint)
        return self.message

    #: What :meth:`SetAdditionalInfo` added (``None`` until then).
    info: Any = None

    def SetAdditionalInfo(self, msg: Any) -> None:
        """Adds ``msg`` to the exception's text, as NVIDIA's ``DCGMError.SetAdditionalInfo``
        does (``"<text>: '<msg>'"``); ``info`` keeps it."""
        self.info = msg
        self.message = "%s: '%s'" % (self.message.rstrip("."), msg)

    def __reduce__(self) -> Any:
        return (DCGMError, (self.value, self.message, self.hint))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DCGMError) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


_CLASSES: Dict[int, Type[DCGMError]] = {}

for _code, _name, _text, _suffix in _CODES:
    if _code == 0:
        continue
    _cls_name = "DCGMError_" + _suffix
    _cls = type(_cls_name, (DCGMError,), {"__doc__": "%s (%d): %s" % (_name, _code, _text), "__module__": __name__, "_dcgm_code": _code})
    _CLASSES[_code] = _cls
    globals()[_cls_name] = _cls

del _code, _name, _text, _suffix, _cls_name, _cls


def dcgmExceptionClass(error_code: int) -> Type[DCGMError]:
    """The exception class of a return code (``DCGMError`` for a code DCGM 4.6 lacks)."""
    return _CLASSES.get(error_code, DCGMError)


def _from_native(code: int, message: str, hint: Optional[str]) -> DCGMError:
    return dcgmExceptionClass(code)(code, message, hint)
