"""NVIDIA's ``DcgmReader`` class (DCGM 4.6 bindings) for programs and subclasses written for
it, on the package's native reader (one call into the extension per read instead of a
Python callback per value). The ``Get...``, ``Process`` and handler methods are
:class:`dcgm.reader.DcgmReader`'s (one implementation): this class sets NVIDIA's behaviour
through its parameters (``_firstSinceLastCallEmpty``, ``_firstProcessLatest``...) and gives
NVIDIA's samples through its hooks (``_samplesSince``, ``_blankValue``...).

What a subclass sees is NVIDIA's: the constructor's arguments and defaults
(``hostname='localhost'`` connects to that nv-hostengine, ``hostname=None`` starts the engine
embedded in the process), the hooks it overrides (``CustomDataHandler``,
``CustomFieldHandler``, their ``_v2`` forms, ``LogInfo``/``LogDebug``/``LogError``,
``SetupGpuIdUUIdMappings``, ``GetFieldMetadata``...), the ``m_*`` attributes it reads
(``m_gpuIdToUUId``, ``m_gpuIdToBusId``, ``m_fieldIdToInfo`` with ``.tag``,
``m_dcgmIgnoreFields``, ``m_publishFields``, ``m_fieldGroup``, ``m_ignoreBlank``...), and the
data: ``{gpuId: {fieldId: series}}`` in the order of the field list, each series a
``DcgmFieldValueTimeSeries`` of values with ``ts``, ``fieldId``, ``fieldType``, ``isBlank``
and ``value`` (assignable, as NVIDIA's collectd plugin does). ``Process`` hands the latest
values on its first call and the samples since then afterwards, ``Get...SinceLastCall``
returns ``{}`` on its first call, as NVIDIA's do. The library is the one
:func:`dcgm.compat.use_library` (or ``python -m dcgm.compat --simulate|--library``) chose.

Differences, on purpose:

* a blank value's ``.value`` is ``None``, never a sentinel number (NVIDIA's keeps the number
  when the status is OK, e.g. 9223372036854775794); ``ignoreBlank=False`` dicts hold ``None``.
  ``DCGM_COMPAT_BLANK_SENTINELS=1`` (``python -m dcgm.compat --blank-sentinels``) gives
  NVIDIA's number back: the sentinel of the field's type for the kind of blank (blank, not
  found, not supported, not permissioned), ``None`` for an error status as NVIDIA's;
* ``m_publishFieldIds`` (every published field id, in order) exists: NVIDIA's own
  ``DcgmReaderExample.py`` reads it and fails with an ``AttributeError`` on NVIDIA's class;
* ``GetAllEntityValuesAsDictSinceLastCall`` returns every non-blank sample (NVIDIA's keeps
  only the last one of each field, blank or not);
* ``GetLatestGpuValuesAsFieldDict()`` is added (see :mod:`dcgm.reader`);
* ``m_dcgmHandle``, ``m_dcgmSystem`` and ``m_dcgmGroup`` are this package's ``pydcgm``
  objects, opened on a connection of their own the first time a subclass reads one (the
  reader itself does not need them); ``m_fieldGroup``/``m_fieldGroups`` describe the field
  groups (``.name``, ``.fieldIds``) rather than being ``pydcgm.DcgmFieldGroup`` objects;
* after ``SetHandle`` (adopting a handle, used by NVIDIA's unit tests) the reads go through
  the package's pydcgm objects on that handle, at about NVIDIA's speed.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from typing import Any, Dict, Iterable, List, Optional, Tuple, TypeVar, cast

from dcgm import fields as _fields
from dcgm import reader as _reader
from dcgm._enums import Blank
from dcgm.compat import blank_sentinels as _blank_sentinels
from dcgm.structs import DCGM_ST_BADPARAM, DCGM_ST_UNKNOWN_FIELD, DCGMError

_STAR = ["DcgmReader", "defaultFieldIds", "entity_group_id_to_string",
         "logging", "os", "signal", "subprocess", "sys", "threading"]
_BINDINGS = ("pydcgm", "dcgm_structs", "dcgm_fields")

#: The fields read when ``fieldIds`` is not given (NVIDIA's 30, in NVIDIA's order).
defaultFieldIds: List[int] = list(_reader.defaultFieldIds)

entity_group_id_to_string = _reader.entity_group_id_to_string




def _reader_group(system: Any, reader: Any) -> Any:
    """The pydcgm group a reader reads: the default group, or one of its requested GPUs and
    entities (as NVIDIA's reader builds it)."""
    if not reader.m_requestedGpuIds and not reader.m_requestedEntitiesAsGiven:
        return system.GetDefaultGroup()
    name = "dcgmreader_%d" % os.getpid()
    if reader.m_requestedGpuIds:
        group = system.GetGroupWithGpuIds(name, reader.m_requestedGpuIds)
        for e in reader.m_requestedEntitiesAsGiven or []:
            group.AddEntity(e.entityGroupId, e.entityId)
        return group
    return system.GetGroupWithEntities(name, reader.m_requestedEntitiesAsGiven)

_BLANK_KINDS = list(Blank)  # BLANK, NOT_FOUND, NOT_SUPPORTED, NOT_PERMISSIONED: sentinel + 0..3
_STR_SENTINELS = ("<<<NULL>>>", "<<<NOT_FOUND>>>", "<<<NOT_SUPPORTED>>>", "<<<NOT_PERM>>>")
_NO_KIND = object()


def _sentinel(fieldType: Any, kind: Any) -> Any:
    """NVIDIA's sentinel number (or text) for a blank of ``kind`` (a :class:`dcgm.Blank`)
    in a field of ``fieldType``; ``None`` where NVIDIA's has none (an error status, a blob)."""
    if not isinstance(kind, Blank):
        return None
    i = _BLANK_KINDS.index(kind)
    if fieldType == "d":
        from dcgm.compat import dcgmvalue

        return dcgmvalue.DCGM_FP64_BLANK + float(i)
    if fieldType in ("i", "t"):
        from dcgm.compat import dcgmvalue

        return dcgmvalue.DCGM_INT64_BLANK + i
    if fieldType == "s":
        return _STR_SENTINELS[i]
    return None


def _blank_value(v: Any) -> Any:
    """The ``value`` of a blank sample ``v``: ``None``, or under
    ``DCGM_COMPAT_BLANK_SENTINELS=1`` NVIDIA's sentinel (a ``dcgm_field_helpers`` value
    already holds it; a native one gives its kind of blank)."""
    if not _blank_sentinels():
        return None
    kind = getattr(v, "blank", _NO_KIND)
    if kind is _NO_KIND:
        return v.value
    if getattr(v, "status", 0) != 0:  # an error status: NVIDIA's value is None
        return None
    return _sentinel(v.fieldType, kind)


def _blank_in_dict(key: Any, kind: Any) -> Any:
    """A blank (a :class:`dcgm.Blank` member) of the native dict answers, under field id or
    tag ``key``, as its ``ignoreBlank=False`` dicts hold it: ``None``, or NVIDIA's sentinel
    under ``DCGM_COMPAT_BLANK_SENTINELS=1``."""
    if not _blank_sentinels():
        return None
    meta = _fields.field_info(key) if isinstance(key, (int, str)) else None
    return _sentinel(meta.field_type if meta is not None else None, kind)


class _Sample:
    """One field value as NVIDIA's ``dcgm_field_helpers.DcgmFieldValue`` presents it; its
    attributes can be assigned (NVIDIA's collectd plugin marks samples blank)."""

    __slots__ = ("ts", "fieldId", "fieldType", "isBlank", "value")

    def __init__(self, v: Any) -> None:
        self.ts = v.ts
        self.fieldId = v.fieldId
        self.fieldType = v.fieldType
        blank = v.isBlank
        self.isBlank = blank
        self.value = _blank_value(v) if blank else v.value

    def __repr__(self) -> str:  # noqa: D105
        return "<DcgmFieldValue fieldId=%d ts=%d value=%r%s>" % (
            self.fieldId, self.ts, self.value, " blank" if self.isBlank else "")


_RowT = Tuple[int, int, str, bool, Any]
_V = TypeVar("_V")


def _row(v: Any) -> _RowT:
    """A native value's (ts, fieldId, fieldType, isBlank, value), read once."""
    blank = v.isBlank
    return (v.ts, v.fieldId, v.fieldType, blank, _blank_value(v) if blank else v.value)


def _series_class() -> Any:
    """NVIDIA's ``DcgmFieldValueTimeSeries`` (imported when first needed)."""
    from dcgm.compat.dcgm_field_helpers import DcgmFieldValueTimeSeries

    return DcgmFieldValueTimeSeries


class ReaderFieldGroup:
    """What ``m_fieldGroup`` / ``m_fieldGroups[interval]`` hold: the DCGM field group the
    reader watches, by name and field ids."""

    def __init__(self, name: str, fieldIds: Iterable[Any]) -> None:
        self.name = name
        self.fieldIds = list(fieldIds)

    def __repr__(self) -> str:
        return "<field group %r: %d fields>" % (self.name, len(self.fieldIds))


class _HandleSource:
    """What ``SetHandle`` reads through: the package's pydcgm objects on a handle the caller
    owns, answering the few questions the reader asks of its native reader (``gpus``,
    ``latest``, ``latest_gpu_dict``, ``since_last_call``). Slower than the native reader (a
    callback per value, as NVIDIA's), and only for this adopted-handle case."""

    is_simulated = None
    mode = "adopted handle"

    def __init__(self, reader: "DcgmReader", handle: Any) -> None:
        from dcgm.compat import pydcgm

        self._handle = pydcgm.DcgmHandle(handle)
        system = self._handle.GetSystem()
        group = _reader_group(system, reader)
        self._system, self._group = system, group
        self._fieldGroups: List[Any] = []
        allIds: List[int] = []
        for index, (interval, fieldIds) in enumerate(reader.m_publishFields.items(), start=1):
            ids = [_fields.field_id(f) for f in fieldIds]
            fg = self._fieldGroup("%s_%d" % (reader.m_fieldGroupName, index), ids)
            group.samples.WatchFields(fg, int(interval), reader.m_maxKeepAge, 0)
            allIds += [f for f in ids if f not in allIds]
        self._all = self._fieldGroup(reader.m_fieldGroupName, allIds)
        system.UpdateAllFields(1)
        self._since: Any = None

    def _fieldGroup(self, name: str, ids: List[int]) -> Any:
        from dcgm.compat import pydcgm

        old = self._system.GetFieldGroupIdByName(name)
        if old is not None:
            pydcgm.DcgmFieldGroup(dcgmHandle=self._handle, fieldGroupId=old).Delete()
        fg = pydcgm.DcgmFieldGroup(self._handle, name, ids)
        self._fieldGroups.append(fg)
        return fg

    def gpus(self) -> List[Dict[str, Any]]:
        out = []
        for g in self._group.GetGpuIds():
            ids = self._system.discovery.GetGpuAttributes(g).identifiers
            out.append({"gpu": g, "uuid": ids.uuid, "pci_bus_id": ids.pciBusId})
        return out

    def latest(self) -> Dict[Tuple[int, int], Dict[int, Any]]:
        values = self._group.samples.GetLatest_v2(self._all).values
        return {(eg, eid): {fid: series[-1] for fid, series in fvs.items()}
                for eg, ents in values.items() for eid, fvs in ents.items()}

    def latest_gpu_dict(self, by_id: bool, ignore_blank: bool) -> Dict[int, Dict[Any, Any]]:
        out: Dict[int, Dict[Any, Any]] = {}
        for (eg, eid), fvs in self.latest().items():
            if eg != _fields.DCGM_FE_GPU:
                continue
            d = out.setdefault(eid, {})
            for fid, v in fvs.items():
                if v.isBlank and ignore_blank:
                    continue
                meta = _fields.DcgmFieldGetById(fid)
                d[fid if by_id or meta is None else meta.tag] = _blank_value(v) if v.isBlank else v.value
        return out

    def since_last_call(self) -> Dict[Tuple[int, int], Dict[int, List[Any]]]:
        self._since = self._group.samples.GetAllSinceLastCall_v2(self._since, self._all)
        values = self._since.values
        out = {(eg, eid): {fid: [v for v in series.values if not (v.isBlank and v.ts == 0)]
                           for fid, series in fvs.items()}
               for eg, ents in values.items() for eid, fvs in ents.items()}
        self._since.EmptyValues()
        return out

    def close(self) -> None:
        for fg in self._fieldGroups:
            try:
                fg.Delete()
            except Exception:
                pass
        self._fieldGroups = []

    shutdown = close


def _field_meta(fieldId: Any) -> Any:
    """The metadata NVIDIA's reader keeps per field (``.tag``...): compat ``dcgm_fields``'
    structure where that module is present, else the package's own."""
    try:
        from dcgm.compat import dcgm_fields as _cf

        meta = _cf.DcgmFieldGetById(fieldId)
        if meta is not None and meta != 0:
            return meta
    except Exception:
        pass
    if isinstance(fieldId, (int, str)):
        return _fields.field_info(fieldId)
    return None


def _lazy(name: str) -> property:
    """``m_dcgmHandle`` / ``m_dcgmSystem`` / ``m_dcgmGroup``: ``None`` while disconnected;
    the package's pydcgm objects, opened at the first read, while connected."""

    def get(self: "DcgmReader") -> Any:
        d = self.__dict__
        if name in d:
            return d[name]
        if self.m_reader is None:
            return None
        self._OpenPydcgm()
        return d.get(name)

    def set_(self: "DcgmReader", value: Any) -> None:
        if value is None:
            self.__dict__.pop(name, None)
        else:
            self.__dict__[name] = value

    def del_(self: "DcgmReader") -> None:
        self.__dict__.pop(name, None)

    return property(get, set_, del_, "NVIDIA's %s attribute (opened on first use)" % name)


class DcgmReader(_reader.DcgmReader):
    """NVIDIA's DcgmReader: subclass it and override ``CustomFieldHandler`` (or
    ``CustomDataHandler``), then call ``Process()`` periodically; or call the ``Get...``
    methods for dicts.

    The methods are :class:`dcgm.reader.DcgmReader`'s, with NVIDIA's behaviour chosen by the
    class attributes and hooks below."""

    # NVIDIA's behaviour, where this package's reader differs (see dcgm.reader.DcgmReader)
    _noHostnameIsEmbedded = True
    _firstSinceLastCallEmpty = True
    _firstProcessLatest = True
    _handleLastNonBlank = False
    _readErrorMessage = "Can't connection to nv-hostengine. Please verify that it is running."
    _connectedMessage = "Connected to nv-hostengine"

    m_dcgmHandle = _lazy("m_dcgmHandle")
    m_dcgmSystem = _lazy("m_dcgmSystem")
    m_dcgmGroup = _lazy("m_dcgmGroup")

    def __init__(
        self,
        hostname: Optional[str] = "localhost",
        fieldIds: Optional[Iterable[Any]] = None,
        updateFrequency: int = 10000000,
        maxKeepAge: float = 3600.0,
        ignoreList: Optional[Iterable[Any]] = None,
        fieldGroupName: str = "dcgm_fieldgroupData",
        gpuIds: Optional[Iterable[int]] = None,
        entities: Optional[Iterable[Any]] = None,
        fieldIntervalMap: Optional[Dict[int, Iterable[Any]]] = None,
        ignoreBlank: bool = True,
    ) -> None:
        super().__init__(
            hostname=hostname,
            fieldIds=fieldIds,
            updateFrequency=updateFrequency,
            maxKeepAge=maxKeepAge,
            ignoreList=None,
            fieldGroupName=fieldGroupName,
            gpuIds=gpuIds,
            entities=entities,
            fieldIntervalMap=fieldIntervalMap,
            ignoreBlank=ignoreBlank,
        )
        if fieldIntervalMap is not None:
            self.m_publishFields = fieldIntervalMap  # type: ignore[assignment]  # NVIDIA's keeps the caller's map
        self.m_dcgmIgnoreFields = list(ignoreList) if ignoreList else []
        self.m_requestedEntitiesAsGiven = entities
        self.m_fieldGroup: Optional[ReaderFieldGroup] = None
        self.m_fieldGroups: Dict[Any, ReaderFieldGroup] = {}
        self.m_publishFieldIds: List[Any] = []
        for fids in self.m_publishFields.values():
            for f in fids:
                if f not in self.m_publishFieldIds:
                    self.m_publishFieldIds.append(f)
        self._order: Dict[int, int] = {}
        self._lastSeen: Dict[Tuple[int, int], Dict[int, _RowT]] = {}
        # NVIDIA's keep their since-last-call collections here; kept for subclasses that test them.
        self.fvs = None
        self.egfvs = None
        self.dfvc = None
        self.dfvec = None

    # --- connection ---

    def InitWrapped(self, path: Optional[str] = None) -> None:
        if path is not None:
            self.m_libraryPath = os.path.join(path, "libdcgm.so.4") if os.path.isdir(path) else path
        self.Reconnect()

    def _libraryChoice(self) -> Tuple[Optional[str], bool]:
        """The library :func:`dcgm.compat.use_library` chose (``libpath`` of ``Init`` first)."""
        from dcgm import compat

        path, simulate = compat._library_choice()
        if self.m_libraryPath is not None:
            return self.m_libraryPath, False
        if path is not None and os.path.isdir(path):
            path = os.path.join(path, "libdcgm.so.4")
        return path, simulate

    def _checkFields(self) -> None:
        for f in self.m_publishFieldIds:
            if _field_meta(f) is None:
                # NVIDIA's fails here in DCGM's dcgmFieldGroupCreate, before any look-up of
                # its own: the same error class, and nothing logged.
                raise DCGMError(DCGM_ST_BADPARAM)

    def GetFieldMetadata(self) -> None:
        """Fills ``m_fieldIdToInfo`` (field id -> metadata with ``.tag``) and describes the
        field groups (``m_fieldGroups`` per interval, ``m_fieldGroup`` for all fields)."""
        self.m_fieldIdToInfo = {}
        self.m_fieldGroups = {}
        self.m_fieldGroup = None
        allFieldIds: List[Any] = []
        for index, (interval, fieldIds) in enumerate(self.m_publishFields.items(), start=1):
            self.m_fieldGroups[interval] = ReaderFieldGroup("%s_%d" % (self.m_fieldGroupName, index), fieldIds)
            for fieldId in fieldIds:
                if fieldId not in allFieldIds:
                    allFieldIds.append(fieldId)
                meta = _field_meta(fieldId)
                if meta is None:
                    self.LogError(
                        "Cannot get field tag for field id %s. Please check dcgm_fields to see if it is valid."
                        % (fieldId,))
                    raise DCGMError(DCGM_ST_UNKNOWN_FIELD)
                self.m_fieldIdToInfo[fieldId] = meta  # type: ignore[index]  # NVIDIA's keys: the ids as given
        if allFieldIds:
            self.m_fieldGroup = ReaderFieldGroup(self.m_fieldGroupName, allFieldIds)
        order: Dict[int, int] = {}
        for f in allFieldIds:
            meta = _fields.field_info(f) if isinstance(f, (int, str)) else None
            if meta is not None:
                order.setdefault(meta.field_id, len(order))
        self._order = order

    def SetHandle(self, handle: Any) -> None:
        """Uses (but does not own) ``handle``, a DCGM handle from ``dcgm_agent`` (NVIDIA's
        unit tests do this). Reads then go through the package's pydcgm objects on that
        handle, as NVIDIA's do, rather than through the native reader."""
        with self.m_lock:
            source = _HandleSource(self, handle)
            self.m_reader = source  # type: ignore[assignment]
            self.__dict__["m_dcgmHandle"] = source._handle
            self.__dict__["m_dcgmSystem"] = source._system
            self.__dict__["m_dcgmGroup"] = source._group
            self.InitializeFromHandle()

    def _OpenPydcgm(self) -> None:
        """Opens the ``m_dcgmHandle`` / ``m_dcgmSystem`` / ``m_dcgmGroup`` objects a subclass
        asked for, on a connection of their own to the same host engine."""
        from dcgm.compat import dcgm_structs, pydcgm

        handle = pydcgm.DcgmHandle(None, ipAddress=self.m_dcgmHostName,
                                   opMode=dcgm_structs.DCGM_OPERATION_MODE_AUTO)
        system = handle.GetSystem()
        group = _reader_group(system, self)
        self.__dict__["m_dcgmHandle"] = handle
        self.__dict__["m_dcgmSystem"] = system
        self.__dict__["m_dcgmGroup"] = group

    def SetDisconnected(self) -> None:
        with self.m_lock:
            for name in ("m_dcgmGroup", "m_dcgmSystem", "m_dcgmHandle"):
                self.__dict__.pop(name, None)
            super().SetDisconnected()
            self._lastSeen = {}

    # --- the values and samples as NVIDIA's (the hooks of dcgm.reader.DcgmReader) ---

    def _blankValue(self, v: Any) -> Any:
        return _blank_value(v)

    def _blankInDict(self, key: Any, kind: Blank) -> Any:
        return _blank_in_dict(key, kind)

    def _inFieldOrder(self, fvs: Dict[int, _V]) -> List[Tuple[int, _V]]:
        """The fields in the order of the field list."""
        order = self._order
        big = len(order)
        return sorted(fvs.items(), key=lambda kv: order.get(kv[0], big))

    def _latestSamples(self) -> Dict[Tuple[int, int], Dict[int, Any]]:
        assert self.m_reader is not None
        return self._as_series(self.m_reader.latest(), latest=True)

    def _samplesSince(self, consumer: str) -> Dict[Tuple[int, int], Dict[int, Any]]:
        """Samples since the consumer's previous call, a blank for each field without one
        (DCGM's answer); the latest values when the reader knows no entity yet (NVIDIA's
        ``GetAllSinceLastCall`` asks for the latest values when DCGM returned nothing)."""
        raw = self._since(consumer)
        if not self._lastSeen and not any(raw.values()):
            return self._latestSamples()
        return self._as_series(raw, latest=False)

    def _samplesOf(self, series: Any) -> List[Any]:
        return cast(List[Any], series.values)

    def _sinceStart(self) -> None:
        if not self._lastSeen:
            self._latestSamples()  # remembers each field's last sample

    def _as_series(self, raw: Dict[Tuple[int, int], Dict[int, Any]], latest: bool) -> Dict[Tuple[int, int], Dict[int, Any]]:
        """``{entity: {fieldId: series}}`` in field-list order. ``latest``: one value per
        field (``raw`` then maps fields to single values); else samples since a point, where
        a field with none in the window gets one blank value, as DCGM's ``GetValuesSince``
        reports it. Remembers each field's last sample."""
        Series = _series_class()
        seen = self._lastSeen
        new = _Sample.__new__
        order = self._order
        out: Dict[Tuple[int, int], Dict[int, Any]] = {}
        entities = list(raw)
        if not latest:
            entities = list(seen) + [e for e in raw if e not in seen]
        for entity in entities:
            fvs = raw.get(entity, {})
            d: Dict[int, Any] = {}
            last = seen.setdefault(entity, {})
            items: List[Tuple[int, List[_RowT]]]
            if latest:
                items = [(fid, [_row(v)]) for fid, v in self._inFieldOrder(fvs)]
            else:
                items = []
                for fid in order:
                    vals = fvs.get(fid)
                    items.append((fid, [_row(v) for v in vals] if vals else [self._blankRow(fid)]))
                items += [(fid, [_row(v) for v in vals]) for fid, vals in fvs.items() if fid not in order]
            for fid, rows in items:
                if rows and rows[-1][0]:
                    last[fid] = rows[-1]
                elif rows and fid not in last:
                    last[fid] = rows[-1]
                samples = []
                for r in rows:
                    x = new(_Sample)
                    x.ts, x.fieldId, x.fieldType, x.isBlank, x.value = r
                    samples.append(x)
                series = Series()
                series.values = samples
                d[fid] = series
            out[entity] = d
        return out

    def _blankRow(self, fieldId: int) -> _RowT:
        meta = _fields.DcgmFieldGetById(fieldId)
        return (0, fieldId, meta.field_type if meta is not None else "i", True, None)


def __getattr__(name: str) -> Any:
    # ``from DcgmReader import *`` gives NVIDIA's programs the binding modules NVIDIA's
    # module imports at its top; these are this package's, imported when first asked for.
    import importlib

    if name in _BINDINGS:
        return importlib.import_module("dcgm.compat." + name)
    if name == "__all__":
        # Computed so that a binding module that fails to import does not break the star.
        names = list(_STAR)
        for b in _BINDINGS:
            try:
                importlib.import_module("dcgm.compat." + b)
                names.append(b)
            except ImportError:
                pass
        return names
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
