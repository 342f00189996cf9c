//! MIG management on the simulator: `dcgmCreateMigEntity` / `dcgmDeleteMigEntity` change the
//! simulated driver's layout, and DCGM's view (hierarchy, entities, groups, watches) follows,
//! numbered as libdcgm 4.6.0 numbers it; every error the real library gives for these
//! requests. (The real library's answers for a GPU without MIG mode are in the differential
//! battery's `mig/*` cases.)

mod common;

use common::*;
use dcgm_sys::*;

/// GPU 0: an H200 with one configured 3g instance (one compute instance, where the configured
/// process runs); GPU 1: an H200 in MIG mode with no instance; GPU 2: an H200 without MIG.
const NODE: &str = r#"{"gpus":[
    {"model":"NVIDIA H200","memory_mib":143771,
     "mig":[{"profile":"3g.71gb","slices":3,"compute_instances":1}]},
    {"model":"NVIDIA H200","memory_mib":143771,"mig_mode":true},
    {"model":"NVIDIA H200","memory_mib":143771}],
  "nvswitches":0,"cpus":[],
  "processes":[{"pid":77,"gpus":[0],"memory_mib":1000}]}"#;

const GI: u32 = DcgmMigCreateGpuInstance;
const CI: u32 = DcgmMigCreateComputeInstance;
const DELAY: u32 = DCGM_MIG_RECONFIG_DELAY_PROCESSING;

fn create(h: dcgmHandle_t, parent: u32, profile: u32, option: u32, flags: u32) -> dcgmReturn_t {
    let mut c = dcgmCreateMigEntity_v1::new_versioned();
    (c.parentId, c.profile, c.createOption, c.flags) = (parent, profile, option, flags);
    // SAFETY: a versioned request.
    unsafe { lib().dcgmCreateMigEntity().unwrap()(h, &mut c) }
}

fn delete(h: dcgmHandle_t, group: u32, id: u32, flags: u32) -> dcgmReturn_t {
    let mut d = dcgmDeleteMigEntity_v1::new_versioned();
    (d.entityGroupId, d.entityId, d.flags) = (group, id, flags);
    // SAFETY: a versioned request.
    unsafe { lib().dcgmDeleteMigEntity().unwrap()(h, &mut d) }
}

/// One hierarchy entry: (group, id, parent id, NVML GI id, NVML CI id, NVML profile, slices).
type Entry = (u32, u32, u32, u32, u32, u32, u32);

fn hierarchy(h: dcgmHandle_t, gpu: u32) -> Vec<Entry> {
    let mut m = dcgmMigHierarchy_v2::boxed_versioned();
    // SAFETY: a versioned struct.
    let rc = unsafe { lib().dcgmGetGpuInstanceHierarchy().unwrap()(h, &mut *m) };
    assert_eq!(rc, DCGM_ST_OK);
    m.entityList[..m.count as usize]
        .iter()
        .filter(|e| e.info.nvmlGpuIndex == gpu)
        .map(|e| {
            let i = &e.info;
            (
                e.entity.entityGroupId,
                e.entity.entityId,
                e.parent.entityId,
                i.nvmlInstanceId,
                i.nvmlComputeInstanceId,
                i.nvmlMigProfileId,
                i.nvmlProfileSlices,
            )
        })
        .collect()
}

fn entities(h: dcgmHandle_t, group: u32) -> Vec<u32> {
    let mut ids = [0u32; 512];
    let mut n = ids.len() as i32;
    // SAFETY: room for `n` ids.
    let rc = unsafe {
        lib().dcgmGetEntityGroupEntities().unwrap()(h, group, ids.as_mut_ptr(), &mut n, 0)
    };
    assert_eq!(rc, DCGM_ST_OK);
    ids[..n as usize].to_vec()
}

/// Latest values (cached unless `live`) of fields of entities: (status, i64) each.
fn read(
    h: dcgmHandle_t,
    ents: &[(u32, u32)],
    fields: &[u16],
    live: bool,
) -> Result<Vec<(i32, i64)>, dcgmReturn_t> {
    let mut pairs: Vec<dcgmGroupEntityPair_t> = ents
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
    if rc != DCGM_ST_OK {
        return Err(rc);
    }
    // SAFETY: reading the integer member; only compared for integer fields.
    Ok(out
        .iter()
        .map(|v| (v.status, unsafe { v.value.i64_ }))
        .collect())
}

