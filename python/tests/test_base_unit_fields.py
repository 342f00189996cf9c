"""DCGM 4.6.1's base-unit fields (ids 1600-1612, such as ``DCGM_FI_DEV_SM_CLOCK_HERTZ``): known
to ``dcgm.fields`` and ``dcgm.compat.dcgm_fields`` as 4.6.1's, and on the simulator in its
default 4.6.0 personality left out of field groups and read as a ``NOT_FOUND`` blank beside
the fields the release knows, never a failed group or read."""

from __future__ import annotations

import warnings

import dcgm
from dcgm import fields
from dcgm.compat import dcgm_fields

HZ = fields.DCGM_FI_DEV_SM_CLOCK_HERTZ
TEMP = fields.DCGM_FI_DEV_GPU_TEMP_CELSIUS
UNKNOWN_FIELD = -13  # DCGM_ST_UNKNOWN_FIELD


def test_the_base_unit_fields_are_4_6_1_s() -> None:
    assert HZ == fields.field_id("DCGM_FI_DEV_SM_CLOCK_HERTZ") == fields.field_id("sm_clock_hertz") == 1603
    assert fields.DCGM_FI_DEV_BAR1_CAPACITY_BYTES == 1600
    assert fields.DCGM_FI_DEV_FAN_SPEED_RATIO == 1612
    later = [f for f in fields.all_fields() if f.since is not None]
    assert [f.field_id for f in later] == list(range(1600, 1613))
    assert {f.since for f in later} == {"4.6.1"}
    meta = fields.field_info(HZ)
    assert meta is not None
    assert (meta.tag, meta.field_type, meta.unit, meta.since) == ("sm_clock_hertz", "i", "Hz", "4.6.1")
    energy = fields.field_info("DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL")
    assert energy is not None and (energy.field_type, energy.unit) == ("d", "J")
    assert fields.field_info(TEMP).since is None  # type: ignore[union-attr]
    # DCGM 4.6.1's bound: one past its last field.
    assert fields.DCGM_FI_MAX_FIELDS == 1613


def test_the_compat_module_has_them_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dcgm_fields.DCGM_FI_DEV_SM_CLOCK_HERTZ == 1603
        assert dcgm_fields.DCGM_FI_DEV_FAN_SPEED_RATIO == 1612
    assert dcgm_fields.DCGM_FI_MAX_FIELDS == 1613
    meta = dcgm_fields.DcgmFieldGetById(1603)
    assert meta is not None and meta.tag == "sm_clock_hertz"


def test_the_simulator_as_4_6_0_leaves_a_base_unit_field_out_and_reads_it_blank() -> None:
    with dcgm.Handle.embedded(simulate=True) as h:
        assert h.dcgm_version == "4.6.0"
        assert h.knows_field(TEMP) and not h.knows_field("DCGM_FI_DEV_SM_CLOCK_HERTZ")
        g = h.all_gpus()
        fg = h.field_group("base-unit", [TEMP, HZ])
        assert fg.fields == [TEMP]  # left out: the release would refuse the whole group
        with g.watch(fg):
            h.update_all_fields()
            assert {v.field_id for v in g.latest_values(fg)} == {TEMP}
            temp, hz = h.system().entities_latest_values([(fields.DCGM_FE_GPU, 0)], [TEMP, HZ])
    assert temp.field_id == TEMP and isinstance(temp.value, int) and temp.blank is None
    assert hz.field_id == HZ and hz.blank is dcgm.Blank.NOT_FOUND and hz.value is None
    assert hz.status == UNKNOWN_FIELD


def test_a_reader_reads_the_other_fields() -> None:
    for ignore_blank in (True, False):
        with dcgm.Reader([TEMP, HZ], simulate=True, ignore_blank=ignore_blank) as r:
            gpu = r.latest_by_id()[0]
        assert isinstance(gpu[TEMP], int), gpu
        assert HZ not in gpu, gpu
