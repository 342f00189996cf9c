"""A client of the DcgmReader API beyond NVIDIA's samples, printed so that a run on NVIDIA's
bindings and one on dcgm.compat can be compared: constructor forms, the m_* attributes
subclasses read, the dict families, since-last-call semantics, entities and the _v2 hooks,
blanks, and an unknown field. argv[1]: the host engine (default localhost; "embedded" for
the engine in the process)."""

import sys
import time

import dcgm_fields
import dcgm_structs
from DcgmReader import DcgmReader

FIELDS = [dcgm_fields.DCGM_FI_DEV_GPU_TEMP, dcgm_fields.DCGM_FI_DEV_FB_TOTAL, dcgm_fields.DCGM_FI_DEV_XID_ERROR,
          dcgm_fields.DCGM_FI_DEV_NAME, dcgm_fields.DCGM_FI_DEV_POWER_USAGE]


HOST = sys.argv[1] if len(sys.argv) > 1 else "localhost"
HOST = None if HOST == "embedded" else HOST


def show(title, d):
    print(title)
    for k in d:
        print("  %r: %r" % (k, d[k]))


class Collect(DcgmReader):
    def CustomFieldHandler(self, gpuId, fieldId, fieldTag, val):
        print("field gpu=%d %s(%d)=%r blank=%s type=%s" % (gpuId, fieldTag, fieldId, val.value, val.isBlank,
                                                              val.fieldType))

    def CustomFieldHandler_v2(self, entityGroupId, entityId, fieldId, fieldTag, val):
        print("entity %d/%d %s=%r" % (entityGroupId, entityId, fieldTag, val.value))


def main():
    r = Collect(hostname=HOST, fieldIds=FIELDS, updateFrequency=500000, ignoreList=[dcgm_fields.DCGM_FI_DEV_NAME])
    print("before connect: handle None:", r.m_fieldGroup is None, r.m_gpuIdToUUId)
    r.Init()
    print("field group set:", r.m_fieldGroup is not None)
    print("bus ids:", sorted(r.m_gpuIdToBusId.items()))
    print("uuids:", len(r.m_gpuIdToUUId))
    print("tags:", [(f, r.m_fieldIdToInfo[f].tag) for f in FIELDS])
    print("publish:", r.m_publishFields, "ignore:", r.m_dcgmIgnoreFields, "blank:", r.m_ignoreBlank)
    r.Process()
    show("latest by id", r.GetLatestGpuValuesAsFieldIdDict())
    show("latest by name", r.GetLatestGpuValuesAsFieldNameDict())
    show("entity latest by name", r.GetLatestEntityValuesAsFieldNameDict())
    show("since, first call", r.GetAllGpuValuesAsFieldIdDictSinceLastCall())
    time.sleep(0.6)
    since = r.GetAllGpuValuesAsFieldNameDictSinceLastCall()
    print("since, second call:", {g: sorted((k, len(v) >= 1, type(v[0]).__name__ != "", v[-1].value is not None)
                                           for k, v in d.items()) for g, d in since.items()})
    r.Shutdown()

    b = DcgmReader(hostname=HOST, fieldIds=FIELDS, ignoreBlank=False, gpuIds=[0])
    d = b.GetLatestGpuValuesAsFieldIdDict()
    print("with blanks:", sorted(d), sorted(d[0]))
    print("xid value:", d[0][dcgm_fields.DCGM_FI_DEV_XID_ERROR])
    b.Shutdown()

    m = DcgmReader(hostname=HOST, fieldIntervalMap={1000000: FIELDS[:2], 2000000: FIELDS[2:4]})
    print("interval map:", sorted(m.GetLatestGpuValuesAsFieldIdDict()[0]))
    m.Shutdown()

    pair = dcgm_structs.c_dcgmGroupEntityPair_t()
    pair.entityGroupId = dcgm_fields.DCGM_FE_GPU
    pair.entityId = 0
    e = Collect(hostname=HOST, fieldIds=FIELDS[:2], entities=[pair])
    e.Process()
    show("entities latest", e.GetLatestEntityValuesAsFieldIdDict())
    e.Shutdown()

    with DcgmReader(hostname=HOST, fieldIds=[dcgm_fields.DCGM_FI_DEV_FB_TOTAL]) as w:
        print("with-block:", sorted(w.GetLatestGpuValuesAsFieldNameDict()[0]))

    import pydcgm

    owner = pydcgm.DcgmHandle(ipAddress=HOST, opMode=dcgm_structs.DCGM_OPERATION_MODE_AUTO)
    a = Collect(fieldIds=FIELDS[:3], updateFrequency=500000)
    a.SetHandle(owner.handle)
    print("adopted:", sorted(a.m_gpuIdToUUId) == sorted(r.m_gpuIdToUUId), a.m_fieldGroup is not None)
    a.Process()
    show("adopted latest", a.GetLatestGpuValuesAsFieldNameDict())
    print("adopted since:", a.GetAllGpuValuesAsFieldIdDictSinceLastCall())
    time.sleep(0.6)
    print("adopted since again:", sorted(a.GetAllGpuValuesAsFieldIdDictSinceLastCall()))
    a.Shutdown()
    print("still usable:", owner.GetSystem().discovery.GetAllGpuIds() == sorted(r.m_gpuIdToUUId))

    try:
        DcgmReader(hostname=HOST, fieldIds=[65000]).Init()
    except dcgm_structs.DCGMError as err:
        print("unknown field:", type(err).__name__, err.value)


main()
sys.stdout.flush()
