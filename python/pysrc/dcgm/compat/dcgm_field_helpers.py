"""NVIDIA's ``dcgm_field_helpers`` (DCGM 4.6): Python-friendly field values and the collections
that ``DcgmGroup.samples`` fills from the library.

The names, constructors, attributes and dictionary shapes are NVIDIA's:

* :class:`DcgmFieldValue` (``ts``, ``fieldId``, ``fieldType``, ``isBlank``, ``value``) made from a
  ``dcgm_structs.c_dcgmFieldValue_v1``;
* :class:`DcgmFieldValueTimeSeries` (``values`` in timestamp order, indexable, ``len()``);
* :class:`DcgmFieldValueCollection` (``values[gpuId][fieldId]``, ``entityValues[...]``) and
  :class:`DcgmFieldValueEntityCollection` (``values[entityGroupId][entityId][fieldId]``), with
  the watchers :class:`DcgmFieldGroupWatcher` and :class:`DcgmFieldGroupEntityWatcher`;
* :class:`FieldValueEncoder`, the ``py_helper_*`` callbacks and their ``helper_*`` C callbacks.

How ours differs, for the better:

* **Speed.** The collections read the values the library hands to the enumeration callback
  straight from its memory (one ``struct`` unpack of the 24-byte header and the 8-byte value
  per value) instead of copying each 4120-byte ``c_dcgmFieldValue_v1`` into a ctypes structure
  and reading it attribute by attribute. A subclass that overrides ``_ProcessValues`` (or
  ``_ProcessValuesV2``) still receives NVIDIA's list of structures.
* **Binary values** that NVIDIA's raise on (``Blobs not handled yet``, which inside the
  callback silently dropped the rest of that entity's values): process accounting stats decode
  to a ``c_dcgmDevicePidAccountingStats_v1``; any other blob gives ``value`` ``None``.
* **Errors inside the callback** (a subclass's ``_ProcessValues`` raising) are raised to the
  caller after the library call returns, instead of being printed and ignored by ctypes.
* ``DcgmFieldValueCollection.GetAllSinceLastCall_v2`` fills ``entityValues`` (NVIDIA's hands
  the entity callback's arguments to the GPU-only ``_ProcessValues`` and records nothing).
* **Blanks are** ``None``. A blank value (``isBlank`` true: a blank sentinel of its type, such
  as the first profiling samples after a watch starts, or an error status) has ``value``
  ``None``; NVIDIA's keeps the sentinel number there (``140737488355328.0``,
  ``9223372036854775794``, ``"<<<NOT_SUPPORTED>>>"``), which a client that averages every
  ``value is not None`` reports as a reading. ``DCGM_COMPAT_BLANK_SENTINELS=1`` (or
  ``python -m dcgm.compat --blank-sentinels``) gives NVIDIA's number back; it is read each
  time values are made (:func:`dcgm.compat.blank_sentinels`).
"""

from __future__ import annotations

import ctypes
import json
import struct
import time
from typing import Any, Dict, List, Optional

from dcgm.compat import dcgm_agent, dcgm_fields, dcgm_fields_internal, dcgm_structs, dcgmvalue  # noqa: F401 - NVIDIA's namespace
from dcgm.compat import blank_sentinels as _blank_sentinels
from dcgm.compat._handle_state import _callback_scope, _drain

# ---- the layout of c_dcgmFieldValue_v1 that the fast readers rely on (checked here, once)
_FV = dcgm_structs.c_dcgmFieldValue_v1
_FV_SIZE = ctypes.sizeof(_FV)
_VALUE_OFFSET = _FV.value.offset
_FAST = (
    _FV.version.offset == 0
    and _FV.fieldId.offset == 4
    and _FV.fieldType.offset == 6
    and _FV.status.offset == 8
    and _FV.ts.offset == 16
    and _VALUE_OFFSET == 24
)
_ROW = struct.Struct("=IHhi4xqq%dx" % (_FV_SIZE - 32))  # version, fieldId, fieldType, status, ts, value as i64, rest
_DECODED = object()  # DcgmFieldValue's first argument when the fields are given decoded

_FT_DOUBLE = ord("d")
_FT_INT64 = ord("i")
_FT_TIMESTAMP = ord("t")
_FT_STRING = ord("s")
_FT_BINARY = ord("b")
_FT_CHR = {i: chr(i) for i in range(256)}

