"""NVIDIA's ``DcgmFieldGroup`` (DCGM 4.6): a named set of field ids in the host engine.

Differences from NVIDIA's, for the better:

* **Released when collected, or at exit.** A field group this object created is destroyed by
  a ``weakref.finalize`` when the object is collected or the interpreter exits. NVIDIA's has a
  ``__del__`` for this, but keeps every created field group in ``DcgmFieldGroup.groups``, so it
  never runs; here that registry holds them weakly. :meth:`Delete` destroys it explicitly, once.
* **A deleted field group raises a typed error** when passed to the object layer
  (``DCGMError_NoData``, what the library answers for an unknown field group), instead of a
  null id reaching the library; so does :meth:`Delete` after its handle was shut down
  (``DCGMError_ConnectionNotValid``).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, List, Optional

from dcgm.compat import dcgm_agent, dcgm_structs
from dcgm.compat._handle_state import _live_handle, _safely


def _id_value(fieldGroupId: Any) -> Any:
    return getattr(fieldGroupId, "value", fieldGroupId)


def _destroy_field_group(dcgmHandle: Any, fieldGroupId: Any) -> None:
    """The finalizer of a created field group; errors (a gone host engine) are ignored."""
    with DcgmFieldGroup.groupLock:
        DcgmFieldGroup.groups.pop(_id_value(fieldGroupId), None)
    raw = getattr(dcgmHandle, "handle", None)
    if raw is None:
        return
    try:
        dcgm_agent.dcgmFieldGroupDestroy(raw, fieldGroupId)
    except Exception:  # noqa: BLE001 - nothing to report to at collection or exit
        pass


class DcgmFieldGroup:
    """A field group of ``dcgmHandle`` (a ``DcgmHandle``): created as ``name`` with
    ``fieldIds``, or, with ``fieldGroupId``, bound to an existing one (its ``name`` and
    ``fieldIds`` read from the host engine). ``fieldGroupId`` is the id passed to the library."""

    #: The field groups created through this class, by id value (held weakly here).
    groups: "weakref.WeakValueDictionary[Any, DcgmFieldGroup]" = weakref.WeakValueDictionary()
    groupLock = threading.RLock()

    def __init__(self, dcgmHandle: Any, name: str = "", fieldIds: Optional[List[int]] = None, fieldGroupId: Any = None) -> None:
        fieldIds = fieldIds or []
        self.name = name
        self.fieldIds = fieldIds
        self._dcgmHandle = dcgmHandle
        self.wasCreated = False
        self._finalizer: Optional[weakref.finalize] = None
        if fieldGroupId is not None:
            self.fieldGroupId = fieldGroupId
            info = dcgm_agent.dcgmFieldGroupGetInfo(_live_handle(dcgmHandle), fieldGroupId)
            self.name = info.fieldGroupName
            self.fieldIds = info.fieldIds
        else:
            self.fieldGroupId = None
            self.fieldGroupId = dcgm_agent.dcgmFieldGroupCreate(_live_handle(dcgmHandle), fieldIds, name)
            self.wasCreated = True
            self._finalizer = weakref.finalize(self, _safely, _destroy_field_group, dcgmHandle, self.fieldGroupId)
            with DcgmFieldGroup.groupLock:
                key = _id_value(self.fieldGroupId)
                if key not in DcgmFieldGroup.groups:
                    DcgmFieldGroup.groups[key] = self

    def Delete(self) -> None:
        """Destroys the field group in the host engine if it was created through this class
        (an object bound by id to one created elsewhere only forgets it, as NVIDIA's); this
        object is then unusable. Again: a no-op."""
        if self.fieldGroupId is None:
            return
        key = _id_value(self.fieldGroupId)
        with DcgmFieldGroup.groupLock:
            owner = DcgmFieldGroup.groups.get(key)
            destroy = owner is not None
            if destroy:
                del DcgmFieldGroup.groups[key]
        if owner is not None:
            for obj in (owner, self):
                if obj._finalizer is not None:
                    obj._finalizer.detach()
                    obj._finalizer = None
            dcgm_agent.dcgmFieldGroupDestroy(_live_handle(self._dcgmHandle), self.fieldGroupId)
        self.fieldGroupId = None
        self._dcgmHandle = None

    @classmethod
    def clear(cls) -> None:
        """Stops tracking the created field groups (they are no longer destroyed by Delete)."""
        with cls.groupLock:
            cls.groups.clear()

    @classmethod
    def reset(cls) -> None:
        """Deletes every tracked field group, then stops tracking."""
        with cls.groupLock:
            for group in list(cls.groups.values()):
                group.Delete()
        cls.clear()

    def __repr__(self) -> str:
        return "<DcgmFieldGroup %r %s>" % (self.name, "deleted" if self.fieldGroupId is None else _id_value(self.fieldGroupId))
