//! The exporter's HTTP(S) server: `/metrics`, `/health` and a landing page, with the
//! Prometheus exporter-toolkit web configuration (TLS, client certificates, basic auth with
//! bcrypt hashes, extra response headers), and gzip for scrapers that accept it.
//!
//! Why this stack: request parsing and connection handling are where a hand-written HTTP/1.1
//! server goes wrong (duplicate or signed `Content-Length`, whitespace before a header colon,
//! slow-loris clients). hyper 1 is the maintained HTTP implementation most of the Rust
//! ecosystem serves through (axum, tonic, reqwest); it runs on tokio and times the reading of
//! each request head. We use it directly, not through axum, because three fixed routes need no
//! router. tokio-rustls keeps the rustls 0.23 + ring configuration the exporter already had;
//! flate2 is the maintained gzip encoder. Collection stays on its own blocking thread (see
//! `exporter.rs`): the async workers only hand out the last published exposition, and bcrypt
//! runs on tokio's blocking pool.

use std::collections::{BTreeMap, HashSet};
use std::convert::Infallible;
use std::io::{self, Write as _};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::{Body as _, Incoming};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioIo, TokioTimer};
use serde::Deserialize;

/// Connections served at once. Past it, up to [`Limits::max_overload`] more are answered 503.
pub const MAX_CONNECTIONS: usize = 512;
const MAX_HEAD: usize = 16 * 1024;
const MAX_BODY: usize = 64 * 1024;

/// How many connections the server takes and how long a client may take to send a request head.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once.
    pub max_connections: usize,
    /// Connections past `max_connections` that still get a 503 response; past both, new
    /// connections are closed at once.
    pub max_overload: usize,
    /// The whole request head (and the TLS handshake) must arrive within this time, however
    /// the client trickles it. hyper starts this timer as soon as it waits for a request, so
    /// it also closes a keep-alive connection left idle that long.
    pub header_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: MAX_CONNECTIONS,
            max_overload: 64,
            header_timeout: Duration::from_secs(10),
        }
    }
}

/// What `/metrics` and `/health` serve, updated by the collector thread.
#[derive(Debug, Default)]
pub struct Published {
    /// The last exposition.
    pub text: String,
    /// Why the last collection failed, if it did (then `/metrics` and `/health` answer 503).
    pub error: Option<String>,
    /// Whether a collection has finished yet.
    pub ready: bool,
    /// Bumped with every new `text`, so the server copies (and gzips) each exposition once.
    pub version: u64,
    /// What `/health` judges besides `error` and `ready`: the age of the last good
    /// collection, and the kubelet.
    pub health: crate::health::Health,
}

/// The exporter-toolkit web configuration file (the subset this exporter supports; any other
/// key is an error).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebConfigFile {
    /// TLS: certificate, key, client CA.
    pub tls_server_config: Option<TlsFile>,
    /// HTTP options: extra response headers.
    pub http_server_config: Option<HttpFile>,
    /// User name → bcrypt hash.
    #[serde(default)]
    pub basic_auth_users: BTreeMap<String, String>,
}

/// `tls_server_config`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsFile {
    /// Server certificate chain (PEM).
    pub cert_file: Option<PathBuf>,
    /// Its private key (PEM).
    pub key_file: Option<PathBuf>,
    /// `NoClientCert` (default), `RequireAndVerifyClientCert`, ...
    pub client_auth_type: Option<String>,
    /// CA bundle that client certificates must chain to (PEM).
    pub client_ca_file: Option<PathBuf>,
    /// Lowest TLS version (`TLS12`, `TLS13`).
    pub min_version: Option<String>,
    /// Highest TLS version.
    pub max_version: Option<String>,
}

/// `http_server_config`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpFile {
    /// Accepted; this server speaks HTTP/1.1 only.
    pub http2: Option<bool>,
    /// Headers added to every response.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// A loaded web configuration.
pub struct WebConfig {
    tls: Option<Arc<rustls::ServerConfig>>,
    users: BTreeMap<String, String>,
    /// A hash of the highest cost among the users, verified for unknown user names so that
    /// response times do not tell which users exist.
    dummy_hash: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// `Authorization` header values that passed, so bcrypt runs once per credential.
    auth_cache: Mutex<HashSet<String>>,
    verifications: AtomicU64,
}