# blank thresholds (dcgmvalue's DCGM_*_BLANK); a value at or above is a blank sentinel
_INT64_BLANK = 0x7FFFFFFFFFFFFFF0
_FP64_BLANK = 140737488355328.0

_FI_COMPUTE_PIDS = 221
_FI_GRAPHICS_PIDS = 220
_FI_ACCOUNTING = getattr(dcgm_fields, "DCGM_FI_DEV_PROCESS_ACCOUNTING_STATS", 800)
_FI_SYNC_BOOST = getattr(dcgm_fields, "DCGM_FI_SYSTEM_GPU_SYNC_BOOST", None)

_RunningProcess = getattr(dcgm_structs, "c_dcgmRunningProcess_t", None) or dcgm_structs.c_dcgmRunningProcess_v1
_AccountingStats = dcgm_structs.c_dcgmDevicePidAccountingStats_v1

_new = object.__new__
_scope = _callback_scope()


def _str_is_blank(s: str) -> bool:
    # dcgmvalue.DCGM_STR_IS_BLANK: "<<<...>>>" marks a blank string
    return s.startswith("<<<") and s.find(">>>") >= 0


def _decode_binary(fieldId: int, address: int) -> Any:
    """``(value, isBlank)`` of the binary value at ``address``."""
    if fieldId == _FI_COMPUTE_PIDS or fieldId == _FI_GRAPHICS_PIDS:
        proc = _RunningProcess.from_buffer_copy(ctypes.string_at(address, ctypes.sizeof(_RunningProcess)))
        return proc, proc.pid >= _INT64_BLANK
    if fieldId == _FI_ACCOUNTING:
        return _AccountingStats.from_buffer_copy(ctypes.string_at(address, ctypes.sizeof(_AccountingStats))), False
    return None, False


def _make_value(ts: int, fieldId: int, fieldType: int, status: int, raw_i64: int, value_address: int,
                keep_sentinels: Optional[bool] = None) -> "DcgmFieldValue":
    """A :class:`DcgmFieldValue` from the header of one value and the address of its value
    union (the general case; :func:`_fill` decodes the common ones inline). A blank's value
    is ``None`` unless ``keep_sentinels`` (default: :func:`dcgm.compat.blank_sentinels`)."""
    ft = _FT_CHR.get(fieldType & 0xFF, "?")
    v = _new(DcgmFieldValue)
    value: Any = None
    blank = False
    if status != 0:
        blank = True
    elif fieldType == _FT_STRING:
        value = ctypes.string_at(value_address).decode("utf-8", "replace")
        blank = _str_is_blank(value)
    elif fieldType == _FT_BINARY:
        value, blank = _decode_binary(fieldId, value_address)
    elif fieldType == _FT_DOUBLE:
        value = ctypes.c_double.from_address(value_address).value
        blank = value >= _FP64_BLANK
    elif fieldType == _FT_INT64 or fieldType == _FT_TIMESTAMP:
        value = raw_i64
        blank = raw_i64 >= _INT64_BLANK
    else:
        blank = True
    if blank and value is not None:
        if keep_sentinels is None:
            keep_sentinels = _blank_sentinels()
        if not keep_sentinels:
            value = None
    v.__dict__ = {"ts": ts, "fieldId": fieldId, "fieldType": ft, "isBlank": blank, "value": value}
    return v


def _from_struct(raw: Any) -> "DcgmFieldValue":
    """A :class:`DcgmFieldValue` from any ``c_dcgmFieldValue_v*`` structure (v1 or v2)."""
    address = ctypes.addressof(raw) + type(raw).value.offset
    return _make_value(raw.ts, raw.fieldId, raw.fieldType, raw.status,
                       ctypes.c_int64.from_address(address).value, address)


