//! One GPU's readings at one moment.

use serde::Serialize;

use crate::field::Field;

/// A process on a GPU, as DCGM lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuProcess {
    /// Its process id.
    pub pid: u32,
    /// Its command name, where known.
    pub name: Option<String>,
    /// GPU memory it holds, MiB, where known.
    pub memory_mib: Option<u64>,
    /// Its SM utilisation on the GPU, %, as DCGM's process statistics give it
    /// (`dcgmGetPidInfo`: its share of the GPU's per-process samples times its utilisation in
    /// them, over the watch's time), where DCGM has it (accounting mode, which needs root).
    pub sm_util: Option<f64>,
}

/// The readings of one GPU at one moment. A field DCGM had no value for is blank (`None`):
/// the doctor treats it as unknown, never as 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Wall-clock time of the reading, milliseconds since the Unix epoch.
    pub timestamp_ms: i64,
    /// The GPU's id.
    pub gpu: u32,
    values: [Option<f64>; Field::ALL.len()],
    /// The processes on the GPU; `None` where they were not read (a replay file has none).
    pub processes: Option<Vec<GpuProcess>>,
}

impl Sample {
    /// A sample with every field blank.
    pub fn new(timestamp_ms: i64, gpu: u32) -> Self {
        Sample {
            timestamp_ms,
            gpu,
            values: [None; Field::ALL.len()],
            processes: None,
        }
    }

    /// The value of `field`, `None` when blank.
    pub fn get(&self, field: Field) -> Option<f64> {
        self.values[field.index()]
    }

    /// Sets `field`; a non-finite number is stored as blank.
    pub fn set(&mut self, field: Field, value: Option<f64>) {
        self.values[field.index()] = value.filter(|v| v.is_finite());
    }

    /// The sample with `field` set to `value` (for building samples in code).
    ///
    /// ```
    /// use dcgm_doctor::{Field, Sample};
    /// let s = Sample::new(0, 0).with(Field::GpuUtil, 40.0);
    /// assert_eq!(s.get(Field::GpuUtil), Some(40.0));
    /// assert_eq!(s.get(Field::SmActive), None);
    /// ```
    pub fn with(mut self, field: Field, value: f64) -> Self {
        self.set(field, Some(value));
        self
    }

    /// The larger of the PCIe directions, bytes/s: a copy loads one direction, so the busier
    /// one is what is judged against the link's rate (a PCIe link is full duplex).
    pub fn pcie_bytes(&self) -> Option<f64> {
        match (self.get(Field::PcieRxBytes), self.get(Field::PcieTxBytes)) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}
