//! Initialisation, the embedded engine, connections and version information.

use std::ffi::{c_char, c_int};

use dcgm_sys::*;

use super::{c_str, guard, guard_symbol, out, version_word, versioned, write_str};
use crate::config::SimConfig;
use crate::engine::Engine;
use crate::personality::{self, Release, Struct};
use crate::sim::{ConnectOptions, Connection, connect, lock};

#[unsafe(no_mangle)]
pub extern "C" fn dcgmInit() -> dcgmReturn_t {
    guard(|| {
        let mut s = lock();
        if s.initialized {
            return Ok(());
        }
        let cfg = match s.override_cfg.clone() {
            Some(c) => c,
            None => SimConfig::from_env().map_err(|e| {
                eprintln!("dcgm-sim: {e}");
                super::sim_extensions::set_init_error(Some(&e));
                DCGM_ST_INIT_ERROR
            })?,
        };
        let release = personality::choose(cfg.dcgm_version.as_deref()).map_err(|e| {
            eprintln!("dcgm-sim: {e}");
            super::sim_extensions::set_init_error(Some(&e));
            DCGM_ST_INIT_ERROR
        })?;
        super::sim_extensions::set_init_error(None);
        if cfg.faults.init_fails {
            return Err(DCGM_ST_INIT_ERROR);
        }
        personality::activate(release);
        s.cfg = Some(cfg);
        s.initialized = true;
        crate::ffi::fields::DcgmFieldsInit();
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmShutdown() -> dcgmReturn_t {
    guard(|| {
        {
            let mut s = lock();
            s.initialized = false;
            s.engines.clear();
            s.connections.clear();
            s.listeners.clear();
            s.last_caller.clear();
            s.statuses.clear();
            s.cfg = None;
        }
        crate::policy_thread::stop();
        crate::ffi::fields::DcgmFieldsTerm();
        personality::deactivate();
        Ok(())
    })
}

fn start_embedded(mode: dcgmOperationMode_t) -> Result<dcgmHandle_t, dcgmReturn_t> {
    if mode != DCGM_OPERATION_MODE_AUTO && mode != DCGM_OPERATION_MODE_MANUAL {
        return Err(DCGM_ST_BADPARAM);
    }
    let mut s = lock();
    if !s.initialized {
        return Err(DCGM_ST_UNINITIALIZED);
    }
    if !s.engines.contains_key("embedded") {
        let cfg = s.config().clone();
        s.engines.insert("embedded".into(), Engine::new(&cfg, mode));
    }
    s.connections.insert(
        DCGM_EMBEDDED_HANDLE,
        Connection {
            engine: "embedded".into(),
            ..Connection::default()
        },
    );
    Ok(DCGM_EMBEDDED_HANDLE)
}

/// # Safety
///
/// `pDcgmHandle` must be NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmStartEmbedded(
    opMode: dcgmOperationMode_t,
    pDcgmHandle: *mut dcgmHandle_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let h = unsafe { out(pDcgmHandle) }?;
        *h = start_embedded(opMode)?;
        Ok(())
    })
}

/// # Safety
///
/// `params` must be NULL or point to a start-embedded params struct of the version it names.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmStartEmbedded_v2(
    params: *mut dcgmStartEmbeddedV2Params_v1,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        unsafe { version_word(params, Struct::StartEmbeddedParams) }?;
        // SAFETY: a version the release accepts; `opMode` and `dcgmHandle` lie at the same
        // place in every layout, within the smallest.
        let p = unsafe { &mut *params };
        p.dcgmHandle = start_embedded(p.opMode)?;
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn dcgmStopEmbedded(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard(|| {
        let mut s = lock();
        if !s.initialized {
            return Err(DCGM_ST_UNINITIALIZED);
        }
        if pDcgmHandle != DCGM_EMBEDDED_HANDLE {
            return Err(DCGM_ST_BADPARAM);
        }
        // Stopping an engine that is not running succeeds, as in libdcgm 4.6.0.
        s.connections.remove(&pDcgmHandle);
        s.engines.remove("embedded");
        Ok(())
    })
}

/// `DCGM_ST_UNINITIALIZED` before `dcgmInit` (libdcgm checks this before the params' version).
fn initialized() -> Result<(), dcgmReturn_t> {
    if lock().initialized {
        Ok(())
    } else {
        Err(DCGM_ST_UNINITIALIZED)
    }
}

/// # Safety
///
/// `ipAddress` must be a C string, `pDcgmHandle` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmConnect(
    ipAddress: *const c_char,
    pDcgmHandle: *mut dcgmHandle_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let (addr, h) = unsafe { (c_str(ipAddress)?, out(pDcgmHandle)?) };
        if addr.is_empty() {
            return Err(DCGM_ST_BADPARAM);
        }
        // As libdcgm 4.6.0: `dcgmConnect_v2` with a v1 struct, persistAfterDisconnect 0.
        *h = connect(&format!("tcp://{addr}"), ConnectOptions::default())?;
        Ok(())
    })
}

