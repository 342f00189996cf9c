//! Modules: their names, the deny list and their load status.

use std::ffi::{CStr, c_char};

use dcgm_sys::*;

use super::{guard, out, versioned};
use crate::engine::Engine;
use crate::sim::with_engine;

/// Readies `module` for a request, loading it on first use as libdcgm does:
/// `DCGM_ST_MODULE_NOT_LOADED` when it is denylisted or cannot load.
pub fn module_ok(e: &mut Engine, module: dcgmModuleId_t) -> Result<(), dcgmReturn_t> {
    e.modules.load(module)
}

/// Module names, indexed by module id.
const MODULE_NAMES: [&CStr; DcgmModuleIdCount as usize] = [
    c"Core",
    c"NvSwitch",
    c"VGPU",
    c"Introspection",
    c"Health",
    c"Policy",
    c"Config",
    c"Diag",
    c"Profiling",
    c"SysMon",
    c"MnDiag",
];

/// # Safety
///
/// `name` must be NULL or writable; the string written belongs to the library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmModuleIdToName(
    id: dcgmModuleId_t,
    name: *mut *const c_char,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let n = unsafe { out(name) }?;
        let s = MODULE_NAMES.get(id as usize).ok_or(DCGM_ST_BADPARAM)?;
        *n = s.as_ptr();
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmModuleDenylist(
    pDcgmHandle: dcgmHandle_t,
    moduleId: dcgmModuleId_t,
) -> dcgmReturn_t {
    guard(|| with_engine(pDcgmHandle, |e| e.modules.denylist(moduleId)))
}

/// # Safety
///
/// `moduleStatuses` must be NULL or a versioned `dcgmModuleGetStatuses_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmModuleGetStatuses(
    pDcgmHandle: dcgmHandle_t,
    moduleStatuses: *mut dcgmModuleGetStatuses_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let st = unsafe { versioned(moduleStatuses, &[dcgmModuleGetStatuses_version1]) }?;
        with_engine(pDcgmHandle, |e| {
            let n = crate::personality::module_count().min(st.statuses.len());
            for (id, (slot, status)) in st
                .statuses
                .iter_mut()
                .zip(e.modules.statuses())
                .take(n)
                .enumerate()
            {
                slot.id = id as u32;
                slot.status = *status;
            }
            st.numStatuses = n as u32;
            Ok(())
        })
    })
}
