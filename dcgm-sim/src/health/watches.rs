//! The field watches a health watch adds to the field cache (`dcgmHealthSet`), as libdcgm
//! 4.6.0 adds them: for each GPU-like entity of the group, the fields each watched system
//! reads, at the update interval and for the age the caller asked (`dcgmHealthSet` asks
//! 30 s and 600 s), some systems sampling no faster than every 30 s (the InfoROM every hour,
//! kept for at least two hours); and, when NVLink is watched, the node's IMEX fields. The
//! health checks read these entries once they hold samples (see [`super::samples`]).

use dcgm_sys::*;

use crate::cache::{Cache, Watch, Watcher, WatcherId, key};

/// The slowest sampling most systems accept.
const MIN_INTERVAL_US: i64 = 30_000_000;

/// A group of fields one system watches: (fields, least interval, least age in seconds).
type Watches = (&'static [u16], i64, f64);

/// The fields a system watches on a GPU-like entity.
fn system_watches(system: u32) -> &'static [Watches] {
    match system {
        DCGM_HEALTH_WATCH_PCIE => &[(
            &[
                DCGM_FI_DEV_PCIE_REPLAY_TOTAL,
                DCGM_FI_DEV_PCIE_LINK_GEN,
                DCGM_FI_DEV_PCIE_LINK_WIDTH,
            ],
            0,
            0.0,
        )],
        DCGM_HEALTH_WATCH_MEM => &[
            (&[DCGM_FI_DEV_ECC_DBE_VOL_TOTAL], 0, 0.0),
            (
                &[
                    DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL,
                    DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL,
                    DCGM_FI_DEV_PAGE_RETIRED_PENDING,
                    DCGM_FI_DEV_XID_ERROR,
                    DCGM_FI_DEV_ROW_REMAP_FAILED,
                    DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL,
                    DCGM_FI_DEV_MEMORY_UNREPAIRABLE,
                ],
                MIN_INTERVAL_US,
                0.0,
            ),
        ],
        DCGM_HEALTH_WATCH_INFOROM => &[
            (&[DCGM_FI_DEV_INFOROM_VALID], 3_600_000_000, 7200.0),
            (&[DCGM_FI_DEV_XID_ERROR], MIN_INTERVAL_US, 0.0),
        ],
        DCGM_HEALTH_WATCH_THERMAL => &[(&[DCGM_FI_DEV_THERMAL_VIOLATION], MIN_INTERVAL_US, 0.0)],
        DCGM_HEALTH_WATCH_POWER => &[(
            &[DCGM_FI_DEV_POWER_VIOLATION, DCGM_FI_DEV_BOARD_POWER_WATTS],
            MIN_INTERVAL_US,
            0.0,
        )],
        DCGM_HEALTH_WATCH_DRIVER => &[(&[DCGM_FI_DEV_GPU_RECOVERY_ACTION], 0, 0.0)],
        DCGM_HEALTH_WATCH_NVLINK => &[(
            &[
                DCGM_FI_CUDA_GPU_COMPUTE_CAPABILITY,
                DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL,
                DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL,
                DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL,
                DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_TOTAL,
                DCGM_FI_DEV_NVLINK_RX_SYMBOL_ERROR_TOTAL,
                DCGM_FI_DEV_NVLINK_EFFECTIVE_BER_RAW,
                DCGM_FI_DEV_NVLINK_RX_PACKET_MALFORMED_TOTAL,
                DCGM_FI_DEV_NVLINK_RX_PACKET_DROPPED_TOTAL,
                DCGM_FI_DEV_NVLINK_RX_ERROR_TOTAL,
                DCGM_FI_DEV_NVLINK_RX_REMOTE_ERROR_TOTAL,
                DCGM_FI_DEV_NVLINK_RX_GENERAL_ERROR_TOTAL,
                DCGM_FI_DEV_NVLINK_INTEGRITY_ERROR_TOTAL,
                DCGM_FI_DEV_NVLINK_EFFECTIVE_ERROR_TOTAL,
                DCGM_FI_DEV_NVLINK_SYMBOL_BER_RAW,
                DCGM_FI_DEV_NVLINK_ECC_ERROR_TOTAL,
                DCGM_FI_DEV_FABRIC_HEALTH_MASK,
                DCGM_FI_DEV_FABRIC_MANAGER_STATUS,
                DCGM_FI_DEV_NVLINK_RECOVERY_EVENT_TOTAL,
                // Before Blackwell (every simulated GPU): the data-link layer totals.
                DCGM_FI_DEV_NVLINK_CRC_ERROR_TOTAL,
                DCGM_FI_DEV_NVLINK_RECOVERY_TOTAL,
                DCGM_FI_DEV_NVLINK_REPLAY_TOTAL,
            ],
            0,
            0.0,
        )],
        _ => &[],
    }
}

/// The node-wide fields watched with NVLink.
const GLOBAL_NVLINK: [u16; 2] = [DCGM_FI_IMEX_DOMAIN_STATUS, DCGM_FI_IMEX_DAEMON_STATUS];

/// The health module's watcher (one per entry: a later health watch replaces its interval and
/// age, as in libdcgm).
const HEALTH_WATCHER: WatcherId = WatcherId {
    kind: DcgmWatcherTypeHealthWatch,
    connection: 0,
};

/// Adds the health module's watch on an (entity, field).
fn add(
    cache: &mut Cache,
    group: u32,
    id: u32,
    field: u16,
    interval_us: i64,
    age_us: i64,
    now: i64,
) {
    cache
        .watches
        .entry(key(group, id, field))
        .or_insert_with(|| Watch::new(now, interval_us, age_us, 0))
        .add_watcher(
            now,
            Watcher {
                id: HEALTH_WATCHER,
                freq_us: interval_us,
                max_age_us: age_us,
                max_samples: 0,
            },
        );
}

/// Adds the watches of `systems` on `entities`, sampled every `interval_us` (or the system's
/// least interval) and kept for `max_keep_age_s` whole seconds (or the system's least age).
pub fn add_watches(
    cache: &mut Cache,
    entities: &[dcgmGroupEntityPair_t],
    systems: u32,
    interval_us: i64,
    max_keep_age_s: f64,
    now: i64,
) {
    for p in entities {
        if !matches!(
            p.entityGroupId,
            DCGM_FE_GPU | DCGM_FE_GPU_I | DCGM_FE_GPU_CI
        ) {
            continue;
        }
        for bit in 0..32 {
            if systems & (1u32 << bit) == 0 {
                continue;
            }
            for &(fields, least_interval, least_age) in system_watches(1u32 << bit) {
                let interval = interval_us.max(least_interval);
                let age = (max_keep_age_s.max(least_age).trunc() * 1e6) as i64;
                for &f in fields {
                    add(cache, p.entityGroupId, p.entityId, f, interval, age, now);
                }
            }
        }
    }
    if systems & DCGM_HEALTH_WATCH_NVLINK != 0 {
        let age = (max_keep_age_s.trunc() * 1e6) as i64;
        for f in GLOBAL_NVLINK {
            add(cache, DCGM_FE_NONE, 0, f, interval_us, age, now);
        }
    }
}
