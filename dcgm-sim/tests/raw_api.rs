//! The simulator driven through `dcgm-sys`, the way a C client drives libdcgm.

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::{CStr, CString, c_int};

use common::*;
use dcgm_sys::*;

const MANUAL: dcgmOperationMode_t = DCGM_OPERATION_MODE_MANUAL;
const AUTO: dcgmOperationMode_t = DCGM_OPERATION_MODE_AUTO;

fn group_with(h: dcgmHandle_t, name: &str, ents: &[(u32, u32)]) -> dcgmGpuGrp_t {
    let n = CString::new(name).unwrap();
    let mut g = 0;
    // SAFETY: valid pointers.
    let rc = unsafe { lib().dcgmGroupCreate().unwrap()(h, DCGM_GROUP_EMPTY, n.as_ptr(), &mut g) };
    assert_eq!(rc, DCGM_ST_OK);
    for &(eg, id) in ents {
        // SAFETY: plain arguments.
        let rc = unsafe { lib().dcgmGroupAddEntity().unwrap()(h, g, eg, id) };
        assert_eq!(rc, DCGM_ST_OK, "add {eg}/{id}");
    }
    g
}

#[test]
fn calls_before_init_return_uninitialized() {
    let _s = Session::new(None);
    let mut h = 0;
    // SAFETY: `h` is writable.
    let rc = unsafe { lib().dcgmStartEmbedded().unwrap()(AUTO, &mut h) };
    assert_eq!(rc, DCGM_ST_UNINITIALIZED);
    let mut ids = [0u32; 32];
    let mut n: c_int = 0;
    // SAFETY: buffers of the documented size.
    let rc = unsafe {
        lib().dcgmGetAllDevices().unwrap()(DCGM_EMBEDDED_HANDLE, ids.as_mut_ptr(), &mut n)
    };
    assert_eq!(rc, DCGM_ST_UNINITIALIZED);
}

