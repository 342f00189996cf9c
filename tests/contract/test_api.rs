//! Contracts of DCGM's test API (fake entities, value injection, cache control, single-field
//! watches, since-reads, NVLink state, telemetry pause, reloadable modules, MIG requests): the
//! return codes and effects measured on libdcgm 4.6.0, which dcgm-sim must match.
//!
//! These cases add fake GPUs and inject values into the engine every case shares, so they run
//! after the other modules' cases; each finds its ids from the node as it is when it starts.

// Each unsafe call here carries its SAFETY comment above the statement that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dcgm::raw::sys::*;
use dcgm::testing::{create_fake_gpu_instances, create_fake_gpus, empty_cache, inject_value};
use dcgm::*;

use crate::target::{Kind, Target};
use crate::{Case, case};

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "test_api_fake_gpu_is_discovered_and_read",
            fake_gpu_is_discovered_and_read,
        ),
        case(
            "test_api_fake_entity_return_codes",
            fake_entity_return_codes,
        ),
        case("test_api_fake_mig_instances", fake_mig_instances),
        case("test_api_injection_return_codes", injection_return_codes),
        case("test_api_single_field_watch", single_field_watch),
        case(
            "test_api_since_reads_include_injected_values",
            since_reads_include_injected_values,
        ),
        case(
            "test_api_injected_xid_raises_policy_and_health",
            injected_xid_raises_policy_and_health,
        ),
        case(
            "test_api_pause_reloadable_nvlink_and_mig_requests",
            pause_reloadable_nvlink_and_mig_requests,
        ),
        // Last of the in-engine cases: on libdcgm 4.6.0 dcgmEmptyCache also drops the watches
        // the policy module made for itself, so a policy registered before it never fires
        // again in this process (found by running this suite on the real library).
        case(
            "test_api_cache_info_and_empty_cache",
            cache_info_and_empty_cache,
        ),
        Case {
            name: "test_api_nvml_injection_argument_checks",
            run: nvml_injection_argument_checks,
            not_on: Some((
                Kind::Sim,
                "dcgm-sim has no NVML to inject into and does not export the NVML-injection group",
            )),
        },
    ]
}

const TEMP: u16 = DCGM_FI_DEV_GPU_TEMP_CELSIUS;
const POWER: u16 = DCGM_FI_DEV_BOARD_POWER_WATTS;
const SM_CLOCK: u16 = DCGM_FI_DEV_SM_CLOCK;

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64
}

fn injected(field: u16, ty: u8, ts: i64) -> dcgmInjectFieldValue_t {
    let mut v: dcgmInjectFieldValue_t = zeroed();
    v.version = dcgmInjectFieldValue_version1;
    v.fieldId = field;
    v.fieldType = u16::from(ty);
    v.ts = ts;
    v
}

fn int_value(field: u16, value: i64, ts: i64) -> dcgmInjectFieldValue_t {
    let mut v = injected(field, DCGM_FT_INT64, ts);
    v.value.i64_ = value;
    v
}

fn inject_raw(h: &Handle, gpu: u32, v: *mut dcgmInjectFieldValue_t) -> dcgmReturn_t {
    let f = dcgm::raw::library(h).dcgmInjectFieldValue().unwrap();
    // SAFETY: `v` is NULL or a live value for the call.
    unsafe { f(dcgm::raw::handle(h), gpu, v) }
}

fn latest(h: &Handle, gpu: u32, field: u16) -> dcgmFieldValue_v1 {
    let f = dcgm::raw::library(h)
        .dcgmGetLatestValuesForFields()
        .unwrap();
    let mut ids = [field];
    let mut out: dcgmFieldValue_v1 = zeroed();
    // SAFETY: one id and room for one value.
    let rc = unsafe {
        f(
            dcgm::raw::handle(h),
            gpu as c_int,
            ids.as_mut_ptr(),
            1,
            &mut out,
        )
    };
    assert_eq!(rc, DCGM_ST_OK);
    out
}

fn cache_info(h: &Handle, gpu: u32, field: u16) -> (dcgmReturn_t, dcgmCacheManagerFieldInfo_v4_t) {
    let f = dcgm::raw::library(h)
        .dcgmGetCacheManagerFieldInfo()
        .unwrap();
    let mut info: dcgmCacheManagerFieldInfo_v4_t = zeroed();
    // Any version works: the client library sets its own.
    info.version = 0;
    info.entityGroupId = DCGM_FE_GPU;
    info.entityId = gpu;
    info.fieldId = field;
    // SAFETY: a live struct for the call.
    let rc = unsafe { f(dcgm::raw::handle(h), &mut info) };
    (rc, info)
}

fn fake_request(entries: &[(u32, u32, u32)]) -> Box<dcgmCreateFakeEntities_v2> {
    let mut req: Box<dcgmCreateFakeEntities_v2> = Box::new(zeroed());
    req.version = dcgmCreateFakeEntities_version2;
    req.numToCreate = entries.len() as u32;
    for (e, &(group, parent_group, parent)) in req.entityList.iter_mut().zip(entries) {
        e.entity.entityGroupId = group;
        e.entity.entityId = 555;
        e.parent = dcgmGroupEntityPair_t {
            entityGroupId: parent_group,
            entityId: parent,
        };
    }
    req
}

