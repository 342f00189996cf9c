//! Discovery: devices, entities, attributes, GPU status and architecture, MIG and CPU
//! hierarchies (topology is in `topology`, NVLink link states in `nvlink`).

use std::ffi::c_int;

use dcgm_sys::*;

use super::{guard, guard_symbol, out, versioned, write_str};
use crate::machine::Machine;
use crate::sim::with_engine;

/// # Safety
///
/// `gpuIdList` must have room for `DCGM_MAX_NUM_DEVICES` ids and `count` be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetAllDevices(
    pDcgmHandle: dcgmHandle_t,
    gpuIdList: *mut u32,
    count: *mut c_int,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let c = unsafe { out(count) }?;
        if gpuIdList.is_null() {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: room for DCGM_MAX_NUM_DEVICES per the contract.
        let list = unsafe { std::slice::from_raw_parts_mut(gpuIdList, DCGM_MAX_NUM_DEVICES) };
        with_engine(pDcgmHandle, |e| {
            let n = (e.machine.gpu_count() as usize).min(DCGM_MAX_NUM_DEVICES);
            for (i, d) in list.iter_mut().take(n).enumerate() {
                *d = i as u32;
            }
            *c = n as c_int;
            Ok(())
        })
    })
}

/// The GPUs a client can use: every simulated GPU that is not detached.
fn supported_gpus(m: &Machine) -> Vec<u32> {
    (0..m.gpu_count())
        .filter(|&g| !m.driver.gpu_is_detached(g))
        .collect()
}

/// # Safety
///
/// As for [`dcgmGetAllDevices`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetAllSupportedDevices(
    pDcgmHandle: dcgmHandle_t,
    gpuIdList: *mut u32,
    count: *mut c_int,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let c = unsafe { out(count) }?;
        if gpuIdList.is_null() {
            return Err(DCGM_ST_BADPARAM);
        }
        // SAFETY: room for DCGM_MAX_NUM_DEVICES per the contract.
        let list = unsafe { std::slice::from_raw_parts_mut(gpuIdList, DCGM_MAX_NUM_DEVICES) };
        with_engine(pDcgmHandle, |e| {
            let ids = supported_gpus(&e.machine);
            let n = ids.len().min(DCGM_MAX_NUM_DEVICES);
            list[..n].copy_from_slice(&ids[..n]);
            *c = n as c_int;
            Ok(())
        })
    })
}

/// # Safety
///
/// `entities` must have room for `*numEntities` ids; `numEntities` readable and writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetEntityGroupEntities(
    dcgmHandle: dcgmHandle_t,
    entityGroup: dcgm_field_entity_group_t,
    entities: *mut dcgm_field_eid_t,
    numEntities: *mut c_int,
    flags: u32,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let n = unsafe { out(numEntities) }?;
        if entities.is_null() || *n < 0 {
            return Err(DCGM_ST_BADPARAM);
        }
        let cap = *n as usize;
        // SAFETY: room for `cap` ids per the contract.
        let list = unsafe { std::slice::from_raw_parts_mut(entities, cap) };
        with_engine(dcgmHandle, |e| {
            // As libdcgm 4.6.0: no vGPU entities (that module is not part of it), and CPU
            // entities only where the sysmon module runs, which needs supported CPUs.
            if entityGroup == DCGM_FE_NONE
                || entityGroup == DCGM_FE_VGPU
                || entityGroup >= crate::personality::entity_group_count()
            {
                return Err(DCGM_ST_NOT_SUPPORTED);
            }
            if matches!(entityGroup, DCGM_FE_CPU | DCGM_FE_CPU_CORE)
                && e.machine.cfg.cpus.is_empty()
            {
                return Err(DCGM_ST_MODULE_NOT_LOADED);
            }
            let mut ids = e.machine.entities(entityGroup);
            if entityGroup == DCGM_FE_GPU && flags & DCGM_GEGE_FLAG_ONLY_SUPPORTED != 0 {
                let supported = supported_gpus(&e.machine);
                ids.retain(|g| supported.contains(g));
            }
            *n = ids.len() as c_int;
            if ids.len() > cap {
                return Err(DCGM_ST_INSUFFICIENT_SIZE);
            }
            list[..ids.len()].copy_from_slice(&ids);
            Ok(())
        })
    })
}

