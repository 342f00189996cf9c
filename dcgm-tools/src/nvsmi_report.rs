//! `query -q [-d SECTION,...]`: nvidia-smi's per-GPU report (`nvidia-smi -q`) over DCGM, with
//! its sections, labels and indentation, so that what scripts grep out of it is found here.
//! `N/A` wherever DCGM has no value for a line.
//!
//! As nvidia-smi, the sample sections (`Power Samples`, `SM Clock Samples`, `Memory Clock
//! Samples`: how many samples over how long, and their max, min and average) come only with
//! `-d POWER` / `-d CLOCK`, not in the whole report; they are DCGM's cached samples of the
//! power and clock fields over the last `--sample-window` seconds.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use dcgm::raw::sys::*;
use dcgm::{FieldGroup, FieldId, Group, Handle, SinceCursor, Value, WatchOptions};

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

/// The blocks of the report in nvidia-smi's order, each with the sections that print it. The
/// order is the report's whatever the order of `-d`, and a block shared by two sections
/// (the clock-event reasons) is printed once.
const BLOCKS: &[(Block, &[&str])] = &[
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
enum Block {
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

/// Every field a block reads (the report watches them all once).
const FIELDS: &[u16] = &[
    DCGM_FI_CUDA_DRIVER_VERSION,
    DCGM_FI_DEV_PCI_SUBSYS_ID,
    DCGM_FI_DEV_PCIE_MAX_LINK_GEN,
    DCGM_FI_DEV_PCIE_LINK_GEN,
    DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH,
    DCGM_FI_DEV_PCIE_LINK_WIDTH,
    DCGM_FI_DEV_PCIE_REPLAY_TOTAL,
    DCGM_FI_DEV_PCIE_TX_THROUGHPUT,
    DCGM_FI_DEV_PCIE_RX_THROUGHPUT,
    DCGM_FI_DEV_GPU_PSTATE,
    DCGM_FI_DEV_CLOCKS_EVENT_REASONS,
    DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP_NS,
    DCGM_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST_NS,
    DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN_NS,
    DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN_NS,
    DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN_NS,
    DCGM_FI_DEV_FB_TOTAL,
    DCGM_FI_DEV_FB_RESERVED,
    DCGM_FI_DEV_FB_USED,
    DCGM_FI_DEV_FB_FREE,
    DCGM_FI_DEV_BAR1_TOTAL,
    DCGM_FI_DEV_BAR1_USED,
    DCGM_FI_DEV_BAR1_FREE,
    DCGM_FI_DEV_GPU_COMPUTE_MODE,
    DCGM_FI_DEV_GPU_UTIL_RATIO,
    DCGM_FI_DEV_MEM_COPY_UTIL,
    DCGM_FI_DEV_ENC_UTIL,
    DCGM_FI_DEV_DEC_UTIL,
    DCGM_FI_DEV_ECC_MODE,
    DCGM_FI_DEV_ECC_PENDING,
    DCGM_FI_DEV_ECC_SBE_VOL_SRM,
    DCGM_FI_DEV_ECC_DBE_VOL_SRM,
    DCGM_FI_DEV_ECC_SBE_VOL_DEV,
    DCGM_FI_DEV_ECC_DBE_VOL_DEV,
    DCGM_FI_DEV_ECC_SBE_AGG_SRM,
    DCGM_FI_DEV_ECC_DBE_AGG_SRM,
    DCGM_FI_DEV_ECC_SBE_AGG_DEV,
    DCGM_FI_DEV_ECC_DBE_AGG_DEV,
    DCGM_FI_DEV_ECC_DBE_AGG_L2,
    DCGM_FI_DEV_SRAM_EXCEEDED,
    DCGM_FI_DEV_MEMORY_UNREPAIRABLE,
    DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL,
    DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL,
    DCGM_FI_DEV_PAGE_RETIRED_PENDING,
    DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL,
    DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL,
    DCGM_FI_DEV_ROW_REMAP_PENDING,
    DCGM_FI_DEV_ROW_REMAP_FAILED,
    DCGM_FI_DEV_BANK_REMAP_AVAIL_MAX,
    DCGM_FI_DEV_BANK_REMAP_AVAIL_HIGH,
    DCGM_FI_DEV_BANK_REMAP_AVAIL_PARTIAL,
    DCGM_FI_DEV_BANK_REMAP_AVAIL_LOW,
    DCGM_FI_DEV_BANK_REMAP_AVAIL_NONE,
    DCGM_FI_DEV_GPU_TEMP_CELSIUS,
    DCGM_FI_DEV_GPU_TEMP_MARGIN_CELSIUS,
    DCGM_FI_DEV_MEMORY_TEMP_CELSIUS,
    DCGM_FI_DEV_BOARD_POWER_WATTS,
    DCGM_FI_DEV_BOARD_POWER_RAW_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_DEFAULT_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_MIN_WATTS,
    DCGM_FI_DEV_BOARD_POWER_LIMIT_MAX_WATTS,
    DCGM_FI_DEV_PWR_SMOOTHING_ENABLED,
    DCGM_FI_DEV_BOARD_POWER_PROFILE_REQUESTED_MASK,
    DCGM_FI_DEV_BOARD_POWER_PROFILE_ENFORCED_MASK,
    DCGM_FI_DEV_SM_CLOCK,
    DCGM_FI_DEV_MEM_CLOCK,
    DCGM_FI_DEV_VIDEO_CLOCK,
    DCGM_FI_DEV_APP_SM_CLOCK,
    DCGM_FI_DEV_APP_MEM_CLOCK,
    DCGM_FI_DEV_MAX_SM_CLOCK,
    DCGM_FI_DEV_MAX_MEM_CLOCK,
    DCGM_FI_DEV_MAX_VIDEO_CLOCK,
    DCGM_FI_DEV_CLOCKS_AUTOBOOST_MODE,
];

/// NVML's clock-event reason bits (`nvmlClocksEventReason*`), as DCGM's
/// `DCGM_FI_DEV_CLOCKS_EVENT_REASONS` carries them.
const REASON_IDLE: i64 = 0x1;
const REASON_APP_CLOCKS: i64 = 0x2;
const REASON_SW_POWER_CAP: i64 = 0x4;
const REASON_HW_SLOWDOWN: i64 = 0x8;
const REASON_SYNC_BOOST: i64 = 0x10;
const REASON_SW_THERMAL: i64 = 0x20;
const REASON_HW_THERMAL: i64 = 0x40;
const REASON_HW_POWER_BRAKE: i64 = 0x80;
const REASON_DISPLAY_CLOCK: i64 = 0x100;

/// Where the values of nvidia-smi's report column: the label, indented, padded to this width.
const LABEL_WIDTH: usize = 55;
/// The same for the lines of the process list, which nvidia-smi pads less.
const PROCESS_LABEL_WIDTH: usize = 42;

/// The fields of the sample sections: nvidia-smi's `Power Samples` (NVML's total power
/// samples; DCGM's power usage), `SM Clock Samples` and `Memory Clock Samples`.
const SAMPLED: [u16; 3] = [
    DCGM_FI_DEV_BOARD_POWER_WATTS,
    DCGM_FI_DEV_SM_CLOCK,
    DCGM_FI_DEV_MEM_CLOCK,
];

/// What nvidia-smi's sample sections say of a field's samples: how many, the time from the
/// first to the last, and their max, min and average.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleStats {
    /// Number of samples with a value.
    pub count: usize,
    /// From the first sample to the last (zero for one sample).
    pub duration: Duration,
    /// The largest value.
    pub max: f64,
    /// The smallest value.
    pub min: f64,
    /// The mean of the values.
    pub avg: f64,
}

impl SampleStats {
    /// The statistics of `samples` (time stamp in µs since the epoch, value), blanks (and
    /// strings, bytes) left out; `None` when no sample has a number.
    pub fn of<'a>(samples: impl IntoIterator<Item = (i64, &'a Value)>) -> Option<Self> {
        let mut n = 0usize;
        let (mut max, mut min, mut sum) = (f64::NEG_INFINITY, f64::INFINITY, 0.0);
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        for (ts, v) in samples {
            let Some(x) = v.as_f64().filter(|x| x.is_finite()) else {
                continue;
            };
            n += 1;
            max = max.max(x);
            min = min.min(x);
            sum += x;
            first = first.min(ts);
            last = last.max(ts);
        }
        (n > 0).then(|| SampleStats {
            count: n,
            duration: Duration::from_micros(u64::try_from(last - first).unwrap_or(0)),
            max,
            min,
            avg: sum / n as f64,
        })
    }
}

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

