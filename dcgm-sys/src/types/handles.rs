//! Handles, operation modes and the limits of the API.

use std::ffi::c_char;

/// A connection to DCGM (embedded engine or remote host engine).
pub type dcgmHandle_t = usize;
/// A group of entities.
pub type dcgmGpuGrp_t = usize;
/// A group of fields.
pub type dcgmFieldGrp_t = usize;
/// A status (error list) object.
pub type dcgmStatus_t = usize;

/// The C enum behind [`dcgmOperationMode_t`].
pub type dcgmOperationMode_enum = u32;
/// Whether DCGM updates fields by itself (AUTO) or only when asked (MANUAL).
pub type dcgmOperationMode_t = dcgmOperationMode_enum;
/// DCGM updates watched fields and runs policy checks on its own threads.
pub const DCGM_OPERATION_MODE_AUTO: dcgmOperationMode_t = 1;
/// The client must call `dcgmUpdateAllFields` and `dcgmPolicyTrigger`.
pub const DCGM_OPERATION_MODE_MANUAL: dcgmOperationMode_t = 2;

/// The C enum behind [`dcgmOrder_t`].
pub type dcgmOrder_enum = u32;
/// Sample ordering for multi-value reads.
pub type dcgmOrder_t = dcgmOrder_enum;
/// Oldest first.
pub const DCGM_ORDER_ASCENDING: dcgmOrder_t = 1;
/// Newest first.
pub const DCGM_ORDER_DESCENDING: dcgmOrder_t = 2;

/// The handle value of the embedded engine.
pub const DCGM_EMBEDDED_HANDLE: dcgmHandle_t = 0x7fff_ffff;

/// Maximum GPUs per node.
pub const DCGM_MAX_NUM_DEVICES: usize = 32;
/// NVLinks per GPU.
pub const DCGM_NVLINK_MAX_LINKS_PER_GPU: usize = 36;
/// NVLink error counter kinds.
pub const DCGM_NVLINK_ERROR_COUNT: usize = 4;
/// NVLink error fields the health watch uses.
pub const DCGM_HEALTH_WATCH_NVLINK_ERROR_NUM_FIELDS: usize = 6;
/// NVLinks per GPU before NVLink 2.
pub const DCGM_NVLINK_MAX_LINKS_PER_GPU_LEGACY1: usize = 6;
/// NVLinks per GPU before NVLink 3.
pub const DCGM_NVLINK_MAX_LINKS_PER_GPU_LEGACY2: usize = 12;
/// NVLinks per GPU before NVLink 5.
pub const DCGM_NVLINK_MAX_LINKS_PER_GPU_LEGACY3: usize = 18;
/// Maximum NvSwitches per node.
pub const DCGM_MAX_NUM_SWITCHES: usize = 12;
/// XID records kept per process.
pub const DCGM_MAX_XID_INFO: usize = 10;
/// NVLinks per NvSwitch.
pub const DCGM_NVLINK_MAX_LINKS_PER_NVSWITCH: usize = 256;
/// Lanes per NvSwitch link.
pub const DCGM_LANE_MAX_LANES_PER_NVSWICH_LINK: usize = 4;
/// vGPU instances per physical GPU.
pub const DCGM_MAX_VGPU_INSTANCES_PER_PGPU: usize = 32;
/// Maximum CPU nodes.
pub const DCGM_MAX_NUM_CPUS: usize = 8;
/// Maximum CPU cores.
pub const DCGM_MAX_NUM_CPU_CORES: usize = 1024;
/// Length of string buffers.
pub const DCGM_MAX_STR_LENGTH: usize = 256;
/// Length of binary value buffers.
pub const DCGM_MAX_BLOB_LENGTH: usize = 4096;
/// Default maximum sample age, in microseconds.
pub const DCGM_MAX_AGE_USEC_DEFAULT: i64 = 30_000_000;
/// Supported clock pairs per GPU.
pub const DCGM_MAX_CLOCKS: usize = 256;
/// Maximum groups per connection.
pub const DCGM_MAX_NUM_GROUPS: usize = 64;
/// Maximum field groups.
pub const DCGM_MAX_NUM_FIELD_GROUPS: usize = 64;
/// Maximum fields per field group.
pub const DCGM_MAX_FIELD_IDS_PER_FIELD_GROUP: usize = 128;
/// Maximum entities per group (v1 group info).
pub const DCGM_GROUP_MAX_ENTITIES_V1: usize = 64;
/// Maximum entities per group (v2 and later group info).
pub const DCGM_GROUP_MAX_ENTITIES_V2: usize = 1024;
/// Maximum FBC sessions.
pub const DCGM_MAX_FBC_SESSIONS: usize = 256;
/// vGPU name buffer size.
pub const DCGM_VGPU_NAME_BUFFER_SIZE: usize = 64;
/// GRID licence buffer size.
pub const DCGM_GRID_LICENSE_BUFFER_SIZE: usize = 128;
/// Compute mode: default.
pub const DCGM_CONFIG_COMPUTEMODE_DEFAULT: u32 = 0;
/// Compute mode: prohibited.
pub const DCGM_CONFIG_COMPUTEMODE_PROHIBITED: u32 = 1;
/// Compute mode: exclusive process.
pub const DCGM_CONFIG_COMPUTEMODE_EXCLUSIVE_PROCESS: u32 = 2;
/// Default TCP port of nv-hostengine.
pub const DCGM_HE_PORT_NUMBER: u16 = 5555;
/// Default unix socket path of nv-hostengine.
pub const DCGM_DEFAULT_SOCKET_PATH: &str = "/tmp/nv-hostengine";
/// Connection-string prefix for unix sockets.
pub const DCGM_UNIX_SOCKET_PREFIX: &str = "unix://";
/// Connection-string prefix for vsock.
pub const DCGM_VSOCK_SOCKET_PREFIX: &str = "vsock://";
/// Connection-string prefix for TCP.
pub const DCGM_TCP_SOCKET_PREFIX: &str = "tcp://";

/// Group id standing for every GPU.
pub const DCGM_GROUP_ALL_GPUS: dcgmGpuGrp_t = 0x7fff_ffff;
/// Group id standing for every NvSwitch.
pub const DCGM_GROUP_ALL_NVSWITCHES: dcgmGpuGrp_t = 0x7fff_fffe;
/// Group id standing for every GPU instance.
pub const DCGM_GROUP_ALL_INSTANCES: dcgmGpuGrp_t = 0x7fff_fffd;
/// Group id standing for every compute instance.
pub const DCGM_GROUP_ALL_COMPUTE_INSTANCES: dcgmGpuGrp_t = 0x7fff_fffc;
/// Group id standing for every entity.
pub const DCGM_GROUP_ALL_ENTITIES: dcgmGpuGrp_t = 0x7fff_fffb;
/// Group id standing for no group.
pub const DCGM_GROUP_NULL: dcgmGpuGrp_t = 0x7fff_fffa;

/// `dcgmGetEntityGroupEntities` flag: only entities DCGM supports.
pub const DCGM_GEGE_FLAG_ONLY_SUPPORTED: u32 = 0x1;
/// `dcgmEntitiesGetLatestValues` flag: read live from the driver instead of the cache.
pub const DCGM_FV_FLAG_LIVE_DATA: u32 = 0x1;

/// A C string pointer as the headers spell it.
pub type dcgm_c_str = *const c_char;
