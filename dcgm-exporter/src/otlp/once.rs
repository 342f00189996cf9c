//! `--once` with an OTLP endpoint: the one collection is pushed as well, and the process
//! waits for the push. A failure worth retrying (no connection, gRPC `UNAVAILABLE`, HTTP 503,
//! ...) is retried with the pusher's back-off while `--otlp-timeout` lasts; the whole push,
//! retries included, never takes longer than that.

use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use dcgm_prometheus::Exposition;

use crate::otlp::config::OtlpConfig;
use crate::otlp::convert::Converter;
use crate::otlp::push::{FIRST_BACKOFF, MAX_BACKOFF, Transport};

/// Why the one push did not arrive.
#[derive(Debug, thiserror::Error)]
pub enum OncePushError {
    /// The endpoint or TLS settings cannot be used, or no runtime could start.
    #[error("OTLP: {0}")]
    Setup(String),
    /// The collector refused the request for good (HTTP 400, gRPC `INVALID_ARGUMENT`).
    #[error("OTLP: {url} refused the request: {message}")]
    Refused {
        /// The collector.
        url: String,
        /// Its answer.
        message: String,
    },
    /// Every attempt within `--otlp-timeout` failed.
    #[error(
        "OTLP: pushing to {url} failed within {timeout:?} ({attempts} attempts; the last: {message}); is the collector up, and are --otlp-endpoint and --otlp-protocol right?"
    )]
    TimedOut {
        /// The collector.
        url: String,
        /// `--otlp-timeout`.
        timeout: Duration,
        /// How many sends were tried.
        attempts: u32,
        /// The last failure.
        message: String,
    },
}

/// Pushes `collections` (one per host engine read) as one request, naming the host
/// `host_name` where the series do not, and waits until the collector takes it or
/// `cfg.timeout` has passed; returns the number of attempts it took.
///
/// # Errors
///
/// [`OncePushError`]: what went wrong, and what to check.
pub fn push_once(
    cfg: &OtlpConfig,
    collections: &[&Exposition],
    host_name: String,
) -> Result<u32, OncePushError> {
    let request = Bytes::from(
        Converter::new(cfg.resource.clone(), host_name).request(collections, SystemTime::now()),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| OncePushError::Setup(format!("cannot start the OTLP runtime: {e}")))?;
    let mut transport = {
        let _guard = runtime.enter();
        Transport::new(cfg).map_err(OncePushError::Setup)?
    };
    runtime.block_on(async {
        let deadline = Instant::now() + cfg.timeout;
        let mut backoff = FIRST_BACKOFF;
        let mut attempts = 0;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            attempts += 1;
            let e = match transport
                .send(&request, left.max(Duration::from_millis(1)))
                .await
            {
                Ok(()) => return Ok(attempts),
                Err(e) => e,
            };
            if !e.retry {
                return Err(OncePushError::Refused {
                    url: cfg.url.clone(),
                    message: e.message,
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            // Another attempt only where the back-off leaves time for it.
            if left <= backoff {
                return Err(OncePushError::TimedOut {
                    url: cfg.url.clone(),
                    timeout: cfg.timeout,
                    attempts,
                    message: e.message,
                });
            }
            log::debug!("OTLP: push attempt {attempts} failed: {}", e.message);
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    })
}
