//! The NVLink5 checks of the NVLink system. Each error counter compares its first and last
//! sample of the window and fails the GPU from the first error (`DCGM_FR_NVLINK_ERROR_CRITICAL`).
//! The two bit error rates (NVML's packed form: a 4-bit mantissa above an 8-bit exponent,
//! rate = mantissa × 10^-exponent; mantissa 15 with exponent 255 means no errors) read their
//! latest sample of the window: the effective BER fails above 1e-12, the symbol BER above
//! 15 × 10^-255 per link (15 × 10^-238 aggregated, on Blackwell and newer). Then, after the
//! other NVLink checks, the latest value of the link error totals of the GPU's generation fails
//! (or, for successful recoveries, warns) when above 0.

use dcgm_sys::*;

use super::messages::full;
use super::samples::{first_last, latest};
use super::{Ctx, Incident};

/// The counters and rates, in libdcgm's order.
const FIELDS: [u16; 12] = [
    DCGM_FI_DEV_NVLINK_RX_SYMBOL_ERROR_TOTAL,
    DCGM_FI_DEV_NVLINK_EFFECTIVE_BER_RAW,
    DCGM_FI_DEV_NVLINK_RX_PACKET_MALFORMED_TOTAL,
    DCGM_FI_DEV_NVLINK_RX_PACKET_DROPPED_TOTAL,
    DCGM_FI_DEV_NVLINK_RX_ERROR_TOTAL,
    DCGM_FI_DEV_NVLINK_RX_REMOTE_ERROR_TOTAL,
    DCGM_FI_DEV_NVLINK_RX_GENERAL_ERROR_TOTAL,
    DCGM_FI_DEV_NVLINK_INTEGRITY_ERROR_TOTAL,
    DCGM_FI_DEV_NVLINK_RECOVERY_EVENT_TOTAL,
    DCGM_FI_DEV_NVLINK_EFFECTIVE_ERROR_TOTAL,
    DCGM_FI_DEV_NVLINK_SYMBOL_BER_RAW,
    DCGM_FI_DEV_NVLINK_ECC_ERROR_TOTAL,
];

/// Errors in the window from which a counter fails the GPU.
const ERROR_LIMIT: i64 = 1;
/// The mantissa and exponent NVML uses for a rate of zero.
const ZERO_BER: (u64, u64) = (15, 255);
/// The symbol BER's healthy floor: its mantissa, and its exponent per link and aggregated.
const SYMBOL_FLOOR_MANTISSA: u64 = 15;
const SYMBOL_FLOOR_EXP_PER_LINK: u64 = 255;
const SYMBOL_FLOOR_EXP_AGGREGATED: u64 = 238;

/// The mantissa, the exponent and the rate of a packed BER.
pub fn parse_ber(raw: i64) -> (u64, u64, f64) {
    let mantissa = ((raw >> 8) & 0xf) as u64;
    let exponent = (raw & 0xff) as u64;
    (
        mantissa,
        exponent,
        mantissa as f64 * 10f64.powf(-(exponent as f64)),
    )
}

/// Whether an effective BER is above 1e-12 (1 × 10^-12, or 10 × 10^-13).
pub fn effective_ber_exceeded(mantissa: u64, exponent: u64) -> bool {
    (mantissa, exponent) != ZERO_BER
        && (exponent < 12 || (exponent == 12 && mantissa > 1) || (exponent == 13 && mantissa > 10))
}

/// Whether a symbol BER is above its floor (a mantissa of 0 is a rate of zero).
pub fn symbol_ber_exceeded(mantissa: u64, exponent: u64, floor_exponent: u64) -> bool {
    mantissa != 0
        && (exponent < floor_exponent
            || (exponent == floor_exponent && mantissa > SYMBOL_FLOOR_MANTISSA))
}

/// Whether the GPU behind the entity is a Blackwell or newer, as its CUDA compute capability
/// (major version 10 and up) says; unknown counts as older, as in libdcgm.
fn blackwell_or_newer(c: &Ctx) -> bool {
    latest(c, DCGM_FI_CUDA_GPU_COMPUTE_CAPABILITY).is_some_and(|cc| (cc >> 16) >= 10)
}

