"""``DcgmReader`` with the constructor, methods and results of NVIDIA's
``testing/python3/DcgmReader.py``, built on :class:`dcgm.Reader`.

Differences from NVIDIA's class, on purpose:

* ``hostname=None`` (the default) uses the local nv-hostengine if one answers, otherwise the
  engine embedded in this process; a host name connects to that nv-hostengine only.
* Keyword-only ``simulate=True`` reads from the simulator shipped in this package
  (``libraryPath=`` loads a given libdcgm file); such values are labelled
  (``reader.IsSimulated()``).
* The first ``Get...SinceLastCall`` call returns the samples taken so far instead of ``{}``.
  Each of ``Process`` and the two since-last-call families keeps its own position, as NVIDIA's
  does, and the entity family returns every sample (NVIDIA's returns only the last one).
* A value with no data is never a sentinel number: samples have ``value None`` and ``isBlank``
  True, and the plain ``{key: value}`` dicts (when ``ignoreBlank=False``) hold a
  :class:`dcgm.Blank` member.
* Binary values are decoded as NVIDIA's ``DcgmFieldValue`` decodes them: the PID lists
  (``DCGM_FI_DEV_COMPUTE_PIDS``, ``DCGM_FI_DEV_GRAPHICS_PIDS``) into :class:`dcgm.RunningProcess`
  (``.pid``, ``.memoryUsed``), the accounting data into :class:`dcgm.AccountingStats`
  (``.pid``, ``.gpuUtilization``, ``.maxMemoryUsage``, ...); other blobs stay ``bytes``.
* ``SetHandle`` is not provided.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, TypeVar, Union

from dcgm import _native, fields as _fields
from dcgm._native import FieldMeta, FieldValue
from dcgm.structs import DCGM_ST_CONNECTION_NOT_VALID, dcgmExceptionClass

#: The fields read when ``fieldIds`` is not given (the same 30, in the same order, as NVIDIA's).
defaultFieldIds: List[int] = list(_native.DEFAULT_FIELD_IDS)

_GROUP_TITLES = {
    _fields.DCGM_FE_GPU: "GPU",
    _fields.DCGM_FE_VGPU: "VGPU",
    _fields.DCGM_FE_SWITCH: "NVSWITCH",
    _fields.DCGM_FE_GPU_I: "GPU INSTANCE",
    _fields.DCGM_FE_GPU_CI: "COMPUTE INSTANCE",
    _fields.DCGM_FE_LINK: "LINK",
}


def entity_group_id_to_string(entityGroupId: int) -> str:
    """The label NVIDIA's DcgmReader prints for an entity group ('' for CPUs and ConnectX)."""
    return _GROUP_TITLES.get(entityGroupId, "")


_ConnectionLost = dcgmExceptionClass(DCGM_ST_CONNECTION_NOT_VALID)
_Self = TypeVar("_Self", bound="DcgmReader")
#: A field: an id (as NVIDIA's DcgmReader takes), or a name, pre-4.6 alias or tag.
_Field = Union[int, str]

# raw since-last-call result: {(entity_group, entity_id): {field_id: [FieldValue]}}
_Raw = Dict[Tuple[int, int], Dict[int, List[FieldValue]]]


def _ignored_id(f: _Field) -> Optional[int]:
    meta = _fields.field_info(f)
    if meta is not None:
        return meta.field_id
    return f if isinstance(f, int) else None


def _entity_pair(e: Any) -> Tuple[int, int]:
    if isinstance(e, (tuple, list)) and len(e) == 2:
        return (int(e[0]), int(e[1]))
    if hasattr(e, "entityGroupId") and hasattr(e, "entityId"):
        return (int(e.entityGroupId), int(e.entityId))
    if hasattr(e, "entity_group") and hasattr(e, "entity_id"):
        return (int(e.entity_group), int(e.entity_id))
    raise TypeError("an entity is an (entityGroupId, entityId) pair or an object with those attributes, not %r" % (e,))


