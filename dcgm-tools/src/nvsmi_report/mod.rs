//! `query -q [-d SECTION,...]`: nvidia-smi's per-GPU report (`nvidia-smi -q`) over DCGM, with
//! its sections, labels and indentation, so that what scripts grep out of it is found here.
//! `N/A` wherever DCGM has no value for a line.
//!
//! As nvidia-smi, the sample sections (`Power Samples`, `SM Clock Samples`, `Memory Clock
//! Samples`: how many samples over how long, and their max, min and average) come only with
//! `-d POWER` / `-d CLOCK`, not in the whole report; they are DCGM's cached samples of the
//! power and clock fields over the last `--sample-window` seconds.
//!
//! The modules: `read` (the DCGM reads), `gpu` (one GPU's values as the lines print them),
//! `text` (headings and `label : value` lines), `blocks` (the blocks in nvidia-smi's order and
//! the sections that print them), and a module per group of sections: `pci`, `performance`,
//! `memory`, `ecc`, `temperature`, `power`, `clocks`, `processes`; `samples` for the sample
//! sections.

mod blocks;
mod clocks;
mod ecc;
mod gpu;
mod memory;
mod pci;
mod performance;
mod power;
mod processes;
mod read;
mod samples;
mod temperature;
mod text;

use std::collections::BTreeMap;
use std::time::Duration;

use clap::Args;
use dcgm::raw::sys::DCGM_FI_CUDA_DRIVER_VERSION;
use dcgm::{Handle, Value};

use blocks::{BLOCKS, Block};
use gpu::Gpu;
use read::{read_processes, read_values};
pub use samples::SampleStats;
use text::{NA, Report};

/// The report's flags, for a tool to `#[command(flatten)]`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Print nvidia-smi's per-GPU report (`nvidia-smi -q`): every section below, or those of -d.
    #[arg(short = 'q', long = "query")]
    pub query: bool,
    /// With -q, only these sections, comma-separated: MEMORY, UTILIZATION, ECC, TEMPERATURE,
    /// POWER, CLOCK, COMPUTE, PIDS, PERFORMANCE, SUPPORTED_CLOCKS, PAGE_RETIREMENT,
    /// ROW_REMAPPER, PCIE, POWER_SMOOTHING, POWER_PROFILES. CLOCK also prints the clock-event
    /// reasons. POWER and CLOCK add nvidia-smi's sample sections (Power Samples, SM and Memory
    /// Clock Samples), read from DCGM's samples of the last --sample-window seconds. No XML
    /// (`-x`) yet.
    #[arg(
        short = 'd',
        long = "display",
        value_delimiter = ',',
        requires = "query",
        value_name = "SECTIONS"
    )]
    pub display: Vec<String>,
    /// With -q -d POWER or CLOCK: how many seconds back the sample sections look into DCGM's
    /// samples of the power and clock fields. A host engine that already watches them (an
    /// exporter does) has them; an embedded engine has the one it takes now.
    #[arg(
        long = "sample-window",
        value_name = "SECONDS",
        default_value_t = 60.0,
        requires = "query",
        value_parser = parse_window
    )]
    pub sample_window: f64,
}

impl ReportArgs {
    /// The sample window as a duration.
    pub fn sample_window(&self) -> Duration {
        Duration::from_secs_f64(self.sample_window)
    }
}

fn parse_window(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 7.0 * 86400.0 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a number of seconds above 0 (at most a week)"
        )),
    }
}

/// The report's sections, as `-d` names them.
pub const SECTIONS: &[&str] = &[
    "MEMORY",
    "UTILIZATION",
    "ECC",
    "TEMPERATURE",
    "POWER",
    "CLOCK",
    "COMPUTE",
    "PIDS",
    "PERFORMANCE",
    "SUPPORTED_CLOCKS",
    "PAGE_RETIREMENT",
    "ROW_REMAPPER",
    "PCIE",
    "POWER_SMOOTHING",
    "POWER_PROFILES",
];

