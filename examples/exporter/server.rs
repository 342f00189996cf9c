//! The exporter's HTTP(S) server: `/metrics`, `/health` and a landing page, with the
//! Prometheus exporter-toolkit web configuration (TLS, basic auth with bcrypt hashes, extra
//! response headers).
//!
//! A small HTTP/1.1 server on std threads: one thread per connection (at most
//! [`MAX_CONNECTIONS`] at once), keep-alive, bounded request sizes and idle timeouts. TLS is
//! rustls (ring).

use std::collections::{BTreeMap, HashSet};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use serde::Deserialize;

/// Connections served at once; more are answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 64;
const MAX_HEAD: usize = 16 * 1024;
const MAX_BODY: u64 = 64 * 1024;
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// What `/metrics` and `/health` serve, updated by the collector thread.
#[derive(Debug, Default)]
pub struct Published {
    /// The last exposition.
    pub text: String,
    /// Why the last collection failed, if it did (then `/metrics` and `/health` answer 503).
    pub error: Option<String>,
    /// Whether a collection has finished yet.
    pub ready: bool,
}

/// The exporter-toolkit web configuration file (the subset this exporter supports; any other
/// key is an error).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebConfigFile {
    pub tls_server_config: Option<TlsFile>,
    pub http_server_config: Option<HttpFile>,
    #[serde(default)]
    pub basic_auth_users: BTreeMap<String, String>,
}

/// `tls_server_config`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsFile {
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
    pub client_auth_type: Option<String>,
    pub client_ca_file: Option<PathBuf>,
    pub min_version: Option<String>,
    pub max_version: Option<String>,
}

/// `http_server_config`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpFile {
    /// Accepted; this server speaks HTTP/1.1 only.
    pub http2: Option<bool>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

