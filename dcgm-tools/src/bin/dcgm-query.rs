//! `query`: `nvidia-smi --query-gpu=... --format=csv` over DCGM, and a
//! `--query-compute-apps` process list.
//!
//! Every property of nvidia-smi's `--help-query-gpu` is accepted, with nvidia-smi's header text
//! and units; a property DCGM has no value for prints nvidia-smi's `[N/A]`. `--help-query-gpu`
//! says which DCGM field supplies each one.
//!
//! ```text
//! dcgm-query --simulate --query-gpu=index,name,utilization.gpu,memory.used --format=csv
//! dcgm-query --simulate --query-gpu=pci.bus_id,pstate -i 0,1 -lms 500
//! dcgm-query --simulate --query-compute-apps=pid,process_name,gpu_uuid,used_memory --format=csv,noheader
//! ```

use dcgm_tools as common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use clap::Parser;
use common::nvsmi_properties::{self as nvsmi, Property, Source};
use dcgm::raw::sys::*;
use dcgm::{
    FieldGroup, FieldId, Group, Handle, MAX_FIELDS_PER_FIELD_GROUP, SinceCursor, Value, Watch,
    WatchOptions,
};

#[derive(Debug, Parser)]
#[command(name = "query", about = "nvidia-smi style queries over DCGM", after_help = common::EXIT_STATUS)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// GPU properties, comma-separated: any of nvidia-smi's (`index,name,uuid,pci.bus_id,
    /// temperature.gpu,utilization.gpu,memory.used,power.draw,pstate,...`; `--help-query-gpu`
    /// lists them).
    #[arg(long = "query-gpu", value_delimiter = ',')]
    query_gpu: Vec<String>,
    /// Process properties, comma-separated (`--help-query-compute-apps` lists them).
    #[arg(long = "query-compute-apps", value_delimiter = ',')]
    query_apps: Vec<String>,
    /// `csv` with optional `noheader` and `nounits`, comma-separated.
    #[arg(long, default_value = "csv")]
    format: String,
    /// Repeat every SEC seconds (5 when no number is given) until interrupted.
    #[arg(short = 'l', long = "loop", value_name = "SEC", num_args = 0..=1, default_missing_value = "5")]
    loop_s: Option<u64>,
    /// Repeat every MS milliseconds (also spelt `-lms MS`, as nvidia-smi takes it).
    #[arg(long = "loop-ms", value_name = "MS", conflicts_with = "loop_s")]
    loop_ms: Option<u64>,
    /// Only these GPUs, comma-separated: index, UUID (`GPU-...`) or PCI bus id
    /// (`00000000:00:06.0`, or `00:06.0`).
    #[arg(short = 'i', long = "id", value_delimiter = ',')]
    ids: Vec<String>,
    /// Write the output to this file instead of standard output.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    file: Option<PathBuf>,
    /// List the `--query-gpu` properties, what each means and its DCGM source, and exit.
    #[arg(long = "help-query-gpu", alias = "help-query")]
    help_query_gpu: bool,
    /// List the `--query-compute-apps` properties and exit.
    #[arg(long = "help-query-compute-apps")]
    help_query_apps: bool,
    /// `-q [-d SECTIONS]`: nvidia-smi's per-GPU report (`dcgm_tools::nvsmi_report`).
    #[command(flatten)]
    report: common::nvsmi_report::ReportArgs,
}

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

/// nvidia-smi spells the millisecond loop `-lms`, which no argument parser takes as one short
/// option: it becomes `--loop-ms` before parsing.
fn nvsmi_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    args.into_iter()
        .map(|a| match a.to_str() {
            Some("-lms") => "--loop-ms".into(),
            Some(s) if s.starts_with("-lms=") => format!("--loop-ms={}", &s[5..]).into(),
            _ => a,
        })
        .collect()
}

fn main() -> ExitCode {
    let cli: Cli = common::parse_from(nvsmi_args(std::env::args_os()));
    common::finish(match run(&cli) {
        Ok(code) => code,
        Err(e) => common::report(e),
    })
}

/// Where the lines go: standard output (quiet exit when its reader goes away) or `-f FILE`.
enum Out {
    Stdout,
    File(std::fs::File, PathBuf),
}