class DcgmFieldValue:
    """One field value, Python-friendly: ``ts`` (µs since 1970), ``fieldId``, ``fieldType`` (a
    ``dcgm_fields.DCGM_FT_*`` character), ``isBlank`` (no data, or a blank sentinel) and ``value``
    (``float``, ``int``, ``str``, a structure for the process fields; ``None`` when blank, where
    NVIDIA's keeps the sentinel number: ``DCGM_COMPAT_BLANK_SENTINELS=1`` keeps it too).

    ``rawValue`` is a ``dcgm_structs.c_dcgmFieldValue_v1``; anything else raises ``Exception``
    as NVIDIA's does.
    """

    def __init__(self, rawValue: Any, ts: Any = None, fieldId: Any = None, fieldType: Any = None,
                 isBlank: Any = None, value: Any = None) -> None:
        if rawValue is _DECODED:  # the collections' fast path: the fields, already decoded
            self.ts = ts
            self.fieldId = fieldId
            self.fieldType = fieldType
            self.isBlank = isBlank
            self.value = value
            return
        if not isinstance(rawValue, dcgm_structs.c_dcgmFieldValue_v1):
            raise Exception("Unexpected rawValue type %s" % str(type(rawValue)))
        self.__dict__.update(_from_struct(rawValue).__dict__)

    def __repr__(self) -> str:
        return "DcgmFieldValue(fieldId=%d, ts=%d, value=%r%s)" % (
            self.fieldId, self.ts, self.value, ", blank" if self.isBlank else "")


class DcgmFieldValueTimeSeries:
    """The values of one field of one entity, oldest first (``values``); ``len()`` and
    indexing (``[-1]`` is the latest) as on a list."""

    def __init__(self) -> None:
        self.values: List[DcgmFieldValue] = []

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, key: Any) -> Any:
        return self.values[key]

    def InsertValue(self, value: DcgmFieldValue) -> None:
        """Adds ``value`` in timestamp order (appended when it is the newest)."""
        values = self.values
        if not values or value.ts >= values[-1].ts:
            values.append(value)
            return
        for i, existing in enumerate(values):
            if value.ts < existing.ts:
                values.insert(i, value)
                return
        raise Exception("Unexpected no place to insert ts %d" % value.ts)


def _fill(byField: Dict[int, DcgmFieldValueTimeSeries], address: int, count: int) -> None:
    """Decodes ``count`` consecutive ``c_dcgmFieldValue_v1`` at ``address`` into ``byField``
    (fieldId -> time series), in place: the fast reader behind the collections. Integers and
    doubles, nearly every value, are decoded inline; the rest by :func:`_make_value`. A blank's
    value is ``None`` unless :func:`dcgm.compat.blank_sentinels` (read once per call)."""
    if count <= 0:
        return
    keep = _blank_sentinels()
    buf = (ctypes.c_char * (count * _FV_SIZE)).from_address(address)
    doubles = memoryview(buf).cast("B").cast("d")  # the value of value i is doubles[i * stride + 3]
    stride = _FV_SIZE // 8
    get = byField.get
    FV = DcgmFieldValue
    TS = DcgmFieldValueTimeSeries
    DECODED = _DECODED
    FT_INT64 = _FT_INT64
    FT_DOUBLE = _FT_DOUBLE
    INT64_BLANK = _INT64_BLANK
    FP64_BLANK = _FP64_BLANK
    i = 0
    for _, fid, ft, st, ts, i64 in _ROW.iter_unpack(buf):
        if st == 0 and ft == FT_INT64:
            if i64 < INT64_BLANK:
                v = FV(DECODED, ts, fid, "i", False, i64)
            else:
                v = FV(DECODED, ts, fid, "i", True, i64 if keep else None)
        elif st == 0 and ft == FT_DOUBLE:
            d = doubles[i * stride + 3]
            if d >= FP64_BLANK:  # (a NaN is a reading, as in NVIDIA's)
                v = FV(DECODED, ts, fid, "d", True, d if keep else None)
            else:
                v = FV(DECODED, ts, fid, "d", False, d)
        else:
            v = _make_value(ts, fid, ft, st, i64, address + i * _FV_SIZE + _VALUE_OFFSET, keep)
        i += 1
        series = get(fid)
        if series is None:
            series = byField[fid] = TS()
            series.values.append(v)
        else:
            values = series.values
            if values and ts < values[-1].ts:
                series.InsertValue(v)
            else:
                values.append(v)


def _keep_error(userData: Any, error: BaseException) -> None:
    """An exception raised inside an enumeration callback: kept on one of this module's
    collections, which raises it once the library call returns; raised again otherwise (ctypes
    then prints it, as for NVIDIA's)."""
    if isinstance(userData, (DcgmFieldValueCollection, DcgmFieldValueEntityCollection)):
        userData.__dict__.setdefault("_callbackErrors", []).append(error)
        return
    raise error


