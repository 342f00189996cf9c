//! The workload profiles' readings: what a GPU running each [`Workload`] reports at a moment.
//! Every number is a share of the GPU's own limits (its application clock, its power limit,
//! its memory) so a profile reads alike on any simulated model; the shares are what a real
//! H200 showed running the same kind of work (`shared/fixtures/h200-traces/README.md`), with a
//! little smooth noise so that a series is not flat.

use crate::config::Workload;
use crate::values::smooth;

/// What a GPU is doing at a moment, for a workload profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    /// GPU utilisation, % of time a kernel ran.
    pub util: f64,
    /// Profiling ratios, 0..1: graphics engine, SM active, SM occupancy, tensor, DRAM, FP64,
    /// FP32, FP16.
    pub gr: f64,
    pub sm: f64,
    pub occupancy: f64,
    pub tensor: f64,
    pub dram: f64,
    pub fp64: f64,
    pub fp32: f64,
    pub fp16: f64,
    /// PCIe bytes/s received and sent by the GPU.
    pub pcie_rx: f64,
    pub pcie_tx: f64,
    /// Memory-copy utilisation, %.
    pub mem_copy: f64,
    /// SM clock as a share of the application clock.
    pub clock_share: f64,
    /// Board power as a share of the enforced limit.
    pub power_share: f64,
    /// Clock-event reasons (DCGM_CLOCKS_EVENT_REASON_*).
    pub reasons: i64,
    /// The temperature the GPU is held at, where the workload sets it (°C); else it follows
    /// power.
    pub temp_c: Option<f64>,
    /// Share of the framebuffer the workload holds (more than its processes say).
    pub memory_share: f64,
    /// The time constant, s, of the temperature's rise from idle after the engine starts
    /// (0: at once): a card under a fresh stress test warms over a minute or so.
    pub warm_up_s: f64,
}

/// How fast a burn profile's temperature rises: 63 % of the way from idle in this many
/// seconds after the engine starts.
pub const BURN_WARM_UP_S: f64 = 20.0;

/// Single-bit ECC errors a second that the `burn_ecc` profile throws under load.
pub const BURN_ECC_SBE_PER_S: f64 = 2.0;

/// The share of the maximum SM clock the `burn_stuck_clock` profile's clock is stuck at.
pub const BURN_STUCK_CLOCK_SHARE: f64 = 0.2;

/// Single-bit ECC errors a second that `workload` throws (volatile and aggregate counts grow
/// by this from the engine's start).
pub fn sbe_per_s(workload: Workload) -> f64 {
    if workload == Workload::BurnEcc {
        BURN_ECC_SBE_PER_S
    } else {
        0.0
    }
}

/// The software power cap reason: clocks held at the power limit.
pub const REASON_SW_POWER_CAP: i64 = 0x4;
/// The software thermal slowdown reason.
pub const REASON_SW_THERMAL: i64 = 0x20;

/// The period of the sawtooth profile's beat and its busy part, s: the fixture's data-starved
/// loop (0.4 s of matmuls, 0.8 s on the CPU).
pub const SAWTOOTH_PERIOD_S: f64 = 1.2;
pub const SAWTOOTH_BUSY_S: f64 = 0.4;

/// A GPU with a CUDA context and nothing running: idle draw, a monitor's trickle over PCIe,
/// clocks held up by the context (the H200 showed 1980 MHz, 117 W of 700, reasons 0).
fn idle() -> Activity {
    Activity {
        util: 0.0,
        gr: 0.0001,
        sm: 0.0,
        occupancy: 0.0,
        tensor: 0.0,
        dram: 0.0,
        fp64: 0.0,
        fp32: 0.0,
        fp16: 0.0,
        pcie_rx: 0.9e6,
        pcie_tx: 1.3e6,
        mem_copy: 0.0,
        clock_share: 1.0,
        power_share: 0.167,
        reasons: 0,
        temp_c: None,
        memory_share: 0.0,
        warm_up_s: 0.0,
    }
}