/// The sentinels the real library leaves in the attributes of a GPU that does not report them.
fn blank_attributes(a: &mut dcgmDeviceAttributes_v3) {
    const B32: u32 = DCGM_INT32_BLANK as u32;
    const B64_LOW: u32 = DCGM_INT64_BLANK as u32;
    const NS32: u32 = DCGM_INT32_NOT_SUPPORTED as u32;
    for s in [
        &mut a.identifiers.brandName[..],
        &mut a.identifiers.serial[..],
        &mut a.identifiers.vbios[..],
        &mut a.identifiers.inforomImageVersion[..],
    ] {
        write_str(s, DCGM_STR_BLANK);
    }
    a.identifiers.pciDeviceId = u32::MAX;
    let p = &mut a.powerLimits;
    (p.curPowerLimit, p.defaultPowerLimit, p.enforcedPowerLimit) = (B32, B32, NS32);
    (p.minPowerLimit, p.maxPowerLimit) = (B32, B32);
    (
        a.thermalSettings.slowdownTemp,
        a.thermalSettings.shutdownTemp,
    ) = (B32, NS32);
    let m = &mut a.memoryUsage;
    (m.fbTotal, m.fbUsed, m.fbFree) = (B64_LOW, B64_LOW, B64_LOW);
    a.clockSets.count = 0;
}

/// The configuration of a simulated GPU, or `DCGM_ST_BADPARAM` for an unknown id.
pub fn gpu_cfg(m: &Machine, gpu: u32) -> Result<&crate::config::GpuConfig, dcgmReturn_t> {
    m.cfg.gpus.get(gpu as usize).ok_or(DCGM_ST_BADPARAM)
}

/// # Safety
///
/// `pDcgmAttr` must be NULL or a versioned `dcgmDeviceAttributes_v3`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetDeviceAttributes(
    pDcgmHandle: dcgmHandle_t,
    gpuId: u32,
    pDcgmAttr: *mut dcgmDeviceAttributes_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let a = unsafe { versioned(pDcgmAttr, &[dcgmDeviceAttributes_version3]) }?;
        with_engine(pDcgmHandle, |e| {
            if e.machine.driver.gpu_is_detached(gpuId)
                && let Ok(g) = gpu_cfg(&e.machine, gpuId)
            {
                let fake = e.machine.fake_gpus.contains(&gpuId);
                super::driver_bind::fill_detached_attributes(a, g, fake);
                return Ok(());
            }
            let Ok(g) = gpu_cfg(&e.machine, gpuId).cloned() else {
                // As libdcgm 4.6.0: an unknown GPU id succeeds with empty attributes, only
                // the driver version filled in.
                write_str(
                    &mut a.identifiers.driverVersion,
                    &e.machine.cfg.driver_version,
                );
                return Ok(());
            };
            let limit = e.dynamics.power_limit_w[gpuId as usize];
            let id = &mut a.identifiers;
            id.version = dcgmDeviceIdentifiers_version1;
            write_str(&mut id.brandName, "NVIDIA");
            write_str(&mut id.deviceName, &g.model);
            write_str(&mut id.pciBusId, &g.pci_bus_id);
            write_str(&mut id.serial, &g.serial);
            write_str(&mut id.uuid, &g.uuid);
            write_str(&mut id.vbios, "96.00.99.00.01");
            write_str(&mut id.inforomImageVersion, "G520.0200.00.05");
            write_str(&mut id.driverVersion, &e.machine.cfg.driver_version);
            id.pciDeviceId = 0x2330_10de;
            id.pciSubSystemId = 0x16c1_10de;
            let p = &mut a.powerLimits;
            p.version = dcgmDevicePowerLimits_version1;
            p.curPowerLimit = limit as u32;
            p.enforcedPowerLimit = limit as u32;
            p.defaultPowerLimit = g.power_limit_w as u32;
            p.maxPowerLimit = g.power_limit_w as u32;
            p.minPowerLimit = 200;
            let t = &mut a.thermalSettings;
            t.version = dcgmDeviceThermals_version1;
            t.slowdownTemp = 90;
            t.shutdownTemp = 92;
            let used: i64 = e
                .machine
                .cfg
                .processes
                .iter()
                .filter(|p| p.gpus.contains(&gpuId))
                .map(|p| p.memory_mib)
                .sum::<i64>()
                + 610;
            let mu = &mut a.memoryUsage;
            mu.version = dcgmDeviceMemoryUsage_version1;
            mu.fbTotal = g.memory_mib as u32;
            mu.fbUsed = used as u32;
            mu.fbFree = (g.memory_mib - used) as u32;
            mu.bar1Total = 131_072;
            let s = &mut a.settings;
            s.version = dcgmDeviceSettings_version2;
            s.persistenceModeEnabled = 1;
            s.migModeEnabled = u32::from(e.machine.mig.enabled(gpuId));
            s.confidentialComputeMode = 0;
            let c = &mut a.clockSets;
            c.version = dcgmDeviceSupportedClockSets_version1;
            c.count = 1;
            c.clockSet[0].version = dcgmClockSet_version1 as i32;
            c.clockSet[0].memClock = g.mem_clock_mhz as u32;
            c.clockSet[0].smClock = g.max_sm_clock_mhz as u32;
            if e.machine.cfg.faults.blank_attributes {
                blank_attributes(a);
            }
            Ok(())
        })
    })
}