impl Out {
    fn line(&mut self, s: &str) -> common::Result<()> {
        match self {
            Out::Stdout => {
                common::outln!("{s}");
                Ok(())
            }
            Out::File(f, p) => writeln!(f, "{s}")
                .map_err(|e| format!("cannot write to {}: {e}", p.display()).into()),
        }
    }
}

fn run(cli: &Cli) -> common::Result {
    if cli.help_query_gpu {
        print_gpu_help();
        return Ok(ExitCode::SUCCESS);
    }
    if cli.help_query_apps {
        print_apps_help();
        return Ok(ExitCode::SUCCESS);
    }
    if cli.report.query {
        let handle = cli.conn.open()?;
        let all = handle.system().gpu_ids()?;
        let ids = select_gpus(&handle, &all, &cli.ids)?;
        let sections = &cli.report.display;
        common::nvsmi_report::run_report(
            &handle,
            &ids,
            sections,
            cli.report.sample_window(),
            &mut std::io::stdout(),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if cli.query_gpu.is_empty() && cli.query_apps.is_empty() {
        return Err(
            "give --query-gpu=..., --query-compute-apps=... or -q (see --help-query-gpu)".into(),
        );
    }
    let fmt = parse_format(&cli.format)?;
    // Every name is checked before DCGM is started: a typo costs no engine start.
    let gpu_props = cli
        .query_gpu
        .iter()
        .map(|p| nvsmi::gpu_property(p.trim()).ok_or_else(|| not_valid(p)))
        .collect::<Result<Vec<_>, _>>()?;
    let app_props = cli
        .query_apps
        .iter()
        .map(|p| nvsmi::app_property(p.trim()).ok_or_else(|| not_valid(p)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = match &cli.file {
        Some(p) => Out::File(
            std::fs::File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?,
            p.clone(),
        ),
        None => Out::Stdout,
    };
    let handle = cli.conn.open()?;
    let all = handle.system().gpu_ids()?;
    let ids = select_gpus(&handle, &all, &cli.ids)?;
    let (group, gpus) = common::gpu_group(&handle, "query", &ids)?;
    let period = match (cli.loop_s, cli.loop_ms) {
        (Some(s), _) => Some(Duration::from_secs(s.max(1))),
        (_, Some(ms)) => Some(Duration::from_millis(ms.max(1))),
        _ => None,
    };
    let gpu_query = if gpu_props.is_empty() {
        None
    } else {
        Some(GpuQuery::watch(
            &handle,
            &group,
            (gpus.clone(), all.len()),
            gpu_props,
            period,
        )?)
    };
    let mut first = true;
    loop {
        if let Some(q) = &gpu_query {
            q.print(&handle, &group, &fmt, first, &mut out)?;
        }
        if !app_props.is_empty() {
            query_apps(&handle, &group, &app_props, &fmt, first, &mut out)?;
        }
        first = false;
        match period {
            Some(p) => std::thread::sleep(p),
            None => return Ok(ExitCode::SUCCESS),
        }
    }
}

/// nvidia-smi's words for a property it does not know.
fn not_valid(p: &str) -> String {
    format!(
        "Field \"{}\" is not a valid field to query (--help-query-gpu and \
         --help-query-compute-apps list the valid ones)",
        p.trim()
    )
}

/// The GPUs `-i` names (all when none), in index order.
fn select_gpus(handle: &Handle, all: &[u32], given: &[String]) -> common::Result<Vec<u32>> {
    if given.is_empty() {
        return Ok(all.to_vec());
    }
    let sys = handle.system();
    let attrs = all
        .iter()
        .map(|&g| sys.device_attributes(g).map(|a| (g, a)))
        .collect::<dcgm::Result<Vec<_>>>()?;
    let mut out = Vec::new();
    for id in given.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        let found = attrs.iter().find(|(g, a)| {
            id.parse::<u32>().ok() == Some(*g)
                || a.uuid.eq_ignore_ascii_case(id)
                || pci_address(&a.pci_bus_id).is_some_and(|b| pci_address(id) == Some(b))
        });
        match found {
            Some((g, _)) if !out.contains(g) => out.push(*g),
            Some(_) => {}
            None => {
                return Err(format!(
                    "no GPU with index, UUID or PCI bus id {id:?} (GPUs: {})",
                    common::ranges(all)
                )
                .into());
            }
        }
    }
    // nvidia-smi lists the chosen GPUs in its own order, whatever the order of `-i`.
    out.sort_unstable();
    Ok(out)
}

/// `[domain:]bus:device.function` as numbers (`00000000:00:06.0` and `00:06.0` are equal).
fn pci_address(s: &str) -> Option<(u32, u32, u32, u32)> {
    let (rest, function) = s.rsplit_once('.')?;
    let mut parts: Vec<&str> = rest.split(':').collect();
    if parts.len() == 2 {
        parts.insert(0, "0");
    }
    let [domain, bus, device] = parts[..] else {
        return None;
    };
    let hex = |p: &str| u32::from_str_radix(p, 16).ok();
    Some((hex(domain)?, hex(bus)?, hex(device)?, hex(function)?))
}

/// The `--query-gpu` properties, with the DCGM watches their fields need.
struct GpuQuery {
    props: Vec<&'static Property>,
    /// The GPUs to print, and how many the node has (`count`).
    gpus: Vec<u32>,
    count: usize,
    groups: Vec<FieldGroup>,
    _watches: Vec<Watch>,
}

impl GpuQuery {
    fn watch(
        handle: &Handle,
        group: &Group,
        (gpus, count): (Vec<u32>, usize),
        props: Vec<&'static Property>,
        period: Option<Duration>,
    ) -> dcgm::Result<Self> {
        let mut ids: Vec<FieldId> = props.iter().filter_map(|p| p.field()).collect();
        if props.iter().any(|p| matches!(p.source, Source::Fabric(..))) {
            ids.push(FieldId(DCGM_FI_DEV_FABRIC_MANAGER_STATUS));
        }
        ids.sort();
        ids.dedup();
        let mut options = WatchOptions::default();
        if let Some(p) = period {
            options.update_interval = options.update_interval.min(p);
        }
        let (mut groups, mut watches) = (Vec::new(), Vec::new());
        for (n, chunk) in ids.chunks(MAX_FIELDS_PER_FIELD_GROUP).enumerate() {
            let fg = FieldGroup::create(
                handle,
                &format!("query-gpu-{}-{n}", std::process::id()),
                chunk,
            )?;
            watches.push(group.watch(&fg, options)?);
            groups.push(fg);
        }
        Ok(Self {
            props,
            gpus,
            count,
            groups,
            _watches: watches,
        })
    }

    fn print(
        &self,
        handle: &Handle,
        group: &Group,
        fmt: &Format,
        header: bool,
        out: &mut Out,
    ) -> common::Result<()> {
        let mut values: BTreeMap<(u32, FieldId), Value> = BTreeMap::new();
        let mut global: BTreeMap<FieldId, Value> = BTreeMap::new();
        if !self.groups.is_empty() {
            handle.update_all_fields(true)?;
        }
        for fg in &self.groups {
            for v in group.latest_values(fg)? {
                if v.field.is_global() {
                    global.insert(v.field, v.value.clone());
                }
                values.insert((v.entity.id, v.field), v.value);
            }
        }
        if header && fmt.header {
            let cols: Vec<String> = self.props.iter().map(|p| p.header()).collect();
            out.line(&cols.join(", "))?;
        }
        for &gpu in &self.gpus {
            let get = |f: FieldId| values.get(&(gpu, f)).or_else(|| global.get(&f));
            let now = nvsmi::timestamp(SystemTime::now());
            let cells: Vec<String> = self
                .props
                .iter()
                .map(|p| match p.source {
                    Source::Index => gpu.to_string(),
                    Source::Count => self.count.to_string(),
                    Source::Timestamp => now.clone(),
                    Source::None(text) => text.to_string(),
                    Source::Field(_, how) => cell(p, get, how, fmt),
                    Source::Fabric(_, how) => {
                        let state = get(FieldId(DCGM_FI_DEV_FABRIC_MANAGER_STATUS));
                        if state.and_then(Value::as_i64) == Some(nvsmi::FABRIC_COMPLETED) {
                            cell(p, get, how, fmt)
                        } else {
                            "N/A".into()
                        }
                    }
                })
                .collect();
            out.line(&cells.join(", "))?;
        }
        Ok(())
    }
}

/// A field's cell: the value with its unit (unless `nounits`), or the text nvidia-smi prints in
/// its place.
fn cell<'v>(
    p: &Property,
    get: impl Fn(FieldId) -> Option<&'v Value>,
    how: nvsmi::Show,
    fmt: &Format,
) -> String {
    let v = p.field().and_then(get);
    match nvsmi::show(v, how) {
        Ok(s) if fmt.units && !p.unit.is_empty() => format!("{s} {}", p.unit),
        Ok(s) | Err(s) => s,
    }
}

fn print_gpu_help() {
    common::outln!("Properties for --query-gpu (nvidia-smi's names; aliases after \"or\"):");
    common::outln!();
    for p in nvsmi::GPU_PROPERTIES {
        let mut names = format!("\"{}\"", p.name);
        for a in p.aliases {
            names.push_str(&format!(" or \"{a}\""));
        }
        let unit = if p.unit.is_empty() {
            String::new()
        } else {
            format!(" [{}]", p.unit)
        };
        common::outln!("{names}{unit}");
        common::outln!("    {}. From: {}.", capitalised(p.meaning), p.source_text());
    }
}

fn print_apps_help() {
    common::outln!(
        "Properties for --query-compute-apps (nvidia-smi's names; aliases after \"or\"):"
    );
    common::outln!();
    let what = [
        ("timestamp", "when this line was read"),
        ("gpu_name", "product name of the process's GPU"),
        ("gpu_bus_id", "PCI bus id of the process's GPU"),
        ("gpu_serial", "board serial number of the process's GPU"),
        ("gpu_uuid", "UUID of the process's GPU"),
        ("pid", "the process id"),
        ("process_name", "the process's command name"),
        ("used_gpu_memory", "GPU memory the process holds"),
        (
            "gpu_index",
            "DCGM id of the process's GPU (not in nvidia-smi)",
        ),
    ];
    for p in nvsmi::APP_PROPERTIES {
        let mut names = format!("\"{}\"", p.name);
        for a in p.aliases {
            names.push_str(&format!(" or \"{a}\""));
        }
        let meaning = what.iter().find(|(n, _)| *n == p.name).map_or("", |w| w.1);
        common::outln!("{names}");
        common::outln!("    {}.", capitalised(meaning));
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn query_apps(
    handle: &Handle,
    group: &Group,
    props: &[&nvsmi::AppProperty],
    fmt: &Format,
    header: bool,
    out: &mut Out,
) -> common::Result<()> {
    let fg = FieldGroup::create(
        handle,
        &format!("query-apps-{}", std::process::id()),
        &[FieldId(DCGM_FI_DEV_COMPUTE_PIDS)],
    )?;
    let _w = group.watch(&fg, WatchOptions::default())?;
    handle.update_all_fields(true)?;
    let mut cursor = SinceCursor::default();
    let samples = group.values_since(&fg, &mut cursor)?;
    // The running processes are the samples of each GPU's latest update (libdcgm stores them
    // at consecutive microseconds: `dcgm::running_processes_of` groups them back).
    let processes = dcgm::running_processes_of(&samples);
    if header && fmt.header {
        let cols: Vec<String> = props.iter().map(|p| p.header()).collect();
        out.line(&cols.join(", "))?;
    }
    let sys = handle.system();
    for (entity, p) in processes
        .iter()
        .flat_map(|(e, list)| list.iter().map(move |p| (e, p)))
    {
        let attrs = sys.device_attributes(entity.id)?;
        let now = nvsmi::timestamp(SystemTime::now());
        let cells: Vec<String> = props
            .iter()
            .map(|prop| match prop.name {
                "timestamp" => now.clone(),
                "pid" => p.pid.to_string(),
                "process_name" => common::process::owner(p.pid, handle.is_simulated())
                    .name
                    .unwrap_or_else(|| "[Not Found]".into()),
                "gpu_uuid" => attrs.uuid.clone(),
                "gpu_bus_id" => attrs.pci_bus_id.clone(),
                "gpu_serial" => attrs
                    .serial
                    .clone()
                    .unwrap_or_else(|| nvsmi::NA.to_string()),
                "gpu_index" => entity.id.to_string(),
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
        out.line(&cells.join(", "))?;
    }
    Ok(())
}
