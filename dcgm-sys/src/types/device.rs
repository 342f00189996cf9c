//! GPU discovery: device attributes and their parts, entity status, chip architecture,
//! NVLink entity ids, vGPU blobs and the small enums of the device fields.

use std::ffi::c_char;

use crate::{dcgm_field_eid_t, dcgm_field_entity_group_t};

/// The C enum behind [`DcgmEntityStatus_t`].
pub type dcgmEntityStatusType_enum = u32;
/// State of an entity as `dcgmGetGpuStatus` reports it.
pub type DcgmEntityStatus_t = dcgmEntityStatusType_enum;
/// The state is not known.
pub const DcgmEntityStatusUnknown: DcgmEntityStatus_t = 0;
/// Present and usable.
pub const DcgmEntityStatusOk: DcgmEntityStatus_t = 1;
/// Present but not supported by DCGM.
pub const DcgmEntityStatusUnsupported: DcgmEntityStatus_t = 2;
/// Cannot be reached right now.
pub const DcgmEntityStatusInaccessible: DcgmEntityStatus_t = 3;
/// Lost (fell off the bus).
pub const DcgmEntityStatusLost: DcgmEntityStatus_t = 4;
/// A fake entity created for tests.
pub const DcgmEntityStatusFake: DcgmEntityStatus_t = 5;
/// Disabled by the user.
pub const DcgmEntityStatusDisabled: DcgmEntityStatus_t = 6;
/// Detached from the driver.
pub const DcgmEntityStatusDetached: DcgmEntityStatus_t = 7;

/// The C enum behind [`dcgmChipArchitecture_t`].
pub type dcgmChipArchitecture_enum = u32;
/// GPU architecture as `dcgmGetGpuChipArchitecture` reports it.
pub type dcgmChipArchitecture_t = dcgmChipArchitecture_enum;
/// Older than Kepler.
pub const DCGM_CHIP_ARCH_OLDER: dcgmChipArchitecture_t = 1;
/// Kepler.
pub const DCGM_CHIP_ARCH_KEPLER: dcgmChipArchitecture_t = 2;
/// Maxwell.
pub const DCGM_CHIP_ARCH_MAXWELL: dcgmChipArchitecture_t = 3;
/// Pascal.
pub const DCGM_CHIP_ARCH_PASCAL: dcgmChipArchitecture_t = 4;
/// Volta.
pub const DCGM_CHIP_ARCH_VOLTA: dcgmChipArchitecture_t = 5;
/// Turing.
pub const DCGM_CHIP_ARCH_TURING: dcgmChipArchitecture_t = 6;
/// Ampere.
pub const DCGM_CHIP_ARCH_AMPERE: dcgmChipArchitecture_t = 7;
/// Ada Lovelace.
pub const DCGM_CHIP_ARCH_ADA: dcgmChipArchitecture_t = 8;
/// Hopper.
pub const DCGM_CHIP_ARCH_HOPPER: dcgmChipArchitecture_t = 9;
/// Blackwell.
pub const DCGM_CHIP_ARCH_BLACKWELL: dcgmChipArchitecture_t = 10;
/// Number of known architectures (equal to the last one in DCGM 4.6).
pub const DCGM_CHIP_ARCH_COUNT: dcgmChipArchitecture_t = 10;
/// The architecture could not be determined.
pub const DCGM_CHIP_ARCH_UNKNOWN: dcgmChipArchitecture_t = 0xffff_ffff;

/// Virtualization mode of a GPU (`dcgmDeviceIdentifiers_v1::virtualizationMode`; the C enum
/// is anonymous).
pub type dcgmGpuVirtualizationMode_t = u32;
/// Bare metal.
pub const DCGM_GPU_VIRTUALIZATION_MODE_NONE: dcgmGpuVirtualizationMode_t = 0;
/// Passed through to a virtual machine.
pub const DCGM_GPU_VIRTUALIZATION_MODE_PASSTHROUGH: dcgmGpuVirtualizationMode_t = 1;
/// A vGPU inside a virtual machine.
pub const DCGM_GPU_VIRTUALIZATION_MODE_VGPU: dcgmGpuVirtualizationMode_t = 2;
/// A host running vGPU.
pub const DCGM_GPU_VIRTUALIZATION_MODE_HOST_VGPU: dcgmGpuVirtualizationMode_t = 3;
/// A host running vSGA.
pub const DCGM_GPU_VIRTUALIZATION_MODE_HOST_VSGA: dcgmGpuVirtualizationMode_t = 4;

