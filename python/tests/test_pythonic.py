"""The snake_case API: Handle, System, Group, FieldGroup, Watch, FieldValue, Reader."""

from __future__ import annotations

import time

import pytest

import dcgm
import dcgm.fields as F


def test_handle_properties(handle: dcgm.Handle) -> None:
    assert handle.is_simulated is True
    assert handle.kind == "embedded" and handle.address is None
    assert handle.library_path == dcgm.simulator_path()
    assert "simulated" in repr(handle)


def test_system_describes_the_simulated_h100s(handle: dcgm.Handle) -> None:
    s = handle.system()
    assert s.gpu_ids() == list(range(8))
    assert s.supported_gpu_ids() == list(range(8))
    gis = s.entities(dcgm.EntityGroup.GPU_I)
    assert gis and all(g == F.DCGM_FE_GPU_I for g, _ in gis)
    assert s.entities(F.DCGM_FE_GPU) == [(1, i) for i in range(8)]
    a = s.device_attributes(0)
    assert a["name"].startswith("NVIDIA") and a["uuid"].startswith("GPU-")
    assert (a["memory_total_mib"], a["memory_used_mib"], a["memory_free_mib"]) == (81559, 62610, 18949)
    assert a["supported_clocks"] == [(2619, 1980)]  # (memory, SM) MHz
    assert (s.gpu_status(0), s.chip_architecture(0)) == ("Ok", "Hopper")
    for key in (150, "gpu_temp", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_TEMP_CELSIUS"):
        m = s.field_meta(key)
        assert m is not None and (m.field_id, m.tag) == (150, "gpu_temp")
    assert s.field_meta("no_such_field") is None
    v = s.library_version()
    assert (v["version"], v["fields"]["version"], v["fields"]["buildtype"]) == ("4.6.0", "4.6.0", "Simulated library")
    assert v["raw"] == ";".join("%s:%s" % kv for kv in v["fields"].items())
    assert s.hostengine_version()["fields"]["buildtype"] == "Simulated hostengine"
    assert s.hostengine_healthy() is True


def test_group_field_group_watch_and_latest_values(handle: dcgm.Handle) -> None:
    g = handle.group("pythonic", gpus=[0, 1], entities=[(dcgm.EntityGroup.GPU, 2)])
    assert sorted(g.entities()) == [(1, 0), (1, 1), (1, 2)]
    assert g.gpu_ids() == [0, 1, 2]
    assert g.name == "pythonic"
    fg = handle.field_group("pythonic-fields", ["gpu_temp", F.DCGM_FI_DEV_POWER_USAGE, "DCGM_FI_DEV_FB_USED"])
    assert fg.fields == [150, 155, 252] and fg.name == "pythonic-fields"
    with g.watch(fg, update_interval=0.1, max_keep_age=60.0) as w:
        assert w.active and w.update_interval == pytest.approx(0.1)
        handle.update_all_fields()
        values = g.latest_values(fg)
        assert len(values) == 9
        for v in values:
            assert v.entity_group == dcgm.EntityGroup.GPU and v.entity_id in (0, 1, 2)
            assert v.entity == (v.entity_group, v.entity_id)
            assert v.field_id in (150, 155, 252)
            assert v.timestamp_us > 1_600_000_000_000_000
            assert v.timestamp == pytest.approx(v.timestamp_us / 1e6)
            assert v.blank is None and v.is_blank is False and v.status == 0
            low, high = {150: (25, 95), 155: (50.0, 700.0), 252: (62610, 62610)}[v.field_id]
            assert isinstance(v.value, (int, float)) and low <= v.value <= high, v
            assert v.field_tag == F.DcgmFieldGetTagById(v.field_id)
    assert not w.active
    g.add_gpu(3)
    g.remove_entity((1, 0))
    assert g.gpu_ids() == [1, 2, 3]
    g.destroy()
    with pytest.raises(dcgm.structs.DCGMError_Uninitialized):
        g.gpu_ids()


def test_values_since_with_a_cursor(handle: dcgm.Handle) -> None:
    g = handle.all_gpus()
    fg = handle.field_group("since", [150])
    cursor = dcgm.SinceCursor()
    with g.watch(fg, update_interval=0.05):
        handle.update_all_fields()
        first = g.values_since(fg, cursor)
        after_first = cursor.timestamp_us
        assert first and after_first >= max(v.timestamp_us for v in first)
        time.sleep(0.2)
        second = g.values_since(fg, cursor)
    assert second and min(v.timestamp_us for v in second) > max(v.timestamp_us for v in first)
    assert cursor.timestamp_us > after_first


def test_entities_latest_values(handle: dcgm.Handle) -> None:
    g = handle.all_gpus()
    fg = handle.field_group("entities-latest", [150, 155])
    with g.watch(fg):
        handle.update_all_fields()
        vals = handle.system().entities_latest_values([(1, 0), (1, 5)], ["gpu_temp", 155])
    assert [(v.entity_id, v.field_id) for v in vals] == [(0, 150), (0, 155), (5, 150), (5, 155)]


def test_manual_mode_samples_only_on_request() -> None:
    with dcgm.Handle.embedded(simulate=True, manual=True) as h:
        g = h.all_gpus()
        fg = h.field_group("manual", [150])
        with g.watch(fg, update_interval=0.01):
            # As libdcgm: the first watch of a field samples it once, even in manual mode.
            first = g.latest_values(fg)
            time.sleep(0.1)
            before = g.latest_values(fg)
            h.update_all_fields(wait=True)
            after = g.latest_values(fg)
    assert all(not v.is_blank for v in first)
    assert [v.timestamp for v in before] == [v.timestamp for v in first]
    assert all(a.timestamp > b.timestamp for a, b in zip(after, before))


def test_reader_snake_case() -> None:
    with dcgm.Reader(["gpu_temp", "power_usage", 252], update_interval=0.05, simulate=True) as r:
        assert r.mode is None  # not connected yet
        latest = r.latest()
        assert r.mode in ("standalone", "embedded") and r.is_simulated is True
        assert sorted(latest) == [(1, i) for i in range(8)]
        assert set(latest[(1, 0)]) == {150, 155, 252}
        v = latest[(1, 0)][150]
        assert (v.entity, v.field_id, v.field_tag, v.blank) == ((1, 0), 150, "gpu_temp", None)
        assert isinstance(v.value, int) and 25 <= v.value <= 95
        by_name = r.latest_by_name()
        assert set(by_name[0]) == {"gpu_temp", "power_usage", "fb_used"}
        by_id = r.latest_by_id()
        watts = by_id[7][155]
        assert isinstance(watts, float) and 50.0 < watts <= 700.0
        assert by_id[7][252] == 9610  # GPU 7 runs a 9000 MiB process
        first = r.since_last_call()
        time.sleep(0.2)
        second = r.since_last_call()
        last = max(v.timestamp_us for v in first[(1, 0)][150])
        assert all(v.timestamp_us > last for v in second[(1, 0)][150])
        gpus = r.gpus()
        assert [g["gpu"] for g in gpus] == list(range(8))
        assert set(gpus[0]) == {"gpu", "uuid", "pci_bus_id", "name"}
        assert r.reconnects == 0


def test_reader_embedded_and_remote() -> None:
    with dcgm.Reader([150], embedded=True, simulate=True, gpu_ids=[2]) as r:
        assert list(r.latest_by_id()) == [2]
        assert r.mode == "embedded" and r.address is None
    with dcgm.Reader([150], address="localhost", simulate=True) as r:
        r.connect()
        assert (r.mode, r.address) == ("standalone", "localhost")


def test_reader_default_fields_and_ignore() -> None:
    with dcgm.Reader(simulate=True, ignore=["sm_clock"]) as r:
        by_id = r.latest_by_id()
    assert F.DCGM_FI_DEV_SM_CLOCK not in by_id[0]
    assert F.DCGM_FI_DEV_GPU_TEMP in by_id[0]
