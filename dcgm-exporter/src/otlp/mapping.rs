//! Which OpenTelemetry metric each counters-file row becomes, in which unit and as which
//! instrument, and which attribute each Prometheus label becomes: the OpenTelemetry semantic
//! conventions for hardware (`hw.gpu.*`, `hw.power`, `hw.energy`, `hw.errors`, `hw.status`;
//! status "development") where they define one, and a `dcgm.*` namespace in SI units for the
//! rest. The README's "OpenTelemetry (OTLP)" section is this table.

use std::sync::OnceLock;

use dcgm::{EntityGroup, FieldId};
use dcgm_prometheus::{CounterField, MetricFamily, MetricKind, row_entity_group};

/// How a value is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instrument {
    /// A value that goes up and down, sampled (OTLP `Gauge`).
    Gauge,
    /// A count that only grows (OTLP cumulative monotonic `Sum`).
    Counter,
    /// An amount that goes up and down, additive across attributes (OTLP cumulative
    /// non-monotonic `Sum`, what the semantic conventions call an `UpDownCounter`).
    UpDownCounter,
}

impl Instrument {
    /// The name the README uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Gauge => "Gauge",
            Self::Counter => "Counter (cumulative, monotonic)",
            Self::UpDownCounter => "UpDownCounter (cumulative)",
        }
    }
}

/// The OpenTelemetry metric of a row.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricMapping {
    /// The metric name (`hw.power`, `dcgm.gpu.temperature`).
    pub name: String,
    /// Its UCUM unit (`W`, `By`, `1`; empty where DCGM's own unit is kept).
    pub unit: &'static str,
    /// Its instrument.
    pub instrument: Instrument,
    /// What the row's value is multiplied by (MiB to bytes, MHz to Hz, percent to a fraction).
    pub scale: f64,
    /// Attributes every data point of the row carries (`hw.gpu.task`, `error.type`,
    /// `network.io.direction`).
    pub attributes: &'static [(&'static str, &'static str)],
}

/// Bytes in a MiB.
pub const MIB: f64 = 1_048_576.0;

/// One row of the table: the DCGM field or exporter row, and its metric.
struct Row {
    key: &'static str,
    name: &'static str,
    unit: &'static str,
    instrument: Instrument,
    scale: f64,
    attributes: &'static [(&'static str, &'static str)],
}

const fn row(
    key: &'static str,
    name: &'static str,
    unit: &'static str,
    instrument: Instrument,
    scale: f64,
    attributes: &'static [(&'static str, &'static str)],
) -> Row {
    Row {
        key,
        name,
        unit,
        instrument,
        scale,
        attributes,
    }
}

use Instrument::{Counter, Gauge, UpDownCounter};

