//! The async streams (feature `tokio`) against the simulator: snapshots at an interval,
//! missed ticks skipped, since-samples without repeats, DCGM calls off the async workers, and
//! policy violations as a stream.

#![cfg(feature = "tokio")]

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dcgm::testing::{SimulatorLock, simulator_path};
use dcgm::{Group, Handle, PolicyCondition, ViolationDetail};
use dcgm_reader::{Connection, Reader};
use futures_util::StreamExt;

fn reader() -> Reader {
    Reader::builder()
        .library_path(simulator_path())
        .connection(Connection::Embedded)
        .update_frequency(Duration::from_millis(20))
        .build()
        .unwrap()
}

#[tokio::test]
async fn snapshots_arrive_every_interval() {
    let _sim = SimulatorLock::new(None).unwrap();
    let mut s = std::pin::pin!(reader().snapshot_stream(Duration::from_millis(50)));
    let t0 = Instant::now();
    for _ in 0..3 {
        let snap = s.next().await.unwrap().unwrap();
        assert_eq!(snap.len(), 8, "the 8 simulated GPUs: {:?}", snap.keys());
    }
    // The first at once, then one per interval.
    assert!(
        t0.elapsed() >= Duration::from_millis(95),
        "{:?}",
        t0.elapsed()
    );
}

#[tokio::test]
async fn a_slow_consumer_skips_missed_ticks_instead_of_bunching_them() {
    let _sim = SimulatorLock::new(None).unwrap();
    let mut s = std::pin::pin!(reader().snapshot_stream(Duration::from_millis(100)));
    s.next().await.unwrap().unwrap();
    // Three ticks are missed while the consumer is busy.
    tokio::time::sleep(Duration::from_millis(350)).await;
    s.next().await.unwrap().unwrap();
    let t = Instant::now();
    s.next().await.unwrap().unwrap();
    // Bunched ticks would come back at once; skipped ones wait for the schedule.
    assert!(
        t.elapsed() >= Duration::from_millis(20),
        "the next snapshot came {:?} after the late one",
        t.elapsed()
    );
}

#[tokio::test]
async fn since_stream_repeats_no_sample() {
    let _sim = SimulatorLock::new(None).unwrap();
    let mut s = std::pin::pin!(reader().since_stream(Duration::from_millis(40)));
    let mut seen = HashSet::new();
    let mut total = 0;
    for _ in 0..5 {
        for (e, fields) in s.next().await.unwrap().unwrap() {
            for (f, samples) in fields {
                for x in samples {
                    assert!(seen.insert((e, f, x.timestamp_us)), "repeated {e:?} {f:?}");
                    total += 1;
                }
            }
        }
    }
    assert!(total > 0);
}

#[test]
fn dcgm_calls_never_block_the_async_workers() {
    // Every simulated call takes 300 ms; a runtime with one thread must keep running its
    // other tasks meanwhile.
    let _sim = SimulatorLock::new(Some(r#"{"faults":{"slow_ms":300}}"#)).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let ticks = Arc::new(AtomicU64::new(0));
        let t = ticks.clone();
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
                t.fetch_add(1, Ordering::Relaxed);
            }
        });
        let mut s = std::pin::pin!(reader().snapshot_stream(Duration::from_millis(50)));
        s.next().await.unwrap().unwrap();
        ticker.abort();
        let n = ticks.load(Ordering::Relaxed);
        assert!(
            n >= 10,
            "the runtime thread was blocked: {n} ticks during the read"
        );
    });
}

#[tokio::test]
async fn policy_violations_arrive_as_a_stream() {
    let _sim = SimulatorLock::new(Some(
        r#"{"events":[{"at_ms":100,"gpu":2,"kind":"xid","value":79}]}"#,
    ))
    .unwrap();
    let handle = Handle::builder()
        .library_path(simulator_path())
        .embedded()
        .unwrap();
    let g = Group::with_gpus(&handle, "stream-policy", &[2]).unwrap();
    let mut violations = g.policy_stream(PolicyCondition::XID, 8).unwrap();
    let v = tokio::time::timeout(Duration::from_secs(5), violations.next())
        .await
        .expect("a violation within 5 s")
        .unwrap();
    assert_eq!(v.gpu, 2);
    assert_eq!(v.detail, ViolationDetail::Xid { xid: 79 });
    assert_eq!(violations.dropped(), 0);
    assert!(g.policy_stream(PolicyCondition::XID, 0).is_err());
}
