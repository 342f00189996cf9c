//! nvidia-smi's `--query-gpu` and `--query-compute-apps` properties, one row each: the name and
//! the aliases nvidia-smi accepts, the unit its header shows, what the property means, and where
//! the value comes from in DCGM (a field of DCGM 4.6's registry, something the tool knows
//! itself, or nothing: then the cell is the text nvidia-smi prints where it has no value).
//!
//! The order is nvidia-smi's `--help-query-gpu` order, so that `--help-query-gpu` reads like
//! nvidia-smi's.

use dcgm::{BlankKind, FieldId, Value};

/// One `--query-gpu` property.
#[derive(Debug)]
pub struct Property {
    /// The name nvidia-smi prints in the header (`memory.used`).
    pub name: &'static str,
    /// Other names nvidia-smi accepts for it (`gpu_name` for `name`); the header keeps `name`.
    pub aliases: &'static [&'static str],
    /// The unit in the header (`memory.used [MiB]`) and after each value (`0 MiB`), or "".
    pub unit: &'static str,
    /// A line saying what the property is (the project's words).
    pub meaning: &'static str,
    /// Where the value comes from.
    pub source: Source,
}

/// Where a property's value comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A DCGM field, by its 4.6 C name, shown as [`Show`] says.
    Field(&'static str, Show),
    /// A fabric field: shown only once the GPU's fabric registration has completed
    /// (`DCGM_FI_DEV_FABRIC_MANAGER_STATUS`), `N/A` before, as nvidia-smi does.
    Fabric(&'static str, Show),
    /// The GPU's DCGM id (nvidia-smi's index: both follow NVML's order).
    Index,
    /// How many GPUs the node has.
    Count,
    /// When the query ran (`YYYY/MM/DD HH:MM:SS.mmm`).
    Timestamp,
    /// DCGM has no equivalent: the cell is always this text.
    None(&'static str),
}

/// How a field's value is written.
#[derive(Debug, Clone, Copy)]
pub enum Show {
    /// As DCGM gives it (an integer, a string).
    Plain,
    /// A float with two decimals (watts).
    Fixed2,
    /// `P0`..`P15`.
    Pstate,
    /// 1 `Enabled`, 0 `Disabled`.
    Enabled,
    /// non-zero `Yes`, 0 `No`.
    YesNo,
    /// NVML's compute modes by name.
    ComputeMode,
    /// `0x233510DE`.
    Hex32,
    /// `0x0000000000000001`.
    Hex64,
    /// A part of the PCI bus id string `domain:bus:device.function`: 0, 1 or 2.
    PciPart(usize),
    /// `Active` when this bit of the clock event reasons is set, else `Not Active`.
    Bit(u64),
    /// Nanoseconds written as microseconds.
    NsAsUs,
    /// `major.minor` from DCGM's `major << 16 | minor`.
    ComputeCap,
    /// 1 `valid`, 0 `invalid`.
    Valid,
    /// NVML's GPU recovery actions by name.
    RecoveryAction,
    /// The fabric manager's registration state by name (`N/A` where the GPU has no fabric).
    FabricState,
    /// The fabric manager's error code: `Success` for 0.
    FabricStatus,
    /// A two-bit health flag of NVML's fabric health mask at this shift
    /// (`NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_*`: 0 not supported, 1 true, 2 false).
    HealthBits(u32),
    /// The four-bit "incorrect configuration" code of the fabric health mask (shift 8).
    IncorrectConfig,
    /// NVML's fabric health summary by name.
    HealthSummary,
    /// The native-endian `u32` at this byte offset of a binary field (a C struct).
    U32At(usize),
}

/// What nvidia-smi prints where the driver has no value.
pub const NA: &str = "[N/A]";
/// What nvidia-smi prints where the caller may not read the property.
pub const NO_PERMISSION: &str = "[Insufficient Permissions]";
/// What nvidia-smi prints for a property it keeps only for old scripts.
pub const DEPRECATED: &str = "[Requested functionality has been deprecated]";

impl Property {
    /// The header cell: the name, and the unit in brackets where there is one. nvidia-smi keeps
    /// the unit in the header under `nounits` too: only the values lose theirs.
    pub fn header(&self) -> String {
        if self.unit.is_empty() {
            self.name.to_string()
        } else {
            format!("{} [{}]", self.name, self.unit)
        }
    }

    /// Whether `name` is this property or one of its aliases.
    pub fn is_called(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }

    /// The DCGM field behind the property, if any.
    pub fn field(&self) -> Option<FieldId> {
        match self.source {
            Source::Field(f, _) | Source::Fabric(f, _) => FieldId::by_name(f),
            _ => None,
        }
    }

    /// Where the value comes from, in words, for `--help-query-gpu`.
    pub fn source_text(&self) -> String {
        match self.source {
            Source::Field(f, _) => f.to_string(),
            Source::Fabric(f, _) => format!("{f} (once fabric registration has completed)"),
            Source::Index => "the DCGM GPU id".into(),
            Source::Count => "the number of GPUs DCGM reports".into(),
            Source::Timestamp => "the clock of this machine".into(),
            Source::None(_) => "no DCGM equivalent".into(),
        }
    }
}

/// The property called `name` (its name or an alias).
pub fn gpu_property(name: &str) -> Option<&'static Property> {
    GPU_PROPERTIES.iter().find(|p| p.is_called(name))
}

/// A cell for a blank value. nvidia-smi (580) prints `[N/A]` for what the GPU does not
/// support as well as for what it cannot read now (an H200's `fan.speed`, its L1 cache ECC
/// counters), so DCGM's "not supported" is `[N/A]` too.
pub fn blank_cell(kind: BlankKind) -> String {
    match kind {
        BlankKind::NotPermissioned => NO_PERMISSION.into(),
        _ => NA.into(),
    }
}

/// Writes a field's value as nvidia-smi would, without the unit; `Err` holds a cell that takes
/// no unit (a blank, a name of a state).
pub fn show(v: Option<&Value>, how: Show) -> Result<String, String> {
    let v = match v {
        // A GPU outside any NVLink fabric: nvidia-smi's bare `N/A`.
        None | Some(Value::Blank(_)) if matches!(how, Show::FabricState) => {
            return Err("N/A".into());
        }
        None => return Err(NA.into()),
        Some(Value::Blank(k)) => return Err(blank_cell(*k)),
        Some(v) => v,
    };
    let int = || v.as_i64().ok_or_else(|| NA.to_string());
    let named = |s: &str| Err(s.to_string());
    match how {
        Show::Plain => Ok(match v {
            Value::Double(d) => format!("{d:.2}"),
            other => other.to_string(),
        }),
        Show::Fixed2 => v.as_f64().map(|d| format!("{d:.2}")).ok_or(NA.into()),
        Show::Pstate => match int()? {
            n @ 0..=15 => named(&format!("P{n}")),
            _ => Err(NA.into()),
        },
        Show::Enabled => named(if int()? != 0 { "Enabled" } else { "Disabled" }),
        Show::YesNo => named(if int()? != 0 { "Yes" } else { "No" }),
        Show::ComputeMode => named(match int()? {
            0 => "Default",
            1 => "Exclusive_Thread",
            2 => "Prohibited",
            3 => "Exclusive_Process",
            _ => NA,
        }),
        Show::Hex32 => named(&format!("0x{:08X}", int()? as u32)),
        Show::Hex64 => named(&format!("0x{:016X}", int()? as u64)),
        Show::PciPart(i) => {
            let id = v.as_str().ok_or_else(|| NA.to_string())?;
            let parts: Vec<&str> = id.split([':', '.']).collect();
            let width = if i == 0 { 4 } else { 2 };
            match parts.get(i).and_then(|p| u32::from_str_radix(p, 16).ok()) {
                Some(n) => named(&format!("0x{n:0width$X}")),
                None => Err(NA.into()),
            }
        }
        Show::Bit(bit) => named(if int()? as u64 & bit != 0 {
            "Active"
        } else {
            "Not Active"
        }),
        Show::NsAsUs => Ok((int()? / 1000).to_string()),
        Show::ComputeCap => {
            let n = int()?;
            named(&format!("{}.{}", n >> 16, n & 0xffff))
        }
        Show::Valid => named(if int()? != 0 { "valid" } else { "invalid" }),
        Show::RecoveryAction => named(match int()? {
            0 => "None",
            1 => "Reset",
            2 => "Reboot",
            3 => "Drain P2P",
            4 => "Drain and Reset",
            _ => NA,
        }),
        Show::FabricState => named(match int()? {
            1 => "Not Started",
            2 => "In Progress",
            3 => "Completed",
            4 => "Failure",
            _ => "N/A",
        }),
        Show::FabricStatus => match int()? {
            0 => named("Success"),
            n => Ok(n.to_string()),
        },
        Show::HealthBits(shift) => named(match (int()? as u64 >> shift) & 3 {
            1 => "True",
            2 => "False",
            _ => "Not Supported",
        }),
        Show::IncorrectConfig => named(match (int()? as u64 >> 8) & 0xf {
            1 => "None",
            2 => "Incorrect SysGUID",
            3 => "Incorrect Chassis Serial Number",
            4 => "No Partition",
            5 => "Insufficient NVLinks",
            _ => "Not Supported",
        }),
        Show::HealthSummary => named(match int()? {
            1 => "Healthy",
            2 => "Unhealthy",
            3 => "Limited Capacity",
            _ => "Not Supported",
        }),
        Show::U32At(at) => match v {
            Value::Bytes(b) => b
                .get(at..at + 4)
                .and_then(|w| w.try_into().ok())
                .map(|w| u32::from_ne_bytes(w).to_string())
                .ok_or_else(|| NA.to_string()),
            _ => Err(NA.into()),
        },
    }
}

/// Registration completed, in `DCGM_FI_DEV_FABRIC_MANAGER_STATUS`.
pub const FABRIC_COMPLETED: i64 = 3;

const fn prop(
    name: &'static str,
    aliases: &'static [&'static str],
    unit: &'static str,
    meaning: &'static str,
    source: Source,
) -> Property {
    Property {
        name,
        aliases,
        unit,
        meaning,
        source,
    }
}

