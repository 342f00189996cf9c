# The project brief's first program (issue 19, item 6): DcgmReader, with only its imports
# changed, as the issue gives them (`from dcgm import DcgmReader`: the package's own reader, which
# uses a local nv-hostengine if one answers and the engine embedded in the process otherwise).
from dcgm import DcgmReader
from dcgm.compat import dcgm_structs

reader = DcgmReader()
for gpu_id, fields in reader.GetLatestGpuValuesAsFieldDict().items():
    print(gpu_id, fields["DCGM_FI_DEV_GPU_UTIL"].value, fields["DCGM_FI_DEV_GPU_TEMP"].value)
reader = DcgmReader(fieldIds=[dcgm_structs.DCGM_FI_DEV_GPU_UTIL, dcgm_structs.DCGM_FI_DEV_GPU_TEMP])
