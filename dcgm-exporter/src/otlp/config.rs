//! The OTLP export's settings: the `--otlp-*` flags ([`OtlpArgs`]), and the OpenTelemetry
//! SDK's standard environment variables (`OTEL_EXPORTER_OTLP_*`, signal-specific
//! `OTEL_EXPORTER_OTLP_METRICS_*` first, `OTEL_METRIC_EXPORT_INTERVAL`,
//! `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SERVICE_NAME`, `OTEL_METRICS_EXPORTER=none`), a flag
//! winning over its variable; resolved into an [`OtlpConfig`].

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::otlp::compression::Compression;

/// The OTLP flags (flattened into the exporter's command line).
#[derive(Debug, Clone, Default, Args)]
pub struct OtlpArgs {
    /// Push the metrics over OTLP to this collector (e.g. `http://collector:4317` for gRPC,
    /// `http://collector:4318` with `--otlp-protocol http/protobuf`, which posts to
    /// `URL/v1/metrics`); `https://` for TLS. Default: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`,
    /// then `OTEL_EXPORTER_OTLP_ENDPOINT`; none: no OTLP export.
    #[arg(long = "otlp-endpoint", value_name = "URL")]
    pub endpoint: Option<String>,
    /// `grpc` or `http/protobuf` (default: `OTEL_EXPORTER_OTLP_[METRICS_]PROTOCOL`, else
    /// `grpc`).
    #[arg(long = "otlp-protocol", value_name = "PROTOCOL")]
    pub protocol: Option<String>,
    /// How often to push (e.g. `10s`; default: `OTEL_METRIC_EXPORT_INTERVAL` in ms, else the
    /// collect interval). The latest collection is pushed each time.
    #[arg(long = "otlp-interval", value_name = "DURATION", value_parser = duration)]
    pub interval: Option<Duration>,
    /// A header sent with every push, `KEY=VALUE` (repeatable; added to
    /// `OTEL_EXPORTER_OTLP_[METRICS_]HEADERS`, replacing a key given there).
    #[arg(long = "otlp-header", value_name = "KEY=VALUE", action = clap::ArgAction::Append)]
    pub headers: Vec<String>,
    /// Time one push may take before it is abandoned and retried (default:
    /// `OTEL_EXPORTER_OTLP_[METRICS_]TIMEOUT` in ms, else 10s).
    #[arg(long = "otlp-timeout", value_name = "DURATION", value_parser = duration)]
    pub timeout: Option<Duration>,
    /// `none` or `gzip`: how pushes are compressed (gRPC message compression, or the
    /// OTLP/HTTP body with `Content-Encoding: gzip`; default:
    /// `OTEL_EXPORTER_OTLP_[METRICS_]COMPRESSION`, else `none`).
    #[arg(long = "otlp-compression", value_name = "none|gzip")]
    pub compression: Option<String>,
    /// PEM file of the certificate authorities that sign the collector's certificate
    /// (default: `OTEL_EXPORTER_OTLP_[METRICS_]CERTIFICATE`, else the system's roots).
    #[arg(long = "otlp-ca-file", value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    /// PEM file of the client certificate, for collectors that ask for one (with
    /// `--otlp-client-key`; default: `OTEL_EXPORTER_OTLP_[METRICS_]CLIENT_CERTIFICATE`).
    #[arg(long = "otlp-client-cert", value_name = "FILE")]
    pub client_cert: Option<PathBuf>,
    /// PEM file of the client certificate's private key (default:
    /// `OTEL_EXPORTER_OTLP_[METRICS_]CLIENT_KEY`).
    #[arg(long = "otlp-client-key", value_name = "FILE")]
    pub client_key: Option<PathBuf>,
    /// An endpoint given without a scheme (`collector:4317`) is plaintext rather than TLS
    /// (as `OTEL_EXPORTER_OTLP_[METRICS_]INSECURE=true`). A scheme always decides.
    #[arg(long = "otlp-insecure")]
    pub insecure: bool,
    /// Collections waiting to be pushed while the collector is slow or down (1 to 1000);
    /// past it the oldest is dropped (and counted).
    #[arg(long = "otlp-queue-size", value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub queue_size: u32,
    /// Bytes the waiting collections may hold (`N`, `NKiB`, `NMiB`, `NGiB`; 64KiB to 16GiB);
    /// past it the oldest are dropped (and counted). At 1,024 entities one request is about
    /// 10 MB. The newest request is kept whatever its size.
    #[arg(long = "otlp-queue-bytes", value_name = "SIZE", default_value = "64MiB",
          value_parser = byte_size)]
    pub queue_bytes: u64,
    /// No HTTP listener (no `/metrics`, `/health` or `/`): OTLP only. Needs an OTLP endpoint.
    #[arg(long = "no-metrics-endpoint")]
    pub no_metrics_endpoint: bool,
}

