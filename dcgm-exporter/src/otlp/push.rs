//! Pushing collections over OTLP, on a thread and tokio runtime of its own, so that a
//! collector that is down, slow or refusing never delays a collection or a scrape.
//!
//! The collector threads hand each collection over ([`OtlpExporter::offer`]: a swap, no
//! copy); every `--otlp-interval` (or after each collection) the latest ones become one
//! request in a bounded queue (when it is full the oldest request is dropped, and counted).
//! The queue is bounded in requests (`--otlp-queue-size`) and in bytes (`--otlp-queue-bytes`,
//! 64 MiB by default: at 1,024 entities a request is about 10 MB), the oldest dropped first.
//! The sender takes the oldest request, sends it within `--otlp-timeout`, and on a failure
//! worth retrying (no connection, a timeout, gRPC `UNAVAILABLE` and the other codes the OTLP
//! specification names, an HTTP/2 or transport error, HTTP 429, 502, 503, 504) tries again
//! after an exponential back-off (0.2 s doubling to 30 s); a request the collector refuses for
//! good (HTTP 400, gRPC `INVALID_ARGUMENT`) is dropped and counted.
//!
//! A gRPC connection is checked with HTTP/2 keep-alive pings ([`KEEPALIVE_INTERVAL`], answered
//! within [`KEEPALIVE_TIMEOUT`], also while idle), and after a send that timed out or failed in
//! the transport (an HTTP/2 protocol error, a reset) the next attempt goes on a fresh
//! connection: a collector that accepted the connection and hung would otherwise keep every
//! later request, while a healthy one at the same address got nothing.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use dcgm_prometheus::Exposition;
use http_body_util::{BodyExt, Full};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceResponse;
use prost::Message as _;
use tokio::sync::Notify;

use crate::otlp::config::{OtlpConfig, Protocol};
use crate::otlp::convert::Converter;

/// The first wait before a retry.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait between retries.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// How often an HTTP/2 keep-alive ping checks a gRPC connection (idle or not).
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);

/// How long a keep-alive ping may wait for its answer before the connection is closed.
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the pusher has done, exported on `/metrics` as `dcgm_exporter_otlp_*`.
#[derive(Debug, Default)]
pub struct Stats {
    /// Requests the collector accepted.
    pub exported: AtomicU64,
    /// Attempts that failed and were retried.
    pub retried: AtomicU64,
    /// Requests dropped because the queue was full.
    pub dropped: AtomicU64,
    /// Requests the collector refused for good.
    pub rejected: AtomicU64,
    /// Fresh connections made after a send that timed out or failed in the transport.
    pub reconnects: AtomicU64,
    /// Requests waiting now.
    pub queued: AtomicU64,
    /// Bytes of the requests waiting now.
    pub queued_bytes: AtomicU64,
}

/// One host engine's latest collection.
#[derive(Default)]
struct Slot {
    exposition: Exposition,
    at: Option<SystemTime>,
    fresh: bool,
}

struct Shared {
    slots: Mutex<Vec<Slot>>,
    /// When the next push takes the slots (`None`: after each collection).
    next_push: Mutex<Option<Instant>>,
    collected: Notify,
    queue: Mutex<VecDeque<(u64, Bytes)>>,
    queued: Notify,
    stats: Stats,
}

/// The OTLP pusher; see the [module docs](self).
#[derive(Clone)]
pub struct OtlpExporter {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for OtlpExporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpExporter").finish_non_exhaustive()
    }
}

/// Why a send failed.
#[derive(Debug)]
pub(crate) struct SendError {
    /// Whether the OTLP specification says to retry it.
    pub(crate) retry: bool,
    /// Whether the connection is suspect (a timeout, a transport or HTTP/2 error): the next
    /// attempt goes on a fresh one.
    pub(crate) reconnect: bool,
    /// What happened.
    pub(crate) message: String,
}

impl SendError {
    fn refused(message: String) -> Self {
        Self {
            retry: false,
            reconnect: false,
            message,
        }
    }

    fn retry(message: String) -> Self {
        Self {
            retry: true,
            reconnect: false,
            message,
        }
    }

    fn transport(message: String) -> Self {
        Self {
            retry: true,
            reconnect: true,
            message,
        }
    }
}

