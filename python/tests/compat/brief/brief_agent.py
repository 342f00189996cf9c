# The project brief's third program (issue 19, item 6): the procedural layer, with only its
# imports added.
from dcgm.compat import dcgm_agent, dcgm_fields, dcgm_structs

dcgm_agent.dcgmInit()
handle = dcgm_agent.dcgmStartEmbedded(dcgm_structs.DCGM_OPERATION_MODE_AUTO)
group_id = dcgm_agent.dcgmGroupCreate(handle, dcgm_structs.DCGM_GROUP_DEFAULT, "all")
fg = dcgm_agent.dcgmFieldGroupCreate(handle, [dcgm_fields.DCGM_FI_DEV_GPU_UTIL, dcgm_fields.DCGM_FI_DEV_FB_USED], "gpu_basic")
dcgm_agent.dcgmWatchFields(handle, group_id, fg, 1000000, 0, 0)
values, num = dcgm_agent.dcgmGetLatestValues(handle, group_id, fg)
for val in values: print(val.gpuId, val.fieldId, val.value)
dcgm_agent.dcgmUnwatchFields(handle, group_id, fg); dcgm_agent.dcgmFieldGroupDestroy(handle, fg)
dcgm_agent.dcgmGroupDestroy(handle, group_id); dcgm_agent.dcgmStopEmbedded(handle); dcgm_agent.dcgmShutdown()
