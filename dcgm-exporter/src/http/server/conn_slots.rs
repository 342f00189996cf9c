//! The server's connection slots, which go to those who use them.
//!
//! Every open connection (but the overload ones, answered 503) holds one of
//! [`Limits::max_connections`](super::Limits::max_connections) slots, and is at any moment
//! either *serving* (its request arrived whole, head and body, and its response is not written
//! yet) or *waiting*: for a TLS handshake, a request, or the rest of one, since it was accepted
//! or since its last response was written. A waiting connection gives its slot back when
//! someone else needs it:
//!
//! - **Eviction.** A new connection that finds every slot taken closes the connection that has
//!   been waiting longest and takes its slot. Only when every connection is serving does a new
//!   one get the overload answer (a 503, or closed past the overload slots).
//! - **Deadlines under pressure.** While more than 3/4 of the slots are taken
//!   ([`under_pressure`]), a connection waiting for more than
//!   [`Limits::pressure_timeout`](super::Limits::pressure_timeout) (1 s by default) is closed,
//!   checked every [`PRESSURE_TICK`] (100 ms): the idle and request-head deadlines (10 s by
//!   default) shorten to about 1 s.
//!
//! A serving connection is never closed here: its write deadline bounds it. So no set of idle
//! or trickling clients, from any number of addresses, keeps a new connection out: it takes the
//! slot of the one waiting longest, and in a full server that one is never the newcomer.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::oneshot;

use crate::http::throttled_log::ThrottledLog;

/// How often the pressure deadline is checked: connections waiting past it are closed within
/// this much of it.
pub const PRESSURE_TICK: Duration = Duration::from_millis(100);

/// Whether `open` connections out of `max` is pressure: more than 3/4 of the slots taken.
pub fn under_pressure(open: usize, max: usize) -> bool {
    open.saturating_mul(4) > max.saturating_mul(3)
}

/// The slots, and the connections holding them.
#[derive(Debug)]
pub struct ConnSlots {
    max: usize,
    pressure_timeout: Duration,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    next_id: u64,
    open: HashMap<u64, Entry>,
    /// The waiting connections, longest waiting first.
    waiting: BTreeSet<(Instant, u64)>,
}

#[derive(Debug)]
struct Entry {
    peer: SocketAddr,
    /// `None` while serving.
    waiting_since: Option<Instant>,
    /// Dropped to close the connection: its task waits on the receiver.
    _close: oneshot::Sender<()>,
}

/// What a new connection gets.
#[derive(Debug)]
pub enum Admission {
    /// A free slot.
    Free(ConnSlot),
    /// The slot of a waiting connection, closed for it.
    Evicted(ConnSlot, Evicted),
    /// Nothing: every slot is taken by a connection being served.
    Full,
}

/// A connection closed to make room.
#[derive(Debug, Clone, Copy)]
pub struct Evicted {
    /// Its client.
    pub peer: SocketAddr,
    /// How long it had been waiting (without a complete request).
    pub waited: Duration,
}

/// A slot taken: the connection's handle, and what resolves when the server takes the slot back
/// (the connection's task then drops the connection).
#[derive(Debug)]
pub struct ConnSlot {
    /// Shared by whatever follows the connection's requests; the last one dropped gives the slot
    /// back.
    pub handle: Arc<SlotHandle>,
    /// Resolves (with an error) when the slot is taken back.
    pub closed: oneshot::Receiver<()>,
}

/// One connection's slot.
#[derive(Debug)]
pub struct SlotHandle {
    slots: Arc<ConnSlots>,
    id: u64,
    /// Dropped when the response being written is written whole, or with the connection
    /// (a `/metrics` response's place among the scrapes in flight).
    held: Mutex<Option<crate::http::self_metrics::InFlight>>,
}