/// Writes nvidia-smi's per-GPU report of `gpus` (every GPU when empty) into `out`: the
/// sections named in `sections` (nvidia-smi's `-d` names, any case), or all of them. The
/// sample sections of `-d POWER` and `-d CLOCK` cover DCGM's samples of the last
/// `sample_window`.
pub fn run_report(
    handle: &Handle,
    gpus: &[u32],
    sections: &[String],
    sample_window: Duration,
    out: &mut dyn std::io::Write,
) -> super::Result<()> {
    let wanted = parse_sections(sections)?;
    let blocks: Vec<Block> = BLOCKS
        .iter()
        .filter(|(_, s)| s.iter().any(|s| wanted.contains(s)))
        .map(|(b, _)| *b)
        .collect();
    // nvidia-smi prints its sample sections only for a `-d` that names POWER or CLOCK, never in
    // the whole report (the H200's `nvidia-smi -q` has none).
    let window = (!sections.is_empty() && wanted.iter().any(|s| ["POWER", "CLOCK"].contains(s)))
        .then_some(sample_window);
    let attached = handle.system().gpu_ids()?.len();
    let (group, gpus) = super::gpu_group(handle, "query-q", gpus)?;
    let (values, samples) = read_values(handle, &group, window)?;
    let processes = if blocks.contains(&Block::Processes) {
        read_processes(handle, &group)?
    } else {
        BTreeMap::new()
    };
    let first = gpus.first().copied().unwrap_or(0);
    let mut r = Report::default();
    header(&mut r, handle, &values, first, attached);
    for &gpu in &gpus {
        let attrs = handle.system().device_attributes(gpu)?;
        r.line(&format!("GPU {}", attrs.pci_bus_id));
        let g = Gpu {
            id: gpu,
            values: &values,
            samples: window.map(|_| &samples),
            attrs: &attrs,
        };
        for b in &blocks {
            g.block(*b, &mut r, processes.get(&gpu).map(Vec::as_slice));
        }
        r.line("");
    }
    match out.write_all(r.text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        // A reader that has closed the pipe (`| head`) has what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write the report: {e}").into()),
    }
}

/// The log's head: the banner, the time, the driver and CUDA versions (of the first GPU), the
/// number of GPUs attached.
fn header(
    r: &mut Report,
    handle: &Handle,
    values: &BTreeMap<(u32, u16), Value>,
    first: u32,
    attached: usize,
) {
    r.line("");
    r.line("==============NVSMI LOG==============");
    r.line("");
    r.kv(0, "Timestamp", ctime_now());
    let attrs0 = handle.system().device_attributes(first).ok();
    r.kv(
        0,
        "Driver Version",
        attrs0
            .as_ref()
            .and_then(|a| a.driver_version.clone())
            .unwrap_or_else(|| NA.into()),
    );
    r.kv(
        0,
        "CUDA Version",
        values
            .get(&(first, DCGM_FI_CUDA_DRIVER_VERSION))
            .and_then(Value::as_f64)
            .map(|v| {
                let v = v as i64;
                format!("{}.{}", v / 1000, (v % 1000) / 10)
            })
            .unwrap_or_else(|| NA.into()),
    );
    r.line("");
    r.kv(0, "Attached GPUs", attached);
}

/// The `-d` names given, checked, upper-cased; every section when none is given.
fn parse_sections(given: &[String]) -> Result<Vec<&'static str>, String> {
    if given.is_empty() {
        return Ok(SECTIONS.to_vec());
    }
    given
        .iter()
        .map(|s| {
            let up = s.trim().to_ascii_uppercase();
            SECTIONS.iter().find(|k| **k == up).copied().ok_or_else(|| {
                format!(
                    "unknown -d section {s:?}: give some of {}",
                    SECTIONS.join(", ")
                )
            })
        })
        .collect()
}

/// Now as nvidia-smi's header has it (`Tue Dec  1 07:57:44 2026`), in local time.
fn ctime_now() -> String {
    super::local_time::LocalTime::now().c_locale()
}