fn create_raw(h: &Handle, req: *mut dcgmCreateFakeEntities_v2) -> dcgmReturn_t {
    let f = dcgm::raw::library(h).dcgmCreateFakeEntities().unwrap();
    // SAFETY: `req` is NULL or a live request.
    unsafe { f(dcgm::raw::handle(h), req) }
}

fn fake_gpu_is_discovered_and_read(t: &Target) {
    let h = t.embedded();
    let sys = h.system();
    let before = sys.gpu_ids().unwrap().len() as u32;
    let id = create_fake_gpus(&h, 1).unwrap()[0];
    assert_eq!(id, before, "a fake GPU takes the next GPU id");
    assert!(sys.gpu_ids().unwrap().contains(&id));
    assert!(sys.supported_gpu_ids().unwrap().contains(&id));
    assert!(
        sys.entities(EntityGroup::Gpu, false)
            .unwrap()
            .contains(&Entity::gpu(id))
    );
    let status = dcgm::raw::library(&h).dcgmGetGpuStatus().unwrap();
    let mut st = 0;
    // SAFETY: plain ids and a writable status.
    assert_eq!(
        unsafe { status(dcgm::raw::handle(&h), id, &mut st) },
        DCGM_ST_OK
    );
    assert_eq!(st, DcgmEntityStatusFake);

    // An injected value is the latest, with its timestamp, without a watch.
    let ts = now_us() - 1_000_000;
    inject_value(&h, Entity::gpu(id), FieldId(TEMP), 77i64, None).unwrap();
    let mut v = int_value(TEMP, 88, ts);
    assert_eq!(inject_raw(&h, id, &mut v), DCGM_ST_OK);
    let got = latest(&h, id, TEMP);
    assert_eq!(got.status, DCGM_ST_OK);
    // SAFETY: an int64 field.
    let value = unsafe { got.value.i64_ };
    // The newest timestamp wins: 77 was injected at "now", 88 a second earlier.
    assert_eq!(value, 77);
    let mut v = int_value(TEMP, 99, now_us() + 1_000_000);
    assert_eq!(inject_raw(&h, id, &mut v), DCGM_ST_OK);
    let got = latest(&h, id, TEMP);
    // SAFETY: an int64 field.
    assert_eq!(unsafe { got.value.i64_ }, 99);
    assert_eq!(got.ts, v.ts);

    // The fake GPU goes in groups like any GPU.
    let g = Group::with_gpus(&h, "contract-fake-gpu", &[id]).unwrap();
    assert_eq!(g.gpu_ids().unwrap(), vec![id]);
}

fn fake_entity_return_codes(t: &Target) {
    let h = t.embedded();
    assert_eq!(create_raw(&h, std::ptr::null_mut()), DCGM_ST_BADPARAM);
    let mut req = fake_request(&[(DCGM_FE_GPU, 0, 0)]);
    req.version = dcgmCreateFakeEntities_version2 - 1;
    assert_eq!(create_raw(&h, &mut *req), DCGM_ST_VER_MISMATCH);
    req.version = 1 << 24;
    assert_eq!(create_raw(&h, &mut *req), DCGM_ST_VER_MISMATCH);
    let mut none = fake_request(&[]);
    assert_eq!(create_raw(&h, &mut *none), DCGM_ST_OK);
    for group in [DCGM_FE_LINK, DCGM_FE_VGPU, DCGM_FE_NONE, 99] {
        let mut req = fake_request(&[(group, 0, 0)]);
        assert_eq!(
            create_raw(&h, &mut *req),
            DCGM_ST_NOT_SUPPORTED,
            "group {group}"
        );
    }
    // The first failure stops the request; what was created stays.
    let before = h.system().gpu_ids().unwrap().len() as u32;
    let mut req = fake_request(&[(DCGM_FE_GPU, 0, 0), (99, 0, 0), (DCGM_FE_GPU, 0, 0)]);
    assert_eq!(create_raw(&h, &mut *req), DCGM_ST_NOT_SUPPORTED);
    assert_eq!(req.entityList[0].entity.entityId, before);
    assert_eq!(h.system().gpu_ids().unwrap().len() as u32, before + 1);
    // A GPU instance under a GPU that does not exist.
    let mut req = fake_request(&[(DCGM_FE_GPU_I, DCGM_FE_GPU, 9999)]);
    assert_eq!(create_raw(&h, &mut *req), DCGM_ST_GENERIC_ERROR);
    assert_eq!(req.entityList[0].entity.entityId, u32::MAX);
    let mut req = fake_request(&[(DCGM_FE_GPU_CI, DCGM_FE_GPU_I, 9999)]);
    assert_eq!(create_raw(&h, &mut *req), DCGM_ST_GENERIC_ERROR);
    assert_eq!(req.entityList[0].entity.entityId, u32::MAX);
}

