//! Introspection, modules and GPU status against dcgm-sim.
//!
//! The simulator is process-global and reads its configuration (`dcgmSimConfigure`) at the
//! next `dcgmInit`: every test takes the simulator lock, configures, opens its handle, and
//! closes every handle before returning.

mod common;

use dcgm::raw::Binding;

use common::*;
use dcgm::raw::sys::*;
use dcgm::*;

#[test]
fn introspection_modules_and_gpu_status() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let sys = h.system();
    assert!(sys.hostengine_memory_bytes().unwrap() > 1 << 20);
    let cpu = sys.hostengine_cpu_utilization().unwrap();
    assert!((0.0..=1.0).contains(&cpu.total) && (cpu.kernel + cpu.user - cpu.total).abs() < 1e-9);

    let statuses = sys.module_statuses().unwrap();
    // As libdcgm 4.6.0: the core is loaded at start, the health module on first use.
    assert!(statuses.contains(&(Module::Core, ModuleStatus::Loaded)));
    assert!(statuses.contains(&(Module::Health, ModuleStatus::NotLoaded)));
    assert!(statuses.iter().all(|(m, _)| !matches!(m, Module::Other(_))));
    sys.module_denylist(Module::Diag).unwrap();
    assert!(
        sys.module_statuses()
            .unwrap()
            .contains(&(Module::Diag, ModuleStatus::Denylisted))
    );
    let g = Group::with_gpus(&h, "beyond-denied", &[0]).unwrap();
    let e = g.run_diagnostic(DiagLevel::Short).unwrap_err();
    assert_eq!(code(&e), DCGM_ST_MODULE_NOT_LOADED);
    assert!(e.hint().is_some(), "{e}");
    assert_eq!(
        code(&sys.module_denylist(Module::Core).unwrap_err()),
        DCGM_ST_BADPARAM
    );
    assert_eq!(Module::from_raw(Module::Profiling.raw()), Module::Profiling);

    assert_eq!(sys.gpu_status(0).unwrap(), GpuStatus::Ok);
    assert_eq!(sys.gpu_status(99).unwrap(), GpuStatus::Unknown);
    assert_eq!(sys.chip_architecture(0).unwrap(), ChipArchitecture::Hopper);
    assert!(sys.chip_architecture(99).is_err());
    drop(g);
    h.close().unwrap();
}
