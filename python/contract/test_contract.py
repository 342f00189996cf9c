"""What must hold through the Python wheel on any libdcgm: run against dcgm-sim and, by
python/build_and_test.sh, against the real libdcgm 4.6.0 (DCGM_CONTRACT_LIB names it)."""

from __future__ import annotations

import os
import time
from typing import Any, Iterator, Optional

import pytest

import dcgm
import dcgm.fields as F
import dcgm.structs as S
from dcgm import DcgmReader

LIB: Optional[str] = os.environ.get("DCGM_CONTRACT_LIB")
SENTINELS = ("2147483632", "4294967280", "4294967295", "9223372036854775792", "140737488355328", "1.40737488355328e+14")


def no_sentinel(value: Any) -> None:
    text = repr(value)
    for s in SENTINELS:
        assert s not in text, "blank sentinel %s shown as data in %s" % (s, text)


@pytest.fixture(scope="module")
def handle() -> Iterator[dcgm.Handle]:
    h = dcgm.Handle.embedded(library_path=LIB) if LIB else dcgm.Handle.embedded(simulate=True)
    yield h
    h.close()


def test_labelled_and_versioned(handle: dcgm.Handle) -> None:
    assert handle.is_simulated is (LIB is None)
    assert str(handle.system().library_version()["version"]).startswith("4.6")


def test_attributes_have_no_sentinel(handle: dcgm.Handle) -> None:
    s = handle.system()
    for gpu in s.gpu_ids():
        a = s.device_attributes(gpu)
        assert a["uuid"].startswith("GPU-")
        no_sentinel(a)
        assert a["memory_total_mib"] is None or a["memory_total_mib"] > 0


def test_unknown_gpu_is_badparam(handle: dcgm.Handle) -> None:
    with pytest.raises(S.DCGMError_Badparam):
        handle.system().device_attributes(9999)


def test_group_watch_and_latest(handle: dcgm.Handle) -> None:
    s = handle.system()
    g = handle.group("py-contract", gpus=s.gpu_ids())
    fg = handle.field_group("py-contract-fg", [F.DCGM_FI_DEV_GPU_TEMP, F.DCGM_FI_DEV_POWER_USAGE, F.DCGM_FI_DEV_NAME])
    with g.watch(fg, update_interval=0.1, max_keep_age=60.0):
        handle.update_all_fields(True)
        values = g.latest_values(fg)
        assert len(values) == 3 * len(s.gpu_ids())
        for v in values:
            no_sentinel(v.value)
            assert v.value is None or v.blank is None
    g.destroy()
    fg.close()


def test_dcgm_reader_names(handle: dcgm.Handle) -> None:
    kwargs: Any = {"libraryPath": LIB} if LIB else {"simulate": True}
    r = DcgmReader(fieldIds=[F.DCGM_FI_DEV_GPU_TEMP, F.DCGM_FI_DEV_NAME], updateFrequency=100000, **kwargs)
    try:
        time.sleep(0.3)
        by_id = r.GetLatestGpuValuesAsFieldIdDict()
        assert set(by_id) == set(handle.system().gpu_ids())
        no_sentinel(by_id)
        since = r.GetAllGpuValuesAsFieldIdDictSinceLastCall()
        no_sentinel(since)
    finally:
        r.Shutdown()


def test_diagnostics_run_or_typed_error(handle: dcgm.Handle) -> None:
    g = handle.group("py-contract-diag", gpus=handle.system().gpu_ids()[:1])
    try:
        r = g.run_diagnostic(1)
        no_sentinel(r)
    except S.DCGMError as e:
        assert LIB is not None, e
        assert e.value == S.DCGM_ST_NVVS_BINARY_NOT_FOUND
    finally:
        g.destroy()


def test_field_meta(handle: dcgm.Handle) -> None:
    m = handle.system().field_meta("DCGM_FI_DEV_GPU_TEMP")
    assert m is not None and m.tag == "gpu_temp"


# DCGM's test API through dcgm.testing. These add fake GPUs and inject values into the engine
# the cases above share, so they come last; empty_cache is the very last (on libdcgm 4.6.0 it
# also drops the policy module's own watches).


def test_test_api_fake_gpu_and_injected_temperature(handle: dcgm.Handle) -> None:
    from dcgm.testing import create_fake_gpus, inject_value

    s = handle.system()
    before = len(s.gpu_ids())
    gpu = create_fake_gpus(handle, 1)[0]
    assert gpu == before and gpu in s.gpu_ids()
    at = time.time() - 1.0
    inject_value(handle, gpu, F.DCGM_FI_DEV_GPU_TEMP_CELSIUS, 95, timestamp=at)
    v = s.entities_latest_values([(dcgm.EntityGroup.GPU, gpu)], [F.DCGM_FI_DEV_GPU_TEMP_CELSIUS])[0]
    assert (v.value, v.timestamp_us) == (95, round(at * 1e6))
    with pytest.raises(S.DCGMError_Badparam):
        inject_value(handle, gpu, F.DCGM_FI_DEV_GPU_TEMP_CELSIUS, 1.5)  # not the field's type
    with pytest.raises(S.DCGMError_GenericError):
        dcgm.testing.create_fake_gpu_instances(handle, 9999, 1)


def test_test_api_injected_xid_raises_policy_and_health(handle: dcgm.Handle) -> None:
    gpu = handle.system().gpu_ids()[0]
    g = handle.group("py-contract-xid", gpus=[gpu])
    g.policy_set(xid=True)
    g.health_set(dcgm.HealthSystem.PCIE | dcgm.HealthSystem.MEM | dcgm.HealthSystem.DRIVER)
    g.health_check()
    at = time.time() - 2.0
    with g.policy_subscribe(dcgm.PolicyCondition.XID) as sub:
        dcgm.testing.inject_value(handle, gpu, F.DCGM_FI_DEV_XID_ERROR, 79, timestamp=at)
        v = sub.get(timeout=5.0)
    assert v is not None, "no XID violation within 5 s"
    assert (v["gpu"], v["xid"], v["timestamp_us"]) == (gpu, 79, round(at * 1e6))
    report = g.health_check()
    assert report["overall"] == "FAIL", report
    assert any("FALLEN_OFF_BUS" in str(i["error_name"]) for i in report["incidents"]), report
    g.destroy()


def test_test_api_empty_cache_blanks_injected_values(handle: dcgm.Handle) -> None:
    s = handle.system()
    gpu = s.gpu_ids()[0]
    dcgm.testing.inject_value(handle, gpu, F.DCGM_FI_DEV_GPU_TEMP_CELSIUS, 80)
    key = [(dcgm.EntityGroup.GPU, gpu)]
    assert s.entities_latest_values(key, [F.DCGM_FI_DEV_GPU_TEMP_CELSIUS])[0].value == 80
    dcgm.testing.empty_cache(handle)
    v = s.entities_latest_values(key, [F.DCGM_FI_DEV_GPU_TEMP_CELSIUS])[0]
    assert v.value is None and v.is_blank
