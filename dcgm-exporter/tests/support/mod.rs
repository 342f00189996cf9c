//! Helpers shared by the exporter's test binaries.

pub mod cri;
pub mod hostile;
pub mod kubelet;
pub mod process;
pub mod watch;
