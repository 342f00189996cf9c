//! The simulator speaking an older DCGM release (`dcgm_version` in its config; the
//! environment variable `DCGM_SIM_VERSION` is covered by dcgm-tools' `sim_releases` test, which
//! runs the tools as separate processes): each answer below is what the real library of that
//! release gave (3.3.9, 4.1.1, 4.5.3 and 4.6.0, measured through DCGM's injection NVML).

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::{CStr, CString, c_char};

use common::*;
use dcgm_sys::*;

const AUTO: dcgmOperationMode_t = DCGM_OPERATION_MODE_AUTO;

/// The simulator's config for release `v` (None: the default, 4.6.0).
fn speaking(v: Option<&str>) -> Option<String> {
    v.map(|v| format!(r#"{{"dcgm_version": "{v}"}}"#))
}

/// An embedded engine of the default node speaking release `v`.
fn engine(v: Option<&str>) -> (Session, dcgmHandle_t) {
    Session::embedded(speaking(v).as_deref(), AUTO)
}

fn version_string() -> String {
    let mut info = dcgmVersionInfo_v2::new_versioned();
    // SAFETY: a versioned struct valid for the call.
    let rc = unsafe { lib().dcgmVersionInfo().unwrap()(&mut info) };
    assert_eq!(rc, DCGM_ST_OK);
    // SAFETY: the library NUL-terminates the string.
    unsafe { CStr::from_ptr(info.rawBuildInfoString.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

fn text(s: &[c_char]) -> String {
    // SAFETY: the library NUL-terminates every string it writes.
    unsafe { CStr::from_ptr(s.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn version_info_reports_the_release_spoken_before_and_after_init() {
    for (v, want) in [
        (None, "4.6.0"),
        (Some("3.3.9"), "3.3.9"),
        (Some("4.1.1"), "4.1.1"),
        (Some("4.5.3"), "4.5.3"),
    ] {
        // Before dcgmInit: a client reads the version first, to know what to send.
        let s = Session::new(speaking(v).as_deref());
        assert!(
            version_string().starts_with(&format!("version:{want};")),
            "{v:?}"
        );
        drop(s);
        let (_s, _h) = engine(v);
        assert!(
            version_string().starts_with(&format!("version:{want};")),
            "{v:?}"
        );
    }
}

#[test]
fn a_release_the_simulator_does_not_speak_is_a_config_error() {
    let _s = Session::new(None);
    for bad in ["5.0.0", "3.3.8", "4.7.0", "4.5", "latest"] {
        let json = format!(r#"{{"dcgm_version": "{bad}"}}"#);
        assert_eq!(configure(Some(&json)), DCGM_ST_BADPARAM, "{bad}");
    }
    let e = dcgm_sim::config::SimConfig::parse("dcgm_version = \"5.0.0\"").unwrap_err();
    assert!(e.contains("3.3.9 and 4.0.0 to 4.6.x"), "{e}");
    let e = dcgm_sim::config::SimConfig::parse("dcgm_version = \"4.5\"").unwrap_err();
    assert!(e.contains("MAJOR.MINOR.PATCH"), "{e}");
    let cfg = dcgm_sim::config::SimConfig::parse("dcgm_version = \"4.5.3\"").unwrap();
    assert_eq!(cfg.dcgm_version.as_deref(), Some("4.5.3"));
}

#[test]
fn group_info_is_version_2_on_3_3_9_and_version_3_from_4_0() {
    for (v, v2, v3) in [
        (Some("3.3.9"), DCGM_ST_OK, DCGM_ST_VER_MISMATCH),
        (Some("4.1.1"), DCGM_ST_VER_MISMATCH, DCGM_ST_OK),
        (None, DCGM_ST_VER_MISMATCH, DCGM_ST_OK),
    ] {
        let (_s, h) = engine(v);
        let mut old = dcgmGroupInfo_v2::new_versioned();
        // SAFETY: a v2 struct with its version word; the simulator reads the word first.
        let rc = unsafe {
            lib().dcgmGroupGetInfo().unwrap()(h, DCGM_GROUP_ALL_GPUS, (&raw mut old).cast())
        };
        assert_eq!(rc, v2, "{v:?} v2");
        if rc == DCGM_ST_OK {
            assert_eq!(old.count, 8);
            assert_eq!(old.entityList[7].entityId, 7);
        }
        let mut new = dcgmGroupInfo_v3::boxed_versioned();
        // SAFETY: a versioned struct valid for the call.
        let rc = unsafe { lib().dcgmGroupGetInfo().unwrap()(h, DCGM_GROUP_ALL_GPUS, &mut *new) };
        assert_eq!(rc, v3, "{v:?} v3");
    }
}

#[test]
fn health_response_is_version_4_on_3_3_9() {
    let (_s, h) = engine(Some("3.3.9"));
    let mut r5 = dcgmHealthResponse_v5::boxed_versioned();
    // SAFETY: a versioned struct valid for the call.
    let rc = unsafe { lib().dcgmHealthCheck().unwrap()(h, DCGM_GROUP_ALL_GPUS, &mut *r5) };
    assert_eq!(rc, DCGM_ST_VER_MISMATCH);
    let mut r4 = dcgmHealthResponse_v4::boxed_versioned();
    assert_eq!(r4.version, dcgmHealthResponse_version4);
    // SAFETY: a v4 struct; the simulator writes no more than its size.
    let rc =
        unsafe { lib().dcgmHealthCheck().unwrap()(h, DCGM_GROUP_ALL_GPUS, (&raw mut *r4).cast()) };
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!(r4.overallHealth, DCGM_HEALTH_RESULT_PASS);
    assert_eq!(r4.incidentCount, 0);
}

#[test]
fn configuration_is_version_1_on_3_3_9() {
    let (_s, h) = engine(Some("3.3.9"));
    let mut v2 = [dcgmConfig_v2::new_versioned(); 8];
    // SAFETY: eight configurations, the first versioned.
    let rc = unsafe {
        lib().dcgmConfigGet().unwrap()(
            h,
            DCGM_GROUP_ALL_GPUS,
            DCGM_CONFIG_CURRENT_STATE,
            8,
            v2.as_mut_ptr(),
            0,
        )
    };
    assert_eq!(rc, DCGM_ST_VER_MISMATCH);
    let mut v1 = [dcgmConfig_v1::new_versioned(); 8];
    // SAFETY: eight v1 configurations; the simulator writes them in the v1 layout.
    let rc = unsafe {
        lib().dcgmConfigGet().unwrap()(
            h,
            DCGM_GROUP_ALL_GPUS,
            DCGM_CONFIG_CURRENT_STATE,
            8,
            v1.as_mut_ptr().cast(),
            0,
        )
    };
    assert_eq!(rc, DCGM_ST_OK);
    for (i, c) in v1.iter().enumerate() {
        assert_eq!(c.version, dcgmConfig_version1);
        assert_eq!(c.gpuId, i as u32);
        assert_eq!(c.powerLimit.val, 700, "GPU {i}");
    }
    // A v1 request is read as one: a power limit set through it is enforced.
    let mut set = v1[0];
    set.eccMode = DCGM_INT32_BLANK as u32;
    set.computeMode = DCGM_INT32_BLANK as u32;
    set.perfState.syncBoost = DCGM_INT32_BLANK as u32;
    set.perfState.targetClocks.memClock = DCGM_INT32_BLANK as u32;
    set.perfState.targetClocks.smClock = DCGM_INT32_BLANK as u32;
    set.powerLimit = dcgmConfigPowerLimit_t {
        type_: DCGM_CONFIG_POWER_CAP_INDIVIDUAL,
        val: 500,
    };
    let n = CString::new("one").unwrap();
    let mut g = 0;
    // SAFETY: valid pointers.
    let rc = unsafe { lib().dcgmGroupCreate().unwrap()(h, DCGM_GROUP_EMPTY, n.as_ptr(), &mut g) };
    assert_eq!(rc, DCGM_ST_OK);
    // SAFETY: plain arguments.
    assert_eq!(
        unsafe { lib().dcgmGroupAddDevice().unwrap()(h, g, 2) },
        DCGM_ST_OK
    );
    // SAFETY: a v1 configuration with its version word.
    let rc = unsafe { lib().dcgmConfigSet().unwrap()(h, g, (&raw mut set).cast(), 0) };
    assert_eq!(rc, DCGM_ST_OK);
    let mut got = [dcgmConfig_v1::new_versioned(); 1];
    // SAFETY: one v1 configuration.
    let rc = unsafe {
        lib().dcgmConfigGet().unwrap()(
            h,
            g,
            DCGM_CONFIG_TARGET_STATE,
            1,
            got.as_mut_ptr().cast(),
            0,
        )
    };
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!((got[0].gpuId, got[0].powerLimit.val), (2, 500));
}

/// Device topology of GPU 0 and the all-GPUs group's, as raw buffers of the v2 size with the
/// v2 version word sent.
fn topologies(h: dcgmHandle_t) -> (Box<dcgmDeviceTopology_v2>, Box<dcgmGroupTopology_v2>) {
    let mut d = Box::new(dcgmDeviceTopology_v2::new_versioned());
    // SAFETY: a versioned struct valid for the call.
    let rc = unsafe { lib().dcgmGetDeviceTopology().unwrap()(h, 0, &mut *d) };
    assert_eq!(rc, DCGM_ST_OK);
    let mut g = Box::new(dcgmGroupTopology_v2::new_versioned());
    // SAFETY: a versioned struct valid for the call.
    let rc = unsafe { lib().dcgmGetGroupTopology().unwrap()(h, DCGM_GROUP_ALL_GPUS, &mut *g) };
    assert_eq!(rc, DCGM_ST_OK);
    (d, g)
}

#[test]
fn topology_is_written_in_the_version_1_layout_before_4_6_0() {
    let (d2, g2) = {
        let (_s, h) = engine(None);
        topologies(h)
    };
    assert_eq!(d2.version, dcgmDeviceTopology_version2);
    assert_eq!(g2.version, dcgmGroupTopology_version2);
    assert_eq!(d2.numGpus, 7);
    for v in ["4.5.3", "3.3.9"] {
        let (_s, h) = engine(Some(v));
        let (d, g) = topologies(h);
        // The v2 word sent is not checked; the answer says v1, in the v1 layout.
        assert_eq!(d.version, dcgmDeviceTopology_version1, "{v}");
        assert_eq!(g.version, dcgmGroupTopology_version1, "{v}");
        // SAFETY: the simulator wrote a whole v1 struct at the start of the buffer.
        let d1 = unsafe { &*(&raw const *d).cast::<dcgmDeviceTopology_v1>() };
        // SAFETY: as above.
        let g1 = unsafe { &*(&raw const *g).cast::<dcgmGroupTopology_v1>() };
        assert_eq!(d1.numGpus, d2.numGpus, "{v}");
        assert_eq!(d1.cpuAffinityMask, d2.cpuAffinityMask, "{v}");
        for (p1, p2) in d1.gpuPaths.iter().zip(&d2.gpuPaths).take(7) {
            assert_eq!(p1.gpuId, p2.gpuId, "{v}");
            assert_eq!(u64::from(p1.path), p2.path, "{v}");
            assert_eq!(u64::from(p1.localNvLinkIds), p2.localNvLinkIds, "{v}");
        }
        // 18 NVLinks through the switches, and the PCIe part.
        assert_eq!(
            u64::from(d1.gpuPaths[0].path),
            DCGM_TOPOLOGY_NVLINK18 | DCGM_TOPOLOGY_CPU
        );
        assert_eq!(g1.groupCpuAffinityMask, g2.groupCpuAffinityMask, "{v}");
        assert_eq!(g1.numaOptimalFlag, g2.numaOptimalFlag, "{v}");
        assert_eq!(u64::from(g1.slowestPath), g2.slowestPath, "{v}");
        // Any version word at all, as those releases do.
        let mut odd = Box::new(dcgmDeviceTopology_v2::new_versioned());
        odd.version = 0x0700_0338;
        // SAFETY: a buffer of the v2 size.
        let rc = unsafe { lib().dcgmGetDeviceTopology().unwrap()(h, 0, &mut *odd) };
        assert_eq!((rc, odd.version), (DCGM_ST_OK, dcgmDeviceTopology_version1));
    }
}

#[test]
fn nvlink_status_is_version_4_from_4_0_to_4_5_3_and_version_3_on_3_3_9() {
    let v5_states = {
        let (_s, h) = engine(None);
        let mut v5 = dcgmNvLinkStatus_v5::boxed_versioned();
        // SAFETY: a versioned struct valid for the call.
        assert_eq!(
            unsafe { lib().dcgmGetNvLinkLinkStatus().unwrap()(h, &mut *v5) },
            DCGM_ST_OK
        );
        let mut v4 = dcgmNvLinkStatus_v4::boxed_versioned();
        // SAFETY: a v4 struct with its word; refused before it is read.
        let rc = unsafe { lib().dcgmGetNvLinkLinkStatus().unwrap()(h, (&raw mut *v4).cast()) };
        assert_eq!(
            rc, DCGM_ST_VER_MISMATCH,
            "4.6.0 as the simulator always answered"
        );
        v5
    };
    for v in ["4.5.3", "4.1.1"] {
        let (_s, h) = engine(Some(v));
        let mut v5 = dcgmNvLinkStatus_v5::boxed_versioned();
        // SAFETY: a versioned struct valid for the call.
        let rc = unsafe { lib().dcgmGetNvLinkLinkStatus().unwrap()(h, &mut *v5) };
        assert_eq!(rc, DCGM_ST_VER_MISMATCH, "{v}");
        let mut v4 = dcgmNvLinkStatus_v4::boxed_versioned();
        // SAFETY: a v4 struct; the simulator writes no more than its size.
        let rc = unsafe { lib().dcgmGetNvLinkLinkStatus().unwrap()(h, (&raw mut *v4).cast()) };
        assert_eq!(rc, DCGM_ST_OK, "{v}");
        assert_eq!((v4.numGpus, v4.numNvSwitches), (8, 4), "{v}");
        for (a, b) in v4.gpus.iter().zip(&v5_states.gpus).take(8) {
            assert_eq!(a.entityId, b.entityId);
            assert_eq!(a.linkState[..], b.linkState[..18], "{v}");
        }
        let mut v3 = dcgmNvLinkStatus_v3::boxed_versioned();
        // SAFETY: a v3 struct with its word; refused before it is read.
        let rc = unsafe { lib().dcgmGetNvLinkLinkStatus().unwrap()(h, (&raw mut *v3).cast()) };
        assert_eq!(rc, DCGM_ST_VER_MISMATCH, "{v}");
    }
    let (_s, h) = engine(Some("3.3.9"));
    let mut v3 = dcgmNvLinkStatus_v3::boxed_versioned();
    assert_eq!(v3.version, dcgmNvLinkStatus_version3);
    // SAFETY: a v3 struct; the simulator writes no more than its size.
    let rc = unsafe { lib().dcgmGetNvLinkLinkStatus().unwrap()(h, (&raw mut *v3).cast()) };
    assert_eq!(rc, DCGM_ST_OK);
    assert_eq!((v3.numGpus, v3.numNvSwitches), (8, 4));
    assert_eq!(v3.gpus[1].linkState[..], v5_states.gpus[1].linkState[..18]);
    assert_eq!(
        v3.nvSwitches[0].linkState[..],
        v5_states.nvSwitches[0].linkState[..64]
    );
    for word in [dcgmNvLinkStatus_version4, dcgmNvLinkStatus_version5] {
        let mut v5 = dcgmNvLinkStatus_v5::boxed_versioned();
        v5.version = word;
        // SAFETY: a buffer of the largest layout.
        let rc = unsafe { lib().dcgmGetNvLinkLinkStatus().unwrap()(h, &mut *v5) };
        assert_eq!(rc, DCGM_ST_VER_MISMATCH, "{word:#x}");
    }
}

fn field_known(id: u16) -> bool {
    // SAFETY: a plain id.
    !unsafe { lib().DcgmFieldGetById().unwrap()(id) }.is_null()
}

#[test]
fn a_field_the_release_lacks_is_unknown_and_refuses_its_field_group() {
    {
        let (_s, h) = engine(Some("4.1.1"));
        // DCGM_FI_DEV_PCIE_CORRECTABLE_ERROR_TOTAL (1501) came with 4.4.2.
        assert!(!field_known(1501));
        assert!(field_known(150) && field_known(165) && field_known(153));
        assert_eq!(
            field_group(h, "with-1501", &[150, 1501]),
            Err(DCGM_ST_BADPARAM)
        );
        assert!(field_group(h, "without", &[150, 165]).is_ok());
        // A tag resolves through its id.
        let tag = CString::new("pcie_correctable_errors_total").unwrap();
        // SAFETY: a NUL-terminated tag.
        let by_tag = unsafe { lib().DcgmFieldGetByTag().unwrap()(tag.as_ptr()) };
        assert!(by_tag.is_null());
    }
    {
        let (_s, h) = engine(Some("3.3.9"));
        for id in [165, 166, 170, 153, 346, 174, 1501, 1507, 175, 1524] {
            assert!(!field_known(id), "{id}");
        }
        assert_eq!(field_group(h, "with-165", &[165]), Err(DCGM_ST_BADPARAM));
    }
    {
        let (_s, h) = engine(Some("4.5.3"));
        assert!(field_known(1501) && field_known(1507) && !field_known(175));
        assert!(field_group(h, "with-1501", &[150, 1501]).is_ok());
    }
    let (_s, h) = engine(None);
    assert!(field_known(1501) && field_known(175) && field_known(1524));
    assert!(field_group(h, "with-1501", &[150, 1501, 175]).is_ok());
}

#[test]
fn a_function_the_release_lacks_answers_function_not_found() {
    for (v, since_4_5, since_4_2) in [
        (
            "4.1.1",
            DCGM_ST_FUNCTION_NOT_FOUND,
            DCGM_ST_FUNCTION_NOT_FOUND,
        ),
        ("4.2.3", DCGM_ST_FUNCTION_NOT_FOUND, DCGM_ST_OK),
        ("4.5.3", DCGM_ST_OK, DCGM_ST_OK),
    ] {
        let (_s, h) = engine(Some(v));
        // SAFETY: a plain handle.
        let rc = unsafe { lib().dcgmEmptyCache().unwrap()(h) };
        assert_eq!(rc, since_4_5, "{v} dcgmEmptyCache");
        let mut arch = 0;
        // SAFETY: a writable architecture.
        let rc = unsafe { lib().dcgmGetGpuChipArchitecture().unwrap()(h, 0, &mut arch) };
        assert_eq!(rc, since_4_2, "{v} dcgmGetGpuChipArchitecture");
        let mut p = dcgmConnectV3Params_v1::new_versioned();
        let addr = CString::new("unix:///nowhere/dcgm-sim-personality").unwrap();
        let mut ch = 0;
        // SAFETY: valid pointers.
        let rc = unsafe { lib().dcgmConnect_v3().unwrap()(addr.as_ptr(), &mut p, &mut ch) };
        if since_4_5 == DCGM_ST_OK {
            assert_ne!(rc, DCGM_ST_FUNCTION_NOT_FOUND, "{v} dcgmConnect_v3");
        } else {
            assert_eq!(rc, DCGM_ST_FUNCTION_NOT_FOUND, "{v} dcgmConnect_v3");
        }
    }
    let (_s, h) = engine(Some("3.3.9"));
    // SAFETY: a plain handle and condition; refused before anything is read.
    let rc = unsafe {
        lib().dcgmPolicyRegister_v2().unwrap()(
            h,
            DCGM_GROUP_ALL_GPUS,
            DCGM_POLICY_COND_XID,
            None,
            0,
        )
    };
    assert_eq!(rc, DCGM_ST_FUNCTION_NOT_FOUND);
    let mut p2p = dcgmNvLinkP2PStatus_v1::boxed_versioned();
    // SAFETY: a versioned struct valid for the call.
    let rc = unsafe { lib().dcgmGetNvLinkP2PStatus().unwrap()(h, &mut *p2p) };
    assert_eq!(rc, DCGM_ST_FUNCTION_NOT_FOUND);
}

#[test]
fn diagnostics_accept_the_request_and_response_versions_of_the_release() {
    let run = |h: dcgmHandle_t, request: u32, response: u32| -> (dcgmReturn_t, String) {
        let mut rd = dcgmRunDiag_v10::boxed_versioned();
        rd.version = request;
        rd.groupId = DCGM_GROUP_ALL_GPUS;
        rd.validate = 1;
        let mut r = dcgmDiagResponse_v12::boxed_versioned();
        r.version = response;
        // SAFETY: buffers of the largest layouts, the words naming smaller or equal ones.
        let rc = unsafe { lib().dcgmActionValidate_v2().unwrap()(h, &mut *rd, &mut *r) };
        let p = (&raw const *r).cast::<u8>();
        // SAFETY: the three layouts have the same size; the word says which one was written.
        let release = unsafe {
            match response {
                w if w == dcgmDiagResponse_version10 => {
                    text(&(*p.cast::<dcgmDiagResponse_v10>()).dcgmVersion)
                }
                w if w == dcgmDiagResponse_version11 => {
                    text(&(*p.cast::<dcgmDiagResponse_v11>()).dcgmVersion)
                }
                _ => text(&r.dcgmVersion),
            }
        };
        (rc, release)
    };
    let (r10, r11, r12) = (
        dcgmDiagResponse_version10,
        dcgmDiagResponse_version11,
        dcgmDiagResponse_version12,
    );
    let (q8, q9, q10) = (
        dcgmRunDiag_version8,
        dcgmRunDiag_version9,
        dcgmRunDiag_version10,
    );
    {
        let (_s, h) = engine(Some("3.3.9"));
        assert_eq!(run(h, q8, r10), (DCGM_ST_OK, "3.3.9".to_string()));
        assert_eq!(run(h, q9, r10).0, DCGM_ST_VER_MISMATCH);
        assert_eq!(run(h, q8, r11).0, DCGM_ST_VER_MISMATCH);
    }
    {
        let (_s, h) = engine(Some("4.1.1"));
        assert_eq!(run(h, q10, r11), (DCGM_ST_OK, "4.1.1".to_string()));
        assert_eq!(run(h, q10, r12).0, DCGM_ST_VER_MISMATCH);
        let mut r = dcgmDiagResponse_v12::boxed_versioned();
        // SAFETY: a versioned struct valid for the call.
        let rc = unsafe {
            lib().dcgmRunDiagnostic().unwrap()(h, DCGM_GROUP_ALL_GPUS, DCGM_DIAG_LVL_SHORT, &mut *r)
        };
        assert_eq!(rc, DCGM_ST_VER_MISMATCH);
    }
    {
        let (_s, h) = engine(Some("4.0.0"));
        assert_eq!(run(h, q10, r11).0, DCGM_ST_VER_MISMATCH);
        assert_eq!(run(h, q9, r11), (DCGM_ST_OK, "4.0.0".to_string()));
    }
    let (_s, h) = engine(None);
    assert_eq!(run(h, q10, r12), (DCGM_ST_OK, "4.6.0".to_string()));
}

#[test]
fn start_embedded_params_version_3_come_with_4_3_1() {
    for (v, want) in [("4.1.1", DCGM_ST_VER_MISMATCH), ("4.3.1", DCGM_ST_OK)] {
        let s = Session::new(speaking(Some(v)).as_deref());
        // SAFETY: no arguments.
        assert_eq!(unsafe { lib().dcgmInit().unwrap()() }, DCGM_ST_OK);
        let mut p3 = dcgmStartEmbeddedV2Params_v3::new_versioned();
        p3.opMode = AUTO;
        // SAFETY: a versioned struct valid for the call.
        let rc = unsafe { lib().dcgmStartEmbedded_v2().unwrap()((&raw mut p3).cast()) };
        assert_eq!(rc, want, "{v} v3");
        let mut p2 = dcgmStartEmbeddedV2Params_v2::new_versioned();
        p2.opMode = AUTO;
        // SAFETY: a versioned struct valid for the call.
        let rc = unsafe { lib().dcgmStartEmbedded_v2().unwrap()((&raw mut p2).cast()) };
        assert_eq!(rc, DCGM_ST_OK, "{v} v2");
        assert_eq!(p2.dcgmHandle, DCGM_EMBEDDED_HANDLE);
        drop(s);
    }
}