/// # Safety
///
/// `status` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetGpuStatus(
    pDcgmHandle: dcgmHandle_t,
    gpuId: u32,
    status: *mut DcgmEntityStatus_t,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let s = unsafe { out(status) }?;
        with_engine(pDcgmHandle, |e| {
            *s = if gpuId < e.machine.gpu_count() && e.machine.driver.gpu_is_detached(gpuId) {
                DcgmEntityStatusDetached
            } else if e.machine.fake_gpus.contains(&gpuId) {
                DcgmEntityStatusFake
            } else if gpuId < e.machine.gpu_count() {
                DcgmEntityStatusOk
            } else {
                DcgmEntityStatusUnknown
            };
            Ok(())
        })
    })
}

/// # Safety
///
/// `chipArchitecture` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetGpuChipArchitecture(
    dcgmHandle: dcgmHandle_t,
    gpuId: u32,
    chipArchitecture: *mut dcgmChipArchitecture_t,
) -> dcgmReturn_t {
    guard_symbol("dcgmGetGpuChipArchitecture", || {
        // SAFETY: per this function's contract.
        let a = unsafe { out(chipArchitecture) }?;
        with_engine(dcgmHandle, |e| {
            gpu_cfg(&e.machine, gpuId)?;
            *a = DCGM_CHIP_ARCH_HOPPER;
            Ok(())
        })
    })
}

fn mig_profile(slices: u32, compute: bool) -> u32 {
    let base = if compute {
        DcgmMigProfileComputeInstanceSlice1
    } else {
        DcgmMigProfileGpuInstanceSlice1
    };
    match slices {
        1 => base,
        2 => base + 1,
        3 => base + 2,
        4 => base + 3,
        7 => base + 4,
        _ => base,
    }
}

/// # Safety
///
/// `hierarchy` must be NULL or a versioned `dcgmMigHierarchy_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetGpuInstanceHierarchy(
    dcgmHandle: dcgmHandle_t,
    hierarchy: *mut dcgmMigHierarchy_v2,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let h = unsafe { versioned(hierarchy, &[dcgmMigHierarchy_version2]) }?;
        with_engine(dcgmHandle, |e| {
            let m = &e.machine;
            let mut n = 0usize;
            // Grouped by GPU in id order, each GPU instance followed by its compute instances.
            let mut gis: Vec<_> = m.mig.gpu_instances().iter().collect();
            gis.sort_by_key(|gi| (gi.gpu, gi.id));
            for gi in gis {
                if n >= h.entityList.len() {
                    break;
                }
                let info = &mut h.entityList[n];
                info.entity = dcgmGroupEntityPair_t {
                    entityGroupId: DCGM_FE_GPU_I,
                    entityId: gi.id,
                };
                info.parent = dcgmGroupEntityPair_t {
                    entityGroupId: DCGM_FE_GPU,
                    entityId: gi.gpu,
                };
                write_str(&mut info.info.gpuUuid, &m.cfg.gpus[gi.gpu as usize].uuid);
                info.info.nvmlGpuIndex = gi.gpu;
                info.info.nvmlInstanceId = gi.local_id;
                info.info.nvmlComputeInstanceId = u32::MAX;
                (info.info.nvmlMigProfileId, info.info.nvmlProfileSlices) = m
                    .mig
                    .gi_nvml_profile(gi)
                    .unwrap_or((mig_profile(gi.slices, false), gi.slices));
                n += 1;
                for ci in m
                    .mig
                    .compute_instances()
                    .iter()
                    .filter(|c| c.instance == gi.id)
                {
                    let Some(info) = h.entityList.get_mut(n) else {
                        break;
                    };
                    info.entity = dcgmGroupEntityPair_t {
                        entityGroupId: DCGM_FE_GPU_CI,
                        entityId: ci.id,
                    };
                    info.parent = dcgmGroupEntityPair_t {
                        entityGroupId: DCGM_FE_GPU_I,
                        entityId: gi.id,
                    };
                    write_str(&mut info.info.gpuUuid, &m.cfg.gpus[gi.gpu as usize].uuid);
                    info.info.nvmlGpuIndex = gi.gpu;
                    info.info.nvmlInstanceId = gi.local_id;
                    info.info.nvmlComputeInstanceId = ci.local_id;
                    let per = m
                        .mig
                        .compute_instances()
                        .iter()
                        .filter(|c| c.instance == gi.id)
                        .count()
                        .max(1) as u32;
                    (info.info.nvmlMigProfileId, info.info.nvmlProfileSlices) =
                        m.mig.ci_nvml_profile(ci).unwrap_or((
                            mig_profile((gi.slices / per).max(1), true),
                            (gi.slices / per).max(1),
                        ));
                    n += 1;
                }
            }
            h.count = n as u32;
            if m.cfg.faults.blank_structs {
                const B32: u32 = DCGM_INT32_BLANK as u32;
                for e in h.entityList.iter_mut().take(n) {
                    let i = &mut e.info;
                    (i.nvmlInstanceId, i.nvmlComputeInstanceId) = (B32, B32);
                    (i.nvmlMigProfileId, i.nvmlProfileSlices) = (B32, B32);
                }
            }
            Ok(())
        })
    })
}

