//! Safe Rust bindings to NVIDIA DCGM (Data Center GPU Manager).
//!
//! * [`Handle`] — a connection: the embedded engine or an nv-hostengine. Cheap to clone;
//!   everything created from it keeps it alive.
//! * [`System`] — node-wide queries: GPUs, entities, attributes, versions, field metadata.
//! * [`Group`] and [`FieldGroup`] — what to watch and read; [`Watch`] unwatches on drop.
//! * [`FieldValue`] / [`Value`] — typed values; "no value" is [`Value::Blank`], never a
//!   sentinel number.
//!
//! libdcgm is loaded at run time (see `dcgm_sys`): nothing links against it. Without a GPU,
//! use the dcgm-sim library: [`HandleBuilder::simulator`], or `DCGM_LIB_PATH`.
//!
//! # Raw access
//!
//! The safe API names no type of the C bindings. [`raw`] is the one way down to them: the
//! `dcgm-sys` C API as [`raw::sys`], the C handle and ids of safe objects, and the
//! [`raw::Binding`] conversions between safe types and C values.
//!
//! # Features
//!
//! * `testing` (off): `dcgm::testing`, the simulator's path and configuration, DCGM's test API
//!   (fake GPUs, injected values) and sentinel checks; for tests and examples.
//! * `tokio` (off): policy violations as a `futures` `Stream` (`Group::policy_stream`). No
//!   runtime is started, and blocking DCGM calls never run on async worker threads.
//!
//! # Rust version and dependencies
//!
//! The minimum Rust version is the workspace's `rust-version`, 1.95, the toolchain CI builds
//! with; older ones are not tested. Process-wide state is a `Mutex` in a `static` (const
//! constructors) or a `std::sync::OnceLock` (stable since 1.70), so the crate needs no
//! `once_cell` or `lazy_static`. Errors derive with
//! `thiserror`, flag sets ([`HealthSystems`], [`PolicyCondition`]) with `bitflags`; libdcgm is
//! loaded by `dcgm-sys` with `libloading`.
//!
//! # Threads
//!
//! [`Handle`], [`Group`], [`FieldGroup`] and [`Watch`] are `Send` and `Sync`: DCGM's client
//! API is safe to call from several threads, and the process-wide `dcgmInit`/`dcgmShutdown`
//! pair is reference-counted by this crate.
//!
//! ```
//! # fn main() -> dcgm::Result<()> {
//! # let sim = dcgm::testing::simulator_path();
//! use dcgm::{FieldGroup, FieldId, Group, Handle, WatchOptions};
//! let handle = Handle::builder().library_path(sim).embedded()?;
//! let gpus = Group::all_gpus(&handle);
//! let fields = FieldGroup::create(&handle, "doc-lib", &[FieldId::parse("gpu_temp")?])?;
//! let _watch = gpus.watch(&fields, WatchOptions::default())?;
//! handle.update_all_fields(true)?;
//! for v in gpus.latest_values(&fields)? {
//!     println!("{} {} = {}", v.entity, v.field, v.value);
//! }
//! # Ok(()) }
//! ```

// On docs.rs, items behind a feature say which one.
#![cfg_attr(docsrs, feature(doc_cfg))]
mod blank;
mod cache_info;
mod config;
mod cpu;
mod diag;
mod diag_per_gpu;
mod diag_response;
mod dialect;
mod engine_object;
mod entity;
mod error;
mod failure;
mod field;
mod field_group;
mod field_release;
mod field_samples;
mod flags;
mod gpu_status;
mod group;
mod handle;
mod health;
mod id;
mod introspect;
mod latest_update;
mod library;
mod mig;
mod modules;
mod nvlink;
mod panic;
mod policy;
#[cfg(feature = "tokio")]
mod policy_stream;
mod process;
mod process_watch;
mod prof;
pub mod raw;
mod reachability;
mod release;
mod stats;
mod status;
mod system;
#[cfg(feature = "testing")]
pub mod testing;
mod topology;
mod value;

pub use entity::{Entity, EntityGroup};
pub use error::{Error, LoadAttempt, LoadFailure, Result, ReturnCode};
pub use field::{FieldId, FieldMeta, FieldType};
pub use field_group::{FieldGroup, FieldGroupId, MAX_FIELDS_PER_FIELD_GROUP, all_field_groups};
pub use group::{
    Group, GroupId, GroupInfo, GroupType, MAX_ENTITIES_PER_GROUP, SinceCursor, Watch, WatchOptions,
};
pub use handle::{
    ConnectionKind, DCGM_SIM_LIB_ENV, Handle, HandleBuilder, LogSeverity, OperationMode,
    find_simulator,
};
pub use latest_update::{latest_update, running_processes_of};
pub use process::{AccountingStats, RunningProcess};
pub use process_watch::ProcessWatch;
pub use release::{Capability, DcgmVersion};
pub use system::{DeviceAttributes, System, VersionInfo};
pub use value::{BlankKind, FieldValue, Value};

pub use cache_info::FieldCacheInfo;
pub use config::{ComputeMode, ConfigKind, GpuConfig};
pub use cpu::Cpu;
pub use diag::{DiagLevel, DiagRequest};
pub use diag_response::{DiagEntity, DiagError, DiagResponse, DiagResult, DiagTest};
pub use failure::{ErrorCategory, ErrorSeverity, failure_reason_name};
pub use field_samples::{MAX_SAMPLES_PER_REQUEST, SampleBuffer};
pub use gpu_status::{ChipArchitecture, GpuStatus};
pub use health::{HealthReport, HealthResult, HealthSystems, Incident};
pub use introspect::CpuUtilization;
pub use mig::{ComputeInstance, ComputeInstanceProfile, GpuInstance, GpuInstanceProfile, MigGpu};
pub use modules::{Module, ModuleStatus};
pub use nvlink::{GpuP2pStatus, LinkState, NvLinkStatus, P2pStatus};
pub use policy::{
    DEFAULT_POLICY_CHANNEL_CAPACITY, DbeLocation, Policy, PolicyCondition, PolicyRegistration,
    PolicyViolation, ViolationDetail,
};
#[cfg(feature = "tokio")]
pub use policy_stream::PolicyStream;
pub use prof::MetricGroup;
pub use stats::{
    GpuUsage, JobGpuStats, JobStats, MAX_JOB_ID_LEN, PidGpuInfo, PidInfo, ProcessUtil, StatSummary,
    ViolationTimes,
};
pub use topology::{DeviceTopology, GpuPath, GroupTopology, PciPath};

// The README's examples compile as doc tests (`cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
