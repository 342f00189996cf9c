//! The optional fallback of the DRA attribution (`--kubernetes-dra-resource-slices`): a
//! claimed device that no CDI spec maps is looked up in the `resource.k8s.io` ResourceSlices
//! its driver publishes, through the API server, with the pod's in-cluster credentials.
//!
//! The NVIDIA DRA driver (`gpu.nvidia.com`) publishes one pool per node, named after the
//! node, and gives each device attributes; those read here are `uuid` (a whole GPU's
//! `GPU-…`, or a MIG device's `MIG-…`), and, for a MIG device, `type` (`mig`),
//! `parentUUID` and `profile`, which only say why a MIG device without a `uuid` (a dynamic
//! MIG device, created when it is prepared) cannot be mapped. An attribute name may carry the
//! driver's domain (`gpu.nvidia.com/uuid`), as the API allows.
//!
//! The list is asked for with `GET /apis/resource.k8s.io/<version>/resourceslices`, selected
//! by `spec.driver` and `spec.nodeName` (the API server supports no other selectable field of
//! a ResourceSlice; the node is `$NODE_NAME`, else the pool's name), from the API server's
//! cache (`resourceVersion=0`), and filtered here by pool; of a pool's slices, those of its
//! newest generation count. The version is `v1` (Kubernetes 1.34 and later), then `v1beta2`
//! (1.33), then `v1beta1` (1.32, whose devices keep their attributes under `basic`), each
//! tried on a 404 of the one before; the one that answered is asked first from then on.
//!
//! One answer, or one failure, per pool is kept for the refresh interval
//! (`--kubernetes-dra-resource-slice-refresh`), for at most [`MAX_POOLS`] pools; a request
//! (connection, TLS, every version tried) takes at most [`TIMEOUT`], and its answer at most
//! [`MAX_BODY`] bytes. The token and the CA are read again for each request, so a rotated
//! token is picked up. A failure is a typed [`SliceError`]: the device stays unmapped (its
//! labels left out) and the DRA log line says why; nothing of it reaches a collection, which
//! reads the pod map the kubelet thread last made.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty, Limited};
use serde::Deserialize;

use crate::attribution::dra_target::Target;

/// Where Kubernetes mounts the pod's service-account token and CA, unless
/// `--kubernetes-service-account-dir` says otherwise.
pub const DEFAULT_SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// How long a pool's answer (or failure) is kept, unless
/// `--kubernetes-dra-resource-slice-refresh` says otherwise: a driver changes its slices
/// when GPUs or MIG devices come and go, rarely.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(60);

/// The longest one request may take: connecting, TLS, and every API version tried.
pub const TIMEOUT: Duration = Duration::from_secs(3);

/// The largest answer read (a node's slices are a few kB; a slice holds at most 128
/// devices).
pub const MAX_BODY: usize = 8 * 1024 * 1024;

/// The most pools whose answers are kept (a node has one pool per driver).
pub const MAX_POOLS: usize = 16;

/// The ResourceSlice API versions asked, newest first.
pub const API_VERSIONS: [&str; 3] = ["v1", "v1beta2", "v1beta1"];

/// The largest token or CA file read.
const MAX_CREDENTIAL_BYTES: u64 = 1024 * 1024;

/// Settings of the ResourceSlice fallback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSliceConfig {
    /// The directory of the service account's `token` and `ca.crt`
    /// (`--kubernetes-service-account-dir`).
    pub service_account_dir: PathBuf,
    /// How long a pool's answer is kept (`--kubernetes-dra-resource-slice-refresh`).
    pub refresh: Duration,
}

impl Default for ResourceSliceConfig {
    fn default() -> Self {
        Self {
            service_account_dir: PathBuf::from(DEFAULT_SERVICE_ACCOUNT_DIR),
            refresh: DEFAULT_REFRESH,
        }
    }
}

