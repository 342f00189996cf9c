"""DCGM's test API from Python: dcgm.testing (create_fake_*, inject_value, empty_cache) and the
pydcgm-compatible names of dcgm.agent_internal / dcgm.structs_internal, on the simulator.

Fake entities live until the engine stops: every test runs on a fresh engine (``engine``) and
gives the default node back after (``sim_config``)."""

from __future__ import annotations

import time
from typing import Any, Iterator

import pytest

import dcgm
import dcgm.agent_internal as dcgm_agent_internal
import dcgm.fields as F
import dcgm.structs as S
import dcgm.structs_internal as dcgm_structs_internal
from dcgm.testing import (
    create_fake_compute_instances,
    create_fake_gpu_instances,
    create_fake_gpus,
    empty_cache,
    inject_value,
)

GPU = dcgm.EntityGroup.GPU
TEMP = F.DCGM_FI_DEV_GPU_TEMP_CELSIUS  # 150
POWER = F.DCGM_FI_DEV_POWER_USAGE  # a double field
XID = F.DCGM_FI_DEV_XID_ERROR  # 230


@pytest.fixture
def engine(sim_config: Any) -> Iterator[dcgm.Handle]:
    sim_config(None)  # nothing open: the next handle starts a fresh engine
    h = dcgm.Handle.embedded(simulate=True)
    try:
        yield h
    finally:
        h.close()


def latest(h: dcgm.Handle, entity: Any, field: Any) -> dcgm.FieldValue:
    return h.system().entities_latest_values([entity], [field])[0]


def test_fake_gpus_are_listed_grouped_and_read(engine: dcgm.Handle) -> None:
    s = engine.system()
    before = len(s.gpu_ids())
    ids = create_fake_gpus(engine, 2)
    assert ids == [before, before + 1], "fake GPUs take the next GPU ids"
    assert set(ids) <= set(s.gpu_ids())
    assert create_fake_gpus(engine, 0) == []
    assert s.device_attributes(ids[1])["uuid"].startswith("GPU-")
    g = engine.group("fake", gpus=ids)
    assert g.gpu_ids() == ids
    fg = engine.field_group("fake-fg", [TEMP, POWER])
    with g.watch(fg, update_interval=0.1):
        engine.update_all_fields()
        values = g.latest_values(fg)
    assert sorted({v.entity_id for v in values}) == ids and len(values) == 4


def test_fake_mig_instances(engine: dcgm.Handle) -> None:
    gpu = create_fake_gpus(engine, 1)[0]
    gis = create_fake_gpu_instances(engine, gpu, 2)
    assert gis == [gpu * 8, gpu * 8 + 1]
    cis = create_fake_compute_instances(engine, gis[0], 2)
    assert cis == [gpu * 8, gpu * 8 + 1], "the n-th compute instance of a GPU takes id gpu * 8 + n"
    s = engine.system()
    assert {(dcgm.EntityGroup.GPU_I, i) for i in gis} <= set(s.entities(dcgm.EntityGroup.GPU_I))
    assert {(dcgm.EntityGroup.GPU_CI, i) for i in cis} <= set(s.entities(dcgm.EntityGroup.GPU_CI))


def test_injected_temperature_is_read_back_with_its_timestamp(engine: dcgm.Handle) -> None:
    gpu = create_fake_gpus(engine, 1)[0]
    at = time.time() - 1.0
    inject_value(engine, gpu, TEMP, 95, timestamp=at)
    v = latest(engine, (GPU, gpu), TEMP)
    assert (v.value, v.blank, v.timestamp_us) == (95, None, round(at * 1e6))
    # Stored as round(timestamp * 1e6), ties to even as Python rounds, to the microsecond; a
    # microsecond already taken moves one later, as libdcgm's time series stores a duplicate.
    prev = round(at * 1e6)
    for k in range(1, 17):
        t = at + k * 1.25e-7
        inject_value(engine, gpu, TEMP, 95 + k, timestamp=t)
        want = max(round(t * 1e6), prev + 1)
        assert latest(engine, (GPU, gpu), TEMP).timestamp_us == want, k
        prev = want
    # An entity pair and a field tag work too; no timestamp means now.
    t0 = time.time()
    inject_value(engine, (GPU, 0), "gpu_temp", 42)
    v = latest(engine, (GPU, 0), TEMP)
    assert v.value == 42 and t0 - 1.0 <= v.timestamp <= time.time() + 1.0
    inject_value(engine, gpu, POWER, 321.5)
    assert latest(engine, (GPU, gpu), POWER).value == 321.5


