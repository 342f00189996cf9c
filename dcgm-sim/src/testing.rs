//! What this crate's integration tests use besides the C API it exports: the layouts of the
//! structs older DCGM releases answer with, and whether an `nv-hostengine` process runs on
//! this host (the connection tests' real-host-engine cases depend on it). Not part of the
//! simulator's interface.

pub use crate::legacy_layouts::{
    dcgmHealthResponse_v4, dcgmHealthResponse_version4, dcgmNvLinkStatus_v3,
    dcgmNvLinkStatus_version3,
};
pub use crate::listener_probe::hostengine_running;
