//! Detaching and attaching the driver (GPU status, discovery, attributes, blank readings and
//! the bind/unbind event field) and the vGPU functions of the test API, as libdcgm 4.6.0
//! answers them with injection NVML on a bare-metal H200.

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::{CStr, CString, c_int};
use std::time::Duration;

use common::*;
use dcgm_sys::*;

const AUTO: dcgmOperationMode_t = DCGM_OPERATION_MODE_AUTO;

fn supported(h: dcgmHandle_t) -> Vec<u32> {
    let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
    let mut n: c_int = 0;
    // SAFETY: room for DCGM_MAX_NUM_DEVICES ids.
    let rc = unsafe { lib().dcgmGetAllSupportedDevices().unwrap()(h, ids.as_mut_ptr(), &mut n) };
    assert_eq!(rc, DCGM_ST_OK);
    ids[..n as usize].to_vec()
}

fn all_devices(h: dcgmHandle_t) -> Vec<u32> {
    let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
    let mut n: c_int = 0;
    // SAFETY: room for DCGM_MAX_NUM_DEVICES ids.
    let rc = unsafe { lib().dcgmGetAllDevices().unwrap()(h, ids.as_mut_ptr(), &mut n) };
    assert_eq!(rc, DCGM_ST_OK);
    ids[..n as usize].to_vec()
}

fn gpu_entities(h: dcgmHandle_t, flags: u32) -> Vec<u32> {
    let mut ids = [0u32; 64];
    let mut n: c_int = ids.len() as c_int;
    // SAFETY: room for `n` ids.
    let rc = unsafe {
        lib().dcgmGetEntityGroupEntities().unwrap()(h, DCGM_FE_GPU, ids.as_mut_ptr(), &mut n, flags)
    };
    assert_eq!(rc, DCGM_ST_OK);
    ids[..n as usize].to_vec()
}

fn status(h: dcgmHandle_t, gpu: u32) -> DcgmEntityStatus_t {
    let mut s = 0;
    // SAFETY: `s` is writable.
    assert_eq!(
        unsafe { lib().dcgmGetGpuStatus().unwrap()(h, gpu, &mut s) },
        DCGM_ST_OK
    );
    s
}

fn attributes(h: dcgmHandle_t, gpu: u32) -> Box<dcgmDeviceAttributes_v3> {
    let mut a = Box::new(dcgmDeviceAttributes_v3::new_versioned());
    // SAFETY: a versioned struct.
    let rc = unsafe { lib().dcgmGetDeviceAttributes().unwrap()(h, gpu, &mut *a) };
    assert_eq!(rc, DCGM_ST_OK);
    a
}