fn fake_mig_instances(t: &Target) {
    let h = t.embedded();
    let gpu = create_fake_gpus(&h, 1).unwrap()[0];
    let gis = create_fake_gpu_instances(&h, gpu, 2).unwrap();
    assert_eq!(gis, vec![gpu * 8, gpu * 8 + 1]);
    let cis = dcgm::testing::create_fake_compute_instances(&h, gis[0], 2).unwrap();
    assert_eq!(cis, vec![gpu * 8, gpu * 8 + 1]);
    let listed = h
        .system()
        .entities(EntityGroup::GpuInstance, false)
        .unwrap();
    for gi in &gis {
        assert!(listed.contains(&Entity::new(EntityGroup::GpuInstance, *gi)));
    }
    // The hierarchy lists them under their parents.
    let f = dcgm::raw::library(&h)
        .dcgmGetGpuInstanceHierarchy()
        .unwrap();
    let mut hier: Box<dcgmMigHierarchy_v2> = Box::new(zeroed());
    hier.version = dcgmMigHierarchy_version2;
    // SAFETY: a live versioned struct.
    assert_eq!(unsafe { f(dcgm::raw::handle(&h), &mut *hier) }, DCGM_ST_OK);
    let entries = &hier.entityList[..hier.count as usize];
    let find = |group: u32, id: u32| {
        entries
            .iter()
            .find(|e| e.entity.entityGroupId == group && e.entity.entityId == id)
            .unwrap_or_else(|| panic!("{group}/{id} not in the hierarchy"))
    };
    for gi in &gis {
        let e = find(DCGM_FE_GPU_I, *gi);
        assert_eq!(e.parent.entityGroupId, DCGM_FE_GPU);
        assert_eq!(e.parent.entityId, gpu);
        assert_eq!(e.info.nvmlGpuIndex, gpu);
    }
    for ci in &cis {
        let e = find(DCGM_FE_GPU_CI, *ci);
        assert_eq!(e.parent.entityGroupId, DCGM_FE_GPU_I);
        assert_eq!(e.parent.entityId, gis[0]);
    }
}

fn injection_return_codes(t: &Target) {
    let h = t.embedded();
    let gpu = create_fake_gpus(&h, 1).unwrap()[0];
    let ts = now_us();
    assert_eq!(inject_raw(&h, gpu, std::ptr::null_mut()), DCGM_ST_BADPARAM);
    for version in [0, dcgmInjectFieldValue_version1 + 1, 0x0200_1018] {
        let mut v = int_value(TEMP, 50, ts);
        v.version = version;
        assert_eq!(inject_raw(&h, gpu, &mut v), DCGM_ST_VER_MISMATCH);
    }
    for field in [0, 9999] {
        let mut v = int_value(field, 50, ts);
        assert_eq!(
            inject_raw(&h, gpu, &mut v),
            DCGM_ST_BADPARAM,
            "field {field}"
        );
    }
    let mut v = int_value(TEMP, 50, ts);
    assert_eq!(inject_raw(&h, 9999, &mut v), DCGM_ST_BADPARAM);
    // The type must be the field's own, and only int64, double and string are taken.
    for (field, ty) in [
        (TEMP, DCGM_FT_DOUBLE),
        (POWER, DCGM_FT_INT64),
        (TEMP, DCGM_FT_TIMESTAMP),
        (TEMP, DCGM_FT_BINARY),
        (TEMP, 0),
    ] {
        let mut v = injected(field, ty, ts);
        assert_eq!(
            inject_raw(&h, gpu, &mut v),
            DCGM_ST_BADPARAM,
            "field {field} as {ty}"
        );
    }
    let mut v = injected(POWER, DCGM_FT_DOUBLE, ts);
    v.value.dbl = 321.5;
    assert_eq!(inject_raw(&h, gpu, &mut v), DCGM_ST_OK);
    // SAFETY: a double field.
    assert_eq!(unsafe { latest(&h, gpu, POWER).value.dbl }, 321.5);
    // Through the safe layer: a mismatched type is the library's BADPARAM.
    let err = inject_value(&h, Entity::gpu(gpu), FieldId(TEMP), 1.5, None).unwrap_err();
    assert_eq!(err.code(), ReturnCode::from_raw(DCGM_ST_BADPARAM));
    // The status member is not stored; a zero time means now.
    let mut v = int_value(TEMP, 61, 0);
    v.status = -5;
    let before = now_us();
    assert_eq!(inject_raw(&h, gpu, &mut v), DCGM_ST_OK);
    let got = latest(&h, gpu, TEMP);
    assert_eq!(got.status, DCGM_ST_OK);
    // SAFETY: an int64 field.
    assert_eq!(unsafe { got.value.i64_ }, 61);
    assert!(got.ts >= before - 1_000_000 && got.ts <= now_us() + 1_000_000);
    // Any entity, by the exported name.
    let f = dcgm::raw::library(&h).dcgmInjectEntityFieldValue().unwrap();
    let mut v = int_value(TEMP, 62, now_us());
    // SAFETY: a live value.
    assert_eq!(
        unsafe { f(dcgm::raw::handle(&h), DCGM_FE_GPU, gpu, &mut v) },
        DCGM_ST_OK
    );
    // SAFETY: as above.
    assert_eq!(
        unsafe { f(dcgm::raw::handle(&h), 99, 0, &mut v) },
        DCGM_ST_BADPARAM
    );
}