/// A number as C's `%.2e` writes it (the exponent has at least two digits).
fn c_exp(v: f64) -> String {
    let s = format!("{v:.2e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// The NVLink5 counters and bit error rates.
pub fn check(c: &Ctx, out: &mut Vec<Incident>) {
    let gpu = c.entity.entityId;
    for field in FIELDS {
        let Some((first, last)) = first_last(c, field, c.start) else {
            continue;
        };
        if field == DCGM_FI_DEV_NVLINK_EFFECTIVE_BER_RAW
            || field == DCGM_FI_DEV_NVLINK_SYMBOL_BER_RAW
        {
            let (mantissa, exponent, ber) = parse_ber(last);
            let (exceeded, code, kind) = if field == DCGM_FI_DEV_NVLINK_EFFECTIVE_BER_RAW {
                (
                    effective_ber_exceeded(mantissa, exponent),
                    DCGM_FR_NVLINK_EFFECTIVE_BER_THRESHOLD,
                    "effective",
                )
            } else {
                let floor = if blackwell_or_newer(c) {
                    SYMBOL_FLOOR_EXP_AGGREGATED
                } else {
                    SYMBOL_FLOOR_EXP_PER_LINK
                };
                (
                    symbol_ber_exceeded(mantissa, exponent, floor),
                    DCGM_FR_NVLINK_SYMBOL_BER_THRESHOLD,
                    "symbol",
                )
            };
            if exceeded {
                let msg = format!(
                    "Detected {kind} BER {} exceeds minimum threshold on GPU {gpu}'s NVLink.",
                    c_exp(ber)
                );
                c.report(
                    out,
                    DCGM_HEALTH_WATCH_NVLINK,
                    DCGM_HEALTH_RESULT_FAIL,
                    code,
                    full(code, msg),
                );
            }
            continue;
        }
        let errors = (last - first).abs();
        if errors >= ERROR_LIMIT {
            let tag = field_by_id(field).map_or("", |f| f.tag);
            critical(c, out, DCGM_HEALTH_RESULT_FAIL, errors, tag);
        }
    }
}

fn critical(
    c: &Ctx,
    out: &mut Vec<Incident>,
    health: dcgmHealthWatchResults_t,
    errors: i64,
    what: &str,
) {
    let gpu = c.entity.entityId;
    let code = DCGM_FR_NVLINK_ERROR_CRITICAL;
    let msg = format!("Detected {errors} {what} NvLink errors on GPU {gpu}'s NVLink (should be 0)");
    c.report(out, DCGM_HEALTH_WATCH_NVLINK, health, code, full(code, msg));
}

/// The link error totals of the GPU's generation, by their latest value: on Blackwell and newer
/// the successful (warn) and failed (fail) link recoveries, before it the data-link layer's
/// CRC, recovery and replay totals (fail).
pub fn error_totals(c: &Ctx, out: &mut Vec<Incident>) {
    let totals: &[(u16, &str, dcgmHealthWatchResults_t)] = if blackwell_or_newer(c) {
        &[
            (
                DCGM_FI_DEV_NVLINK_RECOVERY_SUCCESSFUL_TOTAL,
                "link recovery successful events counter",
                DCGM_HEALTH_RESULT_WARN,
            ),
            (
                DCGM_FI_DEV_NVLINK_RECOVERY_FAILED_TOTAL,
                "link recovery failed events counter",
                DCGM_HEALTH_RESULT_FAIL,
            ),
        ]
    } else {
        &[
            (
                DCGM_FI_DEV_NVLINK_CRC_ERROR_TOTAL,
                "datalink layer CRC error counter",
                DCGM_HEALTH_RESULT_FAIL,
            ),
            (
                DCGM_FI_DEV_NVLINK_RECOVERY_TOTAL,
                "datalink layer recovery error counter",
                DCGM_HEALTH_RESULT_FAIL,
            ),
            (
                DCGM_FI_DEV_NVLINK_REPLAY_TOTAL,
                "datalink layer replay error counter",
                DCGM_HEALTH_RESULT_FAIL,
            ),
        ]
    };
    for &(field, what, health) in totals {
        if let Some(n) = latest(c, field)
            && n > 0
        {
            critical(c, out, health, n, what);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_ber_threshold_is_1e_minus_12() {
        // 10 × 10^-13 is exactly 1e-12: passes; 11 × 10^-13 fails; zero never fails.
        assert!(!effective_ber_exceeded(10, 13));
        assert!(effective_ber_exceeded(11, 13));
        assert!(!effective_ber_exceeded(1, 12));
        assert!(effective_ber_exceeded(2, 12));
        assert!(!effective_ber_exceeded(15, 255));
        assert!(!effective_ber_exceeded(9, 14));
    }

    #[test]
    fn packed_ber_splits_mantissa_and_exponent() {
        let (m, e, ber) = parse_ber((11 << 8) | 13);
        assert_eq!((m, e), (11, 13));
        assert!((ber - 1.1e-12).abs() < 1e-24);
        assert_eq!(parse_ber(4095).0, 15);
        assert_eq!(parse_ber(4095).1, 255);
    }

    #[test]
    fn symbol_ber_floor() {
        assert!(!symbol_ber_exceeded(0, 5, 255));
        assert!(symbol_ber_exceeded(3, 232, 255));
        assert!(!symbol_ber_exceeded(15, 255, 255));
        assert!(!symbol_ber_exceeded(3, 240, 238));
        assert!(symbol_ber_exceeded(3, 232, 238));
    }

    #[test]
    fn exponents_print_as_c_does() {
        assert_eq!(c_exp(1.1e-12), "1.10e-12");
        assert_eq!(c_exp(3e-5), "3.00e-05");
        assert_eq!(c_exp(3e-232), "3.00e-232");
    }
}
