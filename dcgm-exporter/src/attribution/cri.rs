//! Container labels without Kubernetes (`--container-labels`, dcgm-exporter 4.8.3): each
//! process DCGM lists on a GPU is placed in its container by its cgroup
//! ([`crate::attribution::cgroup`], which gives the container's id), and the container's name (and its pod
//! and namespace, when the runtime runs it for Kubernetes) come from the container runtime's
//! CRI API: `runtime.v1.RuntimeService/ListContainers`, gRPC over its unix socket
//! (`--container-runtime-socket`; containerd's by default, CRI-O's is
//! `/var/run/crio/crio.sock`).
//!
//! As for the kubelet ([`crate::attribution::kubernetes`]), the few messages needed are written here with
//! `prost` derives from the CRI's field numbers (`k8s.io/cri-api`, `api.proto`); unknown
//! fields are skipped by the decoder.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dcgm_prometheus::LabelSet;

/// containerd's socket, where its CRI plugin answers.
pub const DEFAULT_SOCKET: &str = "/run/containerd/containerd.sock";

/// The gRPC method.
const LIST_PATH: &str = "/runtime.v1.RuntimeService/ListContainers";

/// How long one `ListContainers` may take, connecting included.
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// The largest answer taken (tonic's default is 4 MiB; a node of 10,000 containers with
/// their labels fits in 16).
const MAX_ANSWER: usize = 16 << 20;

/// `runtime.v1.ListContainersRequest` (no filter: every container).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListContainersRequest {}

/// `runtime.v1.ListContainersResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListContainersResponse {
    /// The containers.
    #[prost(message, repeated, tag = "1")]
    pub containers: Vec<Container>,
}

/// `runtime.v1.Container` (fields 1, 2, 3, 8; the image, state and times are skipped).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Container {
    /// The container's id (64 hex digits for containerd and CRI-O).
    #[prost(string, tag = "1")]
    pub id: String,
    /// Its pod sandbox's id.
    #[prost(string, tag = "2")]
    pub pod_sandbox_id: String,
    /// Its name.
    #[prost(message, optional, tag = "3")]
    pub metadata: Option<ContainerMetadata>,
    /// Its labels (the kubelet's `io.kubernetes.pod.name`, `io.kubernetes.pod.namespace`,
    /// `io.kubernetes.container.name` among them).
    #[prost(map = "string, string", tag = "8")]
    pub labels: HashMap<String, String>,
}

/// `runtime.v1.ContainerMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerMetadata {
    /// The container's name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// How many times it was restarted.
    #[prost(uint32, tag = "2")]
    pub attempt: u32,
}

/// Why the runtime could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum CriError {
    /// No connection to the socket.
    #[error("cannot connect to the container runtime at {}: {source}", socket.display())]
    Connect {
        /// The socket.
        socket: PathBuf,
        /// Why.
        source: tonic::transport::Error,
    },
    /// The call failed.
    #[error("ListContainers failed: {0}")]
    Call(#[from] tonic::Status),
    /// No answer in time.
    #[error("the container runtime did not answer ListContainers within {TIMEOUT:?}")]
    Timeout,
}

/// Calls `ListContainers` on `socket`, connecting included, within [`TIMEOUT`].
///
/// # Errors
///
/// [`CriError`].
pub async fn list(socket: &Path) -> Result<ListContainersResponse, CriError> {
    tokio::time::timeout(TIMEOUT, list_unbounded(socket))
        .await
        .map_err(|_| CriError::Timeout)?
}

async fn list_unbounded(socket: &Path) -> Result<ListContainersResponse, CriError> {
    let path = socket.to_path_buf();
    let channel = tonic::transport::Endpoint::from_static("http://cri.invalid")
        .connect_with_connector(tower::service_fn(move |_: tonic::transport::Uri| {
            let path = path.clone();
            async move {
                let stream = tokio::net::UnixStream::connect(path).await?;
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
            }
        }))
        .await
        .map_err(|source| CriError::Connect {
            socket: socket.to_path_buf(),
            source,
        })?;
    let mut grpc = tonic::client::Grpc::new(channel).max_decoding_message_size(MAX_ANSWER);
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let resp = grpc
        .unary(
            tonic::Request::new(ListContainersRequest {}),
            tonic::codegen::http::uri::PathAndQuery::from_static(LIST_PATH),
            tonic::codec::ProstCodec::default(),
        )
        .await?;
    Ok(resp.into_inner())
}

/// The labels of a container: `container` (its name), `container_id`, and `pod` and
/// `namespace` when the kubelet started it.
pub fn labels(c: &Container) -> LabelSet {
    let mut out: LabelSet = Vec::new();
    if let Some(ns) = c.labels.get("io.kubernetes.pod.namespace") {
        out.push(("namespace".into(), ns.clone()));
    }
    if let Some(pod) = c.labels.get("io.kubernetes.pod.name") {
        out.push(("pod".into(), pod.clone()));
    }
    let name = c
        .metadata
        .as_ref()
        .map(|m| m.name.clone())
        .filter(|n| !n.is_empty())
        .or_else(|| c.labels.get("io.kubernetes.container.name").cloned())
        .unwrap_or_default();
    if !name.is_empty() {
        out.push(("container".into(), name));
    }
    out.push(("container_id".into(), c.id.clone()));
    out
}

/// The runtime's containers by id, asked at most once a collection, on a runtime of its own
/// (the collector thread is not async).
#[derive(Debug)]
pub struct Containers {
    socket: PathBuf,
    rt: Option<tokio::runtime::Runtime>,
    /// The last failure, logged once.
    failing: Option<String>,
}

impl Containers {
    /// For the runtime at `socket`.
    pub fn new(socket: PathBuf) -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| log::error!("no container labels: cannot start a runtime: {e}"))
            .ok();
        Self {
            socket,
            rt,
            failing: None,
        }
    }

    /// The labels of each container the runtime lists, by id; empty (and logged once) when
    /// it cannot be asked.
    pub fn by_id(&mut self) -> HashMap<String, LabelSet> {
        let Some(rt) = &self.rt else {
            return HashMap::new();
        };
        match rt.block_on(list(&self.socket)) {
            Ok(r) => {
                if self.failing.take().is_some() {
                    log::info!("the container runtime answers again: container labels are back");
                }
                r.containers
                    .iter()
                    .map(|c| (c.id.clone(), labels(c)))
                    .collect()
            }
            Err(e) => {
                let msg = e.to_string();
                if self.failing.as_deref() != Some(&msg) {
                    log::warn!("{msg}; the metrics go out without container labels");
                    self.failing = Some(msg);
                }
                HashMap::new()
            }
        }
    }
}