# ---- C callbacks. NVIDIA's prototypes, from dcgm_agent when it defines them.
_ENUM_F = getattr(dcgm_agent, "dcgmFieldValueEnumeration_f", None) or ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_uint32, ctypes.POINTER(dcgm_structs.c_dcgmFieldValue_v1), ctypes.c_int32, ctypes.c_void_p)
_ENTITY_ENUM_F = getattr(dcgm_agent, "dcgmFieldValueEntityEnumeration_f", None) or ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(dcgm_structs.c_dcgmFieldValue_v1), ctypes.c_int32, ctypes.c_void_p)


def py_helper_dcgm_field_values_since_callback(gpuId: int, values: Any, numValues: int, userData: Any) -> int:
    """The GPU enumeration callback: hands ``values[0:numValues]`` (structures) to
    ``userData._ProcessValues(gpuId, values)``."""
    userData = ctypes.cast(userData, ctypes.py_object).value
    try:
        with _scope:
            userData._ProcessValues(gpuId, values[0:numValues])
    except BaseException as e:
        _keep_error(userData, e)
    return 0


helper_dcgm_field_values_since_callback = _ENUM_F(py_helper_dcgm_field_values_since_callback)


def py_helper_dcgm_field_values_since_callback_v2(entityGroupId: int, entityId: int, values: Any, numValues: int, userData: Any) -> int:
    """The entity enumeration callback for :class:`DcgmFieldValueCollection`: hands the
    structures to ``userData._ProcessValuesV2(entityGroupId, entityId, values)``."""
    userData = ctypes.cast(userData, ctypes.py_object).value
    try:
        with _scope:
            userData._ProcessValuesV2(entityGroupId, entityId, values[0:numValues])
    except BaseException as e:
        _keep_error(userData, e)
    return 0


helper_dcgm_field_values_since_callback_v2 = _ENTITY_ENUM_F(py_helper_dcgm_field_values_since_callback_v2)


def py_helper_dcgm_field_values_since_entity_callback(entityGroupId: int, entityId: int, values: Any, numValues: int, userData: Any) -> int:
    """The entity enumeration callback for :class:`DcgmFieldValueEntityCollection`: hands the
    structures to ``userData._ProcessValues(entityGroupId, entityId, values)``."""
    userData = ctypes.cast(userData, ctypes.py_object).value
    try:
        with _scope:
            userData._ProcessValues(entityGroupId, entityId, values[0:numValues])
    except BaseException as e:
        _keep_error(userData, e)
    return 0


helper_dcgm_field_values_since_entity_callback = _ENTITY_ENUM_F(py_helper_dcgm_field_values_since_entity_callback)


# The fast callbacks: the values pointer as an address, read in place by _fill.
_FAST_ENUM_F = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p)
_FAST_ENTITY_ENUM_F = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p)


def _userdata(address: int) -> Any:
    return ctypes.cast(address, ctypes.py_object).value


def _fast_gpu_cb(gpuId: int, address: int, count: int, userData: int) -> int:
    coll = _userdata(userData)
    try:
        with _scope:
            _fill_gpu(coll, gpuId, address, count)
    except BaseException as e:  # raised to the caller once the library returns
        coll.__dict__.setdefault("_callbackErrors", []).append(e)
    return 0


def _fill_gpu(coll: Any, gpuId: int, address: int, count: int) -> None:
    coll._numValuesSeen += count
    byGpu = coll.values.get(gpuId)
    if byGpu is None:
        byGpu = coll.values[gpuId] = {}
    _fill(byGpu, address, count)


def _fast_entity_cb(entityGroupId: int, entityId: int, address: int, count: int, userData: int) -> int:
    coll = _userdata(userData)
    try:
        with _scope:
            _fill_entity(coll, entityGroupId, entityId, address, count)
    except BaseException as e:  # raised to the caller once the library returns
        coll.__dict__.setdefault("_callbackErrors", []).append(e)
    return 0


def _fill_entity(coll: Any, entityGroupId: int, entityId: int, address: int, count: int) -> None:
    coll._numValuesSeen += count
    target = coll.__dict__["_fastTarget"]
    byGroup = target.get(entityGroupId)
    if byGroup is None:
        byGroup = target[entityGroupId] = {}
    byEntity = byGroup.get(entityId)
    if byEntity is None:
        byEntity = byGroup[entityId] = {}
    _fill(byEntity, address, count)


