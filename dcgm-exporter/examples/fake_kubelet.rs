//! A stand-in for the kubelet's pod-resources API (v1), for end-to-end tests of the exporter's
//! `--kubernetes` labels without a kubelet: one process serves any number of unix sockets (one
//! per simulated node), each answering `v1.PodResourcesLister/List` with the pods its file
//! section names. Any other method (`GetAllocatableResources`, `Get`, which the exporter does
//! not call) is answered UNIMPLEMENTED.
//!
//! ```text
//! cargo run -p dcgm-exporter --example fake_kubelet -- PODS.yaml
//! ```
//!
//! `PODS.yaml` (YAML, or JSON, which YAML reads too):
//!
//! ```yaml
//! nodes:
//!   - socket: /tmp/node-00/kubelet.sock
//!     pods:
//!       - pod: train-00
//!         namespace: ml
//!         container: trainer
//!         resource: nvidia.com/gpu      # optional, this by default
//!         devices: [GPU-…, nvidia5]     # as --kubernetes-gpu-id-type expects: UUIDs or nvidiaN
//! ```
//!
//! Entries of one pod and namespace become one pod with a container each. A stale socket file
//! is replaced. Once every socket listens it prints `listening on N sockets` to stdout; on
//! SIGTERM or SIGINT it removes its sockets and exits 0. A bad file is an error naming the
//! file and what is wrong with it (exit 1).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::task::{Context, Poll};

use dcgm_exporter::attribution::kubelet_wire::{
    ContainerDevices, ContainerResources, ListPodResourcesRequest, ListPodResourcesResponse,
    PodResources,
};
use serde::Deserialize;
use tonic::codegen::http;

/// The pods file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PodsFile {
    nodes: Vec<Node>,
}

/// One node: its socket and the containers holding its devices.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Node {
    socket: PathBuf,
    #[serde(default)]
    pods: Vec<Assignment>,
}

/// One container and the devices the kubelet gave it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Assignment {
    pod: String,
    namespace: String,
    container: String,
    #[serde(default = "default_resource")]
    resource: String,
    devices: Vec<String>,
}

fn default_resource() -> String {
    "nvidia.com/gpu".into()
}

/// Why the fake kubelet could not start.
#[derive(Debug, thiserror::Error)]
enum FakeKubeletError {
    #[error(
        "usage: fake_kubelet PODS.yaml (the pods of each node's socket; see the example's docs)"
    )]
    Usage,
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not a pods file (nodes: [{{socket, pods: [{{pod, namespace, container, devices}}]}}]): {source}"
    )]
    Parse {
        path: PathBuf,
        source: serde_yaml::Error,
    },
    #[error("{path}: socket {socket} is named twice; give each node its own")]
    DuplicateSocket { path: PathBuf, socket: PathBuf },
    #[error("cannot listen on {socket}: {source} (does its directory exist and is it writable?)")]
    Bind {
        socket: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the async runtime or a signal handler: {0}")]
    Runtime(#[from] std::io::Error),
}

/// Reads and checks the pods file.
fn load(path: &Path) -> Result<PodsFile, FakeKubeletError> {
    let text = std::fs::read_to_string(path).map_err(|source| FakeKubeletError::Read {
        path: path.into(),
        source,
    })?;
    parse(path, &text)
}

fn parse(path: &Path, text: &str) -> Result<PodsFile, FakeKubeletError> {
    let file: PodsFile = serde_yaml::from_str(text).map_err(|source| FakeKubeletError::Parse {
        path: path.into(),
        source,
    })?;
    let mut seen = std::collections::HashSet::new();
    for n in &file.nodes {
        if !seen.insert(&n.socket) {
            return Err(FakeKubeletError::DuplicateSocket {
                path: path.into(),
                socket: n.socket.clone(),
            });
        }
    }
    Ok(file)
}

/// A node's `List` answer: its entries grouped by pod (in the file's order), a container each.
fn response(pods: &[Assignment]) -> ListPodResourcesResponse {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut by_pod: BTreeMap<(String, String), Vec<ContainerResources>> = BTreeMap::new();
    for a in pods {
        let key = (a.pod.clone(), a.namespace.clone());
        if !by_pod.contains_key(&key) {
            order.push(key.clone());
        }
        by_pod.entry(key).or_default().push(ContainerResources {
            name: a.container.clone(),
            devices: vec![ContainerDevices {
                resource_name: a.resource.clone(),
                device_ids: a.devices.clone(),
            }],
            dynamic_resources: Vec::new(),
        });
    }
    ListPodResourcesResponse {
        pod_resources: order
            .into_iter()
            .map(|key| {
                let containers = by_pod.remove(&key).unwrap_or_default();
                PodResources {
                    name: key.0,
                    namespace: key.1,
                    containers,
                }
            })
            .collect(),
    }
}

/// One socket's service: `List` answered with its node's pods.
#[derive(Clone)]
struct Lister(Arc<ListPodResourcesResponse>);

impl tonic::server::NamedService for Lister {
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

// By hand rather than generated from the .proto: the crate's messages are prost derives (no
// protoc at build time), and one unary method is all the exporter calls.
impl tower::Service<http::Request<tonic::body::Body>> for Lister {
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
                return Ok(tonic::Status::unimplemented(format!(
                    "the fake kubelet serves only List, not {}",
                    req.uri().path()
                ))
                .into_http());
            }
            let mut grpc = tonic::server::Grpc::new(tonic::codec::ProstCodec::default());
            Ok(grpc.unary(List(resp), req).await)
        })
    }
}

