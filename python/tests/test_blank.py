"""Fields with no value come out as dcgm.Blank members, never as DCGM's sentinel numbers."""

from __future__ import annotations

from typing import Any

import dcgm
from dcgm import DcgmReader

NO_VALUE = {"faults": {"blank_fields": [203], "unsupported_fields": [150]}}
SENTINELS = {0x7FFFFFF0, 0x7FFFFFF1, 0x7FFFFFF2, 0x7FFFFFF3, 0x7FFFFFFFFFFFFFF0, 140737488355328.0}


def test_blank_enum() -> None:
    assert [b.name for b in dcgm.Blank] == ["BLANK", "NOT_FOUND", "NOT_SUPPORTED", "NOT_PERMISSIONED"]


def test_field_values_carry_blank_kinds(sim_config: Any) -> None:
    sim_config(NO_VALUE)
    with dcgm.Handle.embedded(simulate=True) as h:
        g = h.all_gpus()
        fg = h.field_group("blanks", [150, 203, 155])
        with g.watch(fg):
            h.update_all_fields()
            values = g.latest_values(fg)
    by_field: dict = {}
    for v in values:
        by_field.setdefault(v.field_id, []).append(v)
    for v in by_field[150]:
        assert v.blank is dcgm.Blank.NOT_SUPPORTED and v.value is None and v.is_blank and v.isBlank
    for v in by_field[203]:
        assert v.blank is dcgm.Blank.BLANK and v.value is None and v.is_blank
    for v in by_field[155]:
        assert v.blank is None and 50.0 < v.value <= 700.0 and v.value not in SENTINELS  # watts


def test_reader_keeps_or_drops_blanks(sim_config: Any) -> None:
    sim_config(NO_VALUE)
    with dcgm.Reader([150, 203, 155], simulate=True) as r:
        assert set(r.latest_by_id()[0]) == {155}  # ignore_blank=True, as upstream
    with dcgm.Reader([150, 203, 155], simulate=True, ignore_blank=False) as r:
        d = r.latest_by_name()[0]
        assert d["gpu_temp"] is dcgm.Blank.NOT_SUPPORTED
        assert d["gpu_utilization"] is dcgm.Blank.BLANK
        watts = d["power_usage"]
        assert isinstance(watts, float) and 50.0 < watts <= 700.0
        samples = r.since_last_call()[(1, 0)][203]
        assert samples and all(s.blank is dcgm.Blank.BLANK and s.value is None for s in samples)


def test_dcgm_reader_blank_handling(sim_config: Any) -> None:
    sim_config(NO_VALUE)
    seen: dict = {}

    class Collector(DcgmReader):
        def CustomFieldHandler(self, gpuId: int, fieldId: int, fieldTag: str, val: Any) -> None:
            seen[fieldTag] = val

    with Collector(fieldIds=[150, 203, 155], simulate=True) as r:
        r.Process()
        assert set(seen) == {"power_usage"}
        assert set(r.GetLatestGpuValuesAsFieldNameDict()[0]) == {"power_usage"}
    with DcgmReader(fieldIds=[150, 203, 155], simulate=True, ignoreBlank=False) as r2:
        d = r2.GetLatestGpuValuesAsFieldIdDict()[0]
        assert d[150] is dcgm.Blank.NOT_SUPPORTED and d[203] is dcgm.Blank.BLANK
        series = r2.GetAllGpuValuesAsFieldIdDictSinceLastCall()[0][203]
        assert series and all(v.isBlank and v.value is None for v in series)


def test_blank_attributes_are_none_never_sentinel_numbers(sim_config: Any) -> None:
    sim_config({"faults": {"blank_attributes": True}})
    h = dcgm.Handle.embedded(simulate=True)
    try:
        a = h.system().device_attributes(0)
        for key in ("memory_total_mib", "power_limit_w", "slowdown_temp_c", "pci_device_id", "serial", "vbios"):
            assert a[key] is None, (key, a)
        for s in ("2147483632", "4294967280", "4294967295"):
            assert s not in repr(a)
    finally:
        h.close()


def test_blank_struct_answers_are_none_never_sentinel_numbers(sim_config: Any) -> None:
    sim_config({"faults": {"blank_structs": True}})
    h = dcgm.Handle.embedded(simulate=True)
    try:
        mig = h.system().mig_hierarchy()
        gi = mig[0]["instances"][0]
        assert (gi["nvml_instance_id"], gi["profile_id"], gi["slices"]) == (None, None, None), gi
        cpus = h.system().cpu_hierarchy()
        assert all(c["serial"] is None for c in cpus), cpus
        for s in ("2147483632", "4294967280", "4294967295"):
            assert s not in repr(mig) and s not in repr(cpus)
    finally:
        h.close()
