//! The verdicts of the `DCGM_EXP_GPU_HEALTH_STATUS` and `DCGM_EXP_P2P_STATUS` rows: health
//! watches per GPU ([`GpuHealth`]) and NVLink peer-to-peer statuses.

use dcgm::{EntityGroup, HealthReport, HealthResult, HealthSystems, Incident, P2pStatus};

/// The health watches `DCGM_EXP_GPU_HEALTH_STATUS` reports for every GPU, in dcgm-exporter's
/// order, with their `health_watch` label values. `ALL` carries incidents DCGM files under no
/// single subsystem.
pub const HEALTH_WATCHES: [(HealthSystems, &str); 11] = [
    (HealthSystems::PCIE, "PCIE"),
    (HealthSystems::NVLINK, "NVLINK"),
    (HealthSystems::PMU, "PMU"),
    (HealthSystems::MCU, "MCU"),
    (HealthSystems::MEM, "MEM"),
    (HealthSystems::SM, "SM"),
    (HealthSystems::INFOROM, "INFOROM"),
    (HealthSystems::THERMAL, "THERMAL"),
    (HealthSystems::POWER, "POWER"),
    (HealthSystems::DRIVER, "DRIVER"),
    (HealthSystems::ALL, "ALL"),
];

/// One health watch's verdict for one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HealthVerdict {
    /// Pass, warn or fail.
    pub result: HealthResult,
    /// The failure reason (`DCGM_FR_*`; 0, `DCGM_FR_OK`, when it passes).
    pub error_code: u32,
}

impl HealthVerdict {
    /// The sample value: DCGM's `dcgmHealthWatchResults_t` (0 pass, 10 warn, 20 fail), as
    /// dcgm-exporter exports it.
    pub fn value(&self) -> u32 {
        self.result.code()
    }

    /// The failure reason's name (`DCGM_FR_*`; `DCGM_FR_UNKNOWN(<code>)` for a code DCGM
    /// does not name), the `health_error_code` label.
    pub(crate) fn error_code_name(&self) -> String {
        match dcgm::failure_reason_name(self.error_code) {
            Some(n) => n.to_string(),
            None => format!("DCGM_FR_UNKNOWN({})", self.error_code),
        }
    }
}

/// The verdicts of one health check, per GPU and health watch, for the
/// `DCGM_EXP_GPU_HEALTH_STATUS` row: every watch of every GPU passes unless an incident of
/// the check says otherwise (the worst incident of a watch wins).
///
/// ```
/// use dcgm::{Entity, HealthReport, HealthResult, HealthSystems, Incident};
/// use dcgm_prometheus::GpuHealth;
/// let mut h = GpuHealth::new([0, 1]);
/// h.apply(&HealthReport {
///     overall: HealthResult::Fail,
///     incidents: vec![Incident {
///         system: HealthSystems::MEM,
///         result: HealthResult::Fail,
///         error_code: 4, // DCGM_FR_VOLATILE_DBE_DETECTED
///         error_name: None,
///         category: None,
///         severity: None,
///         suggestion: None,
///         message: "2 DBEs".into(),
///         entity: Entity::gpu(1),
///     }],
/// });
/// assert_eq!(h.verdict(1, HealthSystems::MEM).unwrap().value(), 20);
/// assert_eq!(h.verdict(0, HealthSystems::MEM).unwrap().value(), 0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuHealth {
    gpus: Vec<(u32, [HealthVerdict; HEALTH_WATCHES.len()])>,
}

impl GpuHealth {
    /// Every watch of these GPUs passing.
    pub fn new(gpus: impl IntoIterator<Item = u32>) -> Self {
        let mut ids: Vec<u32> = gpus.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        Self {
            gpus: ids
                .into_iter()
                .map(|g| (g, [HealthVerdict::default(); HEALTH_WATCHES.len()]))
                .collect(),
        }
    }

    /// The GPUs, in order.
    pub fn gpus(&self) -> impl Iterator<Item = u32> + '_ {
        self.gpus.iter().map(|(g, _)| *g)
    }

    /// Every watch of every GPU back to passing.
    pub fn clear(&mut self) {
        for (_, v) in &mut self.gpus {
            *v = [HealthVerdict::default(); HEALTH_WATCHES.len()];
        }
    }

    /// Records an incident, if it concerns one of the GPUs and one of [`HEALTH_WATCHES`];
    /// returns whether it did. A watch keeps its worst incident.
    pub fn record(&mut self, incident: &Incident) -> bool {
        if incident.entity.group != EntityGroup::Gpu {
            return false;
        }
        let Some(w) = HEALTH_WATCHES
            .iter()
            .position(|(s, _)| *s == incident.system)
        else {
            return false;
        };
        let Some((_, v)) = self.gpus.iter_mut().find(|(g, _)| *g == incident.entity.id) else {
            return false;
        };
        if incident.result > v[w].result {
            v[w] = HealthVerdict {
                result: incident.result,
                error_code: incident.error_code,
            };
        }
        true
    }

    /// The verdicts of one health check: [`GpuHealth::clear`], then every incident recorded.
    pub fn apply(&mut self, report: &HealthReport) {
        self.clear();
        for i in &report.incidents {
            self.record(i);
        }
    }

    /// The verdict of one watch of one GPU.
    pub fn verdict(&self, gpu: u32, watch: HealthSystems) -> Option<HealthVerdict> {
        let w = HEALTH_WATCHES.iter().position(|(s, _)| *s == watch)?;
        self.verdicts(gpu).map(|v| v[w])
    }

    /// The verdicts of one GPU, in [`HEALTH_WATCHES`] order.
    pub fn verdicts(&self, gpu: u32) -> Option<&[HealthVerdict; HEALTH_WATCHES.len()]> {
        self.gpus.iter().find(|(g, _)| *g == gpu).map(|(_, v)| v)
    }
}

/// A peer-to-peer status as dcgm-exporter exports it in `DCGM_EXP_P2P_STATUS`: the sample value
/// (DCGM's `dcgmNvLinkP2PStatus_t`) and the `link_status` label.
///
/// ```
/// use dcgm::P2pStatus;
/// use dcgm_prometheus::p2p_status_value;
/// assert_eq!(p2p_status_value(P2pStatus::Ok), (0, "OK"));
/// assert_eq!(p2p_status_value(P2pStatus::TopologyNotSupported), (3, "TopologyNotSupported"));
/// ```
pub fn p2p_status_value(s: P2pStatus) -> (u32, &'static str) {
    match s {
        P2pStatus::Ok => (0, "OK"),
        P2pStatus::ChipsetNotSupported => (1, "ChipsetNotSupported"),
        P2pStatus::GpuNotSupported => (2, "GPUNotSupported"),
        P2pStatus::TopologyNotSupported => (3, "TopologyNotSupported"),
        P2pStatus::DisabledByRegKey => (4, "DisabledByRegKey"),
        P2pStatus::NotSupported => (5, "NotSupported"),
        P2pStatus::Unknown => (6, "Unknown"),
    }
}