/// A stress test: every SM busy in the tensor pipes, power near the limit (below it: clocks
/// at their maximum, no reason set), most of the memory held by its matrices.
fn burn() -> Activity {
    Activity {
        util: 100.0,
        gr: 1.0,
        sm: 0.99,
        occupancy: 0.2,
        tensor: 0.95,
        dram: 0.12,
        fp32: 0.02,
        power_share: 0.93,
        mem_copy: 10.0,
        memory_share: 0.05,
        warm_up_s: BURN_WARM_UP_S,
        ..idle()
    }
}

/// Dense bf16 matmuls (the H200: utilisation 99.8 %, SM active 0.96, tensor 0.93, DRAM 0.18,
/// occupancy 0.14), here below the power limit with clocks at their maximum.
fn matmul() -> Activity {
    Activity {
        util: 99.5,
        gr: 0.99,
        sm: 0.95,
        occupancy: 0.14,
        tensor: 0.92,
        dram: 0.18,
        fp64: 0.0,
        fp32: 0.02,
        fp16: 0.05,
        pcie_rx: 16e6,
        pcie_tx: 7e6,
        mem_copy: 25.0,
        power_share: 0.82,
        ..idle()
    }
}

/// The share of the time a workload holds a clock-event reason in `mask` (the rate its
/// violation counter grows at, against the wall clock).
pub fn reason_share(workload: Workload, mask: i64) -> f64 {
    let reasons = match workload {
        Workload::PowerCapped => REASON_SW_POWER_CAP,
        Workload::ThermalThrottle | Workload::BurnHot => REASON_SW_THERMAL,
        Workload::Sawtooth => {
            return if mask & REASON_SW_POWER_CAP != 0 {
                SAWTOOTH_BUSY_S / SAWTOOTH_PERIOD_S
            } else {
                0.0
            };
        }
        _ => 0,
    };
    if reasons & mask != 0 { 1.0 } else { 0.0 }
}

