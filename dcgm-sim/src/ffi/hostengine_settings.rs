//! Host-engine settings: the logging severity and the environment variables it reports.

use dcgm_sys::*;

use super::{guard, guard_symbol, read_str, versioned, write_str};
use crate::sim::{lock, with_engine};

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

/// The variables `dcgmHostengineEnvironmentVariableInfo` may read (libdcgm 4.6.0's list).
const READABLE_ENV_VARS: [&str; 2] = ["CUDA_VISIBLE_DEVICES", "DCGM_DIAG_REMOVED"];

/// One variable of the host engine's environment. A simulated handle that reached a real
/// host-engine process (a listener, see `listener_probe`) reads that process's environment;
/// the embedded engine, and a configured address with nothing listening, are simulated in
/// this process and read its own.
fn hostengine_env_var(handle: dcgmHandle_t, name: &str) -> Result<Option<String>, dcgmReturn_t> {
    let listener = lock().hostengine_listener(handle)?;
    if let Some(pid) = listener.and_then(crate::listener_probe::socket_owner)
        && let Some(v) = crate::listener_probe::process_env_var(pid, name)
    {
        return Ok(v);
    }
    Ok(std::env::var(name).ok())
}

/// # Safety
///
/// `pEnvVarInfo` must be NULL or a versioned `dcgmEnvVarInfo_v1`.
///
/// As libdcgm 4.6.0: the call itself answers `DCGM_ST_OK` once the host engine was asked, and
/// `ret` in the struct says what it found: `DCGM_ST_BADPARAM` for an empty name or one it does
/// not give out, `DCGM_ST_NOT_CONFIGURED` for a variable that is not set, else `DCGM_ST_OK`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmHostengineEnvironmentVariableInfo(
    pDcgmHandle: dcgmHandle_t,
    pEnvVarInfo: *mut dcgmEnvVarInfo_t,
) -> dcgmReturn_t {
    guard_symbol("dcgmHostengineEnvironmentVariableInfo", || {
        // SAFETY: per this function's contract.
        let info = unsafe { versioned(pEnvVarInfo, &[dcgmEnvVarInfo_version1]) }?;
        let name = read_str(&info.envVarName);
        let value = if READABLE_ENV_VARS.contains(&name.as_str()) {
            Some(hostengine_env_var(pDcgmHandle, &name)?)
        } else {
            with_engine(pDcgmHandle, |_| Ok(()))?;
            None
        };
        info.ret = match value {
            None => DCGM_ST_BADPARAM,
            Some(None) => {
                write_str(&mut info.envVarValue, "");
                DCGM_ST_NOT_CONFIGURED
            }
            Some(Some(v)) => {
                write_str(&mut info.envVarValue, &v);
                DCGM_ST_OK
            }
        };
        Ok(())
    })
}
