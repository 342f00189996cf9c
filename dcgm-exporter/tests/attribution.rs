//! Kubernetes and HPC attribution, end to end: the `dcgm-exporter` binary (`--once`, over
//! dcgm-sim) against a fake kubelet, a real gRPC server (tonic) on a unix socket answering
//! the pod-resources `List` with GPUs, a time-sliced GPU and a MIG instance assigned to pods,
//! and against an HPC job-mapping directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::task::{Context, Poll};

use dcgm_exporter::attribution::kubelet_wire::{
    CdiDevice, ClaimResource, ContainerDevices, ContainerResources, DynamicResource,
    ListPodResourcesRequest, ListPodResourcesResponse, PodResources,
};
use dcgm_exporter::attribution::kubernetes::device_keys;
use tonic::codegen::http;

mod support;
use support::process::Labels;

fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

fn exporter(args: &[&str]) -> Output {
    exporter_on(None, args)
}

/// The exporter over dcgm-sim's node `config` (a JSON file; `None`: the default node).
fn exporter_on(config: Option<&Path>, args: &[&str]) -> Output {
    let st = Command::new(env!("CARGO"))
        .args(["build", "-q", "-p", "dcgm-sim"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap();
    assert!(st.success());
    let mut c = Command::new(env!("CARGO_BIN_EXE_dcgm-exporter"));
    c.args(["--simulate", "--once"])
        .args(args)
        .env("DCGM_SIM_LIB", profile_dir().join("libdcgm_sim.so"))
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        .env_remove("DCGM_LIB_PATH");
    if let Some(cfg) = config {
        c.env("DCGM_SIM_CONFIG", cfg);
    }
    for (k, _) in std::env::vars() {
        if k.starts_with("DCGM_EXPORTER_")
            || k.starts_with("DCGM_HPC")
            || k == "NVIDIA_RESOURCE_NAMES"
            || k == "KUBERNETES_ENABLE_DRA"
        {
            c.env_remove(k);
        }
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// The series of one metric in the exporter's output, as label maps.
fn series(o: &Output, metric: &str) -> Vec<Labels> {
    support::process::series(&String::from_utf8_lossy(&o.stdout), metric)
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dcgm-rs-attr-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn hpc_jobs_give_one_series_per_job_on_gpus_and_mig_instances() {
    let dir = tempdir("hpc");
    std::fs::write(dir.join("0"), "job-a\r\njob-b\n\n").unwrap();
    std::fs::write(dir.join("7.2"), "mig-job\n").unwrap();
    std::fs::write(dir.join("README"), "not a GPU\n").unwrap();
    let o = exporter(&["--hpc-job-mapping-dir", dir.to_str().unwrap()]);
    let temp = series(&o, "DCGM_FI_DEV_GPU_TEMP");
    let on = |gpu: &str| -> Vec<&Labels> { temp.iter().filter(|l| l["gpu"] == gpu).collect() };
    let jobs: Vec<&str> = on("0").iter().map(|l| l["hpc_job"].as_str()).collect();
    assert_eq!(jobs, ["job-a", "job-b"]);
    assert!(on("1").iter().all(|l| !l.contains_key("hpc_job")));
    let fb = series(&o, "DCGM_FI_DEV_FB_USED");
    let mig: Vec<&Labels> = fb.iter().filter(|l| l["gpu"] == "7").collect();
    assert!(mig.len() >= 2, "{mig:?}");
    for l in mig {
        let want = (l["GPU_I_ID"] == "2").then_some("mig-job");
        assert_eq!(l.get("hpc_job").map(String::as_str), want, "{l:?}");
    }
    // A missing directory: the metrics are exported without the label, and the log says why.
    std::fs::remove_dir_all(&dir).unwrap();
    let o = exporter(&["--hpc-job-mapping-dir", dir.to_str().unwrap()]);
    assert!(
        series(&o, "DCGM_FI_DEV_GPU_TEMP")
            .iter()
            .all(|l| !l.contains_key("hpc_job"))
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("without hpc_job labels"));
}

#[test]
fn device_ids_are_known_by_their_sharing_and_mig_forms() {
    assert_eq!(device_keys("GPU-abc"), ["GPU-abc"]);
    assert_eq!(device_keys("GPU-abc::3"), ["GPU-abc::3", "GPU-abc"]);
    assert_eq!(device_keys("nvidia1/vgpu2"), ["nvidia1/vgpu2", "nvidia1"]);
    assert_eq!(device_keys("nvidia1/gi3"), ["nvidia1/gi3", "1-3"]);
    assert_eq!(device_keys("MIG-GPU-abc/2/0"), ["MIG-GPU-abc/2/0", "abc-2"]);
}

/// The fake kubelet: answers `List` with `resp`, anything else with UNIMPLEMENTED.
#[derive(Clone)]
struct FakeKubelet(Arc<ListPodResourcesResponse>);

impl tonic::server::NamedService for FakeKubelet {
    const NAME: &'static str = "v1.PodResourcesLister";
}

struct List(Arc<ListPodResourcesResponse>);

impl tonic::server::UnaryService<ListPodResourcesRequest> for List {
    type Response = ListPodResourcesResponse;
    type Future = std::future::Ready<Result<tonic::Response<Self::Response>, tonic::Status>>;
    fn call(&mut self, _: tonic::Request<ListPodResourcesRequest>) -> Self::Future {
        std::future::ready(Ok(tonic::Response::new((*self.0).clone())))
    }
}

impl tower::Service<http::Request<tonic::body::Body>> for FakeKubelet {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = tonic::codegen::BoxFuture<Self::Response, Self::Error>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let resp = self.0.clone();
        Box::pin(async move {
            if req.uri().path() != "/v1.PodResourcesLister/List" {
                return Ok(tonic::Status::unimplemented("not here").into_http());
            }
            let mut grpc = tonic::server::Grpc::new(tonic::codec::ProstCodec::default());
            Ok(grpc.unary(List(resp), req).await)
        })
    }
}

/// Serves `resp` on a unix socket in `dir` from a thread of its own; returns the socket.
fn fake_kubelet(dir: &Path, resp: ListPodResourcesResponse) -> PathBuf {
    let sock = dir.join("kubelet.sock");
    let path = sock.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::UnixListener::bind(&path).unwrap();
            tx.send(()).unwrap();
            tonic::transport::Server::builder()
                .add_service(FakeKubelet(Arc::new(resp)))
                .serve_with_incoming(tokio_stream::wrappers::UnixListenerStream::new(listener))
                .await
                .unwrap();
        });
    });
    rx.recv().unwrap();
    sock
}

fn pod(name: &str, ns: &str, container: &str, resource: &str, ids: &[&str]) -> PodResources {
    PodResources {
        name: name.into(),
        namespace: ns.into(),
        containers: vec![ContainerResources {
            name: container.into(),
            devices: vec![ContainerDevices {
                resource_name: resource.into(),
                device_ids: ids.iter().map(|s| s.to_string()).collect(),
            }],
            dynamic_resources: vec![],
        }],
    }
}

/// A number for each name [`sim_ids`] gives the shared engine.
static NAMES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// GPU UUIDs by id, and the MIG device UUID of each GPU instance by (gpu, GI id), as the
/// simulator reports them (a watched read of `DCGM_FI_DEV_UUID`).
fn sim_ids() -> (BTreeMap<u32, String>, BTreeMap<(u32, u32), String>) {
    let h = dcgm::Handle::builder()
        .library_path(dcgm::testing::simulator_path())
        .embedded()
        .unwrap();
    let sys = h.system();
    let mut gpus = BTreeMap::new();
    for g in sys.gpu_ids().unwrap() {
        gpus.insert(g, sys.device_attributes(g).unwrap().uuid);
    }
    let mut migs = BTreeMap::new();
    for m in sys.mig_hierarchy().unwrap() {
        for gi in &m.instances {
            let e = dcgm::Entity::new(dcgm::EntityGroup::GpuInstance, gi.entity_id);
            // Tests of this binary run in parallel in one process and share the simulated
            // engine's names: each call's group and field group get a name of their own.
            let name = format!(
                "mig-uuid-{}",
                NAMES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            );
            let group = dcgm::Group::with_entities(&h, &name, &[e]).unwrap();
            let fields = dcgm::FieldGroup::create(&h, &name, &[dcgm::FieldId(54)]).unwrap();
            let _w = group.watch(&fields, dcgm::WatchOptions::default()).unwrap();
            h.update_all_fields(true).unwrap();
            let v = group.latest_values(&fields).unwrap();
            let uuid = v[0].value.as_str().unwrap().to_string();
            migs.insert((m.gpu, gi.nvml_instance_id.unwrap()), uuid);
        }
    }
    (gpus, migs)
}

