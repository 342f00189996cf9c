//! `DCGM_EXP_GPU_INFO`: one series of value 1 per exported GPU or MIG instance whose labels
//! are the GPU's identity and versions ([`GpuInfo`]), to join on rather than repeating them as
//! labels of every series (dcgm-exporter#72).

use std::collections::BTreeMap;

use dcgm::{FieldId, FieldValue, Value};

use crate::identity::{LabelSet, labels};

/// The fields [`GpuInfo`] is read from, in the order of its members: driver version, VBIOS
/// version, CUDA compute capability, MIG mode.
pub const GPU_INFO_FIELDS: [&str; 4] = [
    "DCGM_FI_DRIVER_VERSION",
    "DCGM_FI_DEV_VBIOS_VERSION",
    "DCGM_FI_CUDA_GPU_COMPUTE_CAPABILITY",
    "DCGM_FI_DEV_MIG_MODE",
];

/// The [`GPU_INFO_FIELDS`] as field ids (those this DCGM build knows).
pub(super) fn gpu_info_fields() -> Vec<FieldId> {
    GPU_INFO_FIELDS
        .iter()
        .filter_map(|n| FieldId::by_name(n))
        .collect()
}

/// What `DCGM_EXP_GPU_INFO` says about a physical GPU beyond its identity. A member DCGM has
/// no value for is `None`, and its label is left out (never a sentinel, never empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuInfo {
    /// `driver_version`: the NVIDIA driver's version (`570.133.20`).
    pub driver_version: Option<String>,
    /// `vbios_version`: the VBIOS version (`96.00.99.00.01`).
    pub vbios_version: Option<String>,
    /// `cuda_compute_capability`: `major.minor` (`9.0`).
    pub compute_capability: Option<String>,
    /// `mig_mode`: `enabled` or `disabled` (the current mode).
    pub mig_mode: Option<bool>,
}

fn text(v: Option<&FieldValue>) -> Option<String> {
    match v.map(|v| &v.value) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    }
}

fn int(v: Option<&FieldValue>) -> Option<i64> {
    v.and_then(|v| v.value.as_i64())
}

impl GpuInfo {
    /// The info in one entity's latest values (blank or missing values stay `None`).
    ///
    /// ```
    /// use dcgm::{Entity, FieldId, FieldValue, ReturnCode, Value};
    /// use dcgm_prometheus::GpuInfo;
    /// let fv = |name: &str, value| {
    ///     let field = FieldId::by_name(name).unwrap();
    ///     (field, FieldValue { entity: Entity::gpu(0), field, timestamp_us: 0, value, status: ReturnCode::Ok })
    /// };
    /// let values = [
    ///     fv("DCGM_FI_CUDA_GPU_COMPUTE_CAPABILITY", Value::Int(0x0009_0000)),
    ///     fv("DCGM_FI_DEV_MIG_MODE", Value::Int(1)),
    ///     fv("DCGM_FI_DEV_VBIOS_VERSION", Value::Blank(dcgm::BlankKind::NotSupported)),
    /// ].into_iter().collect();
    /// let info = GpuInfo::from_values(&values);
    /// assert_eq!(info.compute_capability.as_deref(), Some("9.0"));
    /// assert_eq!(info.mig_mode, Some(true));
    /// assert_eq!(info.vbios_version, None);
    /// ```
    pub fn from_values(values: &BTreeMap<FieldId, FieldValue>) -> Self {
        let get = |i: usize| FieldId::by_name(GPU_INFO_FIELDS[i]).and_then(|f| values.get(&f));
        Self {
            driver_version: text(get(0)),
            vbios_version: text(get(1)),
            // DCGM packs the capability as major << 16 | minor.
            compute_capability: int(get(2))
                .filter(|n| *n > 0 && *n <= i64::from(u32::MAX))
                .map(|n| format!("{}.{}", n >> 16, n & 0xffff)),
            mig_mode: int(get(3)).filter(|m| *m == 0 || *m == 1).map(|m| m == 1),
        }
    }

    /// Its `DCGM_EXP_GPU_INFO` labels: those of the members that have a value.
    pub(crate) fn labels(&self) -> LabelSet {
        let mig = self
            .mig_mode
            .map(|m| if m { "enabled" } else { "disabled" });
        [
            (labels::DRIVER_VERSION, self.driver_version.as_deref()),
            (labels::VBIOS_VERSION, self.vbios_version.as_deref()),
            (
                labels::CUDA_COMPUTE_CAPABILITY,
                self.compute_capability.as_deref(),
            ),
            (labels::MIG_MODE, mig),
        ]
        .into_iter()
        .filter_map(|(n, v)| v.map(|v| (n.to_string(), v.to_string())))
        .collect()
    }
}
