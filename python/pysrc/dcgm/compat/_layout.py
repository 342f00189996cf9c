"""The ctypes mirror of every C struct and union of ``dcgm-sys``, built at import from the
layout table the extension exports (``dcgm._native.raw_layouts``: each struct's fields with
their Rust types and the offsets the Rust compiler gave them). The classes carry NVIDIA's
``dcgm_structs`` names (``c_`` + the C name, or :data:`RENAMES`), NVIDIA's field names
(:data:`FIELD_NAMES`) and, where NVIDIA's ctypes type of a field differs in kind from the C
one in a way a program can see, NVIDIA's type of the same size (:data:`FIELD_TYPES`). They
behave as NVIDIA's do: text fields read as ``str`` and accept ``str``. :func:`check` compares
every class's size, alignment and offsets with the table, so a ctypes class can never
silently disagree with the C layout.

Blank sentinels. Reading a field that holds one of DCGM's blank values answers a
:class:`BlankInt`, :class:`BlankFloat` or :class:`BlankStr`: it compares, hashes, computes and
JSON-encodes as the number (or text) it is, and prints as ``N/A`` (``str()``, ``%s``, ``{}``,
``print``). Explicit numeric formats (``%d``, ``{:d}``, ``{:x}``) still give the number. The
rule for which fields do this:

* the field's C type is a plain number of the sentinel's width: a 32-bit integer for
  ``DCGM_INT32_BLANK``/``NOT_FOUND``/``NOT_SUPPORTED``/``NOT_PERMISSIONED``, a 64-bit
  integer for the ``DCGM_INT64_*`` ones, a ``double`` for the ``DCGM_FP64_*`` ones, a char
  array for the ``DCGM_STR_*`` ones. Fields typed by an alias (enums, entity ids, group and
  field-group handles, return codes) and array elements are never touched;
* the field's name does not say it is bookkeeping, where a large number is a legitimate
  value: ``version``, ids (``...Id``, ``...Ids``), counts (``num...``, ``...Count``), masks
  and bitmaps (``...Mask...``, ``...Bitmask...``), indices, flags, sizes, handles, pids,
  return codes (``status``, ``...Code``, ``nvmlRet``) and the padding members (``_...``,
  ``unused...``) are left as plain numbers (:data:`_NOT_BLANK`).

Nothing here is generated into a file: the classes follow the Rust definitions of the build
that is installed.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any, Dict, List, Optional, Tuple

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

# ---- blank sentinels -------------------------------------------------------------------

_BLANK_NAMES: Dict[Any, str] = {}
#: sentinel integer -> the width it belongs to ("i32" or "i64")
_INT_BLANKS: Dict[int, str] = {}
_FP_BLANKS: Dict[float, str] = {}
_STR_BLANKS: Dict[str, str] = {}
for _kind in ("BLANK", "NOT_FOUND", "NOT_SUPPORTED", "NOT_PERMISSIONED"):
    for _width, _table in (("INT32", _INT_BLANKS), ("INT64", _INT_BLANKS), ("FP64", _FP_BLANKS), ("STR", _STR_BLANKS)):
        _name = "DCGM_%s_%s" % (_width, _kind)
        _value = CONSTANTS[_name]
        _table[_value] = {"INT32": "i32", "INT64": "i64", "FP64": "f64", "STR": "str"}[_width]
        _BLANK_NAMES[(_width, _value)] = _name
del _kind, _width, _table, _name, _value

_NUMERIC_FORMATS = frozenset("bcdoxXneEfFgG%")


def _format_blank(value: Any, plain: Any, spec: str) -> str:
    if spec and spec[-1] in _NUMERIC_FORMATS:
        return format(plain, spec)
    return format("N/A", spec)


class BlankInt(int):
    """An integer DCGM blank sentinel read from a structure field: equal to (and computing
    as) the number, printed as ``N/A``. ``blank_name`` names the sentinel."""

    __slots__ = ()

    @property
    def blank_name(self) -> str:
        """The sentinel's DCGM name (``DCGM_INT32_NOT_SUPPORTED``)."""
        width = "INT32" if int(self) < 1 << 32 else "INT64"
        return _BLANK_NAMES.get((width, int(self)), "DCGM_%s_BLANK" % width)

    def __str__(self) -> str:
        return "N/A"

    def __format__(self, spec: str) -> str:
        return _format_blank(self, int(self), spec)

    def __repr__(self) -> str:
        return int.__repr__(self)

    def __reduce__(self) -> Any:
        return (BlankInt, (int(self),))


