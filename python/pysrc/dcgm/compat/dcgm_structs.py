"""NVIDIA's ``dcgm_structs`` (DCGM 4.6): the ``c_dcgm*`` ctypes structures, the constants, the
``DCGMError_*`` exceptions and the library loading, for programs written against NVIDIA's
Python bindings.

* Every structure and union is a real ``ctypes.Structure``/``ctypes.Union`` built from
  ``dcgm-sys``'s layout table (see :mod:`dcgm.compat._layout`), so sizes, offsets and version
  words are the C ones by construction; the class and field names are NVIDIA's, text fields
  read as ``str`` as NVIDIA's do, and a field holding a DCGM blank sentinel reads as a value
  that equals the number and prints as ``N/A`` (the rule: :mod:`dcgm.compat._layout`).
  ``c_dcgm_link_t`` keeps the C layout (4 bytes, bit fields ``type``/``index``/``id``) where
  NVIDIA's class is 6 bytes.
* The constants are dcgm-sys's; where NVIDIA's Python module and the C header disagree
  (``DCGM_CHIP_ARCH_COUNT``, ``DCGM_SWTEST_COUNT``, the unused test indices), NVIDIA's value.
* ``DCGM_FI_*`` field ids are reachable here too (the names of :mod:`dcgm.compat.dcgm_fields`); a field
  name DCGM lacks (``DCGM_FI_DEV_MEM_USED``) raises ``AttributeError`` naming the one to use.
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
import platform
import string
import sys
import threading
import typing as _typing
from ctypes import *  # noqa: F401,F403  (NVIDIA's module re-exports ctypes' names; programs use them)
from ctypes.util import find_library  # noqa: F401  (a name of NVIDIA's module)
from inspect import isclass

from dcgm import _native, structs as _pkg_structs
from dcgm.compat import _ffi, _field_names, _layout, dcgmvalue

# ---- constants: every integer, float and string constant of dcgm-sys (DCGM_*, the version
# words, the enums), then the names NVIDIA's module spells differently (below).
#: this module's names, for those made at import (mypy sees them through this dict)
_g: _typing.Dict[str, _typing.Any] = globals()
globals().update({k: v for k, v in _layout.CONSTANTS.items() if not k.startswith("_")})

# the return codes (dcgm-sys's RETURN_CODES table)
globals().update({name: code for code, name in _pkg_structs.RETURN_CODE_NAMES.items()})

# Where NVIDIA's Python module and the 4.6 C header disagree, a program written for the
# Python module expects the Python module's value (these index Python-side tables only).
DCGM_CHIP_ARCH_T3X = 11
DCGM_CHIP_ARCH_COUNT = 11
DCGM_UNUSED2_TEST_INDEX = 10
DCGM_UNUSED3_TEST_INDEX = 11
DCGM_UNUSED4_TEST_INDEX = 12
DCGM_UNUSED5_TEST_INDEX = 13
DCGM_SWTEST_COUNT = 10
DCGM_CONTEXT_CREATE_INDEX = 0
# NVIDIA's spellings of C names
DCGM_CHAR_BIT = 8
DCGM_ERR_MSG_LEN = _g["DCGM_ERR_MSG_LENGTH"]
DCGM_GROUP_DEFAULT_ENTITIES = _g["DCGM_GROUP_DEFAULT_EVERYTHING"]
DCGM_MAX_TOTAL_INSTANCES = _g["DCGM_MAX_TOTAL_INSTANCES_PER_GPU"]
DCGM_NVLINK_MAX_LINKS_PER_NVSWITCH_V1 = 36
DCGM_WORKLOAD_POWER_PROFILE_ARRAY_SIZE = _g["DCGM_POWER_PROFILE_ARRAY_SIZE"]
DCGM_WORKLOAD_POWER_PROFILE_MAX_NUM = _g["DCGM_POWER_PROFILE_MAX_NUM"]
DCGM_BU_EVENT_STATE_SYSTEM_REINITIALIZING = _g["DcgmBUEventStateSystemReinitializing"]
DCGM_BU_EVENT_STATE_SYSTEM_REINITIALIZATION_COMPLETED = _g["DcgmBUEventStateSystemReinitializationCompleted"]
DcgmiMigProfileNone = _g["DcgmMigProfileNone"]
for _name in [n for n in globals() if n.startswith("DcgmNvLinkP2pStatus")]:
    globals()["DcgmNvLinkP2PStatus" + _name[len("DcgmNvLinkP2pStatus"):]] = globals()[_name]

make_dcgm_version = _layout.make_dcgm_version

# ---- structures and unions
_PrintableStructure = _layout.DcgmStructure
_DcgmStructure = _layout.DcgmStructure
DcgmUnion = _layout.DcgmUnion
globals().update(_layout.all_classes())
# the C names of the classes NVIDIA names otherwise (kept for programs written against C names)
for _c, _cls_name in _layout.RENAMES.items():
    if _c not in _layout.NESTED and "__bindgen" not in _c:
        globals()["c_" + _c] = globals()[_cls_name]
# NVIDIA's `_t` names of the current versions
c_dcgmRunningProcess_t = _g["c_dcgmRunningProcess_v1"]
c_dcgmDeviceTopology_t = _g["c_dcgmDeviceTopology_v2"]
c_dcgmGroupTopology_t = _g["c_dcgmGroupTopology_v2"]
c_dcgmRunDiag_t = _g["c_dcgmRunDiag_v10"]
c_dcgmNvLinkStatus_t = _g["c_dcgmNvLinkStatus_v5"]
c_dcgmRunMnDiag_t = _g["c_dcgmRunMnDiag_v1"]
c_dcgmMnDiagHosts_t = _g["c_dcgmMnDiagHosts_v1"]
c_dcgmMnDiagTestAuxData_t = _g["c_dcgmMnDiagTestAuxData_v1"]
c_dcgmMnDiagTestRun_t = _g["c_dcgmMnDiagTestRun_v1"]
c_dcgmMnDiagEntity_t = _g["c_dcgmMnDiagEntity_v1"]
c_dcgmMnDiagError_t = _g["c_dcgmMnDiagError_v1"]
c_dcgmMnDiagInfo_t = _g["c_dcgmMnDiagInfo_v1"]
c_dcgmMnDiagEntityResult_t = _g["c_dcgmMnDiagEntityResult_v1"]
c_dcgmMnDiagResponse_t = _g["c_dcgmMnDiagResponse_v1"]
c_dcgmWorkloadPowerProfile_t = _g["c_dcgmWorkloadPowerProfile_v1"]
c_dcgmEnvVarInfo_t = _g["c_dcgmEnvVarInfo_v1"]


class struct_c_dcgmUnit_t(Structure):  # noqa: F405
    """An opaque unit handle's target (never dereferenced)."""