/// The default of `--otlp-queue-bytes`.
pub const DEFAULT_QUEUE_BYTES: u64 = 64 << 20;

/// A size in bytes: `N`, or `N` with `KiB`, `MiB` or `GiB` (`K`, `M`, `G` alike), from 64 KiB
/// to 16 GiB.
///
/// ```
/// use dcgm_exporter::otlp::config::byte_size;
/// assert_eq!(byte_size("64MiB"), Ok(64 << 20));
/// assert_eq!(byte_size("300k"), Ok(300 << 10));
/// assert_eq!(byte_size("1048576"), Ok(1 << 20));
/// assert!(byte_size("1KiB").is_err());
/// assert!(byte_size("lots").is_err());
/// ```
///
/// # Errors
///
/// Not a size, or out of range.
pub fn byte_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{s:?} is not a size (e.g. 64MiB, 512KiB, 1048576)"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        _ => return Err(format!("{s:?}: the unit is KiB, MiB or GiB")),
    };
    let bytes = n
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))?;
    if !(64 << 10..=16 << 30).contains(&bytes) {
        return Err(format!("{s:?} is outside 64KiB..16GiB"));
    }
    Ok(bytes)
}

fn duration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| format!("{s:?}: {e} (e.g. 10s, 500ms)"))?;
    if d < Duration::from_millis(1) || d > Duration::from_secs(24 * 3600) {
        return Err(format!("{s:?} is outside 1ms..24h"));
    }
    Ok(d)
}

/// OTLP over gRPC or over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `grpc`: `MetricsService/Export`.
    Grpc,
    /// `http/protobuf`: `POST /v1/metrics` with the protobuf body.
    HttpProtobuf,
}

/// What an OTLP setting is wrong with (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum OtlpConfigError {
    /// An endpoint that is not an `http://` or `https://` URL.
    #[error("OTLP endpoint {url:?} (from {from}): {why}; give a URL like http://collector:4317")]
    Endpoint {
        /// The value.
        url: String,
        /// The flag or variable it came from.
        from: &'static str,
        /// What is wrong.
        why: String,
    },
    /// A protocol other than `grpc` and `http/protobuf`.
    #[error(
        "OTLP protocol {0:?}: this exporter speaks grpc and http/protobuf (http/json is not supported)"
    )]
    Protocol(String),
    /// A header that is not `KEY=VALUE`, or not valid in HTTP.
    #[error("OTLP header {0:?}: expected KEY=VALUE with a header name and a printable value")]
    Header(String),
    /// A compression other than `none` and `gzip`.
    #[error(transparent)]
    Compression(#[from] crate::otlp::compression::UnknownCompression),
    /// A number variable that does not parse.
    #[error("{name}={value:?} is not a number of milliseconds")]
    Millis {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// A client certificate without its key, or the reverse.
    #[error("--otlp-client-cert and --otlp-client-key go together: give both or neither")]
    ClientPair,
    /// `--no-metrics-endpoint` without an endpoint.
    #[error(
        "--no-metrics-endpoint needs an OTLP endpoint (--otlp-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT): nothing would be exported"
    )]
    NothingToExport,
    /// A `--otlp-ca-file`, client certificate or key that cannot be read.
    #[error("{what} {path}: {source}")]
    File {
        /// Which file.
        what: &'static str,
        /// Its path.
        path: String,
        /// The read error.
        source: std::io::Error,
    },
}

/// The resolved OTLP settings.
#[derive(Debug, Clone, PartialEq)]
pub struct OtlpConfig {
    /// The URL pushed to: for gRPC the collector's address, for HTTP the full
    /// `…/v1/metrics` URL.
    pub url: String,
    /// gRPC or HTTP.
    pub protocol: Protocol,
    /// Whether the URL is `https`.
    pub tls: bool,
    /// How often to push (`None`: every collection).
    pub interval: Option<Duration>,
    /// Headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The limit of one push.
    pub timeout: Duration,
    /// How pushes are compressed.
    pub compression: Compression,
    /// PEM of the roots (`None`: the system's).
    pub ca_pem: Option<Vec<u8>>,
    /// PEM of the client certificate and key.
    pub client_identity: Option<(Vec<u8>, Vec<u8>)>,
    /// Collections that may wait.
    pub queue_size: usize,
    /// Bytes the waiting collections may hold.
    pub queue_bytes: u64,
    /// Resource attributes of every push (`service.name`, `OTEL_RESOURCE_ATTRIBUTES`).
    pub resource: Vec<(String, String)>,
}

