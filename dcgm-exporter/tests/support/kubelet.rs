//! A fake kubelet: a tonic gRPC server on a unix socket answering the pod-resources `List`
//! with a response the test sets (and may change while the exporter runs).

#![allow(dead_code)] // each test binary uses a part

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use dcgm_exporter::attribution::kubelet_wire::{
    CdiDevice, ClaimResource, ContainerDevices, ContainerResources, DynamicResource,
    ListPodResourcesRequest, ListPodResourcesResponse, PodResources,
};
use tonic::codegen::http;

/// The answer the fake kubelet gives, changeable while it runs.
pub type Answer = Arc<Mutex<ListPodResourcesResponse>>;

#[derive(Clone)]
struct Kubelet(Answer);

impl tonic::server::NamedService for Kubelet {
    const NAME: &'static str = "v1.PodResourcesLister";
}

struct List(ListPodResourcesResponse);

impl tonic::server::UnaryService<ListPodResourcesRequest> for List {
    type Response = ListPodResourcesResponse;
    type Future = std::future::Ready<Result<tonic::Response<Self::Response>, tonic::Status>>;
    fn call(&mut self, _: tonic::Request<ListPodResourcesRequest>) -> Self::Future {
        std::future::ready(Ok(tonic::Response::new(self.0.clone())))
    }
}

impl tower::Service<http::Request<tonic::body::Body>> for Kubelet {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = tonic::codegen::BoxFuture<Self::Response, Self::Error>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let resp = self.0.lock().unwrap().clone();
        Box::pin(async move {
            if req.uri().path() != "/v1.PodResourcesLister/List" {
                return Ok(tonic::Status::unimplemented("not here").into_http());
            }
            let mut grpc = tonic::server::Grpc::new(tonic::codec::ProstCodec::default());
            Ok(grpc.unary(List(resp), req).await)
        })
    }
}

/// Serves `answer` on `dir/kubelet.sock` from a thread of its own; returns the socket.
pub fn serve(dir: &Path, answer: Answer) -> PathBuf {
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
                .add_service(Kubelet(answer))
                .serve_with_incoming(tokio_stream::wrappers::UnixListenerStream::new(listener))
                .await
                .unwrap();
        });
    });
    rx.recv().unwrap();
    sock
}

/// A pod whose container holds `ids` of the device plugin's `resource`.
pub fn device_pod(
    name: &str,
    ns: &str,
    container: &str,
    resource: &str,
    ids: &[&str],
) -> PodResources {
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

/// A pod whose container holds DRA claim `claim` of the NVIDIA driver's device `device`
/// (pool `node-1`), prepared as CDI device `cdi`.
pub fn claim_pod(
    name: &str,
    ns: &str,
    container: &str,
    claim: &str,
    device: &str,
    cdi: &str,
) -> PodResources {
    PodResources {
        name: name.into(),
        namespace: ns.into(),
        containers: vec![ContainerResources {
            name: container.into(),
            devices: vec![],
            dynamic_resources: vec![DynamicResource {
                claim_name: claim.into(),
                claim_namespace: ns.into(),
                claim_resources: vec![ClaimResource {
                    cdi_devices: vec![CdiDevice { name: cdi.into() }],
                    driver_name: "gpu.nvidia.com".into(),
                    pool_name: "node-1".into(),
                    device_name: device.into(),
                }],
            }],
        }],
    }
}
