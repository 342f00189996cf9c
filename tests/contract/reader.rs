//! Contracts of `dcgm-reader` that hold on any libdcgm.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use dcgm::FieldId;
use dcgm::testing::assert_no_sentinel;
use dcgm_reader::{Connection, Reader};

use crate::target::{Kind, Listen, Target};
use crate::{Case, case};

pub fn cases() -> Vec<Case> {
    vec![
        case("reader_latest_has_every_gpu", reader_latest_has_every_gpu),
        case(
            "reader_since_last_call_loses_and_repeats_nothing",
            reader_since_last_call,
        ),
        Case {
            name: "reader_reconnects_after_hostengine_restart",
            run: reader_reconnects_after_hostengine_restart,
            not_on: Some((
                Kind::Sim,
                "the simulated host engine lives in-process and cannot be killed; \
                 dcgm-reader's own tests cover reconnection through the simulator's drop fault",
            )),
        },
    ]
}

fn fields() -> Vec<FieldId> {
    [
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_NAME",
    ]
    .iter()
    .map(|n| FieldId::parse(n).unwrap())
    .collect()
}

fn reader(t: &Target, c: Connection) -> Reader {
    Reader::builder()
        .library_path(&t.lib)
        .connection(c)
        .fields(&fields())
        .update_frequency(Duration::from_millis(100))
        .build()
        .unwrap()
}

fn reader_latest_has_every_gpu(t: &Target) {
    let mut r = reader(t, Connection::Embedded);
    let gpus = r.gpus().unwrap();
    assert!(!gpus.is_empty());
    std::thread::sleep(Duration::from_millis(300));
    let by_id = r.latest_by_id().unwrap();
    assert_eq!(by_id.len(), gpus.len(), "{by_id:?}");
    assert_no_sentinel(&format!("{by_id:?}"));
    let by_name = r.latest_by_name().unwrap();
    assert!(
        by_name
            .values()
            .all(|m| m.contains_key("gpu_temp") || m.is_empty())
    );
}

fn reader_since_last_call(t: &Target) {
    let mut r = reader(t, Connection::Embedded);
    let mut seen = std::collections::HashSet::new();
    let mut total = 0;
    for _ in 0..6 {
        for (e, fields) in r.since_last_call().unwrap() {
            for (f, samples) in fields {
                for s in samples {
                    assert!(
                        seen.insert((e, f, s.timestamp_us)),
                        "repeated {e:?} {f:?} {s:?}"
                    );
                    total += 1;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(120));
    }
    assert!(total > 0);
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64
}

fn reader_reconnects_after_hostengine_restart(t: &Target) {
    let mut he = t.start_hostengine(Listen::Tcp);
    let mut r = reader(t, Connection::Remote(he.address.clone()));
    r.latest().unwrap();
    let killed = now_us();
    he.restart();
    // Once the engine is back, the reader answers with fresh data: a call may report the
    // loss, but no value it returns predates the kill.
    let t0 = Instant::now();
    let fresh = loop {
        match r.latest() {
            Ok(snap) if !snap.is_empty() => {
                let ts: Vec<i64> = snap
                    .values()
                    .flat_map(|m| m.values())
                    .filter(|v| !v.value.is_blank())
                    .map(|v| v.timestamp_us)
                    .collect();
                if !ts.is_empty() {
                    break ts;
                }
            }
            Ok(_) | Err(_) => {}
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no fresh data 10 s after restart"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let waited = t0.elapsed();
    assert!(
        fresh.iter().all(|ts| *ts > killed),
        "stale values after reconnect: {fresh:?} (engine killed at {killed})"
    );
    // Fresh data within about one interval (100 ms) of the engine listening again; the bound
    // leaves room for the reconnect and the first update on a loaded machine.
    assert!(
        waited < Duration::from_secs(3),
        "fresh data only after {waited:?}"
    );
    assert!(r.reconnects() >= 1);
}
