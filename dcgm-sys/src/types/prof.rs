//! Profiling: the metric groups a GPU can measure together.

/// Capacity of [`dcgmProfGetMetricGroups_v3::metricGroups`].
pub const DCGM_PROF_MAX_NUM_GROUPS_V2: usize = 10;
/// Capacity of [`dcgmProfMetricGroupInfo_v2::fieldIds`].
pub const DCGM_PROF_MAX_FIELD_IDS_PER_GROUP_V2: usize = 64;

/// A metric group: profiling fields that can be watched at the same time. Groups with
/// different major ids cannot be watched together (before Hopper).
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmProfMetricGroupInfo_v2 {
    pub majorId: u16,
    pub minorId: u16,
    /// Number of valid entries of `fieldIds`.
    pub numFieldIds: u32,
    pub fieldIds: [u16; 64],
}
crate::plain_struct!(dcgmProfMetricGroupInfo_v2, size = 136, align = 4);

/// Input and output of `dcgmProfGetSupportedMetricGroups`: set `gpuId`, get the metric groups.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dcgmProfGetMetricGroups_v3 {
    pub version: u32,
    pub unused: u32,
    /// Input: the GPU to ask about.
    pub gpuId: u32,
    /// Number of valid entries of `metricGroups`.
    pub numMetricGroups: u32,
    pub metricGroups: [dcgmProfMetricGroupInfo_v2; 10],
}
crate::versioned_struct!(
    dcgmProfGetMetricGroups_v3,
    dcgmProfGetMetricGroups_version3 = 3,
    size = 1376,
    word = 0x0300_0560
);
/// Current version of the metric-group query.
pub type dcgmProfGetMetricGroups_t = dcgmProfGetMetricGroups_v3;
/// Current version word of [`dcgmProfGetMetricGroups_t`].
pub const dcgmProfGetMetricGroups_version: u32 = dcgmProfGetMetricGroups_version3;
