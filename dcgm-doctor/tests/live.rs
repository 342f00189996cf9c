//! Live sampling on the simulator (feature `live`): the process lists carry each process's
//! memory and its SM utilisation from DCGM's process statistics, and the report lists them.
#![cfg(feature = "live")]

use std::time::Duration;

use dcgm_doctor::Field;
use dcgm_doctor::live::{Live, reader_builder};

#[test]
fn live_samples_carry_the_fp_pipes_and_each_process_with_its_sm_share() {
    let reader = reader_builder(Duration::from_millis(100))
        .library_path(dcgm::testing::simulator_path())
        .build()
        .unwrap();
    let mut live = Live::new(reader, |_| None).unwrap();
    let mut window = dcgm_doctor::Window::default();
    for _ in 0..5 {
        live.tick(&mut window, None).unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(live.notes().is_empty(), "{:?}", live.notes());
    // The FP pipes are watched with the rest.
    for f in [Field::Fp64Active, Field::Fp32Active, Field::Fp16Active] {
        assert!(
            window
                .gpus()
                .any(|(_, s)| s.iter().any(|s| s.get(f).is_some())),
            "{f:?} never read"
        );
    }
    let r = dcgm_doctor::judge(&window);
    assert!(!r.processes.is_empty(), "no processes");
    for p in &r.processes {
        assert!(p.memory_mib.is_some(), "{p:?}");
        assert!(p.sm_util.is_some(), "no SM share: {p:?}");
        assert!(p.listed_share > 0.0, "{p:?}");
    }
    live.shutdown();
}