/// Why the ResourceSlices of a pool could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SliceError {
    /// The API server's address is not in the environment.
    #[error(
        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: the exporter does not \
         run in a Kubernetes pod, so it cannot reach the API server"
    )]
    NotInCluster,
    /// The token or the CA cannot be read.
    #[error(
        "cannot read the service account's {what} {}: {source} (mount the token: \
         automountServiceAccountToken: true in the pod, or point \
         --kubernetes-service-account-dir at it)",
        path.display()
    )]
    Credentials {
        /// `token` or `CA`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The CA file holds no usable certificate, or TLS cannot be set up with it.
    #[error("the service account's CA {}: {reason}", path.display())]
    Ca {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The tokio runtime of the client could not start.
    #[error("cannot start the API-server client: {0}")]
    Runtime(#[source] std::io::Error),
    /// Connecting, TLS or the exchange failed.
    #[error("cannot reach the API server at {url}: {reason}")]
    Request {
        /// What was asked.
        url: String,
        /// Why.
        reason: String,
    },
    /// No answer within [`TIMEOUT`].
    #[error("the API server at {url} did not answer within {timeout:?}")]
    Timeout {
        /// What was asked.
        url: String,
        /// [`TIMEOUT`].
        timeout: Duration,
    },
    /// An HTTP status other than 200 (and other than the 404 of an unserved version).
    #[error("the API server answered HTTP {status} to {url}: {message}{}", hint(*status))]
    Status {
        /// What was asked.
        url: String,
        /// The status code.
        status: u16,
        /// The message of its `Status` object, or the start of the body.
        message: String,
    },
    /// Every version in [`API_VERSIONS`] answered 404.
    #[error(
        "the API server at {base} serves no ResourceSlice API this exporter reads ({}: all \
         404): DRA needs Kubernetes 1.32 or later with the resource.k8s.io API enabled",
        API_VERSIONS.join(", ")
    )]
    NoVersion {
        /// `https://HOST:PORT`.
        base: String,
    },
    /// The answer is larger than [`MAX_BODY`].
    #[error("the answer of {url} is larger than {max} bytes")]
    TooLarge {
        /// What was asked.
        url: String,
        /// [`MAX_BODY`].
        max: usize,
    },
    /// The answer is not a ResourceSliceList.
    #[error("the answer of {url} is not a ResourceSliceList: {source}")]
    Json {
        /// What was asked.
        url: String,
        /// Where and why it does not parse.
        #[source]
        source: serde_json::Error,
    },
}

/// What to do about a status, for [`SliceError::Status`].
fn hint(status: u16) -> &'static str {
    match status {
        401 => " (the service-account token is not accepted: expired, or of another cluster)",
        403 => {
            " (the service account may not list resourceslices: bind it to a ClusterRole with \
             get and list on resourceslices in resource.k8s.io, as \
             deploy/kubernetes/rbac-resource-slices.yaml does)"
        }
        _ => "",
    }
}

/// A device as its ResourceSlice describes it (the attributes the mapping reads).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SliceDevice {
    /// The device's name in its pool (`gpu-0`, `gpu-7-mig-3g40gb-9-0`).
    pub name: String,
    /// `type` (`gpu`, `mig`, `vfio`).
    pub kind: Option<String>,
    /// `uuid`: the GPU's or the MIG device's UUID.
    pub uuid: Option<String>,
    /// `parentUUID`: a MIG device's GPU.
    pub parent_uuid: Option<String>,
    /// `profile`: a MIG device's profile (`3g.40gb`).
    pub profile: Option<String>,
}

impl SliceDevice {
    /// What the device is on this node, by its `uuid`.
    ///
    /// # Errors
    ///
    /// It has no `uuid` of a GPU or MIG device (the message says what it has).
    pub fn target(&self) -> Result<Target, String> {
        match self.uuid.as_deref() {
            Some(u) if u.starts_with("MIG-") && u.len() > 4 => Ok(Target::MigUuid(u.into())),
            Some(u) if u.starts_with("GPU-") && u.len() > 4 => Ok(Target::Gpu(u.into())),
            Some(u) => Err(format!(
                "its ResourceSlice entry's uuid {u:?} is no GPU or MIG UUID"
            )),
            None if self.kind.as_deref() == Some("mig") => Err(format!(
                "its ResourceSlice entry has no uuid attribute (a MIG device of profile {} on \
                 GPU {} that is made when it is prepared; its UUID is not published)",
                self.profile.as_deref().unwrap_or("?"),
                self.parent_uuid.as_deref().unwrap_or("?")
            )),
            None => Err("its ResourceSlice entry has no uuid attribute".into()),
        }
    }
}