/// The fields and rows with a metric of their own. Any other field gets
/// [`generic_name`], its DCGM unit, and the instrument of its row's type.
const TABLE: &[Row] = &[
    // Semantic conventions (hw.*).
    row(
        "DCGM_FI_DEV_GPU_UTIL",
        "hw.gpu.utilization",
        "1",
        Gauge,
        0.01,
        &[("hw.gpu.task", "general")],
    ),
    row(
        "DCGM_FI_DEV_ENC_UTIL",
        "hw.gpu.utilization",
        "1",
        Gauge,
        0.01,
        &[("hw.gpu.task", "encoder")],
    ),
    row(
        "DCGM_FI_DEV_DEC_UTIL",
        "hw.gpu.utilization",
        "1",
        Gauge,
        0.01,
        &[("hw.gpu.task", "decoder")],
    ),
    row(
        "DCGM_FI_DEV_FB_USED",
        "hw.gpu.memory.usage",
        "By",
        UpDownCounter,
        MIB,
        &[],
    ),
    row(
        "DCGM_FI_DEV_FB_TOTAL",
        "hw.gpu.memory.limit",
        "By",
        UpDownCounter,
        MIB,
        &[],
    ),
    row("DCGM_FI_DEV_POWER_USAGE", "hw.power", "W", Gauge, 1.0, &[]),
    row(
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "hw.energy",
        "J",
        Counter,
        0.001,
        &[],
    ),
    row(
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "hw.errors",
        "{error}",
        Counter,
        1.0,
        &[("error.type", "corrected")],
    ),
    row(
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "hw.errors",
        "{error}",
        Counter,
        1.0,
        &[("error.type", "uncorrected")],
    ),
    // dcgm.*: GPU.
    row(
        "DCGM_FI_DEV_GPU_TEMP",
        "dcgm.gpu.temperature",
        "Cel",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_DEV_MEMORY_TEMP",
        "dcgm.gpu.memory.temperature",
        "Cel",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_DEV_SM_CLOCK",
        "dcgm.gpu.clock.sm",
        "Hz",
        Gauge,
        1e6,
        &[],
    ),
    row(
        "DCGM_FI_DEV_MEM_CLOCK",
        "dcgm.gpu.clock.memory",
        "Hz",
        Gauge,
        1e6,
        &[],
    ),
    row(
        "DCGM_FI_DEV_MEM_COPY_UTIL",
        "dcgm.gpu.memory.copy.utilization",
        "1",
        Gauge,
        0.01,
        &[],
    ),
    row(
        "DCGM_FI_DEV_FB_FREE",
        "dcgm.gpu.memory.free",
        "By",
        UpDownCounter,
        MIB,
        &[],
    ),
    row(
        "DCGM_FI_DEV_FB_RESERVED",
        "dcgm.gpu.memory.reserved",
        "By",
        UpDownCounter,
        MIB,
        &[],
    ),
    row(
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        "dcgm.gpu.pcie.replays",
        "{replay}",
        Counter,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
        "dcgm.gpu.ecc.aggregate.errors",
        "{error}",
        Counter,
        1.0,
        &[("error.type", "corrected")],
    ),
    row(
        "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
        "dcgm.gpu.ecc.aggregate.errors",
        "{error}",
        Counter,
        1.0,
        &[("error.type", "uncorrected")],
    ),
    row(
        "DCGM_FI_DEV_XID_ERRORS",
        "dcgm.gpu.xid.last",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "dcgm.gpu.memory.remapped_rows",
        "{row}",
        Counter,
        1.0,
        &[("error.type", "uncorrected")],
    ),
    row(
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "dcgm.gpu.memory.remapped_rows",
        "{row}",
        Counter,
        1.0,
        &[("error.type", "corrected")],
    ),
    row(
        "DCGM_FI_DEV_ROW_REMAP_FAILURE",
        "dcgm.gpu.memory.row_remap_failure",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
        "dcgm.gpu.vgpu.license_status",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        "dcgm.gpu.nvlink.bandwidth.total",
        "",
        Counter,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "dcgm.gpu.prof.graphics_engine.active",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_PROF_SM_ACTIVE",
        "dcgm.gpu.prof.sm.active",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_PROF_SM_OCCUPANCY",
        "dcgm.gpu.prof.sm.occupancy",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "dcgm.gpu.prof.pipe.tensor.active",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
        "dcgm.gpu.prof.pipe.fp64.active",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_PROF_PIPE_FP32_ACTIVE",
        "dcgm.gpu.prof.pipe.fp32.active",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_PROF_PIPE_FP16_ACTIVE",
        "dcgm.gpu.prof.pipe.fp16.active",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_PROF_DRAM_ACTIVE",
        "dcgm.gpu.prof.dram.active",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_PROF_PCIE_TX_BYTES",
        "dcgm.gpu.pcie.throughput",
        "By/s",
        Gauge,
        1.0,
        &[("network.io.direction", "transmit")],
    ),
    row(
        "DCGM_FI_PROF_PCIE_RX_BYTES",
        "dcgm.gpu.pcie.throughput",
        "By/s",
        Gauge,
        1.0,
        &[("network.io.direction", "receive")],
    ),
    row(
        "DCGM_FI_PROF_NVLINK_TX_BYTES",
        "dcgm.gpu.nvlink.throughput",
        "By/s",
        Gauge,
        1.0,
        &[("network.io.direction", "transmit")],
    ),
    row(
        "DCGM_FI_PROF_NVLINK_RX_BYTES",
        "dcgm.gpu.nvlink.throughput",
        "By/s",
        Gauge,
        1.0,
        &[("network.io.direction", "receive")],
    ),
    // dcgm.*: the exporter's rows.
    row(
        "DCGM_EXP_XID_ERRORS_COUNT",
        "dcgm.gpu.xid.window.errors",
        "{error}",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_EXP_CLOCK_EVENTS_COUNT",
        "dcgm.gpu.clock_events.window.events",
        "{event}",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_EXP_GPU_HEALTH_STATUS",
        "dcgm.gpu.health",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_EXP_P2P_STATUS",
        "dcgm.gpu.p2p.status",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row("DCGM_EXP_GPU_INFO", "dcgm.gpu.info", "1", Gauge, 1.0, &[]),
    row(
        "DCGM_EXP_POD_FB_USED",
        "dcgm.pod.gpu.memory.usage",
        "By",
        UpDownCounter,
        MIB,
        &[],
    ),
    row(
        "DCGM_EXP_HPC_JOB_INFO",
        "dcgm.hpc.job.info",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    // dcgm.*: NvSwitches and CPUs.
    row(
        "DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS",
        "dcgm.nvswitch.temperature",
        "Cel",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_DEV_NVSWITCH_VOLTAGE_MVOLT",
        "dcgm.nvswitch.voltage",
        "V",
        Gauge,
        0.001,
        &[],
    ),
    row(
        "DCGM_FI_DEV_NVSWITCH_POWER_VDD_WATTS",
        "dcgm.nvswitch.power.vdd",
        "W",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_TX",
        "dcgm.nvswitch.link.io",
        "By",
        Counter,
        1.0,
        &[("network.io.direction", "transmit")],
    ),
    row(
        "DCGM_FI_DEV_NVSWITCH_LINK_THROUGHPUT_RX",
        "dcgm.nvswitch.link.io",
        "By",
        Counter,
        1.0,
        &[("network.io.direction", "receive")],
    ),
    row(
        "DCGM_FI_DEV_CPU_TEMP_CELSIUS",
        "dcgm.cpu.temperature",
        "Cel",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_DEV_CPU_POWER_WATTS",
        "dcgm.cpu.power",
        "W",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_DEV_CPU_UTIL_TOTAL",
        "dcgm.cpu.utilization",
        "1",
        Gauge,
        1.0,
        &[],
    ),
    row(
        "DCGM_FI_DEV_CPU_CLOCK_CURRENT",
        "dcgm.cpu.clock",
        "Hz",
        Gauge,
        1e3,
        &[],
    ),
];

/// Metrics computed from others (not rows of the counters file).
pub mod derived {
    /// `hw.gpu.memory.limit` from `DCGM_FI_DEV_FB_USED + FB_FREE + FB_RESERVED`, when the
    /// counters have those three rows and not `DCGM_FI_DEV_FB_TOTAL`.
    pub const MEMORY_LIMIT: &str = "hw.gpu.memory.limit";
    /// `hw.gpu.memory.utilization`: `FB_USED / (FB_USED + FB_FREE + FB_RESERVED)`.
    pub const MEMORY_UTILIZATION: &str = "hw.gpu.memory.utilization";
    /// `hw.gpu.io`: bytes through PCIe, summed from `DCGM_FI_PROF_PCIE_{TX,RX}_BYTES` (bytes
    /// per second) times the time between collections.
    pub const IO: &str = "hw.gpu.io";
    /// `hw.status` from the `ALL` watch of `DCGM_EXP_GPU_HEALTH_STATUS`: one point per
    /// `hw.state` (`ok`, `degraded`, `failed`), 1 for the GPU's state and 0 for the others.
    pub const STATUS: &str = "hw.status";
}

/// The key a family is looked up by: its DCGM field's name, or the exporter row's name.
fn key(f: &MetricFamily) -> std::borrow::Cow<'_, str> {
    match f.field {
        Some(CounterField::Dcgm(id)) if id.is_known() => id.name().into(),
        _ => f.name.as_str().into(),
    }
}

/// The `dcgm.*` name of a field without an entry: `DCGM_FI_DEV_FAN_SPEED` →
/// `dcgm.gpu.fan_speed`, `DCGM_FI_PROF_X` → `dcgm.gpu.prof.x`, NvSwitch, NVLink and CPU
/// fields under `dcgm.nvswitch`, `dcgm.nvlink`, `dcgm.cpu`; any other name → `dcgm.` and the
/// name in lower case.
pub fn generic_name(f: &MetricFamily) -> String {
    let k = key(f);
    let group = match f.field {
        Some(CounterField::Dcgm(id)) => row_entity_group(id),
        _ => EntityGroup::Gpu,
    };
    let (prefix, rest) = if let Some(r) = k.strip_prefix("DCGM_FI_PROF_") {
        ("dcgm.gpu.prof.", r)
    } else if let Some(r) = k.strip_prefix("DCGM_FI_DEV_") {
        let p = match group {
            EntityGroup::Switch => "dcgm.nvswitch.",
            EntityGroup::Link => "dcgm.nvlink.",
            EntityGroup::Cpu | EntityGroup::CpuCore => "dcgm.cpu.",
            _ => "dcgm.gpu.",
        };
        (p, r)
    } else if let Some(r) = k.strip_prefix("DCGM_EXP_") {
        ("dcgm.exporter.", r)
    } else if let Some(r) = k.strip_prefix("DCGM_FI_") {
        ("dcgm.", r)
    } else {
        ("dcgm.", &*k)
    };
    format!("{prefix}{}", rest.to_ascii_lowercase())
}

/// The table's rows with their fields (looked up once: a key may be a pre-4.6 alias of the
/// field's name).
fn rows() -> &'static [(Option<FieldId>, &'static Row)] {
    static ROWS: OnceLock<Vec<(Option<FieldId>, &'static Row)>> = OnceLock::new();
    ROWS.get_or_init(|| TABLE.iter().map(|r| (FieldId::by_name(r.key), r)).collect())
}

/// The table's row of a family: by its DCGM field, or by the exporter row's name.
fn find(f: &MetricFamily) -> Option<&'static Row> {
    rows()
        .iter()
        .find(|(id, r)| match f.field {
            Some(CounterField::Dcgm(field)) => *id == Some(field),
            _ => id.is_none() && r.key == f.name,
        })
        .map(|(_, r)| *r)
}