#[test]
fn create_watch_and_delete_gpu_and_compute_instances() {
    let (_s, h) = Session::embedded(Some(NODE), DCGM_OPERATION_MODE_MANUAL);
    let mig_mode = read(
        h,
        &[(DCGM_FE_GPU, 1), (DCGM_FE_GPU, 2)],
        &[DCGM_FI_DEV_MIG_MODE],
        true,
    )
    .unwrap();
    assert_eq!(mig_mode, vec![(DCGM_ST_OK, 1), (DCGM_ST_OK, 0)]);
    assert!(hierarchy(h, 1).is_empty());

    // A 3g.71gb instance: DCGM id 1 × 7 + 0, NVML profile id 9, 3 slices, NVML GI id 1.
    assert_eq!(
        create(h, 1, DcgmMigProfileGpuInstanceSlice3, GI, 0),
        DCGM_ST_OK
    );
    assert_eq!(
        hierarchy(h, 1),
        vec![(DCGM_FE_GPU_I, 7, 1, 1, u32::MAX, 9, 3)]
    );
    // A 1g.18gb instance comes first in NVML's profile order: DCGM renumbers the GPU.
    assert_eq!(
        create(h, 1, DcgmMigProfileGpuInstanceSlice1, GI, 0),
        DCGM_ST_OK
    );
    assert_eq!(
        hierarchy(h, 1),
        vec![
            (DCGM_FE_GPU_I, 7, 1, 2, u32::MAX, 19, 1),
            (DCGM_FE_GPU_I, 8, 1, 1, u32::MAX, 9, 3),
        ]
    );
    // A one-slice compute instance in the 3g one: the GPU's first, id 7.
    assert_eq!(
        create(h, 8, DcgmMigProfileComputeInstanceSlice1, CI, 0),
        DCGM_ST_OK
    );
    assert_eq!(
        hierarchy(h, 1)[2],
        (DCGM_FE_GPU_CI, 7, 8, 1, 0, 0, 1),
        "{:?}",
        hierarchy(h, 1)
    );
    assert!(entities(h, DCGM_FE_GPU_I).contains(&8));
    assert!(entities(h, DCGM_FE_GPU_CI).contains(&7));
    // The instance's name is its profile's.
    let gi_name_field = [DCGM_FI_DEV_GPU_NAME];
    let mut v = dcgmFieldValue_v2::new_versioned();
    let mut pair = dcgmGroupEntityPair_t {
        entityGroupId: DCGM_FE_GPU_I,
        entityId: 8,
    };
    let mut f = gi_name_field;
    // SAFETY: one entity, one field, one value.
    let rc = unsafe {
        lib().dcgmEntitiesGetLatestValues().unwrap()(
            h,
            &mut pair,
            1,
            f.as_mut_ptr(),
            1,
            DCGM_FV_FLAG_LIVE_DATA,
            &mut v,
        )
    };
    assert_eq!(rc, DCGM_ST_OK);
    // SAFETY: a string field.
    let name = unsafe { std::ffi::CStr::from_ptr(v.value.str_.as_ptr()) };
    assert_eq!(name.to_str().unwrap(), "3g.71gb");

    // Watch a field of the new instances through a group holding them.
    let mut g = 0;
    let n = std::ffi::CString::new("mig").unwrap();
    // SAFETY: valid pointers.
    unsafe { lib().dcgmGroupCreate().unwrap()(h, DCGM_GROUP_EMPTY, n.as_ptr(), &mut g) };
    for (group, id) in [(DCGM_FE_GPU_I, 8), (DCGM_FE_GPU_CI, 7)] {
        // SAFETY: plain arguments.
        let rc = unsafe { lib().dcgmGroupAddEntity().unwrap()(h, g, group, id) };
        assert_eq!(rc, DCGM_ST_OK);
    }
    let fg = field_group(h, "fb", &[DCGM_FI_DEV_FB_TOTAL]).unwrap();
    // SAFETY: plain arguments.
    let rc = unsafe { lib().dcgmWatchFields().unwrap()(h, g, fg, 100_000, 60.0, 0) };
    assert_eq!(rc, DCGM_ST_OK);
    // SAFETY: plain arguments.
    unsafe { lib().dcgmUpdateAllFields().unwrap()(h, 1) };
    let got = latest(h, g, fg).unwrap();
    assert_eq!(got.len(), 2);
    assert!(
        got.iter().all(|v| v.status == DCGM_ST_OK && v.i64_ > 0),
        "{got:?}"
    );

    // Delete: the compute instance, then its GPU instance, then the other.
    assert_eq!(
        delete(h, DCGM_FE_GPU_I, 8, 0),
        DCGM_ST_NVML_ERROR,
        "has a CI"
    );
    assert_eq!(delete(h, DCGM_FE_GPU_CI, 7, 0), DCGM_ST_OK);
    assert_eq!(hierarchy(h, 1).len(), 2);
    assert_eq!(delete(h, DCGM_FE_GPU_I, 8, 0), DCGM_ST_OK);
    assert_eq!(delete(h, DCGM_FE_GPU_I, 7, 0), DCGM_ST_OK);
    assert!(hierarchy(h, 1).is_empty());
    assert!(!entities(h, DCGM_FE_GPU_CI).contains(&7));
    // The deleted instances have nothing cached any more.
    let after = read(h, &[(DCGM_FE_GPU_I, 8)], &[DCGM_FI_DEV_FB_TOTAL], false).unwrap();
    assert_eq!(after[0].0, DCGM_ST_NOT_WATCHED);
    // GPU 0's configured instance kept its id throughout.
    assert_eq!(hierarchy(h, 0)[0].1, 0);
}