/// Percent-decoding of W3C baggage values (`OTEL_EXPORTER_OTLP_HEADERS`,
/// `OTEL_RESOURCE_ATTRIBUTES`): `%XX` → the byte; anything else as it is.
fn percent_decode(s: &str) -> String {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            )
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `k1=v1,k2=v2` (the variables' format), blanks trimmed, values percent-decoded.
fn key_values(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (k, v) = item.split_once('=').ok_or_else(|| item.to_string())?;
        let k = k.trim();
        if k.is_empty() {
            return Err(item.to_string());
        }
        out.push((k.to_string(), percent_decode(v.trim())));
    }
    Ok(out)
}

fn valid_header(k: &str, v: &str) -> bool {
    hyper::http::HeaderName::from_bytes(k.as_bytes()).is_ok()
        && hyper::http::HeaderValue::from_str(v).is_ok()
}

impl OtlpArgs {
    /// The settings these flags and the environment (`env`: a variable's value) ask for;
    /// `None` when no endpoint is given (or `OTEL_METRICS_EXPORTER=none`).
    ///
    /// # Errors
    ///
    /// [`OtlpConfigError`]: what is wrong, and with which flag or variable.
    pub fn resolve(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<OtlpConfig>, OtlpConfigError> {
        // The signal-specific variable first, then the general one.
        let var = |name: &str| -> Option<String> {
            env(&format!("OTEL_EXPORTER_OTLP_METRICS_{name}"))
                .filter(|v| !v.trim().is_empty())
                .or_else(|| {
                    env(&format!("OTEL_EXPORTER_OTLP_{name}")).filter(|v| !v.trim().is_empty())
                })
        };
        let disabled = env("OTEL_METRICS_EXPORTER").is_some_and(|v| v.trim() == "none");
        let protocol = match self.protocol.clone().or_else(|| var("PROTOCOL")) {
            None => Protocol::Grpc,
            Some(p) => match p.trim() {
                "grpc" => Protocol::Grpc,
                "http/protobuf" => Protocol::HttpProtobuf,
                other => return Err(OtlpConfigError::Protocol(other.to_string())),
            },
        };
        // The endpoint: the flag and OTEL_EXPORTER_OTLP_ENDPOINT are a base URL (HTTP appends
        // /v1/metrics); OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is used as it is.
        let (raw, from, full) = if let Some(e) = &self.endpoint {
            (e.clone(), "--otlp-endpoint", false)
        } else if disabled {
            return Ok(None);
        } else if let Some(v) =
            env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT").filter(|v| !v.trim().is_empty())
        {
            (v, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", true)
        } else if let Some(v) = env("OTEL_EXPORTER_OTLP_ENDPOINT").filter(|v| !v.trim().is_empty())
        {
            (v, "OTEL_EXPORTER_OTLP_ENDPOINT", false)
        } else {
            if self.no_metrics_endpoint {
                return Err(OtlpConfigError::NothingToExport);
            }
            return Ok(None);
        };
        let insecure =
            self.insecure || var("INSECURE").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let raw = raw.trim().to_string();
        let with_scheme = if raw.contains("://") {
            raw.clone()
        } else if insecure {
            format!("http://{raw}")
        } else {
            format!("https://{raw}")
        };
        let bad = |why: String| OtlpConfigError::Endpoint {
            url: raw.clone(),
            from,
            why,
        };
        let uri: hyper::http::Uri = with_scheme.parse().map_err(|e| bad(format!("{e}")))?;
        let tls = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            other => return Err(bad(format!("the scheme {other:?} is not http or https"))),
        };
        if uri.host().is_none_or(str::is_empty) {
            return Err(bad("no host".into()));
        }
        let url = match protocol {
            Protocol::HttpProtobuf if !full => {
                format!("{}/v1/metrics", with_scheme.trim_end_matches('/'))
            }
            _ => with_scheme.clone(),
        };
        let mut headers: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, v: String, whole: &str| {
            if !valid_header(k, &v) {
                return Err(OtlpConfigError::Header(whole.to_string()));
            }
            let k = k.to_ascii_lowercase();
            headers.retain(|(n, _)| *n != k);
            headers.push((k, v));
            Ok(())
        };
        for name in [
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
        ] {
            if let Some(v) = env(name) {
                for (k, val) in key_values(&v).map_err(OtlpConfigError::Header)? {
                    put(&k, val, &v)?;
                }
            }
        }
        for h in &self.headers {
            let (k, v) = h
                .split_once('=')
                .ok_or_else(|| OtlpConfigError::Header(h.clone()))?;
            put(k.trim(), v.trim().to_string(), h)?;
        }
        let millis = |name: &'static str| -> Result<Option<Duration>, OtlpConfigError> {
            match env(name).filter(|v| !v.trim().is_empty()) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse::<u64>()
                    .map(|ms| Some(Duration::from_millis(ms.max(1))))
                    .map_err(|_| OtlpConfigError::Millis { name, value: v }),
            }
        };
        let timeout = match self.timeout {
            Some(t) => t,
            None => millis("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT")?
                .or(millis("OTEL_EXPORTER_OTLP_TIMEOUT")?)
                .unwrap_or(Duration::from_secs(10)),
        };
        let compression = match &self.compression {
            Some(c) => Compression::parse(c, "--otlp-compression")?,
            None => match env("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION")
                .filter(|v| !v.trim().is_empty())
            {
                Some(v) => Compression::parse(&v, "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION")?,
                None => {
                    match env("OTEL_EXPORTER_OTLP_COMPRESSION").filter(|v| !v.trim().is_empty()) {
                        Some(v) => Compression::parse(&v, "OTEL_EXPORTER_OTLP_COMPRESSION")?,
                        None => Compression::None,
                    }
                }
            },
        };
        let interval = match self.interval {
            Some(i) => Some(i),
            None => millis("OTEL_METRIC_EXPORT_INTERVAL")?,
        };
        let file = |what: &'static str, p: PathBuf| {
            std::fs::read(&p).map_err(|source| OtlpConfigError::File {
                what,
                path: p.display().to_string(),
                source,
            })
        };
        let path_var = |name: &str| var(name).map(|v| PathBuf::from(v.trim()));
        let ca_pem = match self.ca_file.clone().or_else(|| path_var("CERTIFICATE")) {
            Some(p) => Some(file("the OTLP CA file", p)?),
            None => None,
        };
        let cert = self
            .client_cert
            .clone()
            .or_else(|| path_var("CLIENT_CERTIFICATE"));
        let key = self.client_key.clone().or_else(|| path_var("CLIENT_KEY"));
        let client_identity = match (cert, key) {
            (Some(c), Some(k)) => Some((
                file("the OTLP client certificate", c)?,
                file("the OTLP client key", k)?,
            )),
            (None, None) => None,
            _ => return Err(OtlpConfigError::ClientPair),
        };
        let mut resource = vec![(
            "service.name".to_string(),
            env("OTEL_SERVICE_NAME")
                .filter(|s| !s.trim().is_empty())
                .unwrap_or_else(|| "dcgm-exporter".into()),
        )];
        if let Some(v) = env("OTEL_RESOURCE_ATTRIBUTES") {
            // A malformed entry is left out, as the SDKs do.
            for item in v.split(',') {
                if let Ok(mut kv) = key_values(item)
                    && let Some((k, val)) = kv.pop()
                    && k != "service.name"
                {
                    resource.push((k, val));
                }
            }
        }
        Ok(Some(OtlpConfig {
            url,
            protocol,
            tls,
            interval,
            headers,
            timeout,
            compression,
            ca_pem,
            client_identity,
            queue_size: self.queue_size as usize,
            queue_bytes: self.queue_bytes,
            resource,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn resolve(
        args: OtlpArgs,
        vars: &[(&str, &str)],
    ) -> Result<Option<OtlpConfig>, OtlpConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        args.resolve(&|k| map.get(k).cloned())
    }

    fn args() -> OtlpArgs {
        OtlpArgs {
            queue_size: 8,
            queue_bytes: DEFAULT_QUEUE_BYTES,
            ..OtlpArgs::default()
        }
    }

    #[test]
    fn nothing_asked_exports_nothing() {
        assert!(resolve(args(), &[]).unwrap().is_none());
        assert!(matches!(
            resolve(
                OtlpArgs {
                    no_metrics_endpoint: true,
                    ..args()
                },
                &[]
            ),
            Err(OtlpConfigError::NothingToExport)
        ));
        let off = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ];
        assert!(resolve(args(), &off).unwrap().is_none());
    }

    #[test]
    fn flags_win_over_variables_and_http_appends_the_path() {
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318/"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "Authorization=Bearer%20abc,x-a=1",
            ),
            ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "x-a=2"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "cluster=c1,bad,k8s.node.name=n%2C1",
            ),
        ];
        let c = resolve(args(), &vars).unwrap().unwrap();
        assert_eq!(c.url, "http://env:4318/v1/metrics");
        assert_eq!(c.protocol, Protocol::HttpProtobuf);
        assert_eq!(c.timeout, Duration::from_millis(2500));
        assert!(
            c.headers
                .contains(&("authorization".into(), "Bearer abc".into()))
        );
        assert!(c.headers.contains(&("x-a".into(), "2".into())));
        assert!(c.resource.contains(&("cluster".into(), "c1".into())));
        assert!(c.resource.contains(&("k8s.node.name".into(), "n,1".into())));
        let flags = OtlpArgs {
            endpoint: Some("https://flag:4317".into()),
            protocol: Some("grpc".into()),
            headers: vec!["x-a=3".into()],
            timeout: Some(Duration::from_secs(1)),
            ..args()
        };
        let c = resolve(flags, &vars).unwrap().unwrap();
        assert_eq!(
            (c.url.as_str(), c.protocol, c.tls),
            ("https://flag:4317", Protocol::Grpc, true)
        );
        assert!(c.headers.contains(&("x-a".into(), "3".into())));
        assert_eq!(c.timeout, Duration::from_secs(1));
        // The signal-specific endpoint is used as it is.
        let c = resolve(
            args(),
            &[
                (
                    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                    "http://m:4318/custom",
                ),
                ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.url, "http://m:4318/custom");
    }

    #[test]
    fn compression_is_none_unless_asked_and_the_flag_wins() {
        let e = |c: Option<&str>| OtlpArgs {
            endpoint: Some("http://c:4317".into()),
            compression: c.map(String::from),
            ..args()
        };
        let c = resolve(e(None), &[]).unwrap().unwrap();
        assert_eq!(c.compression, Compression::None);
        let general = [("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")];
        let c = resolve(e(None), &general).unwrap().unwrap();
        assert_eq!(c.compression, Compression::Gzip);
        // The signal-specific variable first, the flag over both.
        let both = [
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "none"),
            ("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "gzip"),
        ];
        let c = resolve(e(None), &both).unwrap().unwrap();
        assert_eq!(c.compression, Compression::Gzip);
        let c = resolve(e(Some("none")), &both).unwrap().unwrap();
        assert_eq!(c.compression, Compression::None);
        let c = resolve(e(Some("gzip")), &[]).unwrap().unwrap();
        assert_eq!(c.compression, Compression::Gzip);
        match resolve(e(Some("br")), &[]) {
            Err(OtlpConfigError::Compression(u)) => assert_eq!(u.from, "--otlp-compression"),
            other => panic!("{other:?}"),
        }
        let bad = [("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "deflate")];
        match resolve(e(None), &bad) {
            Err(OtlpConfigError::Compression(u)) => {
                assert_eq!(u.from, "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION");
                assert!(u.to_string().contains("deflate"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bare_address_is_tls_unless_insecure() {
        let e = |insecure| OtlpArgs {
            endpoint: Some("collector:4317".into()),
            insecure,
            ..args()
        };
        let c = resolve(e(false), &[]).unwrap().unwrap();
        assert_eq!((c.url.as_str(), c.tls), ("https://collector:4317", true));
        let c = resolve(e(true), &[]).unwrap().unwrap();
        assert_eq!((c.url.as_str(), c.tls), ("http://collector:4317", false));
    }

    #[test]
    fn bad_settings_are_typed_errors() {
        let with = |f: fn(&mut OtlpArgs)| {
            let mut a = OtlpArgs {
                endpoint: Some("http://c:4317".into()),
                ..args()
            };
            f(&mut a);
            resolve(a, &[])
        };
        assert!(matches!(
            with(|a| a.protocol = Some("http/json".into())),
            Err(OtlpConfigError::Protocol(_))
        ));
        assert!(matches!(
            with(|a| a.endpoint = Some("ftp://c".into())),
            Err(OtlpConfigError::Endpoint { .. })
        ));
        assert!(matches!(
            with(|a| a.headers = vec!["novalue".into()]),
            Err(OtlpConfigError::Header(_))
        ));
        assert!(matches!(
            with(|a| a.headers = vec!["bad name=1".into()]),
            Err(OtlpConfigError::Header(_))
        ));
        assert!(matches!(
            with(|a| a.client_cert = Some("/x".into())),
            Err(OtlpConfigError::ClientPair)
        ));
        assert!(matches!(
            with(|a| a.ca_file = Some("/nonexistent/ca.pem".into())),
            Err(OtlpConfigError::File { .. })
        ));
        let bad_ms = resolve(
            args(),
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "10s"),
            ],
        );
        assert!(matches!(bad_ms, Err(OtlpConfigError::Millis { .. })));
    }
}
