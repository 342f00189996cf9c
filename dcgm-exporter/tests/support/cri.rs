//! A fake container runtime: a tonic gRPC server on a unix socket answering CRI's
//! `runtime.v1.RuntimeService/ListContainers` with the containers the test sets.

#![allow(dead_code)] // each test binary uses a part

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use dcgm_exporter::attribution::cri::{ListContainersRequest, ListContainersResponse};
use tonic::codegen::http;

/// The answer the fake runtime gives, changeable while it runs, and how many calls it got.
#[derive(Clone, Default)]
pub struct Runtime {
    pub answer: Arc<Mutex<ListContainersResponse>>,
    pub calls: Arc<AtomicUsize>,
}

impl tonic::server::NamedService for Runtime {
    const NAME: &'static str = "runtime.v1.RuntimeService";
}

struct List(ListContainersResponse);

impl tonic::server::UnaryService<ListContainersRequest> for List {
    type Response = ListContainersResponse;
    type Future = std::future::Ready<Result<tonic::Response<Self::Response>, tonic::Status>>;
    fn call(&mut self, _: tonic::Request<ListContainersRequest>) -> Self::Future {
        std::future::ready(Ok(tonic::Response::new(self.0.clone())))
    }
}

impl tower::Service<http::Request<tonic::body::Body>> for Runtime {
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = tonic::codegen::BoxFuture<Self::Response, Self::Error>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Self::Future {
        let resp = self.answer.lock().unwrap().clone();
        self.calls.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move {
            if req.uri().path() != "/runtime.v1.RuntimeService/ListContainers" {
                return Ok(tonic::Status::unimplemented("not here").into_http());
            }
            let mut grpc = tonic::server::Grpc::new(tonic::codec::ProstCodec::default());
            Ok(grpc.unary(List(resp), req).await)
        })
    }
}

/// Serves `runtime` on `dir/cri.sock` from a thread of its own; returns the socket.
pub fn serve(dir: &Path, runtime: Runtime) -> PathBuf {
    let sock = dir.join("cri.sock");
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
                .add_service(runtime)
                .serve_with_incoming(tokio_stream::wrappers::UnixListenerStream::new(listener))
                .await
                .unwrap();
        });
    });
    rx.recv().unwrap();
    sock
}