/// # Safety
///
/// `ipAddress` must be a C string; `connectParams` a versioned v1 or v2 params struct;
/// `pDcgmHandle` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmConnect_v2(
    ipAddress: *const c_char,
    connectParams: *mut dcgmConnectV2Params_t,
    pDcgmHandle: *mut dcgmHandle_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let (addr, h) = unsafe { (c_str(ipAddress)?, out(pDcgmHandle)?) };
        if addr.is_empty() || connectParams.is_null() {
            return Err(DCGM_ST_BADPARAM);
        }
        initialized()?;
        // SAFETY: per this function's contract; v1 is a prefix of v2, read only when v2.
        let p = unsafe {
            versioned(
                connectParams,
                &[dcgmConnectV2Params_version1, dcgmConnectV2Params_version2],
            )
        }?;
        let v2 = p.version == dcgmConnectV2Params_version2;
        let opts = ConnectOptions {
            timeout_ms: if v2 { p.timeoutMs } else { 0 },
            persist: p.persistAfterDisconnect != 0,
        };
        let scheme = if v2 && p.addressIsUnixSocket != 0 {
            "unix"
        } else {
            "tcp"
        };
        *h = connect(&format!("{scheme}://{addr}"), opts)?;
        Ok(())
    })
}

/// # Safety
///
/// `connectionString` must be a C string; `connectParams` a versioned v1 params struct;
/// `pDcgmHandle` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmConnect_v3(
    connectionString: *const c_char,
    connectParams: *mut dcgmConnectV3Params_t,
    pDcgmHandle: *mut dcgmHandle_t,
) -> dcgmReturn_t {
    guard_symbol("dcgmConnect_v3", || {
        // SAFETY: per this function's contract.
        let (addr, h) = unsafe { (c_str(connectionString)?, out(pDcgmHandle)?) };
        if addr.is_empty() || connectParams.is_null() {
            return Err(DCGM_ST_BADPARAM);
        }
        initialized()?;
        // SAFETY: per this function's contract.
        let p = unsafe { versioned(connectParams, &[dcgmConnectV3Params_version1]) }?;
        let opts = ConnectOptions {
            timeout_ms: p.timeoutMs,
            persist: p.persistAfterDisconnect != 0,
        };
        *h = connect(addr, opts)?;
        Ok(())
    })
}

/// Closes a connection; as libdcgm 4.6.0, `DCGM_ST_OK` for any handle (also before
/// `dcgmInit`, and for one that is already closed).
#[unsafe(no_mangle)]
pub extern "C" fn dcgmDisconnect(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard(|| {
        lock().disconnect(pDcgmHandle);
        Ok(())
    })
}

/// The release `dcgmVersionInfo` reports: the one in force, or before `dcgmInit` the one it
/// would choose (a client reads the version before it initialises, to know what to send).
fn reported_release() -> Release {
    if let Some(r) = personality::active() {
        return r;
    }
    let key = match lock().override_cfg.as_ref() {
        Some(cfg) => cfg.dcgm_version.clone(),
        None => SimConfig::from_env().ok().and_then(|c| c.dcgm_version),
    };
    personality::choose(key.as_deref()).unwrap_or(Release::LATEST)
}

fn fill_version(info: &mut dcgmVersionInfo_v2, hostengine: bool) {
    let s = format!(
        "version:{};arch:{};buildid:sim;commit:dcgm-sim-{};branch:dcgm-sim;buildtype:{}",
        reported_release(),
        std::env::consts::ARCH,
        env!("CARGO_PKG_VERSION"),
        if hostengine {
            "Simulated hostengine"
        } else {
            "Simulated library"
        }
    );
    write_str(&mut info.rawBuildInfoString, &s);
}

/// # Safety
///
/// `pVersionInfo` must be NULL or a versioned `dcgmVersionInfo_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmVersionInfo(pVersionInfo: *mut dcgmVersionInfo_t) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let v = unsafe { versioned(pVersionInfo, &[dcgmVersionInfo_version2]) }?;
        fill_version(v, false);
        Ok(())
    })
}

/// # Safety
///
/// `pVersionInfo` must be NULL or a versioned `dcgmVersionInfo_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmHostengineVersionInfo(
    pDcgmHandle: dcgmHandle_t,
    pVersionInfo: *mut dcgmVersionInfo_t,
) -> dcgmReturn_t {
    guard(|| {
        crate::sim::with_engine(pDcgmHandle, |_| Ok(()))?;
        // SAFETY: per this function's contract.
        let v = unsafe { versioned(pVersionInfo, &[dcgmVersionInfo_version2]) }?;
        fill_version(v, true);
        Ok(())
    })
}

/// # Safety
///
/// `heHealth` must be NULL or a versioned `dcgmHostengineHealth_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmHostengineIsHealthy(
    pDcgmHandle: dcgmHandle_t,
    heHealth: *mut dcgmHostengineHealth_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let h = unsafe { versioned(heHealth, &[dcgmHostengineHealth_version1]) }?;
        crate::sim::with_engine(pDcgmHandle, |_| Ok(()))?;
        h.overallHealth = 0;
        Ok(())
    })
}

