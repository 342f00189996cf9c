//! `HandleBuilder::keep_engine_until_exit`: the embedded engine outlives its last handle and a
//! later handle of the process reuses it. Its own test binary: a kept engine stays for the
//! rest of the process, which would leak into other tests.

use std::ffi::CString;

use dcgm::raw::sys::*;
use dcgm::{Handle, testing};

fn open(keep: bool) -> Handle {
    Handle::builder()
        .library_path(testing::simulator_path())
        .keep_engine_until_exit(keep)
        .embedded()
        .unwrap()
}

/// A group made through the raw API, which no RAII object destroys.
fn raw_group(h: &Handle, name: &str) -> dcgmGpuGrp_t {
    let c = CString::new(name).unwrap();
    let mut id = 0;
    // SAFETY: a live handle, a C string and an out-pointer.
    let rc = unsafe {
        dcgm::raw::library(h).dcgmGroupCreate().unwrap()(
            dcgm::raw::handle(h),
            DCGM_GROUP_EMPTY,
            c.as_ptr(),
            &mut id,
        )
    };
    assert_eq!(rc, DCGM_ST_OK);
    id
}

fn group_exists(h: &Handle, id: dcgmGpuGrp_t) -> bool {
    h.system()
        .group_ids()
        .unwrap()
        .iter()
        .any(|g| dcgm::raw::Binding::raw(g) == id)
}

#[test]
fn a_kept_engine_survives_its_last_handle_and_is_reused() {
    // Without the option the engine stops with its last handle: its groups are gone.
    let h = open(false);
    let id = raw_group(&h, "not-kept");
    h.close().unwrap();
    let h = open(false);
    assert!(!group_exists(&h, id), "a stopped engine keeps nothing");
    h.close().unwrap();

    // With it, the engine keeps running after the last handle is dropped.
    let h = open(true);
    let id = raw_group(&h, "kept");
    h.close().unwrap();
    let h = open(false);
    assert!(
        group_exists(&h, id),
        "the kept engine is reused with its state"
    );
    drop(h);
    let h = open(false);
    assert!(
        group_exists(&h, id),
        "once kept, the engine stays until the process exits"
    );
}