/// Binds a socket, replacing a stale socket file (never another kind of file).
fn bind(socket: &Path) -> Result<tokio::net::UnixListener, FakeKubeletError> {
    use std::os::unix::fs::FileTypeExt;
    if std::fs::symlink_metadata(socket).is_ok_and(|m| m.file_type().is_socket()) {
        let _ = std::fs::remove_file(socket);
    }
    tokio::net::UnixListener::bind(socket).map_err(|source| FakeKubeletError::Bind {
        socket: socket.into(),
        source,
    })
}

async fn serve(file: PodsFile) -> Result<(), FakeKubeletError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut sockets = Vec::new();
    for node in &file.nodes {
        let listener = match bind(&node.socket) {
            Ok(l) => l,
            Err(e) => {
                remove(&sockets);
                return Err(e);
            }
        };
        sockets.push(node.socket.clone());
        let svc = Lister(Arc::new(response(&node.pods)));
        let socket = node.socket.clone();
        tokio::spawn(async move {
            let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
            if let Err(e) = tonic::transport::Server::builder()
                .add_service(svc)
                .serve_with_incoming(incoming)
                .await
            {
                eprintln!("fake_kubelet: {}: {e}", socket.display());
            }
        });
    }
    println!("listening on {} sockets", sockets.len());
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    remove(&sockets);
    Ok(())
}

fn remove(sockets: &[PathBuf]) {
    for s in sockets {
        let _ = std::fs::remove_file(s);
    }
}

fn run() -> Result<(), FakeKubeletError> {
    let mut args = std::env::args_os().skip(1);
    let (Some(path), None) = (args.next(), args.next()) else {
        return Err(FakeKubeletError::Usage);
    };
    let file = load(Path::new(&path))?;
    // One thread for every socket: a List costs microseconds, and the test machine is small.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(serve(file))
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fake_kubelet: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_of_one_pod_become_its_containers_in_file_order() {
        let file = parse(
            Path::new("pods.yaml"),
            r#"{"nodes": [{"socket": "/s0", "pods": [
                {"pod": "b", "namespace": "ml", "container": "c1", "devices": ["GPU-1"]},
                {"pod": "a", "namespace": "ml", "container": "c", "resource": "nvidia.com/mig-1g.10gb", "devices": ["MIG-2"]},
                {"pod": "b", "namespace": "ml", "container": "c2", "devices": ["nvidia3", "nvidia4"]}]},
              {"socket": "/s1"}]}"#,
        )
        .unwrap();
        let r = response(&file.nodes[0].pods);
        let names: Vec<_> = r.pod_resources.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        let b = &r.pod_resources[0];
        assert_eq!(b.namespace, "ml");
        let containers: Vec<_> = b.containers.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(containers, ["c1", "c2"]);
        assert_eq!(
            b.containers[1].devices[0].device_ids,
            ["nvidia3", "nvidia4"]
        );
        assert_eq!(b.containers[0].devices[0].resource_name, "nvidia.com/gpu");
        assert_eq!(
            r.pod_resources[1].containers[0].devices[0].resource_name,
            "nvidia.com/mig-1g.10gb"
        );
        assert!(response(&file.nodes[1].pods).pod_resources.is_empty());
    }

    #[test]
    fn a_bad_file_is_an_error_that_names_it() {
        let p = Path::new("pods.yaml");
        for bad in [
            "nodes: [{socket: /s, pods: [{pod: a, namespace: n, devices: [x]}]}]",
            "nodes: [{socket: /s, podz: []}]",
            "[1, 2]",
        ] {
            let e = parse(p, bad).unwrap_err();
            assert!(matches!(e, FakeKubeletError::Parse { .. }), "{bad}: {e}");
            assert!(e.to_string().contains("pods.yaml"), "{e}");
        }
        let e = parse(p, "nodes: [{socket: /s}, {socket: /s}]").unwrap_err();
        assert!(matches!(e, FakeKubeletError::DuplicateSocket { .. }), "{e}");
    }

    #[test]
    fn a_socket_in_a_missing_directory_is_a_bind_error() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let socket = Path::new("/nonexistent-dir-of-the-fake-kubelet/kubelet.sock");
        let e = rt.block_on(async { bind(socket) }).unwrap_err();
        assert!(matches!(e, FakeKubeletError::Bind { .. }), "{e}");
    }
}
