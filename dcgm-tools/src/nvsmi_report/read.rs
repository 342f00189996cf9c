//! The report's reads: the latest value of every field it prints, the samples of the sampled
//! fields over the window, and the processes of each GPU.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dcgm::raw::sys::*;
use dcgm::{FieldGroup, FieldId, Group, Handle, SinceCursor, Value, WatchOptions};

use super::samples::{SAMPLED, SampleStats};

/// Every field a block reads (the report watches them all once).
const FIELDS: &[u16] = &[
    DCGM_FI_CUDA_DRIVER_VERSION,
    DCGM_FI_DEV_PCI_SUBSYS_ID,
    DCGM_FI_DEV_PCIE_MAX_LINK_GEN,
    DCGM_FI_DEV_PCIE_LINK_GEN,
    DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH,
    DCGM_FI_DEV_PCIE_LINK_WIDTH,
    DCGM_FI_DEV_PCIE_REPLAY_TOTAL,
    DCGM_FI_DEV_PCIE_TX_THROUGHPUT,
    DCGM_FI_DEV_PCIE_RX_THROUGHPUT,
    DCGM_FI_DEV_GPU_PSTATE,
    DCGM_FI_DEV_CLOCKS_EVENT_REASONS,
    DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP_NS,
    DCGM_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST_NS,
    DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN_NS,
    DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN_NS,
    DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN_NS,
    DCGM_FI_DEV_FB_TOTAL,
    DCGM_FI_DEV_FB_RESERVED,
    DCGM_FI_DEV_FB_USED,
    DCGM_FI_DEV_FB_FREE,
    DCGM_FI_DEV_BAR1_TOTAL,
    DCGM_FI_DEV_BAR1_USED,
    DCGM_FI_DEV_BAR1_FREE,
    DCGM_FI_DEV_GPU_COMPUTE_MODE,
    DCGM_FI_DEV_GPU_UTIL_RATIO,
    DCGM_FI_DEV_MEM_COPY_UTIL,
    DCGM_FI_DEV_ENC_UTIL,
    DCGM_FI_DEV_DEC_UTIL,
    DCGM_FI_DEV_ECC_MODE,
    DCGM_FI_DEV_ECC_PENDING,
    DCGM_FI_DEV_ECC_SBE_VOL_SRM,
    DCGM_FI_DEV_ECC_DBE_VOL_SRM,
    DCGM_FI_DEV_ECC_SBE_VOL_DEV,
    DCGM_FI_DEV_ECC_DBE_VOL_DEV,
    DCGM_FI_DEV_ECC_SBE_AGG_SRM,
    DCGM_FI_DEV_ECC_DBE_AGG_SRM,
    DCGM_FI_DEV_ECC_SBE_AGG_DEV,
    DCGM_FI_DEV_ECC_DBE_AGG_DEV,
    DCGM_FI_DEV_ECC_DBE_AGG_L2,
    DCGM_FI_DEV_SRAM_EXCEEDED,
    DCGM_FI_DEV_MEMORY_UNREPAIRABLE,
    DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL,
    DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL,
    DCGM_FI_DEV_PAGE_RETIRED_PENDING,
    DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL,
    DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL,
    DCGM_FI_DEV_ROW_REMAP_PENDING,
    DCGM_FI_DEV_ROW_REMAP_FAILED,
    DCGM_FI_DEV_BANK_REMAP_AVAIL_MAX,
    DCGM_FI_DEV_BANK_REMAP_AVAIL_HIGH,
    DCGM_FI_DEV_BANK_REMAP_AVAIL_PARTIAL,
    DCGM_FI_DEV_BANK_REMAP_AVAIL_LOW,
    DCGM_FI_DEV_BANK_REMAP_AVAIL_NONE,
    DCGM_FI_DEV_GPU_TEMP_CELSIUS,
    DCGM_FI_DEV_GPU_TEMP_MARGIN_CELSIUS,
    DCGM_FI_DEV_MEMORY_TEMP_CELSIUS,
    DCGM_FI_DEV_BOARD_POWER_WATTS,
    DCGM_FI_DEV_BOARD_POWER_RAW_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_DEFAULT_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_MIN_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_MAX_WATTS,
    DCGM_FI_DEV_PWR_SMOOTHING_ENABLED,
    DCGM_FI_DEV_BOARD_POWER_PROFILE_REQUESTED_MASK,
    DCGM_FI_DEV_BOARD_POWER_PROFILE_ENFORCED_MASK,
    DCGM_FI_DEV_SM_CLOCK,
    DCGM_FI_DEV_MEM_CLOCK,
    DCGM_FI_DEV_VIDEO_CLOCK,
    DCGM_FI_DEV_APP_SM_CLOCK,
    DCGM_FI_DEV_APP_MEM_CLOCK,
    DCGM_FI_DEV_MAX_SM_CLOCK,
    DCGM_FI_DEV_MAX_MEM_CLOCK,
    DCGM_FI_DEV_MAX_VIDEO_CLOCK,
    DCGM_FI_DEV_CLOCKS_AUTOBOOST_MODE,
];