/// A loaded web configuration.
pub struct WebConfig {
    tls: Option<Arc<rustls::ServerConfig>>,
    users: BTreeMap<String, String>,
    headers: Vec<(String, String)>,
    /// `Authorization` header values that passed, so bcrypt runs once per credential.
    auth_cache: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for WebConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebConfig")
            .field("tls", &self.tls.is_some())
            .field("users", &self.users.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl WebConfig {
    /// Plain HTTP, no authentication.
    pub fn none() -> Self {
        Self {
            tls: None,
            users: BTreeMap::new(),
            headers: Vec::new(),
            auth_cache: Mutex::new(HashSet::new()),
        }
    }

    /// Whether the server speaks TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
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
        for (user, hash) in &file.basic_auth_users {
            if !(hash.starts_with("$2a$")
                || hash.starts_with("$2b$")
                || hash.starts_with("$2y$")
                || hash.starts_with("$2x$"))
            {
                return Err(format!(
                    "{}: the password of {user:?} is not a bcrypt hash",
                    path.display()
                ));
            }
        }
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
                if !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    || v.contains(['\r', '\n'])
                {
                    return Err(format!("{}: invalid response header {k:?}", path.display()));
                }
                headers.push((k, v));
            }
        }
        Ok(Self {
            tls,
            users: file.basic_auth_users,
            headers,
            auth_cache: Mutex::new(HashSet::new()),
        })
    }

    fn authorized(&self, header: Option<&str>) -> bool {
        if self.users.is_empty() {
            return true;
        }
        let Some(h) = header else {
            return false;
        };
        let Some(b64) = h
            .strip_prefix("Basic ")
            .or_else(|| h.strip_prefix("basic "))
        else {
            return false;
        };
        let b64 = b64.trim();
        if self
            .auth_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(b64)
        {
            return true;
        }
        let Ok(raw) = base64::engine::general_purpose::STANDARD.decode(b64) else {
            return false;
        };
        let Ok(raw) = String::from_utf8(raw) else {
            return false;
        };
        let Some((user, pass)) = raw.split_once(':') else {
            return false;
        };
        // An unknown user still costs one bcrypt verification, so that response times do
        // not tell which users exist.
        let (hash, known) = match self.users.get(user) {
            Some(h) => (h.as_str(), true),
            None => (self.users.values().next().map_or("", String::as_str), false),
        };
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

/// Serves until the process exits.
pub fn serve(listener: TcpListener, web: Arc<WebConfig>, published: Arc<Mutex<Published>>) {
    let active = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        let stream = match conn {
            Ok(s) => s,
            Err(e) => {
                log::warn!("accept failed: {e}");
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if active.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            active.fetch_sub(1, Ordering::AcqRel);
            let mut s = stream;
            let _ = s.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            continue;
        }
        let (web, published, active) = (web.clone(), published.clone(), active.clone());
        let spawned = std::thread::Builder::new()
            .name("http".into())
            .spawn(move || {
                let peer = stream.peer_addr().ok();
                if let Err(e) = connection(stream, &web, &published) {
                    log::debug!("connection from {peer:?}: {e}");
                }
                active.fetch_sub(1, Ordering::AcqRel);
            });
        if let Err(e) = spawned {
            log::warn!("cannot start a connection thread: {e}");
        }
    }
}

fn connection(stream: TcpStream, web: &WebConfig, published: &Mutex<Published>) -> io::Result<()> {
    stream.set_read_timeout(Some(IDLE_TIMEOUT))?;
    stream.set_write_timeout(Some(IDLE_TIMEOUT))?;
    let _ = stream.set_nodelay(true);
    match &web.tls {
        None => requests(BufReader::new(stream), web, published),
        Some(cfg) => {
            let conn = rustls::ServerConnection::new(cfg.clone()).map_err(io::Error::other)?;
            requests(
                BufReader::new(rustls::StreamOwned::new(conn, stream)),
                web,
                published,
            )
        }
    }
}

struct Request {
    method: String,
    path: String,
    keep_alive: bool,
    authorization: Option<String>,
}

/// Reads one line (at most `budget` bytes in all); `None` at end of stream.
fn read_line<S: Read>(
    r: &mut BufReader<S>,
    budget: &mut usize,
    line: &mut Vec<u8>,
) -> io::Result<Option<()>> {
    line.clear();
    let n = r
        .by_ref()
        .take(*budget as u64 + 1)
        .read_until(b'\n', line)?;
    if n == 0 {
        return Ok(None);
    }
    if n > *budget || !line.ends_with(b"\n") {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "request head too large",
        ));
    }
    *budget -= n;
    while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        line.pop();
    }
    Ok(Some(()))
}

fn read_request<S: Read>(r: &mut BufReader<S>) -> io::Result<Option<Request>> {
    let mut budget = MAX_HEAD;
    let mut line = Vec::new();
    // Tolerate empty lines before a request (RFC 9112 section 2.2).
    loop {
        if read_line(r, &mut budget, &mut line)?.is_none() {
            return Ok(None);
        }
        if !line.is_empty() {
            break;
        }
    }
    let head = String::from_utf8_lossy(&line).into_owned();
    let mut parts = head.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "malformed request line",
        ));
    };
    let http11 = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "unsupported HTTP version",
            ));
        }
    };
    let mut keep_alive = http11;
    let mut authorization = None;
    let mut length: u64 = 0;
    loop {
        if read_line(r, &mut budget, &mut line)?.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "end of stream in headers",
            ));
        }
        if line.is_empty() {
            break;
        }
        let h = String::from_utf8_lossy(&line);
        let Some((name, value)) = h.split_once(':') else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "malformed header",
            ));
        };
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "connection" => {
                let v = value.to_ascii_lowercase();
                if v.split(',').any(|t| t.trim() == "close") {
                    keep_alive = false;
                } else if v.split(',').any(|t| t.trim() == "keep-alive") {
                    keep_alive = true;
                }
            }
            "authorization" => authorization = Some(value.to_string()),
            "content-length" => {
                length = value.parse().map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidData, "bad content-length")
                })?;
            }
            "transfer-encoding" => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "request bodies are not accepted",
                ));
            }
            _ => {}
        }
    }
    if length > MAX_BODY {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "request body too large",
        ));
    }
    io::copy(&mut r.by_ref().take(length), &mut io::sink())?;
    let path = target.split('?').next().unwrap_or(target).to_string();
    Ok(Some(Request {
        method: method.to_string(),
        path,
        keep_alive,
        authorization,
    }))
}