fn cache_info_and_empty_cache(t: &Target) {
    let h = t.embedded();
    let gpu = create_fake_gpus(&h, 1).unwrap()[0];
    let t0 = now_us() - 2_000_000;
    for (i, value) in [70, 71].into_iter().enumerate() {
        let mut v = int_value(TEMP, value, t0 + i as i64 * 1_000_000);
        assert_eq!(inject_raw(&h, gpu, &mut v), DCGM_ST_OK);
    }
    let (rc, info) = cache_info(&h, gpu, TEMP);
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(info.flags & DCGM_CMI_F_WATCHED, 0);
    assert_eq!(info.numSamples, 2);
    assert_eq!(info.numWatchers, 0);
    assert_eq!(info.maxAgeUsec, 30_000_000);
    assert_eq!(info.oldestTimestamp, t0);
    assert_eq!(info.newestTimestamp, t0 + 1_000_000);
    assert_eq!(cache_info(&h, gpu, SM_CLOCK).0, DCGM_ST_NOT_WATCHED);
    assert_eq!(cache_info(&h, gpu, 9999).0, DCGM_ST_BADPARAM);
    let f = dcgm::raw::library(&h)
        .dcgmGetCacheManagerFieldInfo()
        .unwrap();
    // SAFETY: NULL is the case under test.
    assert_eq!(
        unsafe { f(dcgm::raw::handle(&h), std::ptr::null_mut()) },
        DCGM_ST_BADPARAM
    );

    empty_cache(&h).unwrap();
    let got = latest(&h, gpu, TEMP);
    assert_eq!(got.status, DCGM_ST_NOT_WATCHED);
    assert_eq!(got.ts, 0);
    let (rc, info) = cache_info(&h, gpu, TEMP);
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(info.numSamples, 0);
    assert_eq!(info.numWatchers, 0);
}

fn single_field_watch(t: &Target) {
    let h = t.embedded();
    let gpu = create_fake_gpus(&h, 1).unwrap()[0];
    let lib = dcgm::raw::library(&h);
    let watch = lib.dcgmWatchFieldValue().unwrap();
    let unwatch = lib.dcgmUnwatchFieldValue().unwrap();
    // SAFETY: (every call below) plain arguments.
    let w = |gpu: c_int, field: u16, freq: i64, age: f64, samples: c_int| unsafe {
        watch(dcgm::raw::handle(&h), gpu, field, freq, age, samples)
    };
    assert_eq!(w(gpu as c_int, POWER, 100_000, 30.0, 0), DCGM_ST_OK);
    let (rc, info) = cache_info(&h, gpu, POWER);
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(info.flags & DCGM_CMI_F_WATCHED, DCGM_CMI_F_WATCHED);
    assert_eq!(info.numWatchers, 1);
    assert_eq!(info.monitorIntervalUsec, 100_000);
    assert_eq!(info.maxAgeUsec, 30_000_000);
    assert_eq!(info.watchers[0].watcherType, DcgmWatcherTypeClient);
    assert_eq!(info.watchers[0].monitorIntervalUsec, 100_000);
    assert_eq!(w(gpu as c_int, POWER, 0, 30.0, 0), DCGM_ST_BADPARAM);
    assert_eq!(w(gpu as c_int, POWER, -1, 30.0, 0), DCGM_ST_BADPARAM);
    assert_eq!(w(gpu as c_int, POWER, 100_000, 0.0, 0), DCGM_ST_BADPARAM);
    assert_eq!(w(gpu as c_int, POWER, 100_000, 0.0, 5), DCGM_ST_OK);
    assert_eq!(w(gpu as c_int, 9999, 100_000, 30.0, 0), DCGM_ST_BADPARAM);
    assert_eq!(w(gpu as c_int, 0, 100_000, 30.0, 0), DCGM_ST_BADPARAM);
    assert_eq!(w(9999, POWER, 100_000, 30.0, 0), DCGM_ST_GENERIC_ERROR);

    // SAFETY: (every call below) plain arguments.
    let u = |gpu: c_int, field: u16| unsafe { unwatch(dcgm::raw::handle(&h), gpu, field, 0) };
    let first = u(gpu as c_int, POWER);
    let (rc, info) = cache_info(&h, gpu, POWER);
    let got = [
        first,
        rc,
        (info.flags & DCGM_CMI_F_WATCHED) as i32,
        info.numWatchers,
        u(gpu as c_int, POWER),
        u(gpu as c_int, SM_CLOCK),
        u(gpu as c_int, 9999),
        u(gpu as c_int, 0),
        u(9999, POWER),
    ];
    // (the first unwatch, the cache-info call, WATCHED flag and watchers after it, a second
    // unwatch, unwatches of an unwatched field, of unknown fields 9999 and 0, and of GPU 9999)
    if t.is_real() && t.older_than("4.0.0") {
        // The real 3.3.9 does not remove the watch this client made (measured): it stays, with
        // its watcher; unknown field ids are BADPARAM; every other unwatch, GPU 9999 included,
        // answers one code: NOT_WATCHED when this case runs alone, OK after the suite's other
        // cases (both measured).
        let rest = got[0];
        assert!(rest == DCGM_ST_OK || rest == DCGM_ST_NOT_WATCHED, "{got:?}");
        let want = [
            rest,
            DCGM_ST_OK,
            DCGM_CMI_F_WATCHED as i32,
            1,
            rest,
            rest,
            DCGM_ST_BADPARAM,
            DCGM_ST_BADPARAM,
            rest,
        ];
        assert_eq!(got, want);
        return;
    }
    let want = {
        let unknown_gpu = if t.older_than("4.5.0") {
            // The real 3.3.9 and 4.1.1 accept an unwatch of GPU 9999 (measured), and so does
            // dcgm-sim speaking them.
            DCGM_ST_OK
        } else {
            DCGM_ST_BADPARAM
        };
        [
            DCGM_ST_OK,
            DCGM_ST_OK,
            0,
            0,
            DCGM_ST_OK,
            DCGM_ST_NOT_WATCHED,
            DCGM_ST_BADPARAM,
            DCGM_ST_BADPARAM,
            unknown_gpu,
        ]
    };
    assert_eq!(got, want);
}

