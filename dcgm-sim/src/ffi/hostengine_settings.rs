//! Host-engine settings: the logging severity and the environment variables it reports.

use dcgm_sys::*;

use super::{guard, read_str, versioned, write_str};
use crate::engine::with_engine;

/// # Safety
///
/// `logging` must be NULL or a versioned `dcgmSettingsSetLoggingSeverity_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmHostengineSetLoggingSeverity(
    pDcgmHandle: dcgmHandle_t,
    logging: *mut dcgmSettingsSetLoggingSeverity_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let l = unsafe { versioned(logging, &[dcgmSettingsSetLoggingSeverity_version2]) }?;
        if !(0..=3).contains(&l.targetLogger)
            || !(DcgmLoggingSeverityUnspecified..=DcgmLoggingSeverityVerbose)
                .contains(&l.targetSeverity)
        {
            return Err(DCGM_ST_BADPARAM);
        }
        let sev = l.targetSeverity;
        with_engine(pDcgmHandle, |e| {
            e.log_severity = sev;
            Ok(())
        })
    })
}

/// # Safety
///
/// `pEnvVarInfo` must be NULL or a versioned `dcgmEnvVarInfo_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmHostengineEnvironmentVariableInfo(
    pDcgmHandle: dcgmHandle_t,
    pEnvVarInfo: *mut dcgmEnvVarInfo_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let info = unsafe { versioned(pEnvVarInfo, &[dcgmEnvVarInfo_version1]) }?;
        with_engine(pDcgmHandle, |_| Ok(()))?;
        let name = read_str(&info.envVarName);
        let rc = if name.is_empty() {
            DCGM_ST_BADPARAM
        } else if name != "CUDA_VISIBLE_DEVICES" {
            DCGM_ST_NOT_SUPPORTED
        } else {
            match std::env::var(&name) {
                Ok(v) => {
                    write_str(&mut info.envVarValue, &v);
                    DCGM_ST_OK
                }
                Err(_) => {
                    write_str(&mut info.envVarValue, "");
                    DCGM_ST_NO_DATA
                }
            }
        };
        info.ret = rc;
        if rc == DCGM_ST_OK { Ok(()) } else { Err(rc) }
    })
}
