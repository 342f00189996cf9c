//! `#[repr(C)]` types of the DCGM 4.6 C API, named as in the C headers (as bindgen names them,
//! anonymous members included), one file per area.

mod handles;
mod field_value;
mod version_info;

pub use field_value::*;
pub use handles::*;
pub use version_info::*;