fn requests<S: Read + Write>(
    mut r: BufReader<S>,
    web: &WebConfig,
    published: &Mutex<Published>,
) -> io::Result<()> {
    let mut body = Vec::new();
    loop {
        let req = match read_request(&mut r) {
            Ok(Some(req)) => req,
            Ok(None) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                let _ = respond(
                    r.get_mut(),
                    400,
                    "text/plain; charset=utf-8",
                    b"bad request\n",
                    false,
                    &[],
                    web,
                    true,
                );
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        let head_only = req.method == "HEAD";
        body.clear();
        let (status, ctype, extra): (u16, &str, &[(&str, &str)]) = if !web
            .authorized(req.authorization.as_deref())
        {
            body.extend_from_slice(b"Unauthorized\n");
            (
                401,
                "text/plain; charset=utf-8",
                &[("WWW-Authenticate", "Basic")],
            )
        } else if req.method != "GET" && !head_only {
            body.extend_from_slice(b"method not allowed\n");
            (405, "text/plain; charset=utf-8", &[("Allow", "GET, HEAD")])
        } else {
            match req.path.as_str() {
                "/metrics" => {
                    let p = published.lock().unwrap_or_else(|p| p.into_inner());
                    match (&p.error, p.ready) {
                        (None, true) => {
                            body.extend_from_slice(p.text.as_bytes());
                            (200, "text/plain; version=0.0.4; charset=utf-8", &[])
                        }
                        (Some(e), _) => {
                            body.extend_from_slice(format!("collection failed: {e}\n").as_bytes());
                            (503, "text/plain; charset=utf-8", &[])
                        }
                        (None, false) => {
                            body.extend_from_slice(b"no collection yet\n");
                            (503, "text/plain; charset=utf-8", &[])
                        }
                    }
                }
                "/health" => {
                    let p = published.lock().unwrap_or_else(|p| p.into_inner());
                    match (&p.error, p.ready) {
                        (None, true) => {
                            body.extend_from_slice(b"OK\n");
                            (200, "text/plain; charset=utf-8", &[])
                        }
                        (Some(e), _) => {
                            body.extend_from_slice(format!("KO: {e}\n").as_bytes());
                            (503, "text/plain; charset=utf-8", &[])
                        }
                        (None, false) => {
                            body.extend_from_slice(b"KO: no collection yet\n");
                            (503, "text/plain; charset=utf-8", &[])
                        }
                    }
                }
                "/" => {
                    body.extend_from_slice(
                        b"<html><head><title>dcgm-rs exporter</title></head><body><h1>dcgm-rs exporter</h1>\
                          <p><a href=\"./metrics\">Metrics</a></p><p><a href=\"./health\">Health</a></p></body></html>\n",
                    );
                    (200, "text/html; charset=utf-8", &[])
                }
                _ => {
                    body.extend_from_slice(b"404 page not found\n");
                    (404, "text/plain; charset=utf-8", &[])
                }
            }
        };
        respond(
            r.get_mut(),
            status,
            ctype,
            &body,
            head_only,
            extra,
            web,
            !req.keep_alive,
        )?;
        if !req.keep_alive {
            return Ok(());
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn respond<W: Write>(
    w: &mut W,
    status: u16,
    ctype: &str,
    body: &[u8],
    head_only: bool,
    extra: &[(&str, &str)],
    web: &WebConfig,
    close: bool,
) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Service Unavailable",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nX-Content-Type-Options: nosniff\r\n",
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    for (k, v) in &web.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(if close {
        "Connection: close\r\n\r\n"
    } else {
        "Connection: keep-alive\r\n\r\n"
    });
    w.write_all(head.as_bytes())?;
    if !head_only {
        w.write_all(body)?;
    }
    w.flush()
}