_dcgmUnit_t = POINTER(struct_c_dcgmUnit_t)  # noqa: F405
_dcgmReturn_t = c_uint  # noqa: F405
_dcgmRecvUpdates_t = c_void_p  # noqa: F405


class c_dcgmWatchFieldValue_v1(_PrintableStructure):
    """Request of the internal watch-field-value call: no fields; only its version word is
    used."""

    _fields_ = []


class c_dcgmUnwatchFieldValue_v1(_PrintableStructure):
    """Request of the internal unwatch-field-value call: no fields."""

    _fields_ = []


class c_dcgmUpdateAllFields_v1(_PrintableStructure):
    """Request of the internal update-all-fields call: no fields."""

    _fields_ = []


# ---- version words NVIDIA's module defines that the C header spells otherwise
c_dcgmConnectV2Params_version1 = make_dcgm_version(_g["c_dcgmConnectV2Params_v1"], 1)
c_dcgmConnectV2Params_version2 = make_dcgm_version(_g["c_dcgmConnectV2Params_v2"], 2)
c_dcgmConnectV2Params_version = c_dcgmConnectV2Params_version2
c_dcgmConnectV3Params_version1 = make_dcgm_version(_g["c_dcgmConnectV3Params_v1"], 1)
c_dcgmConnectV3Params_version = c_dcgmConnectV3Params_version1
c_dcgmGroupInfo_version3 = make_dcgm_version(_g["c_dcgmGroupInfo_v3"], 3)
c_dcgmMigHierarchy_version2 = make_dcgm_version(_g["c_dcgmMigHierarchy_v2"], 2)
c_dcgmDeleteMigEntity_version1 = make_dcgm_version(_g["c_dcgmDeleteMigEntity_v1"], 1)
c_dcgmCreateMigEntity_version1 = make_dcgm_version(_g["c_dcgmCreateMigEntity_v1"], 1)
dcgmDeviceConfig_version2 = make_dcgm_version(_g["c_dcgmDeviceConfig_v2"], 2)
dcgmDeviceWorkloadPowerProfileStatus_version1 = make_dcgm_version(_g["c_dcgmDeviceWorkloadPowerProfilesStatus_v1"], 1)
dcgmWatchFieldValue_version1 = make_dcgm_version(c_dcgmWatchFieldValue_v1, 1)
dcgmUnwatchFieldValue_version1 = make_dcgm_version(c_dcgmUnwatchFieldValue_v1, 1)
dcgmUpdateAllFields_version1 = make_dcgm_version(c_dcgmUpdateAllFields_v1, 1)
dcgmGetMultipleValuesForFieldResponse_version1 = 1
dcgmMnDiagHosts_version1 = make_dcgm_version(_g["c_dcgmMnDiagHosts_v1"], 1)
dcgmMnDiagTestRun_version1 = make_dcgm_version(_g["c_dcgmMnDiagTestRun_v1"], 1)
dcgmMnDiagEntity_version1 = make_dcgm_version(_g["c_dcgmMnDiagEntity_v1"], 1)
dcgmMnDiagError_version1 = make_dcgm_version(_g["c_dcgmMnDiagError_v1"], 1)
dcgmMnDiagInfo_version1 = make_dcgm_version(_g["c_dcgmMnDiagInfo_v1"], 1)
dcgmMnDiagEntityResult_version1 = make_dcgm_version(_g["c_dcgmMnDiagEntityResult_v1"], 1)


