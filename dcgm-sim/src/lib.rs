//! dcgm-sim: a stand-in for `libdcgm.so.4` that simulates a GPU node.
//!
//! Built as a `cdylib`, it exports the DCGM 4.x C API with the same symbol names, signatures
//! and struct layouts as the real library, so any DCGM client (C, Python, Go, Rust) can load
//! it: point `DCGM_LIB_PATH` at it, or put a `libdcgm.so.4` link to it on the library path.
//!
//! The simulated node comes from `DCGM_SIM_CONFIG` (TOML or JSON), or is a default 8-GPU H100
//! training node with NvSwitches, one GPU in MIG mode and two CPU sockets. It speaks DCGM 4.6.0,
//! or an older release from 3.3.9 on (`DCGM_SIM_VERSION=4.5.3`, or `dcgm_version` in the
//! config): that release's version, struct versions, functions and field ids. Faults come from the
//! config or `DCGM_SIM_FAULTS`. Every value is a pure function of the seed, the entity, the
//! field and the time.
//!
//! Besides the DCGM API it exports `dcgmSimConfigure(json)`, which replaces the configuration
//! for the next `dcgmInit` (tests use it to script faults and events without environment
//! variables), `dcgmSimIsSimulator()`, which returns 1 so clients can label simulated data,
//! and `dcgmSimInitError()`, why the last `dcgmInit` failed on its configuration (so a client
//! can say what is wrong with the simulator's config rather than with a driver).

#![allow(non_snake_case)]

// This crate's API is the C ABI it exports and `config`, the description of a node;
// `testing` holds what its own integration tests need besides.
mod cache;
pub mod config;
mod cpu;
mod driver;
mod engine;
mod failure_reasons;
mod ffi;
mod health;
mod host_cpus;
mod imex;
mod listener_probe;
mod machine;
mod mig;
mod mig_instances;
mod model;
mod module_state;
mod personality;
mod policy_callback;
mod policy_feed;
mod policy_thread;
mod sampling;
mod sim;
mod sim_value;
#[doc(hidden)]
pub mod testing;
mod values;
mod violations;
mod watch_set;
mod workload;