/// Fabric-manager state of a GPU (field `DCGM_FI_DEV_FABRIC_MANAGER_STATUS`; the C enum is
/// anonymous).
pub type dcgmFabricManagerStatus_t = u32;
/// The GPU has no fabric to manage.
pub const DcgmFMStatusNotSupported: dcgmFabricManagerStatus_t = 0;
/// Fabric training has not started.
pub const DcgmFMStatusNotStarted: dcgmFabricManagerStatus_t = 1;
/// Fabric training is running.
pub const DcgmFMStatusInProgress: dcgmFabricManagerStatus_t = 2;
/// Fabric training succeeded.
pub const DcgmFMStatusSuccess: dcgmFabricManagerStatus_t = 3;
/// Fabric training failed.
pub const DcgmFMStatusFailure: dcgmFabricManagerStatus_t = 4;
/// The driver reported a state DCGM does not know.
pub const DcgmFMStatusUnrecognized: dcgmFabricManagerStatus_t = 5;
/// NVML is too old to report the state.
pub const DcgmFMStatusNvmlTooOld: dcgmFabricManagerStatus_t = 6;
/// Number of states.
pub const DcgmFMStatusCount: dcgmFabricManagerStatus_t = 7;

/// Value of the bind/unbind event field (the C enum is anonymous).
pub type dcgmBindUnbindEventState_t = u32;
/// GPUs are being bound or unbound; DCGM is reinitialising.
pub const DcgmBUEventStateSystemReinitializing: dcgmBindUnbindEventState_t = 1;
/// Reinitialisation after a bind or unbind has finished.
pub const DcgmBUEventStateSystemReinitializationCompleted: dcgmBindUnbindEventState_t = 2;

/// Clock-event reason bit (field `DCGM_FI_DEV_CLOCKS_EVENT_REASONS`): the GPU is idle.
pub const DCGM_CLOCKS_EVENT_REASON_GPU_IDLE: i64 = 0x0001;
/// Clock-event reason bit: application clocks setting.
pub const DCGM_CLOCKS_EVENT_REASON_CLOCKS_SETTING: i64 = 0x0002;
/// Clock-event reason bit: software power cap.
pub const DCGM_CLOCKS_EVENT_REASON_SW_POWER_CAP: i64 = 0x0004;
/// Clock-event reason bit: hardware slowdown.
pub const DCGM_CLOCKS_EVENT_REASON_HW_SLOWDOWN: i64 = 0x0008;
/// Clock-event reason bit: sync boost.
pub const DCGM_CLOCKS_EVENT_REASON_SYNC_BOOST: i64 = 0x0010;
/// Clock-event reason bit: software thermal slowdown.
pub const DCGM_CLOCKS_EVENT_REASON_SW_THERMAL: i64 = 0x0020;
/// Clock-event reason bit: hardware thermal slowdown.
pub const DCGM_CLOCKS_EVENT_REASON_HW_THERMAL: i64 = 0x0040;
/// Clock-event reason bit: hardware power brake.
pub const DCGM_CLOCKS_EVENT_REASON_HW_POWER_BRAKE: i64 = 0x0080;
/// Clock-event reason bit: display clock setting.
pub const DCGM_CLOCKS_EVENT_REASON_DISPLAY_CLOCKS: i64 = 0x0100;
/// Old name of [`DCGM_CLOCKS_EVENT_REASON_GPU_IDLE`].
pub const DCGM_CLOCKS_THROTTLE_REASON_GPU_IDLE: i64 = DCGM_CLOCKS_EVENT_REASON_GPU_IDLE;
/// Old name of [`DCGM_CLOCKS_EVENT_REASON_CLOCKS_SETTING`].
pub const DCGM_CLOCKS_THROTTLE_REASON_CLOCKS_SETTING: i64 = DCGM_CLOCKS_EVENT_REASON_CLOCKS_SETTING;
/// Old name of [`DCGM_CLOCKS_EVENT_REASON_SW_POWER_CAP`].
pub const DCGM_CLOCKS_THROTTLE_REASON_SW_POWER_CAP: i64 = DCGM_CLOCKS_EVENT_REASON_SW_POWER_CAP;
/// Old name of [`DCGM_CLOCKS_EVENT_REASON_HW_SLOWDOWN`].
pub const DCGM_CLOCKS_THROTTLE_REASON_HW_SLOWDOWN: i64 = DCGM_CLOCKS_EVENT_REASON_HW_SLOWDOWN;
/// Old name of [`DCGM_CLOCKS_EVENT_REASON_SYNC_BOOST`].
pub const DCGM_CLOCKS_THROTTLE_REASON_SYNC_BOOST: i64 = DCGM_CLOCKS_EVENT_REASON_SYNC_BOOST;
/// Old name of [`DCGM_CLOCKS_EVENT_REASON_SW_THERMAL`].
pub const DCGM_CLOCKS_THROTTLE_REASON_SW_THERMAL: i64 = DCGM_CLOCKS_EVENT_REASON_SW_THERMAL;
/// Old name of [`DCGM_CLOCKS_EVENT_REASON_HW_THERMAL`].
pub const DCGM_CLOCKS_THROTTLE_REASON_HW_THERMAL: i64 = DCGM_CLOCKS_EVENT_REASON_HW_THERMAL;
/// Old name of [`DCGM_CLOCKS_EVENT_REASON_HW_POWER_BRAKE`].
pub const DCGM_CLOCKS_THROTTLE_REASON_HW_POWER_BRAKE: i64 = DCGM_CLOCKS_EVENT_REASON_HW_POWER_BRAKE;
/// Old name of [`DCGM_CLOCKS_EVENT_REASON_DISPLAY_CLOCKS`].
pub const DCGM_CLOCKS_THROTTLE_REASON_DISPLAY_CLOCKS: i64 = DCGM_CLOCKS_EVENT_REASON_DISPLAY_CLOCKS;

