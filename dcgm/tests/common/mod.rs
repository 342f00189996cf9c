//! Shared helpers: exclusive use of the (process-global) simulator per test.

#![allow(dead_code)]

use dcgm::testing::SimulatorLock;
use dcgm::{Handle, OperationMode};

/// Holds the simulator for one test; resets its configuration when dropped.
pub struct Sim {
    _lock: SimulatorLock,
}

/// Applies a simulator configuration (at the next dcgmInit).
pub fn configure(json: Option<&str>) {
    dcgm::testing::configure_simulator(json).unwrap();
}

impl Sim {
    pub fn new(json: Option<&str>) -> Self {
        Sim {
            _lock: SimulatorLock::new(json).unwrap(),
        }
    }

    pub fn handle(&self, mode: OperationMode) -> Handle {
        Handle::builder()
            .library_path(dcgm::testing::simulator_path())
            .operation_mode(mode)
            .embedded()
            .expect("embedded handle on the simulator")
    }
}

/// Number of groups and field groups the engine holds (for leak checks).
pub fn object_counts(h: &Handle) -> (usize, usize) {
    let lib = dcgm::raw::library(h);
    let mut ids = [0usize; 64];
    let mut n = 0u32;
    // SAFETY: room for 64 ids and a valid count pointer.
    let rc = unsafe {
        lib.dcgmGroupGetAllIds().unwrap()(dcgm::raw::handle(h), ids.as_mut_ptr(), &mut n)
    };
    assert_eq!(rc, 0);
    (n as usize, dcgm::all_field_groups(h).unwrap().len())
}
