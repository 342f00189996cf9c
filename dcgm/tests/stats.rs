//! Process and job statistics against dcgm-sim.
//!
//! The simulator is process-global and reads its configuration (`dcgmSimConfigure`) at the
//! next `dcgmInit`: every test takes the simulator lock, configures, opens its handle, and
//! closes every handle before returning.

mod common;

use std::time::Duration;

use common::*;
use dcgm::raw::sys::*;
use dcgm::*;

#[test]
fn pid_and_job_statistics() {
    let _sim = sim(None);
    let h = open(OperationMode::Auto);
    let all = Group::all_gpus(&h);
    let e = all.pid_info(4242).unwrap_err();
    assert_eq!(code(&e), DCGM_ST_NOT_WATCHED, "{e}");
    assert!(e.hint().is_some());
    all.watch_pid_fields(WatchOptions::default()).unwrap();
    h.update_all_fields(true).unwrap();

    let p = all.pid_info(4242).unwrap();
    assert_eq!(p.pid, 4242);
    assert_eq!(p.gpus.len(), 7);
    assert_eq!(
        p.gpus.iter().map(|g| g.gpu.unwrap()).collect::<Vec<_>>(),
        (0..7).collect::<Vec<_>>()
    );
    let g0 = &p.gpus[0];
    assert!(g0.usage.energy_joules.is_some_and(|j| j > 0.0));
    assert_eq!(g0.usage.max_memory_bytes, Some(62_000 * 1024 * 1024));
    assert!(g0.usage.start_time.is_some());
    assert_eq!(g0.usage.end_time, None, "still running");
    assert!(g0.usage.sm_util.average.is_some());
    assert_eq!(p.summary.gpu, None);
    let e = all.pid_info(1).unwrap_err();
    assert_eq!(code(&e), DCGM_ST_NO_DATA, "{e}");
    assert!(matches!(
        all.watch_pid_fields(WatchOptions {
            update_interval: Duration::ZERO,
            ..Default::default()
        }),
        Err(Error::InvalidArgument(_))
    ));

    let g = Group::with_gpus(&h, "beyond-job", &[0, 1]).unwrap();
    g.watch_job_fields(WatchOptions::default()).unwrap();
    g.job_start("train-1").unwrap();
    let e = g.job_start("train-1").unwrap_err();
    assert_eq!(code(&e), DCGM_ST_DUPLICATE_KEY, "{e}");
    std::thread::sleep(Duration::from_millis(50));
    h.update_all_fields(true).unwrap();
    let running = h.job_stats("train-1").unwrap();
    assert_eq!(running.gpus.len(), 2);
    assert_eq!(running.summary.usage.end_time, None);
    h.job_stop("train-1").unwrap();
    let s = h.job_stats("train-1").unwrap();
    assert!(s.summary.usage.end_time.is_some() && s.summary.usage.start_time.is_some());
    assert!(s.summary.usage.end_time >= s.summary.usage.start_time);
    assert!(s.gpus.iter().all(|g| !g.compute_processes.is_empty()));
    h.job_remove("train-1").unwrap();
    assert_eq!(code(&h.job_stats("train-1").unwrap_err()), DCGM_ST_NO_DATA);

    let long_id = "x".repeat(MAX_JOB_ID_LEN + 1);
    assert!(matches!(
        g.job_start(&long_id),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(h.job_stop(""), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        h.job_stats("a\0b"),
        Err(Error::InvalidArgument(_))
    ));
    g.job_start(&"y".repeat(MAX_JOB_ID_LEN)).unwrap();
    g.job_start("second").unwrap();
    h.job_remove_all().unwrap();
    assert_eq!(code(&h.job_stats("second").unwrap_err()), DCGM_ST_NO_DATA);
    drop((all, g));
    h.close().unwrap();
}
