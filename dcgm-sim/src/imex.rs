//! IMEX (the NVLink memory-export service of multi-node NVLink systems): the node-wide
//! `DCGM_FI_IMEX_DOMAIN_STATUS` and `DCGM_FI_IMEX_DAEMON_STATUS` fields. The simulated node
//! has no IMEX installed, so it answers as libdcgm 4.6.0 does on such a host (recorded from
//! it with the H200 capture): the domain is `NOT_INSTALLED` and the daemon is -1.

use dcgm_sys::*;

use crate::sim_value::SimValue;

/// The domain status of a host without IMEX.
pub const DOMAIN_NOT_INSTALLED: &str = "NOT_INSTALLED";
/// The daemon status of a host without IMEX (`DcgmImexDaemonStatus::NOT_INSTALLED`).
pub const DAEMON_NOT_INSTALLED: i64 = -1;

/// The value of an IMEX field (for any entity: the fields are global), or `None` for other
/// fields.
pub fn sample(field: u16) -> Option<SimValue> {
    match field {
        DCGM_FI_IMEX_DOMAIN_STATUS => Some(SimValue::Str(DOMAIN_NOT_INSTALLED.to_string())),
        DCGM_FI_IMEX_DAEMON_STATUS => Some(SimValue::Int(DAEMON_NOT_INSTALLED)),
        _ => None,
    }
}
