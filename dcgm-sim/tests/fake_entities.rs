//! Fake CPUs, CPU cores and MIG instances on the simulator, and what reads of them answer, as
//! libdcgm 4.6.0 answers (its sysmon module and cache manager; recorded with DCGM's injection
//! NVML and NVIDIA's own test suite, `tests.test_sysmon` and `tests.test_instances`).

mod common;

use common::*;
use dcgm_sys::*;

/// Creates `n` fake entities of `group` under `parent`; the return code and the new ids.
fn fake(h: dcgmHandle_t, group: u32, parent: Option<(u32, u32)>, n: u32) -> (i32, Vec<u32>) {
    let mut c = dcgmCreateFakeEntities_v2::boxed_versioned();
    c.numToCreate = n;
    for e in c.entityList.iter_mut().take(n as usize) {
        e.entity.entityGroupId = group;
        if let Some((pg, pid)) = parent {
            e.parent.entityGroupId = pg;
            e.parent.entityId = pid;
        }
    }
    // SAFETY: a versioned request.
    let rc = unsafe { lib().dcgmCreateFakeEntities().unwrap()(h, &mut *c) };
    let ids = c.entityList[..c.numToCreate as usize]
        .iter()
        .map(|e| e.entity.entityId)
        .collect();
    (rc, ids)
}

/// One value of `dcgmEntitiesGetLatestValues`: (status, i64, dbl, string).
type Value = (i32, i64, f64, String);

fn values(h: dcgmHandle_t, entities: &[(u32, u32)], fields: &[u16], live: bool) -> Vec<Value> {
    let mut pairs: Vec<dcgmGroupEntityPair_t> = entities
        .iter()
        .map(|&(group, id)| dcgmGroupEntityPair_t {
            entityGroupId: group,
            entityId: id,
        })
        .collect();
    let mut ids = fields.to_vec();
    let mut out: Vec<dcgmFieldValue_v2> = (0..pairs.len() * ids.len()).map(|_| zeroed()).collect();
    let flags = if live { DCGM_FV_FLAG_LIVE_DATA } else { 0 };
    // SAFETY: counts match the buffers.
    let rc = unsafe {
        lib().dcgmEntitiesGetLatestValues().unwrap()(
            h,
            pairs.as_mut_ptr(),
            pairs.len() as u32,
            ids.as_mut_ptr(),
            ids.len() as u32,
            flags,
            out.as_mut_ptr(),
        )
    };
    assert_eq!(rc, DCGM_ST_OK);
    out.iter()
        .map(|v| {
            // SAFETY: plain-data union members, and a NUL-terminated string member.
            unsafe {
                let s = std::ffi::CStr::from_ptr(v.value.str_.as_ptr());
                (
                    v.status,
                    v.value.i64_,
                    v.value.dbl,
                    s.to_string_lossy().into_owned(),
                )
            }
        })
        .collect()
}

fn group_of(h: dcgmHandle_t, entities: &[(u32, u32)]) -> dcgmGpuGrp_t {
    let mut g = 0;
    let n = std::ffi::CString::new("fakes").unwrap();
    // SAFETY: valid pointers.
    let rc = unsafe { lib().dcgmGroupCreate().unwrap()(h, DCGM_GROUP_EMPTY, n.as_ptr(), &mut g) };
    assert_eq!(rc, DCGM_ST_OK);
    for &(group, id) in entities {
        // SAFETY: plain arguments.
        let rc = unsafe { lib().dcgmGroupAddEntity().unwrap()(h, g, group, id) };
        assert_eq!(rc, DCGM_ST_OK);
    }
    g
}

fn inject(h: dcgmHandle_t, group: u32, id: u32, field: u16, ty: u8, i: i64, d: f64) -> i32 {
    let mut v = dcgmInjectFieldValue_v1::new_versioned();
    v.fieldId = field;
    v.fieldType = u16::from(ty);
    v.ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    if ty == DCGM_FT_DOUBLE {
        v.value.dbl = d;
    } else {
        v.value.i64_ = i;
    }
    // SAFETY: a versioned value.
    unsafe { lib().dcgmInjectEntityFieldValue().unwrap()(h, group, id, &mut v) }
}