def test_injected_xid_raises_a_policy_violation_and_a_health_incident(engine: dcgm.Handle) -> None:
    gpu = engine.system().gpu_ids()[0]
    g = engine.group("xid", gpus=[gpu])
    g.policy_set(xid=True)
    g.health_set(dcgm.HealthSystem.PCIE | dcgm.HealthSystem.MEM | dcgm.HealthSystem.DRIVER)
    g.health_check()
    at = time.time() - 2.0  # before the subscription: it counts from when it became known
    with g.policy_subscribe(dcgm.PolicyCondition.XID) as sub:
        inject_value(engine, gpu, XID, 79, timestamp=at)
        v = sub.get(timeout=5.0)
    assert v is not None, "no XID violation within 5 s"
    assert (v["gpu"], v["condition"], v["xid"], v["timestamp_us"]) == (
        gpu,
        dcgm.PolicyCondition.XID,
        79,
        round(at * 1e6),
    )
    report = g.health_check()
    assert report["overall"] == "FAIL" and not report["healthy"], report
    assert any(
        i["entity"] == (GPU, gpu) and "FALLEN_OFF_BUS" in str(i["error_name"]) for i in report["incidents"]
    ), report


def test_empty_cache_blanks_the_injected_value(engine: dcgm.Handle) -> None:
    inject_value(engine, 0, TEMP, 80)
    assert latest(engine, (GPU, 0), TEMP).value == 80
    empty_cache(engine)
    v = latest(engine, (GPU, 0), TEMP)
    assert v.value is None and v.is_blank


def test_bad_arguments_raise_typed_errors(engine: dcgm.Handle) -> None:
    gpu = engine.system().gpu_ids()[0]
    with pytest.raises(S.DCGMError_Badparam):
        create_fake_gpus(engine, -1)
    with pytest.raises(S.DCGMError_GenericError):
        create_fake_gpu_instances(engine, 9999, 1)
    with pytest.raises(S.DCGMError_GenericError):
        create_fake_compute_instances(engine, 9999, 1)
    with pytest.raises(S.DCGMError_Badparam):
        inject_value(engine, gpu, TEMP, 1.5)  # not the field's type
    with pytest.raises(S.DCGMError_Badparam):
        inject_value(engine, gpu, TEMP, b"\x01")  # type: ignore[arg-type]
    with pytest.raises(S.DCGMError_Badparam):
        inject_value(engine, 9999, TEMP, 50)
    with pytest.raises(S.DCGMError_Badparam):
        inject_value(engine, gpu, TEMP, 50, timestamp=-1.0)
    with pytest.raises(S.DCGMError_Badparam):
        inject_value(engine, gpu, TEMP, 2**70)
    with pytest.raises(S.DCGMError_UnknownField):
        inject_value(engine, gpu, "no_such_field", 50)
    with pytest.raises(TypeError):
        inject_value(engine, "gpu0", TEMP, 50)
    with pytest.raises(TypeError):
        create_fake_gpus("not a handle", 1)  # type: ignore[arg-type]
    closed = dcgm.Handle.embedded(simulate=True)
    closed.close()
    with pytest.raises(S.DCGMError_Uninitialized):
        empty_cache(closed)


