//! The kubelet's pod-resources API on the wire: its v1 `List` messages, written here with
//! `prost` derives from the API's field numbers (those the mapping needs; unknown fields are
//! skipped by the decoder), so no `.proto` file or `protoc` is needed at build time, and the
//! call itself (gRPC over the kubelet's unix socket, bounded by [`TIMEOUT`]). What the answer
//! means for the labels is [`super::kubernetes`]'s.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The kubelet's socket unless `--pod-resources-kubelet-socket` says otherwise.
pub const DEFAULT_SOCKET: &str = "/var/lib/kubelet/pod-resources/kubelet.sock";

/// The gRPC method.
const LIST_PATH: &str = "/v1.PodResourcesLister/List";

/// How long one `List` may take, connecting included. The kubelet answers on a local socket
/// in milliseconds; a kubelet that takes longer is stuck, and the pod labels are better
/// dropped (and the failure shown on `/health`) than held on to. The refresher asks again at
/// its next round.
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// `v1.ListPodResourcesRequest` (empty).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListPodResourcesRequest {}

/// `v1.ListPodResourcesResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListPodResourcesResponse {
    /// Every pod with its containers' resources.
    #[prost(message, repeated, tag = "1")]
    pub pod_resources: Vec<PodResources>,
}

/// `v1.PodResources` (fields 1–3; the CPU and memory fields are skipped).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PodResources {
    /// Pod name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Pod namespace.
    #[prost(string, tag = "2")]
    pub namespace: String,
    /// Its containers.
    #[prost(message, repeated, tag = "3")]
    pub containers: Vec<ContainerResources>,
}

/// `v1.ContainerResources` (fields 1, 2 and 5; the CPU and memory fields are skipped).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerResources {
    /// Container name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Devices assigned to it, per resource.
    #[prost(message, repeated, tag = "2")]
    pub devices: Vec<ContainerDevices>,
    /// Devices of Dynamic Resource Allocation claims assigned to it.
    #[prost(message, repeated, tag = "5")]
    pub dynamic_resources: Vec<DynamicResource>,
}

/// `v1.DynamicResource`: one ResourceClaim of a container (field 1, the class name, is
/// gone from the API).
#[derive(Clone, PartialEq, prost::Message)]
pub struct DynamicResource {
    /// The ResourceClaim's name.
    #[prost(string, tag = "2")]
    pub claim_name: String,
    /// Its namespace.
    #[prost(string, tag = "3")]
    pub claim_namespace: String,
    /// The devices allocated to it.
    #[prost(message, repeated, tag = "4")]
    pub claim_resources: Vec<ClaimResource>,
}

/// `v1.ClaimResource`: one allocated device of a claim (fields 1–4; `share_id` is skipped).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClaimResource {
    /// The CDI devices the driver prepared for it.
    #[prost(message, repeated, tag = "1")]
    pub cdi_devices: Vec<CdiDevice>,
    /// The DRA driver (`gpu.nvidia.com`).
    #[prost(string, tag = "2")]
    pub driver_name: String,
    /// The driver's resource pool.
    #[prost(string, tag = "3")]
    pub pool_name: String,
    /// The device within the pool.
    #[prost(string, tag = "4")]
    pub device_name: String,
}

/// `v1.CDIDevice`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CdiDevice {
    /// The fully qualified CDI device name (`vendor/class=name`).
    #[prost(string, tag = "1")]
    pub name: String,
}

/// `v1.ContainerDevices` (fields 1–2).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ContainerDevices {
    /// The extended resource, e.g. `nvidia.com/gpu`.
    #[prost(string, tag = "1")]
    pub resource_name: String,
    /// Device ids as the device plugin named them (`GPU-…`, `MIG-…`, `nvidia0`, …).
    #[prost(string, repeated, tag = "2")]
    pub device_ids: Vec<String>,
}

/// Errors of one `List` call.
#[derive(Debug, thiserror::Error)]
pub enum PodResourcesError {
    /// The socket could not be reached.
    #[error("cannot reach the kubelet at {path}: {source}")]
    Connect {
        /// The socket.
        path: PathBuf,
        /// Why.
        #[source]
        source: tonic::transport::Error,
    },
    /// The call failed.
    #[error("pod-resources List failed: {0}")]
    Call(#[from] tonic::Status),
    /// Connecting and the call took longer than [`TIMEOUT`].
    #[error(
        "the kubelet at {} did not answer the pod-resources List within {timeout:?}",
        path.display()
    )]
    Timeout {
        /// The socket.
        path: PathBuf,
        /// [`TIMEOUT`].
        timeout: Duration,
    },
    /// The async runtime could not start.
    #[error("cannot start the gRPC client: {0}")]
    Runtime(#[from] std::io::Error),
}

/// Calls the kubelet's `List` on `socket`, connecting included, within [`TIMEOUT`].
///
/// # Errors
///
/// The socket cannot be reached, the call fails, or the whole takes longer than [`TIMEOUT`]
/// (a kubelet that accepts the connection and never answers).
pub async fn list(socket: &Path) -> Result<ListPodResourcesResponse, PodResourcesError> {
    match tokio::time::timeout(TIMEOUT, list_unbounded(socket)).await {
        Ok(r) => r,
        Err(_) => Err(PodResourcesError::Timeout {
            path: socket.to_path_buf(),
            timeout: TIMEOUT,
        }),
    }
}

async fn list_unbounded(socket: &Path) -> Result<ListPodResourcesResponse, PodResourcesError> {
    let path = socket.to_path_buf();
    // The URI is required by the API but unused: the connector dials the unix socket. No
    // timeout of its own: `list` bounds connecting and the call together.
    let channel = tonic::transport::Endpoint::from_static("http://kubelet.invalid")
        .connect_with_connector(tower::service_fn(move |_: tonic::transport::Uri| {
            let path = path.clone();
            async move {
                let stream = tokio::net::UnixStream::connect(path).await?;
                Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
            }
        }))
        .await
        .map_err(|source| PodResourcesError::Connect {
            path: socket.to_path_buf(),
            source,
        })?;
    let mut grpc = tonic::client::Grpc::new(channel);
    let call = async {
        grpc.ready()
            .await
            .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
        grpc.unary(
            tonic::Request::new(ListPodResourcesRequest {}),
            tonic::codegen::http::uri::PathAndQuery::from_static(LIST_PATH),
            tonic::codec::ProstCodec::default(),
        )
        .await
    };
    Ok(call.await?.into_inner())
}