/// Each GPU's latest value of each report field, and with a sample window the statistics of
/// each GPU's samples of the [`SAMPLED`] fields over it.
type Readings = (
    BTreeMap<(u32, u16), Value>,
    BTreeMap<(u32, u16), SampleStats>,
);

/// The latest value of every report field of every GPU of `group`; with `window`, the
/// statistics of the sampled fields' samples of that long ago to now.
fn read_values(handle: &Handle, group: &Group, window: Option<Duration>) -> dcgm::Result<Readings> {
    let ids: Vec<FieldId> = FIELDS.iter().map(|f| FieldId(*f)).collect();
    let mut m = BTreeMap::new();
    let fg = FieldGroup::create(handle, &format!("query-q-{}", std::process::id()), &ids)?;
    let defaults = WatchOptions::default();
    // Samples are kept at least as long as the window, so that a host engine keeps them for
    // the next report (one that watched them already keeps its own longer history).
    let options = WatchOptions {
        max_keep_age: defaults.max_keep_age.max(window.unwrap_or_default()),
        ..defaults
    };
    let _w = group.watch(&fg, options)?;
    handle.update_all_fields(true)?;
    for v in group.latest_values(&fg)? {
        m.insert((v.entity.id, v.field.0), v.value);
    }
    let samples = match window {
        Some(window) => read_samples(handle, group, window, &m)?,
        None => BTreeMap::new(),
    };
    Ok((m, samples))
}