/// `ResourceSliceList`, the parts read.
#[derive(Deserialize)]
struct SliceList {
    #[serde(default)]
    items: Option<Vec<Slice>>,
}

#[derive(Deserialize)]
struct Slice {
    spec: SliceSpec,
}

#[derive(Deserialize)]
struct SliceSpec {
    driver: String,
    pool: Pool,
    #[serde(default)]
    devices: Option<Vec<Device>>,
}

#[derive(Deserialize)]
struct Pool {
    name: String,
    #[serde(default)]
    generation: i64,
}

/// A device: its attributes directly (`v1`, `v1beta2`) or under `basic` (`v1beta1`).
#[derive(Deserialize)]
struct Device {
    name: String,
    #[serde(default)]
    attributes: Option<BTreeMap<String, Attribute>>,
    #[serde(default)]
    basic: Option<Basic>,
}

#[derive(Deserialize)]
struct Basic {
    #[serde(default)]
    attributes: Option<BTreeMap<String, Attribute>>,
}

/// `DeviceAttribute`: exactly one of its values is set; only strings are read.
#[derive(Deserialize)]
struct Attribute {
    #[serde(default)]
    string: Option<String>,
}

/// The devices of `driver`'s pool `pool` in a `ResourceSliceList` (JSON), by name: those of
/// the pool's newest generation (during an update, the old slices may still be listed).
///
/// ```
/// use dcgm_exporter::attribution::resource_slice::parse_slices;
/// let body = br#"{"kind":"ResourceSliceList","items":[{"spec":{
///     "driver":"gpu.nvidia.com","pool":{"name":"node-1","generation":1},
///     "devices":[{"name":"gpu-0","attributes":{"uuid":{"string":"GPU-0a1b"}}}]}}]}"#;
/// let devices = parse_slices(body, "gpu.nvidia.com", "node-1").unwrap();
/// assert_eq!(devices["gpu-0"].uuid.as_deref(), Some("GPU-0a1b"));
/// ```
///
/// # Errors
///
/// The body is not JSON of a ResourceSliceList (a slice without `spec.driver`,
/// `spec.pool.name`, a device without `name`, a mistyped field).
pub fn parse_slices(
    body: &[u8],
    driver: &str,
    pool: &str,
) -> Result<BTreeMap<String, SliceDevice>, serde_json::Error> {
    let list: SliceList = serde_json::from_slice(body)?;
    let slices: Vec<Slice> = list
        .items
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.spec.driver == driver && s.spec.pool.name == pool)
        .collect();
    let newest = slices.iter().map(|s| s.spec.pool.generation).max();
    let qualified = format!("{driver}/");
    let mut out = BTreeMap::new();
    for s in slices
        .into_iter()
        .filter(|s| Some(s.spec.pool.generation) == newest)
    {
        for d in s.spec.devices.unwrap_or_default() {
            let attrs = d
                .attributes
                .or_else(|| d.basic.and_then(|b| b.attributes))
                .unwrap_or_default();
            let mut by_name: BTreeMap<&str, &str> = BTreeMap::new();
            for (k, v) in &attrs {
                let Some(value) = v.string.as_deref() else {
                    continue;
                };
                // The driver's own domain may be spelt out; another domain's is not ours.
                let short = k.strip_prefix(&qualified).unwrap_or(k);
                if !short.contains('/') {
                    by_name.insert(short, value);
                }
            }
            let get = |n: &str| by_name.get(n).map(|v| v.to_string());
            out.insert(
                d.name.clone(),
                SliceDevice {
                    kind: get("type"),
                    uuid: get("uuid"),
                    parent_uuid: get("parentUUID"),
                    profile: get("profile"),
                    name: d.name,
                },
            );
        }
    }
    Ok(out)
}

