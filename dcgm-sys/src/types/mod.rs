//! `#[repr(C)]` types of the DCGM 4.6 C API, named as in the C headers (as bindgen names them,
//! anonymous members included), one file per area.

mod config;
mod connect;
mod cpu;
mod device;
mod diag;
mod error_meta;
mod field_value;
mod group;
mod handles;
mod health;
mod introspect;
mod legacy;
mod mig;
mod modules;
mod nvlink;
mod policy;
mod prof;
mod stats;
mod status;
mod test_api;
mod topology;
mod version_info;

pub use config::*;
pub use connect::*;
pub use cpu::*;
pub use device::*;
pub use diag::*;
pub use error_meta::*;
pub use field_value::*;
pub use group::*;
pub use handles::*;
pub use health::*;
pub use introspect::*;
pub use legacy::*;
pub use mig::*;
pub use modules::*;
pub use nvlink::*;
pub use policy::*;
pub use prof::*;
pub use stats::*;
pub use status::*;
pub use test_api::*;
pub use topology::*;
pub use version_info::*;