/// Text of a return code (static storage), or NULL for a value DCGM does not define.
#[unsafe(no_mangle)]
pub extern "C" fn errorString(result: dcgmReturn_t) -> *const c_char {
    ERROR_TEXTS
        .iter()
        .find(|(c, _)| *c == result && crate::personality::has_error_text(result))
        .map_or(std::ptr::null(), |(_, t)| t.as_ptr())
}

/// `errorString`'s texts, each as libdcgm 4.6.0 returns it (read from the real library, code by
/// code from 0 to -99; the codes it answers NULL for are absent). Clients match on them: go-dcgm
/// puts the text in its errors and its tests look for "Setting not configured".
const ERROR_TEXTS: &[(dcgmReturn_t, &std::ffi::CStr)] = &[
    (0, c"Success"),
    (-1, c"Bad parameter passed to function"),
    (-3, c"Generic unspecified error"),
    (-4, c"Out of memory error"),
    (-5, c"Setting not configured"),
    (-6, c"Feature not supported"),
    (-7, c"DCGM initialization error"),
    (-8, c"NVML error"),
    (-9, c"Object is in a pending state"),
    (-10, c"Object is in an undefined state"),
    (-11, c"Timeout"),
    (-12, c"API version mismatch"),
    (-13, c"Unknown field identifier"),
    (-14, c"No data is available"),
    (-15, c"Only stale data is available"),
    (-16, c"Field is not being watched"),
    (-17, c"No permission"),
    (-18, c"GPU is lost"),
    (-19, c"GPU requires reset"),
    (-20, c"The requested function was not found"),
    (-21, c"Host engine connection invalid/disconnected"),
    (-22, c"This GPU is not supported by DCGM"),
    (-23, c"The GPUs of this group are incompatible with each other for the requested operation"),
    (-24, c"Max limit reached for the object"),
    (-25, c"DCGM library could not be found"),
    (-26, c"Duplicate Key passed to function"),
    (-27, c"GPU is a part of a Sync Boost Group"),
    (-28, c"GPU is not a part of Sync Boost Group"),
    (-29, c"Host engine is running as non-root"),
    (-30, c"DCGM GPU Diagnostic returned an error"),
    (-31, c"An input argument is not large enough"),
    (-32, c"The given field ID is not supported by the API being called"),
    (-33, c"This request is serviced by a module of DCGM that is not currently loaded"),
    (-34, c"The requested operation could not be completed because the affected resource is in use"),
    (-35, c"The specified group is empty, and this operation is incompatible with an empty group"),
    (-36, c"Profiling is not supported for this group of GPUs or GPU"),
    (-37, c"The third-party Profiling module returned an unrecoverable error"),
    (-38, c"The requested profiling metrics cannot be collected in a single pass"),
    (-39, c"A diag instance is already running, cannot run a new diag until the current one finishes"),
    (-40, c"The GPU Diagnostic returned Json that cannot be parsed."),
    (-41, c"Error while launching the GPU Diagnostic."),
    (-42, c"Unused error code"),
    (-43, c"A field value met or exceeded the error threshold."),
    (-44, c"The installed driver version is insufficient for this API"),
    (-45, c"The specified GPU instance does not exist"),
    (-46, c"The specified GPU compute instance does not exist"),
    (-47, c"Failed to kill a child process"),
    (-48, c"Detected an error in a 3rd-party library"),
    (-49, c"Not enough resources available"),
    (-50, c"Exception thrown from a diagnostic plugin"),
    (-51, c"The diagnostic returned an error that indicates the need to drain the GPU"),
    (-52, c"The NVVS binary was not found in the specified location; please install it to /usr/libexec/datacenter-gpu-manager-4/ or set environment variable NVVS_BIN_PATH to the directory containing nvvs. If you set NVVS_BIN_PATH, please restart the DCGM service (nv-hostengine) if it is active."),
    (-53, c"The DCGM diagnostic was killed by a signal"),
    (-54, c"The hostengine and all modules are paused"),
    (-55, c"The object has already been initialized"),
    (-56, c"Cannot perform the requested operation because NVML doesn't exist on this system."),
    (-57, c"Cannot perform the requested operation because an NVML driver timeout error was detected. Verify NVML is responsive before restarting the hostengine."),
    (-58, c"Requested tests were not found among possible test choices."),
    (-59, c"No connection is currently authorized for multi-node diagnostic"),
    (-60, c"The connection is not authorized for multi-node diagnostic"),
    (-61, c"An SSH connection to a remote hostengine failed"),
    (-62, c"A child process could not be spawned"),
    (-63, c"A file operation failed"),
    (-64, c"A child process received a signal"),
    (-65, c"The caller is already stopped"),
    (-66, c"The DCGM Diagnostic was stopped"),
    (-67, c"Cannot perform the requested operation because the GPUs are detached"),
];

#[unsafe(no_mangle)]
pub extern "C" fn dcgmUpdateAllFields(
    pDcgmHandle: dcgmHandle_t,
    waitForUpdate: c_int,
) -> dcgmReturn_t {
    let _ = waitForUpdate;
    guard(|| {
        crate::sim::with_engine(pDcgmHandle, |e| {
            e.update_all();
            Ok(())
        })
    })
}