class DCGM_INTROSPECT_STATE(object):
    """Whether introspection is on (NVIDIA's enum class)."""

    DISABLED = 0
    ENABLED = 1


def _decode(value: _typing.Any) -> _typing.Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isclass(value):
        return _WrappedStructure(value)
    return value


class _WrappedStructure:
    """A view of a ctypes object whose text reads as ``str`` and accepts ``str`` (NVIDIA's
    helper for structures that are not of this module's classes)."""

    def __init__(self, obj: _typing.Any) -> None:
        self.__dict__["_obj"] = obj

    def __getattr__(self, key: str) -> _typing.Any:
        return _decode(getattr(self._obj, key))

    def __getitem__(self, key: _typing.Any) -> _typing.Any:
        return _decode(self._obj[key])

    def __setattr__(self, key: str, raw_value: _typing.Any) -> _typing.Any:
        if key == "_obj":
            raise RuntimeError("Cannot set _obj")
        ctype = None
        for f in getattr(self._obj, "_fields_", ()):
            if f[0] == key:
                ctype = f[1]
                break
        value = _layout._settable(ctype, raw_value)
        if hasattr(type(self._obj), "__setitem__"):
            self._obj[key] = value
        else:
            # NVIDIA's assigns by item, which a structure refuses; an attribute works.
            setattr(self._obj, key, value)
        return value


# ---- exceptions
DCGMError = _pkg_structs.DCGMError
for _name in dir(_pkg_structs):
    if _name.startswith("DCGMError_"):
        globals()[_name] = getattr(_pkg_structs, _name)
del _name


if not hasattr(DCGMError, "_error_code_to_string"):
    #: code -> text, as NVIDIA's ``DCGMError._error_code_to_string``
    DCGMError._error_code_to_string = dict(_pkg_structs.RETURN_CODE_DESCRIPTIONS)  # type: ignore[attr-defined]

#: ``DCGM_ST_OK``'s class: NVIDIA's module has one for every code, success included.
DCGMError_Ok = type(
    "DCGMError_Ok",
    (DCGMError,),
    {"__doc__": "DCGM_ST_OK (0): Success", "__module__": _pkg_structs.__name__, "_dcgm_code": 0},
)

#: code -> exception class, as NVIDIA's ``DCGMError._valClassMapping``.
_valClassMapping: _typing.Dict[int, _typing.Type[DCGMError]] = {
    code: _pkg_structs.dcgmExceptionClass(code) for code in _pkg_structs.RETURN_CODE_NAMES if code != 0
}
_valClassMapping[0] = DCGMError_Ok
DCGMError._valClassMapping = _valClassMapping  # type: ignore[attr-defined]


def _extractDCGMErrorsAsClasses() -> None:
    """Makes every ``DCGM_ST_*`` code's ``DCGMError_*`` class a module attribute (done at
    import; calling it again changes nothing)."""
    this_module = sys.modules[__name__]
    for code, cls in _valClassMapping.items():
        setattr(this_module, cls.__name__, cls)


def dcgmExceptionClass(error_code: int) -> _typing.Optional[_typing.Type[DCGMError]]:
    """The ``DCGMError_*`` class of a return code (``None`` for a code DCGM does not have, as
    NVIDIA's answers)."""
    return _valClassMapping.get(error_code)


def _json_value(encoder: "DcgmJSONEncoder", value: _typing.Any) -> _typing.Any:
    if isinstance(value, (ctypes.Structure, ctypes.Union, ctypes.Array)):
        return encoder.default(value)
    return value


class DcgmJSONEncoder(json.JSONEncoder):
    """Encodes structures and unions (and arrays of them, or of numbers) as JSON objects of
    their fields; blank sentinels encode as the numbers they are."""

    def default(self, o: _typing.Any) -> _typing.Any:  # noqa: D102
        if isinstance(o, (ctypes.Structure, ctypes.Union)):
            return {
                f[0]: _json_value(self, getattr(o, f[0])) for f in o._fields_ if not f[0].startswith("_align_")
            }
        if isinstance(o, ctypes.Array):
            return [_json_value(self, _decode(x) if isinstance(x, bytes) else x) for x in o]
        return json.JSONEncoder.default(self, o)


