# The project brief's second program (issue 19, item 6): the object layer on an adopted embedded
# handle, with only its imports added.
from dcgm.compat import dcgm_agent, dcgm_fields, dcgm_structs, pydcgm

dcgm_agent.dcgmInit()
handle_raw = dcgm_agent.dcgmStartEmbedded(dcgm_structs.DCGM_OPERATION_MODE_AUTO)
dcgm_handle = pydcgm.DcgmHandle(handle=handle_raw)
system = dcgm_handle.GetSystem()
for gpu in system.GetAllGpus():
    print(gpu.GetGpuId(), gpu.GetUuid(), gpu.GetFieldValue(dcgm_fields.DCGM_FI_DEV_GPU_UTIL).value)
    for proc in gpu.GetProcessStats(): print(proc.pid, proc.usedMemory)
print(system.GetDefaultGroup().RunDiagnostic(dcgm_structs.DCGM_DIAG_LVL_SHORT).GetResult())
dcgm_agent.dcgmStopEmbedded(handle_raw); dcgm_agent.dcgmShutdown()
