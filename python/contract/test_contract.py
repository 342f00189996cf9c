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