/// The metric of a family.
pub fn metric(f: &MetricFamily) -> MetricMapping {
    if let Some(r) = find(f) {
        return MetricMapping {
            name: r.name.to_string(),
            unit: r.unit,
            instrument: r.instrument,
            scale: r.scale,
            attributes: r.attributes,
        };
    }
    MetricMapping {
        name: generic_name(f),
        unit: "",
        instrument: if f.kind == MetricKind::Counter {
            Instrument::Counter
        } else {
            Instrument::Gauge
        },
        scale: 1.0,
        attributes: &[],
    }
}

/// Where a Prometheus label goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A resource attribute (`host.name`, `k8s.pod.name`).
    Resource(&'static str),
    /// A data point attribute, a string.
    Point(&'static str),
    /// A data point attribute, an integer (a string that is not one stays a string).
    PointInt(&'static str),
    /// A data point attribute named `dcgm.label.<label>` (rows of the counters file of type
    /// `label`, and any other label).
    Other,
}

/// Where label `name` goes; `hostname_label` and `uuid_label` are the exposition's names for
/// the host name and the UUID.
pub fn attribute(name: &str, hostname_label: &str, uuid_label: &str) -> Target {
    use Target::*;
    if name == hostname_label {
        return Resource("host.name");
    }
    if name == uuid_label {
        return Point("hw.id");
    }
    match name {
        "hostengine" => Resource("dcgm.hostengine"),
        "pod" => Resource("k8s.pod.name"),
        "namespace" => Resource("k8s.namespace.name"),
        "container" => Resource("k8s.container.name"),
        "pod_uid" => Resource("k8s.pod.uid"),
        "gpu" => PointInt("dcgm.gpu.index"),
        "gpu_uuid" => Point("hw.id"),
        "pci_bus_id" => Point("dcgm.gpu.pci_bus_id"),
        "device" => Point("hw.name"),
        "modelName" | "model_name" => Point("hw.model"),
        "GPU_I_PROFILE" => Point("dcgm.gpu_instance.profile"),
        "GPU_I_ID" => PointInt("dcgm.gpu_instance.id"),
        "err_code" | "xid" => PointInt("dcgm.xid.code"),
        "clock_event" => Point("dcgm.clock_event.reason"),
        "window_size_in_ms" => PointInt("dcgm.window.duration_ms"),
        "health_watch" => Point("dcgm.health.watch"),
        "health_error_code" => Point("dcgm.health.error_code"),
        "peer_gpu" => PointInt("dcgm.gpu.peer.index"),
        "link_status" => Point("dcgm.p2p.status"),
        "nvswitch" => Point("dcgm.nvswitch"),
        "nvlink" => PointInt("dcgm.nvlink.index"),
        "cpu" => PointInt("dcgm.cpu.index"),
        "cpucore" => PointInt("dcgm.cpu.core.index"),
        "driver_version" | "DCGM_FI_DRIVER_VERSION" => Point("hw.driver_version"),
        "vbios_version" | "DCGM_FI_DEV_VBIOS_VERSION" => Point("hw.firmware_version"),
        "DCGM_FI_DEV_SERIAL" => Point("hw.serial_number"),
        "cuda_compute_capability" => Point("dcgm.gpu.cuda_compute_capability"),
        "mig_mode" => Point("dcgm.gpu.mig_mode"),
        "hpc_job" => Point("dcgm.hpc.job"),
        _ => Other,
    }
}

/// The README's mapping table (Markdown rows), generated from the table so that the two
/// cannot differ (a test compares them).
pub fn markdown_rows() -> String {
    let mut out = String::new();
    for r in TABLE {
        let attrs: Vec<String> = r
            .attributes
            .iter()
            .map(|(k, v)| format!(" `{k}={v}`"))
            .collect();
        let unit = if r.unit.is_empty() { "-" } else { r.unit };
        let scale = if r.scale == 1.0 {
            String::new()
        } else if r.scale == MIB {
            " × 2²⁰".to_string()
        } else {
            format!(" × {}", r.scale)
        };
        out.push_str(&format!(
            "| `{}` | `{}`{} | `{unit}`{scale} | {} |\n",
            r.key,
            r.name,
            attrs.concat(),
            r.instrument.name()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_metric_name_has_one_unit_and_instrument() {
        for a in TABLE {
            for b in TABLE.iter().filter(|b| b.name == a.name) {
                assert_eq!((a.unit, a.instrument), (b.unit, b.instrument), "{}", a.name);
            }
            assert!(a.name.starts_with("hw.") || a.name.starts_with("dcgm."));
        }
    }

    #[test]
    fn labels_map_to_semantic_convention_attributes() {
        assert_eq!(
            attribute("UUID", "hostname", "UUID"),
            Target::Point("hw.id")
        );
        assert_eq!(
            attribute("hostname", "hostname", "UUID"),
            Target::Resource("host.name")
        );
        // --hostname-label Hostname: the old name is the host, and `hostname` is not.
        assert_eq!(
            attribute("Hostname", "Hostname", "UUID"),
            Target::Resource("host.name")
        );
        assert_eq!(
            attribute("pod", "hostname", "UUID"),
            Target::Resource("k8s.pod.name")
        );
        assert_eq!(
            attribute("DCGM_FI_DEV_BRAND", "hostname", "UUID"),
            Target::Other
        );
    }
}

#[cfg(test)]
mod readme {
    /// The README's table is this module's table.
    #[test]
    fn the_readme_has_the_mapping_table() {
        let readme = include_str!("../../README.md");
        let rows = super::markdown_rows();
        assert!(
            readme.contains(&rows),
            "dcgm-exporter/README.md's OTLP table differs; it should be:\n{rows}"
        );
    }
}