/// How a failed gRPC call is treated: `(retry, reconnect)`. A status that came from the
/// transport (an HTTP/2 error such as `PROTOCOL_ERROR`, which tonic reports as `INTERNAL`, a
/// reset or refused stream, a broken connection: it has an error source) is retried on a fresh
/// connection; a status the collector sent is retried when the OTLP specification says so.
pub fn grpc_disposition(status: &tonic::Status) -> (bool, bool) {
    use tonic::Code::*;
    if std::error::Error::source(status).is_some() {
        return (true, true);
    }
    let retry = matches!(
        status.code(),
        Unavailable
            | Cancelled
            | DeadlineExceeded
            | ResourceExhausted
            | Aborted
            | OutOfRange
            | DataLoss
            | Unknown
    );
    (retry, retry && status.code() == Unavailable)
}

/// The gRPC codec of the export call: the request goes as the bytes [`Converter`] encoded
/// (tonic's prost codec would need the message structs), the answer is decoded with prost.
/// It knows the request's size, so that tonic's buffer is made that large at once rather
/// than grown 8 KiB at a time (each growth a copy of what it holds so far).
#[derive(Debug, Clone, Copy, Default)]
struct RawCodec {
    size: usize,
}

struct RawEncoder {
    size: usize,
}

struct AnswerDecoder;

impl tonic::codec::Encoder for RawEncoder {
    type Item = Bytes;
    type Error = tonic::Status;
    fn encode(
        &mut self,
        item: Bytes,
        dst: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), Self::Error> {
        use bytes::BufMut as _;
        dst.put(item);
        Ok(())
    }

    fn buffer_settings(&self) -> tonic::codec::BufferSettings {
        // The request and gRPC's 5-byte message header; tonic's default yield threshold.
        tonic::codec::BufferSettings::new(self.size + 5, 32 * 1024)
    }
}

