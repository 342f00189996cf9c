//! Shared helpers: exclusive use of the (process-global) simulator per test.

#![allow(dead_code)]

use std::ffi::CString;
use std::sync::{Mutex, MutexGuard};

use dcgm::{Handle, OperationMode};

static SERIAL: Mutex<()> = Mutex::new(());

/// Holds the simulator for one test; resets its configuration when dropped.
pub struct Sim {
    _g: MutexGuard<'static, ()>,
}

type ConfigureFn = unsafe extern "C" fn(*const std::ffi::c_char) -> i32;

/// Calls the simulator's `dcgmSimConfigure` (applies at the next dcgmInit).
pub fn configure(json: Option<&str>) -> i32 {
    // Kept loaded for the whole test run: unloading the simulator would forget the config.
    static LIB: std::sync::OnceLock<libloading::Library> = std::sync::OnceLock::new();
    let lib = LIB.get_or_init(|| {
        // SAFETY: loading the simulator runs no initialisers with preconditions.
        unsafe { libloading::Library::new(dcgm::testing::simulator_path()) }.unwrap()
    });
    // SAFETY: the simulator exports this function with this signature.
    let f: libloading::Symbol<ConfigureFn> = unsafe { lib.get(b"dcgmSimConfigure\0") }.unwrap();
    let c = json.map(|j| CString::new(j).unwrap());
    // SAFETY: NULL or a C string.
    unsafe { f(c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) }
}

impl Sim {
    pub fn new(json: Option<&str>) -> Self {
        let g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        assert_eq!(configure(json), 0);
        Sim { _g: g }
    }

    pub fn handle(&self, mode: OperationMode) -> Handle {
        Handle::builder()
            .library_path(dcgm::testing::simulator_path())
            .operation_mode(mode)
            .embedded()
            .expect("embedded handle on the simulator")
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        configure(None);
    }
}

/// Number of groups and field groups the engine holds (for leak checks).
pub fn object_counts(h: &Handle) -> (usize, usize) {
    let lib = h.library();
    let mut ids = [0usize; 64];
    let mut n = 0u32;
    // SAFETY: room for 64 ids and a valid count pointer.
    let rc = unsafe { lib.dcgmGroupGetAllIds().unwrap()(h.raw(), ids.as_mut_ptr(), &mut n) };
    assert_eq!(rc, 0);
    (n as usize, dcgm::all_field_groups(h).unwrap().len())
}