def __getattr__(name: str) -> _typing.Any:
    """``DCGM_FI_*`` field ids are reachable from here too (as in the project's brief); a
    field name DCGM does not have raises ``AttributeError`` naming the one to use."""
    if name.startswith("DCGM_FI_"):
        value = _field_names.FIELD_IDS.get(name)
        if value is not None:
            return value
        return _field_names.resolve(__name__, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


# ---- the library
class _Library:
    """What ``dcgmLib`` is once loaded: functions by attribute (``dcgmLib.dcgmInit``)."""

    def __init__(self, path: str, simulated: bool) -> None:
        self._path = path
        self.simulated = simulated

    def __getattr__(self, name: str) -> _typing.Any:
        fp = _ffi.function(name)
        if fp is None:
            raise AttributeError("%s is not exported by %s" % (name, self._path))
        return fp

    def __repr__(self) -> str:
        return "<libdcgm %s%s>" % (self._path, ", simulated" if self.simulated else "")


dcgmLib: _typing.Optional[_Library] = None
libLoadLock = threading.Lock()
_dcgmLib_refcount = 0


def _LoadDcgmLibrary(libDcgmPath: _typing.Optional[str] = None) -> None:
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
            err = dcgmExceptionClass(_pkg_structs.DCGM_ST_LIBRARY_NOT_FOUND)(  # type: ignore[misc]
                _pkg_structs.DCGM_ST_LIBRARY_NOT_FOUND, "%s (pass simulate=True, or python -m dcgm.compat --simulate, to use the simulator)" % e
            )
            raise err from None
        dcgmLib = _Library(opened, simulated)


def _dcgmInit(libDcgmPath: _typing.Optional[str] = None) -> None:
    """Loads the library (see :func:`_LoadDcgmLibrary`) and counts one more user of it."""
    global _dcgmLib_refcount
    _LoadDcgmLibrary(libDcgmPath)
    with libLoadLock:
        _dcgmLib_refcount += 1


#: name -> function pointer, filled by :func:`_dcgmGetFunctionPointer` (NVIDIA's cache).
_dcgmGetFunctionPointer_cache: _typing.Dict[str, _ffi.FunctionPointer] = _ffi._cache


def _dcgmGetFunctionPointer(name: str) -> _ffi.FunctionPointer:
    """The C function ``name`` of the loaded library: ``DCGMError_Uninitialized`` before
    :func:`_dcgmInit`, ``DCGMError_FunctionNotFound`` for a function it lacks."""
    fp = _dcgmGetFunctionPointer_cache.get(name)
    if fp is not None and dcgmLib is not None:
        return fp
    if dcgmLib is None:
        raise dcgmExceptionClass(_pkg_structs.DCGM_ST_UNINITIALIZED)()  # type: ignore[misc]
    fp = _ffi.function(name)
    if fp is None:
        raise dcgmExceptionClass(_pkg_structs.DCGM_ST_FUNCTION_NOT_FOUND)()  # type: ignore[misc]
    return fp


def _dcgmCheckReturn(ret: int) -> int:
    """Raises the ``DCGMError_*`` of a non-zero return code; answers the code."""
    if ret != _pkg_structs.DCGM_ST_OK:
        raise DCGMError(ret)
    return ret


def _dcgmShutdown() -> None:
    """``dcgmShutdown`` (the library stays loaded)."""
    global _dcgmLib_refcount
    _dcgmCheckReturn(_dcgmGetFunctionPointer("dcgmShutdown")())
    with libLoadLock:
        if _dcgmLib_refcount > 0:
            _dcgmLib_refcount -= 1


def _dcgmErrorString(result: int) -> _typing.Optional[bytes]:
    """The library's text for a return code."""
    fn = _dcgmGetFunctionPointer("errorString")
    fn.restype = c_char_p  # noqa: F405
    return fn(result)  # type: ignore[no-any-return]


def _entity_pair_eq(self: _typing.Any, other: _typing.Any) -> _typing.Any:
    """Two entity pairs are equal when their group and id are (NVIDIA's ``__eq__``)."""
    try:
        return self.entityGroupId == other.entityGroupId and self.entityId == other.entityId
    except AttributeError:
        return NotImplemented


c_dcgmGroupEntityPair_t.__eq__ = _entity_pair_eq  # type: ignore[name-defined]  # noqa: F405
# Hashable by value (NVIDIA's class, defining only __eq__, is not hashable at all).
c_dcgmGroupEntityPair_t.__hash__ = lambda self: hash((self.entityGroupId, self.entityId))  # type: ignore[name-defined]  # noqa: F405
