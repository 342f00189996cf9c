//! Shared helpers: exclusive use of the (process-global) simulator per test, handles on it,
//! and the timing helpers of the scripted-event tests.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use dcgm::raw::sys::dcgmReturn_t;
use dcgm::testing::{self, SimulatorLock};
use dcgm::{Error, Handle, OperationMode};

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

/// Takes the simulator for one test and configures it (`None`: the default node).
pub fn sim(json: Option<&str>) -> testing::SimulatorLock {
    testing::SimulatorLock::new(json).expect("configure dcgm-sim")
}

pub fn open(mode: OperationMode) -> Handle {
    Handle::builder()
        .library_path(testing::simulator_path())
        .operation_mode(mode)
        .embedded()
        .expect("embedded simulator handle")
}

pub fn code(e: &Error) -> dcgmReturn_t {
    e.code().raw()
}

/// Sleeps until `ms` milliseconds after `t0`.
pub fn until(t0: Instant, ms: u64) {
    let target = t0 + Duration::from_millis(ms);
    let now = Instant::now();
    if target > now {
        std::thread::sleep(target - now);
    }
}

/// Keeps the panic the policy test provokes out of the test output; other panics still print.
pub fn quiet_deliberate_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let deliberate = info
                .payload()
                .downcast_ref::<&str>()
                .is_some_and(|m| m.starts_with("deliberate panic"));
            if !deliberate {
                previous(info);
            }
        }));
    });
}

/// Polls `f` every 10 ms until it is true or `limit` passes.
pub fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    f()
}
