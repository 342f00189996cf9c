//! Driver detach/attach and the vGPU functions of the test API: `dcgmDetachDriver` and
//! `dcgmAttachDriver` (twice each; GPU status, supported and known GPUs, the last-known
//! attributes and the bind/unbind events in between), then the vGPU attribute and
//! configuration calls with good and bad versions. Run last: the driver is attached again at
//! the end.

use std::ffi::{CStr, c_int};
use std::time::{SystemTime, UNIX_EPOCH};

use dcgm_sys::*;

use crate::battery::Battery;

/// Calls a library function if the library has it (as the battery's own `call!`).
macro_rules! call {
    ($b:expr, $name:ident ( $($arg:expr),* $(,)? )) => {
        match $b.lib.$name() {
            // SAFETY: every argument is a valid pointer to a live, correctly versioned value
            // of the C type, or a plain value (wrong values on purpose, never dangling).
            Ok(f) => Some(unsafe { f($($arg),*) }),
            Err(_) => None,
        }
    };
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

fn text(s: &[std::ffi::c_char]) -> String {
    // SAFETY: a NUL-terminated buffer written by the library (or zeroed).
    unsafe { CStr::from_ptr(s.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

impl Battery<'_> {
    /// How many GPUs each listing gives, and GPU 0's status.
    fn driver_view(&mut self, id: &str) {
        let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
        let mut n: c_int = 0;
        let rc = call!(
            self,
            dcgmGetAllSupportedDevices(self.h, ids.as_mut_ptr(), &mut n)
        );
        self.rec(format!("driver/{id}/supported"), rc, format!("n={n}"));
        let mut n: c_int = 0;
        let rc = call!(self, dcgmGetAllDevices(self.h, ids.as_mut_ptr(), &mut n));
        self.rec(format!("driver/{id}/all"), rc, format!("n={n}"));
        let mut n: c_int = ids.len() as c_int;
        let rc = call!(
            self,
            dcgmGetEntityGroupEntities(
                self.h,
                DCGM_FE_GPU,
                ids.as_mut_ptr(),
                &mut n,
                DCGM_GEGE_FLAG_ONLY_SUPPORTED
            )
        );
        self.rec(format!("driver/{id}/only_supported"), rc, format!("n={n}"));
        let mut s: DcgmEntityStatus_t = 0;
        let rc = call!(self, dcgmGetGpuStatus(self.h, 0, &mut s));
        self.rec(format!("driver/{id}/status0"), rc, format!("status={s}"));
        let mut a = Box::new(dcgmDeviceAttributes_v3::new_versioned());
        let rc = call!(self, dcgmGetDeviceAttributes(self.h, 0, &mut *a));
        let i = &a.identifiers;
        let shape = format!(
            "uuid={} serial={} brand={} fb={} power={} clocks={}",
            !text(&i.uuid).is_empty(),
            text(&i.serial) == DCGM_STR_BLANK,
            text(&i.brandName) == DCGM_STR_BLANK,
            a.memoryUsage.fbTotal == DCGM_INT64_BLANK as u32,
            a.powerLimits.enforcedPowerLimit == DCGM_INT32_BLANK as u32,
            a.clockSets.count > 0,
        );
        self.rec(format!("driver/{id}/attributes0"), rc, shape);
    }

    /// The bind/unbind event states recorded since `since`.
    fn bind_events(&mut self, id: &str, since: i64) {
        let mut vals = vec![dcgmFieldValue_v1::new_versioned(); 16];
        let mut n: c_int = vals.len() as c_int;
        let rc = call!(
            self,
            dcgmGetMultipleValuesForField(
                self.h,
                0,
                DCGM_FI_SYSTEM_GPU_BIND_EVENT,
                &mut n,
                since,
                0,
                DCGM_ORDER_ASCENDING,
                vals.as_mut_ptr()
            )
        );
        let states: Vec<String> = vals[..n.max(0) as usize]
            .iter()
            // SAFETY: an integer field.
            .map(|v| unsafe { v.value.i64_ }.to_string())
            .collect();
        self.rec(
            format!("driver/{id}/bind_events"),
            rc,
            format!("states={}", states.join(",")),
        );
    }

    /// Detach and attach, each twice, and what the node looks like in between.
    pub fn driver_cases(&mut self) {
        let t0 = now_us();
        let rc = call!(self, dcgmAttachDriver(self.h));
        self.rec("driver/attach_attached", rc, "");
        self.bind_events("before", t0);
        let rc = call!(self, dcgmDetachDriver(self.h));
        self.rec("driver/detach", rc, "");
        let rc = call!(self, dcgmDetachDriver(self.h));
        self.rec("driver/detach_detached", rc, "");
        self.driver_view("detached");
        self.bind_events("detached", t0);
        let t1 = now_us();
        let rc = call!(self, dcgmAttachDriver(self.h));
        self.rec("driver/attach", rc, "");
        let rc = call!(self, dcgmAttachDriver(self.h));
        self.rec("driver/attach_again", rc, "");
        self.driver_view("attached");
        self.bind_events("attached", t1);
        let rc = call!(self, dcgmDetachDriver(987_654));
        self.rec("driver/detach_bad_handle", rc, "");
        let rc = call!(self, dcgmAttachDriver(987_654));
        self.rec("driver/attach_bad_handle", rc, "");
    }

    /// The vGPU attribute and configuration calls.
    pub fn vgpu_cases(&mut self) {
        let mut a = Box::new(dcgmVgpuDeviceAttributes_v7::new_versioned());
        for (id, v) in [
            ("v0", 0),
            ("v50", 50),
            ("v6", dcgmVgpuDeviceAttributes_version6),
        ] {
            a.version = v;
            let rc = call!(self, dcgmGetVgpuDeviceAttributes(self.h, 0, &mut *a));
            self.rec(format!("vgpu/device/{id}"), rc, "");
        }
        let rc = call!(
            self,
            dcgmGetVgpuDeviceAttributes(self.h, 0, std::ptr::null_mut())
        );
        self.rec("vgpu/device/null", rc, "");
        a.version = dcgmVgpuDeviceAttributes_version7;
        let rc = call!(self, dcgmGetVgpuDeviceAttributes(self.h, 99, &mut *a));
        self.rec("vgpu/device/unknown_gpu", rc, "");
        let rc = call!(self, dcgmGetVgpuDeviceAttributes(self.h, 0, &mut *a));
        let shape = format!(
            "supported={} creatable={} active={}",
            a.supportedVgpuTypeCount, a.creatableVgpuTypeCount, a.activeVgpuInstanceCount
        );
        self.rec("vgpu/device/v7", rc, shape);
        let rc = call!(self, dcgmGetVgpuDeviceAttributes(987_654, 0, &mut *a));
        self.rec("vgpu/device/bad_handle", rc, "");

        let mut i = dcgmVgpuInstanceAttributes_v1::new_versioned();
        for (id, v) in [
            ("v0", 0),
            ("v50", 50),
            ("v2", dcgmVgpuInstanceAttributes_version1 + (1 << 24)),
        ] {
            i.version = v;
            let rc = call!(self, dcgmGetVgpuInstanceAttributes(self.h, 0, &mut i));
            self.rec(format!("vgpu/instance/{id}"), rc, "");
        }
        i.version = dcgmVgpuInstanceAttributes_version1;
        let rc = call!(self, dcgmGetVgpuInstanceAttributes(self.h, 12345, &mut i));
        let shape = format!(
            "vm={} name={} uuid={} driver={} type={:#x} fb={:#x} license={:#x} fps={:#x}",
            text(&i.vmId),
            text(&i.vmName),
            text(&i.vgpuUuid),
            text(&i.vgpuDriverVersion),
            i.vgpuTypeId,
            i.fbUsage,
            i.licenseStatus,
            i.frameRateLimit
        );
        self.rec("vgpu/instance/v1", rc, shape);

        let mut c = [dcgmDeviceVgpuConfig_v1::new_versioned(); 2];
        let rc = call!(self, dcgmVgpuConfigSet(self.h, 0, &mut c[0], 0));
        self.rec("vgpu/config_set/v1", rc, "");
        let rc = call!(self, dcgmVgpuConfigSet(987_654, 999, &mut c[0], 0));
        self.rec("vgpu/config_set/bad_handle_and_group", rc, "");
        let rc = call!(self, dcgmVgpuConfigSet(self.h, 0, std::ptr::null_mut(), 0));
        self.rec("vgpu/config_set/null", rc, "");
        let rc = call!(self, dcgmVgpuConfigGet(self.h, 0, 0, 2, c.as_mut_ptr(), 0));
        self.rec("vgpu/config_get/v1", rc, "");
        let rc = call!(self, dcgmVgpuConfigGet(self.h, 0, 0, 0, c.as_mut_ptr(), 0));
        self.rec("vgpu/config_get/count0", rc, "");
        c[1].version = 0;
        let rc = call!(self, dcgmVgpuConfigGet(self.h, 0, 0, 2, c.as_mut_ptr(), 0));
        self.rec("vgpu/config_get/mixed_versions", rc, "");
        c[0].version = 50;
        let rc = call!(self, dcgmVgpuConfigSet(self.h, 0, &mut c[0], 0));
        self.rec("vgpu/config_set/v50", rc, "");
        let rc = call!(self, dcgmVgpuConfigEnforce(self.h, 0, 0));
        self.rec("vgpu/config_enforce", rc, "");
    }
}