fn fill_cpus(m: &Machine, num: &mut u32, mut each: impl FnMut(usize, u32, &[u32], &str)) {
    let n = m.cfg.cpus.len().min(DCGM_MAX_NUM_CPUS);
    *num = n as u32;
    for (i, cpu) in (0..n as u32).enumerate() {
        let serial = if m.cpus.is_fake(cpu) {
            String::new()
        } else {
            format!("SIM-CPU-{cpu:04}")
        };
        each(i, cpu, &m.cpus.cores_of_cpu(cpu), &serial);
    }
}

fn set_cores(bitmask: &mut [u64], cores: &[u32]) {
    for c in cores {
        if let Some(w) = bitmask.get_mut((c / 64) as usize) {
            *w |= 1u64 << (c % 64);
        }
    }
}

/// Whether core `coreId` is set in a CPU's owned-core bitmask: 0 or 1, and 0 for a NULL
/// mask or a core past its end (libdcgm exports this helper of `dcgm_helpers.h`, which
/// pydcgm's `dcgmCpuHierarchyCpuOwnsCore` resolves).
///
/// # Safety
///
/// `ownedCores` must be NULL or point to a readable `dcgmCpuHierarchyOwnedCores_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmCpuHierarchyCpuOwnsCore(
    coreId: u32,
    ownedCores: *const dcgmCpuHierarchyOwnedCores_v1,
) -> u32 {
    // SAFETY: NULL or readable per this function's contract.
    let Some(mask) = (unsafe { ownedCores.as_ref() }) else {
        return 0;
    };
    mask.bitmask
        .get((coreId / 64) as usize)
        .map_or(0, |w| u32::from(w & (1u64 << (coreId % 64)) != 0))
}

/// # Safety
///
/// `cpuHierarchy` must be NULL or a versioned `dcgmCpuHierarchy_v1`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetCpuHierarchy(
    dcgmHandle: dcgmHandle_t,
    cpuHierarchy: *mut dcgmCpuHierarchy_v1,
) -> dcgmReturn_t {
    guard(|| {
        // SAFETY: per this function's contract.
        let h = unsafe { versioned(cpuHierarchy, &[dcgmCpuHierarchy_version1]) }?;
        with_engine(dcgmHandle, |e| {
            let cpus = &mut h.cpus;
            fill_cpus(&e.machine, &mut h.numCpus, |i, cpu, cores, _| {
                cpus[i].cpuId = cpu;
                cpus[i].ownedCores.version = dcgmCpuHierarchyOwnedCores_version1;
                set_cores(&mut cpus[i].ownedCores.bitmask, cores);
            });
            Ok(())
        })
    })
}

/// # Safety
///
/// `cpuHierarchy` must be NULL or a versioned `dcgmCpuHierarchy_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcgmGetCpuHierarchy_v2(
    dcgmHandle: dcgmHandle_t,
    cpuHierarchy: *mut dcgmCpuHierarchy_v2,
) -> dcgmReturn_t {
    guard_symbol("dcgmGetCpuHierarchy_v2", || {
        // SAFETY: per this function's contract.
        let h = unsafe { versioned(cpuHierarchy, &[dcgmCpuHierarchy_version2]) }?;
        with_engine(dcgmHandle, |e| {
            let cpus = &mut h.cpus;
            let blank = e.machine.cfg.faults.blank_structs;
            fill_cpus(&e.machine, &mut h.numCpus, |i, cpu, cores, serial| {
                cpus[i].cpuId = cpu;
                cpus[i].ownedCores.version = dcgmCpuHierarchyOwnedCores_version1;
                set_cores(&mut cpus[i].ownedCores.bitmask, cores);
                write_str(
                    &mut cpus[i].serial,
                    if blank { DCGM_STR_BLANK } else { serial },
                );
            });
            Ok(())
        })
    })
}
