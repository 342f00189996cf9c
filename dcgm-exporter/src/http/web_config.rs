//! The Prometheus exporter-toolkit web configuration file (`--web-config-file`): TLS, client
//! certificates, basic-auth users with bcrypt hashes, and the security headers added to every
//! response. Unknown keys, unknown headers and hashes of unusable costs are errors at start-up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hyper::header::{HeaderName, HeaderValue};
use serde::Deserialize;

use crate::http::basic_auth::BasicAuth;

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

/// The response headers a web configuration may set, with the values allowed where
/// exporter-toolkit fixes them (`None`: any value). Any other header is a configuration error,
/// as in exporter-toolkit: a configurable `Content-Length` or `Connection` would corrupt every
/// keep-alive response.
pub const ALLOWED_HEADERS: [(&str, Option<&[&str]>); 5] = [
    ("Strict-Transport-Security", None),
    ("X-Content-Type-Options", Some(&["nosniff"])),
    ("X-Frame-Options", Some(&["deny", "sameorigin"])),
    ("X-XSS-Protection", None),
    ("Content-Security-Policy", None),
];

/// A loaded web configuration.
pub struct WebConfig {
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
    pub(crate) auth: Arc<BasicAuth>,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
}

impl std::fmt::Debug for WebConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebConfig")
            .field("tls", &self.tls.is_some())
            .field("auth", &self.auth)
            .finish()
    }
}

/// Checks one configured response header against `ALLOWED_HEADERS`.
fn allowed_header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), String> {
    let Some((canonical, values)) = ALLOWED_HEADERS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
    else {
        let names: Vec<&str> = ALLOWED_HEADERS.iter().map(|(n, _)| *n).collect();
        return Err(format!(
            "HTTP header {name:?} can not be configured (allowed: {})",
            names.join(", ")
        ));
    };
    if let Some(values) = values
        && !values.contains(&value)
    {
        return Err(format!(
            "invalid value {value:?} for {canonical}: expected one of {values:?}"
        ));
    }
    let value = HeaderValue::from_str(value)
        .map_err(|_| format!("invalid value {value:?} for {canonical}"))?;
    let name = HeaderName::from_bytes(canonical.as_bytes()).map_err(|e| e.to_string())?;
    Ok((name, value))
}

impl WebConfig {
    /// Plain HTTP, no authentication.
    pub fn none() -> Self {
        Self {
            tls: None,
            auth: Arc::new(BasicAuth::disabled()),
            headers: Vec::new(),
        }
    }

    /// Whether the server speaks TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// How many bcrypt verifications have run, the decoy's included (for tests: an unknown
    /// user costs one too, and a cached answer none).
    pub fn bcrypt_verifications(&self) -> u64 {
        self.auth.verifications()
    }

    /// Reads a web configuration file; relative paths in it are relative to the file.
    ///
    /// # Errors
    ///
    /// A message naming the file: unreadable, not YAML of this form, an unknown key, a
    /// response header outside `ALLOWED_HEADERS`, a password that is not a bcrypt hash or
    /// whose cost is above `basic_auth::MAX_COST`, or TLS files that do not load.
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
        let auth = BasicAuth::new(file.basic_auth_users)
            .map_err(|e| format!("{}: {e}", path.display()))?;
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
                headers
                    .push(allowed_header(&k, &v).map_err(|e| format!("{}: {e}", path.display()))?);
            }
        }
        Ok(Self {
            tls,
            auth: Arc::new(auth),
            headers,
        })
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
