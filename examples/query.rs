//! `query`: `nvidia-smi --query-gpu=... --format=csv` over DCGM, and a
//! `--query-compute-apps` process list.
//!
//! ```text
//! cargo run --example query -- --simulate --query-gpu=index,name,utilization.gpu,memory.used --format=csv
//! cargo run --example query -- --simulate --query-compute-apps=pid,process_name,gpu_uuid,used_memory --format=csv,noheader
//! ```

mod common;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dcgm::raw::sys::*;
use dcgm::{FieldGroup, FieldId, Group, Handle, SinceCursor, Value, WatchOptions};

#[derive(Debug, Parser)]
#[command(name = "query", about = "nvidia-smi style queries over DCGM", after_help = common::EXIT_STATUS)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// GPU properties, comma-separated (`index,name,uuid,pci.bus_id,temperature.gpu,
    /// utilization.gpu,memory.used,power.draw,...`; `--help-query` lists them).
    #[arg(long = "query-gpu", value_delimiter = ',')]
    query_gpu: Vec<String>,
    /// Process properties: pid, process_name, gpu_uuid, gpu_bus_id, gpu_index, used_memory.
    #[arg(long = "query-compute-apps", value_delimiter = ',')]
    query_apps: Vec<String>,
    /// `csv` with optional `noheader` and `nounits`, comma-separated.
    #[arg(long, default_value = "csv")]
    format: String,
    /// Repeat every N seconds.
    #[arg(short = 'l', long = "loop")]
    loop_s: Option<u64>,
    /// Only these GPUs (comma-separated ids).
    #[arg(short = 'i', long = "id", value_delimiter = ',')]
    ids: Vec<u32>,
    /// List the supported property names and exit.
    #[arg(long)]
    help_query: bool,
    /// `-q [-d SECTIONS]`: nvidia-smi's per-GPU report (examples/common/nvsmi_report.rs).
    #[command(flatten)]
    report: common::nvsmi_report::ReportArgs,
}

/// nvidia-smi property → (DCGM field, unit printed after the value, scale).
const PROPERTIES: &[(&str, u16, &str)] = &[
    ("name", DCGM_FI_DEV_GPU_NAME, ""),
    ("uuid", DCGM_FI_DEV_GPU_UUID, ""),
    ("pci.bus_id", DCGM_FI_DEV_PCI_BUS_ID, ""),
    ("serial", DCGM_FI_DEV_BOARD_SERIAL, ""),
    ("driver_version", DCGM_FI_SYSTEM_DRIVER_VERSION, ""),
    ("vbios_version", DCGM_FI_DEV_VBIOS_VERSION, ""),
    ("temperature.gpu", DCGM_FI_DEV_GPU_TEMP_CELSIUS, ""),
    ("temperature.memory", DCGM_FI_DEV_MEMORY_TEMP_CELSIUS, ""),
    ("utilization.gpu", DCGM_FI_DEV_GPU_UTIL_RATIO, "%"),
    ("utilization.memory", DCGM_FI_DEV_MEM_COPY_UTIL, "%"),
    ("utilization.encoder", DCGM_FI_DEV_ENC_UTIL, "%"),
    ("utilization.decoder", DCGM_FI_DEV_DEC_UTIL, "%"),
    ("memory.total", DCGM_FI_DEV_FB_TOTAL, "MiB"),
    ("memory.used", DCGM_FI_DEV_FB_USED, "MiB"),
    ("memory.free", DCGM_FI_DEV_FB_FREE, "MiB"),
    ("memory.reserved", DCGM_FI_DEV_FB_RESERVED, "MiB"),
    ("power.draw", DCGM_FI_DEV_BOARD_POWER_WATTS, "W"),
    (
        "power.limit",
        DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS,
        "W",
    ),
    (
        "enforced.power.limit",
        DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS,
        "W",
    ),
    (
        "power.default_limit",
        DCGM_FI_DEV_BOARD_POWER_LIMIT_DEFAULT_WATTS,
        "W",
    ),
    (
        "power.min_limit",
        DCGM_FI_DEV_BOARD_POWER_LIMIT_MIN_WATTS,
        "W",
    ),
    (
        "power.max_limit",
        DCGM_FI_DEV_BOARD_POWER_LIMIT_MAX_WATTS,
        "W",
    ),
    ("clocks.sm", DCGM_FI_DEV_SM_CLOCK, "MHz"),
    ("clocks.gr", DCGM_FI_DEV_SM_CLOCK, "MHz"),
    ("clocks.mem", DCGM_FI_DEV_MEM_CLOCK, "MHz"),
    ("clocks.video", DCGM_FI_DEV_VIDEO_CLOCK, "MHz"),
    ("clocks.max.sm", DCGM_FI_DEV_MAX_SM_CLOCK, "MHz"),
    ("clocks.max.mem", DCGM_FI_DEV_MAX_MEM_CLOCK, "MHz"),
    (
        "clocks.applications.graphics",
        DCGM_FI_DEV_APP_SM_CLOCK,
        "MHz",
    ),
    ("pstate", DCGM_FI_DEV_GPU_PSTATE, ""),
    ("fan.speed", DCGM_FI_DEV_FAN_SPEED, "%"),
    ("persistence_mode", DCGM_FI_DEV_GPU_PERSISTENCE_MODE, ""),
    ("compute_mode", DCGM_FI_DEV_GPU_COMPUTE_MODE, ""),
    ("mig.mode.current", DCGM_FI_DEV_MIG_MODE, ""),
    ("ecc.mode.current", DCGM_FI_DEV_ECC_MODE, ""),
    (
        "ecc.errors.corrected.volatile.total",
        DCGM_FI_DEV_ECC_SBE_VOL_TOTAL,
        "",
    ),
    (
        "ecc.errors.uncorrected.volatile.total",
        DCGM_FI_DEV_ECC_DBE_VOL_TOTAL,
        "",
    ),
    (
        "ecc.errors.corrected.aggregate.total",
        DCGM_FI_DEV_ECC_SBE_AGG_TOTAL,
        "",
    ),
    (
        "ecc.errors.uncorrected.aggregate.total",
        DCGM_FI_DEV_ECC_DBE_AGG_TOTAL,
        "",
    ),
    (
        "retired_pages.double_bit.count",
        DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL,
        "",
    ),
    (
        "retired_pages.pending",
        DCGM_FI_DEV_PAGE_RETIRED_PENDING,
        "",
    ),
    ("pcie.link.gen.current", DCGM_FI_DEV_PCIE_LINK_GEN, ""),
    ("pcie.link.gen.max", DCGM_FI_DEV_PCIE_MAX_LINK_GEN, ""),
    ("pcie.link.width.current", DCGM_FI_DEV_PCIE_LINK_WIDTH, ""),
    ("pcie.link.width.max", DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH, ""),
    (
        "clocks_event_reasons.active",
        DCGM_FI_DEV_CLOCKS_EVENT_REASONS,
        "",
    ),
];

