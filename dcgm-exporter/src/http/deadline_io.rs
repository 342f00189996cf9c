//! A connection whose every phase has a deadline: idle between requests, the whole request
//! (head and body, however it is trickled), and the writing of each response (however slowly
//! the client reads). hyper times only the reading of a request head; a body that never comes
//! or a client that never reads would otherwise hold a connection slot for ever.
//!
//! Written here because the phases are seen only from the bytes: a read after a response was
//! flushed starts a request, a write starts a response, a completed flush ends it. No crate
//! offers per-phase deadlines on a tokio stream (tokio-io-timeout resets its timers on every
//! byte, which a trickling client defeats).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// The three deadlines.
#[derive(Debug, Clone, Copy)]
pub struct Deadlines {
    /// From the end of a response (or the connection's start) to the first byte of the next
    /// request.
    pub idle: Duration,
    /// From the first byte of a request to the last byte of its body.
    pub request: Duration,
    /// From the first byte of a response to its last.
    pub write: Duration,
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    Idle,
    Request,
    Responding { next_request: Option<Instant> },
}

/// A stream with [`Deadlines`]: a read or write past its phase's deadline fails with
/// [`io::ErrorKind::TimedOut`], which closes the connection.
pub struct DeadlineIo<S> {
    inner: S,
    limits: Deadlines,
    phase: Phase,
    timer: Pin<Box<Sleep>>,
}

impl<S> DeadlineIo<S> {
    /// `inner`, idle from now.
    pub fn new(inner: S, limits: Deadlines) -> Self {
        Self {
            inner,
            limits,
            phase: Phase::Idle,
            timer: Box::pin(tokio::time::sleep(limits.idle)),
        }
    }

    fn enter(&mut self, phase: Phase, since: Instant) {
        let limit = match phase {
            Phase::Idle => self.limits.idle,
            Phase::Request => self.limits.request,
            Phase::Responding { .. } => self.limits.write,
        };
        self.phase = phase;
        self.timer.as_mut().reset(since + limit);
    }

    /// `Pending` from the inner stream: the phase's deadline decides whether it stays so.
    fn expired(&mut self, cx: &mut Context<'_>, reading: bool) -> bool {
        // Reads while a response is written (hyper watching for the peer closing) have no
        // deadline of their own: the write deadline covers that phase.
        if reading && matches!(self.phase, Phase::Responding { .. }) {
            return false;
        }
        self.timer.as_mut().poll(cx).is_ready()
    }
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, format!("{what} deadline passed"))
}

impl<S: AsyncRead + Unpin> AsyncRead for DeadlineIo<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    let now = Instant::now();
                    match self.phase {
                        Phase::Idle => self.enter(Phase::Request, now),
                        Phase::Request => {}
                        Phase::Responding { next_request: None } => {
                            self.phase = Phase::Responding {
                                next_request: Some(now),
                            }
                        }
                        Phase::Responding { .. } => {}
                    }
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                if self.expired(cx, true) {
                    let what = match self.phase {
                        Phase::Idle => "idle",
                        _ => "request",
                    };
                    return Poll::Ready(Err(timed_out(what)));
                }
                Poll::Pending
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> DeadlineIo<S> {
    fn start_writing(&mut self) {
        if !matches!(self.phase, Phase::Responding { .. }) {
            self.enter(Phase::Responding { next_request: None }, Instant::now());
        }
    }

    fn pending_write<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        if self.expired(cx, false) {
            return Poll::Ready(Err(timed_out("write")));
        }
        Poll::Pending
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for DeadlineIo<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.start_writing();
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Pending => self.pending_write(cx),
            done => done,
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.start_writing();
        match Pin::new(&mut self.inner).poll_write_vectored(cx, bufs) {
            Poll::Pending => self.pending_write(cx),
            done => done,
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_flush(cx) {
            Poll::Pending => {
                if matches!(self.phase, Phase::Responding { .. }) {
                    return self.pending_write(cx);
                }
                Poll::Pending
            }
            Poll::Ready(r) => {
                if r.is_ok()
                    && let Phase::Responding { next_request } = self.phase
                {
                    match next_request {
                        Some(since) => self.enter(Phase::Request, since),
                        None => self.enter(Phase::Idle, Instant::now()),
                    }
                }
                Poll::Ready(r)
            }
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_shutdown(cx) {
            Poll::Pending => {
                self.start_writing();
                self.pending_write(cx)
            }
            done => done,
        }
    }
}
