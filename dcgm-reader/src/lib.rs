//! One-call DCGM reads, in the manner of NVIDIA's `DcgmReader`: the latest value of every
//! field for every GPU (or entity), keyed by field id or name; every sample since the previous
//! call, with nothing lost or repeated; snapshots at a fixed interval; automatic reconnection
//! after a host-engine restart.
//!
//! The Prometheus side (dcgm-exporter's counters file, labels, text exposition and collector)
//! is the `dcgm-prometheus` crate.
//!
//! ```
//! # fn main() -> dcgm::Result<()> {
//! # let sim = dcgm::testing::simulator_path();
//! let mut reader = dcgm_reader::Reader::builder().library_path(sim).build()?;
//! let values = reader.latest_by_id()?; // {gpu: {field: value}}, the 30 upstream defaults
//! assert_eq!(values.len(), 8);
//! # Ok(()) }
//! ```

// On docs.rs, items behind a feature say which one.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
// Every fallible public function says when it fails.
#![warn(clippy::missing_errors_doc)]

mod defaults;
mod profiling;
mod reader;
mod since;
mod since_background;
#[cfg(feature = "tokio")]
mod stream;

pub use defaults::DEFAULT_FIELD_IDS;
pub use reader::{
    ChosenMode, Connection, GpuIdentity, Reader, ReaderBuilder, Sample, Snapshot, Snapshots,
};
#[cfg(feature = "tokio")]
pub use stream::SinceSamples;

// The README's examples compile as doc tests (`cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