/// The major part of a CUDA compute capability value (kept in the upper 16 bits, unshifted,
/// as the C macro does).
pub const fn DCGM_CUDA_COMPUTE_CAPABILITY_MAJOR(x: u64) -> u64 {
    x & 0xFFFF_0000
}
/// The minor part of a CUDA compute capability value (the lower 16 bits).
pub const fn DCGM_CUDA_COMPUTE_CAPABILITY_MINOR(x: u64) -> u64 {
    x & 0x0000_FFFF
}

/// An NVLink entity id ([`crate::DCGM_FE_LINK`]): a packed 32-bit word holding the parent's
/// entity group (bits 0–7), the link index (bits 8–23) and the parent GPU or NvSwitch id
/// (bits 24–31). The C type is a byte-packed union, hence the alignment of 1.
///
/// ```
/// use dcgm_sys::{dcgm_link_t, DCGM_FE_GPU};
/// let link = dcgm_link_t::new(DCGM_FE_GPU, 5, 2);
/// assert_eq!(link.type_(), DCGM_FE_GPU);
/// assert_eq!(link.index(), 5);
/// assert_eq!(link.parent_id(), 2);
/// assert_eq!(dcgm_link_t::from_raw(link.raw()), link);
/// ```
#[repr(C, packed)]
#[derive(Debug, Copy, Clone, Default, PartialEq, Eq, Hash)]
pub struct dcgm_link_t {
    /// The packed word, usable directly as a `dcgm_field_eid_t`.
    pub raw: dcgm_field_eid_t,
}
crate::plain_struct!(dcgm_link_t, size = 4, align = 1);
/// Version word of [`dcgm_link_t`] (`0x0100_0004`).
pub const dcgmLink_version1: u32 = crate::make_version(size_of::<dcgm_link_t>(), 1);
const _: () = assert!(dcgmLink_version1 == 0x0100_0004);

impl dcgm_link_t {
    /// Packs a link id: the parent's entity group (`DCGM_FE_GPU` or `DCGM_FE_SWITCH`), the
    /// link index and the parent's id. Bits of `type_` above the lowest 8 are dropped.
    pub const fn new(type_: dcgm_field_entity_group_t, index: u16, parent_id: u8) -> Self {
        Self {
            raw: (type_ & 0xff) | ((index as u32) << 8) | ((parent_id as u32) << 24),
        }
    }

    /// Wraps a packed word (for example an entity id read from DCGM).
    pub const fn from_raw(raw: dcgm_field_eid_t) -> Self {
        Self { raw }
    }

    /// The packed word.
    pub const fn raw(self) -> dcgm_field_eid_t {
        self.raw
    }

