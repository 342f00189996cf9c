//! DCGM values for Prometheus, compatible with NVIDIA's dcgm-exporter: its counters file, its
//! entity selections, its metric and label names, and a collector that reads DCGM and writes
//! the text exposition format. The `dcgm-exporter` binary is built on it, and so can any custom
//! collector be (a node_exporter textfile collector, a push gateway client) without an HTTP
//! server or a gRPC client in its dependencies.
//!
//! * [`parse_counters`] reads dcgm-exporter's counters CSV (`field, type, help` rows) into
//!   [`Counter`]s ([`counters`] has the name checks).
//!
//! * [`Renderer`] builds one model of each collection, an [`Exposition`] (metric families,
//!   their series, each series' labels and value; label sets built once and shared), from a
//!   [`Snapshot`](dcgm_reader::Snapshot) ([`Renderer::build`]). Its encoders read it: the
//!   Prometheus text exposition format 0.0.4 ([`write_text`], [`write_text_io`]; the
//!   `Renderer::render*` methods build and write in one call), and OTLP in `dcgm-exporter`.
//!   The text has one `# HELP`/`# TYPE` pair per metric family, families sorted by name,
//!   series in a fixed entity order, label values escaped, blank values left out (never a
//!   sentinel number). It is written into any [`std::fmt::Write`] (a `String` you keep and
//!   reuse allocates little per collection in steady state) or any [`std::io::Write`].
//! * GPU and MIG series carry dcgm-exporter's labels: `gpu`, `UUID`, `pci_bus_id`, `device`
//!   (`nvidiaN`), `modelName`, `hostname`, and for MIG GPU instances `GPU_I_PROFILE` and
//!   `GPU_I_ID`; then one label per `label` row of the counters file (`DCGM_FI_DRIVER_VERSION`,
//!   ...), named as written in the file.
//! * Rows of NvSwitch, NVLink, CPU and CPU-core fields ([`row_entity_group`]) are exported for
//!   those entities ([`OtherEntity`]) with dcgm-exporter's labels for them (see [`labels`]):
//!   `nvswitch="nvswitchN"`; `nvlink` with `nvswitch`, or with the GPU's `gpu`, `gpu_uuid`,
//!   `pci_bus_id`, `device`, `model_name`; `cpu`; `cpucore` and `cpu`. Global `label` rows
//!   label them too.
//! * `DCGM_EXP_GPU_HEALTH_STATUS`: one series per GPU and health watch ([`HEALTH_WATCHES`]),
//!   labels `health_watch` and `health_error_code`, value 0 / 10 / 20 (pass / warn / fail).
//!   `DCGM_EXP_P2P_STATUS`: one series per GPU and peer GPU, labels `peer_gpu` and
//!   `link_status`, value DCGM's P2P status (0 = OK).
//! * `DCGM_EXP_GPU_INFO`: value 1, one series per GPU or MIG instance, labelled with its
//!   identity and [`GpuInfo`] (`driver_version`, `vbios_version`, `cuda_compute_capability`,
//!   `mig_mode`; a label without a value is left out), for PromQL joins.
//!   `DCGM_EXP_POD_FB_USED`: GPU memory (MiB) per GPU and owner of processes, from DCGM's
//!   running-process lists ([`Collector::running_processes`]), the owners given by the
//!   caller ([`memory_by_owner`], [`Collector::set_owner_memory`]).
//! * [`DeviceSelection`] is dcgm-exporter's `-d` syntax (`f`, `g`, `g:0,1`, `g:0-3`, `i`,
//!   `i:0,2-4`); [`discover_entities`] turns it into the entities to read, with their
//!   identities. [`EntitySelection`] is the same syntax for `-s` (NvSwitches / links) and `-p`
//!   (CPUs / cores); [`discover_other_entities`] resolves them. Both parse with one parser,
//!   whose errors are [`SelectionError`]s.
//! * [`EventWindow`] counts XID errors and clock events over a sliding window, for the
//!   `DCGM_EXP_XID_ERRORS_COUNT` and `DCGM_EXP_CLOCK_EVENTS_COUNT` rows.
//! * [`Collector`] ties it together: it connects, discovers, watches and renders.
//!
//! The pieces live in one file each, all re-exported here: the counters file (`counters`),
//! entity identities and label names (`identity`), label sets (`label_sets`), HELP/TYPE
//! metadata (`metadata`), `-d`/`-s`/`-p` selections and discovery (`selection`), health and
//! P2P verdicts (`verdicts`), event windows (`events`), the model (`exposition`), what it is
//! built from (`renderer`), its builder (`build`), the text encoder (`text`, numbers in
//! `number`), the renderer's text entry points (`render`) and the collector (`collector`).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let _lock = dcgm::testing::SimulatorLock::new(None)?;
//! use dcgm_prometheus::{Collector, CollectorConfig, parse_counters};
//! let counters = parse_counters(
//!     "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (C).\n\
//!      DCGM_FI_DRIVER_VERSION, label, Driver version.\n",
//! )?;
//! let mut collector = Collector::new(CollectorConfig {
//!     library_path: Some(dcgm::testing::simulator_path()),
//!     ..CollectorConfig::new(counters)
//! })?;
//! let mut text = String::new();
//! collector.collect(&mut text)?;
//! assert!(text.contains("# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"));
//! assert!(text.contains("DCGM_FI_DRIVER_VERSION=\""));
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]

mod build;
mod collector;
pub mod counters;
mod events;
mod exposition;
mod gpu_info;
mod identity;
mod label_sets;
mod metadata;
mod number;
mod process_util;
mod processes;
mod render;
mod renderer;
mod selection;
mod text;
mod verdicts;

pub use build::WINDOW_LABEL;
pub use collector::{Collector, CollectorConfig, is_no_gpu};
pub use counters::{
    Counter, CounterField, CountersError, CountersErrorKind, ExporterCounter, MetricKind,
    counter_fields, parse_counters,
};
pub use events::{CLOCK_EVENT_REASONS, EventWindow};
pub use exposition::{Exposition, MetricFamily, Sample};
pub use gpu_info::{GPU_INFO_FIELDS, GpuInfo};
pub use identity::{
    EntityIdentity, LabelOptions, LabelSet, MigInstance, OtherEntity, default_hostname, labels,
    row_entity_group,
};
pub use metadata::SIMULATED_METRIC;
pub use number::write_number;
pub use process_util::{
    ProcessSmUtil, pid_stats_sample_interval, pid_stats_window, sm_util_by_owner,
};
pub use processes::{GpuProcess, memory_by_owner};
pub use renderer::Renderer;
pub use selection::{
    DeviceSelection, EntitySelection, SelectionError, discover_entities, discover_other_entities,
};
pub use text::{escape_help, escape_label_value, write_text, write_text_io};
pub use verdicts::{GpuHealth, HEALTH_WATCHES, HealthVerdict, p2p_status_value};

// The README's examples compile as doc tests (`cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