/// A field-selector value, escaped as the API server reads it (`\`, `,` and `=` behind a
/// backslash).
fn selector_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The path and query of the list of `driver`'s slices on `node`, in API version `version`.
///
/// ```
/// use dcgm_exporter::attribution::resource_slice::list_path;
/// assert_eq!(
///     list_path("v1", "gpu.nvidia.com", "node-1"),
///     "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.driver%3Dgpu.nvidia.com%2Cspec.nodeName%3Dnode-1&resourceVersion=0"
/// );
/// ```
pub fn list_path(version: &str, driver: &str, node: &str) -> String {
    let selector = format!(
        "spec.driver={},spec.nodeName={}",
        selector_value(driver),
        selector_value(node)
    );
    // Everything but the unreserved characters escaped (RFC 3986).
    const QUERY: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'.')
        .remove(b'-')
        .remove(b'_')
        .remove(b'~');
    let query = percent_encoding::utf8_percent_encode(&selector, QUERY);
    format!(
        "/apis/resource.k8s.io/{version}/resourceslices?fieldSelector={query}&resourceVersion=0"
    )
}

/// The API server's base URL from `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`
/// (an IPv6 address in brackets).
pub(crate) fn base_url(host: &str, port: &str) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("https://[{host}]:{port}")
    } else {
        format!("https://{host}:{port}")
    }
}

/// The message of a Kubernetes `Status` body, else the start of the body (printable
/// characters only).
pub(crate) fn status_message(body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Status {
        message: String,
    }
    if let Ok(s) = serde_json::from_slice::<Status>(body) {
        return s.message;
    }
    let text: String = String::from_utf8_lossy(&body[..body.len().min(200)])
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.trim().is_empty() {
        "(no message)".into()
    } else {
        text.trim().to_string()
    }
}

/// A pool's answer, kept for the refresh interval.
#[derive(Debug, Clone)]
struct Cached {
    at: Instant,
    answer: Result<Arc<BTreeMap<String, SliceDevice>>, Arc<SliceError>>,
    /// The API version that answered.
    version: Option<&'static str>,
}

/// Why a device was not found in the ResourceSlices.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LookupError {
    /// The slices could not be had.
    #[error("ResourceSlices: {0}")]
    Fetch(Arc<SliceError>),
    /// They were had, and say nothing that maps the device.
    #[error("ResourceSlices: {0}")]
    Device(String),
}

/// The ResourceSlice client, with its answers per (driver, pool).
#[derive(Debug)]
pub struct ResourceSlices {
    cfg: ResourceSliceConfig,
    /// `KUBERNETES_SERVICE_HOST`, `KUBERNETES_SERVICE_PORT`, read when made.
    service: Option<(String, String)>,
    /// `NODE_NAME`, the node the slices are selected by (else the pool's name).
    node: Option<String>,
    runtime: Option<tokio::runtime::Runtime>,
    /// The API version that answered last.
    version: Option<&'static str>,
    pools: HashMap<(String, String), Cached>,
}

