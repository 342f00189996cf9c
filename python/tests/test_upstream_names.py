"""The names of NVIDIA's bindings: dcgm.fields (dcgm_fields), dcgm.structs (dcgm_structs)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

import dcgm
import dcgm.fields as dcgm_fields
import dcgm.structs as dcgm_structs

HERE = os.path.dirname(os.path.abspath(__file__))


def test_every_field_name_and_pre_46_alias_is_a_constant() -> None:
    table = dcgm_fields.all_fields()
    assert len(table) >= 600
    names = [f.name for f in table]
    assert len(set(names)) == len(names)
    for f in table:
        assert f.name is not None
        assert getattr(dcgm_fields, f.name) == f.field_id
        for alias in f.deprecated_aliases:
            assert getattr(dcgm_fields, alias) == f.field_id, alias
    assert len(dcgm_fields.DEPRECATED_ALIASES) >= 300
    for alias, name in dcgm_fields.DEPRECATED_ALIASES.items():
        assert getattr(dcgm_fields, alias) == getattr(dcgm_fields, name)


def test_well_known_fields_and_aliases() -> None:
    assert dcgm_fields.DCGM_FI_DEV_GPU_TEMP_CELSIUS == 150
    assert dcgm_fields.DCGM_FI_DEV_GPU_TEMP == 150  # the pre-4.6 name
    assert dcgm_fields.DCGM_FI_DEV_POWER_USAGE == dcgm_fields.DCGM_FI_DEV_BOARD_POWER_WATTS == 155
    assert dcgm_fields.DCGM_FI_DEV_GPU_UTIL == 203
    assert dcgm_fields.DCGM_FI_DRIVER_VERSION == dcgm_fields.DCGM_FI_SYSTEM_DRIVER_VERSION == 1
    assert dcgm_fields.DCGM_FI_UNKNOWN == dcgm_fields.DCGM_FI_SYSTEM_FIELD_UNKNOWN == 0
    assert dcgm_fields.DCGM_FI_MAX_FIELDS > max(f.field_id for f in dcgm_fields.all_fields())


def test_entity_groups_and_types() -> None:
    expected = {
        "DCGM_FE_NONE": 0,
        "DCGM_FE_GPU": 1,
        "DCGM_FE_VGPU": 2,
        "DCGM_FE_SWITCH": 3,
        "DCGM_FE_GPU_I": 4,
        "DCGM_FE_GPU_CI": 5,
        "DCGM_FE_LINK": 6,
        "DCGM_FE_CPU": 7,
        "DCGM_FE_CPU_CORE": 8,
        "DCGM_FE_CONNECTX": 9,
    }
    for name, value in expected.items():
        assert getattr(dcgm_fields, name) == value
        assert dcgm.EntityGroup[name[len("DCGM_FE_"):]] == value
    assert dcgm_fields.DCGM_FE_COUNT == 10
    assert dcgm_fields.entity_group_name(dcgm_fields.DCGM_FE_GPU_I) == "GPU_I"
    assert (dcgm_fields.DCGM_FT_INT64, dcgm_fields.DCGM_FT_DOUBLE, dcgm_fields.DCGM_FT_STRING) == ("i", "d", "s")


def test_field_helpers() -> None:
    meta = dcgm_fields.DcgmFieldGetById(dcgm_fields.DCGM_FI_DEV_GPU_TEMP)
    assert meta is not None
    assert (meta.tag, meta.fieldId, meta.fieldType, meta.field_type) == ("gpu_temp", 150, "i", "i")
    assert meta.name == "DCGM_FI_DEV_GPU_TEMP_CELSIUS"
    assert "DCGM_FI_DEV_GPU_TEMP" in meta.deprecated_aliases
    assert dcgm_fields.DcgmFieldGetByTag("power_usage").fieldId == 155  # type: ignore[union-attr]
    assert dcgm_fields.DcgmFieldGetTagById(203) == "gpu_utilization"
    assert dcgm_fields.DcgmFieldGetIdByTag("fb_used") == 252
    assert dcgm_fields.DcgmFieldGetById(9999) is None
    assert dcgm_fields.DcgmFieldGetIdByTag("no_such_tag") is None
    for key in (150, "gpu_temp", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_TEMP_CELSIUS"):
        assert dcgm_fields.field_id(key) == 150
    assert dcgm_fields.field_tag("DCGM_FI_DEV_FB_USED") == "fb_used"
    with pytest.raises(dcgm_structs.DCGMError_UnknownField):
        dcgm_fields.field_id("no_such_field")


def test_every_return_code_and_its_exception_class() -> None:
    codes = dcgm_structs.RETURN_CODE_NAMES
    assert len(codes) == 67
    assert dcgm_structs.DCGM_ST_OK == 0
    assert dcgm_structs.DCGM_ST_BADPARAM == -1
    assert dcgm_structs.DCGM_ST_GPUS_DETACHED == -67
    for code, name in codes.items():
        assert getattr(dcgm_structs, name) == code
        if code == 0:
            continue
        cls = dcgm_structs.dcgmExceptionClass(code)
        assert cls is not dcgm_structs.DCGMError
        assert issubclass(cls, dcgm_structs.DCGMError) and issubclass(cls, Exception)
        assert getattr(dcgm_structs, cls.__name__) is cls
        assert cls.__module__ == "dcgm.structs"


@pytest.mark.parametrize(
    "name, code",
    [
        ("DCGMError_Badparam", -1),
        ("DCGMError_NotSupported", -6),
        ("DCGMError_UnknownField", -13),
        ("DCGMError_ConnectionNotValid", -21),
        ("DCGMError_LibraryNotFound", -25),
        ("DCGMError_DuplicateKey", -26),
        ("DCGMError_3rdPartyLibraryError", -48),
        ("DCGMError_GpusDetached", -67),
    ],
)
def test_exception_class_names_are_pydcgm_s(name: str, code: int) -> None:
    cls = getattr(dcgm_structs, name)
    assert dcgm_structs.dcgmExceptionClass(code) is cls
    e = dcgm_structs.DCGMError(code)  # pydcgm style: the base class builds the subclass
    assert type(e) is cls
    assert (e.value, e.code) == (code, code)
    assert e.name == dcgm_structs.RETURN_CODE_NAMES[code]
    assert str(e) == dcgm_structs.RETURN_CODE_DESCRIPTIONS[code]
    assert cls().value == code


def test_exception_carries_message_and_hint_and_pickles() -> None:
    e = dcgm_structs.DCGMError_NoPermission(-17, "dcgmConfigSet failed", "run as root")
    assert (e.message, e.hint) == ("dcgmConfigSet failed", "run as root")
    assert str(e) == "dcgmConfigSet failed (hint: run as root)"
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is dcgm_structs.DCGMError_NoPermission
    assert (back.value, back.message, back.hint) == (-17, "dcgmConfigSet failed", "run as root")
    assert dcgm.DCGMError is dcgm_structs.DCGMError
    assert dcgm.dcgmExceptionClass(12345) is dcgm_structs.DCGMError


def test_generated_stubs_match_the_native_tables() -> None:
    tool = os.path.join(HERE, "..", "tools", "gen_stubs.py")
    installed = os.path.dirname(dcgm.__file__)
    r = subprocess.run(
        [sys.executable, tool, "--check", "--dir", installed], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr


def test_dcgm_4_6_1_names_are_the_same_fields() -> None:
    from dcgm import fields

    assert fields.DCGM_FI_DEV_CPU_UTIL_RATIO == fields.DCGM_FI_DEV_CPU_UTIL_TOTAL == 1100
    assert fields.NEWER_NAMES["DCGM_FI_DEV_NVLINK_LINK_STATUS"] == "DCGM_FI_DEV_NVLINK_GET_STATE"
    assert len(fields.NEWER_NAMES) == 36
    assert fields.field_id("DCGM_FI_DEV_SYSIO_POWER_WATTS") == 1132
    meta = fields.field_info(1100)
    assert meta is not None and "DCGM_FI_DEV_CPU_UTIL_RATIO" in meta.newer_names