impl ConnSlots {
    /// `max` slots; under pressure a connection may wait `pressure_timeout`.
    pub fn new(max: usize, pressure_timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            max,
            pressure_timeout,
            inner: Mutex::new(Inner::default()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Connections holding a slot.
    pub fn open(&self) -> usize {
        self.lock().open.len()
    }

    /// The slot count.
    pub fn max(&self) -> usize {
        self.max
    }

    /// A slot for a new connection from `peer`, waiting from `now`: a free one, else the one of
    /// the connection waiting longest (closed), else none.
    pub fn admit(self: &Arc<Self>, peer: SocketAddr, now: Instant) -> Admission {
        let mut g = self.lock();
        let victim = if g.open.len() >= self.max {
            let Some((since, id)) = g.waiting.pop_first() else {
                return Admission::Full;
            };
            g.open.remove(&id).map(|e| (e, since))
        } else {
            None
        };
        let id = g.next_id;
        g.next_id += 1;
        let (tx, rx) = oneshot::channel();
        g.open.insert(
            id,
            Entry {
                peer,
                waiting_since: Some(now),
                _close: tx,
            },
        );
        g.waiting.insert((now, id));
        drop(g);
        let slot = ConnSlot {
            handle: Arc::new(SlotHandle {
                slots: self.clone(),
                id,
                held: Mutex::new(None),
            }),
            closed: rx,
        };
        match victim {
            None => Admission::Free(slot),
            Some((entry, since)) => {
                let evicted = Evicted {
                    peer: entry.peer,
                    waited: now.saturating_duration_since(since),
                };
                drop(entry); // closes it
                Admission::Evicted(slot, evicted)
            }
        }
    }

    /// Under pressure, closes the connections that have been waiting `pressure_timeout` or
    /// longer at `now`; how many, and how many connections were open.
    pub fn expire(&self, now: Instant) -> (usize, usize) {
        let mut g = self.lock();
        let open = g.open.len();
        if !under_pressure(open, self.max) {
            return (0, open);
        }
        let mut closed = Vec::new();
        while let Some(&(since, id)) = g.waiting.first() {
            if now.saturating_duration_since(since) < self.pressure_timeout {
                break;
            }
            g.waiting.pop_first();
            closed.extend(g.open.remove(&id));
        }
        drop(g);
        (closed.len(), open)
    }
}

impl SlotHandle {
    /// The connection's request arrived whole: it is served, and not closed for anyone.
    pub fn serving(&self) {
        let mut g = self.slots.lock();
        let g = &mut *g;
        if let Some(e) = g.open.get_mut(&self.id)
            && let Some(since) = e.waiting_since.take()
        {
            g.waiting.remove(&(since, self.id));
        }
    }

    /// The response was written: the connection waits for its next request, from now.
    pub fn responded(&self) {
        self.held.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.responded_at(Instant::now());
    }

    /// Keeps `v` until the response being written is written whole ([`SlotHandle::responded`])
    /// or the connection closes.
    pub fn hold_until_responded(&self, v: crate::http::self_metrics::InFlight) {
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(v);
    }

    fn responded_at(&self, now: Instant) {
        let mut g = self.slots.lock();
        let g = &mut *g;
        if let Some(e) = g.open.get_mut(&self.id)
            && e.waiting_since.is_none()
        {
            e.waiting_since = Some(now);
            g.waiting.insert((now, self.id));
        }
    }
}

impl Drop for SlotHandle {
    fn drop(&mut self) {
        let mut g = self.slots.lock();
        let entry = g.open.remove(&self.id);
        if let Some(since) = entry.as_ref().and_then(|e| e.waiting_since) {
            g.waiting.remove(&(since, self.id));
        }
        drop(g);
        drop(entry);
    }
}

/// Closes, every [`PRESSURE_TICK`] and while under pressure, the connections waiting past the
/// pressure deadline; stops when `slots` is gone (the server stopped).
pub fn spawn_reaper(slots: Weak<ConnSlots>, stats: Arc<Stats>) -> io::Result<()> {
    static PRESSURE: ThrottledLog = ThrottledLog::new(Duration::from_secs(60));
    std::thread::Builder::new()
        .name("http-slots".into())
        .spawn(move || {
            loop {
                std::thread::sleep(PRESSURE_TICK);
                let Some(slots) = slots.upgrade() else {
                    return;
                };
                let (closed, open) = slots.expire(Instant::now());
                if closed > 0 {
                    stats.expired.fetch_add(closed as u64, Ordering::Relaxed);
                    PRESSURE.warn(|| {
                        format!(
                            "HTTP server under pressure ({open} of {} connections): closed \
                             {closed} that sent no complete request within {:?} \
                             (dcgm_exporter_http_connections_evicted_total{{reason=\"pressure\"}})",
                            slots.max, slots.pressure_timeout
                        )
                    });
                }
            }
        })
        .map(|_| ())
}

/// The server's own counters, appended to `/metrics`.
#[derive(Debug, Default)]
pub struct Stats {
    /// New connections that found every slot taken.
    pub full: AtomicU64,
    /// Waiting connections closed to make room for a new one.
    pub evicted: AtomicU64,
    /// Waiting connections closed by the pressure deadline.
    pub expired: AtomicU64,
    /// New connections closed because their address held its share already.
    pub per_client: AtomicU64,
    /// New connections answered 503: every slot serving.
    pub overload_503: AtomicU64,
    /// New connections closed unanswered: every slot serving, and every overload slot taken.
    pub overload_closed: AtomicU64,
}

/// A copy of [`Stats`], in its field order.
pub type Snapshot = [u64; 6];

impl Stats {
    /// The counters now.
    pub fn snapshot(&self) -> Snapshot {
        [
            &self.full,
            &self.evicted,
            &self.expired,
            &self.per_client,
            &self.overload_503,
            &self.overload_closed,
        ]
        .map(|c| c.load(Ordering::Relaxed))
    }

    /// Appends `s` in the Prometheus text format.
    pub fn write(s: &Snapshot, out: &mut String) {
        let [
            full,
            evicted,
            expired,
            per_client,
            overload_503,
            overload_closed,
        ] = *s;
        let _ = write!(
            out,
            "# HELP {FULL} New HTTP connections that found every connection slot taken.\n\
             # TYPE {FULL} counter\n\
             {FULL} {full}\n\
             # HELP {EVICTED} HTTP connections closed before sending a complete request: to give \
             their slot to a new connection when every slot was taken (server_full), or waiting \
             past the short deadline while over 3/4 of the slots were taken (pressure).\n\
             # TYPE {EVICTED} counter\n\
             {EVICTED}{{reason=\"server_full\"}} {evicted}\n\
             {EVICTED}{{reason=\"pressure\"}} {expired}\n\
             # HELP {REFUSED} New HTTP connections refused: their client address held its \
             share of connections (per_client_limit), or every slot was serving a request \
             (overload_503: answered 503; overload_closed: closed, past the overload slots too).\n\
             # TYPE {REFUSED} counter\n\
             {REFUSED}{{reason=\"per_client_limit\"}} {per_client}\n\
             {REFUSED}{{reason=\"overload_503\"}} {overload_503}\n\
             {REFUSED}{{reason=\"overload_closed\"}} {overload_closed}\n"
        );
    }
}

/// New connections that found every slot taken.
pub const FULL: &str = "dcgm_exporter_http_server_full_total";
/// Connections closed before sending a complete request, by reason.
pub const EVICTED: &str = "dcgm_exporter_http_connections_evicted_total";
/// New connections refused, by reason.
pub const REFUSED: &str = "dcgm_exporter_http_connections_refused_total";

/// A connection's stream that tells its slot when a response has been written (a flush after
/// a write), so that the connection counts as waiting again from then.
pub struct Tracked<S> {
    inner: S,
    slot: Option<Arc<SlotHandle>>,
    wrote: bool,
}

impl<S> Tracked<S> {
    /// `inner`, reporting to `slot` (none: nothing to report).
    pub fn new(inner: S, slot: Option<Arc<SlotHandle>>) -> Self {
        Self {
            inner,
            slot,
            wrote: false,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Tracked<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Tracked<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.wrote = true;
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.wrote = true;
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        if matches!(r, Poll::Ready(Ok(())))
            && std::mem::take(&mut self.wrote)
            && let Some(slot) = &self.slot
        {
            slot.responded();
        }
        r
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(n: u8) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, n], 1000))
    }

