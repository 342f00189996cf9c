//! The precisions a burn runs in, and what each means to cuBLAS and to the simulator's model.

use std::fmt;

use serde::Serialize;

/// The precision of the matrix products (`--dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    /// IEEE single precision in the FP32 pipes (no tensor cores): SGEMM.
    Fp32,
    /// IEEE double precision (tensor cores on Hopper and Ampere).
    Fp64,
    /// bfloat16 inputs and output, FP32 accumulation, tensor cores.
    Bf16,
    /// half-precision inputs and output, FP32 accumulation, tensor cores.
    Fp16,
    /// FP32 data, TF32 tensor-core math (`CUBLAS_COMPUTE_32F_FAST_TF32`).
    Tf32,
}

impl Dtype {
    /// Bytes per element of the matrices.
    pub fn size(self) -> usize {
        match self {
            Dtype::Fp64 => 8,
            Dtype::Fp32 | Dtype::Tf32 => 4,
            Dtype::Bf16 | Dtype::Fp16 => 2,
        }
    }

    /// Its name on the command line (`bf16`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Fp32 => "fp32",
            Dtype::Fp64 => "fp64",
            Dtype::Bf16 => "bf16",
            Dtype::Fp16 => "fp16",
            Dtype::Tf32 => "tf32",
        }
    }

    /// Whether cuBLAS runs it on the tensor cores.
    pub fn tensor_cores(self) -> bool {
        !matches!(self, Dtype::Fp32)
    }

    /// The dense peak, TFLOPS, of a GPU model at its maximum SM clock, from NVIDIA's data
    /// sheets (SXM boards; A100, H100/H200, and the H100's for any other name). Used only by
    /// the simulated load's model.
    pub fn peak_tflops(self, model: &str) -> f64 {
        let a100 = model.contains("A100");
        match (self, a100) {
            (Dtype::Fp64, true) | (Dtype::Fp32, true) => 19.5,
            (Dtype::Tf32, true) => 156.0,
            (Dtype::Bf16 | Dtype::Fp16, true) => 312.0,
            (Dtype::Fp64, false) | (Dtype::Fp32, false) => 67.0,
            (Dtype::Tf32, false) => 494.7,
            (Dtype::Bf16 | Dtype::Fp16, false) => 989.4,
        }
    }
}

impl std::str::FromStr for Dtype {
    type Err = String;

    /// `fp32`, `fp64`, `bf16`, `fp16` or `tf32`.
    fn from_str(s: &str) -> Result<Self, String> {
        [
            Dtype::Fp32,
            Dtype::Fp64,
            Dtype::Bf16,
            Dtype::Fp16,
            Dtype::Tf32,
        ]
        .into_iter()
        .find(|d| d.name() == s)
        .ok_or_else(|| format!("unknown dtype {s:?} (fp32, fp64, bf16, fp16 or tf32)"))
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_precisions_have_the_higher_peaks() {
        let h = "NVIDIA H200";
        assert!(Dtype::Bf16.peak_tflops(h) > Dtype::Tf32.peak_tflops(h));
        assert!(Dtype::Tf32.peak_tflops(h) > Dtype::Fp32.peak_tflops(h));
        assert!(Dtype::Bf16.peak_tflops("NVIDIA A100-SXM4-80GB") < Dtype::Bf16.peak_tflops(h));
        assert_eq!(Dtype::Fp16.size(), 2);
        assert!(!Dtype::Fp32.tensor_cores() && Dtype::Tf32.tensor_cores());
        assert_eq!("tf32".parse(), Ok(Dtype::Tf32));
        assert!("int8".parse::<Dtype>().unwrap_err().contains("bf16"));
    }
}