class BlankFloat(float):
    """A ``DCGM_FP64_*`` blank sentinel read from a structure field: equal to the number,
    printed as ``N/A``."""

    __slots__ = ()

    @property
    def blank_name(self) -> str:
        """The sentinel's DCGM name (``DCGM_FP64_NOT_FOUND``)."""
        return _BLANK_NAMES.get(("FP64", float(self)), "DCGM_FP64_BLANK")

    def __str__(self) -> str:
        return "N/A"

    def __format__(self, spec: str) -> str:
        return _format_blank(self, float(self), spec)

    def __repr__(self) -> str:
        return float.__repr__(self)

    def __reduce__(self) -> Any:
        return (BlankFloat, (float(self),))


class BlankStr(str):
    """A ``DCGM_STR_*`` blank text (``<<<NOT_SUPPORTED>>>``) read from a structure field:
    equal to that text, printed as ``N/A``."""

    __slots__ = ()

    @property
    def blank_name(self) -> str:
        """The sentinel's DCGM name (``DCGM_STR_NOT_SUPPORTED``)."""
        return _BLANK_NAMES.get(("STR", str.__str__(self)), "DCGM_STR_BLANK")

    def __str__(self) -> str:
        return "N/A"

    def __format__(self, spec: str) -> str:
        return format("N/A", spec)

    def __reduce__(self) -> Any:
        return (BlankStr, (str.__str__(self),))


def is_blank(value: Any) -> bool:
    """Whether ``value`` is one of DCGM's blank sentinels of any width (an int equal to an
    INT32 or INT64 sentinel, a float equal to an FP64 one, one of the ``<<<...>>>`` texts),
    or a value a structure read marked as blank."""
    if isinstance(value, (BlankInt, BlankFloat, BlankStr)):
        return True
    t = type(value)
    if t is int:
        return value in _INT_BLANKS
    if t is float:
        return value in _FP_BLANKS
    if t is str:
        return value in _STR_BLANKS
    return False


#: Field names that are bookkeeping, never a measurement: a large number there is real.
_NOT_BLANK = re.compile(
    r"^(?:_.*|version|id|count|flags?|handle|pid|size|unused.*|num[A-Z0-9].*|status|ret|nvmlRet|errnum"
    r"|.*(?:Id|ID|Ids|IDs|Count|Flags?|Handle|Pid|Pids|Size|Len|Length|[Cc]ode)"
    r"|.*(?:[Mm]ask|[Bb]itmask|[Ii]ndex|[Ii]ndices|[Bb]itmap).*)$"
)
_INT32_RUST = frozenset(("u32", "i32", "c_int", "c_uint"))
_INT64_RUST = frozenset(("u64", "i64", "c_long", "c_ulong", "usize", "isize"))
_TEXT_RUST = re.compile(r"^\[c_char;[^;\]]+\]$")


def _blank_kind(py_name: str, rust: str, ctype: Any) -> Optional[str]:
    """Which sentinel width a field can hold as a blank (see the module's doc), or None."""
    if _NOT_BLANK.match(py_name):
        return None
    rust = rust.replace("crate::", "")
    size = ctypes.sizeof(ctype)
    integral = isinstance(ctype, type) and issubclass(ctype, ctypes._SimpleCData) and ctype._type_ in "bBhHiIlLqQ"  # type: ignore[attr-defined]
    if rust in _INT32_RUST and integral and size == 4:
        return "i32"
    if rust in _INT64_RUST and integral and size == 8:
        return "i64"
    if rust == "f64" and ctype is ctypes.c_double:
        return "f64"
    if _TEXT_RUST.match(rust) and getattr(ctype, "_type_", None) is ctypes.c_char:
        return "str"
    return None


# ---- the structure bases ---------------------------------------------------------------

_getattribute = object.__getattribute__
_setattr = object.__setattr__


