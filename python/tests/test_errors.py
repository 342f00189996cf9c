"""Every native error is raised as the DCGMError_<Name> subclass of its code."""

from __future__ import annotations

import pytest

import dcgm
import dcgm.structs as dcgm_structs


def test_unknown_gpu_is_badparam(handle: dcgm.Handle) -> None:
    with pytest.raises(dcgm_structs.DCGMError_Badparam) as e:
        handle.system().device_attributes(99)
    assert e.value.value == dcgm_structs.DCGM_ST_BADPARAM == e.value.code
    assert "dcgmGetDeviceAttributes" in str(e.value)
    with pytest.raises(dcgm_structs.DCGMError_Badparam):
        handle.group("bad-gpu", gpus=[99])


def test_caught_as_the_base_class_too(handle: dcgm.Handle) -> None:
    try:
        handle.system().device_attributes(1234)
    except dcgm.DCGMError as e:
        assert isinstance(e, dcgm_structs.DCGMError_Badparam)
    else:
        pytest.fail("no error")


@pytest.mark.parametrize("field", ["no_such_field", 9999, "DCGM_FI_DEV_NOPE", -1])
def test_unknown_field_is_typed(handle: dcgm.Handle, field: "int | str") -> None:
    with pytest.raises(dcgm_structs.DCGMError_UnknownField) as e:
        handle.field_group("bad-field", [150, field])
    assert str(field) in str(e.value)


def test_unknown_field_in_reader_is_typed() -> None:
    with pytest.raises(dcgm_structs.DCGMError_UnknownField):
        dcgm.Reader(["gpu_temp", "nope"], simulate=True)


def test_bad_arguments_are_badparam(handle: dcgm.Handle) -> None:
    fg = handle.field_group("args", [150])
    with pytest.raises(dcgm_structs.DCGMError_Badparam):
        handle.all_gpus().watch(fg, update_interval=-1.0)
    with pytest.raises(dcgm_structs.DCGMError_Badparam):
        handle.all_gpus().watch(fg, update_interval=0.0)
    with pytest.raises(dcgm_structs.DCGMError_Badparam):
        handle.field_group("empty", [])
    with pytest.raises(dcgm_structs.DCGMError_Badparam):
        handle.field_group("too-many", [f.field_id for f in dcgm.fields.all_fields()[:128]])
    with pytest.raises(dcgm_structs.DCGMError_Badparam):
        dcgm.Reader([150], address="localhost", embedded=True, simulate=True)
    with pytest.raises(TypeError):
        handle.group("bad-entity", entities=["GPU 0"])


def test_duplicate_field_group_name(handle: dcgm.Handle) -> None:
    a = handle.field_group("same-name", [150])
    with pytest.raises(dcgm_structs.DCGMError_DuplicateKey):
        handle.field_group("same-name", [155])
    a.destroy()
    with pytest.raises(dcgm_structs.DCGMError_Uninitialized):
        a.fields
    # Destroyed in DCGM, so the name is free again.
    b = handle.field_group("same-name", [155])
    assert b.fields == [155]
    a.close()  # closing a destroyed one is a no-op
    b.close()


def test_closed_objects_raise_uninitialized() -> None:
    h = dcgm.Handle.embedded(simulate=True)
    g = h.group("closing", gpus=[0])
    g.destroy()
    with pytest.raises(dcgm_structs.DCGMError_Uninitialized):
        g.entities()
    h.close()
    assert h.closed
    with pytest.raises(dcgm_structs.DCGMError_Uninitialized):
        h.system()
    h.close()  # twice is fine


def test_connection_refused_is_connection_not_valid() -> None:
    with pytest.raises(dcgm_structs.DCGMError_ConnectionNotValid):
        dcgm.Handle.connect("no-such-host.invalid", simulate=True)