fn text(s: &[std::ffi::c_char]) -> String {
    // SAFETY: the library NUL-terminates its strings.
    unsafe { CStr::from_ptr(s.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

fn detach(h: dcgmHandle_t) -> dcgmReturn_t {
    // SAFETY: plain argument.
    unsafe { lib().dcgmDetachDriver().unwrap()(h) }
}

fn attach(h: dcgmHandle_t) -> dcgmReturn_t {
    // SAFETY: plain argument.
    unsafe { lib().dcgmAttachDriver().unwrap()(h) }
}

/// The bind/unbind events since `since`, or the error of the read.
fn bind_events(h: dcgmHandle_t, since: i64) -> Result<Vec<(i64, i64)>, dcgmReturn_t> {
    let mut vals = vec![dcgmFieldValue_v1::new_versioned(); 100];
    let mut n: c_int = vals.len() as c_int;
    // SAFETY: room for `n` values.
    let rc = unsafe {
        lib().dcgmGetMultipleValuesForField().unwrap()(
            h,
            0,
            DCGM_FI_SYSTEM_GPU_BIND_EVENT,
            &mut n,
            since,
            0,
            DCGM_ORDER_ASCENDING,
            vals.as_mut_ptr(),
        )
    };
    if rc != DCGM_ST_OK {
        return Err(rc);
    }
    // SAFETY: an integer field.
    Ok(vals[..n as usize]
        .iter()
        .map(|v| (v.ts, unsafe { v.value.i64_ }))
        .collect())
}

fn latest_temp(h: dcgmHandle_t, gpu: c_int) -> i64 {
    let mut v = dcgmFieldValue_v1::new_versioned();
    let mut f = [DCGM_FI_DEV_GPU_TEMP_CELSIUS];
    // SAFETY: one field, one value.
    let rc =
        unsafe { lib().dcgmGetLatestValuesForFields().unwrap()(h, gpu, f.as_mut_ptr(), 1, &mut v) };
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(v.status, DCGM_ST_OK);
    // SAFETY: an integer field.
    unsafe { v.value.i64_ }
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64
}

#[test]
fn a_detached_driver_hides_the_gpus_until_it_is_attached_again() {
    let (_s, h) = Session::embedded(None, AUTO);
    let before = attributes(h, 2);
    assert_eq!(supported(h).len(), 8);
    assert_eq!(
        attach(h),
        DCGM_ST_OK,
        "attaching an attached driver is fine"
    );

    assert_eq!(detach(h), DCGM_ST_OK);
    assert_eq!(detach(h), DCGM_ST_OK, "detaching a detached driver is fine");
    assert!(supported(h).is_empty());
    assert_eq!(all_devices(h).len(), 8, "the GPUs stay known");
    assert_eq!(gpu_entities(h, 0).len(), 8);
    assert!(gpu_entities(h, DCGM_GEGE_FLAG_ONLY_SUPPORTED).is_empty());
    assert_eq!(status(h, 2), DcgmEntityStatusDetached);
    assert_eq!(status(h, 99), DcgmEntityStatusUnknown);
    let a = attributes(h, 2);
    let (id, was) = (&a.identifiers, &before.identifiers);
    assert_eq!(text(&id.uuid), text(&was.uuid), "the last-known UUID stays");
    assert_eq!(text(&id.pciBusId), text(&was.pciBusId));
    assert_eq!(text(&id.deviceName), text(&was.deviceName));
    assert_eq!(text(&id.serial), DCGM_STR_BLANK);
    assert_eq!(a.memoryUsage.fbTotal, DCGM_INT64_BLANK as u32);
    assert_eq!(a.powerLimits.enforcedPowerLimit, DCGM_INT32_BLANK as u32);
    assert_eq!(a.clockSets.count, 0);

    assert_eq!(attach(h), DCGM_ST_OK);
    assert_eq!(supported(h), (0..8).collect::<Vec<_>>());
    assert_eq!(status(h, 2), DcgmEntityStatusOk);
    assert_eq!(
        text(&attributes(h, 2).identifiers.serial),
        text(&was.serial)
    );
}

#[test]
fn every_detach_and_the_attach_that_follows_are_recorded_as_bind_events() {
    let (_s, h) = Session::embedded(None, AUTO);
    assert_eq!(bind_events(h, 0), Err(DCGM_ST_NOT_WATCHED), "no event yet");
    let t0 = now_us();
    assert_eq!(detach(h), DCGM_ST_OK);
    assert_eq!(detach(h), DCGM_ST_OK);
    let events = bind_events(h, t0).unwrap();
    let states: Vec<i64> = events.iter().map(|e| e.1).collect();
    assert_eq!(states, [1, 1], "one 'reinitializing' per detach");
    assert!(events[0].0 >= t0);

    // A watch set afterwards (as NVIDIA's test does) still sees the events; the model adds
    // no samples of its own to the field.
    // SAFETY: plain arguments.
    let rc = unsafe {
        lib().dcgmWatchFieldValue().unwrap()(h, 0, DCGM_FI_SYSTEM_GPU_BIND_EVENT, 10_000, 600.0, 0)
    };
    assert_eq!(rc, DCGM_ST_OK);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(bind_events(h, t0).unwrap().len(), 2);

    let t1 = now_us();
    assert_eq!(attach(h), DCGM_ST_OK);
    assert_eq!(attach(h), DCGM_ST_OK);
    let after: Vec<i64> = bind_events(h, t1).unwrap().iter().map(|e| e.1).collect();
    assert_eq!(
        after,
        [2],
        "one 'reinitialization completed', for the attach that did it"
    );
    // A global field: any GPU id reads the same events.
    let mut vals = vec![dcgmFieldValue_v1::new_versioned(); 10];
    let mut n: c_int = 10;
    // SAFETY: room for `n` values.
    let rc = unsafe {
        lib().dcgmGetMultipleValuesForField().unwrap()(
            h,
            5,
            DCGM_FI_SYSTEM_GPU_BIND_EVENT,
            &mut n,
            t0,
            0,
            DCGM_ORDER_ASCENDING,
            vals.as_mut_ptr(),
        )
    };
    assert_eq!((rc, n), (DCGM_ST_OK, 3));
}

#[test]
fn watched_fields_read_blank_while_detached_and_the_watch_lives_on() {
    let (_s, h) = Session::embedded(None, AUTO);
    let name = CString::new("temps").unwrap();
    let f = [DCGM_FI_DEV_GPU_TEMP_CELSIUS];
    let mut fg = 0;
    // SAFETY: valid pointers.
    let rc =
        unsafe { lib().dcgmFieldGroupCreate().unwrap()(h, 1, f.as_ptr(), name.as_ptr(), &mut fg) };
    assert_eq!(rc, DCGM_ST_OK);
    // SAFETY: plain arguments.
    let rc =
        unsafe { lib().dcgmWatchFields().unwrap()(h, DCGM_GROUP_ALL_GPUS, fg, 10_000, 60.0, 0) };
    assert_eq!(rc, DCGM_ST_OK);
    std::thread::sleep(Duration::from_millis(30));
    assert!(latest_temp(h, 0) < DCGM_INT64_BLANK);

    assert_eq!(detach(h), DCGM_ST_OK);
    std::thread::sleep(Duration::from_millis(40));
    assert_eq!(latest_temp(h, 0), DCGM_INT64_BLANK);

    assert_eq!(attach(h), DCGM_ST_OK);
    std::thread::sleep(Duration::from_millis(40));
    assert!(
        latest_temp(h, 0) < DCGM_INT64_BLANK,
        "the watch samples again"
    );
}

#[test]
fn vgpu_device_attributes_check_the_version_and_watch_what_they_read() {
    let (_s, h) = Session::embedded(None, AUTO);
    let f = lib().dcgmGetVgpuDeviceAttributes().unwrap();
    let mut a = Box::new(dcgmVgpuDeviceAttributes_v7::new_versioned());
    for v in [0, 50, dcgmVgpuDeviceAttributes_version6] {
        a.version = v;
        // SAFETY: a struct of the right size.
        assert_eq!(
            unsafe { f(h, 0, &mut *a) },
            DCGM_ST_VER_MISMATCH,
            "version {v:#x}"
        );
    }
    // SAFETY: NULL is answered, not read.
    assert_eq!(unsafe { f(h, 0, std::ptr::null_mut()) }, DCGM_ST_BADPARAM);
    a.version = dcgmVgpuDeviceAttributes_version7;
    // SAFETY: a versioned struct.
    assert_eq!(
        unsafe { f(h, 99, &mut *a) },
        DCGM_ST_GENERIC_ERROR,
        "unknown GPU"
    );
    a.activeVgpuInstanceCount = 7;
    // SAFETY: a versioned struct.
    assert_eq!(unsafe { f(h, 1, &mut *a) }, DCGM_ST_OK);
    assert_eq!(a.activeVgpuInstanceCount, 0, "no vGPU manager runs");
    assert_eq!(a.creatableVgpuTypeCount, 0);
    assert_eq!(a.supportedVgpuTypeCount, 0);
    assert!(a.gpuUtil <= 100);

    let mut fi: dcgmCacheManagerFieldInfo_v4_t = zeroed();
    fi.version = dcgmCacheManagerFieldInfo_version4;
    fi.entityGroupId = DCGM_FE_GPU;
    fi.entityId = 1;
    fi.fieldId = DCGM_FI_DEV_VGPU_SUPPORTED_INFO;
    // SAFETY: a versioned struct.
    let rc = unsafe { lib().dcgmGetCacheManagerFieldInfo().unwrap()(h, &mut fi) };
    assert_eq!(rc, DCGM_ST_OK, "the call watched the field");
    assert_ne!(fi.flags & DCGM_CMI_F_WATCHED, 0);
    assert_eq!(fi.monitorIntervalUsec, 30_000_000);
}

#[test]
fn vgpu_instance_attributes_are_blank_for_any_id() {
    let (_s, h) = Session::embedded(None, AUTO);
    let f = lib().dcgmGetVgpuInstanceAttributes().unwrap();
    let mut a = dcgmVgpuInstanceAttributes_v1::new_versioned();
    for v in [0, 50, dcgmVgpuInstanceAttributes_version1 + 1] {
        a.version = v;
        // SAFETY: a struct of the right size.
        assert_eq!(unsafe { f(h, 0, &mut a) }, DCGM_ST_VER_MISMATCH);
    }
    a.version = dcgmVgpuInstanceAttributes_version1;
    // SAFETY: a versioned struct.
    assert_eq!(unsafe { f(h, 12345, &mut a) }, DCGM_ST_OK);
    assert_eq!(text(&a.vmName), DCGM_STR_BLANK);
    assert_eq!(text(&a.vgpuUuid), DCGM_STR_BLANK);
    assert_eq!(a.vgpuTypeId, DCGM_INT64_BLANK as u32);
    // A string field read as an integer: the first bytes of the blank string.
    let b = DCGM_STR_BLANK.as_bytes();
    assert_eq!(
        a.licenseStatus,
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    );
    // SAFETY: a versioned struct.
    assert_eq!(
        unsafe { f(987_654, 0, &mut a) },
        DCGM_ST_CONNECTION_NOT_VALID
    );
}

#[test]
fn vgpu_configuration_checks_versions_then_is_not_supported() {
    let s = Session::new(None);
    let set = lib().dcgmVgpuConfigSet().unwrap();
    let get = lib().dcgmVgpuConfigGet().unwrap();
    let enforce = lib().dcgmVgpuConfigEnforce().unwrap();
    let mut c = [dcgmDeviceVgpuConfig_v1::new_versioned(); 2];
    // SAFETY: a versioned struct.
    assert_eq!(
        unsafe { set(0, 0, &mut c[0], 0) },
        DCGM_ST_NOT_SUPPORTED,
        "before dcgmInit too"
    );
    drop(s);
    let (_s, h) = Session::embedded(None, AUTO);
    // SAFETY: a versioned struct; libdcgm checks neither handle nor group here.
    assert_eq!(unsafe { set(h, 999, &mut c[0], 0) }, DCGM_ST_NOT_SUPPORTED);
    // SAFETY: as above.
    assert_eq!(
        unsafe { set(987_654, 0, &mut c[0], 0) },
        DCGM_ST_NOT_SUPPORTED
    );
    // SAFETY: NULL is answered, not read.
    assert_eq!(
        unsafe { set(h, 0, std::ptr::null_mut(), 0) },
        DCGM_ST_BADPARAM
    );
    // SAFETY: two versioned structs.
    assert_eq!(
        unsafe { get(h, 0, 0, 2, c.as_mut_ptr(), 0) },
        DCGM_ST_NOT_SUPPORTED
    );
    // SAFETY: as above.
    assert_eq!(
        unsafe { get(h, 0, 0, 0, c.as_mut_ptr(), 0) },
        DCGM_ST_BADPARAM
    );
    c[1].version = 0;
    // SAFETY: as above.
    assert_eq!(
        unsafe { get(h, 0, 0, 2, c.as_mut_ptr(), 0) },
        DCGM_ST_VER_MISMATCH
    );
    c[0].version = 50;
    // SAFETY: a struct of the right size.
    assert_eq!(unsafe { set(h, 0, &mut c[0], 0) }, DCGM_ST_VER_MISMATCH);
    // SAFETY: plain arguments.
    assert_eq!(unsafe { enforce(h, 0, 0) }, DCGM_ST_NOT_SUPPORTED);
}

#[test]
fn fake_gpus_do_not_come_back_with_the_driver() {
    let (_s, h) = Session::embedded(None, AUTO);
    let mut c = dcgmCreateFakeEntities_v2::boxed_versioned();
    c.numToCreate = 1;
    c.entityList[0].entity.entityGroupId = DCGM_FE_GPU;
    // SAFETY: a versioned request.
    assert_eq!(
        unsafe { lib().dcgmCreateFakeEntities().unwrap()(h, &mut *c) },
        DCGM_ST_OK
    );
    let fake = c.entityList[0].entity.entityId;
    assert_eq!(status(h, fake), DcgmEntityStatusFake);
    assert!(supported(h).contains(&fake));

    assert_eq!(detach(h), DCGM_ST_OK);
    assert_eq!(status(h, fake), DcgmEntityStatusDetached);
    assert_eq!(attach(h), DCGM_ST_OK);
    assert_eq!(status(h, 0), DcgmEntityStatusOk);
    assert_eq!(
        status(h, fake),
        DcgmEntityStatusDetached,
        "no device to attach to"
    );
    assert!(!supported(h).contains(&fake));
    assert!(all_devices(h).contains(&fake));
    assert_eq!(
        text(&attributes(h, fake).identifiers.deviceName),
        DCGM_STR_BLANK
    );
}