/// Collects what `dcgmGetFieldValuesSince` delivers: (gpu, field, status, ts, int value).
unsafe extern "C" fn collect(
    gpu: u32,
    values: *mut dcgmFieldValue_v1,
    n: c_int,
    user: *mut c_void,
) -> c_int {
    // SAFETY: `user` is the Vec passed by `since` below; `values` holds `n` values.
    let out = unsafe { &mut *user.cast::<Vec<(u32, u16, i32, i64, i64)>>() };
    // SAFETY: as above.
    let vals = unsafe { std::slice::from_raw_parts(values, n as usize) };
    for v in vals {
        // SAFETY: the test reads int64 fields only.
        out.push((gpu, v.fieldId, v.status, v.ts, unsafe { v.value.i64_ }));
    }
    0
}

type Delivered = Vec<(u32, u16, i32, i64, i64)>;

fn since(
    h: &Handle,
    group: dcgmGpuGrp_t,
    from: i64,
    fields: &[u16],
) -> (dcgmReturn_t, i64, Delivered) {
    let f = dcgm::raw::library(h).dcgmGetFieldValuesSince().unwrap();
    let mut ids = fields.to_vec();
    let mut got: Delivered = Vec::new();
    let mut next = from;
    // SAFETY: `ids` and `next` live for the call; the callback matches the userData type.
    let rc = unsafe {
        f(
            dcgm::raw::handle(h),
            group,
            from,
            ids.as_mut_ptr(),
            ids.len() as c_int,
            &mut next,
            Some(collect),
            (&mut got as *mut Delivered).cast(),
        )
    };
    (rc, next, got)
}

