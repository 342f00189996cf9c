//! The library half of the `dcgm-exporter` binary: its HTTP server (hyper 1 on tokio, TLS,
//! basic auth, gzip) and the Kubernetes and HPC attribution of GPUs to workloads. The
//! collection itself (counters file, DCGM reads, exposition text) is `dcgm-reader`'s, for any
//! custom collector to use.

pub mod server;