/// What a GPU running `workload` reads at `t_s` (seconds since the epoch); `None` for the
/// training cycle, which the model computes as it always has.
pub fn activity(workload: Workload, seed: u64, gpu: u32, t_s: f64) -> Option<Activity> {
    // Noise in [-1, 1), smooth in time, different per GPU and per use.
    let noise = |k: u64| smooth(seed, 5000 + u64::from(gpu) * 17 + k, t_s) * 2.0 - 1.0;
    let jitter = |a: Activity| Activity {
        util: if a.util > 0.0 {
            (a.util + noise(1)).clamp(0.0, 100.0)
        } else {
            0.0
        },
        sm: (a.sm * (1.0 + 0.01 * noise(2))).clamp(0.0, 1.0),
        tensor: (a.tensor * (1.0 + 0.01 * noise(3))).clamp(0.0, 1.0),
        dram: (a.dram * (1.0 + 0.02 * noise(4))).clamp(0.0, 1.0),
        pcie_rx: a.pcie_rx * (1.0 + 0.02 * noise(5)),
        power_share: (a.power_share * (1.0 + 0.01 * noise(6))).min(1.0),
        ..a
    };
    let a = match workload {
        Workload::Training => return None,
        Workload::Steady => matmul(),
        // Capped: 691 W of 700, 1480 of 1980 MHz, reason 4 throughout.
        Workload::PowerCapped => Activity {
            power_share: 0.987,
            clock_share: 0.75,
            reasons: REASON_SW_POWER_CAP,
            ..matmul()
        },
        Workload::Burn | Workload::BurnEcc => burn(),
        Workload::BurnStuckClock => Activity {
            clock_share: BURN_STUCK_CLOCK_SHARE,
            power_share: 0.35,
            ..burn()
        },
        Workload::BurnHot => Activity {
            power_share: 0.8,
            clock_share: 0.7,
            reasons: REASON_SW_THERMAL,
            temp_c: Some(91.0),
            // Hot from the start: its cooling does not keep up even at first.
            warm_up_s: 0.0,
            ..burn()
        },
        Workload::ThermalThrottle => Activity {
            power_share: 0.7,
            clock_share: 0.7,
            reasons: REASON_SW_THERMAL,
            temp_c: Some(88.0),
            ..matmul()
        },
        // A card that runs the same job slower, for no reason the driver names (a degraded
        // board, a lower clock set on it by hand).
        Workload::Straggler => Activity {
            power_share: 0.62,
            clock_share: 0.78,
            ..matmul()
        },
        Workload::Sawtooth => {
            if (t_s + f64::from(gpu) * 0.1).rem_euclid(SAWTOOTH_PERIOD_S) < SAWTOOTH_BUSY_S {
                // The busy beat ramps to the cap as the steady matmuls do.
                Activity {
                    power_share: 0.95,
                    clock_share: 0.8,
                    reasons: REASON_SW_POWER_CAP,
                    ..matmul()
                }
            } else {
                Activity {
                    power_share: 0.25,
                    ..idle()
                }
            }
        }
        // Pageable copies: 23.6 GB/s received, a third of a Gen5 x16 link; utilisation 46 %
        // (the copy engine), the graphics engine and SMs idle, memory-copy utilisation 1 %.
        Workload::PcieBound => Activity {
            util: 45.7,
            pcie_rx: 23.6e9,
            pcie_tx: 1.4e9,
            dram: 0.005,
            mem_copy: 1.0,
            power_share: 0.173,
            ..idle()
        },
        // Tiny kernels: utilisation counts any kernel running, the SMs barely notice.
        Workload::TinyKernels => Activity {
            util: 34.6,
            gr: 0.345,
            sm: 0.0005,
            pcie_rx: 0.29e9,
            pcie_tx: 35e6,
            power_share: 0.169,
            ..idle()
        },
        // Streaming kernels (a copy or an element-wise op over large tensors).
        Workload::MemoryBound => Activity {
            util: 99.0,
            gr: 0.98,
            sm: 0.7,
            occupancy: 0.6,
            tensor: 0.0,
            dram: 0.85,
            fp32: 0.12,
            fp16: 0.02,
            mem_copy: 85.0,
            power_share: 0.6,
            ..idle()
        },
        // 105,000 MiB of 143,771 held, nothing running.
        Workload::MemoryIdle => Activity {
            memory_share: 0.73,
            ..idle()
        },
    };
    Some(jitter(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sawtooth_is_busy_a_third_of_each_period() {
        let samples = 1200;
        let busy = (0..samples)
            .filter(|i| {
                let t = 1000.0 + f64::from(*i) * 0.01;
                activity(Workload::Sawtooth, 1, 0, t).is_some_and(|a| a.util > 50.0)
            })
            .count();
        let share = busy as f64 / f64::from(samples);
        let want = SAWTOOTH_BUSY_S / SAWTOOTH_PERIOD_S;
        assert!((share - want).abs() < 0.02, "{share}");
    }

    #[test]
    fn only_the_ecc_burn_throws_errors_and_the_burns_warm_up() {
        for w in Workload::ALL {
            assert_eq!(sbe_per_s(w) > 0.0, w == Workload::BurnEcc, "{w:?}");
        }
        let a = activity(Workload::Burn, 1, 0, 10.0).unwrap();
        assert!(a.util > 98.0 && a.power_share > 0.9 && a.warm_up_s > 0.0);
        let stuck = activity(Workload::BurnStuckClock, 1, 0, 10.0).unwrap();
        assert_eq!(stuck.clock_share, BURN_STUCK_CLOCK_SHARE);
        let hot = activity(Workload::BurnHot, 1, 0, 10.0).unwrap();
        assert_eq!(hot.reasons, REASON_SW_THERMAL);
    }

    #[test]
    fn only_the_training_cycle_is_left_to_the_model() {
        for w in Workload::ALL {
            assert_eq!(
                activity(w, 1, 0, 10.0).is_none(),
                w == Workload::Training,
                "{w:?}"
            );
        }
    }
}
