"""Loaded (as sitecustomize) only in the oracle runs of NVIDIA's telegraf and fluentd
programs on NVIDIA's bindings: socket.sendto encodes a str as UTF-8, so that those programs,
which crash there on Python 3, deliver what NVIDIA's DcgmJsonReader produced."""

import socket

_sendto = socket.socket.sendto


def _sendto_text(self, data, *args):  # type: ignore[no-untyped-def]
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _sendto(self, data, *args)


socket.socket.sendto = _sendto_text  # type: ignore[method-assign]