struct Format {
    header: bool,
    units: bool,
}

fn parse_format(s: &str) -> Result<Format, String> {
    let mut f = Format {
        header: true,
        units: true,
    };
    let mut csv = false;
    for p in s.split(',').map(str::trim) {
        match p {
            "csv" => csv = true,
            "noheader" => f.header = false,
            "nounits" => f.units = false,
            other => return Err(format!("unknown format option {other:?}")),
        }
    }
    if !csv {
        return Err("only --format=csv[,noheader][,nounits] is supported".into());
    }
    Ok(f)
}

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    if cli.report.query {
        let handle = cli.conn.open()?;
        let (ids, sections) = (&cli.ids, &cli.report.display);
        common::nvsmi_report::run_report(&handle, ids, sections, &mut std::io::stdout())?;
        return Ok(ExitCode::SUCCESS);
    }
    if cli.help_query {
        common::outln!("index");
        for (n, f, _) in PROPERTIES {
            common::outln!("{n}  ({})", FieldId(*f).name());
        }
        return Ok(ExitCode::SUCCESS);
    }
    if cli.query_gpu.is_empty() && cli.query_apps.is_empty() {
        return Err("give --query-gpu=... or --query-compute-apps=... (see --help-query)".into());
    }
    let fmt = parse_format(&cli.format)?;
    let handle = cli.conn.open()?;
    let (group, gpus) = common::gpu_group(&handle, "query", &cli.ids)?;
    loop {
        if !cli.query_gpu.is_empty() {
            query_gpus(&handle, &group, &gpus, &cli.query_gpu, &fmt)?;
        }
        if !cli.query_apps.is_empty() {
            query_apps(&handle, &group, &cli.query_apps, &fmt)?;
        }
        match cli.loop_s {
            Some(s) => std::thread::sleep(Duration::from_secs(s.max(1))),
            None => return Ok(ExitCode::SUCCESS),
        }
    }
}

fn prop(name: &str) -> Result<Option<(u16, &'static str)>, String> {
    if name == "index" || name == "count" || name == "timestamp" {
        return Ok(None);
    }
    PROPERTIES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, f, u)| Some((*f, *u)))
        .ok_or_else(|| format!("unknown property {name:?} (see --help-query)"))
}

fn fmt_value(v: Option<&Value>, unit: &str, units: bool) -> String {
    let s = match v {
        None | Some(Value::Blank(_)) => return "[N/A]".into(),
        Some(Value::Double(d)) => format!("{d:.2}"),
        Some(v) => v.to_string(),
    };
    if units && !unit.is_empty() {
        format!("{s} {unit}")
    } else {
        s
    }
}