def test_agent_internal_names(engine: dcgm.Handle) -> None:
    before = len(engine.system().gpu_ids())
    cfe = dcgm_structs_internal.c_dcgmCreateFakeEntities_v2()
    for _ in range(2):
        cfe.entityList[cfe.numToCreate].entity.entityGroupId = F.DCGM_FE_GPU
        cfe.numToCreate += 1
    e = cfe.entityList[cfe.numToCreate]
    e.entity.entityGroupId = F.DCGM_FE_GPU_I
    e.parent.entityGroupId = F.DCGM_FE_GPU
    e.parent.entityId = before
    cfe.numToCreate += 1
    out = dcgm_agent_internal.dcgmCreateFakeEntities(engine, cfe)
    assert out is cfe and out.version == dcgm_structs_internal.dcgmCreateFakeEntities_version2
    assert [cfe.entityList[i].entity.entityId for i in range(3)] == [before, before + 1, before * 8]

    field = dcgm_structs_internal.c_dcgmInjectFieldValue_v1()
    field.version = dcgm_structs_internal.dcgmInjectFieldValue_version1
    field.fieldId = TEMP
    field.fieldType = ord(F.DCGM_FT_INT64)
    field.ts = int((time.time() - 1.0) * 1e6)
    field.value.i64 = 91
    assert dcgm_agent_internal.dcgmInjectFieldValue(engine, before, field) == S.DCGM_ST_OK
    v = latest(engine, (GPU, before), TEMP)
    assert (v.value, v.timestamp_us) == (91, field.ts)
    field.value.i64 = 92
    field.ts = 0
    assert dcgm_agent_internal.dcgmInjectEntityFieldValue(engine, F.DCGM_FE_GPU, before + 1, field) == 0
    assert latest(engine, (GPU, before + 1), TEMP).value == 92
    assert dcgm_agent_internal.dcgmEmptyCache(engine) == S.DCGM_ST_OK
    assert latest(engine, (GPU, before + 1), TEMP).is_blank

    field.fieldType = F.DCGM_FT_BINARY
    with pytest.raises(S.DCGMError_Badparam):
        dcgm_agent_internal.dcgmInjectFieldValue(engine, before, field)
    bad = dcgm_structs_internal.c_dcgmCreateFakeEntities_v2()
    bad.entityList[0].entity.entityGroupId = F.DCGM_FE_LINK
    bad.numToCreate = 1
    with pytest.raises(S.DCGMError_NotSupported):
        dcgm_agent_internal.dcgmCreateFakeEntities(engine, bad)
    bad.entityList[0].entity.entityGroupId = F.DCGM_FE_GPU_I
    bad.entityList[0].parent.entityGroupId = F.DCGM_FE_GPU_I
    with pytest.raises(S.DCGMError_Badparam):
        dcgm_agent_internal.dcgmCreateFakeEntities(engine, bad)


def test_nvidia_module_takes_a_handle_and_its_ctypes_requests(engine: dcgm.Handle) -> None:
    """dcgm.agent_internal is a view of dcgm.compat.dcgm_agent_internal, which takes a
    dcgm.Handle with its own ctypes structures too."""
    from dcgm.compat import dcgm_agent_internal as nvidia, dcgm_structs_internal as nvidia_structs

    before = len(engine.system().gpu_ids())
    cfe = nvidia_structs.c_dcgmCreateFakeEntities_v2()
    cfe.entityList[0].entity.entityGroupId = F.DCGM_FE_GPU
    cfe.numToCreate = 1
    assert nvidia.dcgmCreateFakeEntities(engine, cfe) is cfe
    assert cfe.entityList[0].entity.entityId == before
    field = nvidia_structs.c_dcgmInjectFieldValue_v1()
    field.version = nvidia_structs.dcgmInjectFieldValue_version1
    field.fieldId = TEMP
    field.fieldType = ord(F.DCGM_FT_INT64)
    field.value.i64 = 93
    assert nvidia.dcgmInjectFieldValue(engine, before, field) == S.DCGM_ST_OK
    assert latest(engine, (GPU, before), TEMP).value == 93
    assert nvidia.dcgmEmptyCache(engine) == S.DCGM_ST_OK
    assert latest(engine, (GPU, before), TEMP).is_blank
