//! CPU hierarchy: the CPUs (sockets) of the node and the cores each owns.

use crate::blank::NonBlank;
use dcgm_sys::*;

use crate::error::{Error, Result, ReturnCode};
use crate::library::{c_buf, ffi};
use crate::system::System;

/// A CPU (socket) and its cores.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// for cpu in handle.system().cpu_hierarchy()? {
///     println!("CPU {}: {} cores, serial {:?}", cpu.id, cpu.cores.len(), cpu.serial);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpu {
    /// The CPU entity id.
    pub id: u32,
    /// The cores it owns (core entity ids).
    pub cores: Vec<u32>,
    /// Its serial number, if the library reports it (`dcgmGetCpuHierarchy_v2`).
    pub serial: Option<String>,
}

fn cores(bitmask: &[u64]) -> Vec<u32> {
    bitmask
        .iter()
        .enumerate()
        .flat_map(|(w, word)| {
            (0..64u32)
                .filter(move |b| word >> b & 1 != 0)
                .map(move |b| w as u32 * 64 + b)
        })
        .collect()
}

impl System {
    /// The node's CPUs and their cores; with serial numbers when the library has
    /// `dcgmGetCpuHierarchy_v2`.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_MODULE_NOT_LOADED` on a node without supported CPUs (DCGM's sysmon module, which
    /// serves CPUs, is then not loaded); `ConnectionLost`. A library without `_v2` is asked with
    /// `dcgmGetCpuHierarchy` instead: `SymbolNotAvailable` only for a library with neither.
    #[doc(alias = "dcgmGetCpuHierarchy_v2")]
    #[doc(alias = "dcgmGetCpuHierarchy")]
    pub fn cpu_hierarchy(&self) -> Result<Vec<Cpu>> {
        let lib = self.handle().lib();
        let mut h2 = dcgmCpuHierarchy_v2::boxed_versioned();
        // SAFETY: a versioned struct valid for the call.
        match unsafe { ffi!(lib, dcgmGetCpuHierarchy_v2(self.handle().raw(), &mut *h2)) } {
            Ok(()) => {
                let n = (h2.numCpus as usize).min(h2.cpus.len());
                return Ok(h2.cpus[..n]
                    .iter()
                    .map(|c| Cpu {
                        id: c.cpuId,
                        cores: cores(&c.ownedCores.bitmask),
                        serial: c_buf(&c.serial).non_blank(),
                    })
                    .collect());
            }
            // An older library (no `_v2`) or host engine (v2 struct unknown): ask for v1.
            Err(e)
                if matches!(e, Error::SymbolNotAvailable { .. })
                    || e.code() == ReturnCode::from_raw(DCGM_ST_VER_MISMATCH)
                    || e.code() == ReturnCode::from_raw(DCGM_ST_FUNCTION_NOT_FOUND) => {}
            Err(e) => return Err(e),
        }
        // DCGM 3.x's sysmon module lists /sys/class/hwmon without checking that the folder
        // opened: where it is absent (containers and VMs without hardware monitors) the
        // embedded engine calls readdir(NULL) and takes this process down (seen with 3.3.9).
        // Not calling it is the only way to keep the process alive.
        // The same for an nv-hostengine of this machine (loopback or unix socket): its crash
        // would take the user's engine down.
        let here = match self.handle().kind() {
            crate::ConnectionKind::Embedded => true,
            crate::ConnectionKind::Standalone(a) => {
                a.starts_with('/')
                    || a.starts_with("unix://")
                    || a.starts_with("127.")
                    || a.starts_with("localhost")
                    || a.starts_with("[::1]")
                    || a.starts_with("tcp://127.")
                    || a.starts_with("tcp://localhost")
            }
        };
        if here
            && self.handle().dcgm_version().is_some_and(|v| v.major < 4)
            && !std::path::Path::new("/sys/class/hwmon").is_dir()
        {
            return Err(Error::Dcgm {
                code: ReturnCode::from_raw(DCGM_ST_NOT_SUPPORTED),
                call: "dcgmGetCpuHierarchy",
                message: Some(
                    "not asked: DCGM 3.x's sysmon module crashes on a machine without \
                     /sys/class/hwmon"
                        .into(),
                ),
            });
        }
        let mut h1 = dcgmCpuHierarchy_v1::boxed_versioned();
        // SAFETY: a versioned struct valid for the call.
        unsafe { ffi!(lib, dcgmGetCpuHierarchy(self.handle().raw(), &mut *h1)) }?;
        let n = (h1.numCpus as usize).min(h1.cpus.len());
        Ok(h1.cpus[..n]
            .iter()
            .map(|c| Cpu {
                id: c.cpuId,
                cores: cores(&c.ownedCores.bitmask),
                serial: None,
            })
            .collect())
    }
}