#[test]
fn embedded_start_returns_the_embedded_handle_and_lists_eight_gpus() {
    let (_s, h) = Session::embedded(None, AUTO);
    assert_eq!(h, DCGM_EMBEDDED_HANDLE);
    let mut ids = [0u32; 32];
    let mut n: c_int = 0;
    // SAFETY: buffers of the documented size.
    let rc = unsafe { lib().dcgmGetAllDevices().unwrap()(h, ids.as_mut_ptr(), &mut n) };
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(&ids[..n as usize], &[0, 1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn entity_groups_follow_the_default_node() {
    let (_s, h) = Session::embedded(None, AUTO);
    let count = |eg: u32| -> Vec<u32> {
        let mut buf = [0u32; 4096];
        let mut n: c_int = buf.len() as c_int;
        // SAFETY: `buf` has `n` slots.
        let rc = unsafe {
            lib().dcgmGetEntityGroupEntities().unwrap()(h, eg, buf.as_mut_ptr(), &mut n, 0)
        };
        assert_eq!(rc, DCGM_ST_OK, "group {eg}");
        buf[..n as usize].to_vec()
    };
    assert_eq!(count(DCGM_FE_GPU).len(), 8);
    assert_eq!(count(DCGM_FE_GPU_I), vec![0, 1, 2]);
    assert_eq!(count(DCGM_FE_GPU_CI).len(), 4);
    assert_eq!(count(DCGM_FE_SWITCH).len(), 4);
    assert_eq!(count(DCGM_FE_CPU).len(), 2);
    assert_eq!(count(DCGM_FE_CPU_CORE).len(), 112);
    let links = count(DCGM_FE_LINK);
    let l = dcgm_link_t::from_raw(links[0]);
    assert_eq!(l.type_(), DCGM_FE_GPU);
    assert_eq!(links.len(), 8 * 18 + 4 * 64);

    // Too small a buffer: the needed count comes back with INSUFFICIENT_SIZE.
    let mut small = [0u32; 2];
    let mut n: c_int = 2;
    // SAFETY: `small` has `n` slots.
    let rc = unsafe {
        lib().dcgmGetEntityGroupEntities().unwrap()(h, DCGM_FE_GPU, small.as_mut_ptr(), &mut n, 0)
    };
    assert_eq!(rc, DCGM_ST_INSUFFICIENT_SIZE);
    assert_eq!(n, 8);
}

#[test]
fn device_attributes_carry_unique_identities() {
    let (_s, h) = Session::embedded(None, AUTO);
    let mut uuids = std::collections::HashSet::new();
    for gpu in 0..8 {
        let mut a = dcgmDeviceAttributes_v3::boxed_versioned();
        // SAFETY: a versioned attributes struct.
        let rc = unsafe { lib().dcgmGetDeviceAttributes().unwrap()(h, gpu, &mut *a) };
        assert_eq!(rc, DCGM_ST_OK);
        // SAFETY: NUL-terminated by the simulator.
        let uuid = unsafe { CStr::from_ptr(a.identifiers.uuid.as_ptr()) }
            .to_str()
            .unwrap()
            .to_owned();
        assert!(uuid.starts_with("GPU-"), "{uuid}");
        assert!(uuids.insert(uuid));
        // SAFETY: as above.
        let name = unsafe { CStr::from_ptr(a.identifiers.deviceName.as_ptr()) }
            .to_str()
            .unwrap();
        assert!(name.contains("H100"));
        assert_eq!(a.powerLimits.curPowerLimit, 700);
        assert_eq!(a.settings.migModeEnabled, u32::from(gpu == 7));
    }
    let mut a = dcgmDeviceAttributes_v3::boxed_versioned();
    // SAFETY: as above.
    let rc = unsafe { lib().dcgmGetDeviceAttributes().unwrap()(h, 99, &mut *a) };
    // As libdcgm 4.6.0: success with empty identifiers for an unknown GPU.
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(a.identifiers.uuid[0], 0);
}

#[test]
fn wrong_struct_version_is_a_version_mismatch() {
    let (_s, h) = Session::embedded(None, AUTO);
    let mut a = dcgmDeviceAttributes_v3::boxed_versioned();
    a.version = make_version(size_of::<dcgmDeviceAttributes_v3>(), 2);
    // SAFETY: a (deliberately mis-versioned) attributes struct of the right size.
    let rc = unsafe { lib().dcgmGetDeviceAttributes().unwrap()(h, 0, &mut *a) };
    assert_eq!(rc, DCGM_ST_VER_MISMATCH);
    let mut info = dcgmGroupInfo_v3::boxed_versioned();
    info.version = dcgmGroupInfo_version2;
    // SAFETY: as above.
    let rc = unsafe { lib().dcgmGroupGetInfo().unwrap()(h, DCGM_GROUP_ALL_GPUS, &mut *info) };
    assert_eq!(rc, DCGM_ST_VER_MISMATCH);
}

#[test]
fn groups_add_remove_and_report_their_entities() {
    let (_s, h) = Session::embedded(None, AUTO);
    let g = group_with(h, "mine", &[(DCGM_FE_GPU, 1), (DCGM_FE_GPU_I, 0)]);
    // Adding the same entity twice, or one that does not exist, is a bad parameter.
    // SAFETY: plain arguments.
    unsafe {
        assert_eq!(
            lib().dcgmGroupAddDevice().unwrap()(h, g, 1),
            DCGM_ST_BADPARAM
        );
        assert_eq!(
            lib().dcgmGroupAddDevice().unwrap()(h, g, 42),
            DCGM_ST_BADPARAM
        );
        assert_eq!(lib().dcgmGroupRemoveDevice().unwrap()(h, g, 1), DCGM_ST_OK);
        assert_eq!(
            lib().dcgmGroupRemoveDevice().unwrap()(h, g, 1),
            DCGM_ST_BADPARAM
        );
        assert_eq!(
            lib().dcgmGroupAddDevice().unwrap()(h, 999, 0),
            DCGM_ST_NOT_CONFIGURED
        );
    }
    let mut info = dcgmGroupInfo_v3::boxed_versioned();
    // SAFETY: a versioned group info.
    assert_eq!(
        unsafe { lib().dcgmGroupGetInfo().unwrap()(h, g, &mut *info) },
        DCGM_ST_OK
    );
    assert_eq!(info.count, 1);
    assert_eq!(info.entityList[0].entityGroupId, DCGM_FE_GPU_I);
    // SAFETY: NUL-terminated.
    assert_eq!(
        unsafe { CStr::from_ptr(info.groupName.as_ptr()) }
            .to_str()
            .unwrap(),
        "mine"
    );
    // SAFETY: plain arguments.
    assert_eq!(
        unsafe { lib().dcgmGroupDestroy().unwrap()(h, g) },
        DCGM_ST_OK
    );
    // SAFETY: plain arguments.
    assert_eq!(
        unsafe { lib().dcgmGroupDestroy().unwrap()(h, g) },
        DCGM_ST_NOT_CONFIGURED
    );
}

#[test]
fn group_sixty_three_hits_the_limit() {
    let (_s, h) = Session::embedded(None, AUTO);
    // 64 groups in all, of which libdcgm 4.6.0 keeps two for itself (all GPUs, all
    // NvSwitches): a client can create 62.
    for i in 0..62 {
        group_with(h, &format!("g{i}"), &[]);
    }
    let n = CString::new("one-too-many").unwrap();
    let mut g = 0;
    // SAFETY: valid pointers.
    let rc = unsafe { lib().dcgmGroupCreate().unwrap()(h, DCGM_GROUP_EMPTY, n.as_ptr(), &mut g) };
    assert_eq!(rc, DCGM_ST_MAX_LIMIT);
    let mut ids = [0usize; 64];
    let mut count = 0u32;
    // SAFETY: room for 64 ids.
    assert_eq!(
        unsafe { lib().dcgmGroupGetAllIds().unwrap()(h, ids.as_mut_ptr(), &mut count) },
        DCGM_ST_OK
    );
    assert_eq!(count, 62);
}

#[test]
fn field_groups_enforce_names_limits_and_known_ids() {
    let (_s, h) = Session::embedded(None, AUTO);
    let fg = field_group(h, "temps", &[DCGM_FI_DEV_GPU_TEMP_CELSIUS]).unwrap();
    assert_eq!(
        field_group(h, "temps", &[DCGM_FI_DEV_GPU_TEMP_CELSIUS]),
        Err(DCGM_ST_DUPLICATE_KEY)
    );
    assert_eq!(field_group(h, "bad", &[9999]), Err(DCGM_ST_BADPARAM));
    let many: Vec<u16> = FIELD_TABLE.iter().take(128).map(|f| f.id).collect();
    assert_eq!(field_group(h, "too-many", &many), Err(DCGM_ST_BADPARAM));
    assert!(field_group(h, "just-enough", &many[..127]).is_ok());
    let mut info = dcgmFieldGroupInfo_v1::new_versioned();
    info.fieldGroupId = fg;
    // SAFETY: a versioned info struct.
    assert_eq!(
        unsafe { lib().dcgmFieldGroupGetInfo().unwrap()(h, &mut info) },
        DCGM_ST_OK
    );
    assert_eq!(info.numFieldIds, 1);
    assert_eq!(info.fieldIds[0], DCGM_FI_DEV_GPU_TEMP_CELSIUS);
    // 64 field groups in all, of which libdcgm 4.6.0 keeps three for itself: a client can
    // create 61.
    for i in 2..61 {
        field_group(h, &format!("fg{i}"), &[DCGM_FI_DEV_SM_CLOCK]).unwrap();
    }
    assert_eq!(
        field_group(h, "fg61", &[DCGM_FI_DEV_SM_CLOCK]),
        Err(DCGM_ST_MAX_LIMIT)
    );
    let mut all = dcgmAllFieldGroup_v1::boxed_versioned();
    // SAFETY: a versioned struct.
    assert_eq!(
        unsafe { lib().dcgmFieldGroupGetAll().unwrap()(h, &mut *all) },
        DCGM_ST_OK
    );
    assert_eq!(all.numFieldGroups, 61);
}

#[test]
fn values_are_not_watched_then_sampled_by_the_first_watch_and_plausible() {
    let (_s, h) = Session::embedded(None, MANUAL);
    let fields = [
        DCGM_FI_DEV_GPU_TEMP_CELSIUS,
        DCGM_FI_DEV_BOARD_POWER_WATTS,
        DCGM_FI_DEV_GPU_UTIL_RATIO,
        DCGM_FI_DEV_GPU_UUID,
        DCGM_FI_DEV_FB_USED,
    ];
    let fg = field_group(h, "f", &fields).unwrap();
    let vals = latest(h, DCGM_GROUP_ALL_GPUS, fg).unwrap();
    assert_eq!(vals.len(), 40);
    assert!(vals.iter().all(|v| v.status == DCGM_ST_NOT_WATCHED));

    assert_eq!(
        watch(h, DCGM_GROUP_ALL_GPUS, fg, 100_000, 60.0, 0),
        DCGM_ST_OK
    );
    // As libdcgm 4.6.0, even in manual mode: a group watch that starts watching a field
    // samples it at once.
    let vals = latest(h, DCGM_GROUP_ALL_GPUS, fg).unwrap();
    assert!(
        vals.iter().all(|v| v.status == DCGM_ST_OK),
        "the first watch samples"
    );

    update(h);
    let vals = latest_gpu(h, DCGM_GROUP_ALL_GPUS, fg).unwrap();
    assert_eq!(vals.len(), 40);
    for v in &vals {
        assert_eq!(v.status, DCGM_ST_OK);
        assert!(v.ts > 1_600_000_000_000_000);
        match v.field {
            DCGM_FI_DEV_GPU_TEMP_CELSIUS => assert!((20..100).contains(&v.i64_), "{v:?}"),
            DCGM_FI_DEV_BOARD_POWER_WATTS => {
                assert_eq!(v.field_type, DCGM_FT_DOUBLE);
                assert!(v.dbl > 50.0 && v.dbl <= 700.0, "{v:?}");
            }
            DCGM_FI_DEV_GPU_UTIL_RATIO => assert!((0..=100).contains(&v.i64_)),
            DCGM_FI_DEV_GPU_UUID => assert!(v.text.starts_with("GPU-")),
            DCGM_FI_DEV_FB_USED => assert!(v.i64_ > 0),
            _ => unreachable!(),
        }
    }
}

#[test]
fn gpu_only_read_rejects_a_group_with_mig_instances() {
    let (_s, h) = Session::embedded(None, MANUAL);
    let g = group_with(h, "mixed", &[(DCGM_FE_GPU, 0), (DCGM_FE_GPU_I, 1)]);
    let fg = field_group(h, "f", &[DCGM_FI_DEV_FB_USED]).unwrap();
    assert_eq!(latest_gpu(h, g, fg).unwrap_err(), DCGM_ST_NOT_SUPPORTED);
    assert_eq!(watch(h, g, fg, 100_000, 60.0, 0), DCGM_ST_OK);
    update(h);
    let vals = latest(h, g, fg).unwrap();
    assert_eq!(vals.len(), 2);
    let gpu = vals.iter().find(|v| v.group == DCGM_FE_GPU).unwrap();
    let mig = vals.iter().find(|v| v.group == DCGM_FE_GPU_I).unwrap();
    assert!(
        mig.i64_ > 0 && mig.i64_ < gpu.i64_,
        "a MIG instance uses part of its GPU's memory"
    );
}

#[test]
fn values_since_lose_and_repeat_nothing() {
    let (_s, h) = Session::embedded(None, MANUAL);
    let fg = field_group(
        h,
        "f",
        &[
            DCGM_FI_DEV_GPU_TEMP_CELSIUS,
            DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION,
        ],
    )
    .unwrap();
    assert_eq!(
        watch(h, DCGM_GROUP_ALL_GPUS, fg, 1_000, 3600.0, 0),
        DCGM_ST_OK
    );
    let mut cursor = 0;
    let mut seen = std::collections::HashSet::new();
    let mut total = 0;
    for round in 0..5 {
        for _ in 0..round + 1 {
            update(h);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let (mut vals, next) = since(h, DCGM_GROUP_ALL_GPUS, fg, cursor).unwrap();
        vals.retain(|v| v.status != DCGM_ST_NO_DATA);
        assert_eq!(
            vals.len(),
            (round + 1) * 16,
            "round {round}: every update, every GPU, both fields"
        );
        for v in &vals {
            assert!(seen.insert((v.id, v.field, v.ts)), "repeated sample {v:?}");
        }
        total += vals.len();
        assert!(next > cursor);
        cursor = next;
    }
    assert_eq!(total, 15 * 16);
    // Nothing new: one NO_DATA record per (GPU, field), as libdcgm 4.6.0 answers.
    let (vals, next) = since(h, DCGM_GROUP_ALL_GPUS, fg, cursor).unwrap();
    assert_eq!(vals.len(), 16);
    assert!(vals.iter().all(|v| v.status == DCGM_ST_NO_DATA));
    assert_eq!(next, cursor);
}

#[test]
fn energy_is_monotonic_and_auto_mode_samples_on_schedule() {
    let (_s, h) = Session::embedded(None, AUTO);
    let fg = field_group(h, "e", &[DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION]).unwrap();
    assert_eq!(
        watch(h, DCGM_GROUP_ALL_GPUS, fg, 5_000, 3600.0, 0),
        DCGM_ST_OK
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut vals = Vec::new();
    while std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
        vals = since(h, DCGM_GROUP_ALL_GPUS, fg, 0).unwrap().0;
        if vals.iter().filter(|v| v.id == 0).count() >= 4 {
            break;
        }
    }
    let gpu0: Vec<&Got> = vals.iter().filter(|v| v.id == 0).collect();
    assert!(
        gpu0.len() >= 4,
        "AUTO mode takes samples by itself: {}",
        gpu0.len()
    );
    for w in gpu0.windows(2) {
        assert!(w[1].ts > w[0].ts);
        assert!(w[1].i64_ > w[0].i64_, "energy never decreases");
    }
}

#[test]
fn max_keep_samples_bounds_what_is_kept() {
    let (_s, h) = Session::embedded(None, MANUAL);
    let fg = field_group(h, "f", &[DCGM_FI_DEV_SM_CLOCK]).unwrap();
    assert_eq!(
        watch(h, DCGM_GROUP_ALL_GPUS, fg, 1_000, 3600.0, 3),
        DCGM_ST_OK
    );
    for _ in 0..6 {
        update(h);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let (vals, _) = since(h, DCGM_GROUP_ALL_GPUS, fg, 0).unwrap();
    assert_eq!(vals.iter().filter(|v| v.id == 3).count(), 3);
}

#[test]
fn entities_read_covers_every_entity_kind_and_marks_missing_ones() {
    let (_s, h) = Session::embedded(None, MANUAL);
    let ents = [
        (DCGM_FE_GPU, 0, DCGM_FI_DEV_GPU_TEMP_CELSIUS),
        (DCGM_FE_GPU_I, 0, DCGM_FI_DEV_FB_TOTAL),
        (DCGM_FE_GPU_CI, 1, DCGM_FI_PROF_SM_UTIL_RATIO),
        (DCGM_FE_SWITCH, 2, DCGM_FI_DEV_NVSWITCH_TEMP_CELSIUS),
        (DCGM_FE_CPU, 1, DCGM_FI_DEV_CPU_TEMP_CELSIUS),
        (DCGM_FE_CPU_CORE, 5, DCGM_FI_DEV_CPU_UTIL_TOTAL),
    ];
    for (i, (eg, id, f)) in ents.iter().enumerate() {
        let g = group_with(h, &format!("g{i}"), &[(*eg, *id)]);
        let fg = field_group(h, &format!("f{i}"), &[*f]).unwrap();
        assert_eq!(watch(h, g, fg, 100_000, 60.0, 0), DCGM_ST_OK);
    }
    update(h);
    let pairs: Vec<dcgmGroupEntityPair_t> = ents
        .iter()
        .map(|(eg, id, _)| dcgmGroupEntityPair_t {
            entityGroupId: *eg,
            entityId: *id,
        })
        .chain([dcgmGroupEntityPair_t {
            entityGroupId: DCGM_FE_GPU,
            entityId: 77,
        }])
        .collect();
    let mut fields: Vec<u16> = ents.iter().map(|e| e.2).collect();
    let mut out: Vec<dcgmFieldValue_v2> =
        (0..pairs.len() * fields.len()).map(|_| zeroed()).collect();
    // SAFETY: arrays of the sizes passed.
    let rc = unsafe {
        lib().dcgmEntitiesGetLatestValues().unwrap()(
            h,
            pairs.as_ptr() as *mut _,
            pairs.len() as u32,
            fields.as_mut_ptr(),
            fields.len() as u32,
            0,
            out.as_mut_ptr(),
        )
    };
    assert_eq!(rc, DCGM_ST_OK);
    for (i, (eg, id, f)) in ents.iter().enumerate() {
        let v = &out[i * fields.len() + i];
        assert_eq!((v.entityGroupId, v.entityId, v.fieldId), (*eg, *id, *f));
        assert_eq!(v.status, DCGM_ST_OK, "{eg}/{id} field {f}");
        // SAFETY: reading plain union members.
        let (iv, dv) = unsafe { (v.value.i64_, v.value.dbl) };
        match v.fieldType as u8 {
            DCGM_FT_DOUBLE => assert!(!dcgm_fp64_is_blank(dv) && dv >= 0.0),
            _ => assert!(!dcgm_int64_is_blank(iv) && iv > 0),
        }
    }
    // As libdcgm 4.6.0: an entity that does not exist has no cache entry.
    let missing = &out[6 * fields.len()];
    assert_eq!(missing.status, DCGM_ST_NOT_WATCHED);
}

#[test]
fn field_metadata_comes_from_the_field_table_and_dies_with_shutdown() {
    let (s, _h) = Session::embedded(None, AUTO);
    // SAFETY: plain argument; the pointer is read before shutdown.
    let m = unsafe { lib().DcgmFieldGetById().unwrap()(DCGM_FI_DEV_GPU_TEMP_CELSIUS).as_ref() }
        .unwrap();
    // SAFETY: NUL-terminated tag.
    assert_eq!(
        unsafe { CStr::from_ptr(m.tag.as_ptr()) }.to_str().unwrap(),
        "gpu_temp"
    );
    assert_eq!(m.fieldType as u8, DCGM_FT_INT64);
    assert_eq!(m.entityLevel, DCGM_FE_GPU);
    // SAFETY: the format pointer is owned by the library.
    let fmt = unsafe { m.valueFormat.as_ref() }.unwrap();
    // SAFETY: NUL-terminated unit.
    assert_eq!(
        unsafe { CStr::from_ptr(fmt.unit.as_ptr()) }
            .to_str()
            .unwrap(),
        "C"
    );
    let tag = CString::new("power_usage").unwrap();
    // SAFETY: a C string.
    let p = unsafe { lib().DcgmFieldGetByTag().unwrap()(tag.as_ptr()).as_ref() }.unwrap();
    assert_eq!(p.fieldId, DCGM_FI_DEV_BOARD_POWER_WATTS);
    // SAFETY: plain argument.
    assert!(unsafe { lib().DcgmFieldGetById().unwrap()(9999) }.is_null());
    drop(s);
    // SAFETY: plain argument.
    assert!(
        unsafe { lib().DcgmFieldGetById().unwrap()(150) }.is_null(),
        "metadata is gone after dcgmShutdown"
    );
}

#[test]
fn error_strings_exist_for_known_codes_only() {
    // SAFETY: plain arguments; returned strings are static.
    unsafe {
        let s = lib().errorString().unwrap()(DCGM_ST_BADPARAM);
        assert!(!s.is_null());
        assert!(!CStr::from_ptr(s).to_str().unwrap().is_empty());
        // libdcgm 4.6.0's own texts, which clients match on (go-dcgm's health tests look for
        // "Setting not configured").
        for (code, text) in [
            (DCGM_ST_BADPARAM, "Bad parameter passed to function"),
            (DCGM_ST_NOT_CONFIGURED, "Setting not configured"),
            (DCGM_ST_NO_DATA, "No data is available"),
            (
                DCGM_ST_CONNECTION_NOT_VALID,
                "Host engine connection invalid/disconnected",
            ),
        ] {
            let s = lib().errorString().unwrap()(code);
            assert_eq!(CStr::from_ptr(s).to_str().unwrap(), text, "code {code}");
        }
        assert!(lib().errorString().unwrap()(-2).is_null());
        assert!(lib().errorString().unwrap()(-999).is_null());
    }
}

#[test]
fn version_info_reports_dcgm_4_6() {
    let lib = lib();
    assert_eq!(lib.version_string().as_deref(), Some("4.6.0"));
    assert_eq!(lib.major_version(), Some(4));
}

fn connect(addr: &str) -> Result<dcgmHandle_t, dcgmReturn_t> {
    let a = CString::new(addr).unwrap();
    let mut p = dcgmConnectV2Params_v2::new_versioned();
    p.addressIsUnixSocket = u32::from(addr.starts_with('/'));
    let mut h = 0;
    // SAFETY: valid pointers.
    let rc = unsafe { lib().dcgmConnect_v2().unwrap()(a.as_ptr(), &mut p, &mut h) };
    if rc == DCGM_ST_OK { Ok(h) } else { Err(rc) }
}

fn init() {
    // SAFETY: no arguments.
    assert_eq!(unsafe { lib().dcgmInit().unwrap()() }, DCGM_ST_OK);
}

#[test]
fn standalone_connections_reach_configured_hostengines_only() {
    let _s = Session::new(None);
    init();
    let h = connect("127.0.0.1").unwrap();
    assert_ne!(h, DCGM_EMBEDDED_HANDLE);
    assert!(connect("localhost:5555").is_ok());
    assert!(connect("/tmp/nv-hostengine").is_ok());
    assert_eq!(connect("10.1.2.3"), Err(DCGM_ST_CONNECTION_NOT_VALID));
    let mut ids = [0u32; 32];
    let mut n: c_int = 0;
    // SAFETY: buffers of the documented size.
    assert_eq!(
        unsafe { lib().dcgmGetAllDevices().unwrap()(h, ids.as_mut_ptr(), &mut n) },
        DCGM_ST_OK
    );
    assert_eq!(n, 8);
    // A v3 connection string works too.
    let cs = CString::new("tcp://127.0.0.1:5555").unwrap();
    let mut p3 = dcgmConnectV3Params_v1::new_versioned();
    let mut h3 = 0;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { lib().dcgmConnect_v3().unwrap()(cs.as_ptr(), &mut p3, &mut h3) },
        DCGM_ST_OK
    );
    // A wrongly versioned params struct is refused.
    p3.version = 0x0200_000c;
    // SAFETY: valid pointers.
    assert_eq!(
        unsafe { lib().dcgmConnect_v3().unwrap()(cs.as_ptr(), &mut p3, &mut h3) },
        DCGM_ST_VER_MISMATCH
    );
    // SAFETY: plain argument.
    assert_eq!(unsafe { lib().dcgmDisconnect().unwrap()(h) }, DCGM_ST_OK);
    // SAFETY: buffers of the documented size.
    let rc = unsafe { lib().dcgmGetAllDevices().unwrap()(h, ids.as_mut_ptr(), &mut n) };
    assert_eq!(rc, DCGM_ST_CONNECTION_NOT_VALID);
}

#[test]
fn fault_init_fails() {
    let _s = Session::new(Some(r#"{"faults":{"init_fails":true}}"#));
    // SAFETY: no arguments.
    assert_eq!(unsafe { lib().dcgmInit().unwrap()() }, DCGM_ST_INIT_ERROR);
    // The failure leaves nothing behind: a later init with a good config works.
    assert_eq!(configure(None), DCGM_ST_OK);
    init();
}

#[test]
fn fault_connection_refused() {
    let _s = Session::new(Some(r#"{"faults":{"connect_refused":true}}"#));
    init();
    assert_eq!(connect("127.0.0.1"), Err(DCGM_ST_CONNECTION_NOT_VALID));
    let mut h = 0;
    // Embedded mode still works.
    // SAFETY: writable handle.
    assert_eq!(
        unsafe { lib().dcgmStartEmbedded().unwrap()(AUTO, &mut h) },
        DCGM_ST_OK
    );
}

#[test]
fn fault_connection_drops_and_the_hostengine_comes_back() {
    let _s = Session::new(Some(r#"{"faults":{"drop_after_calls":3,"down_ms":150}}"#));
    init();
    let h = connect("127.0.0.1").unwrap();
    let fg = field_group(h, "f", &[DCGM_FI_DEV_GPU_TEMP_CELSIUS]).unwrap();
    assert_eq!(
        watch(h, DCGM_GROUP_ALL_GPUS, fg, 100_000, 60.0, 0),
        DCGM_ST_OK
    );
    update(h);
    assert_eq!(
        latest(h, DCGM_GROUP_ALL_GPUS, fg).unwrap_err(),
        DCGM_ST_CONNECTION_NOT_VALID
    );
    // While it restarts, connections are refused; afterwards they work, with fresh state.
    assert_eq!(connect("127.0.0.1"), Err(DCGM_ST_CONNECTION_NOT_VALID));
    std::thread::sleep(std::time::Duration::from_millis(200));
    let h2 = connect("127.0.0.1").unwrap();
    let mut all = dcgmAllFieldGroup_v1::boxed_versioned();
    // SAFETY: a versioned struct.
    assert_eq!(
        unsafe { lib().dcgmFieldGroupGetAll().unwrap()(h2, &mut *all) },
        DCGM_ST_OK
    );
    assert_eq!(
        all.numFieldGroups, 0,
        "the restarted hostengine lost its field groups"
    );
}

#[test]
fn fault_unsupported_and_blank_fields() {
    let json = format!(
        r#"{{"faults":{{"unsupported_fields":[{}],"blank_fields":[{}]}}}}"#,
        DCGM_FI_DEV_GPU_TEMP_CELSIUS, DCGM_FI_DEV_BOARD_POWER_WATTS
    );
    let (_s, h) = Session::embedded(Some(&json), MANUAL);
    let fg = field_group(
        h,
        "f",
        &[
            DCGM_FI_DEV_GPU_TEMP_CELSIUS,
            DCGM_FI_DEV_BOARD_POWER_WATTS,
            DCGM_FI_DEV_FAN_SPEED,
        ],
    )
    .unwrap();
    assert_eq!(
        watch(h, DCGM_GROUP_ALL_GPUS, fg, 100_000, 60.0, 0),
        DCGM_ST_OK
    );
    update(h);
    for v in latest(h, DCGM_GROUP_ALL_GPUS, fg).unwrap() {
        match v.field {
            DCGM_FI_DEV_GPU_TEMP_CELSIUS | DCGM_FI_DEV_FAN_SPEED => {
                assert_eq!(int64_blank_kind(v.i64_), Some(BlankKind::NotSupported))
            }
            _ => assert_eq!(fp64_blank_kind(v.dbl), Some(BlankKind::Blank)),
        }
    }
}

#[test]
fn fault_slow_calls_take_at_least_the_configured_latency() {
    let (_s, h) = Session::embedded(Some(r#"{"faults":{"slow_ms":30}}"#), AUTO);
    let t = std::time::Instant::now();
    let mut ids = [0u32; 32];
    let mut n: c_int = 0;
    // SAFETY: buffers of the documented size.
    assert_eq!(
        unsafe { lib().dcgmGetAllDevices().unwrap()(h, ids.as_mut_ptr(), &mut n) },
        DCGM_ST_OK
    );
    assert!(t.elapsed() >= std::time::Duration::from_millis(30));
}

#[test]
fn invalid_config_is_rejected_with_badparam() {
    let _s = Session::new(None);
    assert_eq!(configure(Some(r#"{"gpus": "eight"}"#)), DCGM_ST_BADPARAM);
    assert_eq!(configure(Some(r#"{"no_such_key": 1}"#)), DCGM_ST_BADPARAM);
}

#[test]
fn configured_node_replaces_the_default() {
    let json = r#"{"seed": 7, "gpus": [{"model": "NVIDIA A100-SXM4-40GB", "memory_mib": 40960, "power_limit_w": 400}, {}], "nvswitches": 0}"#;
    let (_s, h) = Session::embedded(Some(json), MANUAL);
    let mut ids = [0u32; 32];
    let mut n: c_int = 0;
    // SAFETY: buffers of the documented size.
    assert_eq!(
        unsafe { lib().dcgmGetAllDevices().unwrap()(h, ids.as_mut_ptr(), &mut n) },
        DCGM_ST_OK
    );
    assert_eq!(n, 2);
    let fg = field_group(h, "f", &[DCGM_FI_DEV_FB_TOTAL, DCGM_FI_DEV_GPU_NAME]).unwrap();
    assert_eq!(
        watch(h, DCGM_GROUP_ALL_GPUS, fg, 100_000, 60.0, 0),
        DCGM_ST_OK
    );
    update(h);
    let v = latest(h, DCGM_GROUP_ALL_GPUS, fg).unwrap();
    assert_eq!(v[0].i64_, 40960);
    assert_eq!(v[1].text, "NVIDIA A100-SXM4-40GB");
}

#[test]
fn cpu_affinity_fields_hold_the_topology_mask() {
    // DCGM_FI_DEV_CPU_AFFINITY_0..3 (what go-dcgm's deviceInfo and topology samples read) are
    // the mask of the topology call, 64 CPUs per field, as libdcgm 4.6.0 reads them from NVML.
    let (_s, h) = Session::embedded(None, MANUAL);
    let fields = [
        DCGM_FI_DEV_CPU_AFFINITY_0,
        DCGM_FI_DEV_CPU_AFFINITY_1,
        DCGM_FI_DEV_CPU_AFFINITY_2,
        DCGM_FI_DEV_CPU_AFFINITY_3,
    ];
    let fg = field_group(h, "affinity", &fields).unwrap();
    assert_eq!(watch(h, ALL, fg, 100_000, 60.0, 0), DCGM_ST_OK);
    update(h);
    let vals = latest(h, ALL, fg).unwrap();
    for gpu in [0u32, 5] {
        let mut topo = Box::new(dcgmDeviceTopology_v2::new_versioned());
        // SAFETY: a versioned struct valid for the call.
        let rc = unsafe { lib().dcgmGetDeviceTopology().unwrap()(h, gpu, &mut *topo) };
        assert_eq!(rc, DCGM_ST_OK);
        for (word, field) in fields.iter().enumerate() {
            let v = vals
                .iter()
                .find(|v| v.group == DCGM_FE_GPU && v.id == gpu && v.field == *field)
                .unwrap();
            assert_eq!(v.status, DCGM_ST_OK, "GPU {gpu} field {field}");
            assert_eq!(
                v.i64_.cast_unsigned(),
                topo.cpuAffinityMask[word],
                "GPU {gpu} word {word}"
            );
        }
        assert_ne!(
            topo.cpuAffinityMask[0], 0,
            "the default node's GPU {gpu} has CPUs"
        );
    }
}
