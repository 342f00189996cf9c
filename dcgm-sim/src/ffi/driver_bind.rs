//! Detaching and attaching the NVIDIA driver (`dcgmDetachDriver`, `dcgmAttachDriver`) and the
//! bind/unbind events they record in `DCGM_FI_SYSTEM_GPU_BIND_EVENT`.
//!
//! As libdcgm 4.6.0 (with injection NVML) does: a detach records "system reinitializing"
//! every time it is called, also when the driver is already detached; the GPUs stay known
//! (`dcgmGetAllDevices`, groups) with the status "detached", are left out of the supported
//! ones, keep their last-known name, PCI bus id and UUID in their attributes and read blank.
//! An attach of a detached driver brings them back, all but the fake GPUs of the test API,
//! and records "reinitialization completed"; an attach of an attached driver does nothing.
//! Watches live on through both.

use dcgm_sys::*;

use super::{guard_symbol, write_str};
use crate::cache::{Watch, key};
use crate::config::GpuConfig;
use crate::engine::{Engine, now_us};
use crate::sim::with_engine;
use crate::sim_value::SimValue;

/// How long libdcgm keeps bind/unbind events nobody watches (its default entry age).
const EVENT_MAX_AGE_US: i64 = 30_000_000;

/// Appends a bind/unbind event at `now` to the field's one entry (a global field: any
/// entity reads it). The entry is marked as holding stored values, so the model never
/// samples over them.
pub fn record_bind_event(e: &mut Engine, state: dcgmBindUnbindEventState_t, now: i64) {
    let w = e
        .cache
        .watches
        .entry(key(DCGM_FE_NONE, 0, DCGM_FI_SYSTEM_GPU_BIND_EVENT))
        .or_insert_with(|| Watch::new(now, EVENT_MAX_AGE_US, EVENT_MAX_AGE_US, 0));
    w.inject(now, SimValue::Int(i64::from(state)));
    if w.max_age_us > 0 {
        let oldest = now - w.max_age_us;
        while w.samples.len() > 1 && w.samples.front().is_some_and(|s| s.ts < oldest) {
            w.samples.pop_front();
        }
    }
}

/// Makes the host engine let go of the driver.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmDetachDriver(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard_symbol("dcgmDetachDriver", || {
        with_engine(pDcgmHandle, |e| {
            let now = now_us();
            record_bind_event(e, DcgmBUEventStateSystemReinitializing, now);
            e.machine.driver.detach(now);
            Ok(())
        })
    })
}

/// Makes the host engine take the driver back after a detach.
#[unsafe(no_mangle)]
pub extern "C" fn dcgmAttachDriver(pDcgmHandle: dcgmHandle_t) -> dcgmReturn_t {
    guard_symbol("dcgmAttachDriver", || {
        with_engine(pDcgmHandle, |e| {
            let now = now_us();
            let fake: Vec<u32> = e.machine.fake_gpus.iter().copied().collect();
            if e.machine.driver.attach(now, fake) {
                record_bind_event(e, DcgmBUEventStateSystemReinitializationCompleted, now);
            }
            Ok(())
        })
    })
}

/// The attributes of a GPU while it is detached, as libdcgm 4.6.0 gives them: the last-known
/// name (none for a fake GPU, which never had one), PCI bus id and UUID; every other string
/// blank, every number the blank
/// of its field (32-bit fields filled from 64-bit cache values show the 64-bit blank's low
/// word), the sub-struct versions 0 and no clock sets.
pub fn fill_detached_attributes(a: &mut dcgmDeviceAttributes_v3, g: &GpuConfig, fake: bool) {
    let version = a.version;
    *a = zeroed();
    a.version = version;
    const B32: u32 = DCGM_INT32_BLANK as u32;
    const B64_LOW: u32 = DCGM_INT64_BLANK as u32;
    let id = &mut a.identifiers;
    for s in [
        &mut id.brandName[..],
        &mut id.serial[..],
        &mut id.vbios[..],
        &mut id.inforomImageVersion[..],
        &mut id.driverVersion[..],
    ] {
        write_str(s, DCGM_STR_BLANK);
    }
    write_str(
        &mut id.deviceName,
        if fake { DCGM_STR_BLANK } else { &g.model },
    );
    write_str(&mut id.pciBusId, &g.pci_bus_id);
    write_str(&mut id.uuid, &g.uuid);
    (id.pciDeviceId, id.pciSubSystemId) = (B64_LOW, B64_LOW);
    id.virtualizationMode = B32;
    let p = &mut a.powerLimits;
    (p.curPowerLimit, p.defaultPowerLimit, p.enforcedPowerLimit) = (B32, B32, B32);
    (p.minPowerLimit, p.maxPowerLimit) = (B32, B32);
    (
        a.thermalSettings.slowdownTemp,
        a.thermalSettings.shutdownTemp,
    ) = (B32, B32);
    let m = &mut a.memoryUsage;
    (m.bar1Total, m.fbTotal, m.fbUsed, m.fbFree) = (B64_LOW, B64_LOW, B64_LOW, B64_LOW);
    let s = &mut a.settings;
    (s.persistenceModeEnabled, s.migModeEnabled) = (B64_LOW, B64_LOW);
    s.confidentialComputeMode = B64_LOW;
}