/// The statistics of each GPU's cached samples of the [`SAMPLED`] fields from `window` ago to
/// now (watched by the caller). Where DCGM cannot give a field's history, the latest value
/// (in `latest`) is the one sample there is.
fn read_samples(
    handle: &Handle,
    group: &Group,
    window: Duration,
    latest: &BTreeMap<(u32, u16), Value>,
) -> dcgm::Result<BTreeMap<(u32, u16), SampleStats>> {
    let ids: Vec<FieldId> = SAMPLED.iter().map(|f| FieldId(*f)).collect();
    let fg = FieldGroup::create(
        handle,
        &format!("query-q-samples-{}", std::process::id()),
        &ids,
    )?;
    let now_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
    let since = now_us.saturating_sub(i64::try_from(window.as_micros()).unwrap_or(i64::MAX));
    let mut by_key: BTreeMap<(u32, u16), Vec<(i64, Value)>> = BTreeMap::new();
    match group.values_since(&fg, &mut SinceCursor(since)) {
        Ok(samples) => {
            for s in samples.into_iter().filter(|s| s.timestamp_us >= since) {
                by_key
                    .entry((s.entity.id, s.field.0))
                    .or_default()
                    .push((s.timestamp_us, s.value));
            }
        }
        Err(_) => {
            for ((gpu, field), v) in latest.iter().filter(|((_, f), _)| SAMPLED.contains(f)) {
                by_key
                    .entry((*gpu, *field))
                    .or_default()
                    .push((now_us, v.clone()));
            }
        }
    }
    Ok(by_key
        .into_iter()
        .filter_map(|(k, list)| {
            SampleStats::of(list.iter().map(|(ts, v)| (*ts, v))).map(|s| (k, s))
        })
        .collect())
}

/// A running process: pid, name and GPU memory in MiB.
struct Process {
    pid: u32,
    name: Option<String>,
    used_mib: u64,
}

/// The processes of each GPU of `group`: every sample of its latest update of the pid list.
fn read_processes(handle: &Handle, group: &Group) -> dcgm::Result<BTreeMap<u32, Vec<Process>>> {
    let fg = FieldGroup::create(
        handle,
        &format!("query-q-pids-{}", std::process::id()),
        &[FieldId(DCGM_FI_DEV_COMPUTE_PIDS)],
    )?;
    let _w = group.watch(&fg, WatchOptions::default())?;
    handle.update_all_fields(true)?;
    // The real libdcgm answers this field's history with DCGM_ST_BADPARAM on some nodes (the
    // H200 capture): the latest sample, one process per GPU, is then what there is.
    let samples = match group.values_since(&fg, &mut SinceCursor::default()) {
        Ok(s) => s,
        Err(_) => group.latest_values(&fg)?,
    };
    // Every sample of each GPU's latest update (libdcgm stores them at consecutive µs).
    let mut out: BTreeMap<u32, Vec<Process>> = BTreeMap::new();
    for (entity, list) in dcgm::running_processes_of(&samples) {
        for p in list {
            out.entry(entity.id).or_default().push(Process {
                pid: p.pid,
                name: super::process::owner(p.pid, handle.is_simulated()).name,
                used_mib: p.memory_used_bytes >> 20,
            });
        }
    }
    Ok(out)
}

const NA: &str = "N/A";

/// The report's text, a line at a time.
#[derive(Default)]
struct Report {
    text: String,
}

impl Report {
    fn line(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
    }

    /// A heading at `depth` (a GPU's blocks are at depth 1, four spaces).
    fn head(&mut self, depth: usize, label: &str) {
        let _ = writeln!(self.text, "{:w$}{label}", "", w = depth * 4);
    }

    /// `label : value`, the value in nvidia-smi's column.
    fn kv(&mut self, depth: usize, label: &str, value: impl std::fmt::Display) {
        self.kv_in(LABEL_WIDTH, depth, label, value);
    }

    fn kv_in(&mut self, width: usize, depth: usize, label: &str, value: impl std::fmt::Display) {
        let label = format!("{:w$}{label}", "", w = depth * 4);
        let _ = writeln!(self.text, "{label:<width$}: {value}");
    }
}

/// One GPU's values and attributes, and how its lines read them.
struct Gpu<'a> {
    id: u32,
    values: &'a BTreeMap<(u32, u16), Value>,
    /// The sample statistics, when the report prints the sample sections.
    samples: Option<&'a BTreeMap<(u32, u16), SampleStats>>,
    attrs: &'a dcgm::DeviceAttributes,
}

