//! The vGPU functions of DCGM's test API (`dcgm_test_apis.h`), which libdcgm 4.6.0 exports.
//!
//! The simulated GPUs run bare metal, without a vGPU manager, and the answers are those of
//! libdcgm 4.6.0 on such a GPU (an H200 through injection NVML):
//! - `dcgmGetVgpuDeviceAttributes` takes version 7 only; it watches the eight fields it reads
//!   on the GPU where they are not watched yet (every 30 s, 4 h or 480 samples kept), forces
//!   an update, and answers no supported, creatable or active vGPU, with the GPU's
//!   utilisation, memory-copy, encoder and decoder readings;
//! - `dcgmGetVgpuInstanceAttributes` takes version 1 and answers, for any id, the blank
//!   values of an entity with no samples (its license status, a string field, read as an
//!   integer as libdcgm reads it);
//! - `dcgmVgpuConfigSet`/`Get` check their struct versions and answer `DCGM_ST_NOT_SUPPORTED`,
//!   as `dcgmVgpuConfigEnforce` always does: libdcgm never implemented them. These three
//!   check neither the handle nor the group, nor whether `dcgmInit` ran.

use std::ffi::{CStr, c_char, c_int};

use dcgm_sys::*;

use super::test_api::watch_one;
use super::values::fill_v1;
use super::{guard, write_str};
use crate::engine::now_us;
use crate::sampling::Read;
use crate::sim::with_engine;
use crate::sim_value::SimValue;

/// The fields `dcgmGetVgpuDeviceAttributes` reads, in libdcgm's order.
const DEVICE_FIELDS: [u16; 8] = [
    DCGM_FI_DEV_VGPU_SUPPORTED_INFO,
    DCGM_FI_DEV_VGPU_CREATABLE_IDS,
    DCGM_FI_DEV_VGPU_INSTANCE_INFO,
    DCGM_FI_DEV_VGPU_UTIL_INFO,
    DCGM_FI_DEV_GPU_UTIL_RATIO,
    DCGM_FI_DEV_MEM_COPY_UTIL,
    DCGM_FI_DEV_ENC_UTIL,
    DCGM_FI_DEV_DEC_UTIL,
];

/// The watch libdcgm adds for a field `dcgmGetVgpuDeviceAttributes` finds unwatched.
const WATCH_FREQ_US: i64 = 30_000_000;
const WATCH_MAX_AGE_S: f64 = 14_400.0;
const WATCH_MAX_SAMPLES: c_int = 480;

/// A read as the C client sees it: the value union of a `dcgmFieldValue_v1`.
fn as_c(r: &Read) -> dcgmFieldValue_v1 {
    let mut v: dcgmFieldValue_v1 = zeroed();
    fill_v1(&mut v, r);
    v
}

/// The 64-bit integer view of a read (libdcgm reads the union so, whatever the field type).
fn int_view(r: &Read) -> i64 {
    // SAFETY: every bit pattern is a valid i64; the union is at least 8 bytes.
    unsafe { as_c(r).value.i64_ }
}

/// The string view of a read.
fn str_view(r: &Read) -> String {
    let v = as_c(r);
    // SAFETY: `fill_v1` NUL-terminates the string member, or the zeroed union ends it.
    let s = unsafe { CStr::from_ptr(v.value.str_.as_ptr()) };
    s.to_string_lossy().into_owned()
}

/// # Safety
///
/// `pDcgmVgpuAttr` must be NULL or point to a `dcgmVgpuDeviceAttributes_v7`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetVgpuDeviceAttributes(
    pDcgmHandle: dcgmHandle_t,
    gpuId: u32,
    pDcgmVgpuAttr: *mut dcgmVgpuDeviceAttributes_v7,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let a = unsafe { pDcgmVgpuAttr.as_mut() }.ok_or(DCGM_ST_BADPARAM)?;
        if a.version != dcgmVgpuDeviceAttributes_version7 {
            return Err(DCGM_ST_VER_MISMATCH);
        }
        let reads = with_engine(pDcgmHandle, |e| {
            let mut watched = false;
            for f in DEVICE_FIELDS {
                if e.latest(DCGM_FE_GPU, gpuId, f, now_us()).status == DCGM_ST_NOT_WATCHED {
                    watch_one(
                        e,
                        gpuId as c_int,
                        f,
                        WATCH_FREQ_US,
                        WATCH_MAX_AGE_S,
                        WATCH_MAX_SAMPLES,
                    )?;
                    watched = true;
                }
            }
            if watched {
                e.update_all();
            }
            let now = now_us();
            Ok(DEVICE_FIELDS.map(|f| e.latest(DCGM_FE_GPU, gpuId, f, now)))
        })?;
        // No vGPU manager runs: no supported types, creatable types or instances (the
        // arrays are left as they are, as libdcgm copies zero entries into them).
        a.supportedVgpuTypeCount = 0;
        a.creatableVgpuTypeCount = 0;
        a.activeVgpuInstanceCount = 0;
        // libdcgm stores the 64-bit readings into the 32-bit members.
        a.gpuUtil = int_view(&reads[4]) as u32;
        a.memCopyUtil = int_view(&reads[5]) as u32;
        a.encUtil = int_view(&reads[6]) as u32;
        a.decUtil = int_view(&reads[7]) as u32;
        Ok(())
    })
}

