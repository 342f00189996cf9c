//! Configuration: set, get and enforce, and the per-GPU errors of a status, against dcgm-sim.
//!
//! The simulator is process-global and reads its configuration (`dcgmSimConfigure`) at the
//! next `dcgmInit`: every test takes the simulator lock, configures, opens its handle, and
//! closes every handle before returning.

mod common;

use common::*;
use dcgm::raw::sys::*;
use dcgm::*;

#[test]
fn config_set_is_reflected_and_errors_name_the_gpu() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let g = Group::with_gpus(&h, "beyond-config", &[0, 1]).unwrap();
    let before = g.config_get(ConfigKind::Target).unwrap();
    assert_eq!(before.len(), 2);
    assert!(
        before
            .iter()
            .all(|c| c.power_limit_w.is_none() && c.ecc_mode.is_none())
    );

    let want = GpuConfig {
        power_limit_w: Some(500),
        sm_app_clock_mhz: Some(1500),
        compute_mode: Some(ComputeMode::ExclusiveProcess),
        ..GpuConfig::default()
    };
    g.config_set(&want).unwrap();
    let target = g.config_get(ConfigKind::Target).unwrap();
    assert_eq!(target.iter().map(|c| c.gpu).collect::<Vec<_>>(), [0, 1]);
    for c in &target {
        assert_eq!(c.power_limit_w, Some(500));
        assert_eq!(c.sm_app_clock_mhz, Some(1500));
        assert_eq!(c.compute_mode, Some(ComputeMode::ExclusiveProcess));
        assert_eq!(c.ecc_mode, None, "not set");
        assert_eq!(c.mem_app_clock_mhz, None);
    }
    let current = g.config_get(ConfigKind::Current).unwrap();
    assert!(
        current
            .iter()
            .all(|c| c.power_limit_w == Some(500) && c.ecc_mode == Some(true))
    );
    assert_eq!(
        h.system().device_attributes(1).unwrap().power_limit_w,
        Some(500)
    );
    g.config_enforce().unwrap();

    // 100 W is below what the GPUs accept: the error lists each GPU.
    let e = g
        .config_set(&GpuConfig {
            power_limit_w: Some(100),
            ..GpuConfig::default()
        })
        .unwrap_err();
    assert_eq!(code(&e), DCGM_ST_BADPARAM);
    let msg = e.to_string();
    assert!(msg.contains("GPU 0") && msg.contains("GPU 1"), "{msg}");
    assert!(matches!(
        g.config_set(&GpuConfig::default()),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        g.config_set(&GpuConfig {
            power_limit_w: Some(u32::MAX),
            ..GpuConfig::default()
        }),
        Err(Error::InvalidArgument(_))
    ));
    let empty = Group::create(&h, "beyond-config-empty", GroupType::Empty).unwrap();
    assert_eq!(empty.config_get(ConfigKind::Current).unwrap(), vec![]);
    drop((g, empty));
    h.close().unwrap();
}
