//! Modules: their names, the deny list and their load status.

use std::ffi::{CStr, c_char};

use dcgm_sys::*;

use super::{guard, out, versioned};
use crate::engine::{Engine, with_engine};

/// Fails with `DCGM_ST_MODULE_NOT_LOADED` when `module` is on the engine's deny list.
pub fn module_ok(e: &Engine, module: dcgmModuleId_t) -> Result<(), dcgmReturn_t> {
    if module < 32 && e.module_denylist & (1 << module) != 0 {
        Err(DCGM_ST_MODULE_NOT_LOADED)
    } else {
        Ok(())
    }
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
    guard(|| {
        with_engine(pDcgmHandle, |e| {
            if moduleId == DcgmModuleIdCore || moduleId >= DcgmModuleIdCount {
                return Err(DCGM_ST_BADPARAM);
            }
            e.module_denylist |= 1 << moduleId;
            Ok(())
        })
    })
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
            let n = (DcgmModuleIdCount as usize).min(st.statuses.len());
            for (id, slot) in st.statuses.iter_mut().take(n).enumerate() {
                slot.id = id as u32;
                slot.status = if id as u32 == DcgmModuleIdCore && e.telemetry_paused {
                    DcgmModuleStatusPaused
                } else if module_ok(e, id as u32).is_ok() {
                    DcgmModuleStatusLoaded
                } else {
                    DcgmModuleStatusDenylisted
                };
            }
            st.numStatuses = n as u32;
            Ok(())
        })
    })
}
