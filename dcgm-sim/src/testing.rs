//! What this crate's integration tests use besides the C API it exports: whether an
//! `nv-hostengine` process runs on this host (the connection tests' real-host-engine cases
//! depend on it). Not part of the simulator's interface. (The layouts older DCGM releases
//! answer with are dcgm-sys's.)

pub use crate::listener_probe::hostengine_running;