    /// The parent's entity group (`DCGM_FE_GPU` or `DCGM_FE_SWITCH`).
    pub const fn type_(self) -> dcgm_field_entity_group_t {
        self.raw & 0xff
    }

    /// The link index on its parent.
    pub const fn index(self) -> u16 {
        ((self.raw >> 8) & 0xffff) as u16
    }

    /// The parent's id: a GPU id or an NvSwitch id, by [`dcgm_link_t::type_`].
    pub const fn parent_id(self) -> u8 {
        (self.raw >> 24) as u8
    }

    /// The parent GPU id (meaningful when the type is `DCGM_FE_GPU`).
    pub const fn gpuId(self) -> u8 {
        self.parent_id()
    }

    /// The parent NvSwitch id (meaningful when the type is `DCGM_FE_SWITCH`).
    pub const fn switchId(self) -> u8 {
        self.parent_id()
    }
}

/// A memory/SM application clock pair, in MHz.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmClockSet_v1 {
    /// Version word (a signed `int` in C).
    pub version: i32,
    pub memClock: u32,
    pub smClock: u32,
}
crate::versioned_struct!(
    dcgmClockSet_v1,
    dcgmClockSet_version1 = 1,
    size = 12,
    word = 0x0100_000C
);
/// Current version of the clock pair.
pub type dcgmClockSet_t = dcgmClockSet_v1;
/// Current version word of [`dcgmClockSet_t`].
pub const dcgmClockSet_version: u32 = dcgmClockSet_version1;

/// The clock pairs a GPU supports.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceSupportedClockSets_v1 {
    pub version: u32,
    /// Number of valid entries of `clockSet`.
    pub count: u32,
    pub clockSet: [dcgmClockSet_t; 256],
}
crate::versioned_struct!(
    dcgmDeviceSupportedClockSets_v1,
    dcgmDeviceSupportedClockSets_version1 = 1,
    size = 3080,
    word = 0x0100_0C08
);
/// Current version of the supported-clocks struct.
pub type dcgmDeviceSupportedClockSets_t = dcgmDeviceSupportedClockSets_v1;
/// Current version word of [`dcgmDeviceSupportedClockSets_t`].
pub const dcgmDeviceSupportedClockSets_version: u32 = dcgmDeviceSupportedClockSets_version1;

/// Accounting data of one process on one GPU (the blob of
/// `DCGM_FI_DEV_PROCESS_ACCOUNTING_STATS`).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDevicePidAccountingStats_v1 {
    pub version: u32,
    pub pid: u32,
    /// Percent of time the GPU was busy while the process ran.
    pub gpuUtilization: u32,
    /// Percent of time the memory was busy while the process ran.
    pub memoryUtilization: u32,
    /// Peak memory use, in bytes.
    pub maxMemoryUsage: u64,
    /// Start time, microseconds since the epoch.
    pub startTimestamp: u64,
    /// Run time, in microseconds.
    pub activeTimeUsec: u64,
}
crate::versioned_struct!(
    dcgmDevicePidAccountingStats_v1,
    dcgmDevicePidAccountingStats_version1 = 1,
    size = 40,
    word = 0x0100_0028
);
/// Current version of the accounting-stats blob.
pub type dcgmDevicePidAccountingStats_t = dcgmDevicePidAccountingStats_v1;
/// Current version word of [`dcgmDevicePidAccountingStats_t`].
pub const dcgmDevicePidAccountingStats_version: u32 = dcgmDevicePidAccountingStats_version1;

/// Temperature thresholds of a GPU, in °C.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceThermals_v1 {
    pub version: u32,
    pub slowdownTemp: u32,
    pub shutdownTemp: u32,
}
crate::versioned_struct!(
    dcgmDeviceThermals_v1,
    dcgmDeviceThermals_version1 = 1,
    size = 12,
    word = 0x0100_000C
);
/// Current version of the thermal thresholds.
pub type dcgmDeviceThermals_t = dcgmDeviceThermals_v1;
/// Current version word of [`dcgmDeviceThermals_t`].
pub const dcgmDeviceThermals_version: u32 = dcgmDeviceThermals_version1;

