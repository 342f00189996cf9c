//! The load on the simulator (`--simulate`): dcgm-sim has no CUDA, so nothing is computed.
//! Its GPUs run the `burn` workload profile (utilisation, power, clocks and temperature as a
//! real stress test moves them) and each GPU's TFLOPS are modelled from what DCGM reads:
//! the dtype's data-sheet peak for the model, times [`EFFICIENCY`], times the SM clock's share
//! of its maximum, times the utilisation. Every output says the data is simulated.

use dcgm_doctor::{Field, Sample};

use crate::dtype::Dtype;

/// The share of the data-sheet peak a large GEMM sustains at full clock (cuBLAS on an H100 or
/// H200 at 8192: about 0.7 of the dense bf16 peak).
pub const EFFICIENCY: f64 = 0.7;

/// Modelled TFLOPS of a GPU of `model` running `dtype` products, from one sample; `None`
/// where the sample lacks the SM clock or its maximum.
pub fn tflops(dtype: Dtype, model: &str, s: &Sample) -> Option<f64> {
    let clock = s.get(Field::SmClock)?;
    let max = s.get(Field::SmMaxClock).filter(|m| *m > 0.0)?;
    let util = s.get(Field::GpuUtil).unwrap_or(100.0) / 100.0;
    Some(dtype.peak_tflops(model) * EFFICIENCY * (clock / max).min(1.0) * util.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tflops_follow_the_clock_share() {
        let s = |clock: f64| {
            Sample::new(0, 0)
                .with(Field::SmClock, clock)
                .with(Field::SmMaxClock, 1980.0)
                .with(Field::GpuUtil, 100.0)
        };
        let full = tflops(Dtype::Bf16, "NVIDIA H200", &s(1980.0)).unwrap();
        assert!((full - 989.4 * EFFICIENCY).abs() < 1e-9);
        let stuck = tflops(Dtype::Bf16, "NVIDIA H200", &s(396.0)).unwrap();
        assert!((stuck / full - 0.2).abs() < 1e-9);
        assert_eq!(tflops(Dtype::Bf16, "x", &Sample::new(0, 0)), None);
    }
}