_fast_gpu_callback = _FAST_ENUM_F(_fast_gpu_cb)
_fast_entity_callback = _FAST_ENTITY_ENUM_F(_fast_entity_cb)


def _raise_callback_errors(coll: Any) -> None:
    """After a library call with a callback: the releases the callbacks deferred, then the
    first exception raised inside them, if any."""
    _drain()
    errors = coll.__dict__.pop("_callbackErrors", None)
    if errors:
        raise errors[0]


def _field_group_id(fieldGroup: Any) -> Any:
    """The id of a ``DcgmFieldGroup`` (a deleted one raises ``DCGMError_NoData``, as the
    library answers for an unknown field group)."""
    fgid = fieldGroup.fieldGroupId
    if fgid is None:
        raise dcgm_structs.DCGMError(dcgm_structs.DCGM_ST_NO_DATA, "this DcgmFieldGroup was deleted")
    return fgid


class FieldValueEncoder(json.JSONEncoder):
    """JSON for sequences of :class:`DcgmFieldValue` (a time series): a list of
    ``{"Timestamp", "FieldId", "Value"}`` objects, blank values left out."""

    def default(self, obj: Any) -> Any:  # pylint: disable=E0202
        out = []
        for item in obj:
            if isinstance(item, DcgmFieldValue):
                if item.isBlank:
                    continue
                out.append({"Timestamp": item.ts, "FieldId": item.fieldId, "Value": item.value})
            else:
                return json.JSONEncoder.default(self, obj)
        return out


class DcgmFieldValueCollection:
    """Values of a group x field group by GPU: ``values[gpuId][fieldId]`` (a
    :class:`DcgmFieldValueTimeSeries`), and from the ``_v2`` methods
    ``entityValues[entityGroupId][entityId][fieldId]``.

    ``handle`` is the raw DCGM handle (``DcgmHandle.handle``), ``groupId`` a group id.
    """

    def __init__(self, handle: Any, groupId: Any) -> None:
        self.values: Dict[int, Dict[int, DcgmFieldValueTimeSeries]] = {}
        self.entityValues: Dict[int, Dict[int, Dict[int, DcgmFieldValueTimeSeries]]] = {}
        self._handle = handle
        self._groupId = groupId
        self._numValuesSeen = 0
        self._nextSinceTimestamp = 0

    def _ProcessValues(self, gpuId: int, values: List[Any]) -> None:
        """Adds ``values`` (``c_dcgmFieldValue_v1`` structures) of GPU ``gpuId``."""
        self._numValuesSeen += len(values)
        byField = self.values.setdefault(gpuId, {})
        for raw in values:
            value = DcgmFieldValue(raw)
            byField.setdefault(value.fieldId, DcgmFieldValueTimeSeries()).InsertValue(value)

    def _ProcessValuesV2(self, entityGroupId: int, entityId: int, values: List[Any]) -> None:
        """Adds ``values`` (structures) of one entity to ``entityValues``."""
        self._numValuesSeen += len(values)
        byField = self.entityValues.setdefault(entityGroupId, {}).setdefault(entityId, {})
        for raw in values:
            value = DcgmFieldValue(raw)
            byField.setdefault(value.fieldId, DcgmFieldValueTimeSeries()).InsertValue(value)

    def _fast(self, name: str) -> bool:
        return _FAST and getattr(type(self), name) is getattr(DcgmFieldValueCollection, name)

    def _gpu_callback(self) -> Any:
        return _fast_gpu_callback if self._fast("_ProcessValues") else helper_dcgm_field_values_since_callback

    def _entity_callback(self) -> Any:
        if self._fast("_ProcessValuesV2"):
            self.__dict__["_fastTarget"] = self.entityValues
            return _fast_entity_callback
        return helper_dcgm_field_values_since_callback_v2

    def GetLatestValues(self, fieldGroup: Any) -> None:
        """Adds the latest value of each field of ``fieldGroup`` (a ``DcgmFieldGroup``; watch it
        first with ``DcgmGroup.samples.WatchFields``) for each GPU of the group to ``values``."""
        ret = dcgm_agent.dcgmGetLatestValues(self._handle, self._groupId, _field_group_id(fieldGroup), self._gpu_callback(), self)
        _raise_callback_errors(self)
        dcgm_structs._dcgmCheckReturn(ret)

    def GetAllSinceLastCall(self, fieldGroup: Any) -> int:
        """Adds every value recorded since the previous call (all cached values on the first) to
        ``values``; answers how many were added."""
        before = self._numValuesSeen
        self._nextSinceTimestamp = dcgm_agent.dcgmGetValuesSince(
            self._handle, self._groupId, _field_group_id(fieldGroup), self._nextSinceTimestamp, self._gpu_callback(), self)
        _raise_callback_errors(self)
        return self._numValuesSeen - before

    def GetLatestValues_v2(self, fieldGroup: Any) -> None:
        """As :meth:`GetLatestValues`, for every entity of the group, into ``entityValues``."""
        ret = dcgm_agent.dcgmGetLatestValues_v2(self._handle, self._groupId, _field_group_id(fieldGroup), self._entity_callback(), self)
        _raise_callback_errors(self)
        dcgm_structs._dcgmCheckReturn(ret)

    def GetAllSinceLastCall_v2(self, fieldGroup: Any) -> int:
        """As :meth:`GetAllSinceLastCall`, for every entity of the group, into ``entityValues``."""
        before = self._numValuesSeen
        self._nextSinceTimestamp = dcgm_agent.dcgmGetValuesSince_v2(
            self._handle, self._groupId, _field_group_id(fieldGroup), self._nextSinceTimestamp, self._entity_callback(), self)
        _raise_callback_errors(self)
        return self._numValuesSeen - before

    def EmptyValues(self) -> None:
        """Forgets the values collected so far (``values``), so that it stops growing."""
        self.values = {}
        self._numValuesSeen = 0