/// Each GPU's latest value of each report field, and with a sample window the statistics of
/// each GPU's samples of the [`SAMPLED`] fields over it.
pub(super) type Readings = (
    BTreeMap<(u32, u16), Value>,
    BTreeMap<(u32, u16), SampleStats>,
);

/// The latest value of every report field of every GPU of `group`; with `window`, the
/// statistics of the sampled fields' samples of that long ago to now.
pub(super) fn read_values(
    handle: &Handle,
    group: &Group,
    window: Option<Duration>,
) -> dcgm::Result<Readings> {
    let ids: Vec<FieldId> = FIELDS.iter().map(|f| FieldId(*f)).collect();
    let mut m = BTreeMap::new();
    let fg = FieldGroup::create(handle, &format!("query-q-{}", std::process::id()), &ids)?;
    let defaults = WatchOptions::default();
    // Samples are kept at least as long as the window, so that a host engine keeps them for
    // the next report (one that watched them already keeps its own longer history).
    let options = WatchOptions {
        max_keep_age: defaults.max_keep_age.max(window.unwrap_or_default()),
        ..defaults
    };
    let _w = group.watch(&fg, options)?;
    handle.update_all_fields(true)?;
    for v in group.latest_values(&fg)? {
        m.insert((v.entity.id, v.field.0), v.value);
    }
    let samples = match window {
        Some(window) => read_samples(handle, group, window, &m)?,
        None => BTreeMap::new(),
    };
    Ok((m, samples))
}

/// The statistics of each GPU's cached samples of the [`SAMPLED`] fields from `window` ago to
/// now (watched by the caller). Where DCGM cannot give a field's history, the latest value
/// (in `latest`) is the one sample there is.
fn read_samples(
    handle: &Handle,
    group: &Group,
    window: Duration,
    latest: &BTreeMap<(u32, u16), Value>,
) -> dcgm::Result<BTreeMap<(u32, u16), SampleStats>> {
    let ids: Vec<FieldId> = SAMPLED.iter().map(|f| FieldId(*f)).collect();
    let fg = FieldGroup::create(
        handle,
        &format!("query-q-samples-{}", std::process::id()),
        &ids,
    )?;
    let now_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
    let since = now_us.saturating_sub(i64::try_from(window.as_micros()).unwrap_or(i64::MAX));
    let mut by_key: BTreeMap<(u32, u16), Vec<(i64, Value)>> = BTreeMap::new();
    match group.values_since(&fg, &mut SinceCursor(since)) {
        Ok(samples) => {
            for s in samples.into_iter().filter(|s| s.timestamp_us >= since) {
                by_key
                    .entry((s.entity.id, s.field.0))
                    .or_default()
                    .push((s.timestamp_us, s.value));
            }
        }
        Err(_) => {
            for ((gpu, field), v) in latest.iter().filter(|((_, f), _)| SAMPLED.contains(f)) {
                by_key
                    .entry((*gpu, *field))
                    .or_default()
                    .push((now_us, v.clone()));
            }
        }
    }
    Ok(by_key
        .into_iter()
        .filter_map(|(k, list)| {
            SampleStats::of(list.iter().map(|(ts, v)| (*ts, v))).map(|s| (k, s))
        })
        .collect())
}

/// A running process: pid, name and GPU memory in MiB.
pub(super) struct Process {
    pub(super) pid: u32,
    pub(super) name: Option<String>,
    pub(super) used_mib: u64,
}

/// The processes of each GPU of `group`: every sample of its latest update of the pid list.
pub(super) fn read_processes(
    handle: &Handle,
    group: &Group,
) -> dcgm::Result<BTreeMap<u32, Vec<Process>>> {
    let fg = FieldGroup::create(
        handle,
        &format!("query-q-pids-{}", std::process::id()),
        &[FieldId(DCGM_FI_DEV_COMPUTE_PIDS)],
    )?;
    let _w = group.watch(&fg, WatchOptions::default())?;
    handle.update_all_fields(true)?;
    // The real libdcgm answers this field's history with DCGM_ST_BADPARAM on some nodes (the
    // H200 capture): the latest sample, one process per GPU, is then what there is.
    let samples = match group.values_since(&fg, &mut SinceCursor::default()) {
        Ok(s) => s,
        Err(_) => group.latest_values(&fg)?,
    };
    // Every sample of each GPU's latest update (libdcgm stores them at consecutive µs).
    let mut out: BTreeMap<u32, Vec<Process>> = BTreeMap::new();
    for (entity, list) in dcgm::running_processes_of(&samples) {
        for p in list {
            out.entry(entity.id).or_default().push(Process {
                pid: p.pid,
                name: crate::process::owner(p.pid, handle.is_simulated()).name,
                used_mib: p.memory_used_bytes >> 20,
            });
        }
    }
    Ok(out)
}
