//! The library half of the `dcgm-exporter` binary: its command line, its HTTP server (hyper 1
//! on tokio, TLS, basic auth, gzip, the limits that keep hostile clients from locking anyone
//! out), its log, and the attribution of GPUs to workloads (Kubernetes pods through the
//! kubelet's pod-resources API, HPC jobs through a mapping directory). The collection itself
//! (counters file, DCGM reads, exposition text) is `dcgm-prometheus`'s, for any custom collector
//! to use.

#![forbid(unsafe_code)]

pub mod attribution;
pub mod cli;
pub mod config_file;
pub mod counters_file;
pub mod health;
pub mod http;
pub mod logging;
pub mod merge;
pub mod otlp;
pub(crate) mod regular_file;
pub(crate) mod yaml_guard;