/// Power limits of a GPU, in watts.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDevicePowerLimits_v1 {
    pub version: u32,
    pub curPowerLimit: u32,
    pub defaultPowerLimit: u32,
    pub enforcedPowerLimit: u32,
    pub minPowerLimit: u32,
    pub maxPowerLimit: u32,
}
crate::versioned_struct!(
    dcgmDevicePowerLimits_v1,
    dcgmDevicePowerLimits_version1 = 1,
    size = 24,
    word = 0x0100_0018
);
/// Current version of the power limits.
pub type dcgmDevicePowerLimits_t = dcgmDevicePowerLimits_v1;
/// Current version word of [`dcgmDevicePowerLimits_t`].
pub const dcgmDevicePowerLimits_version: u32 = dcgmDevicePowerLimits_version1;

/// Names and ids of a GPU.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceIdentifiers_v1 {
    pub version: u32,
    pub brandName: [c_char; 256],
    pub deviceName: [c_char; 256],
    pub pciBusId: [c_char; 256],
    pub serial: [c_char; 256],
    pub uuid: [c_char; 256],
    pub vbios: [c_char; 256],
    pub inforomImageVersion: [c_char; 256],
    pub pciDeviceId: u32,
    pub pciSubSystemId: u32,
    pub driverVersion: [c_char; 256],
    /// A `DCGM_GPU_VIRTUALIZATION_MODE_*` value.
    pub virtualizationMode: u32,
}
crate::versioned_struct!(
    dcgmDeviceIdentifiers_v1,
    dcgmDeviceIdentifiers_version1 = 1,
    size = 2064,
    word = 0x0100_0810
);
/// Current version of the identifiers.
pub type dcgmDeviceIdentifiers_t = dcgmDeviceIdentifiers_v1;
/// Current version word of [`dcgmDeviceIdentifiers_t`].
pub const dcgmDeviceIdentifiers_version: u32 = dcgmDeviceIdentifiers_version1;

/// Memory sizes of a GPU, in MiB.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceMemoryUsage_v1 {
    pub version: u32,
    pub bar1Total: u32,
    pub fbTotal: u32,
    pub fbUsed: u32,
    pub fbFree: u32,
}
crate::versioned_struct!(
    dcgmDeviceMemoryUsage_v1,
    dcgmDeviceMemoryUsage_version1 = 1,
    size = 20,
    word = 0x0100_0014
);
/// Current version of the memory sizes.
pub type dcgmDeviceMemoryUsage_t = dcgmDeviceMemoryUsage_v1;
/// Current version word of [`dcgmDeviceMemoryUsage_t`].
pub const dcgmDeviceMemoryUsage_version: u32 = dcgmDeviceMemoryUsage_version1;

/// Modes of a GPU.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceSettings_v2 {
    pub version: u32,
    pub persistenceModeEnabled: u32,
    pub migModeEnabled: u32,
    pub confidentialComputeMode: u32,
}
crate::versioned_struct!(
    dcgmDeviceSettings_v2,
    dcgmDeviceSettings_version2 = 2,
    size = 16,
    word = 0x0200_0010
);
/// Current version of the device settings.
pub type dcgmDeviceSettings_t = dcgmDeviceSettings_v2;
/// Current version word of [`dcgmDeviceSettings_t`].
pub const dcgmDeviceSettings_version: u32 = dcgmDeviceSettings_version2;

/// Output of `dcgmGetDeviceAttributes`: the static description of a GPU.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceAttributes_v3 {
    pub version: u32,
    pub clockSets: dcgmDeviceSupportedClockSets_t,
    pub thermalSettings: dcgmDeviceThermals_t,
    pub powerLimits: dcgmDevicePowerLimits_t,
    pub identifiers: dcgmDeviceIdentifiers_t,
    pub memoryUsage: dcgmDeviceMemoryUsage_t,
    pub settings: dcgmDeviceSettings_v2,
}
crate::versioned_struct!(
    dcgmDeviceAttributes_v3,
    dcgmDeviceAttributes_version3 = 3,
    size = 5220,
    word = 0x0300_1464
);
/// Current version of the device attributes.
pub type dcgmDeviceAttributes_t = dcgmDeviceAttributes_v3;
/// Current version word of [`dcgmDeviceAttributes_t`].
pub const dcgmDeviceAttributes_version: u32 = dcgmDeviceAttributes_version3;