#[test]
fn requests_fail_as_the_real_library_does() {
    let (_s, h) = Session::embedded(Some(NODE), DCGM_OPERATION_MODE_MANUAL);
    let slice1 = DcgmMigProfileGpuInstanceSlice1;
    // Not in MIG mode, unknown GPU, a profile Hopper does not offer, a bad profile.
    assert_eq!(create(h, 2, slice1, GI, 0), DCGM_ST_NOT_SUPPORTED);
    assert_eq!(create(h, 99, slice1, GI, 0), DCGM_ST_BADPARAM);
    assert_eq!(
        create(h, 1, DcgmMigProfileGpuInstanceSlice8, GI, 0),
        DCGM_ST_NOT_SUPPORTED
    );
    assert_eq!(
        create(h, 1, DcgmMigProfileGpuInstanceSlice1GFX, GI, 0),
        DCGM_ST_BADPARAM
    );
    assert_eq!(
        create(h, 1, DcgmMigProfileComputeInstanceSlice1, GI, 0),
        DCGM_ST_BADPARAM
    );
    // Placements: a 3g at memory slices 0-3 leaves no room for a 4g or a 7g.
    assert_eq!(
        create(h, 1, DcgmMigProfileGpuInstanceSlice3, GI, 0),
        DCGM_ST_OK
    );
    for p in [
        DcgmMigProfileGpuInstanceSlice4,
        DcgmMigProfileGpuInstanceSlice7,
    ] {
        assert_eq!(create(h, 1, p, GI, 0), DCGM_ST_INSUFFICIENT_RESOURCES);
    }
    // One media-extension instance per GPU.
    let me = DcgmMigProfileGpuInstanceSlice1Rev1;
    assert_eq!(create(h, 1, me, GI, 0), DCGM_ST_OK);
    assert_eq!(create(h, 1, me, GI, 0), DCGM_ST_INSUFFICIENT_RESOURCES);
    let three = hierarchy(h, 1)
        .iter()
        .find(|e| e.6 == 3)
        .map(|e| e.1)
        .unwrap();
    // Compute instances: too big for the 3g, no room after a 1c and a 2c, unknown parent.
    assert_eq!(
        create(h, three, DcgmMigProfileComputeInstanceSlice4, CI, 0),
        DCGM_ST_NOT_SUPPORTED
    );
    let ci1 = DcgmMigProfileComputeInstanceSlice1;
    assert_eq!(create(h, three, ci1, CI, 0), DCGM_ST_OK);
    assert_eq!(
        create(h, three, DcgmMigProfileComputeInstanceSlice2, CI, 0),
        DCGM_ST_INSUFFICIENT_RESOURCES
    );
    assert_eq!(create(h, 100, ci1, CI, 0), DCGM_ST_BADPARAM);
    assert_eq!(create(h, three, 40, CI, 0), DCGM_ST_BADPARAM);
    // Deletions: unknown ids, ids past DCGM's maximum, another group, in use.
    assert_eq!(delete(h, DCGM_FE_GPU_I, 100, 0), DCGM_ST_INSTANCE_NOT_FOUND);
    assert_eq!(
        delete(h, DCGM_FE_GPU_CI, 100, 0),
        DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND
    );
    assert_eq!(
        delete(h, DCGM_FE_GPU_I, DCGM_MAX_INSTANCES as u32, 0),
        DCGM_ST_BADPARAM
    );
    assert_eq!(delete(h, DCGM_FE_GPU, 0, 0), DCGM_ST_BADPARAM);
    assert_eq!(delete(h, DCGM_FE_GPU_I, three, 0), DCGM_ST_NVML_ERROR);
    // GPU 0's configured compute instance runs the configured process.
    let (ci0, gi0) = (hierarchy(h, 0)[1].1, hierarchy(h, 0)[0].1);
    assert_eq!(delete(h, DCGM_FE_GPU_CI, ci0, 0), DCGM_ST_NVML_ERROR);
    assert_eq!(delete(h, DCGM_FE_GPU_I, gi0, 0), DCGM_ST_NVML_ERROR);
    // An unknown create option is accepted and does nothing, as in libdcgm.
    let before = hierarchy(h, 1);
    assert_eq!(create(h, 1, slice1, 7, 0), DCGM_ST_OK);
    assert_eq!(hierarchy(h, 1), before);
    // A wrong version word.
    let mut c = dcgmCreateMigEntity_v1::new_versioned();
    c.version = (c.version & 0x00ff_ffff) | (9 << 24);
    // SAFETY: a request struct (with a wrong version).
    let rc = unsafe { lib().dcgmCreateMigEntity().unwrap()(h, &mut c) };
    assert_eq!(rc, DCGM_ST_VER_MISMATCH);
}

