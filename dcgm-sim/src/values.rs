//! Deterministic pseudo-random numbers: every simulated value is a pure function of the seed,
//! the entity, the field and the time, so tests can assert on what they read.

/// SplitMix64 over three inputs.
pub fn mix(seed: u64, a: u64, b: u64) -> u64 {
    let mut z = seed
        .wrapping_add(a.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(b.wrapping_mul(0xD1B5_4A32_D192_ED69));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in `[0, 1)` from three inputs.
pub fn unit(seed: u64, a: u64, b: u64) -> f64 {
    (mix(seed, a, b) >> 11) as f64 / (1u64 << 53) as f64
}

/// Smooth noise in `[0, 1)`: linear interpolation between per-second random points.
pub fn smooth(seed: u64, a: u64, t_s: f64) -> f64 {
    let k = t_s.floor();
    let f = t_s - k;
    let k = k as u64;
    let v0 = unit(seed, a, k);
    let v1 = unit(seed, a, k + 1);
    v0 + (v1 - v0) * f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_inputs_give_same_numbers_and_different_inputs_differ() {
        assert_eq!(mix(1, 2, 3), mix(1, 2, 3));
        assert_ne!(mix(1, 2, 3), mix(1, 2, 4));
        for i in 0..1000 {
            let u = unit(7, i, 0);
            assert!((0.0..1.0).contains(&u));
        }
    }
}