/// Utilisation of one vGPU instance, in percent.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceVgpuUtilInfo_v1 {
    pub version: u32,
    pub vgpuId: u32,
    pub smUtil: u32,
    pub memUtil: u32,
    pub encUtil: u32,
    pub decUtil: u32,
}
crate::versioned_struct!(
    dcgmDeviceVgpuUtilInfo_v1,
    dcgmDeviceVgpuUtilInfo_version1 = 1,
    size = 24,
    word = 0x0100_0018
);
/// Current version of the vGPU utilisation blob.
pub type dcgmDeviceVgpuUtilInfo_t = dcgmDeviceVgpuUtilInfo_v1;
/// Current version word of [`dcgmDeviceVgpuUtilInfo_t`].
pub const dcgmDeviceVgpuUtilInfo_version: u32 = dcgmDeviceVgpuUtilInfo_version1;

/// Encoder statistics of a GPU or vGPU.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceEncStats_v1 {
    pub version: u32,
    pub sessionCount: u32,
    pub averageFps: u32,
    /// Average latency, in microseconds.
    pub averageLatency: u32,
}
crate::versioned_struct!(
    dcgmDeviceEncStats_v1,
    dcgmDeviceEncStats_version1 = 1,
    size = 16,
    word = 0x0100_0010
);
/// Current version of the encoder statistics.
pub type dcgmDeviceEncStats_t = dcgmDeviceEncStats_v1;
/// Current version word of [`dcgmDeviceEncStats_t`].
pub const dcgmDeviceEncStats_version: u32 = dcgmDeviceEncStats_version1;

/// Frame-buffer-capture statistics of a GPU or vGPU.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceFbcStats_v1 {
    pub version: u32,
    pub sessionCount: u32,
    pub averageFps: u32,
    /// Average latency, in microseconds.
    pub averageLatency: u32,
}
crate::versioned_struct!(
    dcgmDeviceFbcStats_v1,
    dcgmDeviceFbcStats_version1 = 1,
    size = 16,
    word = 0x0100_0010
);
/// Current version of the FBC statistics.
pub type dcgmDeviceFbcStats_t = dcgmDeviceFbcStats_v1;
/// Current version word of [`dcgmDeviceFbcStats_t`].
pub const dcgmDeviceFbcStats_version: u32 = dcgmDeviceFbcStats_version1;

/// The C enum behind [`dcgmFBCSessionType_t`].
pub type dcgmFBCSessionType_enum = u32;
/// Kind of a frame-buffer-capture session.
pub type dcgmFBCSessionType_t = dcgmFBCSessionType_enum;
/// Unknown.
pub const DCGM_FBC_SESSION_TYPE_UNKNOWN: dcgmFBCSessionType_t = 0;
/// Capture to system memory.
pub const DCGM_FBC_SESSION_TYPE_TOSYS: dcgmFBCSessionType_t = 1;
/// Capture to CUDA memory.
pub const DCGM_FBC_SESSION_TYPE_CUDA: dcgmFBCSessionType_t = 2;
/// Capture to video memory.
pub const DCGM_FBC_SESSION_TYPE_VID: dcgmFBCSessionType_t = 3;
/// Capture to the hardware encoder.
pub const DCGM_FBC_SESSION_TYPE_HWENC: dcgmFBCSessionType_t = 4;

/// One frame-buffer-capture session.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceFbcSessionInfo_v1 {
    pub version: u32,
    pub sessionId: u32,
    pub pid: u32,
    pub vgpuId: u32,
    pub displayOrdinal: u32,
    pub sessionType: dcgmFBCSessionType_t,
    pub sessionFlags: u32,
    pub hMaxResolution: u32,
    pub vMaxResolution: u32,
    pub hResolution: u32,
    pub vResolution: u32,
    pub averageFps: u32,
    pub averageLatency: u32,
}
crate::versioned_struct!(
    dcgmDeviceFbcSessionInfo_v1,
    dcgmDeviceFbcSessionInfo_version1 = 1,
    size = 52,
    word = 0x0100_0034
);
/// Current version of the FBC session info.
pub type dcgmDeviceFbcSessionInfo_t = dcgmDeviceFbcSessionInfo_v1;
/// Current version word of [`dcgmDeviceFbcSessionInfo_t`].
pub const dcgmDeviceFbcSessionInfo_version: u32 = dcgmDeviceFbcSessionInfo_version1;