    fn slot(a: Admission) -> ConnSlot {
        match a {
            Admission::Free(s) | Admission::Evicted(s, _) => s,
            Admission::Full => panic!("no slot"),
        }
    }

    fn is_closed(s: &mut ConnSlot) -> bool {
        s.closed
            .try_recv()
            .is_err_and(|e| e == oneshot::error::TryRecvError::Closed)
    }

    #[test]
    fn a_full_server_closes_the_connection_waiting_longest_never_one_being_served() {
        let slots = ConnSlots::new(3, Duration::from_secs(1));
        let t = Instant::now();
        let mut a = slot(slots.admit(peer(2), t));
        let mut b = slot(slots.admit(peer(3), t + Duration::from_millis(1)));
        let mut c = slot(slots.admit(peer(4), t + Duration::from_millis(2)));
        // The oldest is being served: the next oldest goes.
        a.handle.serving();
        let _new = match slots.admit(peer(1), t + Duration::from_secs(5)) {
            Admission::Evicted(s, e) => {
                assert_eq!(e.peer, peer(3));
                assert_eq!(e.waited, Duration::from_millis(4999));
                s
            }
            other => panic!("{other:?}"),
        };
        assert!(is_closed(&mut b));
        assert!(!is_closed(&mut a) && !is_closed(&mut c));
        assert_eq!(slots.open(), 3);
        // Served and waiting again from now: younger than the rest.
        a.handle.responded_at(t + Duration::from_secs(6));
        let d = slot(slots.admit(peer(1), t + Duration::from_secs(7)));
        assert!(is_closed(&mut c) && !is_closed(&mut a));
        // Every slot serving: nothing for a newcomer.
        a.handle.serving();
        d.handle.serving();
        let e = slot(slots.admit(peer(1), Instant::now()));
        e.handle.serving();
        assert!(matches!(
            slots.admit(peer(1), Instant::now()),
            Admission::Full
        ));
        // A slot comes back when its connection ends.
        drop(e);
        assert_eq!(slots.open(), 2);
        assert!(matches!(
            slots.admit(peer(1), Instant::now()),
            Admission::Free(_)
        ));
    }

