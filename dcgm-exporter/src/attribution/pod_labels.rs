//! `--kubernetes-enable-pod-labels` and `--kubernetes-pod-label-allowlist-regex`: the labels
//! of the pods holding GPUs, from the API server (the kubelet's pod-resources API carries
//! none), added to their GPUs' series as dcgm-exporter adds them: each label key with every
//! character outside `[a-zA-Z0-9_]` replaced by `_`, kept only when it matches one of the
//! allow-list's patterns (all, without one), and left out where the series already has that
//! label (`pod`, `namespace`, `container`, ...).
//!
//! The pods of this node are listed in one request (`GET /api/v1/pods` with the field
//! selector `spec.nodeName=$NODE_NAME`; RBAC: `list` on `pods`) through the same in-cluster
//! credentials and TLS as the ResourceSlice fallback ([`crate::attribution::resource_slice`]), at most every
//! [`REFRESH`]; each request is bounded by [`crate::attribution::resource_slice::TIMEOUT`] and
//! [`crate::attribution::resource_slice::MAX_BODY`]. A failure keeps the last good labels and is logged
//! once.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty, Limited};
use serde::Deserialize;

use crate::attribution::resource_slice::{MAX_BODY, SliceError, TIMEOUT};

/// How long a node's pod list is used before the API server is asked again.
pub const REFRESH: Duration = Duration::from_secs(30);

/// The allow-list: regular expressions a label key must match one of (unanchored, as Go's
/// `MatchString`); empty: every label.
#[derive(Debug, Clone, Default)]
pub struct Allowlist(Vec<regex::Regex>);

