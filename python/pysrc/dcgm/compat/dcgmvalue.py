"""NVIDIA's ``dcgmvalue`` (DCGM 4.6): DCGM's blank sentinels, the ``DCGM_*_IS_BLANK`` tests and
:class:`DcgmValue`, the holder of one field value.

Better than NVIDIA's, where nothing is lost by it:

* :meth:`DcgmValue.IsBlank` recognises the blank sentinels of every width. NVIDIA's tests an
  ``int`` only against the 64-bit sentinels, so a 32-bit ``DCGM_INT32_NOT_SUPPORTED``
  (2147483634) read from a structure counts as a real value there; here it is blank. A value
  a structure read already marked as blank (:class:`dcgm.compat._layout.BlankInt`, ...) is
  blank too.
* ``str()`` of a blank :class:`DcgmValue` is ``N/A`` where NVIDIA's shows the number or the
  ``<<<...>>>`` text. ``.value`` is still the number, so comparisons behave as before.
* The ``DCGM_*_IS_BLANK`` tests answer ``True`` for ``None`` (NVIDIA's raise ``TypeError``):
  ``dcgm_field_helpers.DcgmFieldValue.value`` is ``None`` for a blank here, and a program
  written for NVIDIA's that tests it with ``DCGM_FP64_IS_BLANK(v.value)`` still works.
"""

from __future__ import annotations

from typing import Any

from dcgm.compat import _layout

# Blank values, from the C header's definitions (dcgm-sys's constants).
DCGM_INT8_BLANK: int = _layout.CONSTANTS["DCGM_INT8_BLANK"]
DCGM_INT32_BLANK: int = _layout.CONSTANTS["DCGM_INT32_BLANK"]
DCGM_INT64_BLANK: int = _layout.CONSTANTS["DCGM_INT64_BLANK"]
#: 2 ** 47: a double that still counts in steps of 1 for the 16 values above it.
DCGM_FP64_BLANK: float = _layout.CONSTANTS["DCGM_FP64_BLANK"]
DCGM_STR_BLANK: str = _layout.CONSTANTS["DCGM_STR_BLANK"]

# The value was not found.
DCGM_INT32_NOT_FOUND: int = DCGM_INT32_BLANK + 1
DCGM_INT64_NOT_FOUND: int = DCGM_INT64_BLANK + 1
DCGM_FP64_NOT_FOUND: float = DCGM_FP64_BLANK + 1.0
DCGM_STR_NOT_FOUND: str = _layout.CONSTANTS["DCGM_STR_NOT_FOUND"]

# Reading the value is not supported.
DCGM_INT32_NOT_SUPPORTED: int = DCGM_INT32_BLANK + 2
DCGM_INT64_NOT_SUPPORTED: int = DCGM_INT64_BLANK + 2
DCGM_FP64_NOT_SUPPORTED: float = DCGM_FP64_BLANK + 2.0
DCGM_STR_NOT_SUPPORTED: str = _layout.CONSTANTS["DCGM_STR_NOT_SUPPORTED"]

# Reading the value is not permitted to this caller.
DCGM_INT32_NOT_PERMISSIONED: int = DCGM_INT32_BLANK + 3
DCGM_INT64_NOT_PERMISSIONED: int = DCGM_INT64_BLANK + 3
DCGM_FP64_NOT_PERMISSIONED: float = DCGM_FP64_BLANK + 3.0
DCGM_STR_NOT_PERMISSIONED: str = _layout.CONSTANTS["DCGM_STR_NOT_PERMISSIONED"]

_INT32_SENTINELS = frozenset(
    (DCGM_INT32_BLANK, DCGM_INT32_NOT_FOUND, DCGM_INT32_NOT_SUPPORTED, DCGM_INT32_NOT_PERMISSIONED)
)


def DCGM_INT8_IS_BLANK(val: Any) -> bool:
    """Whether an 8-bit value is blank (at or above ``DCGM_INT8_BLANK`` or ``None``)."""
    return val is None or bool(val >= DCGM_INT8_BLANK)


def DCGM_INT32_IS_BLANK(val: Any) -> bool:
    """Whether a 32-bit value is blank (at or above ``DCGM_INT32_BLANK`` or ``None``)."""
    return val is None or bool(val >= DCGM_INT32_BLANK)


def DCGM_INT64_IS_BLANK(val: Any) -> bool:
    """Whether a 64-bit value is blank (at or above ``DCGM_INT64_BLANK`` or ``None``)."""
    return val is None or bool(val >= DCGM_INT64_BLANK)


def DCGM_FP64_IS_BLANK(val: Any) -> bool:
    """Whether a double is blank (at or above ``DCGM_FP64_BLANK`` or ``None``)."""
    return val is None or bool(val >= DCGM_FP64_BLANK)


def DCGM_STR_IS_BLANK(val: Any) -> bool:
    """Whether a text is blank: it starts with ``<<<`` and holds ``>>>``; ``None`` (no value)
    is blank."""
    return val is None or (val.find("<<<") == 0 and val.find(">>>") >= 0)


class DcgmValue:
    """One field value: ``value`` is an ``int`` (int64), a ``float``, a ``str`` or ``None``."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def SetFromInt32(self, i32Value: Any) -> None:
        """Stores a value that was a C ``int32``, mapping a 32-bit blank to the 64-bit blank
        of the same meaning."""
        value = int(i32Value)
        if not DCGM_INT32_IS_BLANK(i32Value):
            self.value = value
        elif value == DCGM_INT32_NOT_FOUND:
            self.value = DCGM_INT64_NOT_FOUND
        elif value == DCGM_INT32_NOT_SUPPORTED:
            self.value = DCGM_INT64_NOT_SUPPORTED
        elif value == DCGM_INT32_NOT_PERMISSIONED:
            self.value = DCGM_INT64_NOT_PERMISSIONED
        else:
            self.value = DCGM_INT64_BLANK

    def IsBlank(self) -> bool:
        """Whether the value is a blank of any width (see the module's doc); raises
        ``Exception`` for a value that is none of int, float, str and None, as NVIDIA's."""
        v = self.value
        if v is None:
            return True
        if isinstance(v, (_layout.BlankInt, _layout.BlankFloat, _layout.BlankStr)):
            return True
        if isinstance(v, int):
            return DCGM_INT64_IS_BLANK(v) or int(v) in _INT32_SENTINELS
        if isinstance(v, float):
            return DCGM_FP64_IS_BLANK(v)
        if isinstance(v, str):
            return DCGM_STR_IS_BLANK(v)
        raise Exception("Unknown type: %s" % str(type(v)))

    def __str__(self) -> str:
        v = self.value
        if v is not None and isinstance(v, (int, float, str)) and self.IsBlank():
            return "N/A"
        return str(v)


def self_test() -> None:
    """The checks NVIDIA's module runs as a script; prints ``Tests passed``."""
    v = DcgmValue(1.0)
    assert not v.IsBlank()
    assert v.value == 1.0
    v = DcgmValue(100)
    assert not v.IsBlank()
    assert v.value == 100
    v = DcgmValue(DCGM_INT64_NOT_FOUND)
    assert v.IsBlank()
    v = DcgmValue(DCGM_FP64_NOT_FOUND)
    assert v.IsBlank()
    v.SetFromInt32(DCGM_INT32_NOT_SUPPORTED)
    assert v.IsBlank()
    assert v.value == DCGM_INT64_NOT_SUPPORTED
    print("Tests passed")


if __name__ == "__main__":
    self_test()
