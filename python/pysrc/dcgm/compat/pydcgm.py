"""NVIDIA's ``pydcgm`` (DCGM 4.6): the object layer in one namespace, ``DcgmHandle``,
``DcgmGroup`` (and its sub-object classes), ``DcgmStatus``, ``DcgmSystem`` (and its sub-object
classes), ``DcgmFieldGroup``, the ``DcgmLogging`` constants, and :class:`DcgmException`, the
exception the object layer raises for misuse that is not a DCGM error.

Start with ``pydcgm.DcgmHandle()`` (an embedded host engine), ``DcgmHandle(ipAddress=...)``,
``DcgmHandle(unixSocketPath=...)`` or ``DcgmHandle(handle=raw)``, then ``.GetSystem()``.
"""

import os  # noqa: F401 - in NVIDIA's namespace too
import sys


def _python_version_check() -> None:
    """Exits on Python 2 (as NVIDIA's module does at import)."""
    if sys.version_info < (3,):  # pragma: no cover
        print("[ERROR] Detected Python version %s. These bindings are for Python 3.5+." % sys.version.split(None, 1)[0])
        sys.exit(1)


_python_version_check()

from dcgm.compat.DcgmHandle import *  # noqa: E402,F401,F403
from dcgm.compat.DcgmGroup import *  # noqa: E402,F401,F403
from dcgm.compat.DcgmStatus import *  # noqa: E402,F401,F403
from dcgm.compat.DcgmSystem import *  # noqa: E402,F401,F403
from dcgm.compat.DcgmFieldGroup import *  # noqa: E402,F401,F403
from dcgm.compat.DcgmLogging import *  # noqa: E402,F401,F403
from dcgm.compat._dcgm_exception import DcgmException as DcgmException  # noqa: E402