impl Allowlist {
    /// Compiles the patterns (blank ones dropped).
    ///
    /// # Errors
    ///
    /// The pattern that does not compile, and why.
    pub fn new(patterns: &[String]) -> Result<Self, String> {
        patterns
            .iter()
            .map(|p| p.trim())
            .filter(|p| !p.is_empty())
            .map(|p| {
                regex::Regex::new(p).map_err(|e| {
                    format!("--kubernetes-pod-label-allowlist-regex {p:?} is not a regular expression: {e}")
                })
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Whether the label key is kept.
    pub fn allows(&self, key: &str) -> bool {
        self.0.is_empty() || self.0.iter().any(|r| r.is_match(key))
    }
}

/// A pod label key as a Prometheus label name: every character outside `[a-zA-Z0-9_]` as `_`.
pub fn sanitize(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[derive(Deserialize)]
struct PodList {
    #[serde(default)]
    items: Vec<Pod>,
}

#[derive(Deserialize)]
struct Pod {
    metadata: Meta,
}

#[derive(Deserialize)]
struct Meta {
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    uid: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

/// Each pod's labels (sanitized, allow-listed) by (namespace, pod).
pub type ByPod = HashMap<(String, String), Vec<(String, String)>>;

/// The pod labels of this node, by (namespace, pod).
#[derive(Debug)]
pub struct PodLabels {
    service_account_dir: std::path::PathBuf,
    allow: Allowlist,
    service: Option<(String, String)>,
    node: Option<String>,
    runtime: Option<tokio::runtime::Runtime>,
    at: Option<Instant>,
    labels: Arc<ByPod>,
    /// Each pod's UID by (namespace, pod), from the same answer.
    uids: Arc<HashMap<(String, String), String>>,
    failing: Option<String>,
}

impl PodLabels {
    /// A client with the service account in `dir`, the API server from the environment
    /// (`KUBERNETES_SERVICE_HOST`, `KUBERNETES_SERVICE_PORT`) and the node from `NODE_NAME`.
    pub fn new(dir: std::path::PathBuf, allow: Allowlist) -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Self {
            service_account_dir: dir,
            allow,
            service: var("KUBERNETES_SERVICE_HOST").zip(var("KUBERNETES_SERVICE_PORT")),
            node: var("NODE_NAME"),
            runtime: None,
            at: None,
            labels: Arc::default(),
            uids: Arc::default(),
            failing: None,
        }
    }

    /// The labels of each pod of the node (sanitized, allow-listed), asked for when the last
    /// answer is older than [`REFRESH`]; the last good ones while the API server fails.
    pub fn get(&mut self) -> Arc<ByPod> {
        if self.at.is_none_or(|t| t.elapsed() >= REFRESH) {
            self.at = Some(Instant::now());
            match self.fetch() {
                Ok((l, u)) => {
                    if self.failing.take().is_some() {
                        log::info!("pod labels: the API server answers again");
                    }
                    self.labels = Arc::new(l);
                    self.uids = Arc::new(u);
                }
                Err(e) => {
                    let msg = e.to_string();
                    if self.failing.as_deref() != Some(&msg) {
                        log::warn!("pod labels: {msg}; keeping the last good ones");
                        self.failing = Some(msg);
                    }
                }
            }
        }
        self.labels.clone()
    }

    /// The pods' UIDs from the last good answer (asked for by [`PodLabels::get`]).
    pub fn uids(&self) -> Arc<HashMap<(String, String), String>> {
        self.uids.clone()
    }

    #[allow(clippy::type_complexity)]
    fn fetch(&mut self) -> Result<(ByPod, HashMap<(String, String), String>), SliceError> {
        let Some((host, port)) = self.service.clone() else {
            return Err(SliceError::NotInCluster);
        };
        let Some(node) = self.node.clone() else {
            return Err(SliceError::Request {
                url: "/api/v1/pods".into(),
                reason: "NODE_NAME is not set (the DaemonSet sets it from spec.nodeName)".into(),
            });
        };
        let (tls, auth) =
            crate::attribution::resource_slice::credentials(&self.service_account_dir)?;
        if self.runtime.is_none() {
            self.runtime = Some(
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(SliceError::Runtime)?,
            );
        }
        let base = crate::attribution::resource_slice::base_url(&host, &port);
        let selector = percent_encoding::utf8_percent_encode(
            &format!("spec.nodeName={node}"),
            percent_encoding::NON_ALPHANUMERIC,
        )
        .to_string();
        let url = format!("{base}/api/v1/pods?fieldSelector={selector}");
        let runtime = self.runtime.as_ref().expect("made above");
        let body = runtime
            .block_on(async { tokio::time::timeout(TIMEOUT, get(tls, auth, &url)).await })
            .map_err(|_| SliceError::Timeout {
                url: url.clone(),
                timeout: TIMEOUT,
            })??;
        let list: PodList = serde_json::from_slice(&body).map_err(|e| SliceError::Request {
            url: url.clone(),
            reason: format!("not a pod list: {e}"),
        })?;
        let uids = list
            .items
            .iter()
            .filter(|p| !p.metadata.uid.is_empty())
            .map(|p| {
                (
                    (p.metadata.namespace.clone(), p.metadata.name.clone()),
                    p.metadata.uid.clone(),
                )
            })
            .collect();
        let labels = list
            .items
            .into_iter()
            .map(|p| {
                let labels = p
                    .metadata
                    .labels
                    .iter()
                    .filter(|(k, _)| self.allow.allows(k))
                    .map(|(k, v)| (sanitize(k), v.clone()))
                    .collect();
                ((p.metadata.namespace, p.metadata.name), labels)
            })
            .collect();
        Ok((labels, uids))
    }
}

async fn get(
    tls: rustls::ClientConfig,
    auth: hyper::header::HeaderValue,
    url: &str,
) -> Result<Bytes, SliceError> {
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_only()
        .enable_http1()
        .build();
    let client: hyper_util::client::legacy::Client<_, Empty<Bytes>> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .pool_max_idle_per_host(0)
            .build(connector);
    let request = hyper::Request::get(url)
        .header(hyper::header::AUTHORIZATION, auth)
        .header(hyper::header::ACCEPT, "application/json")
        .header(
            hyper::header::USER_AGENT,
            concat!("dcgm-exporter/", env!("CARGO_PKG_VERSION")),
        )
        .body(Empty::new())
        .map_err(|e| SliceError::Request {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
    let resp = client
        .request(request)
        .await
        .map_err(|e| SliceError::Request {
            url: url.to_string(),
            reason: crate::attribution::resource_slice::error_chain(&e),
        })?;
    let status = resp.status().as_u16();
    let body = match Limited::new(resp.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(SliceError::TooLarge {
                url: url.to_string(),
                max: MAX_BODY,
            });
        }
        Err(e) => {
            return Err(SliceError::Request {
                url: url.to_string(),
                reason: e.to_string(),
            });
        }
    };
    if status != 200 {
        return Err(SliceError::Status {
            url: url.to_string(),
            status,
            message: crate::attribution::resource_slice::status_message(&body),
        });
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sanitized_and_allow_listed() {
        assert_eq!(sanitize("app.kubernetes.io/name"), "app_kubernetes_io_name");
        let a = Allowlist::new(&["^app\\.".into(), "team".into(), " ".into()]).unwrap();
        assert!(a.allows("app.kubernetes.io/name") && a.allows("my-team"));
        assert!(!a.allows("tier"));
        assert!(Allowlist::new(&[]).unwrap().allows("anything"));
        let e = Allowlist::new(&["(".into()]).unwrap_err();
        assert!(e.contains("\"(\" is not a regular expression"), "{e}");
    }
}