fn since_reads_include_injected_values(t: &Target) {
    let h = t.embedded();
    let gpu = create_fake_gpus(&h, 1).unwrap()[0];
    let g = Group::with_gpus(&h, "contract-since", &[gpu]).unwrap();
    let t0 = now_us() - 3_000_000;
    for (i, value) in [40, 41].into_iter().enumerate() {
        let mut v = int_value(TEMP, value, t0 + i as i64 * 1_000_000);
        assert_eq!(inject_raw(&h, gpu, &mut v), DCGM_ST_OK);
    }
    let (rc, next, got) = since(&h, dcgm::raw::group_id(&g), 0, &[TEMP]);
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(
        got,
        vec![
            (gpu, TEMP, DCGM_ST_OK, t0, 40),
            (gpu, TEMP, DCGM_ST_OK, t0 + 1_000_000, 41)
        ]
    );
    assert!(next > t0 + 1_000_000);
    let (rc, _, got) = since(&h, dcgm::raw::group_id(&g), t0 + 1, &[TEMP]);
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(got.len(), 1);
    // The injected samples are in the time-range read too, oldest or newest first.
    let multiple = dcgm::raw::library(&h)
        .dcgmGetMultipleValuesForField()
        .unwrap();
    for (order, cap, want) in [
        (DCGM_ORDER_ASCENDING, 4, vec![40, 41]),
        (DCGM_ORDER_DESCENDING, 1, vec![41]),
    ] {
        let mut out: Vec<dcgmFieldValue_v1> = (0..cap).map(|_| zeroed()).collect();
        let mut n = cap as c_int;
        // SAFETY: `out` has room for `n` values.
        let rc = unsafe {
            multiple(
                dcgm::raw::handle(&h),
                gpu as c_int,
                TEMP,
                &mut n,
                0,
                0,
                order,
                out.as_mut_ptr(),
            )
        };
        assert_eq!(rc, DCGM_ST_OK);
        // SAFETY: an int64 field.
        let got: Vec<i64> = out[..n as usize]
            .iter()
            .map(|v| unsafe { v.value.i64_ })
            .collect();
        assert_eq!(got, want, "order {order}");
    }
    // A field without cache entry ends the call after what came before it.
    let (rc, next2, got) = since(&h, dcgm::raw::group_id(&g), 0, &[TEMP, SM_CLOCK]);
    assert_eq!(rc, DCGM_ST_NOT_WATCHED);
    assert_eq!(next2, 0);
    assert_eq!(got.len(), 2);
    assert_eq!(
        since(&h, dcgm::raw::group_id(&g), 0, &[]).0,
        DCGM_ST_BADPARAM
    );
    let f = dcgm::raw::library(&h).dcgmGetFieldValuesSince().unwrap();
    let mut ids = [TEMP];
    let mut next = 0;
    // SAFETY: a NULL callback is the case under test.
    let rc = unsafe {
        f(
            dcgm::raw::handle(&h),
            dcgm::raw::group_id(&g),
            0,
            ids.as_mut_ptr(),
            1,
            &mut next,
            None,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(rc, DCGM_ST_BADPARAM);
}

fn injected_xid_raises_policy_and_health(t: &Target) {
    let h = t.embedded();
    let gpu = h.system().gpu_ids().unwrap()[0];
    let g = Group::with_gpus(&h, "contract-xid", &[gpu]).unwrap();
    g.policy_set(&Policy {
        xid: true,
        ..Policy::default()
    })
    .unwrap();
    let (reg, rx) = g.policy_subscribe(PolicyCondition::XID).unwrap();
    g.health_set(HealthSystems::PCIE | HealthSystems::MEM | HealthSystems::DRIVER)
        .unwrap();
    let _ = g.health_check().unwrap();
    // A timestamp before the registration and the first check: the incident still counts.
    let ts = now_us() - 2_000_000;
    let xid = FieldId(DCGM_FI_DEV_XID_ERROR);
    let at = UNIX_EPOCH + Duration::from_micros(ts as u64);
    inject_value(&h, Entity::gpu(gpu), xid, 79i64, Some(at)).unwrap();
    let dbe = FieldId(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL);
    inject_value(&h, Entity::gpu(gpu), dbe, 5i64, Some(at)).unwrap();

    let deadline = Instant::now() + Duration::from_secs(5);
    let violation = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let v = rx
            .recv_timeout(left)
            .expect("an XID policy violation within 5 s");
        if v.condition == PolicyCondition::XID {
            break v;
        }
    };
    assert_eq!(violation.gpu, gpu);
    assert_eq!(violation.timestamp_us, ts);
    assert_eq!(violation.detail, ViolationDetail::Xid { xid: 79 });
    reg.unregister().unwrap();

    let report = g.health_check().unwrap();
    let fallen_off = report.incidents.iter().any(|i| {
        i.error_code == DCGM_FR_FALLEN_OFF_BUS
            && i.result == HealthResult::Fail
            && i.entity == Entity::gpu(gpu)
    });
    // The real 3.3.9 and 4.1.1 raise no health incident for an injected XID 79 (measured: only
    // the DBE incident); 4.5.3 and 4.6.0 report the GPU fallen off the bus.
    let xid_checked = !(t.is_real() && t.older_than("4.5.0"));
    assert_eq!(fallen_off, xid_checked, "{report:?}");
    assert!(
        report
            .incidents
            .iter()
            .any(|i| i.error_code == DCGM_FR_VOLATILE_DBE_DETECTED
                && i.system == HealthSystems::MEM
                && i.entity == Entity::gpu(gpu)),
        "{report:?}"
    );
    assert_eq!(report.overall, HealthResult::Fail);
}

fn core_status(h: &Handle) -> dcgmModuleStatus_t {
    let f = dcgm::raw::library(h).dcgmModuleGetStatuses().unwrap();
    let mut st: dcgmModuleGetStatuses_t = zeroed();
    st.version = dcgmModuleGetStatuses_version1;
    // SAFETY: a live versioned struct.
    assert_eq!(unsafe { f(dcgm::raw::handle(h), &mut st) }, DCGM_ST_OK);
    st.statuses[..st.numStatuses as usize]
        .iter()
        .find(|s| s.id == DcgmModuleIdCore)
        .unwrap()
        .status
}

fn pause_reloadable_nvlink_and_mig_requests(t: &Target) {
    let h = t.embedded();
    let lib = dcgm::raw::library(&h);
    // SAFETY: (the calls of this block) a plain handle.
    unsafe {
        let pause = lib.dcgmPauseTelemetryForDiag().unwrap();
        let resume = lib.dcgmResumeTelemetryForDiag().unwrap();
        for _ in 0..2 {
            assert_eq!(pause(dcgm::raw::handle(&h)), DCGM_ST_OK);
        }
        assert_eq!(core_status(&h), DcgmModuleStatusPaused);
        for _ in 0..2 {
            assert_eq!(resume(dcgm::raw::handle(&h)), DCGM_ST_OK);
        }
        assert_eq!(core_status(&h), DcgmModuleStatusLoaded);
    }

    if t.older_than("4.5.0") {
        // dcgmMarkModulesReloadable came in DCGM 4.5: the real 3.3.9 and 4.1.1 do not export
        // it (measured); dcgm-sim's older personalities export it and answer FUNCTION_NOT_FOUND.
        match lib.dcgmMarkModulesReloadable() {
            Err(e) => assert!(t.is_real(), "{e:?}"),
            Ok(mark) => {
                assert!(!t.is_real(), "the real {} exports it", t.version());
                // SAFETY: NULL; the function answers before reading it.
                let rc = unsafe { mark(dcgm::raw::handle(&h), std::ptr::null_mut()) };
                assert_eq!(rc, DCGM_ST_FUNCTION_NOT_FOUND);
            }
        }
    } else {
        mark_modules_reloadable(&h);
    }
    set_nvlink_state_and_mig_requests(t, &h);
}

fn mark_modules_reloadable(h: &Handle) {
    let lib = dcgm::raw::library(h);
    let mark = lib.dcgmMarkModulesReloadable().unwrap();
    let mut m = dcgmModulesReloadable_v1 {
        version: dcgmModulesReloadable_version1,
        moduleMask: 0,
    };
    // SAFETY: (the calls of this block) NULL or a live struct.
    unsafe {
        assert_eq!(
            mark(dcgm::raw::handle(h), std::ptr::null_mut()),
            DCGM_ST_BADPARAM
        );
        assert_eq!(mark(dcgm::raw::handle(h), &mut m), DCGM_ST_OK);
        assert_eq!(m.moduleMask & 1, 1, "the core module is loaded");
        m.version = 0;
        assert_eq!(mark(dcgm::raw::handle(h), &mut m), DCGM_ST_VER_MISMATCH);
    }
}

fn set_nvlink_state_and_mig_requests(t: &Target, h: &Handle) {
    let lib = dcgm::raw::library(h);

    let set = lib.dcgmSetEntityNvLinkLinkState().unwrap();
    let state = |group, id, link, st| dcgmSetNvLinkLinkState_v1 {
        version: dcgmSetNvLinkLinkState_version1,
        entityGroupId: group,
        entityId: id,
        linkId: link,
        linkState: st,
        unused: 0,
    };
    // SAFETY: (the calls of this block) NULL or a live struct.
    unsafe {
        assert_eq!(
            set(dcgm::raw::handle(h), std::ptr::null_mut()),
            DCGM_ST_BADPARAM
        );
        let mut bad = state(DCGM_FE_GPU, 0, 0, DcgmNvLinkLinkStateDown);
        bad.version = 0;
        assert_eq!(set(dcgm::raw::handle(h), &mut bad), DCGM_ST_VER_MISMATCH);
        // Well-formed requests return OK even for what does not exist.
        let mut s = state(DCGM_FE_GPU, 9999, 0, DcgmNvLinkLinkStateDown);
        assert_eq!(set(dcgm::raw::handle(h), &mut s), DCGM_ST_OK);
        let mut s = state(DCGM_FE_SWITCH, 9999, 0, DcgmNvLinkLinkStateDown);
        assert_eq!(set(dcgm::raw::handle(h), &mut s), DCGM_ST_OK);
    }
    // NVLink status is read from DCGM 4.0 on.
    if !t.is_real() && !t.older_than("4.0.0") {
        // The simulator's GPU 0 has NVLinks: a forced state shows in the link status.
        let mut s = state(DCGM_FE_GPU, 0, 1, DcgmNvLinkLinkStateDown);
        // SAFETY: a live struct.
        assert_eq!(unsafe { set(dcgm::raw::handle(h), &mut s) }, DCGM_ST_OK);
        let st = h.system().nvlink_status().unwrap();
        let (_, links) = st.gpus.iter().find(|(g, _)| *g == 0).unwrap();
        assert_eq!(links[1], LinkState::Down);
        assert_eq!(links[0], LinkState::Up);
    }

    let create = lib.dcgmCreateMigEntity().unwrap();
    let delete = lib.dcgmDeleteMigEntity().unwrap();
    let cme = |option, profile| dcgmCreateMigEntity_v1 {
        version: dcgmCreateMigEntity_version1,
        parentId: 0,
        profile,
        createOption: option,
        flags: 0,
    };
    let dme = |group, id| dcgmDeleteMigEntity_v1 {
        version: dcgmDeleteMigEntity_version1,
        entityGroupId: group,
        entityId: id,
        flags: 0,
    };
    // SAFETY: (the calls of this block) NULL or live structs.
    unsafe {
        assert_eq!(
            create(dcgm::raw::handle(h), std::ptr::null_mut()),
            DCGM_ST_BADPARAM
        );
        let mut c = cme(DcgmMigCreateGpuInstance, DcgmMigProfileGpuInstanceSlice1);
        c.version = 0;
        assert_eq!(create(dcgm::raw::handle(h), &mut c), DCGM_ST_VER_MISMATCH);
        let mut c = cme(DcgmMigCreateGpuInstance, 0);
        assert_eq!(create(dcgm::raw::handle(h), &mut c), DCGM_ST_BADPARAM);
        let mut c = cme(DcgmMigCreateGpuInstance, DcgmMigProfileGpuInstanceSlice1GFX);
        assert_eq!(create(dcgm::raw::handle(h), &mut c), DCGM_ST_BADPARAM);
        let mut c = cme(
            DcgmMigCreateComputeInstance,
            DcgmMigProfileGpuInstanceSlice1,
        );
        assert_eq!(create(dcgm::raw::handle(h), &mut c), DCGM_ST_BADPARAM);
        let mut c = cme(5, 0);
        assert_eq!(create(dcgm::raw::handle(h), &mut c), DCGM_ST_OK);

        assert_eq!(
            delete(dcgm::raw::handle(h), std::ptr::null_mut()),
            DCGM_ST_BADPARAM
        );
        let mut d = dme(DCGM_FE_GPU_I, 255);
        d.version = 0;
        assert_eq!(delete(dcgm::raw::handle(h), &mut d), DCGM_ST_VER_MISMATCH);
        let mut d = dme(DCGM_FE_GPU_I, 255);
        assert_eq!(
            delete(dcgm::raw::handle(h), &mut d),
            DCGM_ST_INSTANCE_NOT_FOUND
        );
        let mut d = dme(DCGM_FE_GPU_I, 256);
        assert_eq!(delete(dcgm::raw::handle(h), &mut d), DCGM_ST_BADPARAM);
        let mut d = dme(DCGM_FE_GPU, 0);
        assert_eq!(delete(dcgm::raw::handle(h), &mut d), DCGM_ST_BADPARAM);
    }
}

fn nvml_injection_argument_checks(t: &Target) {
    let h = t.embedded();
    let lib = dcgm::raw::library(&h);
    if t.older_than("4.5.0") {
        // The group is whole from DCGM 4.5: the real 4.1.1 lacks dcgmInjectedNvmlDeviceReset,
        // 3.3.9 also dcgmRemoveNvmlInjectedGpu and dcgmRestoreNvmlInjectedGpu (measured).
        assert!(lib.dcgmInjectedNvmlDeviceReset().is_err());
        panic!(
            "NotInRelease: DCGM {} lacks part of the NVML-injection group",
            t.version()
        );
    }
    let bogus = c"GPU-bogus";
    // SAFETY: (the calls of this block) plain ids, NULL, a live string or a live value.
    unsafe {
        let create = lib.dcgmCreateNvmlInjectionGpu().unwrap();
        assert_eq!(
            create(dcgm::raw::handle(&h), 31),
            DCGM_ST_BADPARAM,
            "not the next index"
        );
        let reset = lib.dcgmInjectedNvmlDeviceReset().unwrap();
        assert_eq!(reset(dcgm::raw::handle(&h), 9999), DCGM_ST_OK);
        let remove = lib.dcgmRemoveNvmlInjectedGpu().unwrap();
        assert_eq!(
            remove(dcgm::raw::handle(&h), bogus.as_ptr()),
            DCGM_ST_BADPARAM
        );
        let restore = lib.dcgmRestoreNvmlInjectedGpu().unwrap();
        assert_eq!(
            restore(dcgm::raw::handle(&h), bogus.as_ptr()),
            DCGM_ST_BADPARAM
        );
        let counts = lib.dcgmGetNvmlInjectFuncCallCount().unwrap();
        assert_eq!(
            counts(dcgm::raw::handle(&h), std::ptr::null_mut()),
            DCGM_ST_BADPARAM
        );
        let reset_counts = lib.dcgmResetNvmlInjectFuncCallCount().unwrap();
        assert_eq!(reset_counts(dcgm::raw::handle(&h)), DCGM_ST_OK);
        let to_nvml = lib.dcgmInjectEntityFieldValueToNvml().unwrap();
        let mut v = int_value(TEMP, 50, now_us());
        v.version = 0;
        assert_eq!(
            to_nvml(dcgm::raw::handle(&h), DCGM_FE_GPU, 0, &mut v),
            DCGM_ST_VER_MISMATCH
        );
        let inject = lib.dcgmInjectNvmlDevice().unwrap();
        let ret: Box<injectNvmlRet_t> = Box::new(zeroed());
        assert_eq!(
            inject(
                dcgm::raw::handle(&h),
                0,
                std::ptr::null(),
                std::ptr::null(),
                0,
                &*ret
            ),
            DCGM_ST_BADPARAM,
            "NULL key"
        );
    }
}