fn query_gpus(
    handle: &Handle,
    group: &Group,
    gpus: &[u32],
    props: &[String],
    fmt: &Format,
) -> dcgm::Result<()> {
    let resolved: Vec<Option<(u16, &str)>> = props
        .iter()
        .map(|p| prop(p.trim()).map_err(dcgm::Error::InvalidArgument))
        .collect::<dcgm::Result<_>>()?;
    let mut ids: Vec<FieldId> = resolved
        .iter()
        .flatten()
        .map(|(f, _)| FieldId(*f))
        .collect();
    ids.sort();
    ids.dedup();
    let values = if ids.is_empty() {
        BTreeMap::new()
    } else {
        let fg = FieldGroup::create(handle, &format!("query-gpu-{}", std::process::id()), &ids)?;
        let _w = group.watch(&fg, WatchOptions::default())?;
        handle.update_all_fields(true)?;
        let mut m: BTreeMap<(u32, FieldId), Value> = BTreeMap::new();
        for v in group.latest_values(&fg)? {
            m.insert((v.entity.id, v.field), v.value);
        }
        m
    };
    if fmt.header {
        let cols: Vec<String> = props
            .iter()
            .zip(&resolved)
            .map(|(p, r)| match r {
                Some((_, u)) if fmt.units && !u.is_empty() => format!("{} [{u}]", p.trim()),
                _ => p.trim().to_string(),
            })
            .collect();
        common::outln!("{}", cols.join(", "));
    }
    let now = chrono_like_now();
    for gpu in gpus {
        let cells: Vec<String> = props
            .iter()
            .zip(&resolved)
            .map(|(p, r)| match r {
                None if p.trim() == "index" => gpu.to_string(),
                None if p.trim() == "count" => gpus.len().to_string(),
                None => now.clone(),
                Some((f, u)) => fmt_value(values.get(&(*gpu, FieldId(*f))), u, fmt.units),
            })
            .collect();
        common::outln!("{}", cells.join(", "));
    }
    Ok(())
}

fn chrono_like_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("{secs}")
}

fn query_apps(handle: &Handle, group: &Group, props: &[String], fmt: &Format) -> dcgm::Result<()> {
    let known = [
        "pid",
        "process_name",
        "gpu_uuid",
        "gpu_bus_id",
        "gpu_index",
        "used_memory",
        "gpu_name",
    ];
    if let Some(bad) = props.iter().find(|p| !known.contains(&p.trim())) {
        return Err(dcgm::Error::InvalidArgument(format!(
            "unknown process property {bad:?}; use {}",
            known.join(", ")
        )));
    }
    let fg = FieldGroup::create(
        handle,
        &format!("query-apps-{}", std::process::id()),
        &[FieldId(DCGM_FI_DEV_COMPUTE_PIDS)],
    )?;
    let _w = group.watch(&fg, WatchOptions::default())?;
    handle.update_all_fields(true)?;
    let mut cursor = SinceCursor::default();
    let samples = group.values_since(&fg, &mut cursor)?;
    // The running processes are the samples of each GPU's latest update.
    let mut latest_ts: BTreeMap<u32, i64> = BTreeMap::new();
    for s in &samples {
        let t = latest_ts.entry(s.entity.id).or_insert(0);
        *t = (*t).max(s.timestamp_us);
    }
    if fmt.header {
        let cols: Vec<String> = props
            .iter()
            .map(|p| {
                let p = p.trim();
                if p == "used_memory" && fmt.units {
                    "used_gpu_memory [MiB]".to_string()
                } else {
                    p.to_string()
                }
            })
            .collect();
        common::outln!("{}", cols.join(", "));
    }
    let sys = handle.system();
    for s in &samples {
        if Some(&s.timestamp_us) != latest_ts.get(&s.entity.id) {
            continue;
        }
        let Some(p) = s.value.running_process() else {
            continue;
        };
        let attrs = sys.device_attributes(s.entity.id)?;
        let cells: Vec<String> = props
            .iter()
            .map(|prop| match prop.trim() {
                "pid" => p.pid.to_string(),
                "process_name" => common::process::owner(p.pid, handle.is_simulated())
                    .name
                    .unwrap_or_else(|| "[Not Found]".into()),
                "gpu_uuid" => attrs.uuid.clone(),
                "gpu_bus_id" => attrs.pci_bus_id.clone(),
                "gpu_index" => s.entity.id.to_string(),
                "gpu_name" => attrs.name.clone(),
                _ => {
                    let mib = p.memory_used_bytes >> 20;
                    if fmt.units {
                        format!("{mib} MiB")
                    } else {
                        mib.to_string()
                    }
                }
            })
            .collect();
        common::outln!("{}", cells.join(", "));
    }
    Ok(())
}