/// Every frame-buffer-capture session of a GPU or vGPU.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceFbcSessions_v1 {
    pub version: u32,
    /// Number of valid entries of `sessionInfo`.
    pub sessionCount: u32,
    pub sessionInfo: [dcgmDeviceFbcSessionInfo_t; 256],
}
crate::versioned_struct!(
    dcgmDeviceFbcSessions_v1,
    dcgmDeviceFbcSessions_version1 = 1,
    size = 13320,
    word = 0x0100_3408
);
/// Current version of the FBC session list.
pub type dcgmDeviceFbcSessions_t = dcgmDeviceFbcSessions_v1;
/// Current version word of [`dcgmDeviceFbcSessions_t`].
pub const dcgmDeviceFbcSessions_version: u32 = dcgmDeviceFbcSessions_version1;

/// The C enum behind [`dcgmEncoderType_t`].
pub type dcgmEncoderQueryType_enum = u32;
/// Codec of an encoder session.
pub type dcgmEncoderType_t = dcgmEncoderQueryType_enum;
/// H.264.
pub const DCGM_ENCODER_QUERY_H264: dcgmEncoderType_t = 0;
/// H.265 (HEVC).
pub const DCGM_ENCODER_QUERY_HEVC: dcgmEncoderType_t = 1;

/// The vGPU id, or (in the first record) the session count (anonymous in C).
#[repr(C)]
#[derive(Copy, Clone)]
pub union dcgmDeviceVgpuEncSessions_v1__bindgen_ty_1 {
    pub vgpuId: u32,
    pub sessionCount: u32,
}
crate::plain_struct!(
    dcgmDeviceVgpuEncSessions_v1__bindgen_ty_1,
    size = 4,
    align = 4
);

/// One encoder session of a vGPU.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmDeviceVgpuEncSessions_v1 {
    pub version: u32,
    pub encoderSessionInfo: dcgmDeviceVgpuEncSessions_v1__bindgen_ty_1,
    pub sessionId: u32,
    pub pid: u32,
    pub codecType: dcgmEncoderType_t,
    pub hResolution: u32,
    pub vResolution: u32,
    pub averageFps: u32,
    pub averageLatency: u32,
}
crate::versioned_struct!(
    dcgmDeviceVgpuEncSessions_v1,
    dcgmDeviceVgpuEncSessions_version1 = 1,
    size = 36,
    word = 0x0100_0024
);
/// Current version of the vGPU encoder session.
pub type dcgmDeviceVgpuEncSessions_t = dcgmDeviceVgpuEncSessions_v1;
/// Current version word of [`dcgmDeviceVgpuEncSessions_t`].
pub const dcgmDeviceVgpuEncSessions_version: u32 = dcgmDeviceVgpuEncSessions_version1;

/// The vGPU id, or (in the first record) the sample count (anonymous in C).
#[repr(C)]
#[derive(Copy, Clone)]
pub union dcgmDeviceVgpuProcessUtilInfo_v1__bindgen_ty_1 {
    pub vgpuId: u32,
    pub vgpuProcessSamplesCount: u32,
}
crate::plain_struct!(
    dcgmDeviceVgpuProcessUtilInfo_v1__bindgen_ty_1,
    size = 4,
    align = 4
);

/// Utilisation of one process inside a vGPU, in percent.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmDeviceVgpuProcessUtilInfo_v1 {
    pub version: u32,
    pub vgpuProcessUtilInfo: dcgmDeviceVgpuProcessUtilInfo_v1__bindgen_ty_1,
    pub pid: u32,
    pub processName: [c_char; 64],
    pub smUtil: u32,
    pub memUtil: u32,
    pub encUtil: u32,
    pub decUtil: u32,
}
crate::versioned_struct!(
    dcgmDeviceVgpuProcessUtilInfo_v1,
    dcgmDeviceVgpuProcessUtilInfo_version1 = 1,
    size = 92,
    word = 0x0100_005C
);
/// Current version of the vGPU process utilisation.
pub type dcgmDeviceVgpuProcessUtilInfo_t = dcgmDeviceVgpuProcessUtilInfo_v1;
/// Current version word of [`dcgmDeviceVgpuProcessUtilInfo_t`].
pub const dcgmDeviceVgpuProcessUtilInfo_version: u32 = dcgmDeviceVgpuProcessUtilInfo_version1;

/// The vGPU type id, or (in the first record) the number of types (anonymous in C).
#[repr(C)]
#[derive(Copy, Clone)]
pub union dcgmDeviceVgpuTypeInfo_v1__bindgen_ty_1 {
    pub vgpuTypeId: u32,
    pub supportedVgpuTypeCount: u32,
}
crate::plain_struct!(dcgmDeviceVgpuTypeInfo_v1__bindgen_ty_1, size = 4, align = 4);

