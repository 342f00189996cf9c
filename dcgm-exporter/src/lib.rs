//! The library half of the `dcgm-exporter` binary: its command line, its HTTP server (hyper 1
//! on tokio, TLS, basic auth, gzip, the limits that keep hostile clients from locking anyone
//! out), its log, and the attribution of GPUs to workloads (Kubernetes pods through the
//! kubelet's pod-resources API, HPC jobs through a mapping directory). The collection itself
//! (counters file, DCGM reads, exposition text) is `dcgm-prometheus`'s, for any custom collector
//! to use.

#![forbid(unsafe_code)]

pub mod attribution;
pub mod basic_auth;
pub mod cdi;
pub mod cgroup;
pub mod cli;
pub mod client_slots;
pub mod config_file;
pub mod counters_file;
pub mod cri;
pub mod deadline_io;
pub mod dra;
pub mod health;
pub mod hpc;
pub mod kubernetes;
pub mod logging;
pub mod merge;
pub mod otlp_compression;
pub mod otlp_config;
pub mod otlp_convert;
pub mod otlp_mapping;
pub mod otlp_once;
pub mod otlp_push;
pub mod otlp_wire;
pub mod pod_labels;
pub mod pod_processes;
pub mod pods;
pub mod regular_file;
pub mod request_framing;
pub mod resource_slice;
pub mod self_metrics;
pub mod server;
pub mod throttled_log;
pub mod web_config;
pub mod yaml_guard;
