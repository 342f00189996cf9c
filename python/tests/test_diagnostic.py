"""Diagnostics of a group, the response as a dict."""

from __future__ import annotations

import pytest

import dcgm


def test_a_short_diagnostic_runs_the_software_test_on_the_group_s_gpu(handle: dcgm.Handle) -> None:
    gpu0 = (dcgm.EntityGroup.GPU, 0)
    r = handle.group("diag", gpus=[0]).run_diagnostic(1)
    assert r == {
        "overall": "PASS",
        "tests": [
            {
                "name": "software",
                "plugin": "software",
                "category": "Deployment",
                "result": "PASS",
                "results": [(gpu0, "PASS")],
                "errors": [],
                "info": [],
            }
        ],
        "entities": [
            {"entity": gpu0, "serial": handle.system().device_attributes(0)["serial"], "sku_device_id": "2330"}
        ],
        "other_errors": [],
        "dcgm_version": "4.6.0",
        "driver_version": "570.133.20",
    }


def test_an_unknown_diagnostic_level_is_badparam(handle: dcgm.Handle) -> None:
    with pytest.raises(dcgm.structs.DCGMError_Badparam, match="diagnostic level 5"):
        handle.group("diag-level", gpus=[0]).run_diagnostic(5)
