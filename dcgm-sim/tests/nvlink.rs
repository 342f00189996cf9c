//! NVLink on the simulator as libdcgm 4.6.0 answers it: peer-to-peer status, link entities
//! (`dcgm_link_t` ids) in groups, injection and reads, and fake NvSwitches (recorded with DCGM's
//! injection NVML and NVIDIA's own test suite, `tests.test_nvlink`, `tests.test_nvlink_prm`,
//! `tests.test_field_values`).

mod common;

use common::*;
use dcgm_sys::*;

const AUTO: dcgmOperationMode_t = DCGM_OPERATION_MODE_AUTO;

/// A `dcgm_link_t` id: parent entity group, port, parent id.
fn link(parent_group: u32, port: u32, parent: u32) -> u32 {
    parent_group | (port << 8) | (parent << 24)
}

/// `dcgmGetNvLinkP2PStatus` for `ids` (empty: every GPU), every status preset to 9.
fn p2p(h: dcgmHandle_t, ids: &[u32]) -> (i32, Box<dcgmNvLinkP2PStatus_v1>) {
    let mut p = dcgmNvLinkP2PStatus_v1::boxed_versioned();
    p.numGpus = ids.len() as u32;
    for (i, row) in p.gpus.iter_mut().enumerate() {
        row.entityId = ids.get(i).copied().unwrap_or(0);
        row.linkStatus = [9; 32];
    }
    // SAFETY: a versioned struct.
    let rc = unsafe { lib().dcgmGetNvLinkP2PStatus().unwrap()(h, &mut *p) };
    (rc, p)
}

fn add(h: dcgmHandle_t, g: dcgmGpuGrp_t, group: u32, id: u32) -> i32 {
    // SAFETY: plain arguments.
    unsafe { lib().dcgmGroupAddEntity().unwrap()(h, g, group, id) }
}

fn empty_group(h: dcgmHandle_t) -> dcgmGpuGrp_t {
    let mut g = 0;
    let n = std::ffi::CString::new("links").unwrap();
    // SAFETY: valid pointers.
    let rc = unsafe { lib().dcgmGroupCreate().unwrap()(h, DCGM_GROUP_EMPTY, n.as_ptr(), &mut g) };
    assert_eq!(rc, DCGM_ST_OK);
    g
}

fn inject(h: dcgmHandle_t, group: u32, id: u32, field: u16, value: i64) -> i32 {
    let mut v = dcgmInjectFieldValue_v1::new_versioned();
    v.fieldId = field;
    v.fieldType = u16::from(DCGM_FT_INT64);
    v.ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    v.value.i64_ = value;
    // SAFETY: a versioned value.
    unsafe { lib().dcgmInjectEntityFieldValue().unwrap()(h, group, id, &mut v) }
}

/// One integer read of `dcgmEntitiesGetLatestValues`: (status, value).
fn read(h: dcgmHandle_t, group: u32, id: u32, field: u16, live: bool) -> (i32, i64) {
    let mut pair = dcgmGroupEntityPair_t {
        entityGroupId: group,
        entityId: id,
    };
    let mut f = field;
    let mut out: dcgmFieldValue_v2 = zeroed();
    let flags = if live { DCGM_FV_FLAG_LIVE_DATA } else { 0 };
    // SAFETY: one entity, one field, one value.
    let rc = unsafe {
        lib().dcgmEntitiesGetLatestValues().unwrap()(h, &mut pair, 1, &mut f, 1, flags, &mut out)
    };
    assert_eq!(rc, DCGM_ST_OK);
    // SAFETY: the integer member of a plain-data union.
    (out.status, unsafe { out.value.i64_ })
}

#[test]
fn p2p_status_is_not_supported_towards_itself_and_ok_across_the_fabric() {
    // The default node: 8 GPUs with 18 NVLinks each behind 4 NvSwitches.
    let (_s, h) = Session::embedded(None, AUTO);
    let (rc, p) = p2p(h, &[]);
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(p.numGpus, 8);
    for (i, row) in p.gpus[..8].iter().enumerate() {
        assert_eq!(row.entityId, i as u32);
        for (j, &st) in row.linkStatus[..8].iter().enumerate() {
            let want = if i == j {
                DcgmNvLinkP2pStatusNotSupported
            } else {
                DcgmNvLinkP2pStatusOK
            };
            assert_eq!(st, want, "GPU {i} to {j}");
        }
        // Past the node's GPUs the caller's entries stay.
        assert!(row.linkStatus[8..].iter().all(|&s| s == 9), "{i}");
    }
    assert!(p.gpus[8].linkStatus.iter().all(|&s| s == 9));
}

