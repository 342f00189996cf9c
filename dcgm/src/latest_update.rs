//! The samples of a multi-sample field's latest update, grouped back as libdcgm wrote them.
//!
//! Some fields hold a list: `DCGM_FI_DEV_COMPUTE_PIDS` and `DCGM_FI_DEV_GRAPHICS_PIDS` (one
//! sample per running process), `DCGM_FI_DEV_GPU_UTIL_SAMPLES`,
//! `DCGM_FI_DEV_MEM_COPY_UTIL_SAMPLES` and the `DCGM_FI_DEV_VGPU_*` lists. libdcgm appends all
//! of one update's samples with the update's time, but its cache's time series refuses a
//! duplicate time: `timeseries_insert` (`sdk/nvidia/nvml/common/timeseries.c` in NVIDIA's DCGM
//! source) retries one microsecond later until the time is free. An update with three
//! processes thus lands at `t`, `t+1` and `t+2` µs, and a reader that keeps only the samples at
//! the newest time sees the last process alone.
//!
//! The rule here: the latest update of an (entity, field) is the newest sample and every sample
//! before it whose time is at most one microsecond earlier than the next one's (a run of
//! consecutive microseconds; equal times, as older simulators wrote them, count too). Two
//! updates are at least the field's watch interval apart (milliseconds), so a run never joins
//! two updates unless an update holds more samples than the interval has microseconds.

use std::collections::BTreeMap;

use crate::{Entity, FieldId, FieldValue, RunningProcess};

/// The samples of each (entity, field)'s latest update among `samples` (a since-read, or any
/// run of samples in any order), oldest first per (entity, field), in (entity, field) order.
///
/// ```
/// use dcgm::{Entity, FieldId, FieldValue, ReturnCode, Value, latest_update};
/// let s = |ts, v| FieldValue {
///     entity: Entity::gpu(0),
///     field: FieldId(155),
///     timestamp_us: ts,
///     value: Value::Int(v),
///     status: ReturnCode::Ok,
/// };
/// // An update at 1000 µs with one sample, then one at 2000 µs with three (2000, 2001, 2002).
/// let got = latest_update(&[s(1000, 1), s(2000, 2), s(2001, 3), s(2002, 4)]);
/// assert_eq!(got.iter().map(|v| v.value.clone()).collect::<Vec<_>>(),
///            [Value::Int(2), Value::Int(3), Value::Int(4)]);
/// ```
pub fn latest_update(samples: &[FieldValue]) -> Vec<FieldValue> {
    let mut by: BTreeMap<(Entity, FieldId), Vec<&FieldValue>> = BTreeMap::new();
    for v in samples {
        by.entry((v.entity, v.field)).or_default().push(v);
    }
    let mut out = Vec::new();
    for (_, mut run) in by {
        run.sort_by_key(|v| v.timestamp_us);
        let mut first = run.len() - 1;
        while first > 0 && run[first].timestamp_us - run[first - 1].timestamp_us <= 1 {
            first -= 1;
        }
        out.extend(run[first..].iter().map(|v| (*v).clone()));
    }
    out
}

/// The running processes of each GPU (or GPU instance) in `samples` of a PID-list field
/// (`DCGM_FI_DEV_COMPUTE_PIDS` or `DCGM_FI_DEV_GRAPHICS_PIDS`): the records of each entity's
/// [`latest_update`], in pid order, with a process listed in both lists once (the larger
/// memory). Samples of other fields, and records that do not decode, are left out.
pub fn running_processes_of(samples: &[FieldValue]) -> BTreeMap<Entity, Vec<RunningProcess>> {
    let mut by: BTreeMap<Entity, BTreeMap<u32, u64>> = BTreeMap::new();
    for v in latest_update(samples) {
        if let Some(p) = v.value.running_process() {
            let m = by.entry(v.entity).or_default().entry(p.pid).or_default();
            *m = (*m).max(p.memory_used_bytes);
        }
    }
    by.into_iter()
        .map(|(e, procs)| {
            let list = procs
                .into_iter()
                .map(|(pid, memory_used_bytes)| RunningProcess {
                    pid,
                    memory_used_bytes,
                })
                .collect();
            (e, list)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ReturnCode, Value};

    fn proc_sample(gpu: u32, ts: i64, pid: u32) -> FieldValue {
        let mut b = Vec::new();
        b.extend_from_slice(&dcgm_sys::dcgmRunningProcess_version1.to_ne_bytes());
        b.extend_from_slice(&pid.to_ne_bytes());
        b.extend_from_slice(&(u64::from(pid) << 20).to_ne_bytes());
        FieldValue {
            entity: Entity::gpu(gpu),
            field: FieldId(dcgm_sys::DCGM_FI_DEV_COMPUTE_PIDS),
            timestamp_us: ts,
            value: Value::Bytes(b),
            status: ReturnCode::Ok,
        }
    }

    #[test]
    fn an_update_at_consecutive_microseconds_is_one_update() {
        // As the real libdcgm 4.6.0 stored three processes: t, t+1, t+2 (an older update of
        // two processes 1 s before).
        let t = 1_700_000_000_000_000;
        let samples = [
            proc_sample(0, t - 1_000_000, 7),
            proc_sample(0, t - 999_999, 8),
            proc_sample(0, t + 2, 30),
            proc_sample(0, t, 10),
            proc_sample(0, t + 1, 20),
            proc_sample(1, t + 5, 99),
        ];
        let by = running_processes_of(&samples);
        let pids = |g| {
            by[&Entity::gpu(g)]
                .iter()
                .map(|p| p.pid)
                .collect::<Vec<_>>()
        };
        assert_eq!(pids(0), [10, 20, 30]);
        assert_eq!(pids(1), [99]);
    }

    #[test]
    fn a_gap_of_two_microseconds_starts_another_update_and_equal_times_group() {
        let samples = [
            proc_sample(0, 100, 1),
            proc_sample(0, 102, 2),
            proc_sample(0, 102, 3),
        ];
        let got: Vec<u32> = running_processes_of(&samples)[&Entity::gpu(0)]
            .iter()
            .map(|p| p.pid)
            .collect();
        assert_eq!(got, [2, 3]);
        assert!(latest_update(&[]).is_empty());
    }
}