class _Watching:
    """What both watchers add to their collection: the watch of ``fieldGroup`` on ``groupId``
    (``updateFreq`` µs, ``maxKeepAge`` s, ``maxKeepSamples``), one forced update and a first
    read from ``startTimestamp`` (0: everything cached); :meth:`GetAllSinceLastCall` takes no
    field group and updates first in ``DCGM_OPERATION_MODE_MANUAL``."""

    def __init__(self, handle: Any, groupId: Any, fieldGroup: Any, operationMode: int, updateFreq: int,
                 maxKeepAge: float, maxKeepSamples: int, startTimestamp: int) -> None:
        self._fieldGroup = fieldGroup
        self._operationMode = operationMode
        self._updateFreq = updateFreq
        self._maxKeepAge = maxKeepAge
        self._maxKeepSamples = maxKeepSamples
        super().__init__(handle, groupId)  # type: ignore[call-arg]  # the collection's
        self._nextSinceTimestamp = startTimestamp if startTimestamp > 0 else 0
        self._numValuesSeen = 0
        self._WatchFieldGroup()

    def _WatchFieldGroup(self) -> None:
        ret = dcgm_agent.dcgmWatchFields(self._handle, self._groupId, _field_group_id(self._fieldGroup),  # type: ignore[attr-defined]
                                         self._updateFreq, self._maxKeepAge, self._maxKeepSamples)
        dcgm_structs._dcgmCheckReturn(ret)
        ret = dcgm_agent.dcgmUpdateAllFields(self._handle, 1)  # type: ignore[attr-defined]
        dcgm_structs._dcgmCheckReturn(ret)
        self.GetAllSinceLastCall()

    def GetAllSinceLastCall(self) -> int:
        if self._operationMode == dcgm_structs.DCGM_OPERATION_MODE_MANUAL:
            dcgm_structs._dcgmCheckReturn(dcgm_agent.dcgmUpdateAllFields(self._handle, 1))  # type: ignore[attr-defined]
        return super().GetAllSinceLastCall(self._fieldGroup)  # type: ignore[misc,no-any-return]


class DcgmFieldGroupWatcher(_Watching, DcgmFieldValueCollection):  # type: ignore[misc]  # NVIDIA's GetAllSinceLastCall() takes no field group here
    """A :class:`DcgmFieldValueCollection` that watches its field group itself (see
    :class:`_Watching` for the arguments)."""