#[test]
fn p2p_status_of_named_gpus_keeps_the_count_and_rejects_an_unknown_gpu() {
    let (_s, h) = Session::embedded(None, AUTO);
    let (rc, p) = p2p(h, &[3, 1]);
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(
        (p.numGpus, p.gpus[0].entityId, p.gpus[1].entityId),
        (2, 3, 1)
    );
    assert_eq!(p.gpus[0].linkStatus[3], DcgmNvLinkP2pStatusNotSupported);
    assert_eq!(p.gpus[0].linkStatus[1], DcgmNvLinkP2pStatusOK);
    assert_eq!(p.gpus[1].linkStatus[1], DcgmNvLinkP2pStatusNotSupported);
    // More GPUs named than the node has: the first 8 are served, the count stays.
    let (rc, p) = p2p(h, &[0; 10]);
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(p.numGpus, 10);
    assert_eq!(p.gpus[7].linkStatus[0], DcgmNvLinkP2pStatusNotSupported);
    assert!(p.gpus[8].linkStatus.iter().all(|&s| s == 9));
    // A GPU the node does not have fails the call and leaves the struct as it was.
    let (rc, p) = p2p(h, &[0, 20]);
    assert_eq!(rc, DCGM_ST_NVML_NOT_LOADED);
    assert!(p.gpus[0].linkStatus.iter().all(|&s| s == 9));
    let (rc, _) = p2p(h, &[40]);
    assert_eq!(rc, DCGM_ST_BADPARAM);
}

#[test]
fn link_entities_are_addresses_on_a_known_gpu_or_switch() {
    let (_s, h) = Session::embedded(None, AUTO);
    let g = empty_group(h);
    // Any port of a known GPU or NvSwitch goes into a group; an unknown parent does not.
    assert_eq!(add(h, g, DCGM_FE_LINK, link(DCGM_FE_GPU, 0, 0)), DCGM_ST_OK);
    assert_eq!(
        add(h, g, DCGM_FE_LINK, link(DCGM_FE_GPU, 40, 0)),
        DCGM_ST_OK
    );
    assert_eq!(
        add(h, g, DCGM_FE_LINK, link(DCGM_FE_GPU, 100, 0)),
        DCGM_ST_OK
    );
    assert_eq!(
        add(h, g, DCGM_FE_LINK, link(DCGM_FE_SWITCH, 3, 1)),
        DCGM_ST_OK
    );
    assert_eq!(
        add(h, g, DCGM_FE_LINK, link(DCGM_FE_GPU, 0, 9)),
        DCGM_ST_BADPARAM
    );
    assert_eq!(
        add(h, g, DCGM_FE_LINK, link(DCGM_FE_SWITCH, 0, 4)),
        DCGM_ST_BADPARAM
    );
    assert_eq!(
        add(h, g, DCGM_FE_LINK, link(DCGM_FE_CPU, 0, 0)),
        DCGM_ST_BADPARAM
    );

    // Injection takes ports up to twice the most links of a GPU (72), and reads them back.
    let prm = DCGM_FI_DEV_NVLINK_PPCNT_PLR_RX_CODE_TOTAL;
    let port40 = link(DCGM_FE_GPU, 40, 0);
    assert_eq!(inject(h, DCGM_FE_LINK, port40, prm, 5000), DCGM_ST_OK);
    assert_eq!(
        read(h, DCGM_FE_LINK, port40, prm, false),
        (DCGM_ST_OK, 5000)
    );
    let port72 = link(DCGM_FE_GPU, 72, 0);
    assert_eq!(inject(h, DCGM_FE_LINK, port72, prm, 1), DCGM_ST_BADPARAM);
    assert_eq!(
        inject(h, DCGM_FE_LINK, link(DCGM_FE_GPU, 1, 9), prm, 1),
        DCGM_ST_BADPARAM
    );
    assert_eq!(
        inject(h, DCGM_FE_LINK, link(DCGM_FE_SWITCH, 600, 0), prm, 1),
        DCGM_ST_BADPARAM
    );

    // The link state field: 1 for a link that is up, blank for a port with no link.
    let state = DCGM_FI_DEV_NVLINK_GET_STATE;
    assert_eq!(
        read(h, DCGM_FE_LINK, link(DCGM_FE_GPU, 0, 0), state, true),
        (DCGM_ST_OK, 1)
    );
    let (st, v) = read(h, DCGM_FE_LINK, port40, state, true);
    assert_eq!(st, DCGM_ST_OK);
    assert!(v >= DCGM_INT64_BLANK, "{v}");
}

#[test]
fn a_fake_nvswitch_has_blank_fields_where_a_configured_one_reports() {
    let (_s, h) = Session::embedded(None, AUTO);
    let mut c = dcgmCreateFakeEntities_v2::boxed_versioned();
    c.numToCreate = 1;
    c.entityList[0].entity.entityGroupId = DCGM_FE_SWITCH;
    // SAFETY: a versioned request.
    let rc = unsafe { lib().dcgmCreateFakeEntities().unwrap()(h, &mut *c) };
    assert_eq!(rc, DCGM_ST_OK);
    let fake = c.entityList[0].entity.entityId;
    assert_eq!(fake, 4, "after the node's 4 NvSwitches");
    let volt = DCGM_FI_DEV_NVSWITCH_VOLTAGE_MVOLT;
    let (st, v) = read(h, DCGM_FE_SWITCH, 0, volt, true);
    assert_eq!(st, DCGM_ST_OK);
    assert!(v < DCGM_INT64_BLANK, "{v}");
    let (st, v) = read(h, DCGM_FE_SWITCH, fake, volt, true);
    assert_eq!(st, DCGM_ST_OK);
    assert!(v >= DCGM_INT64_BLANK, "{v}");
}
