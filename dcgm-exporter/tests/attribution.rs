//! Kubernetes and HPC attribution, end to end: the `dcgm-exporter` binary (`--once`, over
//! dcgm-sim) against a fake kubelet, a real gRPC server (tonic) on a unix socket answering
//! the pod-resources `List` with GPUs, a time-sliced GPU and a MIG instance assigned to pods,
//! and against an HPC job-mapping directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::task::{Context, Poll};

use dcgm_exporter::kubernetes::{
    ContainerDevices, ContainerResources, ListPodResourcesRequest, ListPodResourcesResponse,
    PodResources, device_keys,
};
use tonic::codegen::http;

mod support;
use support::process::Labels;

fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

fn exporter(args: &[&str]) -> Output {
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
            || k == "NVIDIA_RESOURCE_NAMES"
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
        }],
    }
}

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
            let group = dcgm::Group::with_entities(&h, "mig-uuid", &[e]).unwrap();
            let fields = dcgm::FieldGroup::create(&h, "mig-uuid", &[dcgm::FieldId(54)]).unwrap();
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

    // Device names, an extra resource name, and the pod_uid label.
    let o = exporter(&[
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
    assert!(
        temp.iter()
            .filter(|l| l.contains_key("pod"))
            .all(|l| l.contains_key("pod_uid"))
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
}