impl ResourceSlices {
    /// A client with `cfg`, the API server from the environment (`KUBERNETES_SERVICE_HOST`,
    /// `KUBERNETES_SERVICE_PORT`) and the node from `NODE_NAME`. Nothing is asked yet.
    pub fn new(cfg: ResourceSliceConfig) -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let service = var("KUBERNETES_SERVICE_HOST").zip(var("KUBERNETES_SERVICE_PORT"));
        Self {
            cfg,
            service,
            node: var("NODE_NAME"),
            runtime: None,
            version: None,
            pools: HashMap::new(),
        }
    }

    /// What `driver`'s device `device` of pool `pool` is, from the pool's slices (asked for
    /// when no answer younger than the refresh interval is kept), with the source for the
    /// log (`ResourceSlice v1 of pool node-1, attribute uuid`).
    ///
    /// # Errors
    ///
    /// The slices could not be had ([`LookupError::Fetch`]), or the device is not in them or
    /// has no UUID ([`LookupError::Device`]).
    pub fn lookup(
        &mut self,
        driver: &str,
        pool: &str,
        device: &str,
    ) -> Result<(Target, String), LookupError> {
        let key = (driver.to_string(), pool.to_string());
        let fresh = self
            .pools
            .get(&key)
            .is_some_and(|c| c.at.elapsed() < self.cfg.refresh);
        if !fresh {
            let (answer, version) = match self.fetch(driver, pool) {
                Ok((d, v)) => (Ok(Arc::new(d)), Some(v)),
                Err(e) => (Err(Arc::new(e)), None),
            };
            if !self.pools.contains_key(&key) && self.pools.len() >= MAX_POOLS {
                let oldest = self
                    .pools
                    .iter()
                    .min_by_key(|(_, c)| c.at)
                    .map(|(k, _)| k.clone());
                if let Some(k) = oldest {
                    self.pools.remove(&k);
                }
            }
            self.pools.insert(
                key.clone(),
                Cached {
                    at: Instant::now(),
                    answer,
                    version,
                },
            );
        }
        let cached = &self.pools[&key];
        let devices = cached
            .answer
            .as_ref()
            .map_err(|e| LookupError::Fetch(e.clone()))?;
        let Some(d) = devices.get(device) else {
            return Err(LookupError::Device(format!(
                "no device {device} in the slices of driver {driver} pool {pool} ({} devices \
                 listed)",
                devices.len()
            )));
        };
        let target = d.target().map_err(LookupError::Device)?;
        Ok((
            target,
            format!(
                "ResourceSlice {} of pool {pool}, attribute uuid",
                cached.version.unwrap_or("?")
            ),
        ))
    }

    /// Asks the API server for the pool's slices, within [`TIMEOUT`].
    fn fetch(
        &mut self,
        driver: &str,
        pool: &str,
    ) -> Result<(BTreeMap<String, SliceDevice>, &'static str), SliceError> {
        let Some((host, port)) = self.service.clone() else {
            return Err(SliceError::NotInCluster);
        };
        let base = base_url(&host, &port);
        let (tls, auth) = credentials(&self.cfg.service_account_dir)?;
        if self.runtime.is_none() {
            self.runtime = Some(
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(SliceError::Runtime)?,
            );
        }
        let node = self.node.clone().unwrap_or_else(|| pool.to_string());
        let mut versions: Vec<&'static str> = self.version.into_iter().collect();
        versions.extend(API_VERSIONS.iter().filter(|v| Some(**v) != self.version));
        let runtime = self.runtime.as_ref().expect("made above");
        let asked = runtime.block_on(async {
            tokio::time::timeout(
                TIMEOUT,
                list(tls, auth, &base, &versions, driver, pool, &node),
            )
            .await
        });
        let result = match asked {
            Ok(r) => r,
            Err(_) => Err(SliceError::Timeout {
                url: base.clone(),
                timeout: TIMEOUT,
            }),
        };
        if let Ok((_, v)) = &result {
            self.version = Some(v);
        }
        result
    }
}

/// The service account's TLS settings (its CA as the only root) and `Authorization` header
/// (its token), read from `dir`.
pub(crate) fn credentials(
    dir: &Path,
) -> Result<(rustls::ClientConfig, hyper::header::HeaderValue), SliceError> {
    let read = |what: &'static str, name: &str| {
        let path = dir.join(name);
        crate::regular_file::read_capped(&path, MAX_CREDENTIAL_BYTES)
            .map_err(|source| SliceError::Credentials { what, path, source })
    };
    let token = String::from_utf8_lossy(&read("token", "token")?)
        .trim()
        .to_string();
    let ca_path = dir.join("ca.crt");
    let tls = client_tls(&read("CA", "ca.crt")?, &ca_path)?;
    let auth = hyper::header::HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
        SliceError::Credentials {
            what: "token",
            path: dir.join("token"),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "it holds characters an HTTP header cannot carry",
            ),
        }
    })?;
    Ok((tls, auth))
}