impl std::fmt::Debug for WebConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebConfig")
            .field("tls", &self.tls.is_some())
            .field("users", &self.users.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// What an `Authorization` header needs before it passes.
enum Auth {
    Pass,
    Deny,
    /// A bcrypt verification (slow: run it off the async workers).
    Verify(String),
}

/// The cost of a well-formed bcrypt hash, or why it is not one.
fn bcrypt_cost(hash: &str) -> Result<u32, String> {
    let parts: Vec<&str> = hash.split('$').collect();
    let [empty, version, cost, rest] = parts[..] else {
        return Err("not of the form $2b$NN$<53 characters>".into());
    };
    if !empty.is_empty() || !matches!(version, "2a" | "2b" | "2x" | "2y") {
        return Err("no $2a$, $2b$, $2x$ or $2y$ prefix".into());
    }
    let cost: u32 = match cost.parse() {
        Ok(c) if cost.len() == 2 && (4..=31).contains(&c) => c,
        _ => return Err(format!("cost {cost:?} is not two digits from 04 to 31")),
    };
    if rest.len() != 53
        || !rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'/')
    {
        return Err("salt and hash are not 53 characters of bcrypt's base64".into());
    }
    Ok(cost)
}

impl WebConfig {
    /// Plain HTTP, no authentication.
    pub fn none() -> Self {
        Self {
            tls: None,
            users: BTreeMap::new(),
            dummy_hash: String::new(),
            headers: Vec::new(),
            auth_cache: Mutex::new(HashSet::new()),
            verifications: AtomicU64::new(0),
        }
    }

    /// Whether the server speaks TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// How many bcrypt verifications have run (for tests: an unknown user costs one too).
    #[allow(dead_code)] // the exporter itself never asks; tests/exporter_http.rs does
    pub fn bcrypt_verifications(&self) -> u64 {
        self.verifications.load(Ordering::Relaxed)
    }

    /// Reads a web configuration file; relative paths in it are relative to the file.
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file: WebConfigFile = if text.trim().is_empty() {
            WebConfigFile::default()
        } else {
            serde_yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?
        };
        let base = path.parent().unwrap_or(Path::new("."));
        let rel = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                base.join(p)
            }
        };
        let mut max_cost = None;
        for (user, hash) in &file.basic_auth_users {
            let cost = bcrypt_cost(hash).map_err(|e| {
                format!(
                    "{}: the password of user {user:?} is not a valid bcrypt hash: {e}",
                    path.display()
                )
            })?;
            max_cost = max_cost.max(Some(cost));
        }
        let dummy_hash = match max_cost {
            None => String::new(),
            Some(cost) => bcrypt::hash("dcgm-rs: no such user", cost)
                .map_err(|e| format!("cannot make a bcrypt hash of cost {cost}: {e}"))?,
        };
        let tls = match file.tls_server_config {
            None => None,
            Some(t) => Some(Arc::new(
                tls_config(&t, &rel).map_err(|e| format!("{}: {e}", path.display()))?,
            )),
        };
        let mut headers = Vec::new();
        if let Some(h) = file.http_server_config {
            if h.http2 == Some(true) {
                log::info!("web config: http2 requested; this server speaks HTTP/1.1");
            }
            for (k, v) in h.headers {
                let (Ok(name), Ok(value)) = (
                    HeaderName::from_bytes(k.as_bytes()),
                    HeaderValue::from_str(&v),
                ) else {
                    return Err(format!("{}: invalid response header {k:?}", path.display()));
                };
                headers.push((name, value));
            }
        }
        Ok(Self {
            tls,
            users: file.basic_auth_users,
            dummy_hash,
            headers,
            auth_cache: Mutex::new(HashSet::new()),
            verifications: AtomicU64::new(0),
        })
    }

    fn precheck(&self, header: Option<&HeaderValue>) -> Auth {
        if self.users.is_empty() {
            return Auth::Pass;
        }
        let Some(h) = header.and_then(|h| h.to_str().ok()) else {
            return Auth::Deny;
        };
        // The scheme is case-insensitive (RFC 9110 section 11.1).
        let Some((scheme, b64)) = h.trim().split_once(' ') else {
            return Auth::Deny;
        };
        if !scheme.eq_ignore_ascii_case("basic") {
            return Auth::Deny;
        }
        let b64 = b64.trim();
        if self
            .auth_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(b64)
        {
            return Auth::Pass;
        }
        Auth::Verify(b64.to_string())
    }

    /// Checks basic-auth credentials with bcrypt: slow by design.
    fn verify(&self, b64: &str) -> bool {
        let raw = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .ok()
            .and_then(|r| String::from_utf8(r).ok());
        let (user, pass) = raw
            .as_deref()
            .and_then(|r| r.split_once(':'))
            .unwrap_or(("", ""));
        // An unknown (or undecodable) user costs one verification against a hash of the
        // highest cost, so that response times do not tell which users exist.
        let (hash, known) = match self.users.get(user) {
            Some(h) if raw.is_some() => (h.as_str(), true),
            _ => (self.dummy_hash.as_str(), false),
        };
        self.verifications.fetch_add(1, Ordering::Relaxed);
        let ok = bcrypt::verify(pass, hash).unwrap_or(false) && known;
        if ok {
            let mut c = self.auth_cache.lock().unwrap_or_else(|p| p.into_inner());
            if c.len() >= 100 {
                c.clear();
            }
            c.insert(b64.to_string());
        }
        ok
    }
}

