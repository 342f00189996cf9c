# The project brief's first program (issue 19, item 6): DcgmReader, with only its imports added.
from dcgm.compat import dcgm_structs
from dcgm.compat.DcgmReader import DcgmReader

reader = DcgmReader()
for gpu_id, fields in reader.GetLatestGpuValuesAsFieldDict().items():
    print(gpu_id, fields["DCGM_FI_DEV_GPU_UTIL"].value, fields["DCGM_FI_DEV_GPU_TEMP"].value)
reader = DcgmReader(fieldIds=[dcgm_structs.DCGM_FI_DEV_GPU_UTIL, dcgm_structs.DCGM_FI_DEV_GPU_TEMP])