#[test]
fn kubernetes_pods_label_their_gpus_and_mig_instances() {
    let (gpus, migs) = sim_ids();
    let mig_uuid = migs[&(7, 1)].clone();
    assert!(mig_uuid.starts_with("MIG-"), "{mig_uuid}");
    let dir = tempdir("k8s");
    let resp = ListPodResourcesResponse {
        pod_resources: vec![
            pod("train-0", "ml", "trainer", "nvidia.com/gpu", &[&gpus[&0]]),
            // Time-sliced: the device plugin appends a replica number.
            pod(
                "notebook",
                "lab",
                "jupyter",
                "nvidia.com/gpu",
                &[&format!("{}::2", gpus[&1])],
            ),
            pod(
                "infer",
                "serve",
                "server",
                "nvidia.com/mig-3g.40gb",
                &[&mig_uuid],
            ),
            pod("fpga", "hw", "main", "example.com/accel", &[&gpus[&2]]),
            pod("by-name", "ops", "probe", "nvidia.com/gpu", &["nvidia3"]),
        ],
    };
    let sock = fake_kubelet(&dir, resp);
    let sock = sock.to_str().unwrap();
    let no_procs = tempdir("k8s-proc");
    let o = exporter(&["--kubernetes", "--pod-resources-kubelet-socket", sock]);
    let temp = series(&o, "DCGM_FI_DEV_GPU_TEMP");
    let who = |gpu: &str| -> Vec<(String, String, String)> {
        temp.iter()
            .filter(|l| l["gpu"] == gpu && !l.contains_key("GPU_I_ID"))
            .filter_map(|l| {
                Some((
                    l.get("pod")?.clone(),
                    l["namespace"].clone(),
                    l["container"].clone(),
                ))
            })
            .collect()
    };
    let one = |p: &str, n: &str, c: &str| vec![(p.to_string(), n.to_string(), c.to_string())];
    assert_eq!(who("0"), one("train-0", "ml", "trainer"));
    assert_eq!(who("1"), one("notebook", "lab", "jupyter"));
    assert_eq!(who("2"), vec![], "not an NVIDIA resource");
    assert_eq!(who("3"), vec![], "device names are not UUIDs");
    let fb = series(&o, "DCGM_FI_DEV_FB_USED");
    for l in fb.iter().filter(|l| l["gpu"] == "7") {
        let want = (l["GPU_I_ID"] == "1").then_some("infer");
        assert_eq!(l.get("pod").map(String::as_str), want, "{l:?}");
    }
    assert!(temp.iter().all(|l| !l.contains_key("pod_uid")));

    // Device names, an extra resource name, and the pod_uid label: no process of these pods
    // is in the (empty) proc root, so no UID is known and the label stays out.
    let o = exporter(&[
        "--proc-root",
        no_procs.to_str().unwrap(),
        "--kubernetes",
        "--pod-resources-kubelet-socket",
        sock,
        "--kubernetes-gpu-id-type",
        "device-name",
        "--nvidia-resource-names",
        "example.com/accel",
        "--kubernetes-enable-pod-uid",
    ]);
    let temp = series(&o, "DCGM_FI_DEV_GPU_TEMP");
    let pod_of = |gpu: &str| {
        temp.iter()
            .find(|l| l["gpu"] == gpu)
            .and_then(|l| l.get("pod").cloned())
    };
    assert_eq!(pod_of("3").as_deref(), Some("by-name"));
    assert_eq!(pod_of("0"), None, "UUIDs are not device names");
    assert!(temp.iter().any(|l| l.contains_key("pod")));
    assert!(temp.iter().all(|l| !l.contains_key("pod_uid")));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("does the exporter see the host's PIDs"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // No kubelet: the metrics go out without pod labels, and the log says why.
    let o = exporter(&[
        "--kubernetes",
        "--pod-resources-kubelet-socket",
        "/nonexistent/kubelet.sock",
    ]);
    assert!(
        series(&o, "DCGM_FI_DEV_GPU_TEMP")
            .iter()
            .all(|l| !l.contains_key("pod"))
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("without pod labels"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&no_procs);
}

/// A process of the simulated node: pid, its GPUs, its memory on each (MiB), and the text of
/// its `/proc/PID/cgroup`.
struct Proc {
    pid: u32,
    gpus: &'static [u32],
    mib: u64,
    cgroup: String,
}

const CID: &str = "6e9f7b1a2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7";

fn uid(n: u32) -> String {
    format!("0d5c2a3e-4b1f-4c6d-9e8a-{n:012x}")
}

/// Writes dcgm-sim's config (four plain GPUs running `procs`) and a fake proc root with their
/// cgroups; returns (config file, proc root).
fn node_with(dir: &Path, procs: &[Proc]) -> (PathBuf, PathBuf) {
    let list: Vec<String> = procs
        .iter()
        .map(|p| {
            format!(
                r#"{{"pid": {}, "gpus": {:?}, "memory_mib": {}}}"#,
                p.pid, p.gpus, p.mib
            )
        })
        .collect();
    let config = dir.join("node.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"gpus": [{{}}, {{}}, {{}}, {{}}], "processes": [{}]}}"#,
            list.join(",")
        ),
    )
    .unwrap();
    let proc_root = dir.join("proc");
    for p in procs {
        let d = proc_root.join(p.pid.to_string());
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("cgroup"), &p.cgroup).unwrap();
    }
    (config, proc_root)
}

fn sim_uuids(config: &Path) -> BTreeMap<u32, String> {
    let json = std::fs::read_to_string(config).unwrap();
    let _lock = dcgm::testing::SimulatorLock::new(Some(&json)).unwrap();
    let h = dcgm::Handle::builder()
        .library_path(dcgm::testing::simulator_path())
        .embedded()
        .unwrap();
    let sys = h.system();
    sys.gpu_ids()
        .unwrap()
        .into_iter()
        .map(|g| (g, sys.device_attributes(g).unwrap().uuid))
        .collect()
}

