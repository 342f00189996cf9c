//! Tensor cores unused: the math runs in the FP32 (or FP64) pipes while the tensor cores idle.
//! FP32 matrix math with TF32 off (PyTorch's default for matmuls) runs on the plain FP32 pipes
//! at a fraction of the tensor cores' rate: the H200 field trace's `fp32_no_tf32` (8192²
//! matmuls) kept the FP32 pipes 77 % busy and the tensor pipes at 0.

use crate::field::Field;
use crate::finding::{Evidence, Finding, Kind, Severity};
use crate::segment::{PIPE_BUSY_RATIO, Regime, SM_IDLE_RATIO};

use super::Stretch;

/// The tensor pipes below this share of cycles are idle (the level below which the SMs are).
pub const TENSOR_IDLE_RATIO: f64 = SM_IDLE_RATIO;

const FP32_ADVICE: &str = "let matrix math use the tensor cores: allow TF32 \
                           (torch.set_float32_matmul_precision(\"high\"), or \
                           torch.backends.cuda.matmul.allow_tf32 = True and \
                           torch.backends.cudnn.allow_tf32 = True), or run in bf16/fp16 under \
                           autocast (torch.autocast(\"cuda\", dtype=torch.bfloat16)); FP32 work \
                           that is not matrix math (element-wise ops, reductions) gains from \
                           fusing (torch.compile) instead";

const FP64_ADVICE: &str = "if the work does not need double precision, run it in FP32 with TF32 \
                           or in bf16 under autocast (tensor cores); FP64 matrix math belongs in \
                           cuBLAS/cuSOLVER, which run it on the FP64 tensor cores";

/// The FP pipe (FP32 or FP64) doing the math, its mean and the tensor pipes' mean, where the
/// tensor cores idle while it is busy.
pub(super) fn unused(st: &Stretch<'_>) -> Option<(Field, f64, f64)> {
    if st.segment.regime == Regime::Periodic {
        return None;
    }
    let tensor = st.mean(Field::TensorActive)?;
    let (pipe, busy) = [Field::Fp32Active, Field::Fp64Active]
        .into_iter()
        .filter_map(|f| st.mean(f).map(|v| (f, v)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    (busy >= PIPE_BUSY_RATIO && tensor < TENSOR_IDLE_RATIO).then_some((pipe, busy, tensor))
}

pub(super) fn judge(st: &Stretch<'_>) -> Vec<Finding> {
    let Some((pipe, busy, tensor)) = unused(st) else {
        return Vec::new();
    };
    let (name, evidence_name, advice) = if pipe == Field::Fp64Active {
        ("FP64", "fp64_active_mean", FP64_ADVICE)
    } else {
        ("FP32", "fp32_active_mean", FP32_ADVICE)
    };
    let mut ev = vec![
        Evidence::new(evidence_name, busy, "ratio"),
        Evidence::new("tensor_active_mean", tensor, "ratio"),
    ];
    for (n, f) in [
        ("sm_active_mean", Field::SmActive),
        ("dram_active_mean", Field::DramActive),
    ] {
        if let Some(v) = st.mean(f) {
            ev.push(Evidence::new(n, v, "ratio"));
        }
    }
    vec![st.finding(
        Kind::TensorCoresUnused,
        Severity::Warning,
        ev,
        format!(
            "the math runs in the {name} pipes, busy {:.0} % of cycles, while the tensor cores \
             idle ({:.1} %): compute-bound in the slow pipes, at a fraction of the rate the \
             tensor cores give",
            busy * 100.0,
            tensor * 100.0
        ),
        advice,
    )]
}
