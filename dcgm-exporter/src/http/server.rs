//! The exporter's HTTP(S) server: `/metrics`, `/health` and a landing page, with the
//! Prometheus exporter-toolkit web configuration ([`WebConfig`]: TLS, client certificates,
//! basic auth with bcrypt hashes, security headers), and gzip for scrapers that accept it.
//!
//! Why this stack: request parsing and connection handling are where a hand-written HTTP/1.1
//! server goes wrong (duplicate or signed `Content-Length`, whitespace before a header colon,
//! slow-loris clients). hyper 1 is the maintained HTTP implementation most of the Rust
//! ecosystem serves through (axum, tonic, reqwest). We use it directly, not through axum,
//! because three fixed routes need no router. tokio-rustls keeps the rustls 0.23 + ring
//! configuration; flate2 is the maintained gzip encoder. Collection stays on its own blocking
//! thread (`main.rs`): the async workers only hand out the last published exposition, and
//! bcrypt runs on a thread of its own (`basic_auth.rs`).
//!
//! What a hostile or broken client can take, and for how long ([`Limits`]):
//! - a connection slot, out of [`Limits::max_connections`], and at most
//!   [`Limits::max_per_client`] of them per client address (past that, closed at once); and
//!   only while it uses it ([`conn_slots`]): when every slot is taken, the connection that has
//!   waited longest without a complete request is closed for a new one, and while more than
//!   3/4 of the slots are taken, a connection waiting [`Limits::pressure_timeout`] (1 s) is
//!   closed. A full server is logged (once a minute) and counted in `/metrics`
//!   (`dcgm_exporter_http_server_full_total`, `dcgm_exporter_http_connections_evicted_total`,
//!   `dcgm_exporter_http_connections_refused_total`);
//! - each phase of a connection has a deadline (`deadline_io`): idle between
//!   requests, the whole request (head and body together), the writing of each response;
//! - a request body: refused with 413 as soon as a `Content-Length` above 64 KiB is seen, and
//!   never read before the credentials are checked;
//! - a bcrypt verification: one at a time, `basic_auth::QUEUE` waiting, 503 past that.

use std::convert::Infallible;
use std::io::{self, Write as _};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::{Body as _, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};

use crate::http::basic_auth::{Check, Verdict};
use crate::http::client_slots::{ClientSlot, ClientSlots};
use crate::http::deadline_io::{DeadlineIo, Deadlines};
use crate::http::throttled_log::ThrottledLog;
pub use crate::http::web_config::WebConfig;

pub mod conn_slots;
use conn_slots::{Admission, ConnSlots, SlotHandle, Stats, Tracked};

/// Connections served at once. Past it, a new connection takes the slot of the one that has
/// waited longest without a complete request ([`conn_slots`]); when every one is being served, up
/// to [`Limits::max_overload`] more are answered 503.
pub const MAX_CONNECTIONS: usize = 512;
/// How long a connection may wait without a complete request (idle, or sending its request
/// head or body) while more than 3/4 of the connection slots are taken.
pub const PRESSURE_TIMEOUT: Duration = Duration::from_secs(1);
/// Connections one client address may hold at once, unless configured otherwise.
pub const MAX_PER_CLIENT: usize = 64;
const MAX_HEAD: usize = 16 * 1024;
/// The largest request body read (and dropped); a larger one is answered 413.
pub const MAX_BODY: u64 = 64 * 1024;