fn tls_config(t: &TlsFile, rel: &dyn Fn(&Path) -> PathBuf) -> Result<rustls::ServerConfig, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let (Some(cert), Some(key)) = (&t.cert_file, &t.key_file) else {
        return Err("tls_server_config needs cert_file and key_file".into());
    };
    let (cert, key) = (rel(cert), rel(key));
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert)
        .and_then(|i| i.collect::<Result<_, _>>())
        .map_err(|e| format!("cert_file {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("cert_file {}: no certificate", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(&key)
        .map_err(|e| format!("key_file {}: {e}", key.display()))?;
    let version = |v: &Option<String>, default: &'static rustls::SupportedProtocolVersion| match v
        .as_deref()
    {
        None => Ok(default),
        Some("TLS12") => Ok(&rustls::version::TLS12),
        Some("TLS13") => Ok(&rustls::version::TLS13),
        Some(o) => Err(format!("unsupported TLS version {o:?} (TLS12 or TLS13)")),
    };
    let min = version(&t.min_version, &rustls::version::TLS12)?;
    let max = version(&t.max_version, &rustls::version::TLS13)?;
    let versions: Vec<&'static rustls::SupportedProtocolVersion> =
        [&rustls::version::TLS12, &rustls::version::TLS13]
            .into_iter()
            .filter(|v| {
                let n = |v: &rustls::SupportedProtocolVersion| u16::from(v.version);
                n(v) >= n(min) && n(v) <= n(max)
            })
            .collect();
    if versions.is_empty() {
        return Err("min_version is above max_version".into());
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| e.to_string())?;
    let auth = t.client_auth_type.as_deref().unwrap_or("NoClientCert");
    let builder = match auth {
        "NoClientCert" => builder.with_no_client_auth(),
        "RequireAndVerifyClientCert" | "VerifyClientCertIfGiven" => {
            let Some(ca) = &t.client_ca_file else {
                return Err(format!("client_auth_type {auth} needs client_ca_file"));
            };
            let ca = rel(ca);
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_file_iter(&ca)
                .map_err(|e| format!("client_ca_file {}: {e}", ca.display()))?
            {
                let c = c.map_err(|e| format!("client_ca_file {}: {e}", ca.display()))?;
                roots
                    .add(c)
                    .map_err(|e| format!("client_ca_file {}: {e}", ca.display()))?;
            }
            let mut v = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            );
            if auth == "VerifyClientCertIfGiven" {
                v = v.allow_unauthenticated();
            }
            builder.with_client_cert_verifier(v.build().map_err(|e| e.to_string())?)
        }
        o => return Err(format!("client_auth_type {o:?} is not supported")),
    };
    let mut cfg = builder
        .with_single_cert(certs, key)
        .map_err(|e| e.to_string())?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(cfg)
}

/// Turns dcgm-exporter's listen address (`:9400`, `host:9400`, `[::1]:9400`) into a listener.
pub fn bind(address: &str) -> io::Result<TcpListener> {
    if let Some(port) = address.strip_prefix(':') {
        let port: u16 = port.parse().map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid port in {address:?}"),
            )
        })?;
        // Every interface: IPv6 (dual stack where the system allows), else IPv4.
        return TcpListener::bind(SocketAddr::from(([0u16; 8], port)))
            .or_else(|_| TcpListener::bind(SocketAddr::from(([0u8; 4], port))));
    }
    let addrs: Vec<SocketAddr> = address.to_socket_addrs()?.collect();
    TcpListener::bind(&addrs[..])
}

/// Serves until the process exits, with the default [`Limits`].
pub fn serve(
    listener: TcpListener,
    web: Arc<WebConfig>,
    published: Arc<Mutex<Published>>,
) -> io::Result<()> {
    serve_with(listener, web, published, Limits::default())
}