class FieldDict(Dict[str, FieldValue]):
    """One GPU's latest values keyed by field name (``"DCGM_FI_DEV_GPU_UTIL_RATIO"``), as
    :meth:`DcgmReader.GetLatestGpuValuesAsFieldDict` returns them. A lookup also accepts the
    field's pre-4.6 alias (``"DCGM_FI_DEV_GPU_UTIL"``), its tag or its id; a name DCGM does
    not have is a ``KeyError`` that says so."""

    def _canonical(self, key: Any) -> Any:
        if isinstance(key, (int, str)) and not isinstance(key, bool):
            meta = _fields.field_info(key)
            if meta is not None:
                return meta.name
        return None

    def __missing__(self, key: Any) -> FieldValue:
        name = self._canonical(key)
        if name is not None and name != key and dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        if name is None:
            raise KeyError("%r: DCGM has no such field (use a DCGM_FI_* name, a tag or an id)" % (key,))
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            return True
        name = self._canonical(key)
        return name is not None and dict.__contains__(self, name)

    def get(self, key: Any, default: Any = None) -> Any:  # type: ignore[override]
        try:
            return self[key]
        except KeyError:
            return default


class DcgmReader:
    """Reads fields of every GPU (or of given entities) from DCGM.

    Subclass it and override :meth:`CustomFieldHandler` (or :meth:`CustomDataHandler`), then
    call :meth:`Process` periodically; or call the ``Get...`` methods for dicts.
    """

    def __init__(
        self,
        hostname: Optional[str] = None,
        fieldIds: Optional[Iterable[_Field]] = None,
        updateFrequency: int = 10000000,
        maxKeepAge: float = 3600.0,
        ignoreList: Optional[Iterable[_Field]] = None,
        fieldGroupName: str = "dcgm_fieldgroupData",
        gpuIds: Optional[Iterable[int]] = None,
        entities: Optional[Iterable[Any]] = None,
        fieldIntervalMap: Optional[Mapping[int, Iterable[_Field]]] = None,
        ignoreBlank: bool = True,
        *,
        simulate: bool = False,
        libraryPath: Optional[str] = None,
    ) -> None:
        self.m_dcgmHostName = hostname
        self.m_updateFreq = updateFrequency
        self.m_fieldGroupName = fieldGroupName
        self.m_publishFields: Dict[int, List[_Field]] = {}
        if fieldIntervalMap is not None:
            self.m_publishFields = {int(k): list(v) for k, v in fieldIntervalMap.items()}
        else:
            self.m_publishFields[updateFrequency] = list(fieldIds or defaultFieldIds)
        self.m_ignoreBlank = ignoreBlank
        self.m_requestedGpuIds: Optional[List[int]] = list(gpuIds) if gpuIds else None
        self.m_requestedEntities: Optional[List[Tuple[int, int]]] = (
            [_entity_pair(e) for e in entities] if entities else None
        )
        self.m_dcgmIgnoreFields: List[int] = [i for i in map(_ignored_id, ignoreList or []) if i is not None]
        self.m_maxKeepAge = maxKeepAge
        self.m_simulate = simulate
        self.m_libraryPath = libraryPath
        self.m_reader: Optional[_native.Reader] = None
        self.m_closeHandle = False
        self.m_gpuIdToBusId: Dict[int, str] = {}
        self.m_gpuIdToUUId: Dict[int, str] = {}
        self.m_fieldIdToInfo: Dict[int, FieldMeta] = {}
        self.m_lock = threading.RLock()
        self.m_debug = False
        # Each consumer of since-last-call data keeps its own position: samples one consumer
        # fetched are kept for the others that have started reading, until maxKeepAge.
        self._pending: Dict[str, Optional[List[Tuple[float, _Raw]]]] = {
            "process": None,
            "gpu": None,
            "entity": None,
        }

    # --- lifecycle ---

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, type: Any, value: Any, traceback: Any) -> None:
        self.Shutdown()

    def Init(self, libpath: Optional[str] = None) -> None:
        """Connects now (otherwise the first ``Process``/``Get...`` call does). ``libpath``
        loads that libdcgm file."""
        with self.m_lock:
            try:
                self.InitWrapped(path=libpath)
            except _ConnectionLost:
                self.LogError("Can't connect to nv-hostengine. Is it down?")
                self.SetDisconnected()

    def InitWrapped(self, path: Optional[str] = None) -> None:
        if path is not None:
            self.m_libraryPath = path
        self.Reconnect()

    def Reconnect(self) -> None:
        """Connects if not connected, and sets up the group, field groups and watches."""
        with self.m_lock:
            if self.m_reader is not None:
                return
            self.LogDebug("Connection handle is None. Trying to reconnect")
            entities: Optional[List[Tuple[int, int]]] = None
            if self.m_requestedEntities:
                gpus = [(_fields.DCGM_FE_GPU, g) for g in (self.m_requestedGpuIds or [])]
                entities = gpus + [e for e in self.m_requestedEntities if e not in gpus]
            reader = _native.Reader(
                None,
                field_intervals={us / 1e6: fids for us, fids in self.m_publishFields.items()},
                max_keep_age=float(self.m_maxKeepAge),
                gpu_ids=None if entities else self.m_requestedGpuIds,
                entities=entities,
                ignore_blank=False,
                address=self.m_dcgmHostName,
                simulate=self.m_simulate,
                library_path=self.m_libraryPath,
                field_group_name=self.m_fieldGroupName,
            )
            reader.connect()
            self.m_reader = reader
            self.m_closeHandle = True
            self.LogDebug("Connected (%s)" % reader.mode)
            self.InitializeFromHandle()

    def InitializeFromHandle(self) -> None:
        """Fills the GPU maps and the field metadata of a connected reader."""
        assert self.m_reader is not None
        self.m_gpuIdToBusId = {}
        self.m_gpuIdToUUId = {}
        for g in self.m_reader.gpus():
            self.m_gpuIdToBusId[g["gpu"]] = g["pci_bus_id"]
            self.m_gpuIdToUUId[g["gpu"]] = g["uuid"]
        self.m_fieldIdToInfo = {}
        for fids in self.m_publishFields.values():
            for f in fids:
                meta = _fields.field_info(f)
                if meta is not None:
                    self.m_fieldIdToInfo[meta.field_id] = meta

    def SetupGpuIdBusMappings(self) -> None:
        self.InitializeFromHandle()

    def SetupGpuIdUUIdMappings(self) -> None:
        self.InitializeFromHandle()

    def SetDisconnected(self) -> None:
        """Drops the connection and what the reader created in DCGM; the next call reconnects."""
        with self.m_lock:
            if self.m_reader is not None:
                self.m_reader.close()
                self.m_reader = None
            for k in self._pending:
                self._pending[k] = None

    def Shutdown(self) -> None:
        """Releases the connection (if this reader opened it)."""
        with self.m_lock:
            if self.m_closeHandle:
                self.SetDisconnected()

    def IsSimulated(self) -> Optional[bool]:
        """Whether the values come from the dcgm-sim simulator (``None`` before connecting)."""
        with self.m_lock:
            return None if self.m_reader is None else self.m_reader.is_simulated

    # --- logging ---

    def AddDebugOutput(self) -> None:
        self.m_debug = True

    def LogInfo(self, msg: str) -> None:
        logging.info(msg)

    def LogDebug(self, msg: str) -> None:
        logging.debug(msg)

    def LogError(self, msg: str) -> None:
        logging.error(msg)

    # --- handlers to override ---

    def CustomFieldHandler(self, gpuId: int, fieldId: int, fieldTag: str, val: FieldValue) -> None:
        """Called by the default :meth:`CustomDataHandler` for each field; prints by default."""
        print("GPU %s field %s=%s" % (gpuId, fieldTag, str(val.value)))

    def CustomFieldHandler_v2(
        self, entityGroupId: int, entityId: int, fieldId: int, fieldTag: str, val: FieldValue
    ) -> None:
        """Called by the default :meth:`CustomDataHandler_v2` for each field; prints by default."""
        print("%s %s field %s=%s" % (entity_group_id_to_string(entityGroupId), entityId, fieldTag, str(val.value)))

    def _pick(self, series: List[FieldValue]) -> Optional[FieldValue]:
        if not self.m_ignoreBlank:
            return series[-1] if series else None
        for v in reversed(series):
            if not v.isBlank:
                return v
        return None

    def _tag(self, fieldId: int) -> str:
        meta = self.m_fieldIdToInfo.get(fieldId) or _fields.DcgmFieldGetById(fieldId)
        return meta.tag if meta is not None else str(fieldId)

    def CustomDataHandler(self, fvs: Dict[int, Dict[int, List[FieldValue]]]) -> None:
        """Gets ``{gpuId: {fieldId: [samples, oldest first]}}`` from :meth:`Process`. The default
        calls :meth:`CustomFieldHandler` with the last sample of each field that is not in the
        ignore list (the last non-blank one when ``ignoreBlank``)."""
        for gpuId, gpuFv in fvs.items():
            for fieldId, series in gpuFv.items():
                if fieldId in self.m_dcgmIgnoreFields:
                    continue
                val = self._pick(series)
                if val is not None:
                    self.CustomFieldHandler(gpuId, fieldId, self._tag(fieldId), val)

    def CustomDataHandler_v2(self, fvs: Dict[int, Dict[int, Dict[int, List[FieldValue]]]]) -> None:
        """Like :meth:`CustomDataHandler` when the reader has entities:
        ``{entityGroupId: {entityId: {fieldId: [samples]}}}``."""
        for entityGroupId, group in fvs.items():
            for entityId, entityFv in group.items():
                for fieldId, series in entityFv.items():
                    if fieldId in self.m_dcgmIgnoreFields:
                        continue
                    val = self._pick(series)
                    if val is not None:
                        self.CustomFieldHandler_v2(entityGroupId, entityId, fieldId, self._tag(fieldId), val)

    # --- reads ---

    def _since(self, consumer: str) -> _Raw:
        """Samples since ``consumer``'s previous call."""
        assert self.m_reader is not None
        fresh: _Raw = self.m_reader.since_last_call()
        now = time.monotonic()
        horizon = now - float(self.m_maxKeepAge)
        for name, pending in self._pending.items():
            if name != consumer and pending is not None:
                pending.append((now, fresh))
                while pending and pending[0][0] < horizon:
                    pending.pop(0)
        chunks = [raw for _, raw in (self._pending[consumer] or [])] + [fresh]
        self._pending[consumer] = []
        if len(chunks) == 1:
            return fresh
        merged: _Raw = {}
        for raw in chunks:
            for entity, fvs in raw.items():
                target = merged.setdefault(entity, {})
                for fid, series in fvs.items():
                    target.setdefault(fid, []).extend(series)
        return merged

    def Process(self) -> None:
        """Reads every sample since the previous call and hands them to
        :meth:`CustomDataHandler` (or :meth:`CustomDataHandler_v2` when the reader has
        entities)."""
        with self.m_lock:
            try:
                self.Reconnect()
                raw = self._since("process")
                if not self.m_requestedEntities:
                    gpus: Dict[int, Dict[int, List[FieldValue]]] = {}
                    for (eg, eid), fvs in raw.items():
                        if eg == _fields.DCGM_FE_GPU:
                            gpus[eid] = fvs
                    self.CustomDataHandler(gpus)
                else:
                    ents: Dict[int, Dict[int, Dict[int, List[FieldValue]]]] = {}
                    for (eg, eid), fvs in raw.items():
                        ents.setdefault(eg, {})[eid] = fvs
                    self.CustomDataHandler_v2(ents)
            except _ConnectionLost:
                self.LogError("Can't connect to nv-hostengine. Is it down?")
                self.SetDisconnected()

    def _value(self, v: FieldValue) -> Any:
        return v.blank if v.isBlank else v.value

    def _key(self, fieldId: int, mapById: bool) -> Any:
        return fieldId if mapById else self._tag(fieldId)

    def GetLatestGpuValuesAsDict(self, mapById: bool) -> Dict[int, Dict[Any, Any]]:
        """``{gpuId: {fieldId or tag: value}}``, built by the extension straight from the read."""
        out: Dict[int, Dict[Any, Any]] = {}
        with self.m_lock:
            try:
                self.Reconnect()
                assert self.m_reader is not None
                out = self.m_reader.latest_gpu_dict(mapById, self.m_ignoreBlank)
            except _ConnectionLost:
                self.LogError("Can't connect to nv-hostengine. Please verify that it is running.")
                self.SetDisconnected()
        return out

    def GetLatestEntityValuesAsDict(self, mapById: bool) -> Dict[int, Dict[int, Dict[Any, Any]]]:
        """``{entityGroupId: {entityId: {fieldId or tag: value}}}``."""
        out: Dict[int, Dict[int, Dict[Any, Any]]] = {}
        with self.m_lock:
            try:
                self.Reconnect()
                assert self.m_reader is not None
                for (eg, eid), fvs in self.m_reader.latest().items():
                    d = out.setdefault(eg, {}).setdefault(eid, {})
                    for fid, v in fvs.items():
                        if v.isBlank and self.m_ignoreBlank:
                            continue
                        d[self._key(fid, mapById)] = self._value(v)
            except _ConnectionLost:
                self.LogError("Can't connect to nv-hostengine. Please verify that it is running.")
                self.SetDisconnected()
        return out

    def GetAllGpuValuesAsDictSinceLastCall(self, mapById: bool) -> Dict[int, Dict[Any, List[FieldValue]]]:
        """``{gpuId: {fieldId or tag: [samples, oldest first]}}`` since the previous call."""
        out: Dict[int, Dict[Any, List[FieldValue]]] = {}
        with self.m_lock:
            try:
                self.Reconnect()
                for (eg, eid), fvs in self._since("gpu").items():
                    if eg != _fields.DCGM_FE_GPU:
                        continue
                    d = out.setdefault(eid, {})
                    for fid, series in fvs.items():
                        kept = [v for v in series if not (v.isBlank and self.m_ignoreBlank)]
                        if kept:
                            d.setdefault(self._key(fid, mapById), []).extend(kept)
            except _ConnectionLost:
                self.LogError("Can't connect to nv-hostengine. Please verify that it is running.")
                self.SetDisconnected()
        return out

    def GetAllEntityValuesAsDictSinceLastCall(
        self, mapById: bool
    ) -> Dict[int, Dict[int, Dict[Any, List[FieldValue]]]]:
        """``{entityGroupId: {entityId: {fieldId or tag: [samples]}}}`` since the previous call."""
        out: Dict[int, Dict[int, Dict[Any, List[FieldValue]]]] = {}
        with self.m_lock:
            try:
                self.Reconnect()
                for (eg, eid), fvs in self._since("entity").items():
                    d = out.setdefault(eg, {}).setdefault(eid, {})
                    for fid, series in fvs.items():
                        kept = [v for v in series if not (v.isBlank and self.m_ignoreBlank)]
                        if kept:
                            d.setdefault(self._key(fid, mapById), []).extend(kept)
            except _ConnectionLost:
                self.LogError("Can't connect to nv-hostengine. Please verify that it is running.")
                self.SetDisconnected()
        return out

    def GetLatestGpuValuesAsFieldIdDict(self) -> Dict[int, Dict[Any, Any]]:
        return self.GetLatestGpuValuesAsDict(True)

    def GetLatestGpuValuesAsFieldDict(self) -> Dict[int, FieldDict]:
        """``{gpuId: {field name: value}}``: each value an object with ``.value`` (``None``
        when blank), ``.ts``, ``.isBlank`` and ``.fieldId``, keyed by the field's
        ``DCGM_FI_*`` name; a lookup also takes the pre-4.6 alias, the tag or the id (see
        :class:`FieldDict`). Blank values are left out when the reader ignores blanks. Not in
        NVIDIA's DcgmReader: a convenience of this package."""
        out: Dict[int, FieldDict] = {}
        with self.m_lock:
            try:
                self.Reconnect()
                assert self.m_reader is not None
                for (eg, eid), fvs in self.m_reader.latest().items():
                    if eg != _fields.DCGM_FE_GPU:
                        continue
                    d = out.setdefault(eid, FieldDict())
                    for v in fvs.values():
                        if v.isBlank and self.m_ignoreBlank:
                            continue
                        name: Optional[str] = getattr(v, "field_name", None)
                        if name is None:
                            meta = _fields.DcgmFieldGetById(v.fieldId)
                            name = meta.name if meta is not None else str(v.fieldId)
                        dict.__setitem__(d, str(name), v)
            except _ConnectionLost:
                self.LogError("Can't connect to nv-hostengine. Please verify that it is running.")
                self.SetDisconnected()
        return out

    def GetLatestGpuValuesAsFieldNameDict(self) -> Dict[int, Dict[Any, Any]]:
        return self.GetLatestGpuValuesAsDict(False)

    def GetLatestEntityValuesAsFieldIdDict(self) -> Dict[int, Dict[int, Dict[Any, Any]]]:
        return self.GetLatestEntityValuesAsDict(True)

    def GetLatestEntityValuesAsFieldNameDict(self) -> Dict[int, Dict[int, Dict[Any, Any]]]:
        return self.GetLatestEntityValuesAsDict(False)

    def GetAllGpuValuesAsFieldIdDictSinceLastCall(self) -> Dict[int, Dict[Any, List[FieldValue]]]:
        return self.GetAllGpuValuesAsDictSinceLastCall(True)

    def GetAllGpuValuesAsFieldNameDictSinceLastCall(self) -> Dict[int, Dict[Any, List[FieldValue]]]:
        return self.GetAllGpuValuesAsDictSinceLastCall(False)

    def GetAllEntityValuesAsFieldIdDictSinceLastCall(self) -> Dict[int, Dict[int, Dict[Any, List[FieldValue]]]]:
        return self.GetAllEntityValuesAsDictSinceLastCall(True)

    def GetAllEntityValuesAsFieldNameDictSinceLastCall(self) -> Dict[int, Dict[int, Dict[Any, List[FieldValue]]]]:
        return self.GetAllEntityValuesAsDictSinceLastCall(False)