class DcgmFieldValueEntityCollection:
    """Values of a group x field group by entity: ``values[entityGroupId][entityId][fieldId]``
    (a :class:`DcgmFieldValueTimeSeries`). ``handle`` is the raw DCGM handle."""

    def __init__(self, handle: Any, groupId: Any) -> None:
        self.values: Dict[int, Dict[int, Dict[int, DcgmFieldValueTimeSeries]]] = {}
        self._handle = handle
        self._groupId = groupId
        self._numValuesSeen = 0
        self._nextSinceTimestamp = 0

    def _ProcessValues(self, entityGroupId: int, entityId: int, values: List[Any]) -> None:
        """Adds ``values`` (``c_dcgmFieldValue_v1`` structures) of one entity."""
        self._numValuesSeen += len(values)
        byField = self.values.setdefault(entityGroupId, {}).setdefault(entityId, {})
        for raw in values:
            value = DcgmFieldValue(raw)
            byField.setdefault(value.fieldId, DcgmFieldValueTimeSeries()).InsertValue(value)

    def _callback(self) -> Any:
        if _FAST and type(self)._ProcessValues is DcgmFieldValueEntityCollection._ProcessValues:
            self.__dict__["_fastTarget"] = self.values
            return _fast_entity_callback
        return helper_dcgm_field_values_since_entity_callback

    def GetLatestValues(self, fieldGroup: Any) -> None:
        """Adds the latest value of each field of ``fieldGroup`` for each entity of the group
        (watch it first with ``DcgmGroup.samples.WatchFields``)."""
        ret = dcgm_agent.dcgmGetLatestValues_v2(self._handle, self._groupId, _field_group_id(fieldGroup), self._callback(), self)
        _raise_callback_errors(self)
        dcgm_structs._dcgmCheckReturn(ret)

    def GetAllSinceLastCall(self, fieldGroup: Any) -> int:
        """Adds every value recorded since the previous call; answers how many."""
        before = self._numValuesSeen
        self._nextSinceTimestamp = dcgm_agent.dcgmGetValuesSince_v2(
            self._handle, self._groupId, _field_group_id(fieldGroup), self._nextSinceTimestamp, self._callback(), self)
        _raise_callback_errors(self)
        return self._numValuesSeen - before

    def EmptyValues(self) -> None:
        """Forgets the values collected so far."""
        self.values = {}
        self._numValuesSeen = 0


class DcgmFieldGroupEntityWatcher(_Watching, DcgmFieldValueEntityCollection):  # type: ignore[misc]  # as above
    """The entity form of :class:`DcgmFieldGroupWatcher` (same arguments)."""


def main() -> None:
    """Demonstration (as NVIDIA's module's): watches the SM and memory clocks of every GPU on an
    embedded host engine and prints how many new values arrive each second, until interrupted."""
    from types import SimpleNamespace

    from dcgm.compat.DcgmFieldGroup import DcgmFieldGroup

    mode = dcgm_structs.DCGM_OPERATION_MODE_AUTO
    dcgm_structs._dcgmInit()
    dcgm_agent.dcgmInit()
    handle = dcgm_agent.dcgmStartEmbedded(mode)
    # a DcgmFieldGroup needs only the raw handle of its handle object (NVIDIA's demonstration
    # adopts it in a pydcgm.DcgmHandle, which sits above this module)
    fieldGroup = DcgmFieldGroup(SimpleNamespace(handle=handle), "my_field_group",
                                [dcgm_fields.DCGM_FI_DEV_SM_CLOCK, dcgm_fields.DCGM_FI_DEV_MEM_CLOCK])
    gpus = DcgmFieldGroupWatcher(handle, dcgm_structs.DCGM_GROUP_ALL_GPUS, fieldGroup, mode, 1000000, 3600.0, 0, 0)
    entities = DcgmFieldGroupEntityWatcher(handle, dcgm_structs.DCGM_GROUP_ALL_GPUS, fieldGroup, mode, 1000000, 3600.0, 0, 0)
    while True:
        n1 = gpus.GetAllSinceLastCall()
        n2 = entities.GetAllSinceLastCall()
        print("Got %d and %d new field value updates" % (n1, n2))
        for gpuId, byField in gpus.values.items():
            print("gpuId %d" % gpuId)
            for fieldId, series in byField.items():
                print("    fieldId %d: %d values. latest timestamp %d" % (fieldId, len(series), series[-1].ts))
        for groupId, byEntity in entities.values.items():
            print("entityGroupId %d" % groupId)
            for entityId, byField in byEntity.items():
                print("    entityId %d" % entityId)
                for fieldId, series in byField.items():
                    print("        fieldId %d: %d values. latest timestamp %d" % (fieldId, len(series), series[-1].ts))
        time.sleep(1.0)


if __name__ == "__main__":
    main()
