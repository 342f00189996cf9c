"""The ctypes mirror of every C struct and union of ``dcgm-sys``, built at import from the
layout table the extension exports (``dcgm._native.raw_layouts``: each struct's fields with
their Rust types and the offsets the Rust compiler gave them). The classes are named as
NVIDIA's ``dcgm_structs`` names them (``c_`` + the C name) and behave as NVIDIA's do: text
fields read as ``str`` and accept ``str``. :func:`check` compares every class's size and
offsets with the table, so a ctypes class can never silently disagree with the C layout.

Nothing here is generated into a file: the classes follow the Rust definitions of the build
that is installed.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any, Callable, Dict, List, Optional, Tuple, Type

from dcgm import _native

#: name -> (is_union, is_packed, size, align, [(field, rust type, offset)])
LAYOUTS: Dict[str, Tuple[bool, bool, int, int, List[Tuple[str, str, int]]]] = {
    name: (union, packed, size, align, fields)
    for name, union, packed, size, align, fields in _native.raw_layouts()
}
#: alias -> aliased Rust type
ALIASES: Dict[str, str] = dict(_native.raw_aliases())
#: every integer, float and string constant of dcgm-sys
CONSTANTS: Dict[str, Any] = dict(_native.raw_constants())

_SCALARS: Dict[str, Any] = {
    "u8": ctypes.c_uint8,
    "u16": ctypes.c_uint16,
    "u32": ctypes.c_uint32,
    "u64": ctypes.c_uint64,
    "usize": ctypes.c_uint64,
    "i8": ctypes.c_int8,
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "isize": ctypes.c_int64,
    "c_int": ctypes.c_int,
    "c_uint": ctypes.c_uint,
    "c_long": ctypes.c_long,
    "c_ulong": ctypes.c_ulong,
    "c_char": ctypes.c_char,
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
    "bool": ctypes.c_bool,
}


def _settable(ctype: Any, value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8")
    if ctype in (ctypes.c_uint, ctypes.c_int) and not isinstance(value, (ctypes.c_uint32, ctypes.c_int32)):
        return int(value)
    return value


class _TextFields:
    """What NVIDIA's structures do on top of ctypes: ``char`` arrays read as ``str`` and
    accept ``str``; ``c_uint``/``c_int`` fields accept anything ``int()`` takes."""

    __slots__ = ()

    def __getattribute__(self, key: str) -> Any:
        value = super().__getattribute__(key)
        if type(value) is bytes:
            return value.decode("utf-8", "replace")
        return value

    def __setattr__(self, key: str, value: Any) -> None:
        for name, ctype in type(self)._fields_:  # type: ignore[attr-defined]
            if name == key:
                value = _settable(ctype, value)
                break
        super().__setattr__(key, value)


class DcgmStructure(_TextFields, ctypes.Structure):
    """Base of every structure class: prints as ``name(field: value, ...)`` and reads text
    fields as ``str``."""

    _fmt_: Dict[str, str] = {}

    def __str__(self) -> str:
        parts = []
        for field in self._fields_:
            key = field[0]
            fmt = self._fmt_.get(key, self._fmt_.get("<default>", "%s"))
            parts.append(("%s: " + fmt) % (key, getattr(self, key)))
        return type(self).__name__ + "(" + ", ".join(parts) + ")"

    def FieldsSizeof(self) -> int:
        """The sum of the fields' sizes (without padding), as NVIDIA's structures answer."""
        return sum(ctypes.sizeof(t) for _, t in self._fields_)


class DcgmUnion(_TextFields, ctypes.Union):
    """Base of every union class."""


_ALIGNERS = {2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64}
_ARRAY = re.compile(r"^\[(.*);([^;\]]+)\]$")
_built: Dict[str, Any] = {}
#: C name -> class name, where NVIDIA's name is not ``c_`` + the C name (anonymous members).
RENAMES: Dict[str, str] = {}
#: class name -> extra attributes (``_fmt_``, methods) set on the class when it is built.
EXTRAS: Dict[str, Dict[str, Any]] = {}


def _resolve_alias(t: str) -> str:
    seen = 0
    while t in ALIASES and t not in LAYOUTS and seen < 16:
        t = ALIASES[t]
        seen += 1
    return t


def _length(expr: str) -> int:
    expr = expr.replace("asusize", "").replace("crate::", "").strip("{}() ")
    if expr.isdigit():
        return int(expr)
    if expr in CONSTANTS:
        return int(CONSTANTS[expr])
    # simple arithmetic of constants (`A*B`, `A+1`)
    names = {k: v for k, v in CONSTANTS.items() if isinstance(v, int)}
    if re.fullmatch(r"[A-Za-z0-9_+*\-/ ]+", expr):
        return int(eval(expr, {"__builtins__": {}}, names))  # noqa: S307 (constant names only)
    raise ValueError("cannot size an array of %r" % expr)


def ctype_of(rust: str) -> Any:
    """The ctypes type of a Rust type string from the layout table."""
    rust = rust.replace("crate::", "")
    m = _ARRAY.match(rust)
    if m:
        return ctype_of(m.group(1)) * _length(m.group(2))
    if rust.startswith("*") or rust.startswith("Option<"):
        return ctypes.c_void_p
    if rust in LAYOUTS:
        return build(rust)
    r = _resolve_alias(rust)
    if r in LAYOUTS:
        return build(r)
    if r != rust:
        return ctype_of(r)
    if r in _SCALARS:
        return _SCALARS[r]
    raise ValueError("no ctypes type for the Rust type %r" % rust)


def class_name(c_name: str) -> str:
    return RENAMES.get(c_name, "c_" + c_name)


def build(c_name: str) -> Any:
    """The ctypes class of the C struct or union ``c_name`` (built once)."""
    cls = _built.get(c_name)
    if cls is not None:
        return cls
    union, packed, size, align, fields = LAYOUTS[c_name]
    base: Any = DcgmUnion if union else DcgmStructure
    body: Dict[str, Any] = {"__module__": "dcgm.compat.dcgm_structs"}
    if packed:
        body["_pack_"] = 1
    cls = type(class_name(c_name), (base,), body)
    _built[c_name] = cls
    members = [(f, ctype_of(t)) for f, t, _ in fields]
    natural = max((ctypes.alignment(t) for _, t in members), default=1)
    if not packed and natural < align:
        # An over-aligned C type (`#[repr(align(N))]`): a zero-length member of that
        # alignment at offset 0 gives the ctypes class the same alignment and size.
        members.insert(0, ("_align_%d" % align, _ALIGNERS[align] * 0))
    cls._fields_ = members
    for k, v in EXTRAS.get(cls.__name__, {}).items():
        setattr(cls, k, v)
    return cls


def all_classes() -> Dict[str, Any]:
    """Every struct and union of the table, by class name."""
    return {class_name(n): build(n) for n in LAYOUTS}


def check() -> List[str]:
    """Every disagreement between a ctypes class and the layout table (size, alignment, a
    field's offset); empty when all agree."""
    problems = []
    for name, (union, packed, size, align, fields) in LAYOUTS.items():
        cls = build(name)
        if ctypes.sizeof(cls) != size:
            problems.append("%s: ctypes size %d, C size %d" % (name, ctypes.sizeof(cls), size))
        if ctypes.alignment(cls) != align:
            problems.append("%s: ctypes alignment %d, C alignment %d" % (name, ctypes.alignment(cls), align))
        for f, _, offset in fields:
            got = getattr(cls, f).offset
            if got != offset:
                problems.append("%s.%s: ctypes offset %d, C offset %d" % (name, f, got, offset))
    return problems


def make_dcgm_version(struct: Any, ver: int) -> int:
    """A version word: the structure's size with the version number in the top byte."""
    return ctypes.sizeof(struct) | (ver << 24)
