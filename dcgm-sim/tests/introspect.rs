//! The smaller APIs through `dcgm-sys`: modules, introspection, topology and failure reasons.

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::{CStr, c_char};

use common::*;
use dcgm_sys::*;

#[test]
fn modules_introspection_and_failure_reasons() {
    let (_s, h) = Session::embedded(None, AUTO);
    let l = lib();
    // SAFETY: versioned structs and writable outputs.
    unsafe {
        let mut st = dcgmModuleGetStatuses_v1::new_versioned();
        assert_eq!(l.dcgmModuleGetStatuses().unwrap()(h, &mut st), DCGM_ST_OK);
        assert_eq!(st.numStatuses, DcgmModuleIdCount);
        // As libdcgm 4.6.0: the core and the NvSwitch modules load at start, the others on
        // first use; a loaded module cannot be denylisted.
        let loaded: Vec<u32> = st.statuses[..st.numStatuses as usize]
            .iter()
            .filter(|s| s.status == DcgmModuleStatusLoaded)
            .map(|s| s.id)
            .collect();
        assert_eq!(loaded, [DcgmModuleIdCore, DcgmModuleIdNvSwitch]);
        assert_eq!(l.dcgmPolicyTrigger().unwrap()(h), DCGM_ST_OK);
        assert_eq!(
            l.dcgmModuleDenylist().unwrap()(h, DcgmModuleIdPolicy),
            DCGM_ST_IN_USE
        );
        assert_eq!(
            l.dcgmModuleDenylist().unwrap()(h, DcgmModuleIdHealth),
            DCGM_ST_OK
        );
        assert_eq!(
            l.dcgmModuleDenylist().unwrap()(h, DcgmModuleIdCore),
            DCGM_ST_BADPARAM
        );
        assert_eq!(l.dcgmModuleGetStatuses().unwrap()(h, &mut st), DCGM_ST_OK);
        assert_eq!(
            st.statuses[DcgmModuleIdHealth as usize].status,
            DcgmModuleStatusDenylisted
        );
        assert_eq!(
            l.dcgmHealthSet().unwrap()(h, ALL, DCGM_HEALTH_WATCH_ALL),
            DCGM_ST_MODULE_NOT_LOADED
        );
        let mut name: *const c_char = std::ptr::null();
        assert_eq!(
            l.dcgmModuleIdToName().unwrap()(DcgmModuleIdDiag, &mut name),
            DCGM_ST_OK
        );
        assert_eq!(CStr::from_ptr(name).to_str().unwrap(), "Diag");

        let mut mem = dcgmIntrospectMemory_v1::new_versioned();
        assert_eq!(
            l.dcgmIntrospectGetHostengineMemoryUsage().unwrap()(h, &mut mem, 0),
            DCGM_ST_OK
        );
        assert!(mem.bytesUsed > 1 << 20);
        let mut cpu = dcgmIntrospectCpuUtil_v1::new_versioned();
        assert_eq!(
            l.dcgmIntrospectGetHostengineCpuUtilization().unwrap()(h, &mut cpu, 0),
            DCGM_ST_OK
        );
        assert!(
            cpu.total > 0.0 && cpu.total < 1.0 && (cpu.kernel + cpu.user - cpu.total).abs() < 1e-12
        );

        let mut mask = 0u64;
        assert_eq!(
            l.dcgmSelectGpusByTopology().unwrap()(h, 0b1011_0100, 3, &mut mask, 0),
            DCGM_ST_OK
        );
        assert_eq!(mask, 0b0011_0100);
        let mut p2p = Box::new(dcgmNvLinkP2PStatus_v1::new_versioned());
        assert_eq!(
            l.dcgmGetNvLinkP2PStatus().unwrap()(h, &mut *p2p),
            DCGM_ST_OK
        );
        assert_eq!(p2p.numGpus, 8);
        assert_eq!(p2p.gpus[2].linkStatus[5], DcgmNvLinkP2pStatusOK);

        let meta = l.dcgmGetErrorMeta().unwrap()(DCGM_FR_VOLATILE_DBE_DETECTED);
        assert!(!meta.is_null());
        assert_eq!((*meta).errorId, DCGM_FR_VOLATILE_DBE_DETECTED);
        assert_eq!(
            l.dcgmErrorGetCategoryByCode().unwrap()(DCGM_FR_PCI_REPLAY_RATE),
            DCGM_FR_EC_HARDWARE_PCIE
        );
        assert!(!l.dcgmErrorGetFormatMsgByCode().unwrap()(DCGM_FR_XID_ERROR).is_null());
        assert!(l.dcgmGetErrorMeta().unwrap()(DCGM_FR_ERROR_SENTINEL).is_null());
        assert_eq!(
            l.dcgmErrorGetPriorityByCode().unwrap()(DCGM_FR_ERROR_SENTINEL),
            DCGM_ERROR_UNKNOWN
        );

        // The driver is attached: attaching it again succeeds and changes nothing.
        assert_eq!(l.dcgmAttachDriver().unwrap()(h), DCGM_ST_OK);
        assert_eq!(
            l.dcgmEngineRun().unwrap()(5555, std::ptr::null(), 0),
            DCGM_ST_NOT_SUPPORTED
        );
    }
}