    #[test]
    fn under_pressure_waiting_connections_are_closed_after_the_short_deadline() {
        let slots = ConnSlots::new(8, Duration::from_secs(1));
        let t = Instant::now();
        let mut held: Vec<ConnSlot> = (0..6).map(|_| slot(slots.admit(peer(2), t))).collect();
        // 6 of 8 is not more than 3/4.
        assert_eq!(slots.expire(t + Duration::from_secs(5)), (0, 6));
        held.push(slot(slots.admit(peer(2), t + Duration::from_millis(900))));
        held[0].handle.serving();
        // 7 of 8: the five waiting since t go, the one being served and the younger one stay.
        assert_eq!(slots.expire(t + Duration::from_secs(1)), (5, 7));
        let closed: Vec<bool> = held.iter_mut().map(is_closed).collect();
        assert_eq!(closed, [false, true, true, true, true, true, false]);
        assert_eq!(slots.open(), 2);
    }

    #[test]
    fn pressure_is_more_than_three_quarters() {
        assert!(!under_pressure(384, 512));
        assert!(under_pressure(385, 512));
        assert!(under_pressure(2, 2) && !under_pressure(1, 2));
    }

    #[test]
    fn the_counters_are_a_valid_exposition() {
        let mut out = String::new();
        Stats::write(&[1, 2, 3, 4, 5, 6], &mut out);
        assert!(out.contains("dcgm_exporter_http_server_full_total 1\n"));
        assert!(
            out.contains(
                "dcgm_exporter_http_connections_evicted_total{reason=\"server_full\"} 2\n"
            )
        );
        assert!(
            out.contains("dcgm_exporter_http_connections_evicted_total{reason=\"pressure\"} 3\n")
        );
        assert!(out.contains(
            "dcgm_exporter_http_connections_refused_total{reason=\"overload_closed\"} 6\n"
        ));
        assert_eq!(out.lines().filter(|l| l.starts_with("# TYPE")).count(), 3);
    }
}