/// Serves until the process exits (or an HTTP worker thread cannot start).
///
/// One thread accepts; each connection goes, in turn, to one of a few worker threads (one per
/// CPU) that each run a single-threaded tokio runtime. A request is then read, answered and
/// written on one thread with no hand-over between workers, which on loopback (2 CPUs, 2
/// keep-alive clients) served about 1.6 times the requests per second of tokio's
/// work-stealing pool.
pub fn serve_with(
    listener: TcpListener,
    web: Arc<WebConfig>,
    published: Arc<Mutex<Published>>,
    limits: Limits,
) -> io::Result<()> {
    listener.set_nonblocking(false)?;
    let state = Arc::new(State {
        web,
        published,
        cache: Mutex::new(Cache::default()),
    });
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(16));
    let mut queues = Vec::with_capacity(workers);
    for i in 0..workers {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let state = state.clone();
        std::thread::Builder::new()
            .name(format!("http-{i}"))
            .spawn(move || runtime.block_on(worker(rx, state, limits)))?;
        queues.push(tx);
    }
    // Permits travel with the connection: whether its task runs to its end, fails, is dropped
    // before it ever runs, or never reaches a worker, dropping the permit gives the slot back.
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let overload = Arc::new(tokio::sync::Semaphore::new(limits.max_overload));
    let mut next = 0usize;
    loop {
        let (stream, peer) = match listener.accept() {
            Ok(s) => s,
            Err(e) => {
                log::warn!("accept failed: {e}");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        let (permit, busy) = match slots.clone().try_acquire_owned() {
            Ok(p) => (p, false),
            Err(_) => match overload.clone().try_acquire_owned() {
                Ok(p) => (p, true),
                Err(_) => continue, // past both limits: closed unanswered
            },
        };
        let accepted = Accepted {
            stream,
            peer,
            busy,
            _permit: permit,
        };
        if queues[next % workers].send(accepted).is_err() {
            return Err(io::Error::other("an HTTP worker thread stopped"));
        }
        next = next.wrapping_add(1);
    }
}

/// An accepted connection on its way to a worker, with the slot it holds.
struct Accepted {
    stream: std::net::TcpStream,
    peer: SocketAddr,
    busy: bool,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

struct State {
    web: Arc<WebConfig>,
    published: Arc<Mutex<Published>>,
    cache: Mutex<Cache>,
}

/// The last exposition as shared bytes, and gzipped once on first demand.
#[derive(Default)]
struct Cache {
    version: Option<u64>,
    plain: Bytes,
    gzip: Option<Bytes>,
}

async fn worker(
    mut queue: tokio::sync::mpsc::UnboundedReceiver<Accepted>,
    state: Arc<State>,
    limits: Limits,
) {
    let tls = state.web.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(MAX_HEAD);
    while let Some(conn) = queue.recv().await {
        let _ = conn.stream.set_nodelay(true);
        let stream = match conn
            .stream
            .set_nonblocking(true)
            .and_then(|()| tokio::net::TcpStream::from_std(conn.stream))
        {
            Ok(s) => s,
            Err(e) => {
                log::debug!("connection from {}: {e}", conn.peer);
                continue;
            }
        };
        let (state, tls, http) = (state.clone(), tls.clone(), http.clone());
        let (peer, busy, permit) = (conn.peer, conn.busy, conn._permit);
        let timeout = limits.header_timeout;
        tokio::spawn(async move {
            let _permit = permit;
            let result = match tls {
                None => serve_connection(TokioIo::new(stream), http, state, busy).await,
                Some(acceptor) => {
                    match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
                        Ok(Ok(s)) => serve_connection(TokioIo::new(s), http, state, busy).await,
                        Ok(Err(e)) => Err(e.to_string()),
                        Err(_) => Err("TLS handshake timed out".into()),
                    }
                }
            };
            if let Err(e) = result {
                log::debug!("connection from {peer}: {e}");
            }
        });
    }
}

async fn serve_connection<I>(
    io: I,
    mut http: http1::Builder,
    state: Arc<State>,
    busy: bool,
) -> Result<(), String>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let result = if busy {
        // Read the request before answering, so that the client gets the 503 rather than a
        // reset for unread data.
        http.keep_alive(false);
        let web = state.web.clone();
        http.serve_connection(
            io,
            service_fn(move |_req| {
                let r = reply(
                    &web,
                    StatusCode::SERVICE_UNAVAILABLE,
                    TEXT,
                    "too many connections\n",
                );
                async move { Ok::<_, Infallible>(r) }
            }),
        )
        .await
    } else {
        http.serve_connection(io, service_fn(move |req| handle(req, state.clone())))
            .await
    };
    result.map_err(|e| e.to_string())
}

const TEXT: &str = "text/plain; charset=utf-8";

fn reply(
    web: &WebConfig,
    status: StatusCode,
    ctype: &'static str,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if status == StatusCode::SERVICE_UNAVAILABLE {
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    for (k, v) in &web.headers {
        h.insert(k.clone(), v.clone());
    }
    r
}