fn owns(core: u32, mask: &dcgmCpuHierarchyOwnedCores_v1) -> bool {
    // SAFETY: a readable mask.
    unsafe { lib().dcgmCpuHierarchyCpuOwnsCore().unwrap()(core, mask) != 0 }
}

#[test]
fn fake_cpus_own_fake_cores_and_serve_injected_values() {
    // The default node: two sockets of 56 cores (ids 0-111).
    let (_s, h) = Session::embedded(None, DCGM_OPERATION_MODE_AUTO);
    let (rc, cpus) = fake(h, DCGM_FE_CPU, None, 1);
    assert_eq!((rc, cpus.as_slice()), (DCGM_ST_OK, &[2][..]));
    let (rc, cores) = fake(h, DCGM_FE_CPU_CORE, Some((DCGM_FE_CPU, 2)), 2);
    assert_eq!((rc, cores.as_slice()), (DCGM_ST_OK, &[112, 113][..]));
    // Only a fake CPU takes fake cores, and only a CPU is a core's parent.
    let (rc, _) = fake(h, DCGM_FE_CPU_CORE, Some((DCGM_FE_CPU, 0)), 1);
    assert_eq!(rc, DCGM_ST_INSUFFICIENT_RESOURCES);
    let (rc, _) = fake(h, DCGM_FE_CPU_CORE, Some((DCGM_FE_GPU, 0)), 1);
    assert_eq!(rc, DCGM_ST_BADPARAM);

    let mut hier = dcgmCpuHierarchy_v2::boxed_versioned();
    // SAFETY: a versioned struct.
    let rc = unsafe { lib().dcgmGetCpuHierarchy_v2().unwrap()(h, &mut *hier) };
    assert_eq!((rc, hier.numCpus), (DCGM_ST_OK, 3));
    let fake_cpu = &hier.cpus[2];
    assert_eq!(fake_cpu.cpuId, 2);
    let owned: Vec<u32> = (0..1024)
        .filter(|c| owns(*c, &fake_cpu.ownedCores))
        .collect();
    assert_eq!(owned, [112, 113]);
    let first: Vec<u32> = (0..1024)
        .filter(|c| owns(*c, &hier.cpus[0].ownedCores))
        .collect();
    assert_eq!(first, (0..56).collect::<Vec<_>>());

    // An injected reading of a fake core is what a read of it gives.
    let g = group_of(h, &[(DCGM_FE_CPU_CORE, 112)]);
    let fg = field_group(h, "util", &[DCGM_FI_DEV_CPU_UTIL_USER]).unwrap();
    assert_eq!(watch(h, g, fg, 1_000_000, 3600.0, 0), DCGM_ST_OK);
    let user = DCGM_FI_DEV_CPU_UTIL_USER;
    assert_eq!(
        inject(h, DCGM_FE_CPU_CORE, 112, user, DCGM_FT_DOUBLE, 0, 65.0),
        DCGM_ST_OK
    );
    let v = values(h, &[(DCGM_FE_CPU_CORE, 112)], &[user], false);
    assert_eq!((v[0].0, v[0].2), (DCGM_ST_OK, 65.0));
}

