//! What the doctor concludes: findings, with their evidence.

use std::fmt;

use serde::Serialize;

/// How much a finding matters. Ordered: `Info < Warning < Problem`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing to fix (a healthy compute-bound job).
    Info,
    /// Costs performance or resources; worth a look.
    Warning,
    /// The GPU is held back, or broken: fix this first.
    Problem,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Problem => "problem",
        })
    }
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Kind {
    /// The GPU waits on its input: full-speed bursts with idle gaps between them, or low
    /// utilisation of kernels that fill the SMs.
    InputStarved,
    /// The GPU is busy moving data over PCIe while its SMs idle.
    PcieTransferBound,
    /// Host-bound: a process keeps the GPU lightly busy with kernels too small to fill it, so
    /// the host (launching them, Python, waiting on results) sets the pace, whatever the
    /// utilisation. `launch_bound` by name, as before it covered low utilisation too.
    LaunchBound,
    /// DRAM bandwidth, not math, sets the pace.
    MemoryBandwidthBound,
    /// The SMs and a math pipe are busy: the GPU does what it is for.
    ComputeBound,
    /// The math runs in the FP32 (or FP64) pipes while the tensor cores idle.
    TensorCoresUnused,
    /// Mostly idle: short bursts of full-speed work far apart, or a little work spread thin
    /// (a service waiting for requests); not a problem in itself.
    MostlyIdle,
    /// Clocks held down by the power limit.
    PowerCapped,
    /// Clocks held down by temperature.
    ThermalThrottled,
    /// One GPU slower than its peers running alike.
    Straggler,
    /// GPU memory held while nothing runs.
    MemoryHeldIdle,
    /// XID, ECC, PCIe replay or NVLink errors during the window.
    HardwareErrors,
    /// More than one process on the GPU.
    SharedGpu,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 13] = [
        Kind::InputStarved,
        Kind::PcieTransferBound,
        Kind::LaunchBound,
        Kind::MemoryBandwidthBound,
        Kind::ComputeBound,
        Kind::TensorCoresUnused,
        Kind::MostlyIdle,
        Kind::PowerCapped,
        Kind::ThermalThrottled,
        Kind::Straggler,
        Kind::MemoryHeldIdle,
        Kind::HardwareErrors,
        Kind::SharedGpu,
    ];

    /// The kind's name as `--json` writes it (`input_starved`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::InputStarved => "input_starved",
            Kind::PcieTransferBound => "pcie_transfer_bound",
            Kind::LaunchBound => "launch_bound",
            Kind::MemoryBandwidthBound => "memory_bandwidth_bound",
            Kind::ComputeBound => "compute_bound",
            Kind::TensorCoresUnused => "tensor_cores_unused",
            Kind::MostlyIdle => "mostly_idle",
            Kind::PowerCapped => "power_capped",
            Kind::ThermalThrottled => "thermal_throttled",
            Kind::Straggler => "straggler",
            Kind::MemoryHeldIdle => "memory_held_idle",
            Kind::HardwareErrors => "hardware_errors",
            Kind::SharedGpu => "shared_gpu",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One number behind a finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// What was measured (`sm_active_mean`).
    pub name: &'static str,
    /// Its value.
    pub value: f64,
    /// Its unit (`ratio`, `%`, `B/s`, `s`, `MHz`, `W`, `MiB`, `count`).
    pub unit: &'static str,
}

impl Evidence {
    /// A number with its name and unit.
    pub fn new(name: &'static str, value: f64, unit: &'static str) -> Self {
        Evidence { name, value, unit }
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.value;
        match self.unit {
            "B/s" => write!(f, "{} {:.2} GB/s", self.name, v / 1e9),
            "ratio" => write!(f, "{} {:.3}", self.name, v),
            "count" => write!(f, "{} {}", self.name, v),
            u => write!(f, "{} {:.1} {u}", self.name, v),
        }
    }
}

/// A conclusion about one or more GPUs over a stretch of time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// What it is.
    pub kind: Kind,
    /// How much it matters.
    pub severity: Severity,
    /// The GPUs it concerns.
    pub gpus: Vec<u32>,
    /// When the evidence starts, ms since the Unix epoch.
    pub start_ms: i64,
    /// When it ends (the last sample's time), ms.
    pub end_ms: i64,
    /// The numbers that support it.
    pub evidence: Vec<Evidence>,
    /// What is happening, in one line of plain language.
    pub explanation: String,
    /// What to try.
    pub advice: String,
}

impl Finding {
    /// The value of the evidence named `name`.
    pub fn evidence(&self, name: &str) -> Option<f64> {
        self.evidence
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.value)
    }
}

/// A kind the doctor could not judge, and why (the fields it lacked).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotJudged {
    /// The kind.
    pub kind: Kind,
    /// Why: the fields missing, or what else was lacking.
    pub reason: String,
}

/// A GPU whose samples stop before the window ends: it fell off the bus, was reset, or was
/// taken away during the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stopped {
    /// The GPU.
    pub gpu: u32,
    /// Its last sample, ms since the Unix epoch.
    pub last_ms: i64,
}

/// One process seen on a GPU during the window: who holds how much of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProcessUse {
    /// The GPU.
    pub gpu: u32,
    /// Its process id.
    pub pid: u32,
    /// Its command name, where known.
    pub name: Option<String>,
    /// The most GPU memory it was seen holding, MiB, where known.
    pub memory_mib: Option<u64>,
    /// That memory as a share of the GPU's, where both are known.
    pub memory_share: Option<f64>,
    /// Its SM utilisation, % (the latest DCGM gave: see [`crate::GpuProcess::sm_util`]),
    /// where DCGM has it.
    pub sm_util: Option<f64>,
    /// The share of the GPU's process lists that listed it.
    pub listed_share: f64,
    /// First and last sample that listed it, ms since the Unix epoch.
    pub first_ms: i64,
    /// See `first_ms`.
    pub last_ms: i64,
}

/// Everything the doctor concluded about a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The findings, worst first, then by time.
    pub findings: Vec<Finding>,
    /// The kinds that could not be judged.
    pub not_judged: Vec<NotJudged>,
    /// The GPUs judged.
    pub gpus: Vec<u32>,
    /// The GPUs that stopped reporting before the window's end.
    pub stopped: Vec<Stopped>,
    /// The processes on each GPU during the window, by GPU, the most memory first (empty
    /// where the process lists were not read: a replay carries none).
    pub processes: Vec<ProcessUse>,
    /// First and last sample, ms since the Unix epoch.
    pub span_ms: Option<(i64, i64)>,
    /// How many samples, of every GPU.
    pub samples: usize,
    /// The samples came from the simulator.
    pub simulated: bool,
}

impl Report {
    /// The worst severity of any finding (`None` when there is none).
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// The findings of one kind.
    pub fn of_kind(&self, kind: Kind) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.kind == kind)
    }
}
