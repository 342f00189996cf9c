//! Every process on a GPU through the safe layer, on the simulator: `ProcessWatch`,
//! `Group::running_processes` and `System::running_processes`, with several processes on one
//! GPU, one process on two GPUs and a GPU without any.

use std::time::Duration;

mod common;

use dcgm::{Error, Group, Handle, OperationMode, ProcessWatch};

const NODE: &str = r#"{"gpus":[{},{},{},{}],"nvswitches":0,"cpus":[],
  "processes":[
    {"pid":301,"gpus":[0,2],"memory_mib":1000},
    {"pid":302,"gpus":[0],"memory_mib":250},
    {"pid":303,"gpus":[1],"memory_mib":4096}]}"#;

fn handle() -> (common::Sim, Handle) {
    let sim = common::Sim::new(Some(NODE));
    let h = sim.handle(OperationMode::Auto);
    (sim, h)
}

fn pids_mib(list: &[dcgm::RunningProcess]) -> Vec<(u32, u64)> {
    list.iter()
        .map(|p| (p.pid, p.memory_used_bytes >> 20))
        .collect()
}

#[test]
fn a_watch_lists_every_process_of_every_gpu_on_every_read() {
    let (_l, h) = handle();
    let watch = ProcessWatch::new(&h, &[0, 1, 2, 3], Duration::from_millis(100)).unwrap();
    for _ in 0..3 {
        let by = watch.read().unwrap();
        assert_eq!(by.keys().copied().collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(pids_mib(&by[&0]), [(301, 1000), (302, 250)]);
        assert_eq!(pids_mib(&by[&1]), [(303, 4096)]);
        assert_eq!(pids_mib(&by[&2]), [(301, 1000)]);
        assert!(by[&3].is_empty(), "{:?}", by[&3]);
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn a_group_and_the_system_answer_the_same_lists() {
    let (_l, h) = handle();
    let g = Group::with_gpus(&h, "procs-0-1", &[0, 1]).unwrap();
    let by = g.running_processes().unwrap();
    assert_eq!(pids_mib(&by[&0]), [(301, 1000), (302, 250)]);
    assert_eq!(pids_mib(&by[&1]), [(303, 4096)]);
    assert_eq!(by.len(), 2);
    let s = h.system();
    assert_eq!(
        pids_mib(&s.running_processes(0).unwrap()),
        [(301, 1000), (302, 250)]
    );
    assert!(s.running_processes(3).unwrap().is_empty());
}

#[test]
fn an_unknown_gpu_an_empty_set_and_a_zero_interval_are_refused() {
    let (_l, h) = handle();
    assert!(h.system().running_processes(17).is_err());
    assert!(matches!(
        ProcessWatch::new(&h, &[], Duration::from_secs(1)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        ProcessWatch::new(&h, &[0], Duration::ZERO),
        Err(Error::InvalidArgument(_))
    ));
}
