//! A [`Reader`] as async [`Stream`]s (feature `tokio`): snapshots, or since-last-call
//! samples, at a fixed interval. Every DCGM call runs on tokio's blocking pool
//! (`spawn_blocking`), never on the async worker threads; a tick missed because a read or the
//! consumer was slow is skipped, not made up in a burst.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dcgm::{Entity, Error, FieldId, Result};
use futures_util::Stream;
use tokio::time::MissedTickBehavior;

use crate::reader::{Reader, Sample, Snapshot};

/// What [`Reader::since_stream`] yields: entity → field → samples since the previous item.
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub type SinceSamples = BTreeMap<Entity, BTreeMap<FieldId, Vec<Sample>>>;

#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
impl Reader {
    /// The latest values every `interval`, the first at once. Must be polled inside a tokio
    /// runtime (it uses tokio's timer and blocking pool).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> dcgm::Result<()> {
    /// use futures_util::StreamExt;
    /// # let sim = dcgm::testing::simulator_path();
    /// let reader = dcgm_reader::Reader::builder().library_path(sim).build()?;
    /// let mut snapshots = std::pin::pin!(reader.snapshot_stream(std::time::Duration::from_millis(50)));
    /// for _ in 0..3 {
    ///     let snap = snapshots.next().await.expect("a snapshot")?;
    ///     println!("{} entities", snap.len());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn snapshot_stream(self, interval: Duration) -> impl Stream<Item = Result<Snapshot>> {
        ticking(self, interval, Reader::latest)
    }

    /// Every sample since the previous item, every `interval` (the first item: every sample
    /// kept so far). Nothing is lost or repeated between items.
    pub fn since_stream(self, interval: Duration) -> impl Stream<Item = Result<SinceSamples>> {
        ticking(self, interval, Reader::since_last_call)
    }
}

/// One `read` of the reader per tick of an interval that skips missed ticks, each on the
/// blocking pool.
fn ticking<T: Send + 'static>(
    reader: Reader,
    interval: Duration,
    read: fn(&mut Reader) -> Result<T>,
) -> impl Stream<Item = Result<T>> {
    let reader = Arc::new(Mutex::new(reader));
    let mut ticker = tokio::time::interval(interval.max(Duration::from_millis(1)));
    ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
    futures_util::stream::unfold((reader, ticker), move |(reader, mut ticker)| async move {
        ticker.tick().await;
        let r = reader.clone();
        let item = match tokio::task::spawn_blocking(move || {
            let mut guard = r.lock().unwrap_or_else(|p| p.into_inner());
            read(&mut guard)
        })
        .await
        {
            Ok(item) => item,
            // The read panicked: raise it in the consumer, as a synchronous read would.
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(Error::InvalidArgument(format!(
                "the read was cancelled with its runtime: {e}"
            ))),
        };
        Some((item, (reader, ticker)))
    })
}
