"""The zero-edit way in: an import hook that makes NVIDIA's binding module names resolve to
this package.

After :func:`install`, ``import pydcgm``, ``import dcgm_agent``, ``from DcgmReader import
DcgmReader`` and every other name of :data:`dcgm.compat.MODULES` give the module of this
package under that name (the very same object: ``sys.modules['dcgm_structs'] is
dcgm.compat.dcgm_structs``), even where a copy of NVIDIA's bindings comes first on
``sys.path``. The hook sits at the front of ``sys.meta_path`` and answers only those top-level
names, so everything else a program imports from NVIDIA's directory (its ``common/`` helper
package, the programs themselves, a ``collectd`` module) is found as before.

The modules are imported when a program first asks for them, not by :func:`install`, so it
is cheap enough for a ``sitecustomize``::

    import dcgm.compat
    dcgm.compat.install()
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Optional, Sequence

_PACKAGE = "dcgm.compat"


class _AliasLoader(importlib.abc.Loader):
    """Loads a binding name by importing ``dcgm.compat.<name>`` and handing that module
    object back, so the short name and the package name are one module."""

    def __init__(self, name: str) -> None:
        self._name = name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module("%s.%s" % (_PACKAGE, self._name))
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # Already executed under its package name by create_module. The import system has
        # just put the alias spec on it: give the module its own back, so that it stays
        # dcgm.compat.<name> for importlib.reload, pickling and introspection.
        own = getattr(self, "_own_spec", None)
        if own is not None:
            module.__spec__ = own


class CompatFinder(importlib.abc.MetaPathFinder):
    """The ``sys.meta_path`` entry :func:`install` adds: top-level imports of NVIDIA's binding
    module names resolve to :mod:`dcgm.compat`'s modules."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(
        self,
        fullname: str,
        path: Optional[Sequence[str]] = None,
        target: Optional[ModuleType] = None,
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if path is not None or fullname not in self.names:
            return None
        # The spec's name is the short name so that the import system files the module under
        # it too; the module keeps its own __name__ and __spec__ (dcgm.compat.<name>).
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(fullname))

    def __repr__(self) -> str:
        return "<dcgm.compat import hook for %d binding modules>" % len(self.names)


def _installed() -> Optional[CompatFinder]:
    for f in sys.meta_path:
        if isinstance(f, CompatFinder):
            return f
    return None


def install() -> None:
    """Makes ``import pydcgm``, ``import dcgm_agent`` and the other names of NVIDIA's
    DCGM 4.6 Python bindings (:data:`dcgm.compat.MODULES`) resolve to this package's modules,
    ahead of any copy of NVIDIA's on ``sys.path``. Calling it again is harmless.

    A binding module imported from elsewhere before this call stays in ``sys.modules`` (it
    cannot be unloaded safely); a warning names it, since the program would then mix two
    bindings."""
    from dcgm import compat as _compat

    if _installed() is None:
        sys.meta_path.insert(0, CompatFinder(_compat.MODULES))
    foreign = []
    for name in _compat.MODULES:
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__name__", None) != "%s.%s" % (_PACKAGE, name):
            foreign.append(name)
    if foreign:
        warnings.warn(
            "dcgm.compat.install(): already imported from elsewhere, left as they are: %s "
            "(install the hook before the program imports them)" % ", ".join(foreign),
            RuntimeWarning,
            stacklevel=2,
        )


def uninstall() -> None:
    """Removes the import hook, and the short names it put in ``sys.modules`` (the
    ``dcgm.compat.<name>`` modules themselves stay loaded)."""
    from dcgm import compat as _compat

    while True:
        f = _installed()
        if f is None:
            break
        sys.meta_path.remove(f)
    for name in _compat.MODULES:
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__name__", None) == "%s.%s" % (_PACKAGE, name):
            del sys.modules[name]


def is_installed() -> bool:
    """Whether :func:`install`'s hook is on ``sys.meta_path``."""
    return _installed() is not None