#[test]
fn a_node_without_cpus_has_no_sysmon_module() {
    let (_s, h) = Session::embedded(Some(r#"{"cpus":[]}"#), DCGM_OPERATION_MODE_AUTO);
    assert_eq!(fake(h, DCGM_FE_CPU, None, 1).0, DCGM_ST_MODULE_NOT_LOADED);
}

#[test]
fn a_cpus_utilisation_is_the_mean_of_its_cores() {
    let (_s, h) = Session::embedded(None, DCGM_OPERATION_MODE_AUTO);
    let mut entities = vec![(DCGM_FE_CPU, 1)];
    entities.extend((56..112).map(|c| (DCGM_FE_CPU_CORE, c)));
    for field in [DCGM_FI_DEV_CPU_UTIL_TOTAL, DCGM_FI_DEV_CPU_UTIL_USER] {
        // One live read: every value at the same time.
        let v = values(h, &entities, &[field], true);
        assert!(v.iter().all(|x| x.0 == DCGM_ST_OK));
        let mean = v[1..].iter().map(|x| x.2).sum::<f64>() / 56.0;
        assert!((v[0].2 - mean).abs() < 1e-12, "{} != {mean}", v[0].2);
    }
}

#[test]
fn owns_core_reads_the_bitmask_and_refuses_what_is_outside_it() {
    let mut mask: dcgmCpuHierarchyOwnedCores_v1 = zeroed();
    mask.bitmask[0] = 0b101;
    mask.bitmask[15] = 1 << 63;
    let got: Vec<u32> = (0..1100).filter(|c| owns(*c, &mask)).collect();
    assert_eq!(got, [0, 2, 1023]);
    // SAFETY: NULL is allowed.
    let null = unsafe { lib().dcgmCpuHierarchyCpuOwnsCore().unwrap()(0, std::ptr::null()) };
    assert_eq!(null, 0);
}

#[test]
fn a_global_value_injected_for_the_node_reads_on_every_entity() {
    // The default node's GPU 7 is in MIG mode: GPU instance 0, compute instance 0.
    let (_s, h) = Session::embedded(None, DCGM_OPERATION_MODE_MANUAL);
    let count = DCGM_FI_SYSTEM_GPU_QUANTITY;
    assert_eq!(
        inject(h, DCGM_FE_NONE, 0, count, DCGM_FT_INT64, 42, 0.0),
        DCGM_ST_OK
    );
    let entities = [(DCGM_FE_GPU, 7), (DCGM_FE_GPU_I, 0), (DCGM_FE_GPU_CI, 0)];
    for v in values(h, &entities, &[count], false) {
        assert_eq!((v.0, v.1), (DCGM_ST_OK, 42));
    }
}

#[test]
fn fake_instances_carry_dcgms_fake_profile_names() {
    let (_s, h) = Session::embedded(None, DCGM_OPERATION_MODE_AUTO);
    let (_, gpu) = fake(h, DCGM_FE_GPU, None, 1);
    let (_, gi) = fake(h, DCGM_FE_GPU_I, Some((DCGM_FE_GPU, gpu[0])), 1);
    let (_, ci) = fake(h, DCGM_FE_GPU_CI, Some((DCGM_FE_GPU_I, gi[0])), 1);
    let name = DCGM_FI_DEV_GPU_NAME;
    let v = values(
        h,
        &[(DCGM_FE_GPU_I, gi[0]), (DCGM_FE_GPU_CI, ci[0])],
        &[name],
        true,
    );
    assert_eq!(v[0].3, "1fg.4gb");
    assert_eq!(v[1].3, "1fc.1g.4gb");
    // A configured compute instance reports its GPU instance's profile, as DCGM names it.
    let v = values(h, &[(DCGM_FE_GPU_CI, 0)], &[name], true);
    assert_eq!(v[0].3, "3g.40gb");
}

#[test]
fn instances_of_a_fake_gpu_have_no_gpu_level_samples() {
    let (_s, h) = Session::embedded(None, DCGM_OPERATION_MODE_MANUAL);
    let (_, gpu) = fake(h, DCGM_FE_GPU, None, 1);
    let (_, gi) = fake(h, DCGM_FE_GPU_I, Some((DCGM_FE_GPU, gpu[0])), 1);
    let (_, ci) = fake(h, DCGM_FE_GPU_CI, Some((DCGM_FE_GPU_I, gi[0])), 1);
    let entities = [(DCGM_FE_GPU_I, gi[0]), (DCGM_FE_GPU_CI, ci[0])];
    let dbe = DCGM_FI_DEV_ECC_DBE_VOL_TOTAL;
    let g = group_of(h, &entities);
    let fg = field_group(h, "dbe", &[dbe]).unwrap();
    assert_eq!(watch(h, g, fg, 100_000, 60.0, 0), DCGM_ST_OK);
    update(h);
    for v in values(h, &entities, &[dbe], false) {
        assert_eq!(v.0, DCGM_ST_NO_DATA);
    }
    for v in values(h, &entities, &[dbe], true) {
        assert_eq!((v.0, v.1), (DCGM_ST_OK, DCGM_INT64_BLANK));
    }
}