/// A vGPU type, version 1.
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmDeviceVgpuTypeInfo_v1 {
    pub version: u32,
    pub vgpuTypeInfo: dcgmDeviceVgpuTypeInfo_v1__bindgen_ty_1,
    pub vgpuTypeName: [c_char; 64],
    pub vgpuTypeClass: [c_char; 64],
    pub vgpuTypeLicense: [c_char; 128],
    pub deviceId: i32,
    pub subsystemId: i32,
    pub numDisplayHeads: i32,
    pub maxInstances: i32,
    pub frameRateLimit: i32,
    pub maxResolutionX: i32,
    pub maxResolutionY: i32,
    pub fbTotal: i32,
}
crate::versioned_struct!(
    dcgmDeviceVgpuTypeInfo_v1,
    dcgmDeviceVgpuTypeInfo_version1 = 1,
    size = 296,
    word = 0x0100_0128
);

/// The vGPU type id, or (in the first record) the number of types (anonymous in C).
#[repr(C)]
#[derive(Copy, Clone)]
pub union dcgmDeviceVgpuTypeInfo_v2__bindgen_ty_1 {
    pub vgpuTypeId: u32,
    pub supportedVgpuTypeCount: u32,
}
crate::plain_struct!(dcgmDeviceVgpuTypeInfo_v2__bindgen_ty_1, size = 4, align = 4);

/// A vGPU type, version 2 (adds the GPU-instance profile).
#[repr(C)]
#[derive(Copy, Clone)]
pub struct dcgmDeviceVgpuTypeInfo_v2 {
    pub version: u32,
    pub vgpuTypeInfo: dcgmDeviceVgpuTypeInfo_v2__bindgen_ty_1,
    pub vgpuTypeName: [c_char; 64],
    pub vgpuTypeClass: [c_char; 64],
    pub vgpuTypeLicense: [c_char; 128],
    pub deviceId: i32,
    pub subsystemId: i32,
    pub numDisplayHeads: i32,
    pub maxInstances: i32,
    pub frameRateLimit: i32,
    pub maxResolutionX: i32,
    pub maxResolutionY: i32,
    pub fbTotal: i32,
    pub gpuInstanceProfileId: i32,
}
crate::versioned_struct!(
    dcgmDeviceVgpuTypeInfo_v2,
    dcgmDeviceVgpuTypeInfo_version2 = 2,
    size = 300,
    word = 0x0200_012C
);
/// Current version of the vGPU type info.
pub type dcgmDeviceVgpuTypeInfo_t = dcgmDeviceVgpuTypeInfo_v2;
/// Current version word of [`dcgmDeviceVgpuTypeInfo_t`].
pub const dcgmDeviceVgpuTypeInfo_version: u32 = dcgmDeviceVgpuTypeInfo_version2;

/// A vGPU type a GPU supports.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmDeviceSupportedVgpuTypeInfo_v1 {
    pub version: u32,
    pub deviceId: u64,
    pub subsystemId: u64,
    pub numDisplayHeads: u32,
    pub maxInstances: u32,
    pub frameRateLimit: u32,
    pub maxResolutionX: u32,
    pub maxResolutionY: u32,
    pub fbTotal: u64,
    pub gpuInstanceProfileId: u32,
}
crate::versioned_struct!(
    dcgmDeviceSupportedVgpuTypeInfo_v1,
    dcgmDeviceSupportedVgpuTypeInfo_version1 = 1,
    size = 64,
    word = 0x0100_0040
);
/// Current version of the supported-vGPU-type info.
pub type dcgmDeviceSupportedVgpuTypeInfo_t = dcgmDeviceSupportedVgpuTypeInfo_v1;
/// Current version word of [`dcgmDeviceSupportedVgpuTypeInfo_t`].
pub const dcgmDeviceSupportedVgpuTypeInfo_version: u32 = dcgmDeviceSupportedVgpuTypeInfo_version1;

/// Maximum vGPU types per physical GPU.
pub const DCGM_MAX_VGPU_TYPES_PER_PGPU: usize = 32;
/// Size of a device UUID buffer.
pub const DCGM_DEVICE_UUID_BUFFER_SIZE: usize = 80;
