"""DcgmReader as NVIDIA's scripts use it: subclasses overriding the handlers, Process(), the
Get... dict forms, since-last-call sample objects."""

from __future__ import annotations

import logging
import time
from typing import Any, Dict, List, Tuple, Union

import pytest

import dcgm
import dcgm.fields as dcgm_fields
import dcgm.structs as dcgm_structs
from dcgm import DcgmReader


# What the default simulated node reads: GPU 0-6 run a 62000 MiB process (fb_used adds the
# driver's 610 MiB), GPU 7's first MIG instance uses 4118 MiB; temperatures and power follow
# the load, within these bounds.
FB_USED_MIB = 62610
GI_0_FB_USED_MIB = 4118
PLAUSIBLE = {"gpu_temp": (25, 95), "power_usage": (50.0, 700.0)}


class FieldCollector(DcgmReader):
    """An upstream-style subclass: collects what CustomFieldHandler gets."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen: Dict[Tuple[int, str], Any] = {}
        self.calls = 0

    def CustomFieldHandler(self, gpuId: int, fieldId: int, fieldTag: str, val: Any) -> None:
        self.calls += 1
        assert fieldTag == dcgm_fields.DcgmFieldGetTagById(fieldId)
        self.seen[(gpuId, fieldTag)] = val.value


def test_default_fields_are_upstream_s() -> None:
    assert len(dcgm.defaultFieldIds) == 30
    assert dcgm.defaultFieldIds[:4] == [
        dcgm_fields.DCGM_FI_DEV_POWER_USAGE,
        dcgm_fields.DCGM_FI_DEV_GPU_TEMP,
        dcgm_fields.DCGM_FI_DEV_SM_CLOCK,
        dcgm_fields.DCGM_FI_DEV_GPU_UTIL,
    ]


def test_subclass_process_calls_custom_field_handler() -> None:
    ignored = dcgm_fields.DCGM_FI_DEV_SM_CLOCK
    fields = [dcgm_fields.DCGM_FI_DEV_GPU_TEMP, dcgm_fields.DCGM_FI_DEV_POWER_USAGE, ignored]
    with FieldCollector(fieldIds=fields, ignoreList=[ignored], updateFrequency=100000, simulate=True) as r:
        r.Process()
        assert r.IsSimulated() is True
        gpus = sorted({gpu for gpu, _ in r.seen})
        assert gpus == list(range(8))
        tags = {tag for _, tag in r.seen}
        assert tags == {"gpu_temp", "power_usage"}  # sm_clock is read but ignored
        for (gpu, tag), value in r.seen.items():
            low, high = PLAUSIBLE[tag]
            assert low <= value <= high, (gpu, tag, value)
        assert len(r.m_gpuIdToBusId) == 8 and len(r.m_gpuIdToUUId) == 8
        assert all(u.startswith("GPU-") for u in r.m_gpuIdToUUId.values())
        assert r.m_fieldIdToInfo[dcgm_fields.DCGM_FI_DEV_GPU_TEMP].tag == "gpu_temp"


def test_custom_data_handler_gets_series_per_gpu_and_field() -> None:
    got: List[Dict[int, Dict[int, List[Any]]]] = []

    class DataCollector(DcgmReader):
        def CustomDataHandler(self, fvs: Dict[int, Dict[int, List[Any]]]) -> None:
            got.append(fvs)

    with DataCollector(fieldIds=[150, 155], updateFrequency=50000, simulate=True) as r:
        r.Process()
        time.sleep(0.25)
        r.Process()
    assert len(got) == 2
    first, second = got
    assert sorted(first) == list(range(8))
    assert set(first[0]) == {150, 155}
    last_ts = max(v.ts for v in first[0][150])
    series = second[0][150]
    assert len(series) >= 2, "a 50 ms watch must have sampled during 250 ms"
    assert [v.ts for v in series] == sorted(v.ts for v in series)
    assert all(v.ts > last_ts for v in series), "since-last-call repeats no sample"
    for v in series:
        assert (v.fieldId, v.isBlank) == (150, False)
        assert 25 <= v.value <= 95


def test_the_four_gpu_dict_forms() -> None:
    with DcgmReader(fieldIds=[150, 155, 252], updateFrequency=50000, simulate=True) as r:
        by_id = r.GetLatestGpuValuesAsFieldIdDict()
        by_name = r.GetLatestGpuValuesAsFieldNameDict()
        assert sorted(by_id) == list(range(8)) == sorted(by_name)
        assert set(by_id[3]) == {150, 155, 252}
        assert set(by_name[3]) == {"gpu_temp", "power_usage", "fb_used"}
        assert 25 <= by_id[3][150] <= 95 and 50.0 < by_name[3]["power_usage"] <= 700.0
        assert by_id[3][252] == by_name[3]["fb_used"] == FB_USED_MIB

        since_id = r.GetAllGpuValuesAsFieldIdDictSinceLastCall()
        time.sleep(0.2)
        since_name = r.GetAllGpuValuesAsFieldNameDictSinceLastCall()
        assert sorted(since_id) == list(range(8))
        assert set(since_name[0]) == {"gpu_temp", "power_usage", "fb_used"}
        prev = max(v.ts for v in since_id[0][150])
        samples = since_name[0]["gpu_temp"]
        assert samples and all(v.ts > prev for v in samples)
        for v in samples:
            assert hasattr(v, "ts") and hasattr(v, "value") and hasattr(v, "isBlank")
            assert v.fieldId == 150 and v.isBlank is False
            assert isinstance(v.value, int) and 25 <= v.value <= 95


def test_process_and_dict_forms_keep_separate_positions() -> None:
    seen: List[int] = []

    class Counter(DcgmReader):
        def CustomDataHandler(self, fvs: Dict[int, Dict[int, List[Any]]]) -> None:
            seen.append(sum(len(s) for gpu in fvs.values() for s in gpu.values()))

    with Counter(fieldIds=[150], updateFrequency=50000, simulate=True) as r:
        r.Process()
        r.GetAllGpuValuesAsFieldIdDictSinceLastCall()
        time.sleep(0.2)
        r.GetAllGpuValuesAsFieldIdDictSinceLastCall()  # must not take Process's samples
        r.Process()
    assert seen[1] >= 8 * 2


def test_entities_and_v2_handlers() -> None:
    with dcgm.Handle.embedded(simulate=True) as h:
        instances = h.system().entities(dcgm_fields.DCGM_FE_GPU_I)
    assert instances, "the default simulated node has MIG instances on GPU 7"
    got: List[Tuple[int, int, str]] = []

    class EntityCollector(DcgmReader):
        def CustomFieldHandler_v2(self, entityGroupId: int, entityId: int, fieldId: int, fieldTag: str, val: Any) -> None:
            got.append((entityGroupId, entityId, fieldTag))

    class Pair:  # pydcgm's c_dcgmGroupEntityPair_t shape
        def __init__(self, group: int, eid: int) -> None:
            self.entityGroupId, self.entityId = group, eid

    entities = [Pair(*instances[0]), (dcgm_fields.DCGM_FE_GPU, 0)]
    with EntityCollector(fieldIds=[252], entities=entities, updateFrequency=50000, simulate=True) as r:
        r.Process()
        time.sleep(0.2)  # samples for the since-last-call forms, which start after Process's
        latest = r.GetLatestEntityValuesAsFieldIdDict()
        by_name = r.GetLatestEntityValuesAsFieldNameDict()
        since = r.GetAllEntityValuesAsFieldIdDictSinceLastCall()
        time.sleep(0.2)  # the two since-last-call forms share one position
        since_name = r.GetAllEntityValuesAsFieldNameDictSinceLastCall()
        gpu_only = r.GetLatestGpuValuesAsFieldIdDict()
    gi_group, gi_id = instances[0]
    assert (gi_group, gi_id, "fb_used") in got and (dcgm_fields.DCGM_FE_GPU, 0, "fb_used") in got
    assert latest == {gi_group: {gi_id: {252: GI_0_FB_USED_MIB}}, dcgm_fields.DCGM_FE_GPU: {0: {252: FB_USED_MIB}}}
    assert by_name[dcgm_fields.DCGM_FE_GPU][0] == {"fb_used": FB_USED_MIB}
    assert since[gi_group][gi_id][252] and all(v.fieldId == 252 for v in since[gi_group][gi_id][252])
    assert sorted(since_name) == [dcgm_fields.DCGM_FE_GPU, gi_group]
    fb_since = {
        group: {eid: [v.value for v in fields["fb_used"]] for eid, fields in by_entity.items()}
        for group, by_entity in since_name.items()
    }
    assert fb_since[gi_group][gi_id] and set(fb_since[gi_group][gi_id]) == {GI_0_FB_USED_MIB}
    assert fb_since[dcgm_fields.DCGM_FE_GPU][0] and set(fb_since[dcgm_fields.DCGM_FE_GPU][0]) == {FB_USED_MIB}
    assert list(gpu_only) == [0]
    assert dcgm.entity_group_id_to_string(gi_group) == "GPU INSTANCE"
    assert dcgm.entity_group_id_to_string(dcgm_fields.DCGM_FE_CPU) == ""


def test_field_interval_map_and_gpu_ids() -> None:
    intervals: Dict[int, List[Union[int, str]]] = {100000: [150], 1000000: ["power_usage"]}  # ids or names
    with DcgmReader(fieldIntervalMap=intervals, gpuIds=[1, 2], simulate=True) as r:
        d = r.GetLatestGpuValuesAsFieldNameDict()
    assert sorted(d) == [1, 2]
    assert set(d[1]) == {"gpu_temp", "power_usage"}


def test_default_process_prints_like_upstream(capsys: pytest.CaptureFixture[str]) -> None:
    with DcgmReader(fieldIds=[150], gpuIds=[0], simulate=True) as r:
        r.Process()
    out = capsys.readouterr().out
    assert out.startswith("GPU 0 field gpu_temp=")


def test_unknown_field_is_typed() -> None:
    r = DcgmReader(fieldIds=[9999], simulate=True)
    with pytest.raises(dcgm_structs.DCGMError_UnknownField):
        r.Init()


def test_unreachable_hostengine_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    r = DcgmReader(hostname="no-such-host.invalid", fieldIds=[150], simulate=True)
    with caplog.at_level(logging.ERROR):
        r.Init()
        assert r.GetLatestGpuValuesAsFieldIdDict() == {}
        r.Process()
    assert "nv-hostengine" in caplog.text
    assert r.IsSimulated() is None
    r.Shutdown()


def test_explicit_hostname_and_shutdown_reconnect() -> None:
    r = DcgmReader(hostname="localhost", fieldIds=[150], simulate=True)
    r.Init()
    assert r.m_reader is not None and r.m_reader.mode == "standalone"
    r.Shutdown()
    assert r.m_reader is None
    assert sorted(r.GetLatestGpuValuesAsFieldIdDict()) == list(range(8))  # reconnects
    r.Shutdown()


def test_nvidia_reader_is_this_reader_with_nvidia_parameters() -> None:
    """dcgm.compat's DcgmReader has no copy of the reads: it sets NVIDIA's behaviour."""
    from dcgm.compat.DcgmReader import DcgmReader as NvidiaReader

    shared = [n for n in vars(DcgmReader) if n.startswith(("GetLatest", "GetAll", "Custom"))]
    shared += ["Process", "Reconnect", "_since", "_sinceDict"]
    assert [n for n in shared if n in vars(NvidiaReader)] == []
    assert issubclass(NvidiaReader, DcgmReader)
    assert (DcgmReader._firstSinceLastCallEmpty, NvidiaReader._firstSinceLastCallEmpty) == (False, True)
    assert (DcgmReader._firstProcessLatest, NvidiaReader._firstProcessLatest) == (False, True)