#[test]
fn the_delay_flag_keeps_dcgms_view_until_a_request_without_it() {
    let (_s, h) = Session::embedded(Some(NODE), DCGM_OPERATION_MODE_MANUAL);
    let slice1 = DcgmMigProfileGpuInstanceSlice1;
    assert_eq!(create(h, 1, slice1, GI, DELAY), DCGM_ST_OK);
    assert_eq!(create(h, 1, slice1, GI, DELAY), DCGM_ST_OK);
    assert!(hierarchy(h, 1).is_empty(), "not re-read yet");
    assert_eq!(create(h, 1, slice1, GI, 0), DCGM_ST_OK);
    let ids: Vec<u32> = hierarchy(h, 1).iter().map(|e| e.1).collect();
    assert_eq!(ids, vec![7, 8, 9]);
    // Deleting under the flag keeps the other ids as they were.
    assert_eq!(delete(h, DCGM_FE_GPU_I, 7, DELAY), DCGM_ST_OK);
    assert_eq!(delete(h, DCGM_FE_GPU_I, 8, DELAY), DCGM_ST_OK);
    assert_eq!(hierarchy(h, 1).len(), 3);
    // Gone from the driver already: NVML refuses the stale handle.
    assert_eq!(delete(h, DCGM_FE_GPU_I, 7, 0), DCGM_ST_BADPARAM);
    assert_eq!(delete(h, DCGM_FE_GPU_I, 9, 0), DCGM_ST_OK);
    assert!(hierarchy(h, 1).is_empty());
}

#[test]
fn an_unknown_field_fails_a_cached_read_and_marks_a_live_one() {
    let (_s, h) = Session::embedded(Some(NODE), DCGM_OPERATION_MODE_MANUAL);
    let fields = [DCGM_FI_DEV_GPU_TEMP_CELSIUS, 60_000];
    assert_eq!(
        read(h, &[(DCGM_FE_GPU, 0)], &fields, false),
        Err(DCGM_ST_GENERIC_ERROR)
    );
    let live = read(h, &[(DCGM_FE_GPU, 0)], &fields, true).unwrap();
    assert_eq!(live[0].0, DCGM_ST_OK);
    assert_eq!(live[1].0, DCGM_ST_UNKNOWN_FIELD);
}
