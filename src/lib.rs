//! dcgm-rs: a safe Rust SDK for NVIDIA DCGM.
//!
//! This umbrella crate re-exports the three layers: [`sys`] (raw FFI, loaded at run time),
//! [`dcgm`] (the safe object layer) and [`reader`] (one-call metric reads).

#![forbid(unsafe_code)]

pub use dcgm;
pub use dcgm_reader as reader;
pub use dcgm_sys as sys;