/// The rustls client settings: the service account's CA as the only root.
fn client_tls(pem: &[u8], path: &Path) -> Result<rustls::ClientConfig, SliceError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let ca = |reason: String| SliceError::Ca {
        path: path.to_path_buf(),
        reason,
    };
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(pem) {
        let c = c.map_err(|e| ca(e.to_string()))?;
        roots.add(c).map_err(|e| ca(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(ca("it holds no PEM certificate".into()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ca(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// Lists the slices, trying `versions` in order while they answer 404.
async fn list(
    tls: rustls::ClientConfig,
    auth: hyper::header::HeaderValue,
    base: &str,
    versions: &[&'static str],
    driver: &str,
    pool: &str,
    node: &str,
) -> Result<(BTreeMap<String, SliceDevice>, &'static str), SliceError> {
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_only()
        .enable_http1()
        .build();
    // No idle connections: a request every refresh interval does not need them, and the
    // runtime does not run between requests to keep one alive.
    let client: hyper_util::client::legacy::Client<_, Empty<Bytes>> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .pool_max_idle_per_host(0)
            .build(connector);
    for version in versions {
        let url = format!("{base}{}", list_path(version, driver, node));
        let request = hyper::Request::get(&url)
            .header(hyper::header::AUTHORIZATION, auth.clone())
            .header(hyper::header::ACCEPT, "application/json")
            .header(
                hyper::header::USER_AGENT,
                concat!("dcgm-exporter/", env!("CARGO_PKG_VERSION")),
            )
            .body(Empty::new())
            .map_err(|e| SliceError::Request {
                url: url.clone(),
                reason: e.to_string(),
            })?;
        let resp = client
            .request(request)
            .await
            .map_err(|e| SliceError::Request {
                url: url.clone(),
                reason: error_chain(&e),
            })?;
        let status = resp.status().as_u16();
        let body = match Limited::new(resp.into_body(), MAX_BODY).collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return Err(SliceError::TooLarge { url, max: MAX_BODY });
            }
            Err(e) => {
                return Err(SliceError::Request {
                    url,
                    reason: e.to_string(),
                });
            }
        };
        match status {
            200 => {
                return parse_slices(&body, driver, pool)
                    .map(|d| (d, *version))
                    .map_err(|source| SliceError::Json { url, source });
            }
            404 => continue,
            _ => {
                return Err(SliceError::Status {
                    url,
                    status,
                    message: status_message(&body),
                });
            }
        }
    }
    Err(SliceError::NoVersion {
        base: base.to_string(),
    })
}

/// An error with its sources (hyper's own message alone says little: "client error
/// (Connect)").
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(c) = source {
        s.push_str(": ");
        s.push_str(&c.to_string());
        source = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const NV: &str = "gpu.nvidia.com";

    /// A v1 list as the NVIDIA driver publishes it: a counters-only slice, a GPU, a static
    /// MIG device, a dynamic MIG device without a UUID, and another node's pool.
    const V1: &str = r#"{"kind":"ResourceSliceList","apiVersion":"resource.k8s.io/v1",
      "metadata":{"resourceVersion":"42"},
      "items":[
        {"metadata":{"name":"node-1-gpu.nvidia.com-a"},"spec":{"driver":"gpu.nvidia.com",
          "nodeName":"node-1","pool":{"name":"node-1","generation":2,"resourceSliceCount":2},
          "sharedCounters":[{"name":"gpu-0-counter-set","counters":{"memory":{"value":"80Gi"}}}]}},
        {"metadata":{"name":"node-1-gpu.nvidia.com-b"},"spec":{"driver":"gpu.nvidia.com",
          "nodeName":"node-1","pool":{"name":"node-1","generation":2,"resourceSliceCount":2},
          "devices":[
            {"name":"gpu-0","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-aaaa"},
              "driverVersion":{"version":"580.65.6"},"resource.kubernetes.io/pcieRoot":{"string":"pci0000:00"}},
              "capacity":{"memory":{"value":"80Gi"}}},
            {"name":"gpu-1-mig-3g40gb-9-0","attributes":{"type":{"string":"mig"},
              "gpu.nvidia.com/uuid":{"string":"MIG-bbbb"},"parentUUID":{"string":"GPU-cccc"},
              "profile":{"string":"3g.40gb"}}},
            {"name":"gpu-2-mig-1g10gb-19-0","attributes":{"type":{"string":"mig"},
              "parentUUID":{"string":"GPU-dddd"},"profile":{"string":"1g.10gb"}}}
          ]}},
        {"spec":{"driver":"gpu.nvidia.com","nodeName":"node-2","pool":{"name":"node-2","generation":1},
          "devices":[{"name":"gpu-0","attributes":{"uuid":{"string":"GPU-other"}}}]}}
      ]}"#;

    #[test]
    fn v1_devices_are_read_by_their_uuid_and_mig_attributes() {
        let d = parse_slices(V1.as_bytes(), NV, "node-1").unwrap();
        assert_eq!(
            d.keys().collect::<Vec<_>>(),
            ["gpu-0", "gpu-1-mig-3g40gb-9-0", "gpu-2-mig-1g10gb-19-0"]
        );
        assert_eq!(d["gpu-0"].target(), Ok(Target::Gpu("GPU-aaaa".into())));
        let mig = &d["gpu-1-mig-3g40gb-9-0"];
        assert_eq!(mig.target(), Ok(Target::MigUuid("MIG-bbbb".into())));
        assert_eq!(
            (mig.parent_uuid.as_deref(), mig.profile.as_deref()),
            (Some("GPU-cccc"), Some("3g.40gb"))
        );
        let why = d["gpu-2-mig-1g10gb-19-0"].target().unwrap_err();
        assert!(
            why.contains("no uuid") && why.contains("1g.10gb") && why.contains("GPU-dddd"),
            "{why}"
        );
        // Another pool's device of the same name is not taken.
        let other = parse_slices(V1.as_bytes(), NV, "node-2").unwrap();
        assert_eq!(other["gpu-0"].uuid.as_deref(), Some("GPU-other"));
        assert!(
            parse_slices(V1.as_bytes(), "other.example.com", "node-1")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn v1beta1_devices_keep_their_attributes_under_basic() {
        let body = r#"{"items":[{"spec":{"driver":"gpu.nvidia.com","pool":{"name":"n","generation":0},
            "devices":[{"name":"gpu-3","basic":{"attributes":{"uuid":{"string":"GPU-3333"},
            "index":{"int":3}}}}]}}]}"#;
        let d = parse_slices(body.as_bytes(), NV, "n").unwrap();
        assert_eq!(d["gpu-3"].target(), Ok(Target::Gpu("GPU-3333".into())));
    }

    #[test]
    fn only_the_newest_generation_of_a_pool_counts() {
        let body = r#"{"items":[
            {"spec":{"driver":"gpu.nvidia.com","pool":{"name":"n","generation":1},
              "devices":[{"name":"gpu-0","attributes":{"uuid":{"string":"GPU-old"}}},
                         {"name":"gpu-9","attributes":{"uuid":{"string":"GPU-gone"}}}]}},
            {"spec":{"driver":"gpu.nvidia.com","pool":{"name":"n","generation":3},
              "devices":[{"name":"gpu-0","attributes":{"uuid":{"string":"GPU-new"}}}]}}]}"#;
        let d = parse_slices(body.as_bytes(), NV, "n").unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(d["gpu-0"].uuid.as_deref(), Some("GPU-new"));
    }

    #[test]
    fn other_domains_and_other_types_of_attribute_are_not_read() {
        let body = r#"{"items":[{"spec":{"driver":"gpu.nvidia.com","pool":{"name":"n"},
            "devices":[
              {"name":"a","attributes":{"example.com/uuid":{"string":"GPU-theirs"}}},
              {"name":"b","attributes":{"uuid":{"int":7}}},
              {"name":"c","attributes":{"uuid":{"string":"not-a-uuid"}}},
              {"name":"d"}]}}]}"#;
        let d = parse_slices(body.as_bytes(), NV, "n").unwrap();
        assert_eq!(d["a"].uuid, None);
        assert_eq!(d["b"].uuid, None);
        assert!(d["c"].target().unwrap_err().contains("not-a-uuid"));
        assert!(d["d"].target().unwrap_err().contains("no uuid"));
        // An empty list, and a null one.
        assert!(
            parse_slices(br#"{"items":[]}"#, NV, "n")
                .unwrap()
                .is_empty()
        );
        assert!(
            parse_slices(br#"{"items":null}"#, NV, "n")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn what_is_not_a_resource_slice_list_is_a_typed_error() {
        for bad in [
            &b"{\"items\":[{\"spec\":{\"driver\":\"gpu.nvidia.com\"}}]"[..],
            b"not json",
            b"{\"items\":[{\"spec\":{\"driver\":\"gpu.nvidia.com\",\"pool\":{}}}]}",
            b"{\"items\":[{\"spec\":{\"driver\":7,\"pool\":{\"name\":\"n\"}}}]}",
            b"{\"items\":[{\"spec\":{\"driver\":\"d\",\"pool\":{\"name\":\"n\"},\"devices\":[{}]}}]}",
            b"",
        ] {
            assert!(
                parse_slices(bad, NV, "n").is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn the_list_path_escapes_the_selector() {
        assert_eq!(
            list_path("v1beta1", "a,b=c", "node\\1"),
            "/apis/resource.k8s.io/v1beta1/resourceslices?fieldSelector=\
             spec.driver%3Da%5C%2Cb%5C%3Dc%2Cspec.nodeName%3Dnode%5C%5C1&resourceVersion=0"
        );
        assert_eq!(base_url("10.0.0.1", "443"), "https://10.0.0.1:443");
        assert_eq!(base_url("fd00::1", "6443"), "https://[fd00::1]:6443");
    }

    #[test]
    fn status_bodies_give_their_message() {
        assert_eq!(
            status_message(
                br#"{"kind":"Status","status":"Failure","message":"resourceslices.resource.k8s.io is forbidden","code":403}"#
            ),
            "resourceslices.resource.k8s.io is forbidden"
        );
        assert_eq!(status_message(b"Unauthorized\n"), "Unauthorized");
        assert_eq!(status_message(b""), "(no message)");
        assert!(
            SliceError::Status {
                url: "u".into(),
                status: 403,
                message: "m".into()
            }
            .to_string()
            .contains("get and list on resourceslices")
        );
    }

    #[test]
    fn without_the_service_environment_nothing_is_asked() {
        let mut s = ResourceSlices {
            cfg: ResourceSliceConfig::default(),
            service: None,
            node: None,
            runtime: None,
            version: None,
            pools: HashMap::new(),
        };
        let e = s.lookup(NV, "n", "gpu-0").unwrap_err();
        assert!(
            matches!(&e, LookupError::Fetch(f) if matches!(**f, SliceError::NotInCluster)),
            "{e}"
        );
        // The failure is kept: a second device of the pool does not ask again.
        let at = s.pools[&(NV.to_string(), "n".to_string())].at;
        let _ = s.lookup(NV, "n", "gpu-1");
        assert_eq!(s.pools[&(NV.to_string(), "n".to_string())].at, at);
    }

    #[test]
    fn the_cache_holds_at_most_max_pools() {
        let mut s = ResourceSlices {
            cfg: ResourceSliceConfig::default(),
            service: None,
            node: None,
            runtime: None,
            version: None,
            pools: HashMap::new(),
        };
        for i in 0..MAX_POOLS + 5 {
            let _ = s.lookup(NV, &format!("pool-{i}"), "gpu-0");
        }
        assert_eq!(s.pools.len(), MAX_POOLS);
        assert!(
            s.pools
                .contains_key(&(NV.to_string(), format!("pool-{}", MAX_POOLS + 4)))
        );
    }
}