impl Gpu<'_> {
    fn num(&self, field: u16) -> Option<f64> {
        self.values.get(&(self.id, field)).and_then(Value::as_f64)
    }

    fn int(&self, field: u16) -> Option<i64> {
        self.num(field).map(|v| v.round() as i64)
    }

    /// A whole number with its unit (`62 C`), or `N/A`.
    fn with(&self, field: u16, unit: &str) -> String {
        self.int(field)
            .map(|v| {
                if unit.is_empty() {
                    v.to_string()
                } else {
                    format!("{v} {unit}")
                }
            })
            .unwrap_or_else(|| NA.into())
    }

    fn plain(&self, field: u16) -> String {
        self.with(field, "")
    }

    fn watts(&self, field: u16) -> String {
        self.num(field)
            .map(|w| format!("{w:.2} W"))
            .unwrap_or_else(|| NA.into())
    }

    fn yes_no(&self, field: u16) -> String {
        self.int(field)
            .map(|v| if v != 0 { "Yes" } else { "No" }.to_string())
            .unwrap_or_else(|| NA.into())
    }

    fn enabled(&self, field: u16) -> String {
        self.int(field)
            .map(|v| if v != 0 { "Enabled" } else { "Disabled" }.to_string())
            .unwrap_or_else(|| NA.into())
    }

    fn reason(&self, bit: i64) -> &'static str {
        match self.int(DCGM_FI_DEV_CLOCKS_EVENT_REASONS) {
            Some(mask) if mask & bit != 0 => "Active",
            Some(_) => "Not Active",
            None => NA,
        }
    }

    /// A counter of nanoseconds, in microseconds as nvidia-smi prints it.
    fn ns_as_us(&self, field: u16) -> String {
        self.int(field)
            .map(|ns| format!("{} us", ns / 1000))
            .unwrap_or_else(|| NA.into())
    }

    /// nvidia-smi's sample section `heading` of `field`, when the report prints them (see
    /// [`sample_section`]).
    fn samples(&self, r: &mut Report, heading: &str, field: u16, value: impl Fn(f64) -> String) {
        if let Some(samples) = self.samples {
            sample_section(r, heading, samples.get(&(self.id, field)), value);
        }
    }

    fn block(&self, block: Block, r: &mut Report, processes: Option<&[Process]>) {
        match block {
            Block::Pci => self.pci(r),
            Block::PerformanceState => r.kv(
                1,
                "Performance State",
                self.int(DCGM_FI_DEV_GPU_PSTATE)
                    .map(|p| format!("P{p}"))
                    .unwrap_or_else(|| NA.into()),
            ),
            Block::EventReasons => {
                r.head(1, "Clocks Event Reasons");
                r.kv(2, "Idle", self.reason(REASON_IDLE));
                r.kv(
                    2,
                    "Applications Clocks Setting",
                    self.reason(REASON_APP_CLOCKS),
                );
                r.kv(2, "SW Power Cap", self.reason(REASON_SW_POWER_CAP));
                r.kv(2, "HW Slowdown", self.reason(REASON_HW_SLOWDOWN));
                r.kv(3, "HW Thermal Slowdown", self.reason(REASON_HW_THERMAL));
                r.kv(
                    3,
                    "HW Power Brake Slowdown",
                    self.reason(REASON_HW_POWER_BRAKE),
                );
                r.kv(2, "Sync Boost", self.reason(REASON_SYNC_BOOST));
                r.kv(2, "SW Thermal Slowdown", self.reason(REASON_SW_THERMAL));
                r.kv(
                    2,
                    "Display Clock Setting",
                    self.reason(REASON_DISPLAY_CLOCK),
                );
            }
            Block::EventReasonCounters => {
                r.head(1, "Clocks Event Reasons Counters");
                let counters = [
                    (
                        "SW Power Capping",
                        DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP_NS,
                    ),
                    ("Sync Boost", DCGM_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST_NS),
                    (
                        "SW Thermal Slowdown",
                        DCGM_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN_NS,
                    ),
                    (
                        "HW Thermal Slowdown",
                        DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN_NS,
                    ),
                    (
                        "HW Power Braking",
                        DCGM_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN_NS,
                    ),
                ];
                for (label, f) in counters {
                    r.kv(2, label, self.ns_as_us(f));
                }
            }
            // DCGM cannot read the sparse operation mode: DCGM 4.6's field registry (dcgm-sys's
            // data/fields.tsv, as the real libdcgm 4.6.0 lists it) has no field for it and no
            // DCGM call returns it, so the line is always N/A. nvidia-smi prints it between the
            // clock-event counters and the memory; it goes with PERFORMANCE, the section of the
            // lines before it.
            Block::SparseOperationMode => r.kv(1, "Sparse Operation Mode", NA),
            Block::Memory => {
                r.head(1, "FB Memory Usage");
                r.kv(2, "Total", self.with(DCGM_FI_DEV_FB_TOTAL, "MiB"));
                r.kv(2, "Reserved", self.with(DCGM_FI_DEV_FB_RESERVED, "MiB"));
                r.kv(2, "Used", self.with(DCGM_FI_DEV_FB_USED, "MiB"));
                r.kv(2, "Free", self.with(DCGM_FI_DEV_FB_FREE, "MiB"));
                r.head(1, "BAR1 Memory Usage");
                r.kv(2, "Total", self.with(DCGM_FI_DEV_BAR1_TOTAL, "MiB"));
                r.kv(2, "Used", self.with(DCGM_FI_DEV_BAR1_USED, "MiB"));
                r.kv(2, "Free", self.with(DCGM_FI_DEV_BAR1_FREE, "MiB"));
                // DCGM has no field for confidential-compute protected memory.
                r.head(1, "Conf Compute Protected Memory Usage");
                for label in ["Total", "Used", "Free"] {
                    r.kv(2, label, NA);
                }
            }
            Block::ComputeMode => r.kv(
                1,
                "Compute Mode",
                match self.int(DCGM_FI_DEV_GPU_COMPUTE_MODE) {
                    Some(0) => "Default",
                    Some(1) => "Exclusive_Thread",
                    Some(2) => "Prohibited",
                    Some(3) => "Exclusive_Process",
                    _ => NA,
                },
            ),
            Block::Utilization => {
                r.head(1, "Utilization");
                r.kv(2, "GPU", self.with(DCGM_FI_DEV_GPU_UTIL_RATIO, "%"));
                r.kv(2, "Memory", self.with(DCGM_FI_DEV_MEM_COPY_UTIL, "%"));
                r.kv(2, "Encoder", self.with(DCGM_FI_DEV_ENC_UTIL, "%"));
                r.kv(2, "Decoder", self.with(DCGM_FI_DEV_DEC_UTIL, "%"));
                // JPEG and OFA utilisation are profiling metrics only, per engine.
                r.kv(2, "JPEG", NA);
                r.kv(2, "OFA", NA);
            }
            Block::Ecc => self.ecc(r),
            Block::RetiredPages => {
                r.head(1, "Retired Pages");
                r.kv(
                    2,
                    "Single Bit ECC",
                    self.plain(DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL),
                );
                r.kv(
                    2,
                    "Double Bit ECC",
                    self.plain(DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL),
                );
                r.kv(
                    2,
                    "Pending Page Blacklist",
                    self.yes_no(DCGM_FI_DEV_PAGE_RETIRED_PENDING),
                );
            }
            Block::RemappedRows => {
                r.head(1, "Remapped Rows");
                r.kv(
                    2,
                    "Correctable Error",
                    self.plain(DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL),
                );
                r.kv(2, "Inactive Correctable Error", NA);
                r.kv(
                    2,
                    "Uncorrectable Error",
                    self.plain(DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL),
                );
                r.kv(2, "Inactive Uncorrectable Error", NA);
                r.kv(2, "Pending", self.yes_no(DCGM_FI_DEV_ROW_REMAP_PENDING));
                r.kv(
                    2,
                    "Remapping Failure Occurred",
                    self.yes_no(DCGM_FI_DEV_ROW_REMAP_FAILED),
                );
                r.head(2, "Bank Remap Availability Histogram");
                let banks = [
                    ("Max", DCGM_FI_DEV_BANK_REMAP_AVAIL_MAX),
                    ("High", DCGM_FI_DEV_BANK_REMAP_AVAIL_HIGH),
                    ("Partial", DCGM_FI_DEV_BANK_REMAP_AVAIL_PARTIAL),
                    ("Low", DCGM_FI_DEV_BANK_REMAP_AVAIL_LOW),
                    ("None", DCGM_FI_DEV_BANK_REMAP_AVAIL_NONE),
                ];
                for (label, f) in banks {
                    r.kv(3, label, self.with(f, "bank(s)"));
                }
            }
            Block::Temperature => {
                r.head(1, "Temperature");
                r.kv(
                    2,
                    "GPU Current Temp",
                    self.with(DCGM_FI_DEV_GPU_TEMP_CELSIUS, "C"),
                );
                r.kv(
                    2,
                    "GPU T.Limit Temp",
                    self.with(DCGM_FI_DEV_GPU_TEMP_MARGIN_CELSIUS, "C"),
                );
                // nvidia-smi gives these relative to T.Limit; DCGM's thresholds are absolute
                // temperatures, which would read wrong under these labels.
                r.kv(2, "GPU Shutdown T.Limit Temp", NA);
                r.kv(2, "GPU Slowdown T.Limit Temp", NA);
                r.kv(2, "GPU Max Operating T.Limit Temp", NA);
                r.kv(2, "GPU Target Temperature", NA);
                r.kv(
                    2,
                    "Memory Current Temp",
                    self.with(DCGM_FI_DEV_MEMORY_TEMP_CELSIUS, "C"),
                );
                r.kv(2, "Memory Max Operating T.Limit Temp", NA);
            }
            Block::Power => {
                r.head(1, "GPU Power Readings");
                r.kv(
                    2,
                    "Average Power Draw",
                    self.watts(DCGM_FI_DEV_BOARD_POWER_WATTS),
                );
                r.kv(
                    2,
                    "Instantaneous Power Draw",
                    self.watts(DCGM_FI_DEV_BOARD_POWER_RAW_WATTS),
                );
                let limits = [
                    (
                        "Current Power Limit",
                        DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS,
                    ),
                    (
                        "Requested Power Limit",
                        DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS,
                    ),
                    (
                        "Default Power Limit",
                        DCGM_FI_DEV_BOARD_POWER_LIMIT_DEFAULT_WATTS,
                    ),
                    ("Min Power Limit", DCGM_FI_DEV_BOARD_POWER_LIMIT_MIN_WATTS),
                    ("Max Power Limit", DCGM_FI_DEV_BOARD_POWER_LIMIT_MAX_WATTS),
                ];
                for (label, f) in limits {
                    r.kv(2, label, self.watts(f));
                }
                self.samples(r, "Power Samples", DCGM_FI_DEV_BOARD_POWER_WATTS, |w| {
                    format!("{w:.2} W")
                });
                // nvidia-smi's own heading ends with a space.
                r.head(1, "GPU Memory Power Readings ");
                r.kv(2, "Average Power Draw", NA);
                r.kv(2, "Instantaneous Power Draw", NA);
                r.head(1, "Module Power Readings");
                for label in ["Average Power Draw", "Instantaneous Power Draw"]
                    .into_iter()
                    .chain(limits.iter().map(|(l, _)| *l))
                {
                    r.kv(2, label, NA);
                }
            }
            Block::PowerSmoothing => r.kv(
                1,
                "Power Smoothing",
                self.enabled(DCGM_FI_DEV_PWR_SMOOTHING_ENABLED),
            ),
            Block::PowerProfiles => {
                r.head(1, "Workload Power Profiles");
                r.kv(
                    2,
                    "Requested Profiles",
                    self.mask(DCGM_FI_DEV_BOARD_POWER_PROFILE_REQUESTED_MASK),
                );
                r.kv(
                    2,
                    "Enforced Profiles",
                    self.mask(DCGM_FI_DEV_BOARD_POWER_PROFILE_ENFORCED_MASK),
                );
            }
            Block::Clocks => self.clocks(r),
            Block::SupportedClocks => {
                let clocks = &self.attrs.supported_clocks;
                if clocks.is_empty() {
                    r.kv(1, "Supported Clocks", NA);
                    return;
                }
                r.head(1, "Supported Clocks");
                let mut last_mem = None;
                for &(mem, sm) in clocks {
                    if last_mem != Some(mem) {
                        r.kv(2, "Memory", format!("{mem} MHz"));
                        last_mem = Some(mem);
                    }
                    r.kv(3, "Graphics", format!("{sm} MHz"));
                }
            }
            Block::Processes => match processes {
                Some(ps) if !ps.is_empty() => {
                    r.head(1, "Processes");
                    for p in ps {
                        let w = PROCESS_LABEL_WIDTH;
                        r.kv_in(w, 2, "GPU instance ID", NA);
                        r.kv_in(w, 2, "Compute instance ID", NA);
                        r.kv_in(w, 2, "Process ID", p.pid);
                        r.kv_in(w, 3, "Type", "C");
                        r.kv_in(w, 3, "Name", p.name.as_deref().unwrap_or(NA));
                        r.kv_in(w, 3, "Used GPU Memory", format!("{} MiB", p.used_mib));
                    }
                }
                _ => r.kv(1, "Processes", "None"),
            },
        }
    }

    /// A bit mask of power profiles: the ids of its bits, or `N/A`.
    fn mask(&self, field: u16) -> String {
        match self.int(field) {
            Some(0) => "None".into(),
            Some(m) => (0..64)
                .filter(|b| m & (1 << b) != 0)
                .map(|b: i64| b.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            None => NA.into(),
        }
    }

    fn pci(&self, r: &mut Report) {
        r.head(1, "PCI");
        // `00000000:00:06.0`: domain, bus, device.function.
        let bus_id = &self.attrs.pci_bus_id;
        let mut parts = bus_id.split([':', '.']);
        let (domain, bus, device) = (parts.next(), parts.next(), parts.next());
        let hex = |s: Option<&str>, digits: usize| {
            s.and_then(|s| u32::from_str_radix(s, 16).ok())
                .map(|v| format!("0x{v:0digits$X}"))
                .unwrap_or_else(|| NA.into())
        };
        r.kv(2, "Bus", hex(bus, 2));
        r.kv(2, "Device", hex(device, 2));
        r.kv(2, "Domain", hex(domain, 4));
        r.kv(2, "Base Classcode", NA);
        r.kv(2, "Sub Classcode", NA);
        r.kv(
            2,
            "Device Id",
            self.attrs
                .pci_device_id
                .map(|d| format!("0x{d:08X}"))
                .unwrap_or_else(|| NA.into()),
        );
        r.kv(2, "Bus Id", bus_id);
        r.kv(
            2,
            "Sub System Id",
            self.int(DCGM_FI_DEV_PCI_SUBSYS_ID)
                .map(|d| format!("0x{d:08X}"))
                .unwrap_or_else(|| NA.into()),
        );
        r.head(2, "GPU Link Info");
        r.head(3, "PCIe Generation");
        r.kv(4, "Max", self.plain(DCGM_FI_DEV_PCIE_MAX_LINK_GEN));
        r.kv(4, "Current", self.plain(DCGM_FI_DEV_PCIE_LINK_GEN));
        // DCGM reads the link as the system has it, not the device's and host's sides apart.
        r.kv(4, "Device Current", NA);
        r.kv(4, "Device Max", NA);
        r.kv(4, "Host Max", NA);
        r.head(3, "Link Width");
        let width = |f| {
            self.int(f)
                .map(|w| format!("{w}x"))
                .unwrap_or_else(|| NA.into())
        };
        r.kv(4, "Max", width(DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH));
        r.kv(4, "Current", width(DCGM_FI_DEV_PCIE_LINK_WIDTH));
        r.head(2, "Bridge Chip");
        r.kv(3, "Type", NA);
        r.kv(3, "Firmware", NA);
        r.kv(
            2,
            "Replays Since Reset",
            self.plain(DCGM_FI_DEV_PCIE_REPLAY_TOTAL),
        );
        r.kv(2, "Replay Number Rollovers", NA);
        r.kv(
            2,
            "Tx Throughput",
            self.with(DCGM_FI_DEV_PCIE_TX_THROUGHPUT, "KB/s"),
        );
        r.kv(
            2,
            "Rx Throughput",
            self.with(DCGM_FI_DEV_PCIE_RX_THROUGHPUT, "KB/s"),
        );
        r.kv(2, "Atomic Caps Outbound", NA);
        r.kv(2, "Atomic Caps Inbound", NA);
    }

    fn ecc(&self, r: &mut Report) {
        r.head(1, "ECC Mode");
        r.kv(2, "Current", self.enabled(DCGM_FI_DEV_ECC_MODE));
        r.kv(2, "Pending", self.enabled(DCGM_FI_DEV_ECC_PENDING));
        r.head(1, "ECC Errors");
        let kinds = [
            (
                "Volatile",
                [
                    DCGM_FI_DEV_ECC_SBE_VOL_SRM,
                    DCGM_FI_DEV_ECC_DBE_VOL_SRM,
                    DCGM_FI_DEV_ECC_SBE_VOL_DEV,
                    DCGM_FI_DEV_ECC_DBE_VOL_DEV,
                ],
            ),
            (
                "Aggregate",
                [
                    DCGM_FI_DEV_ECC_SBE_AGG_SRM,
                    DCGM_FI_DEV_ECC_DBE_AGG_SRM,
                    DCGM_FI_DEV_ECC_SBE_AGG_DEV,
                    DCGM_FI_DEV_ECC_DBE_AGG_DEV,
                ],
            ),
        ];
        for (kind, [sram_ce, sram_ue, dram_ce, dram_ue]) in kinds {
            r.head(2, kind);
            r.kv(3, "SRAM Correctable", self.plain(sram_ce));
            // DCGM counts SRAM's uncorrectable errors as one, not parity and SEC-DED apart.
            r.kv(3, "SRAM Uncorrectable Parity", NA);
            r.kv(3, "SRAM Uncorrectable SEC-DED", self.plain(sram_ue));
            r.kv(3, "DRAM Correctable", self.plain(dram_ce));
            r.kv(3, "DRAM Uncorrectable", self.plain(dram_ue));
            if kind == "Aggregate" {
                r.kv(
                    3,
                    "SRAM Threshold Exceeded",
                    self.yes_no(DCGM_FI_DEV_SRAM_EXCEEDED),
                );
            }
        }
        r.head(2, "Aggregate Uncorrectable SRAM Sources");
        r.kv(3, "SRAM L2", self.plain(DCGM_FI_DEV_ECC_DBE_AGG_L2));
        for label in ["SRAM SM", "SRAM Microcontroller", "SRAM PCIE", "SRAM Other"] {
            r.kv(3, label, NA);
        }
        r.kv(2, "Channel Repair Pending", NA);
        r.kv(2, "TPC Repair Pending", NA);
        r.kv(
            2,
            "Unrepairable Memory",
            self.yes_no(DCGM_FI_DEV_MEMORY_UNREPAIRABLE),
        );
    }

    fn clocks(&self, r: &mut Report) {
        let mhz = |f| self.with(f, "MHz");
        r.head(1, "Clocks");
        r.kv(2, "Graphics", mhz(DCGM_FI_DEV_SM_CLOCK));
        r.kv(2, "SM", mhz(DCGM_FI_DEV_SM_CLOCK));
        r.kv(2, "Memory", mhz(DCGM_FI_DEV_MEM_CLOCK));
        r.kv(2, "Video", mhz(DCGM_FI_DEV_VIDEO_CLOCK));
        r.head(1, "Applications Clocks");
        r.kv(2, "Graphics", mhz(DCGM_FI_DEV_APP_SM_CLOCK));
        r.kv(2, "Memory", mhz(DCGM_FI_DEV_APP_MEM_CLOCK));
        // DCGM has no fields for the default application clocks, deferred clocks and the
        // customer boost clock.
        r.head(1, "Default Applications Clocks");
        r.kv(2, "Graphics", NA);
        r.kv(2, "Memory", NA);
        r.head(1, "Deferred Clocks");
        r.kv(2, "Memory", NA);
        r.head(1, "Max Clocks");
        r.kv(2, "Graphics", mhz(DCGM_FI_DEV_MAX_SM_CLOCK));
        r.kv(2, "SM", mhz(DCGM_FI_DEV_MAX_SM_CLOCK));
        r.kv(2, "Memory", mhz(DCGM_FI_DEV_MAX_MEM_CLOCK));
        r.kv(2, "Video", mhz(DCGM_FI_DEV_MAX_VIDEO_CLOCK));
        r.head(1, "Max Customer Boost Clocks");
        r.kv(2, "Graphics", NA);
        let mhz_of = |v: f64| format!("{} MHz", v.round() as i64);
        self.samples(r, "SM Clock Samples", DCGM_FI_DEV_SM_CLOCK, mhz_of);
        self.samples(r, "Memory Clock Samples", DCGM_FI_DEV_MEM_CLOCK, mhz_of);
        r.head(1, "Clock Policy");
        r.kv(
            2,
            "Auto Boost",
            match self.int(DCGM_FI_DEV_CLOCKS_AUTOBOOST_MODE) {
                Some(0) => "Off",
                Some(_) => "On",
                None => NA,
            },
        );
        r.kv(2, "Auto Boost Default", NA);
    }
}

