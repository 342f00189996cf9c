"""DCGM modules: their statuses, and keeping one from loading, by name or by number."""

from __future__ import annotations

import gc

import pytest

import dcgm

MODULES = [
    "Core", "NvSwitch", "Vgpu", "Introspect", "Health", "Policy", "Config", "Diag", "Profiling",
    "Sysmon", "MnDiag",
]
PROFILING = 8  # DcgmModuleIdProfiling


def test_modules_load_on_first_use() -> None:
    gc.collect()  # a fresh engine: libdcgm loads the core and NvSwitch modules at start
    with dcgm.Handle.embedded(simulate=True) as h:
        s = h.system()
        loaded = {m for m, st in s.module_statuses().items() if st == "Loaded"}
        assert loaded == {"Core", "NvSwitch"}
        s.hostengine_memory_bytes()  # served by the introspection module
        assert s.module_statuses()["Introspect"] == "Loaded"
    gc.collect()


def test_a_denylisted_module_is_reported_so_and_its_calls_fail() -> None:
    gc.collect()  # a fresh engine, given back denylist-free when this handle closes
    with dcgm.Handle.embedded(simulate=True) as h:
        s = h.system()
        s.module_denylist("diag")
        s.module_denylist(PROFILING)
        statuses = s.module_statuses()
        assert (statuses["Diag"], statuses["Profiling"]) == ("Denylisted", "Denylisted")
        assert {m for m, st in statuses.items() if st == "Loaded"} == {"Core", "NvSwitch"}
        with pytest.raises(dcgm.structs.DCGMError_ModuleNotLoaded):
            h.group("denied", gpus=[0]).run_diagnostic(1)
        # Hopper metrics come from the core (GPM), not from the profiling module.
        assert s.profiling_metric_groups(0)
        with pytest.raises(dcgm.structs.DCGMError_Badparam, match="no-such-module"):
            s.module_denylist("no-such-module")
    gc.collect()


def test_deny_modules_takes_names_and_numbers_and_refuses_unknown_ones() -> None:
    gc.collect()  # the deny list applies when this handle starts the engine
    with dcgm.Handle.embedded(simulate=True, deny_modules=["Diag", "profiling", 8]) as h:
        assert h.system().gpu_ids() == list(range(8))
    with pytest.raises(dcgm.structs.DCGMError_Badparam, match="no-such-module"):
        dcgm.Handle.embedded(simulate=True, deny_modules=["no-such-module"])
    with pytest.raises(dcgm.structs.DCGMError_Badparam, match="at most 16"):
        dcgm.Handle.embedded(simulate=True, deny_modules=list(range(17)))