/// A response after which the connection closes.
fn closing(mut r: Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// Whether `Accept-Encoding` accepts gzip (explicitly or through `*`) with a non-zero weight.
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim();
            let weight = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .next()
                .map_or(1.0, |q| q.trim().parse::<f32>().unwrap_or(0.0));
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && weight > 0.0
        })
}

async fn handle(
    req: Request<Incoming>,
    state: Arc<State>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let web = &state.web;
    let (parts, body) = req.into_parts();
    // HTTP/1.1 requires exactly one Host header (RFC 9112 section 3.2).
    let hosts = parts.headers.get_all(header::HOST).iter().count();
    if hosts > 1 || (hosts == 0 && parts.version == Version::HTTP_11) {
        return Ok(closing(reply(
            web,
            StatusCode::BAD_REQUEST,
            TEXT,
            "bad request: Host\n",
        )));
    }
    // Read (and drop) any body, so that the connection stays in step for the next request.
    if !body.is_end_stream() && Limited::new(body, MAX_BODY).collect().await.is_err() {
        return Ok(closing(reply(
            web,
            StatusCode::PAYLOAD_TOO_LARGE,
            TEXT,
            "request body too large\n",
        )));
    }
    let authorized = match web.precheck(parts.headers.get(header::AUTHORIZATION)) {
        Auth::Pass => true,
        Auth::Deny => false,
        Auth::Verify(b64) => {
            let s = state.clone();
            tokio::task::spawn_blocking(move || s.web.verify(&b64))
                .await
                .unwrap_or(false)
        }
    };
    if !authorized {
        let mut r = reply(web, StatusCode::UNAUTHORIZED, TEXT, "Unauthorized\n");
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic"));
        return Ok(r);
    }
    if parts.method != Method::GET && parts.method != Method::HEAD {
        let mut r = reply(
            web,
            StatusCode::METHOD_NOT_ALLOWED,
            TEXT,
            "method not allowed\n",
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Ok(r);
    }
    Ok(match parts.uri.path() {
        "/metrics" => {
            let gzip = accepts_gzip(&parts.headers);
            let mut r = match state.metrics(gzip) {
                Ok(body) => {
                    let mut r = reply(
                        web,
                        StatusCode::OK,
                        "text/plain; version=0.0.4; charset=utf-8",
                        body,
                    );
                    if gzip {
                        r.headers_mut()
                            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
                    }
                    r
                }
                Err(why) => reply(web, StatusCode::SERVICE_UNAVAILABLE, TEXT, why),
            };
            r.headers_mut()
                .insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
            r
        }
        "/health" => {
            let p = state.published.lock().unwrap_or_else(|p| p.into_inner());
            let r = p
                .health
                .report(p.error.as_deref(), p.ready, std::time::Instant::now());
            drop(p);
            let status = if r.ok {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            reply(web, status, TEXT, r.body)
        }
        "/" => reply(
            web,
            StatusCode::OK,
            "text/html; charset=utf-8",
            "<html><head><title>dcgm-rs exporter</title></head><body><h1>dcgm-rs exporter</h1>\
             <p><a href=\"./metrics\">Metrics</a></p><p><a href=\"./health\">Health</a></p></body></html>\n",
        ),
        _ => reply(web, StatusCode::NOT_FOUND, TEXT, "404 page not found\n"),
    })
}

impl State {
    /// The last exposition (gzipped if asked), or why there is none.
    fn metrics(&self, gzip: bool) -> Result<Bytes, String> {
        let p = self.published.lock().unwrap_or_else(|p| p.into_inner());
        match (&p.error, p.ready) {
            (Some(e), _) => return Err(format!("collection failed: {e}\n")),
            (None, false) => return Err("no collection yet\n".into()),
            (None, true) => {}
        }
        let mut c = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if c.version != Some(p.version) {
            *c = Cache {
                version: Some(p.version),
                plain: Bytes::copy_from_slice(p.text.as_bytes()),
                gzip: None,
            };
        }
        drop(p);
        if !gzip {
            return Ok(c.plain.clone());
        }
        if c.gzip.is_none() {
            let mut enc = flate2::write::GzEncoder::new(
                Vec::with_capacity(c.plain.len() / 4),
                flate2::Compression::default(),
            );
            enc.write_all(&c.plain)
                .and_then(|()| enc.finish())
                .map(|v| c.gzip = Some(Bytes::from(v)))
                .map_err(|e| format!("gzip: {e}\n"))?;
        }
        Ok(c.gzip.clone().unwrap_or_default())
    }
}