use Show::*;
use Source::{Count, Fabric, Field, Index, Timestamp};

const fn f(name: &'static str) -> Source {
    Field(name, Plain)
}
const fn na() -> Source {
    Source::None(NA)
}

// nvidia-smi's clock event reason bits (nvml.h `nvmlClocksEventReason*`).
const IDLE: u64 = 0x1;
const APP_CLOCKS: u64 = 0x2;
const SW_POWER_CAP: u64 = 0x4;
const HW_SLOWDOWN: u64 = 0x8;
const SYNC_BOOST: u64 = 0x10;
const SW_THERMAL: u64 = 0x20;
const HW_THERMAL: u64 = 0x40;
const HW_POWER_BRAKE: u64 = 0x80;

// Where `dcgmDeviceEncStats_v1`'s counters sit (after its version word).
const ENC_SESSIONS: usize = 4;
const ENC_FPS: usize = 8;
const ENC_LATENCY: usize = 12;

/// Every property nvidia-smi's `--help-query-gpu` lists, in its order.
#[rustfmt::skip]
pub static GPU_PROPERTIES: &[Property] = &[
    prop("timestamp", &[], "", "when this line was read", Timestamp),
    prop("driver_version", &[], "", "version of the NVIDIA kernel driver", f("DCGM_FI_SYSTEM_DRIVER_VERSION")),
    prop("vgpu_driver_capability.heterogenous_multivGPU", &[], "", "whether the driver can mix vGPU types on one VM", na()),
    prop("count", &[], "", "how many GPUs the node has", Count),
    prop("name", &["gpu_name"], "", "product name of the board", f("DCGM_FI_DEV_GPU_NAME")),
    prop("serial", &["gpu_serial"], "", "serial number printed on the board", f("DCGM_FI_DEV_BOARD_SERIAL")),
    prop("uuid", &["gpu_uuid"], "", "the GPU's unique GPU-... identifier", f("DCGM_FI_DEV_GPU_UUID")),
    prop("pci.bus_id", &["gpu_bus_id"], "", "PCI address domain:bus:device.function", f("DCGM_FI_DEV_PCI_BUS_ID")),
    prop("pci.domain", &[], "", "PCI domain of the GPU, hexadecimal", Field("DCGM_FI_DEV_PCI_BUS_ID", PciPart(0))),
    prop("pci.bus", &[], "", "PCI bus of the GPU, hexadecimal", Field("DCGM_FI_DEV_PCI_BUS_ID", PciPart(1))),
    prop("pci.device", &[], "", "PCI device of the GPU, hexadecimal", Field("DCGM_FI_DEV_PCI_BUS_ID", PciPart(2))),
    prop("pci.baseClass", &[], "", "PCI base class code", na()),
    prop("pci.subClass", &[], "", "PCI sub-class code", na()),
    prop("pci.device_id", &[], "", "PCI device and vendor id in one number", Field("DCGM_FI_DEV_PCI_COMBINED_ID", Hex32)),
    prop("pci.sub_device_id", &[], "", "PCI subsystem id in one number", Field("DCGM_FI_DEV_PCI_SUBSYS_ID", Hex32)),
    prop("vgpu_device_capability.fractional_multiVgpu", &[], "", "whether fractional vGPU profiles combine on one VM", na()),
    prop("vgpu_device_capability.heterogeneous_timeSlice_profile", &[], "", "whether time-sliced vGPU profiles of different types run together", na()),
    prop("vgpu_device_capability.heterogeneous_timeSlice_sizes", &[], "", "whether time-sliced vGPU profiles of different memory sizes run together", na()),
    prop("vgpu_device_capability.homogeneous_placements", &[], "", "whether placements of equal-size time-sliced vGPUs are reported", na()),
    prop("vgpu_device_capability.mig_timeSlicing", &[], "", "whether time-sliced vGPU works on MIG", na()),
    prop("vgpu_device_capability.mig_timeSlicing_mode", &[], "", "whether MIG time-sliced mode is on", na()),
    prop("pcie.link.gen.current", &[], "", "PCIe generation in use now (old name of gpucurrent)", f("DCGM_FI_DEV_PCIE_LINK_GEN")),
    prop("pcie.link.gen.gpucurrent", &[], "", "PCIe generation in use now; drops when idle", f("DCGM_FI_DEV_PCIE_LINK_GEN")),
    prop("pcie.link.gen.max", &[], "", "highest PCIe generation this GPU in this slot can reach", f("DCGM_FI_DEV_PCIE_MAX_LINK_GEN")),
    prop("pcie.link.gen.gpumax", &[], "", "highest PCIe generation the GPU itself can do", f("DCGM_FI_DEV_PCIE_MAX_LINK_GEN")),
    prop("pcie.link.gen.hostmax", &[], "", "highest PCIe generation of the host's root port", na()),
    prop("pcie.link.width.current", &[], "", "PCIe lanes in use now; drops when idle", f("DCGM_FI_DEV_PCIE_LINK_WIDTH")),
    prop("pcie.link.width.max", &[], "", "most PCIe lanes this GPU in this slot can use", f("DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH")),
    prop("index", &[], "", "the GPU's number on this node (may change across boots)", Index),
    prop("display_mode", &[], "", "no longer reported", Source::None(DEPRECATED)),
    prop("display_attached", &[], "", "whether a monitor is plugged in", na()),
    prop("display_active", &[], "", "whether the GPU has a display set up", na()),
    prop("persistence_mode", &[], "", "whether the driver stays loaded with no client", Field("DCGM_FI_DEV_GPU_PERSISTENCE_MODE", Enabled)),
    prop("addressing_mode", &[], "", "how the GPU reaches host memory: HMM, ATS or None", na()),
    prop("accounting.mode", &[], "", "whether per-process accounting is on", na()),
    prop("accounting.buffer_size", &[], "", "how many processes accounting remembers", na()),
    prop("driver_model.current", &[], "", "Windows driver model in use (none on Linux)", na()),
    prop("driver_model.pending", &[], "", "Windows driver model after reboot (none on Linux)", na()),
    prop("vbios_version", &[], "", "version of the board's BIOS", f("DCGM_FI_DEV_VBIOS_VERSION")),
    prop("inforom.img", &["inforom.image"], "", "version of the whole infoROM image", f("DCGM_FI_DEV_INFOROM_IMAGE_VERSION")),
    prop("inforom.oem", &[], "", "version of the infoROM's OEM object", f("DCGM_FI_DEV_INFOROM_OEM_VERSION")),
    prop("inforom.ecc", &[], "", "version of the infoROM's ECC object", f("DCGM_FI_DEV_INFOROM_ECC_VERSION")),
    prop("inforom.pwr", &["inforom.power"], "", "version of the infoROM's power object", f("DCGM_FI_DEV_INFOROM_POWER_VERSION")),
    prop("inforom.checksum_validation", &[], "", "whether the infoROM checksum is good", Field("DCGM_FI_DEV_INFOROM_VALID", Valid)),
    prop("gpu_recovery_action", &[], "", "what the driver says would bring the GPU back to health", Field("DCGM_FI_DEV_GPU_RECOVERY_ACTION", RecoveryAction)),
    prop("gom.current", &["gpu_operation_mode.current"], "", "GPU operation mode in use", na()),
    prop("gom.pending", &["gpu_operation_mode.pending"], "", "GPU operation mode after reboot", na()),
    prop("fan.speed", &[], "%", "fan speed the GPU asks for, percent of its maximum", f("DCGM_FI_DEV_FAN_SPEED")),
    prop("pstate", &[], "", "performance state, P0 fastest", Field("DCGM_FI_DEV_GPU_PSTATE", Pstate)),
    prop("clocks_event_reasons.supported", &["clocks_throttle_reasons.supported"], "", "mask of the clock slow-down reasons this GPU can report", na()),
    prop("clocks_event_reasons.active", &["clocks_throttle_reasons.active"], "", "mask of the reasons slowing the clocks now", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Hex64)),
    prop("clocks_event_reasons.gpu_idle", &["clocks_throttle_reasons.gpu_idle"], "", "clocks low because nothing runs", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Bit(IDLE))),
    prop("clocks_event_reasons.applications_clocks_setting", &["clocks_throttle_reasons.applications_clocks_setting"], "", "clocks held by the application clock setting", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Bit(APP_CLOCKS))),
    prop("clocks_event_reasons.sw_power_cap", &["clocks_throttle_reasons.sw_power_cap"], "", "clocks lowered to stay under the power limit", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Bit(SW_POWER_CAP))),
    prop("clocks_event_reasons.hw_slowdown", &["clocks_throttle_reasons.hw_slowdown"], "", "hardware halving the clocks (heat or power brake)", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Bit(HW_SLOWDOWN))),
    prop("clocks_event_reasons.hw_thermal_slowdown", &["clocks_throttle_reasons.hw_thermal_slowdown"], "", "hardware halving the clocks because the GPU is too hot", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Bit(HW_THERMAL))),
    prop("clocks_event_reasons.hw_power_brake_slowdown", &["clocks_throttle_reasons.hw_power_brake_slowdown"], "", "hardware halving the clocks on an external power brake signal", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Bit(HW_POWER_BRAKE))),
    prop("clocks_event_reasons.sw_thermal_slowdown", &["clocks_throttle_reasons.sw_thermal_slowdown"], "", "clocks lowered by software because the GPU is too hot", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Bit(SW_THERMAL))),
    prop("clocks_event_reasons.sync_boost", &["clocks_throttle_reasons.sync_boost"], "", "clocks held to the slowest GPU of a sync-boost group", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Bit(SYNC_BOOST))),
    prop("clocks_event_reasons_counters.sw_power_cap", &[], "us", "time spent slowed to stay under the power limit", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP_NS", NsAsUs)),
    prop("clocks_event_reasons_counters.sync_boost", &[], "us", "time spent held to a sync-boost group", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST_NS", NsAsUs)),
    prop("clocks_event_reasons_counters.sw_thermal_slowdown", &[], "us", "time spent slowed by software for heat", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN_NS", NsAsUs)),
    prop("clocks_event_reasons_counters.hw_thermal_slowdown", &[], "us", "time spent halved by hardware for heat", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN_NS", NsAsUs)),
    prop("clocks_event_reasons_counters.hw_power_brake_slowdown", &[], "us", "time spent halved on the power brake signal", Field("DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN_NS", NsAsUs)),
    prop("memory.total", &[], "MiB", "frame buffer the GPU has (less with ECC on)", f("DCGM_FI_DEV_FB_TOTAL")),
    prop("memory.reserved", &[], "MiB", "frame buffer the driver and firmware keep", f("DCGM_FI_DEV_FB_RESERVED")),
    prop("memory.used", &[], "MiB", "frame buffer in use by contexts", f("DCGM_FI_DEV_FB_USED")),
    prop("memory.free", &[], "MiB", "frame buffer nobody holds", f("DCGM_FI_DEV_FB_FREE")),
    prop("compute_mode", &[], "", "how many compute contexts may share the GPU", Field("DCGM_FI_DEV_GPU_COMPUTE_MODE", ComputeMode)),
    prop("compute_cap", &[], "", "CUDA compute capability, major.minor", Field("DCGM_FI_CUDA_GPU_COMPUTE_CAPABILITY", ComputeCap)),
    prop("utilization.gpu", &[], "%", "share of the last sample period with a kernel running", f("DCGM_FI_DEV_GPU_UTIL_RATIO")),
    prop("utilization.memory", &[], "%", "share of the last sample period with memory being read or written", f("DCGM_FI_DEV_MEM_COPY_UTIL")),
    prop("utilization.encoder", &[], "%", "share of the last sample period the video encoder worked", f("DCGM_FI_DEV_ENC_UTIL")),
    prop("utilization.decoder", &[], "%", "share of the last sample period the video decoder worked", f("DCGM_FI_DEV_DEC_UTIL")),
    prop("utilization.jpeg", &[], "%", "share of the last sample period the JPEG engine worked", na()),
    prop("utilization.ofa", &[], "%", "share of the last sample period the optical flow engine worked", na()),
    prop("encoder.stats.sessionCount", &[], "", "video encoder sessions open", Field("DCGM_FI_DEV_ENC_STATS", U32At(ENC_SESSIONS))),
    prop("encoder.stats.averageFps", &[], "", "mean frames per second over those sessions", Field("DCGM_FI_DEV_ENC_STATS", U32At(ENC_FPS))),
    prop("encoder.stats.averageLatency", &[], "", "mean encode latency over those sessions, microseconds", Field("DCGM_FI_DEV_ENC_STATS", U32At(ENC_LATENCY))),
    prop("dramEncryption.mode.current", &[], "", "whether memory encryption is on", na()),
    prop("dramEncryption.mode.pending", &[], "", "whether memory encryption is on after reboot", na()),
    prop("ecc.mode.current", &[], "", "whether ECC is on", Field("DCGM_FI_DEV_ECC_MODE", Enabled)),
    prop("ecc.mode.pending", &[], "", "whether ECC is on after reboot", Field("DCGM_FI_DEV_ECC_PENDING", Enabled)),
    prop("ecc.errors.corrected.volatile.device_memory", &[], "", "corrected errors in device memory since the driver loaded", f("DCGM_FI_DEV_ECC_SBE_VOL_DEV")),
    prop("ecc.errors.corrected.volatile.dram", &[], "", "corrected errors in DRAM since the driver loaded", f("DCGM_FI_DEV_ECC_SBE_VOL_DEV")),
    prop("ecc.errors.corrected.volatile.register_file", &[], "", "corrected errors in register files since the driver loaded", f("DCGM_FI_DEV_ECC_SBE_VOL_REG")),
    prop("ecc.errors.corrected.volatile.l1_cache", &[], "", "corrected errors in L1 caches since the driver loaded", f("DCGM_FI_DEV_ECC_SBE_VOL_L1")),
    prop("ecc.errors.corrected.volatile.l2_cache", &[], "", "corrected errors in the L2 cache since the driver loaded", f("DCGM_FI_DEV_ECC_SBE_VOL_L2")),
    prop("ecc.errors.corrected.volatile.texture_memory", &[], "", "corrected texture memory errors since the driver loaded", f("DCGM_FI_DEV_ECC_SBE_VOL_TEX")),
    prop("ecc.errors.corrected.volatile.cbu", &[], "", "corrected CBU errors since the driver loaded", f("DCGM_FI_DEV_ECC_SBE_VOL_CBU")),
    prop("ecc.errors.corrected.volatile.sram", &[], "", "corrected SRAM errors since the driver loaded", f("DCGM_FI_DEV_ECC_SBE_VOL_SRM")),
    prop("ecc.errors.corrected.volatile.total", &[], "", "corrected errors anywhere since the driver loaded", f("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL")),
    prop("ecc.errors.corrected.aggregate.device_memory", &[], "", "corrected errors in device memory over the GPU's life", f("DCGM_FI_DEV_ECC_SBE_AGG_DEV")),
    prop("ecc.errors.corrected.aggregate.dram", &[], "", "corrected errors in DRAM over the GPU's life", f("DCGM_FI_DEV_ECC_SBE_AGG_DEV")),
    prop("ecc.errors.corrected.aggregate.register_file", &[], "", "corrected errors in register files over the GPU's life", f("DCGM_FI_DEV_ECC_SBE_AGG_REG")),
    prop("ecc.errors.corrected.aggregate.l1_cache", &[], "", "corrected errors in L1 caches over the GPU's life", f("DCGM_FI_DEV_ECC_SBE_AGG_L1")),
    prop("ecc.errors.corrected.aggregate.l2_cache", &[], "", "corrected errors in the L2 cache over the GPU's life", f("DCGM_FI_DEV_ECC_SBE_AGG_L2")),
    prop("ecc.errors.corrected.aggregate.texture_memory", &[], "", "corrected texture memory errors over the GPU's life", f("DCGM_FI_DEV_ECC_SBE_AGG_TEX")),
    prop("ecc.errors.corrected.aggregate.cbu", &[], "", "corrected CBU errors over the GPU's life", f("DCGM_FI_DEV_ECC_SBE_AGG_CBU")),
    prop("ecc.errors.corrected.aggregate.sram", &[], "", "corrected SRAM errors over the GPU's life", f("DCGM_FI_DEV_ECC_SBE_AGG_SRM")),
    prop("ecc.errors.corrected.aggregate.total", &[], "", "corrected errors anywhere over the GPU's life", f("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL")),
    prop("ecc.errors.uncorrected.volatile.device_memory", &[], "", "uncorrectable errors in device memory since the driver loaded", f("DCGM_FI_DEV_ECC_DBE_VOL_DEV")),
    prop("ecc.errors.uncorrected.volatile.dram", &[], "", "uncorrectable errors in DRAM since the driver loaded", f("DCGM_FI_DEV_ECC_DBE_VOL_DEV")),
    prop("ecc.errors.uncorrected.volatile.register_file", &[], "", "uncorrectable errors in register files since the driver loaded", f("DCGM_FI_DEV_ECC_DBE_VOL_REG")),
    prop("ecc.errors.uncorrected.volatile.l1_cache", &[], "", "uncorrectable errors in L1 caches since the driver loaded", f("DCGM_FI_DEV_ECC_DBE_VOL_L1")),
    prop("ecc.errors.uncorrected.volatile.l2_cache", &[], "", "uncorrectable errors in the L2 cache since the driver loaded", f("DCGM_FI_DEV_ECC_DBE_VOL_L2")),
    prop("ecc.errors.uncorrected.volatile.texture_memory", &[], "", "uncorrectable texture memory errors since the driver loaded", f("DCGM_FI_DEV_ECC_DBE_VOL_TEX")),
    prop("ecc.errors.uncorrected.volatile.cbu", &[], "", "uncorrectable CBU errors since the driver loaded", f("DCGM_FI_DEV_ECC_DBE_VOL_CBU")),
    prop("ecc.errors.uncorrected.volatile.sram", &[], "", "uncorrectable SRAM errors since the driver loaded", f("DCGM_FI_DEV_ECC_DBE_VOL_SRM")),
    prop("ecc.errors.uncorrected.volatile.total", &[], "", "uncorrectable errors anywhere since the driver loaded", f("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL")),
    prop("ecc.errors.uncorrected.aggregate.device_memory", &[], "", "uncorrectable errors in device memory over the GPU's life", f("DCGM_FI_DEV_ECC_DBE_AGG_DEV")),
    prop("ecc.errors.uncorrected.aggregate.dram", &[], "", "uncorrectable errors in DRAM over the GPU's life", f("DCGM_FI_DEV_ECC_DBE_AGG_DEV")),
    prop("ecc.errors.uncorrected.aggregate.register_file", &[], "", "uncorrectable errors in register files over the GPU's life", f("DCGM_FI_DEV_ECC_DBE_AGG_REG")),
    prop("ecc.errors.uncorrected.aggregate.l1_cache", &[], "", "uncorrectable errors in L1 caches over the GPU's life", f("DCGM_FI_DEV_ECC_DBE_AGG_L1")),
    prop("ecc.errors.uncorrected.aggregate.l2_cache", &[], "", "uncorrectable errors in the L2 cache over the GPU's life", f("DCGM_FI_DEV_ECC_DBE_AGG_L2")),
    prop("ecc.errors.uncorrected.aggregate.texture_memory", &[], "", "uncorrectable texture memory errors over the GPU's life", f("DCGM_FI_DEV_ECC_DBE_AGG_TEX")),
    prop("ecc.errors.uncorrected.aggregate.cbu", &[], "", "uncorrectable CBU errors over the GPU's life", f("DCGM_FI_DEV_ECC_DBE_AGG_CBU")),
    prop("ecc.errors.uncorrected.aggregate.sram", &[], "", "uncorrectable SRAM errors over the GPU's life", f("DCGM_FI_DEV_ECC_DBE_AGG_SRM")),
    prop("ecc.errors.uncorrected.aggregate.total", &[], "", "uncorrectable errors anywhere over the GPU's life", f("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL")),
    prop("ecc.errors.uncorrected.volatile.sram.parity", &[], "", "distinct SRAM parity errors since the driver loaded", na()),
    prop("ecc.errors.uncorrected.volatile.sram.secded", &[], "", "distinct SRAM SEC-DED errors since the driver loaded", na()),
    prop("ecc.errors.uncorrected.aggregate.sram.parity", &[], "", "distinct SRAM parity errors over the GPU's life", na()),
    prop("ecc.errors.uncorrected.aggregate.sram.secded", &[], "", "distinct SRAM SEC-DED errors over the GPU's life", na()),
    prop("ecc.errors.uncorrected.aggregate.sram.thresholdExceeded", &[], "", "whether SRAM errors passed the threshold that calls for action", Field("DCGM_FI_DEV_SRAM_EXCEEDED", YesNo)),
    prop("ecc.errors.uncorrected.aggregate.sram.l2", &[], "", "distinct SRAM errors in the L2 cache over the GPU's life", na()),
    prop("ecc.errors.uncorrected.aggregate.sram.sm", &[], "", "distinct SRAM errors in the SMs over the GPU's life", na()),
    prop("ecc.errors.uncorrected.aggregate.sram.mcu", &[], "", "distinct SRAM errors in the microcontrollers over the GPU's life", na()),
    prop("ecc.errors.uncorrected.aggregate.sram.pcie", &[], "", "SRAM errors in the PCIe block over the GPU's life", na()),
    prop("ecc.errors.uncorrected.aggregate.sram.other", &[], "", "distinct SRAM errors anywhere else over the GPU's life", na()),
    prop("retired_pages.single_bit_ecc.count", &["retired_pages.sbe"], "", "memory pages taken out of use after repeated corrected errors", f("DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL")),
    prop("retired_pages.double_bit.count", &["retired_pages.dbe"], "", "memory pages taken out of use after an uncorrectable error", f("DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL")),
    prop("retired_pages.pending", &[], "", "whether pages wait to be retired at the next reboot", Field("DCGM_FI_DEV_PAGE_RETIRED_PENDING", YesNo)),
    prop("remapped_rows.correctable", &["remapped_rows.sbe"], "", "memory rows replaced after repeated corrected errors", f("DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL")),
    prop("remapped_rows.correctable_inactive", &[], "", "rows replaced after corrected errors, not yet in effect", na()),
    prop("remapped_rows.uncorrectable", &["remapped_rows.dbe"], "", "memory rows replaced after an uncorrectable error", f("DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL")),
    prop("remapped_rows.uncorrectable_inactive", &[], "", "rows replaced after uncorrectable errors, not yet in effect", na()),
    prop("remapped_rows.pending", &[], "", "whether a row replacement waits for a GPU reset", Field("DCGM_FI_DEV_ROW_REMAP_PENDING", YesNo)),
    prop("remapped_rows.failure", &[], "", "whether a row replacement has ever failed", Field("DCGM_FI_DEV_ROW_REMAP_FAILED", YesNo)),
    prop("remapped_rows.histogram.max", &[], "", "memory banks with every spare row left", f("DCGM_FI_DEV_BANK_REMAP_AVAIL_MAX")),
    prop("remapped_rows.histogram.high", &[], "", "memory banks with many spare rows left", f("DCGM_FI_DEV_BANK_REMAP_AVAIL_HIGH")),
    prop("remapped_rows.histogram.partial", &[], "", "memory banks with some spare rows left", f("DCGM_FI_DEV_BANK_REMAP_AVAIL_PARTIAL")),
    prop("remapped_rows.histogram.low", &[], "", "memory banks with few spare rows left", f("DCGM_FI_DEV_BANK_REMAP_AVAIL_LOW")),
    prop("remapped_rows.histogram.none", &[], "", "memory banks with no spare row left", f("DCGM_FI_DEV_BANK_REMAP_AVAIL_NONE")),
    prop("temperature.gpu", &[], "", "GPU core temperature, degrees C", f("DCGM_FI_DEV_GPU_TEMP_CELSIUS")),
    prop("temperature.gpu.tlimit", &[], "", "degrees C left before the GPU starts slowing for heat", f("DCGM_FI_DEV_GPU_TEMP_MARGIN_CELSIUS")),
    prop("temperature.memory", &[], "", "HBM temperature, degrees C", f("DCGM_FI_DEV_MEMORY_TEMP_CELSIUS")),
    prop("power.management", &[], "", "whether the board measures and limits its power", na()),
    prop("power.draw", &[], "W", "board power, watts (a one-second mean on Ampere and later)", Field("DCGM_FI_DEV_BOARD_POWER_WATTS", Fixed2)),
    prop("power.draw.average", &["gpu.power.draw.average"], "W", "board power averaged by the driver, watts", Field("DCGM_FI_DEV_BOARD_POWER_WATTS", Fixed2)),
    prop("power.draw.instant", &["gpu.power.draw.instant"], "W", "board power at this instant, watts", Field("DCGM_FI_DEV_BOARD_POWER_RAW_WATTS", Fixed2)),
    prop("power.limit", &["gpu.power.requested_limit"], "W", "power limit software asked for, watts", Field("DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS", Fixed2)),
    prop("enforced.power.limit", &["gpu.power.current_limit"], "W", "power limit in force (the lowest of all limiters), watts", Field("DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS", Fixed2)),
    prop("power.default_limit", &["gpu.power.default_limit"], "W", "power limit after a driver reload, watts", Field("DCGM_FI_DEV_BOARD_POWER_LIMIT_DEFAULT_WATTS", Fixed2)),
    prop("power.min_limit", &["gpu.power.min_limit"], "W", "lowest power limit that can be set, watts", Field("DCGM_FI_DEV_BOARD_POWER_LIMIT_MIN_WATTS", Fixed2)),
    prop("power.max_limit", &["gpu.power.max_limit"], "W", "highest power limit that can be set, watts", Field("DCGM_FI_DEV_BOARD_POWER_LIMIT_MAX_WATTS", Fixed2)),
    prop("module.power.draw.average", &[], "W", "power of the whole module (GPU and its CPU), averaged, watts", na()),
    prop("module.power.draw.instant", &[], "W", "power of the whole module at this instant, watts", na()),
    prop("module.power.limit", &["module.power.requested_limit"], "W", "module power limit software asked for, watts", na()),
    prop("module.enforced.power.limit", &["module.power.current_limit"], "W", "module power limit in force, watts", na()),
    prop("module.power.default_limit", &[], "W", "module power limit after a driver reload, watts", na()),
    prop("module.power.min_limit", &[], "W", "lowest module power limit that can be set, watts", na()),
    prop("module.power.max_limit", &[], "W", "highest module power limit that can be set, watts", na()),
    prop("power_smoothing.delayed_power_smoothing_supported", &[], "", "whether delayed power smoothing is available", na()),
    prop("power_smoothing.primary_power_floor", &[], "W", "power smoothing's primary floor, watts", na()),
    prop("power_smoothing.secondary_power_floor", &[], "W", "power smoothing's secondary floor, watts", na()),
    prop("power_smoothing.min_primary_floor_activation_offset", &[], "W", "smallest offset that activates the primary floor, watts", na()),
    prop("power_smoothing.min_primary_floor_activation_point", &[], "W", "lowest point that activates the primary floor, watts", na()),
    prop("power_smoothing.window_multiplier", &[], "ms", "power smoothing's window multiplier, milliseconds", na()),
    prop("power_smoothing.curr_profile.secondary_power_floor", &[], "W", "secondary floor of the active profile, watts", na()),
    prop("power_smoothing.curr_profile.primary_floor_act_window_multiplier", &[], "", "primary floor activation window multiplier of the active profile", na()),
    prop("power_smoothing.curr_profile.primary_floor_tar_window_multiplier", &[], "", "primary floor target window multiplier of the active profile", na()),
    prop("power_smoothing.curr_profile.primary_floor_act_offset", &[], "W", "primary floor activation offset of the active profile, watts", na()),
    prop("power_smoothing.admin_override.secondary_power_floor", &[], "W", "administrator's secondary floor, watts, where set", na()),
    prop("power_smoothing.admin_override.primary_floor_act_window_multiplier", &[], "", "administrator's activation window multiplier, where set", na()),
    prop("power_smoothing.admin_override.primary_floor_tar_window_multiplier", &[], "", "administrator's target window multiplier, where set", na()),
    prop("power_smoothing.admin_override.primary_floor_act_offset", &[], "W", "administrator's activation offset, watts, where set", na()),
    prop("clocks.current.graphics", &["clocks.gr"], "MHz", "graphics clock now (DCGM reads the SM clock, the same domain)", f("DCGM_FI_DEV_SM_CLOCK")),
    prop("clocks.current.sm", &["clocks.sm"], "MHz", "SM clock now", f("DCGM_FI_DEV_SM_CLOCK")),
    prop("clocks.current.memory", &["clocks.mem"], "MHz", "memory clock now", f("DCGM_FI_DEV_MEM_CLOCK")),
    prop("clocks.current.video", &["clocks.video"], "MHz", "video engine clock now", f("DCGM_FI_DEV_VIDEO_CLOCK")),
    prop("clocks.applications.graphics", &["clocks.applications.gr"], "MHz", "graphics clock applications are set to run at", f("DCGM_FI_DEV_APP_SM_CLOCK")),
    prop("clocks.applications.memory", &["clocks.applications.mem"], "MHz", "memory clock applications are set to run at", f("DCGM_FI_DEV_APP_MEM_CLOCK")),
    prop("clocks.default_applications.graphics", &["clocks.default_applications.gr"], "MHz", "factory application graphics clock", na()),
    prop("clocks.default_applications.memory", &["clocks.default_applications.mem"], "MHz", "factory application memory clock", na()),
    prop("clocks.max.graphics", &["clocks.max.gr"], "MHz", "highest graphics clock the GPU is built for", f("DCGM_FI_DEV_MAX_SM_CLOCK")),
    prop("clocks.max.sm", &[], "MHz", "highest SM clock the GPU is built for", f("DCGM_FI_DEV_MAX_SM_CLOCK")),
    prop("clocks.max.memory", &["clocks.max.mem"], "MHz", "highest memory clock the GPU is built for", f("DCGM_FI_DEV_MAX_MEM_CLOCK")),
    prop("mig.mode.current", &[], "", "whether the GPU is split into MIG instances", Field("DCGM_FI_DEV_MIG_MODE", Enabled)),
    prop("mig.mode.pending", &[], "", "whether MIG is on after the next GPU reset", na()),
    prop("gsp.mode.current", &[], "", "whether the GSP firmware runs", na()),
    prop("gsp.mode.default", &[], "", "whether the GSP firmware runs by default", na()),
    prop("c2c.mode", &[], "", "whether the chip-to-chip link to a CPU is on", na()),
    prop("protected_memory.total", &[], "MiB", "memory set aside for confidential computing", na()),
    prop("protected_memory.used", &[], "MiB", "confidential computing memory in use", na()),
    prop("protected_memory.free", &[], "MiB", "confidential computing memory nobody holds", na()),
    prop("fabric.state", &[], "", "where the GPU is in joining the NVLink fabric", Field("DCGM_FI_DEV_FABRIC_MANAGER_STATUS", FabricState)),
    prop("fabric.status", &[], "", "the fabric join's result, once done", Fabric("DCGM_FI_DEV_FABRIC_MANAGER_ERROR", FabricStatus)),
    prop("fabric.cliqueId", &[], "", "the NVLink clique the GPU belongs to", Fabric("DCGM_FI_DEV_FABRIC_CLIQUE_ID", Plain)),
    prop("fabric.clusterUuid", &[], "", "the NVLink cluster the GPU belongs to", Fabric("DCGM_FI_DEV_FABRIC_CLUSTER_UUID", Plain)),
    prop("fabric.health.summary", &[], "", "the fabric's overall health", Fabric("DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY", HealthSummary)),
    prop("fabric.health.bandwidth", &[], "", "whether fabric bandwidth is degraded", Fabric("DCGM_FI_DEV_FABRIC_HEALTH_MASK", HealthBits(0))),
    prop("fabric.health.route_recovery_in_progress", &[], "", "whether a fabric route is being recovered", Fabric("DCGM_FI_DEV_FABRIC_HEALTH_MASK", HealthBits(2))),
    prop("fabric.health.route_unhealthy", &[], "", "whether a fabric route is unhealthy", Fabric("DCGM_FI_DEV_FABRIC_HEALTH_MASK", HealthBits(4))),
    prop("fabric.health.access_timeout_recovery", &[], "", "whether the fabric recovers from an access timeout", Fabric("DCGM_FI_DEV_FABRIC_HEALTH_MASK", HealthBits(6))),
    prop("fabric.health.incorrect_configuration", &[], "", "what is wrong in the fabric's set-up, if anything", Fabric("DCGM_FI_DEV_FABRIC_HEALTH_MASK", IncorrectConfig)),
    prop("fabric.health.partition_assigned", &[], "", "whether the GPU has a fabric partition", Source::None("N/A")), // not in DCGM 4.6's health mask
    prop("platform.chassis_serial_number", &[], "", "serial number of the chassis holding the GPU", f("DCGM_FI_DEV_PLATFORM_CHASSIS_SERIAL_NUMBER")),
    prop("platform.slot_number", &[], "", "chassis slot of the GPU's tray (switch trays counted)", f("DCGM_FI_DEV_PLATFORM_CHASSIS_SLOT_NUMBER")),
    prop("platform.tray_index", &[], "", "index of the GPU's tray among compute trays", f("DCGM_FI_DEV_PLATFORM_TRAY_INDEX")),
    prop("platform.host_id", &[], "", "index of the node within its slot", f("DCGM_FI_DEV_PLATFORM_HOST_ID")),
    prop("platform.peer_type", &[], "", "how the GPU's NVLinks reach their peers (DCGM's number: nvidia-smi names it)", f("DCGM_FI_DEV_PLATFORM_PEER_TYPE")),
    prop("platform.module_id", &[], "", "the GPU's number within its node", f("DCGM_FI_DEV_PLATFORM_MODULE_ID")),
    prop("platform.gpu_fabric_guid", &[], "", "the GPU's fabric GUID", na()),
    prop("hostname", &[], "", "host name the driver associates with the GPU", na()),
];

/// One `--query-compute-apps` property.
#[derive(Debug)]
pub struct AppProperty {
    /// The header name.
    pub name: &'static str,
    /// Other names nvidia-smi accepts.
    pub aliases: &'static [&'static str],
    /// The unit, or "".
    pub unit: &'static str,
}

impl AppProperty {
    /// The header cell (see [`Property::header`]).
    pub fn header(&self) -> String {
        if self.unit.is_empty() {
            self.name.to_string()
        } else {
            format!("{} [{}]", self.name, self.unit)
        }
    }
}

/// Every property of nvidia-smi's `--help-query-compute-apps`, in its order.
#[rustfmt::skip]
pub static APP_PROPERTIES: &[AppProperty] = &[
    AppProperty { name: "timestamp", aliases: &[], unit: "" },
    AppProperty { name: "gpu_name", aliases: &[], unit: "" },
    AppProperty { name: "gpu_bus_id", aliases: &[], unit: "" },
    AppProperty { name: "gpu_serial", aliases: &[], unit: "" },
    AppProperty { name: "gpu_uuid", aliases: &[], unit: "" },
    AppProperty { name: "pid", aliases: &[], unit: "" },
    AppProperty { name: "process_name", aliases: &["name"], unit: "" },
    AppProperty { name: "used_gpu_memory", aliases: &["used_memory"], unit: "MiB" },
    // Not in nvidia-smi's list: the GPU's index, which this tool has always offered.
    AppProperty { name: "gpu_index", aliases: &[], unit: "" },
];

/// The compute-apps property called `name`.
pub fn app_property(name: &str) -> Option<&'static AppProperty> {
    APP_PROPERTIES
        .iter()
        .find(|p| p.name == name || p.aliases.contains(&name))
}

/// `YYYY/MM/DD HH:MM:SS.mmm` in local time, nvidia-smi's timestamp layout.
pub fn timestamp(t: std::time::SystemTime) -> String {
    super::local_time::LocalTime::at(t).nvsmi()
}