/// How many connections the server takes, from whom, and how long each may take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connection slots. When every one is taken, a new connection takes the slot of the one
    /// that has waited longest without a complete request, which is closed.
    pub max_connections: usize,
    /// Connections past `max_connections`, when each of those is being served, that still get a
    /// 503 response; past both, new connections are closed at once.
    pub max_overload: usize,
    /// Connections one client address may hold at once; past it, its new connections are
    /// closed at once (and logged, at most once a minute).
    pub max_per_client: usize,
    /// The whole request, head and body (and the TLS handshake), must arrive within this time
    /// of its first byte, however the client trickles it.
    pub request_timeout: Duration,
    /// A keep-alive connection with no request for this long is closed.
    pub idle_timeout: Duration,
    /// Each response must be written within this time, however slowly the client reads.
    pub write_timeout: Duration,
    /// While more than 3/4 of `max_connections` are taken, a connection that has sent no
    /// complete request for this long (since it was accepted or since its last response) is
    /// closed: the idle and request-head deadlines shorten to this (checked every 100 ms).
    pub pressure_timeout: Duration,
    /// `/metrics` responses served at once, from the request to the response's last byte
    /// handed to the connection; past it a scrape is answered 503 at once (0: no limit).
    pub max_concurrent_scrapes: usize,
    /// Add the exporter's own metrics (`self_metrics`) to `/metrics`.
    pub exporter_metrics: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: MAX_CONNECTIONS,
            max_overload: 64,
            max_per_client: MAX_PER_CLIENT,
            request_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            pressure_timeout: PRESSURE_TIMEOUT,
            max_concurrent_scrapes: 0,
            exporter_metrics: false,
        }
    }
}

