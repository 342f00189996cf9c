"""Differential runs of NVIDIA's own programs: each runs on NVIDIA's bindings and on this
package (``python -m dcgm.compat``, from NVIDIA's bindings directory so that its binding
modules are shadowed), on the same library, and the outputs are compared (see
programs/_harness.py for what may differ). On the simulator always; on the real libdcgm with
the H200 capture where it is present."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest

from programs import _harness as h

pytestmark = pytest.mark.usefixtures("nvidia_present")


@pytest.fixture
def nvidia_present() -> None:
    h.need_nvidia()


@pytest.fixture(params=["sim", "real"])
def lib(request: Any, tmp_path: Path) -> h.Library:
    if request.param == "sim":
        return h.simulator(tmp_path)
    return h.real_library()


def both(script: Path, args: List[str], lib: h.Library, extra: Any = ()) -> "tuple[h.Run, h.Run]":
    nv = h.run(*h.nvidia_command(script, args, lib, extra))
    ours = h.run(*h.ours_command(script, args, lib, extra))
    return nv, ours


def pairs(script: Path, arg_sets: List[List[str]], lib: h.Library, extra: Any = (),
          fresh: bool = False) -> "List[tuple[h.Run, h.Run]]":
    """NVIDIA's and ours for each argument list, for programs that connect to an
    nv-hostengine at localhost (they have no embedded mode): the simulator answers such a
    connection itself; on the real library they run against a private host engine."""
    commands = []
    for args in arg_sets:
        commands += [h.nvidia_command(script, args, lib, extra), h.ours_command(script, args, lib, extra)]
    if lib.name == "real":
        runs = h.private_hostengine(lib, commands, fresh=fresh)
    else:
        runs = [h.run(*c) for c in commands]
    return [(runs[i], runs[i + 1]) for i in range(0, len(runs), 2)]


def assert_same(nv: h.Run, ours: h.Run) -> None:
    assert ours.rc == nv.rc, "exit status: NVIDIA's %d, ours %d\n%s\n%s" % (nv.rc, ours.rc, nv.describe(),
                                                                             ours.describe())
    problems = h.text_diff(nv.out, ours.out)
    assert not problems, "\n".join(problems[:20]) + "\n" + nv.describe() + "\n" + ours.describe()


# --- sdk_samples/scripts ---


def test_dcgm_example(lib: h.Library) -> None:
    h.need_compat("pydcgm", "dcgm_agent", "dcgmvalue")
    nv, ours = both(h.SAMPLES / "dcgm_example.py", [], lib)
    assert nv.rc == 0, nv.describe()
    assert_same(nv, ours)
    assert "GPU Id      : 0" in ours.out


def test_dcgm_reader_example(lib: h.Library) -> None:
    script = h.SAMPLES / "DcgmReaderExample.py"
    [(nv, ours)] = pairs(script, [[]], lib)
    # NVIDIA's fails in its third example: DataHandlerReader reads m_publishFieldIds, which
    # NVIDIA's DcgmReader does not have. Ours provides it (a documented difference): up to
    # that point the outputs are the same, and ours goes on to the end.
    assert nv.rc == 1 and "m_publishFieldIds" in nv.err, nv.describe()
    assert ours.rc == 0, ours.describe()
    cut = "Processing in field order"
    nv_head = nv.out[: nv.out.index(cut)]
    ours_head = ours.out[: ours.out.index(cut)]
    problems = h.text_diff(nv_head, ours_head)
    assert not problems, "\n".join(problems[:20])
    tail = ours.out[ours.out.index(cut):]
    assert "Values for power_usage: GPU0=" in tail
    assert "Printing a little differently" in tail
    assert "GPU 0 power_usage(155) = " in tail
    # the first example's lines, one per non-blank field and GPU
    assert nv_head.count("GPU 0 field ") == ours_head.count("GPU 0 field ") > 10


# --- telegraf and fluentd: JSON over UDP ---


@pytest.mark.parametrize("program", ["dcgm_telegraf.py", "dcgm_fluentd.py"])
def test_json_publishers(program: str, lib: h.Library) -> None:
    script = h.BINDINGS / program

    def publish(command: Any, count: int, extra: Any = ()) -> "tuple[List[Dict[str, Any]], h.Run]":
        listener = h.UdpListener()
        try:
            args = ["-e", "-i", "1", "-p", str(listener.port), "-t", "127.0.0.1"]
            argv, env = command(script, args, lib, extra)
            return h.stream_program(argv, env, listener, count, timeout=20)
        finally:
            listener.close()

    if lib.name == "sim":
        # NVIDIA's bindings: the program crashes at its first send on Python 3 (shown on the
        # simulator; the real library's run is the same program).
        got, nv = publish(h.nvidia_command, 1)
        assert not got, "NVIDIA's delivered: %r" % (got,)
        assert nv.rc == 1 and "a bytes-like object is required" in nv.err, nv.describe()
    # The oracle: NVIDIA's bindings with socket.sendto taught to encode str: what NVIDIA's
    # DcgmJsonReader makes of the library's values, one object per GPU, in two rounds.
    oracle, nv2 = publish(h.nvidia_command, 2 * lib.gpus, [h.SENDTO_FIX])
    assert len(oracle) == 2 * lib.gpus, nv2.describe()
    # Ours delivers, unaided: two rounds (Process runs every second).
    sent, ours = publish(h.ours_command, 2 * lib.gpus)
    assert len(sent) == 2 * lib.gpus, ours.describe()
    assert "Traceback" not in ours.err, ours.describe()
    for n, round_ in enumerate((sent[: lib.gpus], sent[lib.gpus:])):
        expected = {d["gpu_uuid"]: d for d in oracle[n * lib.gpus: (n + 1) * lib.gpus]}
        by_uuid = {d["gpu_uuid"]: d for d in round_}
        assert set(by_uuid) == set(expected), (sorted(by_uuid), sorted(expected))
        problems: List[str] = []
        for uuid, obj in by_uuid.items():
            problems += h.json_diff(expected[uuid], obj, "round %d, %s: " % (n + 1, uuid[:12]))
            assert list(obj)[-1] == "gpu_uuid"
        assert not problems, "\n".join(problems[:20])
    if lib.name == "sim":
        # and the values are the library's, as NVIDIA's DcgmReader reads them now
        values = h.library_values(lib)
        problems = []
        for uuid in expected:
            lib_obj = {k: by_uuid[uuid][k] for k in values[uuid] if k in by_uuid[uuid]}
            problems += h.json_diff(values[uuid], lib_obj, "%s vs the library: " % uuid[:12])
    assert not problems, "\n".join(problems[:20])


# --- collectd ---


def test_collectd_plugin(lib: h.Library) -> None:
    h.need_compat("pydcgm", "dcgm_fields", "dcgm_structs", "dcgm_fields_collectd")
    driver = h.HERE / "collectd_driver.py"
    extra = [h.COLLECTD_STANDIN, h.BINDINGS]
    arg_sets = [["", "2", "1.1"]]
    if lib.name == "sim":  # (the real library's run is kept short: a host engine each)
        arg_sets.append(["1", "1", "0", "(155,gpu_temp):0.5,252"])
    for nv, ours in pairs(driver, arg_sets, lib, extra, fresh=True):
        assert nv.rc == 0, nv.describe()
        assert_same(nv, ours)
        assert "read 0: 0 values" not in ours.out, ours.out


# --- denylist_recommendations ---


#: The modes that need no nvvs (-i skips the diagnostic), with good and wrong expectations.
DENYLIST_ARGS = [["-i", "-d"], ["-i", "-d", "-f"], ["-i", "-g", "8", "-s", "4"], ["-i", "-g", "2", "-s", "0", "-c"],
                 ["-i", "-d", "-w", "pmt"], ["-i"], ["-i", "-d", "-c", "-f"]]


def test_denylist_recommendations(lib: h.Library) -> None:
    h.need_compat("pydcgm", "dcgm_agent", "DcgmSystem", "dcgm_errors")
    for nv, ours in pairs(h.BINDINGS / "denylist_recommendations.py", DENYLIST_ARGS, lib):
        assert_same(nv, ours)


# --- the DcgmReader API beyond the samples ---


def test_reader_api(lib: h.Library) -> None:
    h.need_compat("dcgm_fields", "dcgm_structs")
    [(nv, ours)] = pairs(h.HERE / "reader_api.py", [["localhost"]], lib)
    assert nv.rc == 0, nv.describe()
    assert_same(nv, ours)
    assert "unknown field: DCGMError_Badparam" in ours.out


# --- DcgmJsonReader's text that sockets accept (no library needed) ---


def test_json_text_works_as_text_and_on_the_readers_sockets() -> None:
    import json
    import socket

    from dcgm.compat.DcgmJsonReader import DcgmJsonReader, JsonText

    class Sample:
        def __init__(self, fieldId: int, value: Any) -> None:
            self.fieldId, self.value, self.ts, self.isBlank = fieldId, value, 1, value is None

    class Series:
        def __init__(self, *values: Any) -> None:
            self.values = list(values)

    class Meta:
        def __init__(self, tag: str) -> None:
            self.tag = tag

    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.settimeout(5)
    got: List[Any] = []

    class Publisher(DcgmJsonReader):
        def __init__(self) -> None:
            self.m_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # as NVIDIA's programs do
            super().__init__(hostname=None, fieldIds=[150, 230])

        def CustomJsonHandler(self, outJson: str) -> None:
            got.append(outJson)
            self.m_sock.sendto(outJson, receiver.getsockname())  # NVIDIA's telegraf/fluentd line

    p = Publisher()
    p.m_fieldIdToInfo = {150: Meta("gpu_temp"), 230: Meta("xid_errors")}
    p.m_gpuIdToUUId = {0: "GPU-x"}
    try:
        p.CustomDataHandler({0: {150: Series(Sample(150, 40), Sample(150, 41)), 230: Series(Sample(230, None))}})
        data = receiver.recv(65536)
    finally:
        receiver.close()
        p.m_sock.close()
    assert json.loads(data) == {"gpu_temp": 41, "xid_errors": None, "gpu_uuid": "GPU-x"}
    [text] = got
    # what a subclass expecting text does with it
    assert isinstance(text, str) and isinstance(text, JsonText)
    assert text == '{"gpu_temp": 41, "xid_errors": null, "gpu_uuid": "GPU-x"}'
    assert json.loads(text)["gpu_temp"] == 41 and text + "\n" == str(text) + "\n" and text.startswith("{")
    assert "%s" % text == text and f"{text}" == text and bytes(text) == text.encode()
    assert isinstance(p.m_sock, socket.socket)
    # the socket still refuses other text, as Python's does
    with pytest.raises(TypeError):
        p.m_sock.sendto("plain str", ("127.0.0.1", 9))