/// A sample section: `heading`, then the duration of the samples, their number, max, min and
/// average as `value` writes them; every line `N/A` where DCGM has no sample in the window (a
/// field the GPU does not support, or none sampled yet).
fn sample_section(
    r: &mut Report,
    heading: &str,
    stats: Option<&SampleStats>,
    value: impl Fn(f64) -> String,
) {
    r.head(1, heading);
    match stats {
        Some(s) => {
            r.kv(
                2,
                "Duration",
                format!("{:.2} sec", s.duration.as_secs_f64()),
            );
            r.kv(2, "Number of Samples", s.count);
            r.kv(2, "Max", value(s.max));
            r.kv(2, "Min", value(s.min));
            r.kv(2, "Avg", value(s.avg));
        }
        None => {
            for label in ["Duration", "Number of Samples", "Max", "Min", "Avg"] {
                r.kv(2, label, NA);
            }
        }
    }
}

/// Now as nvidia-smi's header has it (`Tue Dec  1 07:57:44 2026`), in local time.
fn ctime_now() -> String {
    super::local_time::LocalTime::now().c_locale()
}

#[cfg(test)]
mod tests {
    use super::*;
    use dcgm::BlankKind;

    #[test]
    fn sample_stats_are_max_min_avg_count_and_span_with_blanks_left_out() {
        let samples = [
            (1_000_000, Value::Double(650.0)),
            (1_500_000, Value::Blank(BlankKind::Blank)),
            (2_000_000, Value::Double(700.0)),
            (3_360_000, Value::Int(600)),
            (3_400_000, Value::String("not a number".into())),
        ];
        let s = SampleStats::of(samples.iter().map(|(t, v)| (*t, v))).unwrap();
        assert_eq!(s.count, 3);
        assert_eq!(s.max, 700.0);
        assert_eq!(s.min, 600.0);
        assert_eq!(s.avg, 650.0);
        // From the first sample with a value to the last: 2.36 s, as nvidia-smi's `2.36 sec`.
        assert_eq!(s.duration, Duration::from_micros(2_360_000));
        assert_eq!(format!("{:.2} sec", s.duration.as_secs_f64()), "2.36 sec");
    }

