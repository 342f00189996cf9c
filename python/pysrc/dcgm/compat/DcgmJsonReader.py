"""NVIDIA's ``DcgmJsonReader`` (DCGM 4.6 bindings): a :class:`DcgmReader` that turns each
GPU's latest values into one JSON object (``{tag: value, ..., "gpu_uuid": uuid}``) and hands
it to ``CustomJsonHandler``, which subclasses override (NVIDIA's ``dcgm_telegraf.py`` and
``dcgm_fluentd.py`` send it over UDP).

The difference, on purpose, and why: on Python 3, NVIDIA's hands ``CustomJsonHandler`` a
``str``, and its own telegraf and fluentd programs then fail in ``socket.sendto`` with
``TypeError: a bytes-like object is required``. Here the JSON is a :class:`JsonText`: a
``str`` (a subclass that expects text keeps working: it compares, prints, concatenates, is
written to text files and passes ``isinstance(x, str)``) whose ``bytes()`` is its UTF-8.
A ``str`` cannot lend its bytes to ``sendto`` itself (the buffer protocol cannot be given to a
``str`` subclass in Python), so before each hand-over the reader lets the plain UDP/TCP
sockets held in the instance's attributes (``self.m_sock`` in NVIDIA's programs) accept a
``JsonText`` in ``send``/``sendto``/``sendall``, sending its UTF-8 bytes; the socket stays a
``socket.socket`` and anything else given to it behaves as before. A socket kept elsewhere
(a global) is not touched: encode there with ``outJson.encode()``, which works on both
NVIDIA's and this package's bindings.

Blank values are ``null`` in the JSON (NVIDIA's writes the sentinel number, e.g.
9223372036854775794, when DCGM's status is OK).
"""

from __future__ import annotations

import logging
import socket as _socket
from json import dumps as toJson
from os import environ
from socket import AF_INET, SOCK_DGRAM, socket
from time import sleep
from typing import Any, Dict

from dcgm.compat.DcgmReader import DcgmReader

# The names NVIDIA's module has at its top, for ``from DcgmJsonReader import *``.
__all__ = ["DcgmJsonReader", "JsonText", "DcgmReader", "toJson", "environ", "socket", "AF_INET", "SOCK_DGRAM",
           "sleep", "logging"]
try:
    from dcgm.compat import dcgm_fields

    __all__.append("dcgm_fields")
except ImportError:  # pragma: no cover - that module is another part of the package
    pass


class JsonText(str):
    """The JSON text given to ``CustomJsonHandler``: a ``str``, plus ``bytes(x)`` (its
    UTF-8) and acceptance by the sockets the reader holds (see the module's docstring)."""

    __slots__ = ()

    def __bytes__(self) -> bytes:
        return self.encode("utf-8")


def _payload(data: Any) -> Any:
    return data.encode("utf-8") if isinstance(data, JsonText) else data


class _JsonSocket(_socket.socket):
    """A ``socket.socket`` that also sends a :class:`JsonText` (as its UTF-8 bytes)."""

    __slots__ = ()

    def send(self, data: Any, *args: Any) -> int:
        return super().send(_payload(data), *args)

    def sendto(self, data: Any, *args: Any) -> int:  # type: ignore[override]
        return super().sendto(_payload(data), *args)

    def sendall(self, data: Any, *args: Any) -> None:
        return super().sendall(_payload(data), *args)


def _adapt_sockets(obj: Any) -> None:
    """Lets the plain sockets among ``obj``'s attributes accept :class:`JsonText`."""
    for value in list(vars(obj).values()):
        if type(value) is _socket.socket:
            try:
                value.__class__ = _JsonSocket
            except TypeError:  # pragma: no cover - a layout we do not know: leave it
                pass


class DcgmJsonReader(DcgmReader):
    """Hands each GPU's latest values to ``CustomJsonHandler`` as one JSON object."""

    def ConvertFieldIdToTag(self, fieldId: int) -> str:
        return self.m_fieldIdToInfo[fieldId].tag

    def PrepareJson(self, gpuId: int, obj: Dict[str, Any]) -> JsonText:
        """Adds the GPU's UUID to ``obj`` (in place, as NVIDIA's does) and returns it as
        JSON text."""
        obj["gpu_uuid"] = self.m_gpuIdToUUId[gpuId]
        return JsonText(toJson(obj))

    def CustomDataHandler(self, fvs: Dict[int, Dict[int, Any]]) -> None:
        _adapt_sockets(self)
        for gpuId in list(fvs.keys()):
            last = [series.values[-1] for series in fvs[gpuId].values()]
            outObject = {self.ConvertFieldIdToTag(v.fieldId): v.value for v in last}
            self.CustomJsonHandler(self.PrepareJson(gpuId, outObject))

    def CustomJsonHandler(self, outJson: str) -> None:
        """Override it to use the JSON; the default logs a warning and the JSON."""
        logging.warning("CustomJsonHandler has not been overriden")
        logging.info(outJson)
