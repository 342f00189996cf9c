//! The report's blocks in nvidia-smi's order, the `-d` sections that print each, and which
//! section module writes it.

use super::gpu::Gpu;
use super::read::Process;
use super::text::Report;

/// The blocks of the report in nvidia-smi's order, each with the sections that print it. The
/// order is the report's whatever the order of `-d`, and a block shared by two sections
/// (the clock-event reasons) is printed once.
pub(super) const BLOCKS: &[(Block, &[&str])] = &[
    (Block::Pci, &["PCIE"]),
    (Block::PerformanceState, &["PERFORMANCE"]),
    (Block::EventReasons, &["PERFORMANCE", "CLOCK"]),
    (Block::EventReasonCounters, &["PERFORMANCE", "CLOCK"]),
    (Block::SparseOperationMode, &["PERFORMANCE"]),
    (Block::Memory, &["MEMORY"]),
    (Block::ComputeMode, &["COMPUTE"]),
    (Block::Utilization, &["UTILIZATION"]),
    (Block::Ecc, &["ECC"]),
    (Block::RetiredPages, &["PAGE_RETIREMENT"]),
    (Block::RemappedRows, &["ROW_REMAPPER"]),
    (Block::Temperature, &["TEMPERATURE"]),
    (Block::Power, &["POWER"]),
    (Block::PowerSmoothing, &["POWER_SMOOTHING"]),
    (Block::PowerProfiles, &["POWER_PROFILES"]),
    (Block::Clocks, &["CLOCK"]),
    (Block::SupportedClocks, &["SUPPORTED_CLOCKS"]),
    (Block::Processes, &["PIDS"]),
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Block {
    Pci,
    PerformanceState,
    EventReasons,
    EventReasonCounters,
    SparseOperationMode,
    Memory,
    ComputeMode,
    Utilization,
    Ecc,
    RetiredPages,
    RemappedRows,
    Temperature,
    Power,
    PowerSmoothing,
    PowerProfiles,
    Clocks,
    SupportedClocks,
    Processes,
}

impl Gpu<'_> {
    /// Writes `block` of this GPU (`processes`: those on it, for [`Block::Processes`]).
    pub(super) fn block(&self, block: Block, r: &mut Report, processes: Option<&[Process]>) {
        match block {
            Block::Pci => self.pci(r),
            Block::PerformanceState => self.performance_state(r),
            Block::EventReasons => self.event_reasons(r),
            Block::EventReasonCounters => self.event_reason_counters(r),
            Block::SparseOperationMode => self.sparse_operation_mode(r),
            Block::Memory => self.memory(r),
            Block::ComputeMode => self.compute_mode(r),
            Block::Utilization => self.utilization(r),
            Block::Ecc => self.ecc(r),
            Block::RetiredPages => self.retired_pages(r),
            Block::RemappedRows => self.remapped_rows(r),
            Block::Temperature => self.temperature(r),
            Block::Power => self.power(r),
            Block::PowerSmoothing => self.power_smoothing(r),
            Block::PowerProfiles => self.power_profiles(r),
            Block::Clocks => self.clocks(r),
            Block::SupportedClocks => self.supported_clocks(r),
            Block::Processes => super::processes::write(r, processes),
        }
    }
}