impl tonic::codec::Decoder for AnswerDecoder {
    type Item = ExportMetricsServiceResponse;
    type Error = tonic::Status;
    fn decode(
        &mut self,
        src: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<Self::Item>, Self::Error> {
        ExportMetricsServiceResponse::decode(src)
            .map(Some)
            .map_err(|e| tonic::Status::internal(format!("the collector's answer: {e}")))
    }
}

impl tonic::codec::Codec for RawCodec {
    type Encode = Bytes;
    type Decode = ExportMetricsServiceResponse;
    type Encoder = RawEncoder;
    type Decoder = AnswerDecoder;
    fn encoder(&mut self) -> Self::Encoder {
        RawEncoder { size: self.size }
    }
    fn decoder(&mut self) -> Self::Decoder {
        AnswerDecoder
    }
}

/// The connection to the collector.
pub(crate) enum Transport {
    Grpc {
        client: tonic::client::Grpc<tonic::transport::Channel>,
        headers: tonic::metadata::MetadataMap,
        /// For a fresh connection ([`Transport::reconnect`]).
        endpoint: Box<tonic::transport::Endpoint>,
        compression: Option<tonic::codec::CompressionEncoding>,
    },
    Http {
        client: hyper_util::client::legacy::Client<
            hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
            Full<Bytes>,
        >,
        url: hyper::Uri,
        headers: Vec<(hyper::header::HeaderName, hyper::header::HeaderValue)>,
        compression: crate::otlp::compression::Compression,
    },
}

/// The rustls client configuration of OTLP/HTTP: the given roots or the system's, and the
/// client certificate if any.
fn http_tls(cfg: &OtlpConfig) -> Result<rustls::ClientConfig, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = rustls::RootCertStore::empty();
    match &cfg.ca_pem {
        Some(pem) => {
            for c in CertificateDer::pem_slice_iter(pem) {
                let c = c.map_err(|e| format!("the OTLP CA file: {e}"))?;
                roots.add(c).map_err(|e| format!("the OTLP CA file: {e}"))?;
            }
        }
        // Plaintext: no roots are needed.
        None if !cfg.tls => {}
        None => {
            let found = rustls_native_certs::load_native_certs();
            for c in found.certs {
                let _ = roots.add(c);
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots);
    Ok(match &cfg.client_identity {
        Some((cert, key)) => {
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<_, _>>()
                .map_err(|e| format!("the OTLP client certificate: {e}"))?;
            let key = PrivateKeyDer::from_pem_slice(key)
                .map_err(|e| format!("the OTLP client key: {e}"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("the OTLP client certificate and key: {e}"))?
        }
        None => builder.with_no_client_auth(),
    })
}

impl Transport {
    /// Needs a tokio runtime (the channel's background task).
    pub(crate) fn new(cfg: &OtlpConfig) -> Result<Self, String> {
        match cfg.protocol {
            Protocol::Grpc => {
                let mut ep = tonic::transport::Endpoint::from_shared(cfg.url.clone())
                    .map_err(|e| format!("OTLP endpoint {}: {e}", cfg.url))?
                    .timeout(cfg.timeout)
                    .connect_timeout(cfg.timeout)
                    .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
                    .keep_alive_timeout(KEEPALIVE_TIMEOUT)
                    .keep_alive_while_idle(true);
                if cfg.tls {
                    let mut tls = tonic::transport::ClientTlsConfig::new();
                    tls = match &cfg.ca_pem {
                        Some(pem) => {
                            tls.ca_certificate(tonic::transport::Certificate::from_pem(pem))
                        }
                        None => tls.with_native_roots(),
                    };
                    if let Some((cert, key)) = &cfg.client_identity {
                        tls = tls.identity(tonic::transport::Identity::from_pem(cert, key));
                    }
                    ep = ep
                        .tls_config(tls)
                        .map_err(|e| format!("OTLP TLS settings: {e}"))?;
                }
                let mut headers = tonic::metadata::MetadataMap::new();
                for (k, v) in &cfg.headers {
                    let key = tonic::metadata::AsciiMetadataKey::from_bytes(k.as_bytes())
                        .map_err(|e| format!("OTLP header {k}: {e}"))?;
                    let value = v.parse().map_err(|e| format!("OTLP header {k}: {e}"))?;
                    headers.insert(key, value);
                }
                let compression = cfg.compression.grpc_encoding();
                Ok(Self::Grpc {
                    client: grpc_client(&ep, compression),
                    headers,
                    endpoint: Box::new(ep),
                    compression,
                })
            }
            Protocol::HttpProtobuf => {
                let tls = http_tls(cfg)?;
                let connector = hyper_rustls::HttpsConnectorBuilder::new()
                    .with_tls_config(tls)
                    .https_or_http()
                    .enable_http1()
                    .build();
                let client = hyper_util::client::legacy::Client::builder(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .pool_idle_timeout(Duration::from_secs(30))
                .build(connector);
                let url = cfg
                    .url
                    .parse()
                    .map_err(|e| format!("OTLP endpoint {}: {e}", cfg.url))?;
                let mut headers = Vec::new();
                for (k, v) in &cfg.headers {
                    headers.push((
                        hyper::header::HeaderName::from_bytes(k.as_bytes())
                            .map_err(|e| format!("OTLP header {k}: {e}"))?,
                        hyper::header::HeaderValue::from_str(v)
                            .map_err(|e| format!("OTLP header {k}: {e}"))?,
                    ));
                }
                Ok(Self::Http {
                    client,
                    url,
                    headers,
                    compression: cfg.compression,
                })
            }
        }
    }

    /// A fresh connection for the next send (gRPC; OTLP/HTTP drops a connection whose request
    /// failed by itself). Needs the runtime.
    pub(crate) fn reconnect(&mut self) {
        if let Self::Grpc {
            client,
            endpoint,
            compression,
            ..
        } = self
        {
            *client = grpc_client(endpoint, *compression);
        }
    }

    /// Sends `req` within `timeout`; after a failure that leaves the connection suspect, the
    /// next send goes on a fresh one.
    pub(crate) async fn send(&mut self, req: &Bytes, timeout: Duration) -> Result<(), SendError> {
        let result = self.send_once(req, timeout).await;
        if result.as_ref().is_err_and(|e| e.reconnect) {
            self.reconnect();
        }
        result
    }

    async fn send_once(&self, req: &Bytes, timeout: Duration) -> Result<(), SendError> {
        match self {
            Self::Grpc {
                client, headers, ..
            } => {
                let size = req.len();
                let mut r = tonic::Request::new(req.clone());
                *r.metadata_mut() = headers.clone();
                r.set_timeout(timeout);
                let mut client = client.clone();
                let call = async move {
                    client
                        .ready()
                        .await
                        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
                    let path = hyper::http::uri::PathAndQuery::from_static(
                        "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
                    );
                    client.unary(r, path, RawCodec { size }).await
                };
                match tokio::time::timeout(timeout, call).await {
                    Err(_) => Err(SendError::transport(format!(
                        "no answer within {timeout:?}"
                    ))),
                    Ok(Ok(resp)) => {
                        if let Some(p) = resp.into_inner().partial_success
                            && p.rejected_data_points > 0
                        {
                            log::warn!(
                                "OTLP: the collector rejected {} data points: {}",
                                p.rejected_data_points,
                                p.error_message
                            );
                        }
                        Ok(())
                    }
                    Ok(Err(status)) => {
                        let (retry, reconnect) = grpc_disposition(&status);
                        let source = std::error::Error::source(&status)
                            .map_or(String::new(), |e| format!(" ({e})"));
                        Err(SendError {
                            retry,
                            reconnect,
                            message: format!(
                                "gRPC {:?}: {}{source}",
                                status.code(),
                                status.message()
                            ),
                        })
                    }
                }
            }
            Self::Http {
                client,
                url,
                headers,
                compression,
            } => {
                let body = compression
                    .http_body(req)
                    .map_err(|e| SendError::refused(format!("cannot compress the request: {e}")))?;
                let mut b = hyper::Request::post(url.clone())
                    .header(hyper::header::CONTENT_TYPE, "application/x-protobuf");
                if let Some(encoding) = compression.content_encoding() {
                    b = b.header(hyper::header::CONTENT_ENCODING, encoding);
                }
                for (k, v) in headers {
                    b = b.header(k, v);
                }
                let r = b
                    .body(Full::new(body))
                    .map_err(|e| SendError::refused(e.to_string()))?;
                let call = async {
                    let resp = client
                        .request(r)
                        .await
                        .map_err(|e| SendError::transport(format!("{e}")))?;
                    let status = resp.status();
                    // The body (a status or partial success) is read so that the connection
                    // can be used again; at most 64 KiB of it is kept for the log.
                    let body = http_body_util::Limited::new(resp.into_body(), 64 * 1024)
                        .collect()
                        .await
                        .map(|b| b.to_bytes())
                        .unwrap_or_default();
                    if status.is_success() {
                        return Ok(());
                    }
                    let message = format!(
                        "HTTP {status}: {}",
                        String::from_utf8_lossy(&body[..body.len().min(200)])
                    );
                    if matches!(status.as_u16(), 429 | 502 | 503 | 504) {
                        Err(SendError::retry(message))
                    } else {
                        Err(SendError::refused(message))
                    }
                };
                match tokio::time::timeout(timeout, call).await {
                    Ok(r) => r,
                    Err(_) => Err(SendError::transport(format!(
                        "no answer within {timeout:?}"
                    ))),
                }
            }
        }
    }
}

/// A gRPC client on a fresh (lazily connected) channel of `endpoint`.
fn grpc_client(
    endpoint: &tonic::transport::Endpoint,
    compression: Option<tonic::codec::CompressionEncoding>,
) -> tonic::client::Grpc<tonic::transport::Channel> {
    let mut client = tonic::client::Grpc::new(endpoint.connect_lazy());
    if let Some(encoding) = compression {
        client = client.send_compressed(encoding).accept_compressed(encoding);
    }
    client
}

impl OtlpExporter {
    /// Starts the pusher thread for `engines` host engines (at least one), pushing every
    /// `cfg.interval` or, without one, after each collection; `host_name` names the host of
    /// series without a host-name label.
    ///
    /// # Errors
    ///
    /// The TLS settings or endpoint cannot be used, or the thread cannot start.
    pub fn start(cfg: OtlpConfig, engines: usize, host_name: String) -> Result<Self, String> {
        let shared = Arc::new(Shared {
            slots: Mutex::new((0..engines.max(1)).map(|_| Slot::default()).collect()),
            next_push: Mutex::new(None),
            collected: Notify::new(),
            queue: Mutex::new(VecDeque::new()),
            queued: Notify::new(),
            stats: Stats::default(),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the OTLP runtime: {e}"))?;
        let transport = {
            let _guard = runtime.enter();
            Transport::new(&cfg)?
        };
        let s = shared.clone();
        std::thread::Builder::new()
            .name("otlp".into())
            .spawn(move || runtime.block_on(run(s, cfg, transport, host_name)))
            .map_err(|e| format!("cannot start the OTLP thread: {e}"))?;
        Ok(Self { shared })
    }

    /// Whether a collection of host engine `engine` that takes `within` from now is pushed:
    /// with `--otlp-interval` longer than the collection interval, only the last collection
    /// before each push is (the others would be replaced unsent), so the others need not
    /// build the structured form at all.
    pub fn wants(&self, engine: usize, within: Duration) -> bool {
        let next = *self
            .shared
            .next_push
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let Some(next) = next else {
            return true;
        };
        let fresh = self
            .shared
            .slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(engine)
            .is_some_and(|s| s.fresh);
        // Due before the collection after this one, or nothing waits for the push yet.
        !fresh || Instant::now() + within >= next
    }

    /// Hands over host engine `engine`'s collection (swapped with the previous one, which
    /// `exposition` then holds, for its buffers).
    pub fn offer(&self, engine: usize, exposition: &mut Exposition) {
        {
            let mut slots = self.shared.slots.lock().unwrap_or_else(|p| p.into_inner());
            let Some(slot) = slots.get_mut(engine) else {
                return;
            };
            std::mem::swap(&mut slot.exposition, exposition);
            slot.at = Some(SystemTime::now());
            slot.fresh = true;
        }
        self.shared.collected.notify_one();
    }

    /// The counters.
    pub fn stats(&self) -> &Stats {
        &self.shared.stats
    }

    /// Appends the counters in the Prometheus text format.
    pub fn write_stats(&self, out: &mut String) {
        use std::fmt::Write as _;
        let s = &self.shared.stats;
        for (name, help, v) in [
            (
                "dcgm_exporter_otlp_exported_total",
                "OTLP requests the collector accepted.",
                &s.exported,
            ),
            (
                "dcgm_exporter_otlp_retries_total",
                "OTLP sends that failed and were retried.",
                &s.retried,
            ),
            (
                "dcgm_exporter_otlp_dropped_total",
                "OTLP requests dropped because the queue was full.",
                &s.dropped,
            ),
            (
                "dcgm_exporter_otlp_rejected_total",
                "OTLP requests the collector refused for good.",
                &s.rejected,
            ),
            (
                "dcgm_exporter_otlp_reconnects_total",
                "Fresh OTLP/gRPC connections made after a send that timed out or failed in the \
                 transport (an HTTP/2 error).",
                &s.reconnects,
            ),
        ] {
            let _ = write!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}\n",
                v.load(Ordering::Relaxed)
            );
        }
        for (name, help, v) in [
            (
                "dcgm_exporter_otlp_queue_requests",
                "OTLP requests waiting to be sent (--otlp-queue-size bounds them).",
                &s.queued,
            ),
            (
                "dcgm_exporter_otlp_queue_bytes",
                "Bytes of the OTLP requests waiting to be sent (--otlp-queue-bytes bounds them).",
                &s.queued_bytes,
            ),
        ] {
            let _ = write!(
                out,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {}\n",
                v.load(Ordering::Relaxed)
            );
        }
    }
}

/// Drops the oldest requests while the queue holds more than `max_requests` or more than
/// `max_bytes` (the newest request always stays, however large); returns how many went.
fn trim(q: &mut VecDeque<(u64, Bytes)>, max_requests: usize, max_bytes: u64) -> u64 {
    let mut bytes: u64 = q.iter().map(|(_, r)| r.len() as u64).sum();
    let mut dropped = 0;
    while q.len() > 1 && (q.len() > max_requests || bytes > max_bytes) {
        if let Some((_, r)) = q.pop_front() {
            bytes -= r.len() as u64;
            dropped += 1;
        }
    }
    dropped
}

impl Shared {
    /// The queue's size, for the gauges.
    fn note_queue(&self, q: &VecDeque<(u64, Bytes)>) {
        self.stats.queued.store(q.len() as u64, Ordering::Relaxed);
        self.stats.queued_bytes.store(
            q.iter().map(|(_, r)| r.len() as u64).sum(),
            Ordering::Relaxed,
        );
    }
}

/// The pusher: a producer of requests (the interval, or each collection) and the sender.
async fn run(shared: Arc<Shared>, cfg: OtlpConfig, mut transport: Transport, host_name: String) {
    let producer = {
        let shared = shared.clone();
        let cfg = cfg.clone();
        async move {
            let mut converter = Converter::new(cfg.resource.clone(), host_name);
            let mut next_id = 0u64;
            let mut ticker = cfg.interval.map(|i| {
                let mut t = tokio::time::interval(i);
                t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                t
            });
            loop {
                match &mut ticker {
                    Some(t) => {
                        let now = t.tick().await;
                        *shared.next_push.lock().unwrap_or_else(|p| p.into_inner()) =
                            Some((now + t.period()).into_std());
                    }
                    None => shared.collected.notified().await,
                }
                let request = {
                    let mut slots = shared.slots.lock().unwrap_or_else(|p| p.into_inner());
                    let fresh: Vec<&Slot> = slots.iter().filter(|s| s.fresh).collect();
                    if fresh.is_empty() {
                        continue;
                    }
                    let at = fresh
                        .iter()
                        .filter_map(|s| s.at)
                        .max()
                        .unwrap_or_else(SystemTime::now);
                    let exps: Vec<&Exposition> = fresh.iter().map(|s| &s.exposition).collect();
                    let r = converter.request_bytes(&exps, at);
                    for s in slots.iter_mut() {
                        s.fresh = false;
                    }
                    r
                };
                {
                    let mut q = shared.queue.lock().unwrap_or_else(|p| p.into_inner());
                    q.push_back((next_id, request));
                    next_id += 1;
                    let dropped = trim(&mut q, cfg.queue_size, cfg.queue_bytes);
                    shared.stats.dropped.fetch_add(dropped, Ordering::Relaxed);
                    shared.note_queue(&q);
                }
                shared.queued.notify_one();
            }
        }
    };
    let sender = async move {
        let mut backoff = FIRST_BACKOFF;
        let mut failing_since: Option<Instant> = None;
        loop {
            let front = shared
                .queue
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .front()
                .cloned();
            let Some((id, request)) = front else {
                shared.queued.notified().await;
                continue;
            };
            let result = transport.send(&request, cfg.timeout).await;
            let done = match &result {
                Ok(()) => {
                    shared.stats.exported.fetch_add(1, Ordering::Relaxed);
                    if let Some(since) = failing_since.take() {
                        log::info!(
                            "OTLP: pushing to {} works again (after {:.1} s)",
                            cfg.url,
                            since.elapsed().as_secs_f64()
                        );
                    }
                    backoff = FIRST_BACKOFF;
                    true
                }
                Err(e) if e.retry => {
                    shared.stats.retried.fetch_add(1, Ordering::Relaxed);
                    if e.reconnect && matches!(transport, Transport::Grpc { .. }) {
                        shared.stats.reconnects.fetch_add(1, Ordering::Relaxed);
                    }
                    if failing_since.is_none() {
                        failing_since = Some(Instant::now());
                        log::warn!(
                            "OTLP: pushing to {} failed: {}; retrying with back-off (logged again when it works)",
                            cfg.url,
                            e.message
                        );
                    }
                    false
                }
                Err(e) => {
                    shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
                    log::warn!(
                        "OTLP: {} refused a request, dropped: {}",
                        cfg.url,
                        e.message
                    );
                    true
                }
            };
            if done {
                let mut q = shared.queue.lock().unwrap_or_else(|p| p.into_inner());
                if q.front().is_some_and(|(i, _)| *i == id) {
                    q.pop_front();
                }
                shared.note_queue(&q);
            } else {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    };
    tokio::join!(producer, sender);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_drops_the_oldest_past_its_requests_or_bytes_and_keeps_the_newest() {
        let req = |id: u64, n: usize| (id, Bytes::from(vec![0u8; n]));
        let mut q: VecDeque<(u64, Bytes)> = (0..5).map(|i| req(i, 100)).collect();
        assert_eq!(trim(&mut q, 3, u64::MAX), 2);
        assert_eq!(q.front().unwrap().0, 2);
        assert_eq!(trim(&mut q, 10, 250), 1);
        assert_eq!(q.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [3, 4]);
        // One request over the byte bound still goes.
        let mut q: VecDeque<(u64, Bytes)> = [req(0, 10), req(1, 1000)].into();
        assert_eq!(trim(&mut q, 10, 100), 1);
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn transport_errors_are_retried_on_a_fresh_connection_and_refusals_are_not() {
        // What tonic makes of an HTTP/2 or I/O error: a status with the error as its source.
        let broken = tonic::Status::from_error(Box::new(std::io::Error::other("stream reset")));
        assert_eq!(grpc_disposition(&broken), (true, true));
        assert_eq!(
            grpc_disposition(&tonic::Status::unavailable("not now")),
            (true, true)
        );
        assert_eq!(
            grpc_disposition(&tonic::Status::resource_exhausted("slow down")),
            (true, false)
        );
        assert_eq!(
            grpc_disposition(&tonic::Status::invalid_argument("never")),
            (false, false)
        );
        // INTERNAL sent by the collector itself is its answer, not a broken connection.
        assert_eq!(
            grpc_disposition(&tonic::Status::internal("bug")),
            (false, false)
        );
    }
}