impl Limits {
    fn deadlines(&self) -> Deadlines {
        Deadlines {
            idle: self.idle_timeout,
            request: self.request_timeout,
            write: self.write_timeout,
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
    let stats = Arc::new(Stats::default());
    let state = Arc::new(State {
        web,
        published,
        cache: Mutex::new(Cache::default()),
        stats: stats.clone(),
        scrapes: Arc::default(),
        max_scrapes: limits.max_concurrent_scrapes,
        exporter_metrics: limits.exporter_metrics,
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
    // Slots and permits travel with the connection: whether its task runs to its end, fails, is
    // dropped before it ever runs, or never reaches a worker, dropping them gives them back.
    let slots = ConnSlots::new(limits.max_connections, limits.pressure_timeout);
    conn_slots::spawn_reaper(Arc::downgrade(&slots), stats.clone())?;
    let overload = Arc::new(tokio::sync::Semaphore::new(limits.max_overload));
    let per_client = ClientSlots::new(limits.max_per_client);
    static ACCEPT_FAILED: ThrottledLog = ThrottledLog::new(Duration::from_secs(60));
    static CLIENT_FULL: ThrottledLog = ThrottledLog::new(Duration::from_secs(60));
    static SERVER_FULL: ThrottledLog = ThrottledLog::new(Duration::from_secs(60));
    static SERVER_BUSY: ThrottledLog = ThrottledLog::new(Duration::from_secs(60));
    let mut next = 0usize;
    let mut backoff = Duration::from_millis(10);
    loop {
        let (stream, peer) = match listener.accept() {
            Ok(s) => {
                backoff = Duration::from_millis(10);
                s
            }
            Err(e) => {
                // Out of file descriptors, mostly: wait for some to be given back, longer
                // each time (up to 1 s), and say so once a minute.
                ACCEPT_FAILED.warn(|| format!("accept failed: {e}"));
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        let Some(client) = per_client.take(peer.ip()) else {
            stats.per_client.fetch_add(1, Ordering::Relaxed);
            CLIENT_FULL.warn(|| {
                format!(
                    "connection from {} refused: that address holds {} connections already",
                    peer.ip(),
                    limits.max_per_client
                )
            });
            continue;
        };
        let (slot, permit) = match slots.admit(peer, Instant::now()) {
            Admission::Free(slot) => (Some(slot), None),
            Admission::Evicted(slot, gone) => {
                stats.full.fetch_add(1, Ordering::Relaxed);
                stats.evicted.fetch_add(1, Ordering::Relaxed);
                SERVER_FULL.warn(|| {
                    format!(
                        "HTTP server full ({} connections): closed the connection from {} that \
                         had sent no complete request for {:.1?}, to serve one from {} \
                         (dcgm_exporter_http_connections_evicted_total{{reason=\"server_full\"}})",
                        limits.max_connections,
                        gone.peer,
                        gone.waited,
                        peer.ip()
                    )
                });
                (Some(slot), None)
            }
            Admission::Full => {
                stats.full.fetch_add(1, Ordering::Relaxed);
                let permit = overload.clone().try_acquire_owned().ok();
                let counter = match permit {
                    Some(_) => &stats.overload_503,
                    None => &stats.overload_closed,
                };
                counter.fetch_add(1, Ordering::Relaxed);
                SERVER_BUSY.warn(|| {
                    format!(
                        "HTTP server full ({} connections, every one being served): the \
                         connection from {} {} (dcgm_exporter_http_connections_refused_total)",
                        limits.max_connections,
                        peer.ip(),
                        if permit.is_some() {
                            "is answered 503"
                        } else {
                            "is closed unanswered"
                        }
                    )
                });
                match permit {
                    Some(p) => (None, Some(p)),
                    None => continue, // past both limits: closed unanswered
                }
            }
        };
        let accepted = Accepted {
            stream,
            peer,
            slot,
            _overload: permit,
            _client: client,
        };
        if queues[next % workers].send(accepted).is_err() {
            return Err(io::Error::other("an HTTP worker thread stopped"));
        }
        next = next.wrapping_add(1);
    }
}

/// An accepted connection on its way to a worker, with the slots it holds: a connection slot,
/// or (when every slot is being served) an overload permit, and it is answered 503.
struct Accepted {
    stream: std::net::TcpStream,
    peer: SocketAddr,
    slot: Option<conn_slots::ConnSlot>,
    _overload: Option<tokio::sync::OwnedSemaphorePermit>,
    _client: ClientSlot,
}

struct State {
    web: Arc<WebConfig>,
    published: Arc<Mutex<Published>>,
    cache: Mutex<Cache>,
    stats: Arc<Stats>,
    /// The `/metrics` handler's counts (in flight, by status).
    scrapes: Arc<crate::http::self_metrics::HandlerStats>,
    /// `--max-concurrent-scrapes` (0: none).
    max_scrapes: usize,
    /// `--enable-exporter-metrics`.
    exporter_metrics: bool,
}

/// How stale the server's counters at the end of `/metrics` may be: the cached exposition is
/// rebuilt (copied, and gzipped on demand) for a new collection, or when the counters changed
/// and it is older than this.
const STATS_REFRESH: Duration = Duration::from_secs(1);

/// The last exposition with the server's counters as shared bytes, and gzipped once on first
/// demand.
#[derive(Default)]
struct Cache {
    version: Option<u64>,
    stats: Option<conn_slots::Snapshot>,
    built: Option<Instant>,
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
    // The deadlines are DeadlineIo's: hyper's own head timer would also count the idle time
    // before a request as part of it.
    http.timer(TokioTimer::new())
        .header_read_timeout(None)
        .max_buf_size(MAX_HEAD);
    while let Some(mut conn) = queue.recv().await {
        // Its slot already taken back while it waited here (a flood of new connections): closed
        // at the cost of a close, so that a flood cannot outpace the workers with dead ones.
        if let Some(slot) = &mut conn.slot
            && let Err(tokio::sync::oneshot::error::TryRecvError::Closed) = slot.closed.try_recv()
        {
            continue;
        }
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
        let (peer, permit, client) = (conn.peer, conn._overload, conn._client);
        let (slot, closed) = match conn.slot {
            Some(s) => (Some(s.handle), Some(s.closed)),
            None => (None, None),
        };
        let deadlines = limits.deadlines();
        tokio::spawn(async move {
            let _held = (permit, client);
            let work = async move {
                match tls {
                    None => {
                        let io = Tracked::new(DeadlineIo::new(stream, deadlines), slot.clone());
                        serve_connection(io, http, state, slot).await
                    }
                    Some(acceptor) => {
                        match tokio::time::timeout(deadlines.request, acceptor.accept(stream)).await
                        {
                            Ok(Ok(s)) => {
                                let io = Tracked::new(DeadlineIo::new(s, deadlines), slot.clone());
                                serve_connection(io, http, state, slot).await
                            }
                            Ok(Err(e)) => Err(e.to_string()),
                            Err(_) => Err("TLS handshake timed out".into()),
                        }
                    }
                }
            };
            // The server takes the slot back (eviction, or the deadline under pressure): the
            // connection is dropped, which closes it.
            let taken_back = async move {
                match closed {
                    Some(rx) => {
                        let _ = rx.await;
                    }
                    None => std::future::pending().await,
                }
            };
            let result = tokio::select! {
                biased;
                () = taken_back => Err("closed without a complete request: slot taken back".into()),
                r = work => r,
            };
            if let Err(e) = result {
                log::debug!("connection from {peer}: {e}");
            }
        });
    }
}

/// Serves one connection: with `slot`, the application; without, the overload answer (503).
async fn serve_connection<S>(
    io: S,
    mut http: http1::Builder,
    state: Arc<State>,
    slot: Option<Arc<SlotHandle>>,
) -> Result<(), String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(io);
    let result = if let Some(slot) = slot {
        http.serve_connection(
            io,
            service_fn(move |req| handle(req, state.clone(), slot.clone())),
        )
        .await
    } else {
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

fn too_large(web: &WebConfig) -> Response<Full<Bytes>> {
    reply(
        web,
        StatusCode::PAYLOAD_TOO_LARGE,
        TEXT,
        format!("request body too large (at most {MAX_BODY} bytes)\n"),
    )
}

/// Whether an error, or one of its sources, is a timed-out read.
fn timed_out(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<io::Error>()
            && io.kind() == io::ErrorKind::TimedOut
        {
            return true;
        }
        if let Some(h) = e.downcast_ref::<hyper::Error>()
            && h.is_timeout()
        {
            return true;
        }
        cur = e.source();
    }
    false
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
    slot: Arc<SlotHandle>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let is_metrics = req.uri().path() == "/metrics";
    let mut guard = None;
    let r = route(req, &state, &slot, is_metrics.then_some(&mut guard)).await;
    // A scrape in flight until its response is written whole (or the connection closes).
    if let Some(g) = guard {
        slot.hold_until_responded(g);
    }
    Ok(r)
}

/// Answers one request; a `/metrics` answer that is being served leaves its place among the
/// scrapes in flight in `scrape`.
async fn route(
    req: Request<Incoming>,
    state: &Arc<State>,
    slot: &Arc<SlotHandle>,
    scrape: Option<&mut Option<crate::http::self_metrics::InFlight>>,
) -> Response<Full<Bytes>> {
    match respond(req, state, slot, scrape).await {
        Ok(r) | Err(r) => r,
    }
}

async fn respond(
    req: Request<Incoming>,
    state: &Arc<State>,
    slot: &Arc<SlotHandle>,
    scrape: Option<&mut Option<crate::http::self_metrics::InFlight>>,
) -> Result<Response<Full<Bytes>>, Response<Full<Bytes>>> {
    let web = &state.web;
    let (parts, body) = req.into_parts();
    if let Err(why) = crate::http::request_framing::check(&parts) {
        let msg = format!("bad request: {why}\n");
        return Ok(closing(reply(web, StatusCode::BAD_REQUEST, TEXT, msg)));
    }
    let has_body = !body.is_end_stream();
    // The request is whole (head, and no body): from here to its response's last byte, the
    // connection is served, and its slot is not taken back. With a body, once it is read.
    if !has_body {
        slot.serving();
    }
    // A declared length is known before a byte of the body is read.
    if body.size_hint().lower() > MAX_BODY {
        return Ok(closing(too_large(web)));
    }
    // The credentials before the body: an unauthenticated client never gets to hold a
    // connection by sending a body slowly. A refused request with an unread body closes.
    let verdict = match web.auth.check(parts.headers.get(header::AUTHORIZATION)) {
        Check::Pass => Verdict::Pass,
        Check::Deny => Verdict::Deny,
        Check::Verify(b64) => web.auth.verify(b64).await,
    };
    let refused = match verdict {
        Verdict::Pass => None,
        Verdict::Deny => {
            let mut r = reply(web, StatusCode::UNAUTHORIZED, TEXT, "Unauthorized\n");
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic"));
            Some(r)
        }
        Verdict::Busy => Some(reply(
            web,
            StatusCode::SERVICE_UNAVAILABLE,
            TEXT,
            "too many authentications under way\n",
        )),
    };
    if let Some(r) = refused {
        return Ok(if has_body { closing(r) } else { r });
    }
    // Read (and drop) any body, so that the connection stays in step for the next request;
    // the request deadline (DeadlineIo) bounds how long that may take.
    if has_body && let Err(e) = Limited::new(body, MAX_BODY as usize).collect().await {
        let r = if e.downcast_ref::<LengthLimitError>().is_some() {
            too_large(web)
        } else if timed_out(&*e) {
            reply(web, StatusCode::REQUEST_TIMEOUT, TEXT, "request timeout\n")
        } else {
            reply(
                web,
                StatusCode::BAD_REQUEST,
                TEXT,
                "bad request: malformed body\n",
            )
        };
        return Ok(closing(r));
    }
    slot.serving();
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
            let counts = &state.scrapes;
            let now = counts.in_flight.fetch_add(1, Ordering::AcqRel) + 1;
            let guard = crate::http::self_metrics::InFlight(counts.clone());
            if state.max_scrapes > 0 && now > state.max_scrapes {
                drop(guard);
                counts.unavailable.fetch_add(1, Ordering::Relaxed);
                static BUSY: ThrottledLog = ThrottledLog::new(Duration::from_secs(60));
                BUSY.warn(|| {
                    format!(
                        "a scrape was answered 503: {} are being served already                          (--max-concurrent-scrapes)",
                        state.max_scrapes
                    )
                });
                let mut r = reply(
                    web,
                    StatusCode::SERVICE_UNAVAILABLE,
                    TEXT,
                    format!(
                        "too many concurrent scrapes (--max-concurrent-scrapes {})\n",
                        state.max_scrapes
                    ),
                );
                r.headers_mut()
                    .insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
                return Ok(r);
            }
            if let Some(s) = scrape {
                *s = Some(guard);
            }
            let gzip = accepts_gzip(&parts.headers);
            let result = state.metrics(gzip);
            match &result {
                Ok(_) => &counts.ok,
                Err(_) => &counts.unavailable,
            }
            .fetch_add(1, Ordering::Relaxed);
            let mut r = match result {
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
        let stats = self.stats.snapshot();
        let now = Instant::now();
        // The exporter's own metrics (CPU time, scrapes) change all the time: refreshed
        // like the server's counters, within STATS_REFRESH.
        let stale_stats = (c.stats != Some(stats) || self.exporter_metrics)
            && c.built
                .is_none_or(|t| now.saturating_duration_since(t) >= STATS_REFRESH);
        if c.version != Some(p.version) || stale_stats {
            let mut text = String::with_capacity(p.text.len() + 2048);
            text.push_str(&p.text);
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            Stats::write(&stats, &mut text);
            if self.exporter_metrics {
                let process = crate::http::self_metrics::process_stats();
                crate::http::self_metrics::write(&mut text, process.as_ref(), &self.scrapes);
            }
            *c = Cache {
                version: Some(p.version),
                stats: Some(stats),
                built: Some(now),
                plain: Bytes::from(text),
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
