//! Policy violations as an async [`Stream`] (feature `tokio`): the library's callback thread
//! puts each violation into a bounded tokio channel without blocking, counting what a full
//! channel drops, as [`Group::policy_subscribe`] does for its std channel.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::error::{Error, Result};
use crate::group::Group;
use crate::policy::{PolicyCondition, PolicyRegistration, PolicyViolation};

/// Violations of a group's policy, as they happen; the registration ends when the stream is
/// dropped.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> dcgm::Result<()> {
/// use futures_util::StreamExt;
/// # dcgm::testing::configure_simulator(Some(r#"{"events":[{"at_ms":100,"gpu":0,"kind":"xid","value":79}]}"#))?;
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// let gpus = dcgm::Group::all_gpus(&handle);
/// let mut violations = gpus.policy_stream(dcgm::PolicyCondition::XID, 64)?;
/// let v = violations.next().await.expect("a violation");
/// println!("GPU {}: {:?}", v.gpu, v.detail);
/// # drop(violations); drop(gpus); drop(handle);
/// # dcgm::testing::configure_simulator(None)?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub struct PolicyStream {
    registration: PolicyRegistration,
    rx: tokio::sync::mpsc::Receiver<PolicyViolation>,
}

impl PolicyStream {
    /// The registration behind the stream (conditions, panics, drops).
    pub fn registration(&self) -> &PolicyRegistration {
        &self.registration
    }

    /// Violations dropped because the stream was not read fast enough.
    pub fn dropped(&self) -> u64 {
        self.registration.dropped()
    }
}

impl Stream for PolicyStream {
    type Item = PolicyViolation;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
impl Group {
    /// Registers for `conditions` and returns the violations as a [`Stream`] buffering at most
    /// `capacity` of them (more are dropped and counted in [`PolicyStream::dropped`]). DCGM's
    /// callback never blocks on the stream's reader.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a zero capacity; the library's code when the registration fails
    /// (`DCGM_ST_NOT_CONFIGURED` for a destroyed group).
    #[doc(alias = "dcgmPolicyRegister_v2")]
    pub fn policy_stream(
        &self,
        conditions: PolicyCondition,
        capacity: usize,
    ) -> Result<PolicyStream> {
        if capacity == 0 {
            return Err(Error::InvalidArgument(
                "the policy stream needs room for at least one violation".into(),
            ));
        }
        let (tx, rx) = tokio::sync::mpsc::channel(capacity);
        let dropped = Arc::new(AtomicU64::new(0));
        let counter = dropped.clone();
        let callback = move |v| {
            if tx.try_send(v).is_err() {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        };
        let registration = self.register_entry(conditions, Box::new(callback), dropped)?;
        Ok(PolicyStream { registration, rx })
    }
}