#[test]
fn pods_sharing_gpus_get_their_own_gpu_memory_from_their_processes_cgroups() {
    let dir = tempdir("pods");
    let (a, b, c, d) = (uid(0xa), uid(0xb), uid(0xc), uid(0xd));
    let under = |u: &str| u.replace('-', "_");
    let procs = [
        // Pod "train": two processes on GPU 0; cgroup v2, systemd driver, containerd.
        Proc {
            pid: 1001,
            gpus: &[0],
            mib: 1000,
            cgroup: format!(
                "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{CID}.scope\n",
                under(&a)
            ),
        },
        Proc {
            pid: 1002,
            gpus: &[0],
            mib: 500,
            cgroup: format!("0::/kubepods/burstable/pod{a}/{CID}\n"),
        },
        // Pod "nb-b" on GPU 2 alone and on the time-sliced GPU 1; cgroup v1, cgroupfs driver.
        Proc {
            pid: 2001,
            gpus: &[1, 2],
            mib: 700,
            cgroup: format!(
                "12:pids:/\n11:memory:/kubepods/besteffort/pod{b}/{CID}\n1:name=systemd:/kubepods/besteffort/pod{b}/{CID}\n"
            ),
        },
        // Pod "nb-c" on GPU 1 too; cgroup v2, systemd driver, CRI-O.
        Proc {
            pid: 3001,
            gpus: &[1],
            mib: 300,
            cgroup: format!(
                "0::/kubepods.slice/kubepods-pod{}.slice/crio-{CID}.scope\n",
                under(&c)
            ),
        },
        // A host process on GPU 0: in no pod.
        Proc {
            pid: 4001,
            gpus: &[0],
            mib: 64,
            cgroup: "0::/system.slice/nvidia-persistenced.service\n".into(),
        },
        // A pod the kubelet did not give GPU 3 to: only its UID is known.
        Proc {
            pid: 5001,
            gpus: &[3],
            mib: 128,
            cgroup: format!(
                "1:name=systemd:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{}.slice/docker-{CID}.scope\n",
                under(&d)
            ),
        },
    ];
    let (config, proc_root) = node_with(&dir, &procs);
    let uuids = sim_uuids(&config);
    let resp = ListPodResourcesResponse {
        pod_resources: vec![
            pod("train", "ml", "trainer", "nvidia.com/gpu", &[&uuids[&0]]),
            pod(
                "nb-b",
                "lab",
                "jupyter",
                "nvidia.com/gpu",
                &[&format!("{}::0", uuids[&1]), &uuids[&2]],
            ),
            pod(
                "nb-c",
                "lab",
                "jupyter",
                "nvidia.com/gpu",
                &[&format!("{}::1", uuids[&1])],
            ),
        ],
    };
    let sock = fake_kubelet(&dir, resp);
    let counters = dir.join("counters.csv");
    std::fs::write(
        &counters,
        "DCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_EXP_POD_FB_USED, gauge, per pod\n",
    )
    .unwrap();
    let o = exporter_on(
        Some(&config),
        &[
            "-f",
            counters.to_str().unwrap(),
            "--kubernetes",
            "--kubernetes-enable-pod-uid",
            "--pod-resources-kubelet-socket",
            sock.to_str().unwrap(),
            "--proc-root",
            proc_root.to_str().unwrap(),
        ],
    );
    let names = BTreeMap::from([
        (a.clone(), ("ml", "train", "trainer")),
        (b.clone(), ("lab", "nb-b", "jupyter")),
        (c.clone(), ("lab", "nb-c", "jupyter")),
    ]);
    // What the series must say: per GPU and pod UID, the memory of the pod's processes, as
    // the simulator runs them; the host process counts for no pod.
    let mut want: BTreeMap<(String, String), u64> = BTreeMap::new();
    for p in &procs {
        let owner = dcgm_exporter::attribution::cgroup::parse(&p.cgroup);
        let Some(u) = owner.pod_uid else { continue };
        for g in p.gpus {
            *want.entry((g.to_string(), u.clone())).or_default() += p.mib;
        }
    }
    assert_eq!(want.len(), 5);
    let mem = series(&o, "DCGM_EXP_POD_FB_USED");
    let mut got: BTreeMap<(String, String), u64> = BTreeMap::new();
    let stdout = String::from_utf8_lossy(&o.stdout);
    for line in stdout
        .lines()
        .filter(|l| l.starts_with("DCGM_EXP_POD_FB_USED{"))
    {
        let labels = &support::process::series(line, "DCGM_EXP_POD_FB_USED")[0];
        let value: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        let u = labels["pod_uid"].clone();
        assert_eq!(
            labels["UUID"],
            uuids[&labels["gpu"].parse::<u32>().unwrap()]
        );
        // Named where the kubelet's allocation tells, by UID only otherwise.
        match names.get(&u) {
            Some((ns, pod, container)) => {
                assert_eq!(
                    (
                        labels["namespace"].as_str(),
                        labels["pod"].as_str(),
                        labels["container"].as_str()
                    ),
                    (*ns, *pod, *container),
                    "{labels:?}"
                );
            }
            None => assert!(!labels.contains_key("pod"), "{labels:?}"),
        }
        got.insert((labels["gpu"].clone(), u), value);
    }
    assert_eq!(got, want, "{stdout}");
    assert_eq!(mem.len(), want.len());

    // pod_uid on the GPUs' own series: the UID of the pod that labels them.
    let temp = series(&o, "DCGM_FI_DEV_GPU_TEMP");
    let on = |gpu: &str| temp.iter().find(|l| l["gpu"] == gpu).unwrap();
    for l in &temp {
        if let Some(pod) = l.get("pod") {
            let uid = names.iter().find(|(_, n)| n.1 == pod).unwrap().0;
            assert_eq!(l.get("pod_uid"), Some(uid), "{l:?}");
        }
    }
    assert_eq!(on("0")["pod"], "train");
    assert_eq!(
        on("1")["pod"],
        "nb-c",
        "the last pod listed labels a shared GPU"
    );
    assert!(!on("3").contains_key("pod"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hpc_jobs_as_info_series_join_in_promql() {
    let dir = tempdir("hpc-info");
    std::fs::write(dir.join("0"), "job-a\n").unwrap();
    std::fs::write(dir.join("1"), "job-b\njob-c\n").unwrap();
    std::fs::write(dir.join("7.2"), "mig-job\n").unwrap();
    let o = exporter(&[
        "--hpc-job-mapping-dir",
        dir.to_str().unwrap(),
        "--hpc-job-info-series",
    ]);
    let temp = series(&o, "DCGM_FI_DEV_GPU_TEMP");
    assert!(temp.iter().all(|l| !l.contains_key("hpc_job")));
    let info = series(&o, "DCGM_EXP_HPC_JOB_INFO");
    let jobs: Vec<(&str, Option<&str>, &str)> = info
        .iter()
        .map(|l| {
            (
                l["gpu"].as_str(),
                l.get("GPU_I_ID").map(String::as_str),
                l["hpc_job"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        jobs,
        [
            ("0", None, "job-a"),
            ("1", None, "job-b"),
            ("1", None, "job-c"),
            ("7", Some("2"), "mig-job")
        ]
    );
    // Each job series carries the identity labels of its GPU's (or MIG instance's) series
    // (not the counters file's `label` rows, named after their fields).
    for l in &info {
        let same = temp
            .iter()
            .find(|t| t["gpu"] == l["gpu"] && t.get("GPU_I_ID") == l.get("GPU_I_ID"));
        let mut t = same.unwrap().clone();
        t.retain(|k, _| !k.starts_with("DCGM_FI_"));
        t.insert("hpc_job".into(), l["hpc_job"].clone());
        assert_eq!(&t, l);
    }
    // The joins the README documents, evaluated by Prometheus' own engine (promtool).
    let Ok(_) = Command::new("promtool").arg("--version").output() else {
        eprintln!("promtool not installed: the PromQL join is not evaluated");
        return;
    };
    let text = String::from_utf8_lossy(&o.stdout);
    let input: Vec<String> = text
        .lines()
        .filter(|l| {
            l.starts_with("DCGM_FI_DEV_GPU_TEMP{") || l.starts_with("DCGM_EXP_HPC_JOB_INFO{")
        })
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap();
            format!("      - series: '{series}'\n        values: '{value}'\n")
        })
        .collect();
    let sample = |labels: &Labels, value: &str| {
        let inner: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
        format!(
            "          - labels: 'DCGM_FI_DEV_GPU_TEMP_JOB{{{}}}'\n            value: {value}\n",
            inner.join(",")
        )
    };
    let value_of = |l: &Labels| {
        text.lines()
            .find(|line| support::process::series(line, "DCGM_FI_DEV_GPU_TEMP").first() == Some(l))
            .and_then(|line| line.rsplit(' ').next())
            .unwrap()
            .to_string()
    };
    // group_left: the metric's series with the job's label, on GPUs with one job.
    let mut left = String::new();
    for t in &temp {
        let mine: Vec<&Labels> = info
            .iter()
            .filter(|l| l["gpu"] == t["gpu"] && l.get("GPU_I_ID") == t.get("GPU_I_ID"))
            .collect();
        if let [job] = mine.as_slice() {
            let mut want = t.clone();
            want.insert("hpc_job".into(), job["hpc_job"].clone());
            left.push_str(&sample(&want, &value_of(t)));
        }
    }
    // group_right: one series per job, every GPU.
    let mut right = String::new();
    for l in &info {
        let t = temp
            .iter()
            .find(|t| t["gpu"] == l["gpu"] && t.get("GPU_I_ID") == l.get("GPU_I_ID"))
            .unwrap();
        right.push_str(&sample(l, &value_of(t)));
    }
    let rules = format!(
        "rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n{}    promql_expr_test:\n\
         \x20     - expr: 'label_replace(DCGM_FI_DEV_GPU_TEMP * on(gpu, UUID, GPU_I_ID) group_left(hpc_job) DCGM_EXP_HPC_JOB_INFO{{gpu!=\"1\"}}, \"__name__\", \"DCGM_FI_DEV_GPU_TEMP_JOB\", \"\", \"\")'\n\
         \x20       eval_time: 0m\n        exp_samples:\n{left}\
         \x20     - expr: 'label_replace(DCGM_FI_DEV_GPU_TEMP * on(gpu, UUID, GPU_I_ID) group_right DCGM_EXP_HPC_JOB_INFO, \"__name__\", \"DCGM_FI_DEV_GPU_TEMP_JOB\", \"\", \"\")'\n\
         \x20       eval_time: 0m\n        exp_samples:\n{right}",
        input.concat()
    );
    let file = dir.join("join.test.yml");
    std::fs::write(&file, &rules).unwrap();
    let out = Command::new("promtool")
        .args(["test", "rules"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}\n{rules}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A pod whose container holds DRA claims: (claim name, [(driver, pool, device, CDI devices)]).
#[allow(clippy::type_complexity)]
fn dra_pod(
    name: &str,
    ns: &str,
    container: &str,
    claims: &[(&str, &[(&str, &str, &[&str])])],
) -> PodResources {
    PodResources {
        name: name.into(),
        namespace: ns.into(),
        containers: vec![ContainerResources {
            name: container.into(),
            devices: vec![],
            dynamic_resources: claims
                .iter()
                .map(|(claim, devices)| DynamicResource {
                    claim_name: claim.to_string(),
                    claim_namespace: ns.into(),
                    claim_resources: devices
                        .iter()
                        .map(|(driver, device, cdi)| ClaimResource {
                            cdi_devices: cdi
                                .iter()
                                .map(|n| CdiDevice {
                                    name: n.to_string(),
                                })
                                .collect(),
                            driver_name: driver.to_string(),
                            pool_name: "node-1".into(),
                            device_name: device.to_string(),
                        })
                        .collect(),
                })
                .collect(),
        }],
    }
}

/// The NVIDIA driver's /proc tables for the simulated GPUs (device minor = GPU id) and the
/// MIG capability minors of GPU 7's instances (GI `g` has capability `100 + g`).
fn nvidia_proc(root: &Path, gpus: &BTreeMap<u32, String>, migs: &BTreeMap<(u32, u32), String>) {
    for (g, uuid) in gpus {
        let d = root.join(format!("driver/nvidia/gpus/0000:{:02x}:00.0", 0x10 + g));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("information"),
            format!(
                "Model:           NVIDIA H100 80GB HBM3\nIRQ:             0\nGPU UUID:        {uuid}\n\
                 Bus Location:    0000:{:02x}:00.0\nDevice Minor:    {g}\n",
                0x10 + g
            ),
        )
        .unwrap();
    }
    let caps = root.join("driver/nvidia-caps");
    std::fs::create_dir_all(&caps).unwrap();
    let mut minors = String::from("config 1\nmonitor 2\n");
    for (gpu, gi) in migs.keys() {
        minors.push_str(&format!(
            "gpu{gpu}/gi{gi}/access {}\ngpu{gpu}/gi{gi}/ci0/access {}\n",
            100 + gi,
            200 + gi
        ));
    }
    std::fs::write(caps.join("mig-minors"), minors).unwrap();
}

const CLAIM_KIND: &str = "k8s.gpu.nvidia.com/claim";

#[test]
fn dra_claims_label_their_gpus_and_mig_instances_from_cdi_specs() {
    let (gpus, migs) = sim_ids();
    let dir = tempdir("dra");
    let proc_root = dir.join("proc");
    nvidia_proc(&proc_root, &gpus, &migs);
    let cdi = dir.join("cdi");
    std::fs::create_dir_all(&cdi).unwrap();
    // Today's driver: one transient spec per claim, NVIDIA_VISIBLE_DEVICES=void, the device
    // known by its device nodes. A whole GPU (minor 0) ...
    std::fs::write(
        cdi.join("k8s.gpu.nvidia.com-claim_aaaa.yaml"),
        format!(
            "cdiVersion: 0.6.0\nkind: {CLAIM_KIND}\ncontainerEdits:\n  env:\n  - NVIDIA_VISIBLE_DEVICES=void\n\
             devices:\n- name: aaaa-gpu-0\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n    - path: /dev/dri/card1\n"
        ),
    )
    .unwrap();
    // ... and a MIG device: its parent's node and its GPU instance's capability (GI 1).
    std::fs::write(
        cdi.join("k8s.gpu.nvidia.com-claim_mmmm.yaml"),
        format!(
            "cdiVersion: 0.6.0\nkind: {CLAIM_KIND}\ndevices:\n- name: mmmm-gpu-7-mig-3g40gb-9-0\n  containerEdits:\n    \
             deviceNodes:\n    - path: /dev/nvidia7\n    - path: /dev/nvidia-caps/nvidia-cap101\n    - path: /dev/nvidia-caps/nvidia-cap201\n"
        ),
    )
    .unwrap();
    // An earlier driver's shape, in JSON: the UUID in the device's environment. One pod
    // holds this claim and the next one.
    std::fs::write(
        cdi.join("k8s.gpu.nvidia.com-claim_bbbb.json"),
        format!(
            r#"{{"cdiVersion":"0.5.0","kind":"{CLAIM_KIND}","devices":[{{"name":"bbbb-gpu-1","containerEdits":{{"env":["NVIDIA_VISIBLE_DEVICES={}"]}}}}]}}"#,
            gpus[&1]
        ),
    )
    .unwrap();
    std::fs::write(
        cdi.join("k8s.gpu.nvidia.com-claim_cccc.yaml"),
        format!(
            "kind: {CLAIM_KIND}\ndevices:\n- name: cccc-gpu-2\n  containerEdits:\n    deviceNodes:\n    - {{path: /dev/nvidia2}}\n"
        ),
    )
    .unwrap();
    // Another vendor's driver, whose spec names GPU 3's node: not an NVIDIA claim.
    std::fs::write(
        cdi.join("fpga.example.com-claim_ffff.yaml"),
        "kind: fpga.example.com/claim\ndevices:\n- name: ffff\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia3\n",
    )
    .unwrap();
    // A spec that does not parse (its claim's device goes unmapped, the others map).
    std::fs::write(
        cdi.join("k8s.gpu.nvidia.com-claim_dddd.yaml"),
        format!("kind: {CLAIM_KIND}\ndevices: [{{name: dddd-gpu-5\n"),
    )
    .unwrap();
    let nv = "gpu.nvidia.com";
    let q = |name: &str| format!("{CLAIM_KIND}={name}");
    let (a, m, b, c, d, ghost) = (
        q("aaaa-gpu-0"),
        q("mmmm-gpu-7-mig-3g40gb-9-0"),
        q("bbbb-gpu-1"),
        q("cccc-gpu-2"),
        q("dddd-gpu-5"),
        q("zzzz-gpu-4"),
    );
    let resp = ListPodResourcesResponse {
        pod_resources: vec![
            dra_pod(
                "train",
                "ml",
                "trainer",
                &[("train-gpu", &[(nv, "gpu-0", &[&a])])],
            ),
            dra_pod(
                "infer",
                "serve",
                "server",
                &[("mig-claim", &[(nv, "gpu-7-mig-3g40gb-9-0", &[&m])])],
            ),
            dra_pod(
                "multi",
                "lab",
                "worker",
                &[
                    ("first", &[(nv, "gpu-1", &[&b])]),
                    ("second", &[(nv, "gpu-2", &[&c])]),
                ],
            ),
            dra_pod(
                "fpga",
                "hw",
                "main",
                &[(
                    "accel",
                    &[("fpga.example.com", "ffff", &["fpga.example.com/claim=ffff"])],
                )],
            ),
            dra_pod("broken", "ops", "x", &[("bad", &[(nv, "gpu-5", &[&d])])]),
            dra_pod(
                "ghost",
                "ops",
                "y",
                &[("gone", &[(nv, "gpu-4", &[&ghost])])],
            ),
        ],
    };
    let sock = fake_kubelet(&dir, resp);
    let args = |cdi_dir: &Path| -> Vec<String> {
        [
            "--kubernetes",
            "--kubernetes-enable-dra",
            "--pod-resources-kubelet-socket",
            sock.to_str().unwrap(),
            "--cdi-spec-dir",
            cdi_dir.to_str().unwrap(),
            "--proc-root",
            proc_root.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let run = |a: &[String]| exporter(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let o = run(&args(&cdi));
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    let temp = series(&o, "DCGM_FI_DEV_GPU_TEMP");
    let whole = |gpu: &str| {
        temp.iter()
            .find(|l| l["gpu"] == gpu && !l.contains_key("GPU_I_ID"))
            .unwrap()
            .clone()
    };
    let dra = |l: &Labels| -> Vec<(String, String)> {
        l.iter()
            .filter(|(k, _)| {
                k.starts_with("dra_") || ["pod", "namespace", "container"].contains(&k.as_str())
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let want = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        v.sort();
        v
    };
    let gpu_claim = |pod: &str, ns: &str, ctr: &str, claim: &str, device: &str| {
        want(&[
            ("pod", pod),
            ("namespace", ns),
            ("container", ctr),
            ("dra_claim_name", claim),
            ("dra_claim_namespace", ns),
            ("dra_driver_name", "gpu.nvidia.com"),
            ("dra_pool_name", "node-1"),
            ("dra_device_name", device),
        ])
    };
    assert_eq!(
        dra(&whole("0")),
        gpu_claim("train", "ml", "trainer", "train-gpu", "gpu-0"),
        "{stderr}"
    );
    // Two claims of one pod, mapped from two sources (environment, device node).
    assert_eq!(
        dra(&whole("1")),
        gpu_claim("multi", "lab", "worker", "first", "gpu-1")
    );
    assert_eq!(
        dra(&whole("2")),
        gpu_claim("multi", "lab", "worker", "second", "gpu-2")
    );
    // The other vendor's claim, the unparsable spec's and the unknown device: no labels.
    for gpu in ["3", "4", "5"] {
        assert_eq!(dra(&whole(gpu)), vec![], "GPU {gpu}");
    }
    // The MIG instance (GPU 7, GI 1) carries its profile and MIG device UUID; its siblings
    // and the GPU nothing.
    let fb = series(&o, "DCGM_FI_DEV_FB_USED");
    for l in fb.iter().filter(|l| l["gpu"] == "7") {
        if l.get("GPU_I_ID").map(String::as_str) == Some("1") {
            let mut w = gpu_claim(
                "infer",
                "serve",
                "server",
                "mig-claim",
                "gpu-7-mig-3g40gb-9-0",
            );
            w.push(("dra_mig_profile".into(), l["GPU_I_PROFILE"].clone()));
            w.push(("dra_mig_device_uuid".into(), migs[&(7, 1)].clone()));
            w.sort();
            assert_eq!(dra(l), w);
            assert_eq!(l["GPU_I_PROFILE"], "3g.40gb");
        } else {
            assert_eq!(dra(l), vec![], "{l:?}");
        }
    }
    // The log says where each mapping came from, and why the others have none.
    for line in [
        format!(
            "claim ml/train-gpu device gpu.nvidia.com/node-1/gpu-0 of pod ml/train container trainer: {} from device node /dev/nvidia0",
            gpus[&0]
        ),
        format!(
            "claim lab/first device gpu.nvidia.com/node-1/gpu-1 of pod lab/multi container worker: {} from env NVIDIA_VISIBLE_DEVICES",
            gpus[&1]
        ),
        format!(
            "{}/gi1 from device nodes /dev/nvidia-caps/nvidia-cap* (GPU minor 7, GPU instance 1)",
            gpus[&7]
        ),
        "k8s.gpu.nvidia.com-claim_dddd.yaml is not valid YAML for a spec".to_string(),
        format!(
            "claim ops/bad device gpu.nvidia.com/node-1/gpu-5 of pod ops/broken container x is not mapped to a GPU: CDI device {d} is in no spec"
        ),
        format!(
            "claim ops/gone device gpu.nvidia.com/node-1/gpu-4 of pod ops/ghost container y is not mapped to a GPU: CDI device {ghost} is in no spec"
        ),
    ] {
        assert!(stderr.contains(&line), "{line}\n{stderr}");
    }
    assert!(!stderr.contains("fpga"), "{stderr}");

    // Without --kubernetes-enable-dra the claims are not read.
    let no_dra: Vec<String> = args(&cdi)
        .into_iter()
        .filter(|a| a != "--kubernetes-enable-dra")
        .collect();
    let o = run(&no_dra);
    assert!(
        series(&o, "DCGM_FI_DEV_GPU_TEMP")
            .iter()
            .all(|l| !l.contains_key("pod"))
    );

    // A missing CDI directory: no DRA labels, the metrics still go out, the log says why.
    let o = run(&args(&dir.join("no-such-dir")));
    assert!(
        series(&o, "DCGM_FI_DEV_GPU_TEMP")
            .iter()
            .all(|l| !l.contains_key("pod"))
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("cannot read the CDI spec directory") && stderr.contains("no-such-dir"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The value of each series of `metric` in the output, by (gpu, pod_uid).
fn by_gpu_and_uid(o: &Output, metric: &str) -> BTreeMap<(String, String), (Labels, f64)> {
    let stdout = String::from_utf8_lossy(&o.stdout);
    stdout
        .lines()
        .filter(|l| l.starts_with(&format!("{metric}{{")))
        .map(|line| {
            let labels = support::process::series(line, metric).remove(0);
            let value: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
            (
                (labels["gpu"].clone(), labels["pod_uid"].clone()),
                (labels, value),
            )
        })
        .collect()
}

#[test]
fn pods_sharing_a_gpu_get_the_sm_utilisation_of_their_processes_from_dcgm_process_stats() {
    let dir = tempdir("pod-sm");
    let (a, b) = (uid(0xa1), uid(0xb1));
    let v2 = |u: &str| format!("0::/kubepods/burstable/pod{u}/{CID}\n");
    // Pods a and b time-share GPU 0; b also has GPU 1 to itself; a host process on GPU 0.
    let procs = [
        (1001, &[0u32][..], 30.0, v2(&a)),
        (1002, &[0][..], 10.0, v2(&a)),
        (2001, &[0][..], 20.0, v2(&b)),
        (2002, &[1][..], 50.0, v2(&b)),
        (
            4001,
            &[0][..],
            40.0,
            "0::/system.slice/inference.service\n".to_string(),
        ),
    ];
    let list: Vec<Proc> = procs
        .iter()
        .map(|(pid, gpus, _, cg)| Proc {
            pid: *pid,
            gpus,
            mib: 100,
            cgroup: cg.clone(),
        })
        .collect();
    let (config, proc_root) = node_with(&dir, &list);
    // Each process's own SM utilisation in the simulator's configuration.
    let mut node: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    for (i, (_, _, util, _)) in procs.iter().enumerate() {
        node["processes"][i]["sm_util_percent"] = (*util).into();
    }
    std::fs::write(&config, node.to_string()).unwrap();
    let uuids = sim_uuids(&config);
    let resp = ListPodResourcesResponse {
        pod_resources: vec![
            pod(
                "a",
                "ml",
                "c",
                "nvidia.com/gpu",
                &[&format!("{}::0", uuids[&0])],
            ),
            pod(
                "b",
                "ml",
                "c",
                "nvidia.com/gpu",
                &[&format!("{}::1", uuids[&0]), &uuids[&1]],
            ),
        ],
    };
    let sock = fake_kubelet(&dir, resp);
    let counters = dir.join("counters.csv");
    std::fs::write(
        &counters,
        "DCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_EXP_POD_SM_UTIL, gauge, per pod\n",
    )
    .unwrap();
    let o = exporter_on(
        Some(&config),
        &[
            "-f",
            counters.to_str().unwrap(),
            "--kubernetes",
            "--pod-resources-kubelet-socket",
            sock.to_str().unwrap(),
            "--proc-root",
            proc_root.to_str().unwrap(),
        ],
    );
    let got = by_gpu_and_uid(&o, "DCGM_EXP_POD_SM_UTIL");

    // What the simulator's process statistics give each process (the same pid watch: the
    // exporter's window at its default 30 s interval), summed per pod.
    let json = std::fs::read_to_string(&config).unwrap();
    let _lock = dcgm::testing::SimulatorLock::new(Some(&json)).unwrap();
    let h = dcgm::Handle::builder()
        .library_path(dcgm::testing::simulator_path())
        .embedded()
        .unwrap();
    let group = dcgm::Group::with_gpus(&h, "pod-sm", &[0, 1]).unwrap();
    let interval = std::time::Duration::from_secs(30);
    group
        .watch_pid_fields(dcgm::WatchOptions {
            update_interval: dcgm_prometheus::pid_stats_sample_interval(interval),
            max_keep_age: dcgm_prometheus::pid_stats_window(interval),
            max_keep_samples: 0,
        })
        .unwrap();
    let mut want: BTreeMap<(String, String), f64> = BTreeMap::new();
    for (pid, _, _, cg) in &procs {
        let Some(u) = dcgm_exporter::attribution::cgroup::parse(cg).pod_uid else {
            continue;
        };
        for g in group.pid_info(*pid).unwrap().gpus {
            *want
                .entry((g.gpu.unwrap().to_string(), u.clone()))
                .or_default() += g.process_sm_util.unwrap();
        }
    }
    let values: BTreeMap<(String, String), f64> =
        got.iter().map(|(k, (_, v))| (k.clone(), *v)).collect();
    assert_eq!(values.len(), 3, "{values:?}");
    for (k, w) in &want {
        assert!((values[k] - w).abs() < 1e-9, "{k:?}: {} != {w}", values[k]);
    }
    // DCGM divides a process's samples by every process's on the GPU: on GPU 0, four
    // processes with their own utilisation (the host's counts too); b is alone on GPU 1.
    let g0 = |u: &str| values[&("0".to_string(), u.to_string())];
    assert!((g0(&a) - (30.0 + 10.0) / 4.0).abs() < 1e-9, "{values:?}");
    assert!((g0(&b) - 20.0 / 4.0).abs() < 1e-9, "{values:?}");
    assert!((values[&("1".to_string(), b.clone())] - 50.0).abs() < 1e-9);
    // Pod names: b is matched by its GPU of its own, then a on the shared one.
    let (labels, _) = &got[&("0".to_string(), a.clone())];
    assert_eq!(labels["pod"], "a");
    assert_eq!(got[&("1".to_string(), b.clone())].0["pod"], "b");
    let _ = std::fs::remove_dir_all(&dir);
}

// --- DRA: the ResourceSlice fallback through the API server (--kubernetes-dra-resource-slices)

/// A self-signed certificate for 127.0.0.1 and its key, made with `openssl`, for the fake API
/// server; `None` (with a message) where openssl is not installed.
fn api_server_cert(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let (cert, key) = (dir.join("apiserver.pem"), dir.join("apiserver-key.pem"));
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .args(["-addext", "basicConstraints=critical,CA:FALSE", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(std::process::Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: openssl is not installed (the fake API server needs a certificate)");
        return None;
    }
    Some((cert, key))
}

/// What the fake API server answers to an authorised request.
#[derive(Clone)]
enum ApiAnswer {
    /// `body` (status 200) on the ResourceSlice list of these versions, 404 elsewhere.
    Serve(Vec<&'static str>, String),
    /// Accepts connections and never answers (no TLS handshake either).
    Hang,
}

/// A fake Kubernetes API server on 127.0.0.1 over TLS (hyper, tokio-rustls) from a thread of
/// its own: a request without `Bearer <token>` gets 401 and a `Status` body, as the real one
/// answers. Returns its port and the requests it saw (path and query).
fn fake_api_server(
    cert: &Path,
    key: &Path,
    token: &str,
    answer: ApiAnswer,
) -> (u16, Arc<std::sync::Mutex<Vec<String>>>) {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    if let ApiAnswer::Hang = answer {
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for s in listener.incoming() {
                held.push(s);
            }
        });
        return (port, seen);
    }
    let ApiAnswer::Serve(versions, body) = answer else {
        unreachable!()
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(key).unwrap();
    let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let bearer = format!("Bearer {token}");
    let log = seen.clone();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, bearer, log) = (acceptor.clone(), bearer.clone(), log.clone());
                let (versions, body) = (versions.clone(), body.clone());
                tokio::spawn(async move {
                    let Ok(stream) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let svc = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            log.lock().unwrap().push(req.uri().to_string());
                            let authorised = req
                                .headers()
                                .get("authorization")
                                .and_then(|v| v.to_str().ok())
                                == Some(bearer.as_str());
                            let path = req.uri().path();
                            let (status, text) = if !authorised {
                                (
                                    401,
                                    r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#
                                        .to_string(),
                                )
                            } else if versions.iter().any(|v| {
                                path == format!("/apis/resource.k8s.io/{v}/resourceslices")
                            }) {
                                (200, body.clone())
                            } else {
                                (404, "404 page not found\n".to_string())
                            };
                            std::future::ready(Ok::<_, std::convert::Infallible>(
                                hyper::Response::builder()
                                    .status(status)
                                    .header("content-type", "application/json")
                                    .body(http_body_util::Full::new(bytes::Bytes::from(text)))
                                    .unwrap(),
                            ))
                        },
                    );
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
    });
    (port, seen)
}

/// The exporter (`--once`, over dcgm-sim) with `env` set, and the in-cluster variables only
/// as `env` gives them.
fn exporter_env(args: &[String], env: &[(&str, String)]) -> Output {
    let st = Command::new(env!("CARGO"))
        .args(["build", "-q", "-p", "dcgm-sim"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap();
    assert!(st.success());
    let mut c = Command::new(env!("CARGO_BIN_EXE_dcgm-exporter"));
    c.args(["--simulate", "--once"])
        .args(args)
        .env("DCGM_SIM_LIB", profile_dir().join("libdcgm_sim.so"))
        .env_remove("DCGM_SIM_CONFIG")
        .env_remove("DCGM_SIM_FAULTS")
        .env_remove("DCGM_LIB_PATH");
    for (k, _) in std::env::vars() {
        if k.starts_with("DCGM_EXPORTER_")
            || k.starts_with("DCGM_HPC")
            || k.starts_with("KUBERNETES_")
            || k == "NVIDIA_RESOURCE_NAMES"
            || k == "NODE_NAME"
        {
            c.env_remove(k);
        }
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// `dcgm_exporter_dra_devices` by source.
fn dra_gauge(o: &Output) -> BTreeMap<String, f64> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("dcgm_exporter_dra_devices{"))
        .map(|line| {
            let labels = support::process::series(line, "dcgm_exporter_dra_devices").remove(0);
            let value = line.rsplit(' ').next().unwrap().parse().unwrap();
            (labels["source"].clone(), value)
        })
        .collect()
}

#[test]
fn dra_devices_without_a_cdi_spec_are_labelled_from_the_api_servers_resource_slices() {
    let (gpus, migs) = sim_ids();
    let dir = tempdir("dra-slices");
    let Some((cert, key)) = api_server_cert(&dir) else {
        return;
    };
    let proc_root = dir.join("proc");
    nvidia_proc(&proc_root, &gpus, &migs);
    // The CDI directory maps only gpu-0 (by its UUID); the other claims' CDI devices are in
    // no spec, as when the driver's directory is not mounted.
    let cdi = dir.join("cdi");
    std::fs::create_dir_all(&cdi).unwrap();
    std::fs::write(
        cdi.join("k8s.gpu.nvidia.com-claim_aaaa.json"),
        format!(
            r#"{{"cdiVersion":"0.5.0","kind":"{CLAIM_KIND}","devices":[{{"name":"aaaa-gpu-0","containerEdits":{{"env":["NVIDIA_VISIBLE_DEVICES={}"]}}}}]}}"#,
            gpus[&0]
        ),
    )
    .unwrap();
    let account = dir.join("serviceaccount");
    std::fs::create_dir_all(&account).unwrap();
    std::fs::write(account.join("token"), "good-token\n").unwrap();
    std::fs::copy(&cert, account.join("ca.crt")).unwrap();

    let nv = "gpu.nvidia.com";
    let q = |name: &str| format!("{CLAIM_KIND}={name}");
    let (a, s, m, dynamic, missing) = (
        q("aaaa-gpu-0"),
        q("ssss-gpu-3"),
        q("mmmm-gpu-7-mig-3g40gb-9-0"),
        q("dddd-gpu-2-mig-1g10gb-19-0"),
        q("xxxx-gpu-6"),
    );
    let resp = ListPodResourcesResponse {
        pod_resources: vec![
            dra_pod("cdi", "ml", "c", &[("by-cdi", &[(nv, "gpu-0", &[&a])])]),
            dra_pod("train", "ml", "t", &[("by-slice", &[(nv, "gpu-3", &[&s])])]),
            dra_pod(
                "infer",
                "serve",
                "server",
                &[("mig-claim", &[(nv, "gpu-7-mig-3g40gb-9-0", &[&m])])],
            ),
            dra_pod(
                "dyn",
                "lab",
                "d",
                &[("dyn-mig", &[(nv, "gpu-2-mig-1g10gb-19-0", &[&dynamic])])],
            ),
            dra_pod(
                "ghost",
                "ops",
                "g",
                &[("gone", &[(nv, "gpu-6", &[&missing])])],
            ),
        ],
    };
    let sock = fake_kubelet(&dir, resp);
    // The node's slice, as the NVIDIA driver publishes it: gpu-0 (here with GPU 5's UUID,
    // to show that the CDI spec comes first), gpu-3, a static MIG device with its UUID and a
    // dynamic one without.
    let slice_body = |beta1: bool| {
        let dev = |name: &str, attrs: serde_json::Value| {
            if beta1 {
                serde_json::json!({"name": name, "basic": {"attributes": attrs}})
            } else {
                serde_json::json!({"name": name, "attributes": attrs})
            }
        };
        serde_json::json!({
            "kind": "ResourceSliceList",
            "apiVersion": if beta1 { "resource.k8s.io/v1beta1" } else { "resource.k8s.io/v1" },
            "metadata": {"resourceVersion": "7"},
            "items": [{
                "metadata": {"name": "node-1-gpu.nvidia.com-x7k2p"},
                "spec": {
                    "driver": nv, "nodeName": "node-1",
                    "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                    "devices": [
                        dev("gpu-0", serde_json::json!({"type": {"string": "gpu"}, "uuid": {"string": gpus[&5]}})),
                        dev("gpu-3", serde_json::json!({"type": {"string": "gpu"}, "uuid": {"string": gpus[&3]},
                            "driverVersion": {"version": "580.65.6"}})),
                        dev("gpu-7-mig-3g40gb-9-0", serde_json::json!({"type": {"string": "mig"},
                            "uuid": {"string": migs[&(7, 1)]}, "parentUUID": {"string": gpus[&7]},
                            "profile": {"string": "3g.40gb"}})),
                        dev("gpu-2-mig-1g10gb-19-0", serde_json::json!({"type": {"string": "mig"},
                            "parentUUID": {"string": gpus[&2]}, "profile": {"string": "1g.10gb"}})),
                    ]
                }
            }]
        })
        .to_string()
    };
    let args = |slices: bool| -> Vec<String> {
        let mut a: Vec<String> = [
            "--kubernetes",
            "--kubernetes-enable-dra",
            "--pod-resources-kubelet-socket",
            sock.to_str().unwrap(),
            "--cdi-spec-dir",
            cdi.to_str().unwrap(),
            "--proc-root",
            proc_root.to_str().unwrap(),
            "--kubernetes-service-account-dir",
            account.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec();
        if slices {
            a.push("--kubernetes-dra-resource-slices".into());
        }
        a
    };
    let env = |port: u16| {
        vec![
            ("KUBERNETES_SERVICE_HOST", "127.0.0.1".to_string()),
            ("KUBERNETES_SERVICE_PORT", port.to_string()),
        ]
    };
    let dra = |l: &Labels| -> Vec<(String, String)> {
        l.iter()
            .filter(|(k, _)| {
                k.starts_with("dra_") || ["pod", "namespace", "container"].contains(&k.as_str())
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let whole = |o: &Output, gpu: &str| {
        series(o, "DCGM_FI_DEV_GPU_TEMP")
            .into_iter()
            .find(|l| l["gpu"] == gpu && !l.contains_key("GPU_I_ID"))
            .unwrap()
    };
    let mig = |o: &Output, gi: &str| {
        series(o, "DCGM_FI_DEV_FB_USED")
            .into_iter()
            .find(|l| l["gpu"] == "7" && l.get("GPU_I_ID").map(String::as_str) == Some(gi))
            .unwrap()
    };
    let what = |ns: &str, claim: &str, dev: &str, pod: &str, ctr: &str| {
        format!(
            "claim {ns}/{claim} device gpu.nvidia.com/node-1/{dev} of pod {ns}/{pod} container {ctr}"
        )
    };
    // The labels of a run where the API server answered.
    let check_mapped = |o: &Output, version: &str| {
        let stderr = String::from_utf8_lossy(&o.stderr).to_string();
        let w = dra(&whole(o, "3"));
        assert!(
            w.contains(&("pod".into(), "train".into()))
                && w.contains(&("dra_claim_name".into(), "by-slice".into()))
                && w.contains(&("dra_device_name".into(), "gpu-3".into()))
                && w.contains(&("dra_pool_name".into(), "node-1".into())),
            "{w:?}\n{stderr}"
        );
        assert_eq!(whole(o, "0")["pod"], "cdi", "the CDI spec comes first");
        assert!(!whole(o, "5").contains_key("pod"), "{stderr}");
        let l = mig(o, "1");
        assert_eq!(
            (l["pod"].as_str(), l["dra_claim_name"].as_str()),
            ("infer", "mig-claim")
        );
        assert_eq!(l["dra_mig_device_uuid"], migs[&(7, 1)]);
        assert_eq!(l["dra_mig_profile"], "3g.40gb");
        assert!(!mig(o, "2").contains_key("pod"));
        // GPU 2 and GPU 6 are not labelled: the dynamic MIG device has no UUID in its slice,
        // gpu-6 is not in it.
        assert!(!whole(o, "2").contains_key("pod"));
        assert!(!whole(o, "6").contains_key("pod"));
        for line in [
            format!(
                "{}: {} from ResourceSlice {version} of pool node-1, attribute uuid",
                what("ml", "by-slice", "gpu-3", "train", "t"),
                gpus[&3]
            ),
            format!(
                "{}: {} from ResourceSlice {version} of pool node-1",
                what(
                    "serve",
                    "mig-claim",
                    "gpu-7-mig-3g40gb-9-0",
                    "infer",
                    "server"
                ),
                migs[&(7, 1)]
            ),
            format!(
                "{} is not mapped to a GPU: CDI device {dynamic} is in no spec",
                what("lab", "dyn-mig", "gpu-2-mig-1g10gb-19-0", "dyn", "d")
            ),
            "(a MIG device of profile 1g.10gb on GPU".to_string(),
            format!(
                "{} is not mapped to a GPU: CDI device {missing} is in no spec of the 1 read from \
                 {}; ResourceSlices: no device gpu-6 in the slices of driver gpu.nvidia.com pool \
                 node-1",
                what("ops", "gone", "gpu-6", "ghost", "g"),
                cdi.display()
            ),
        ] {
            assert!(stderr.contains(&line), "{line}\n{stderr}");
        }
        assert_eq!(
            dra_gauge(o),
            BTreeMap::from([
                ("cdi".to_string(), 1.0),
                ("resource_slice".to_string(), 2.0),
                ("unmapped".to_string(), 2.0)
            ])
        );
    };

    // v1 (Kubernetes 1.34+): one request for the pool, selected by driver and node.
    let (port, seen) = fake_api_server(
        &cert,
        &key,
        "good-token",
        ApiAnswer::Serve(vec!["v1", "v1beta1"], slice_body(false)),
    );
    let o = exporter_env(&args(true), &env(port));
    check_mapped(&o, "v1");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.driver%3Dgpu.nvidia.com%2Cspec.nodeName%3Dnode-1&resourceVersion=0"
        ]
    );
    // NODE_NAME, where set, selects the node.
    let (port, seen) = fake_api_server(
        &cert,
        &key,
        "good-token",
        ApiAnswer::Serve(vec!["v1"], slice_body(false)),
    );
    let mut e = env(port);
    e.push(("NODE_NAME", "gpu-node-17".into()));
    let o = exporter_env(&args(true), &e);
    assert!(
        seen.lock().unwrap()[0].contains("spec.nodeName%3Dgpu-node-17&"),
        "{:?}",
        seen.lock().unwrap()
    );
    check_mapped(&o, "v1");

    // Only v1beta1 (Kubernetes 1.32; attributes under `basic`): v1 and v1beta2 are 404.
    let (port, seen) = fake_api_server(
        &cert,
        &key,
        "good-token",
        ApiAnswer::Serve(vec!["v1beta1"], slice_body(true)),
    );
    let o = exporter_env(&args(true), &env(port));
    check_mapped(&o, "v1beta1");
    let paths: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|p| p.split('?').next().unwrap().to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "/apis/resource.k8s.io/v1/resourceslices",
            "/apis/resource.k8s.io/v1beta2/resourceslices",
            "/apis/resource.k8s.io/v1beta1/resourceslices"
        ]
    );

    // The failures: the metrics go out, the CDI-mapped device keeps its labels, the others
    // have none, and the log says why.
    let failing = |o: &Output, why: &str| {
        let stderr = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(whole(o, "0")["pod"], "cdi", "{stderr}");
        for gpu in ["3", "2", "6"] {
            assert!(!whole(o, gpu).contains_key("pod"), "GPU {gpu}\n{stderr}");
        }
        assert!(!mig(o, "1").contains_key("pod"));
        assert!(
            stderr.contains(&format!(
                "{} is not mapped to a GPU: CDI device {s} is in no spec of the 1 read from {}; \
                 ResourceSlices: {why}",
                what("ml", "by-slice", "gpu-3", "train", "t"),
                cdi.display()
            )),
            "{why}\n{stderr}"
        );
        assert_eq!(dra_gauge(o)["unmapped"], 4.0);
        assert_eq!(dra_gauge(o)["resource_slice"], 0.0);
    };
    // A wrong token: 401.
    let (port, _) = fake_api_server(
        &cert,
        &key,
        "another-token",
        ApiAnswer::Serve(vec!["v1"], slice_body(false)),
    );
    let o = exporter_env(&args(true), &env(port));
    failing(&o, "the API server answered HTTP 401 to https://127.0.0.1:");
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("Unauthorized (the service-account token is not accepted")
    );
    // Nothing listening.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let o = exporter_env(&args(true), &env(port));
    failing(
        &o,
        &format!(
            "cannot reach the API server at https://127.0.0.1:{port}/apis/resource.k8s.io/v1/resourceslices"
        ),
    );
    // An answer that is no ResourceSliceList.
    let (port, _) = fake_api_server(
        &cert,
        &key,
        "good-token",
        ApiAnswer::Serve(
            vec!["v1"],
            r#"{"items":[{"spec":{"driver":"gpu.nvidia.com"}}"#.into(),
        ),
    );
    let o = exporter_env(&args(true), &env(port));
    failing(&o, "the answer of https://127.0.0.1:");
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a ResourceSliceList: "));
    // A server that accepts and never answers: bounded by the request's timeout.
    let (port, _) = fake_api_server(&cert, &key, "good-token", ApiAnswer::Hang);
    let o = exporter_env(&args(true), &env(port));
    failing(
        &o,
        &format!("the API server at https://127.0.0.1:{port} did not answer within 3s"),
    );
    // No in-cluster environment.
    let o = exporter_env(&args(true), &[]);
    failing(
        &o,
        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set",
    );
    // No token in the service-account directory.
    let mut no_token = args(true);
    let at = no_token
        .iter()
        .position(|a| a == "--kubernetes-service-account-dir")
        .unwrap();
    no_token[at + 1] = dir.join("no-account").to_str().unwrap().into();
    let o = exporter_env(&no_token, &env(port));
    failing(&o, "cannot read the service account's token");

    // Without the flag the API server is never asked, even in a pod.
    let (port, seen) = fake_api_server(
        &cert,
        &key,
        "good-token",
        ApiAnswer::Serve(vec!["v1"], slice_body(false)),
    );
    let o = exporter_env(&args(false), &env(port));
    assert!(seen.lock().unwrap().is_empty());
    assert!(!whole(&o, "3").contains_key("pod"));
    assert_eq!(dra_gauge(&o)["resource_slice"], 0.0);
    assert_eq!(dra_gauge(&o)["cdi"], 1.0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A v1 ResourceSliceList of pool node-1 with these (device, GPU UUID) pairs.
fn gpu_slice(devices: &[(&str, &str)]) -> String {
    let devices: Vec<serde_json::Value> = devices
        .iter()
        .map(|(name, uuid)| {
            serde_json::json!({"name": name, "attributes": {
                "type": {"string": "gpu"}, "uuid": {"string": uuid}}})
        })
        .collect();
    serde_json::json!({"kind": "ResourceSliceList", "apiVersion": "resource.k8s.io/v1",
        "metadata": {}, "items": [{"spec": {"driver": "gpu.nvidia.com", "nodeName": "node-1",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "devices": devices}}]})
    .to_string()
}

#[test]
fn a_running_exporter_keeps_the_resource_slices_for_the_refresh_interval() {
    let (gpus, migs) = sim_ids();
    let dir = tempdir("dra-slices-server");
    let Some((cert, key)) = api_server_cert(&dir) else {
        return;
    };
    let proc_root = dir.join("proc");
    nvidia_proc(&proc_root, &gpus, &migs);
    let cdi = dir.join("cdi");
    std::fs::create_dir_all(&cdi).unwrap();
    let account = dir.join("serviceaccount");
    std::fs::create_dir_all(&account).unwrap();
    std::fs::write(account.join("token"), "t0ken").unwrap();
    std::fs::copy(&cert, account.join("ca.crt")).unwrap();
    let resp = ListPodResourcesResponse {
        pod_resources: vec![dra_pod(
            "train",
            "ml",
            "t",
            &[(
                "by-slice",
                &[(
                    "gpu.nvidia.com",
                    "gpu-4",
                    &[&format!("{CLAIM_KIND}=ssss-gpu-4")],
                )],
            )],
        )],
    };
    let sock = fake_kubelet(&dir, resp);
    let start = |port: u16, refresh: &str| {
        let mut cmd = support::process::exporter(
            "node-1",
            &[
                "--simulate",
                "-a",
                "127.0.0.1:0",
                "-c",
                "1000",
                "--kubernetes",
                "--kubernetes-enable-dra",
                "--kubernetes-dra-resource-slices",
                "--kubernetes-dra-resource-slice-refresh",
                refresh,
                "--pod-resources-kubelet-socket",
                sock.to_str().unwrap(),
                "--cdi-spec-dir",
                cdi.to_str().unwrap(),
                "--proc-root",
                proc_root.to_str().unwrap(),
                "--kubernetes-service-account-dir",
                account.to_str().unwrap(),
            ],
        );
        cmd.env("KUBERNETES_SERVICE_HOST", "127.0.0.1")
            .env("KUBERNETES_SERVICE_PORT", port.to_string());
        support::process::Server::start(cmd)
    };
    let labelled = |body: &str| {
        support::process::series(body, "DCGM_FI_DEV_GPU_TEMP")
            .iter()
            .any(|l| l["gpu"] == "4" && l.get("pod").map(String::as_str) == Some("train"))
    };
    let limit = std::time::Duration::from_secs(60);

    // The default refresh (60 s): the slices are asked for once, and the labels stay on
    // /metrics across the kubelet refreshes (every second here) that reuse them.
    let (port, seen) = fake_api_server(
        &cert,
        &key,
        "t0ken",
        ApiAnswer::Serve(vec!["v1"], gpu_slice(&[("gpu-4", &gpus[&4])])),
    );
    let s = start(port, "60s");
    let (st, body) = s.poll("/metrics", limit, |st, b| st == 200 && labelled(b));
    assert!(labelled(&body), "{st}\n{}", s.log_text());
    assert!(
        body.contains("dcgm_exporter_dra_devices{source=\"resource_slice\"} 1\n")
            && body.contains("dcgm_exporter_dra_devices{source=\"unmapped\"} 0\n"),
        "{body}"
    );
    assert!(body.contains("# TYPE dcgm_exporter_dra_devices gauge\n"));
    std::thread::sleep(std::time::Duration::from_secs(3));
    let (_, body) = s.get("/metrics");
    assert!(labelled(&body), "{}", s.log_text());
    assert_eq!(seen.lock().unwrap().len(), 1, "{:?}", seen.lock().unwrap());
    assert!(seen.lock().unwrap()[0].contains("spec.nodeName%3Dnode-1&"));
    assert_eq!(
        s.lines_with(&["by-slice", "from ResourceSlice v1"]).len(),
        1,
        "logged once, when first mapped: {}",
        s.log_text()
    );
    drop(s);

    // A one-second refresh asks again.
    let (port, seen) = fake_api_server(
        &cert,
        &key,
        "t0ken",
        ApiAnswer::Serve(vec!["v1"], gpu_slice(&[("gpu-4", &gpus[&4])])),
    );
    let s = start(port, "1s");
    let t0 = std::time::Instant::now();
    while seen.lock().unwrap().len() < 3 {
        assert!(t0.elapsed() < limit, "{}", s.log_text());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let (_, body) = s.poll("/metrics", limit, |st, b| st == 200 && labelled(b));
    assert!(labelled(&body), "{}", s.log_text());
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}
