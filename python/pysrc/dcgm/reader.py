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

This is also the implementation of NVIDIA's reader, :class:`dcgm.compat.DcgmReader.DcgmReader`:
it subclasses :class:`DcgmReader` and sets NVIDIA's behaviour through the class's parameters
(``_firstSinceLastCallEmpty``, ``_firstProcessLatest``, ``_noHostnameIsEmbedded``,
``_handleLastNonBlank``, the logged messages) and the hooks that shape samples and blanks
(``_latestSamples``, ``_samplesSince``, ``_samplesOf``, ``_blankValue``, ``_blankInDict``,
``_inFieldOrder``), not through copies of the ``Get...`` methods.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple, TypeVar, Union, cast

from dcgm import _native, fields as _fields
from dcgm._enums import Blank
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
_V = TypeVar("_V")
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

    This class is also the one implementation of NVIDIA's reader,
    :class:`dcgm.compat.DcgmReader.DcgmReader`: what differs between the two is set by the
    class attributes below (and by the few hooks after them), not by copies of the methods.
    """

    # --- what differs from NVIDIA's reader (dcgm.compat.DcgmReader sets NVIDIA's values) ---

    #: ``hostname=None`` starts the engine embedded in this process (NVIDIA's), rather than
    #: "the local nv-hostengine if one answers, otherwise the embedded engine" (this package).
    _noHostnameIsEmbedded = False
    #: The first call of each ``Get...SinceLastCall`` family returns ``{}`` and only sets the
    #: starting point (NVIDIA's), rather than the samples taken so far (this package).
    _firstSinceLastCallEmpty = False
    #: ``Process``'s first call hands the latest values (NVIDIA's), rather than the samples
    #: taken so far (this package).
    _firstProcessLatest = False
    #: With ``ignoreBlank``, the default handlers get a field's last non-blank sample (this
    #: package), rather than its last sample, skipped when blank (NVIDIA's).
    _handleLastNonBlank = True
    #: What a ``Get...`` call logs when the connection is lost (NVIDIA's words differ).
    _readErrorMessage = "Can't connect to nv-hostengine. Please verify that it is running."
    #: What ``Reconnect`` logs (at debug level) once connected; ``{mode}`` is the reader's mode.
    _connectedMessage = "Connected ({mode})"

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
        self._processCalls = 0
        # the since-last-call families ("gpu", "entity") called since connecting
        self._sinceStarted: Set[str] = set()
        # field id -> (its m_fieldIdToInfo entry, that entry's tag)
        self._tags: Dict[Any, Tuple[Any, str]] = {}

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

    def _libraryChoice(self) -> Tuple[Optional[str], bool]:
        """The library the reader opens: (libdcgm path or ``None``, whether to simulate)."""
        return self.m_libraryPath, self.m_simulate

    def _checkFields(self) -> None:
        """Raises before connecting where the field list cannot be read (a hook: nothing here;
        the native reader raises ``DCGMError_UnknownField``)."""

    def Reconnect(self) -> None:
        """Connects if not connected, and sets up the group, field groups and watches."""
        with self.m_lock:
            if self.m_reader is not None:
                return
            self.LogDebug("Connection handle is None. Trying to reconnect")
            path, simulate = self._libraryChoice()
            self._checkFields()
            entities: Optional[List[Tuple[int, int]]] = None
            if self.m_requestedEntities:
                gpus = [(_fields.DCGM_FE_GPU, g) for g in (self.m_requestedGpuIds or [])]
                entities = gpus + [e for e in self.m_requestedEntities if e not in gpus]
            reader = _native.Reader(
                None,
                field_intervals={int(us) / 1e6: list(fids) for us, fids in self.m_publishFields.items()},
                max_keep_age=float(self.m_maxKeepAge),
                gpu_ids=None if entities else self.m_requestedGpuIds,
                entities=entities,
                ignore_blank=False,
                address=self.m_dcgmHostName,
                embedded=self._noHostnameIsEmbedded and self.m_dcgmHostName is None,
                simulate=simulate,
                library_path=path,
                field_group_name=self.m_fieldGroupName,
            )
            try:
                reader.connect()
            except BaseException:
                reader.close()
                raise
            self.m_reader = reader
            self.m_closeHandle = True
            self.LogDebug(self._connectedMessage.format(mode=reader.mode))
            self.InitializeFromHandle()

    def InitializeFromHandle(self) -> None:
        """Fills the GPU maps and the field metadata of a connected reader."""
        self.SetupGpuIdBusMappings()
        self.SetupGpuIdUUIdMappings()
        self.GetFieldMetadata()
        self.AddFieldWatches()

    def SetupGpuIdBusMappings(self) -> None:
        """Fills ``m_gpuIdToBusId`` (GPU id -> PCI bus id) for the reader's GPUs."""
        assert self.m_reader is not None
        self.m_gpuIdToBusId = {g["gpu"]: g["pci_bus_id"] for g in self.m_reader.gpus()}

    def SetupGpuIdUUIdMappings(self) -> None:
        """Fills ``m_gpuIdToUUId`` (GPU id -> UUID) for the reader's GPUs."""
        assert self.m_reader is not None
        for g in self.m_reader.gpus():
            self.m_gpuIdToUUId[g["gpu"]] = g["uuid"]

    def GetFieldMetadata(self) -> None:
        """Fills ``m_fieldIdToInfo`` (field id -> :class:`dcgm.FieldMeta`, with ``.tag``)."""
        self.m_fieldIdToInfo = {}
        for fids in self.m_publishFields.values():
            for f in fids:
                meta = _fields.field_info(f)
                if meta is not None:
                    self.m_fieldIdToInfo[meta.field_id] = meta

    def AddFieldWatches(self) -> None:
        """The native reader set the watches and took the first samples when it connected."""

    def SetDisconnected(self) -> None:
        """Drops the connection and what the reader created in DCGM; the next call reconnects."""
        with self.m_lock:
            if self.m_reader is not None:
                self.m_reader.close()
                self.m_reader = None
            for k in self._pending:
                self._pending[k] = None
            self._processCalls = 0
            self._sinceStarted.clear()

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

    # --- how values and samples are shaped (hooks: NVIDIA's reader gives its own) ---

    def _blankValue(self, v: Any) -> Any:
        """A blank sample's value in the plain ``{key: value}`` dicts (``ignoreBlank=False``):
        its :class:`dcgm.Blank` member."""
        return v.blank

    def _blankInDict(self, key: Any, kind: Blank) -> Any:
        """What a blank of the native ``latest_gpu_dict`` (``kind``, under field id or tag
        ``key``) is in the returned dict: the :class:`dcgm.Blank` member itself."""
        return kind

    def _inFieldOrder(self, fvs: Dict[int, _V]) -> Iterable[Tuple[int, _V]]:
        """One entity's fields, in the order the dicts list them (the native reader's)."""
        return fvs.items()

    def _latestSamples(self) -> Dict[Tuple[int, int], Dict[int, Any]]:
        """The latest value of each field of each entity, as a one-sample series."""
        assert self.m_reader is not None
        return {e: {fid: [v] for fid, v in fvs.items()} for e, fvs in self.m_reader.latest().items()}

    def _samplesSince(self, consumer: str) -> Dict[Tuple[int, int], Dict[int, Any]]:
        """Each field's series of samples (oldest first) since ``consumer``'s previous call."""
        return self._since(consumer)

    def _samplesOf(self, series: Any) -> Iterable[Any]:
        """The samples of one series of :meth:`_samplesSince`."""
        return cast(Iterable[Any], series)

    def _sinceStart(self) -> None:
        """Called by the first call of a since-last-call family when it reports nothing
        (``_firstSinceLastCallEmpty``)."""

    # --- handlers to override ---

    def CustomFieldHandler(self, gpuId: int, fieldId: int, fieldTag: str, val: FieldValue) -> None:
        """Called by the default :meth:`CustomDataHandler` for each field; prints by default."""
        print("GPU %s field %s=%s" % (gpuId, fieldTag, str(val.value)))

    def CustomFieldHandler_v2(
        self, entityGroupId: int, entityId: int, fieldId: int, fieldTag: str, val: FieldValue
    ) -> None:
        """Called by the default :meth:`CustomDataHandler_v2` for each field; prints by default."""
        print("%s %s field %s=%s" % (entity_group_id_to_string(entityGroupId), entityId, fieldTag, str(val.value)))

    def _pick(self, series: Any) -> Any:
        """The sample a default handler hands on for a field (``None``: none)."""
        n = len(series)
        if n == 0:
            return None
        last = series[-1]
        if not (last.isBlank and self.m_ignoreBlank):
            return last
        if self._handleLastNonBlank:
            for i in range(n - 2, -1, -1):
                if not series[i].isBlank:
                    return series[i]
        return None

    def _tag(self, fieldId: Any) -> str:
        """``m_fieldIdToInfo[fieldId].tag`` (remembered per metadata object), else the tag of
        the package's table, else the id as text."""
        info = self.m_fieldIdToInfo.get(fieldId)
        if info is None:
            meta = _fields.DcgmFieldGetById(fieldId)
            return meta.tag if meta is not None else str(fieldId)
        cached = self._tags.get(fieldId)
        if cached is not None and cached[0] is info:
            return cached[1]
        tag: str = info.tag
        self._tags[fieldId] = (info, tag)
        return tag

    def CustomDataHandler(self, fvs: Dict[int, Dict[int, List[FieldValue]]]) -> None:
        """Gets ``{gpuId: {fieldId: [samples, oldest first]}}`` from :meth:`Process`. The default
        calls :meth:`CustomFieldHandler` with the last sample of each field that is not in the
        ignore list (the last non-blank one when ``ignoreBlank``)."""
        for gpuId in list(fvs.keys()):
            gpuFv = fvs[gpuId]
            for fieldId in list(gpuFv.keys()):
                if fieldId in self.m_dcgmIgnoreFields:
                    continue
                val = self._pick(gpuFv[fieldId])
                if val is not None:
                    self.CustomFieldHandler(gpuId, fieldId, self._tag(fieldId), val)

    def CustomDataHandler_v2(self, fvs: Dict[int, Dict[int, Dict[int, List[FieldValue]]]]) -> None:
        """Like :meth:`CustomDataHandler` when the reader has entities:
        ``{entityGroupId: {entityId: {fieldId: [samples]}}}``."""
        for entityGroupId in list(fvs.keys()):
            entityGroup = fvs[entityGroupId]
            for entityId in list(entityGroup.keys()):
                entityFv = entityGroup[entityId]
                for fieldId in list(entityFv.keys()):
                    if fieldId in self.m_dcgmIgnoreFields:
                        continue
                    val = self._pick(entityFv[fieldId])
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
                if self._firstProcessLatest and self._processCalls == 0:
                    data = self._latestSamples()
                else:
                    data = self._samplesSince("process")
                self._processCalls += 1
                if not self.m_requestedEntities:
                    gpus = {eid: fvs for (eg, eid), fvs in data.items() if eg == _fields.DCGM_FE_GPU}
                    self.CustomDataHandler(gpus)
                else:
                    ents: Dict[int, Dict[int, Dict[int, Any]]] = {}
                    for (eg, eid), fvs in data.items():
                        ents.setdefault(eg, {})[eid] = fvs
                    self.CustomDataHandler_v2(ents)
            except _ConnectionLost:
                self.LogError("Can't connect to nv-hostengine. Is it down?")
                self.SetDisconnected()

    def _key(self, fieldId: int, mapById: bool) -> Any:
        return fieldId if mapById else self._tag(fieldId)

    def _readFailed(self) -> None:
        self.LogError(self._readErrorMessage)
        self.SetDisconnected()

    def GetLatestGpuValuesAsDict(self, mapById: bool) -> Dict[int, Dict[Any, Any]]:
        """``{gpuId: {fieldId or tag: value}}``, built by the extension straight from the read."""
        out: Dict[int, Dict[Any, Any]] = {}
        with self.m_lock:
            try:
                self.Reconnect()
                assert self.m_reader is not None
                out = self.m_reader.latest_gpu_dict(mapById, self.m_ignoreBlank)
                if not self.m_ignoreBlank:
                    for d in out.values():
                        for k, v in d.items():
                            if isinstance(v, Blank):
                                d[k] = self._blankInDict(k, v)
            except _ConnectionLost:
                self._readFailed()
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
                    for fid, v in self._inFieldOrder(fvs):
                        if not v.isBlank:
                            d[self._key(fid, mapById)] = v.value
                        elif not self.m_ignoreBlank:
                            d[self._key(fid, mapById)] = self._blankValue(v)
            except _ConnectionLost:
                self._readFailed()
        return out

    def _sinceReports(self, family: str) -> bool:
        """Whether this call of a since-last-call family reports samples: always, but for
        the family's first call when ``_firstSinceLastCallEmpty``."""
        if not self._firstSinceLastCallEmpty or family in self._sinceStarted:
            return True
        self._sinceStarted.add(family)
        self._sinceStart()
        return False

    def _sinceDict(self, family: str, mapById: bool) -> Dict[int, Any]:
        """The since-last-call dicts: ``family`` "gpu" (``{gpuId: {key: [samples]}}``) or
        "entity" (``{entityGroupId: {entityId: {key: [samples]}}}``)."""
        out: Dict[int, Any] = {}
        with self.m_lock:
            try:
                self.Reconnect()
                if not self._sinceReports(family):
                    return out
                gpusOnly = family == "gpu"
                for (eg, eid), fvs in self._samplesSince(family).items():
                    if gpusOnly:
                        if eg != _fields.DCGM_FE_GPU:
                            continue
                        d = out.setdefault(eid, {})
                    else:
                        d = out.setdefault(eg, {}).setdefault(eid, {})
                    for fid, series in fvs.items():
                        kept = [v for v in self._samplesOf(series) if not (v.isBlank and self.m_ignoreBlank)]
                        if kept:
                            d.setdefault(self._key(fid, mapById), []).extend(kept)
            except _ConnectionLost:
                self._readFailed()
        return out

    def GetAllGpuValuesAsDictSinceLastCall(self, mapById: bool) -> Dict[int, Dict[Any, List[FieldValue]]]:
        """``{gpuId: {fieldId or tag: [samples, oldest first]}}`` since the previous call."""
        return self._sinceDict("gpu", mapById)

    def GetAllEntityValuesAsDictSinceLastCall(
        self, mapById: bool
    ) -> Dict[int, Dict[int, Dict[Any, List[FieldValue]]]]:
        """``{entityGroupId: {entityId: {fieldId or tag: [samples]}}}`` since the previous call."""
        return self._sinceDict("entity", mapById)

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
                self._readFailed()
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