    #[test]
    fn one_sample_spans_no_time_and_none_is_no_statistics() {
        let one = [(5, Value::Int(1980))];
        let s = SampleStats::of(one.iter().map(|(t, v)| (*t, v))).unwrap();
        assert_eq!((s.count, s.duration), (1, Duration::ZERO));
        assert_eq!((s.max, s.min, s.avg), (1980.0, 1980.0, 1980.0));
        assert_eq!(SampleStats::of(std::iter::empty()), None);
        let blanks = [
            (1, Value::Blank(BlankKind::NotSupported)),
            (2, Value::Blank(BlankKind::Blank)),
        ];
        assert_eq!(SampleStats::of(blanks.iter().map(|(t, v)| (*t, v))), None);
    }

    #[test]
    fn a_sample_section_has_nvidia_smis_lines_or_na_without_samples() {
        let stats = SampleStats {
            count: 2,
            duration: Duration::from_millis(1500),
            max: 1980.0,
            min: 1455.0,
            avg: 1717.5,
        };
        let mut r = Report::default();
        let mhz = |v: f64| format!("{} MHz", v.round() as i64);
        sample_section(&mut r, "SM Clock Samples", Some(&stats), mhz);
        sample_section(&mut r, "Power Samples", None, |w| format!("{w:.2} W"));
        let pad = |label: &str| format!("{label:<LABEL_WIDTH$}");
        let want = [
            "    SM Clock Samples".to_string(),
            format!("{}: 1.50 sec", pad("        Duration")),
            format!("{}: 2", pad("        Number of Samples")),
            format!("{}: 1980 MHz", pad("        Max")),
            format!("{}: 1455 MHz", pad("        Min")),
            format!("{}: 1718 MHz", pad("        Avg")),
            "    Power Samples".to_string(),
            format!("{}: N/A", pad("        Duration")),
            format!("{}: N/A", pad("        Number of Samples")),
            format!("{}: N/A", pad("        Max")),
            format!("{}: N/A", pad("        Min")),
            format!("{}: N/A", pad("        Avg")),
        ];
        assert_eq!(r.text.lines().collect::<Vec<_>>(), want);
    }
}