/// # Safety
///
/// `pDcgmVgpuInstanceAttr` must be NULL or point to a `dcgmVgpuInstanceAttributes_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetVgpuInstanceAttributes(
    pDcgmHandle: dcgmHandle_t,
    vgpuId: u32,
    pDcgmVgpuInstanceAttr: *mut dcgmVgpuInstanceAttributes_v1,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let a = unsafe { pDcgmVgpuInstanceAttr.as_mut() }.ok_or(DCGM_ST_BADPARAM)?;
        if a.version != dcgmVgpuInstanceAttributes_version1 {
            return Err(DCGM_ST_VER_MISMATCH);
        }
        with_engine(pDcgmHandle, |_| Ok(()))?;
        if crate::personality::vgpu_attributes_zeroed() {
            for dst in [
                &mut a.vmId[..],
                &mut a.vmName[..],
                &mut a.vgpuUuid[..],
                &mut a.vgpuDriverVersion[..],
            ] {
                write_str(dst, "");
            }
            a.vgpuTypeId = 0;
            a.fbUsage = 0;
            a.licenseStatus = 0;
            a.frameRateLimit = 0;
            return Ok(());
        }
        // No vGPU instance exists: every field of the entity reads as one never sampled.
        let read = |field| Read {
            group: DCGM_FE_VGPU,
            id: vgpuId,
            field,
            status: DCGM_ST_NOT_WATCHED,
            ts: 0,
            value: SimValue::Blank,
        };
        let text = |dst: &mut [c_char], field| write_str(dst, &str_view(&read(field)));
        text(&mut a.vmId, DCGM_FI_DEV_VGPU_VM_ID);
        text(&mut a.vmName, DCGM_FI_DEV_VGPU_VM_NAME);
        text(&mut a.vgpuUuid, DCGM_FI_DEV_VGPU_UUID);
        text(&mut a.vgpuDriverVersion, DCGM_FI_DEV_VGPU_DRIVER_VERSION);
        a.vgpuTypeId = int_view(&read(DCGM_FI_DEV_VGPU_TYPE)) as u32;
        a.fbUsage = int_view(&read(DCGM_FI_DEV_VGPU_MEMORY_USAGE)) as u32;
        a.licenseStatus = int_view(&read(DCGM_FI_DEV_VGPU_INSTANCE_LICENSE_STATUS)) as u32;
        a.frameRateLimit = int_view(&read(DCGM_FI_DEV_VGPU_FRAME_RATE_LIMIT)) as u32;
        Ok(())
    })
}

/// Whether a vGPU configuration version is one libdcgm accepts (version 1 only).
fn config_version_ok(version: u32) -> bool {
    version == dcgmDeviceVgpuConfig_version1
}

/// # Safety
///
/// `pDeviceConfig` must be NULL or point to a `dcgmDeviceVgpuConfig_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmVgpuConfigSet(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    pDeviceConfig: *mut dcgmDeviceVgpuConfig_v1,
    statusHandle: dcgmStatus_t,
) -> dcgmReturn_t {
    let _ = (pDcgmHandle, groupId, statusHandle);
    guard(|| {
        // SAFETY: per this function's contract.
        let c = unsafe { pDeviceConfig.as_ref() }.ok_or(DCGM_ST_BADPARAM)?;
        if !config_version_ok(c.version) {
            return Err(DCGM_ST_VER_MISMATCH);
        }
        Err(DCGM_ST_NOT_SUPPORTED)
    })
}

/// # Safety
///
/// `deviceConfigList` must be NULL or hold `count` `dcgmDeviceVgpuConfig_v1`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmVgpuConfigGet(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    type_: dcgmConfigType_t,
    count: c_int,
    deviceConfigList: *mut dcgmDeviceVgpuConfig_v1,
    statusHandle: dcgmStatus_t,
) -> dcgmReturn_t {
    let _ = (pDcgmHandle, groupId, type_, statusHandle);
    guard(|| {
        if deviceConfigList.is_null() || count < 1 {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: non-null and `count` entries long per the contract.
        let list = unsafe { std::slice::from_raw_parts(deviceConfigList, count as usize) };
        let first = list[0].version;
        if list
            .iter()
            .any(|c| c.version != first || !config_version_ok(c.version))
        {
            return Err(DCGM_ST_VER_MISMATCH);
        }
        Err(DCGM_ST_NOT_SUPPORTED)
    })
}

/// Never implemented by libdcgm: `DCGM_ST_NOT_SUPPORTED`.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmVgpuConfigEnforce(
    pDcgmHandle: dcgmHandle_t,
    groupId: dcgmGpuGrp_t,
    statusHandle: dcgmStatus_t,
) -> dcgmReturn_t {
    let _ = (pDcgmHandle, groupId, statusHandle);
    DCGM_ST_NOT_SUPPORTED
}