def _settable(ctype: Any, value: Any) -> Any:
    """What NVIDIA's structures store for ``value`` in a field of ``ctype``: ``int(value)`` for
    ``c_uint``/``c_int`` fields (so ``"5"`` and ``5.0`` are accepted), UTF-8 bytes for text."""
    if (ctype is ctypes.c_uint and not isinstance(value, ctypes.c_uint32)) or (
        ctype is ctypes.c_int and not isinstance(value, ctypes.c_int32)
    ):
        return int(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return value


def _field_types(cls: Any) -> Dict[str, Any]:
    types = cls.__dict__.get("_ftypes_")
    if types is None:
        types = {}
        for klass in reversed(cls.__mro__):
            for f in klass.__dict__.get("_fields_", ()):
                types[f[0]] = f[1]
        cls._ftypes_ = types
    return types  # type: ignore[no-any-return]


class _TextFields:
    """What NVIDIA's structures do on top of ctypes (``char`` arrays read as ``str`` and
    accept ``str``; ``c_uint``/``c_int`` fields accept anything ``int()`` takes), plus the
    blank sentinels of the module's doc."""

    __slots__ = ()
    #: field -> sentinel width ("i32", "i64", "f64", "str"); set per class by :func:`build`
    _blank_: Dict[str, str] = {}

    def __getattribute__(self, key: str) -> Any:
        value = _getattribute(self, key)
        t = type(value)
        if t is int:
            if value in _INT_BLANKS and type(self)._blank_.get(key) == _INT_BLANKS[value]:
                return BlankInt(value)
            return value
        if t is bytes:
            text = value.decode("utf-8", "replace")
            if text in _STR_BLANKS and type(self)._blank_.get(key) == "str":
                return BlankStr(text)
            return text
        if t is float:
            if value in _FP_BLANKS and type(self)._blank_.get(key) == "f64":
                return BlankFloat(value)
        return value

    def __setattr__(self, key: str, value: Any) -> None:
        ctype = _field_types(type(self)).get(key)
        if ctype is not None:
            value = _settable(ctype, value)
        _setattr(self, key, value)


class DcgmStructure(_TextFields, ctypes.Structure):
    """Base of every structure class: prints as ``name(field: value, ...)``, reads text
    fields as ``str`` and blank sentinels as ``N/A`` values."""

    _fmt_: Dict[str, str] = {}

    def __str__(self) -> str:
        parts = []
        fmts = self._fmt_
        for field in self._fields_:
            key = field[0]
            if key.startswith("_align_"):
                continue
            fmt = fmts.get(key, fmts.get("<default>", "%s"))
            parts.append(("%s: " + fmt) % (key, getattr(self, key)))
        return type(self).__name__ + "(" + ", ".join(parts) + ")"

    def FieldsSizeof(self) -> int:
        """The sum of the fields' sizes (without padding), as NVIDIA's structures answer."""
        return sum(ctypes.sizeof(f[1]) for f in self._fields_)


class DcgmUnion(_TextFields, ctypes.Union):
    """Base of every union class."""


# ---- NVIDIA's names and kinds ----------------------------------------------------------

_ALIGNERS = {2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64}
_ARRAY = re.compile(r"^\[(.*);([^;\]]+)\]$")
_built: Dict[str, Any] = {}

#: C name -> class name, where NVIDIA's name is not ``c_`` + the C name.
RENAMES: Dict[str, str] = {
    "dcgmConfigPowerLimit_t": "c_dcgmConfigPowerLimit",
    "dcgmConfig_v2": "c_dcgmDeviceConfig_v2",
    "dcgmDeviceFbcSessionInfo_v1": "c_dcgmDeviceFbcSessionInfo_t",
    "dcgmDeviceTopology_v1__bindgen_ty_1": "c_dcgmDeviceTopologyPath_t",
    "dcgmDeviceTopology_v2__bindgen_ty_1": "c_dcgmDeviceTopologyPath_v2",
    "dcgmErrorInfo_t": "c_dcgmErrorInfo_v1",
    "dcgmFieldValue_v1__bindgen_ty_1": "c_dcgmFieldValue_v1_value",
    "dcgmPidSingleInfo_t__bindgen_ty_1": "c_dcgmHealthResponseInfo_t",
    "dcgmNvLinkGpuLinkP2PStatus_v1": "c_dcgmNvLinkGpuP2PStatus_v1",
    "dcgmNvLinkNvSwitchLinkStatus_t": "c_dcgmNvLinkNvSwitchLinkStatus_v2",
    "dcgmPolicyConditionParams_st": "c_dcgmPolicyConditionParms_t",
    "dcgmPolicyConditionParams_st__bindgen_ty_2": "c_dcgmPolicyConditionParmTypes_t",
    "dcgmPolicyCallbackResponse_v2__bindgen_ty_1": "Value",
    "dcgmSummaryResponse_t__bindgen_ty_1": "ResponseValue",
}
#: C name -> C name whose class it shares (identical anonymous members NVIDIA has as one class).
SAME_AS: Dict[str, str] = {
    "dcgmGpuUsageInfo_t__bindgen_ty_1": "dcgmPidSingleInfo_t__bindgen_ty_1",
}
#: C name of an anonymous member -> (C name of its owner, attribute): NVIDIA defines these
#: classes inside their owner's class, not at module level.
NESTED: Dict[str, Tuple[str, str]] = {
    "dcgmPolicyCallbackResponse_v2__bindgen_ty_1": ("dcgmPolicyCallbackResponse_v2", "Value"),
    "dcgmSummaryResponse_t__bindgen_ty_1": ("dcgmSummaryResponse_t", "ResponseValue"),
}
_M_CONFIG = {
    "eccMode": "mEccMode",
    "computeMode": "mComputeMode",
    "perfState": "mPerfState",
    "powerLimit": "mPowerLimit",
    "workloadPowerProfiles": "mWorkloadPowerProfiles",
}
_DIAG_RESPONSE = {"driverVersion": "dcgmDriverVersion"}
_RUN_DIAG = {"currentIteration": "currentIterations"}
#: C name -> {C field: NVIDIA's field name}. A trailing ``_`` of a Rust field name (``type_``,
#: ``i64_``) is dropped without an entry here.
FIELD_NAMES: Dict[str, Dict[str, str]] = {
    "dcgmConfig_v1": _M_CONFIG,
    "dcgmConfig_v2": _M_CONFIG,
    "dcgmDeviceVgpuEncSessions_v1": {"encoderSessionInfo": "vgpuId"},
    "dcgmDeviceVgpuProcessUtilInfo_v1": {"vgpuProcessUtilInfo": "vgpuId"},
    "dcgmDeviceVgpuTypeInfo_v1": {"vgpuTypeInfo": "vgpuTypeId"},
    "dcgmDeviceVgpuTypeInfo_v2": {"vgpuTypeInfo": "vgpuTypeId"},
    "dcgmDeviceWorkloadPowerProfilesStatus_v1": {
        "profileMask": "mProfileMask",
        "requestedProfileMask": "mRequestedProfileMask",
        "enforcedProfileMask": "mEnforcedProfileMask",
    },
    "dcgmWorkloadPowerProfileInfo_v1": {
        "profileId": "mWorkloadPowerProfileId",
        "priority": "mPriority",
        "conflictingMask": "mConflictingMask",
    },
    "dcgmWorkloadPowerProfileProfilesInfo_v1": {
        "workloadPowerProfile": "mWorkloadPowerProfiles",
        "profileCount": "mProfileCount",
    },
    "dcgmDiagResponse_v9": _DIAG_RESPONSE,
    "dcgmDiagResponse_v10": _DIAG_RESPONSE,
    "dcgmDiagResponse_v11": _DIAG_RESPONSE,
    "dcgmDiagResponse_v12": _DIAG_RESPONSE,
    "dcgmDiagTestResult_v3": {"status": "result"},
    "dcgmFieldSummaryRequest_v1": {"entityGroupId": "entityGroupType"},
    "dcgmGpuUsageInfo_t": {"computePidInfo": "computePids", "graphicsPidInfo": "graphicsPids"},
    "dcgmRunDiag_v8": {"currentIteration": "currentIterations", "clocksEventMask": "throttleMask"},
    "dcgmRunDiag_v9": _RUN_DIAG,
    "dcgmRunDiag_v10": _RUN_DIAG,
}
_GROUP_HANDLE = {"groupId": ctypes.c_void_p}
_VGPU_TYPE = {
    name: ctypes.c_uint
    for name in (
        "vgpuTypeId", "deviceId", "subsystemId", "numDisplayHeads", "maxInstances",
        "frameRateLimit", "maxResolutionX", "maxResolutionY", "fbTotal",
    )
}
#: (C name, field) whose NVIDIA type is narrower than the C member: a union member, so the
#: union's size and every offset stay the C ones.
_NARROWER = frozenset((("dcgmPolicyConditionParams_st__bindgen_ty_2", "boolean"),))
#: C name -> {NVIDIA's field name: the ctypes type NVIDIA gives it}, each of the C field's
#: size: where the kind differs visibly (a handle that reads ``None`` when 0, a signed value,
#: a union NVIDIA flattens to its first member, a blob that reads as an array, not text).
#: A string value names a C type of the table, ``*`` in front for a pointer to it.
FIELD_TYPES: Dict[str, Dict[str, Any]] = {
    "dcgmClockSet_v1": {"version": ctypes.c_uint},
    "dcgmDiagEntityResult_v1": {"result": ctypes.c_int},
    "dcgmMnDiagEntityResult_v1": {"result": ctypes.c_int},
    "dcgmFieldGroupInfo_v1": {"fieldGroupId": ctypes.c_void_p},
    "dcgmFieldValue_v1": {"fieldType": ctypes.c_short},
    "dcgmFieldValue_v2": {"fieldType": ctypes.c_short},
    "dcgmFieldValue_v1__bindgen_ty_1": {"blob": ctypes.c_byte * 4096},
    "dcgmHealthSetParams_v2": _GROUP_HANDLE,
    "dcgmRunDiag_v7": _GROUP_HANDLE,
    "dcgmRunDiag_v8": _GROUP_HANDLE,
    "dcgmRunDiag_v9": _GROUP_HANDLE,
    "dcgmRunDiag_v10": _GROUP_HANDLE,
    "dcgmWorkloadPowerProfile_v1": _GROUP_HANDLE,
    "dcgmPolicyCallbackResponse_v2": {"condition": ctypes.c_int},
    "dcgmPolicyConditionDbe_t": {"location": ctypes.c_int},
    "dcgmSettingsSetLoggingSeverity_v2": {"targetLogger": ctypes.c_uint, "targetSeverity": ctypes.c_uint},
    "dcgmDeviceVgpuEncSessions_v1": {"vgpuId": ctypes.c_uint},
    "dcgmDeviceVgpuProcessUtilInfo_v1": {"vgpuId": ctypes.c_uint},
    "dcgmDeviceVgpuTypeInfo_v1": _VGPU_TYPE,
    "dcgmDeviceVgpuTypeInfo_v2": dict(_VGPU_TYPE, gpuInstanceProfileId=ctypes.c_uint),
    "dcgmErrorInfo_t": {"fieldId": ctypes.c_ushort},
    # C: `unsigned int boolean`; NVIDIA's reads True/False (one byte of the 8-byte union).
    "dcgmPolicyConditionParams_st__bindgen_ty_2": {"boolean": ctypes.c_bool, "llval": ctypes.c_longlong},
    "dcgm_field_meta_t": {"fieldId": ctypes.c_short, "valueFormat": "*dcgm_field_output_format_t"},
}


def _link_raw(self: Any) -> int:
    return (self.id << 24) | (self.index << 8) | self.type


def _set_link_raw(self: Any, raw: int) -> None:
    self.type = raw & 0xFF
    self.index = (raw >> 8) & 0xFFFF
    self.id = (raw >> 24) & 0xFF


#: C name -> (ctypes fields, extra attributes): classes whose fields NVIDIA names differently
#: from the C members in a way a rename cannot express. Their size and alignment are checked.
FIELDS_OVERRIDE: Dict[str, Tuple[List[Tuple[Any, ...]], Dict[str, Any]]] = {
    # C: a union of the packed word and its bit fields; NVIDIA names the bit fields.
    "dcgm_link_t": (
        [("type", ctypes.c_uint32, 8), ("index", ctypes.c_uint32, 16), ("id", ctypes.c_uint32, 8)],
        {"raw": property(_link_raw, _set_link_raw, doc="The packed entity id (id << 24 | index << 8 | type).")},
    ),
}
#: class name -> extra attributes (``_fmt_``, methods) set on the class when it is built.
EXTRAS: Dict[str, Dict[str, Any]] = {}


def py_field_name(c_name: str, field: str) -> str:
    """NVIDIA's name of the C member ``field`` of ``c_name``."""
    renamed = FIELD_NAMES.get(c_name, {}).get(field)
    if renamed is not None:
        return renamed
    if field.endswith("_") and not field.startswith("_"):
        return field[:-1]
    return field


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
    """The class name of the C type ``c_name`` (NVIDIA's)."""
    c_name = SAME_AS.get(c_name, c_name)
    return RENAMES.get(c_name, "c_" + c_name)


def _override(spec: Any) -> Any:
    if isinstance(spec, str):
        if spec.startswith("*"):
            return ctypes.POINTER(build(spec[1:]))
        return build(spec)
    return spec


def build(c_name: str) -> Any:
    """The ctypes class of the C struct or union ``c_name`` (built once)."""
    c_name = SAME_AS.get(c_name, c_name)
    cls: Any = _built.get(c_name)
    if cls is not None:
        return cls
    union, packed, size, align, fields = LAYOUTS[c_name]
    base: Any = DcgmUnion if union else DcgmStructure
    name = class_name(c_name)
    body: Dict[str, Any] = {"__module__": "dcgm.compat.dcgm_structs"}
    if packed:
        body["_pack_"] = 1
    if c_name in NESTED:
        owner = NESTED[c_name][0]
        body["__qualname__"] = "%s.%s" % (class_name(owner), name)
    override = FIELDS_OVERRIDE.get(c_name)
    if override is not None:
        body.update(override[1])
        cls = type(name, (DcgmStructure,), body)
        cls._fields_ = override[0]
        _built[c_name] = cls
        return cls
    cls = type(name, (base,), body)
    _built[c_name] = cls
    types = FIELD_TYPES.get(c_name, {})
    members = []
    blanks: Dict[str, str] = {}
    for f, t, _ in fields:
        py = py_field_name(c_name, f)
        ctype = _override(types[py]) if py in types else ctype_of(t)
        members.append((py, ctype))
        kind = _blank_kind(py, t, ctype)
        if kind is not None:
            blanks[py] = kind
    natural = max((ctypes.alignment(t) for _, t in members), default=1)
    if not packed and natural < align:
        # An over-aligned C type (`#[repr(align(N))]`): a zero-length member of that
        # alignment at offset 0 gives the ctypes class the same alignment and size.
        members.insert(0, ("_align_%d" % align, _ALIGNERS[align] * 0))
    cls._fields_ = members
    cls._blank_ = blanks
    for k, v in EXTRAS.get(cls.__name__, {}).items():
        setattr(cls, k, v)
    if c_name in NESTED:
        owner, attr = NESTED[c_name]
        setattr(build(owner), attr, cls)
    return cls


def build_as(c_name: str, name: str, module: str) -> Any:
    """A second class with the layout, field names and behaviour of :func:`build`'s class
    of ``c_name``, under another name and module (a C typedef NVIDIA's bindings define as a
    class of its own, such as the test API's ``c_dcgmInjectFieldValue_v1``)."""
    base = build(c_name)
    body = {k: v for k, v in vars(base).items() if k in ("_pack_", "_blank_", "_fmt_")}
    body["__module__"] = module
    cls: Any = type(name, (DcgmUnion if issubclass(base, ctypes.Union) else DcgmStructure,), body)
    cls._fields_ = list(base._fields_)
    return cls


def all_classes() -> Dict[str, Any]:
    """Every struct and union of the table that NVIDIA has at module level, by class name
    (nested ones are attributes of their owner; anonymous members NVIDIA flattens are left
    out)."""
    return {
        class_name(n): build(n)
        for n in LAYOUTS
        if SAME_AS.get(n, n) not in NESTED and ("__bindgen_ty" not in n or SAME_AS.get(n, n) in RENAMES)
    }


def check() -> List[str]:
    """Every disagreement between a ctypes class and the layout table (size, alignment, a
    field's offset, a replaced field type's size); empty when all agree."""
    problems = []
    for name, (union, packed, size, align, fields) in LAYOUTS.items():
        cls = build(name)
        if ctypes.sizeof(cls) != size:
            problems.append("%s: ctypes size %d, C size %d" % (name, ctypes.sizeof(cls), size))
        if ctypes.alignment(cls) != align:
            problems.append("%s: ctypes alignment %d, C alignment %d" % (name, ctypes.alignment(cls), align))
        if name in FIELDS_OVERRIDE:
            continue
        types = FIELD_TYPES.get(name, {})
        for f, t, offset in fields:
            py = py_field_name(name, f)
            got = getattr(cls, py).offset
            if got != offset:
                problems.append("%s.%s: ctypes offset %d, C offset %d" % (name, py, got, offset))
            if (
                py in types
                and (name, py) not in _NARROWER
                and ctypes.sizeof(_override(types[py])) != ctypes.sizeof(ctype_of(t))
            ):
                problems.append("%s.%s: NVIDIA's type has another size than the C %s" % (name, py, t))
    return problems


def make_dcgm_version(struct: Any, ver: int) -> int:
    """A version word: the structure's size with the version number in the top byte."""
    return ctypes.sizeof(struct) | (ver << 24)
