//! `dmon`: watch fields of GPUs (or any entities) and print a line per entity every interval,
//! like `dcgmi dmon` / `nvidia-smi dmon`.
//!
//! ```text
//! dcgm-dmon --simulate -e gpu_temp,power_usage,DCGM_FI_DEV_GPU_UTIL -c 5
//! dcgm-dmon -i 0,gi:1 -e fb_used --csv | tee log.csv
//! dcgm-dmon --simulate -s pucvmet -c 5
//! ```

use dcgm_tools as common;

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dcgm::raw::sys::*;
use dcgm::{Entity, EntityGroup, FieldId, FieldMeta, FieldValue, Value};

/// The field list when neither `-e` nor `-s` is given.
const DEFAULT_FIELDS: &str =
    "gpu_temp,power_usage,gpu_utilization,mem_copy_utilization,sm_clock,memory_clock,fb_used";

#[derive(Debug, Parser)]
#[command(
    name = "dmon",
    about = "Print DCGM field values of GPUs and other entities at an interval", after_help = common::EXIT_STATUS)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// Fields: ids, DCGM_FI_* names (4.6 or pre-4.6) or tags, comma-separated. Every format
    /// titles a column with the name as given (a numeric id with the field's tag). With `-s`
    /// they follow the groups' columns; with neither, dmon shows gpu_temp, power_usage,
    /// gpu_utilization, mem_copy_utilization, sm_clock, memory_clock and fb_used.
    #[arg(short = 'e', long = "fields", value_delimiter = ',')]
    fields: Option<Vec<String>>,
    /// nvidia-smi dmon's metric groups, in its columns and layout: p power and temperature,
    /// u utilisation, c clocks, v power and thermal violations, m memory, e ECC errors and
    /// PCIe replays, t PCIe throughput (e.g. `-s pucvmet`). GPUs only; `-` where DCGM has no
    /// value, and in v's columns on the first sample (they measure an interval). With `-e`,
    /// the fields follow the groups' columns.
    #[arg(short = 's', long = "select", value_name = "GROUPS")]
    select: Option<String>,
    /// Delay between samples, in milliseconds, as `dcgmi dmon -d` has it (nvidia-smi dmon's
    /// `-d` counts seconds: its `-d 2` is `-d 2000` here).
    #[arg(short = 'd', long = "delay", default_value_t = 1000)]
    delay_ms: u64,
    /// Number of samples to print (0: until interrupted).
    #[arg(short = 'c', long = "count", default_value_t = 0)]
    count: u64,
    /// Entities: GPU ids and `gi:N`, `ci:N`, `sw:N`, `cpu:N`, `core:N` (default: every GPU).
    #[arg(short = 'i', long = "entities")]
    entities: Option<String>,
    /// Comma-separated values instead of a table.
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

enum Format {
    Table,
    Csv,
    Json,
}

/// Where a column of nvidia-smi dmon's groups takes its value from.
#[derive(Clone, Copy)]
enum Source {
    /// A field, as an integer (nvidia-smi prints whole numbers).
    Field(u16),
    /// A throughput field in KB/s, printed in MB/s.
    KbToMb(u16),
    /// A cumulative violation time in ns: the share of the last interval it grew by, in %.
    ViolationPercent(u16),
    /// A cumulative violation time in ns: 1 when it grew during the last interval, else 0.
    ViolationBool(u16),
    /// Nothing in DCGM: always `-`.
    None,
}

impl Source {
    fn field(self) -> Option<u16> {
        match self {
            Source::Field(f)
            | Source::KbToMb(f)
            | Source::ViolationPercent(f)
            | Source::ViolationBool(f) => Some(f),
            Source::None => None,
        }
    }
}

/// A column of a group: its title and unit as nvidia-smi dmon prints them, and its source.
type GroupColumn = (&'static str, &'static str, Source);

/// nvidia-smi dmon's `-s` groups: letter, then its columns in its order.
const GROUPS: &[(char, &[GroupColumn])] = &[
    (
        'p',
        &[
            ("pwr", "W", Source::Field(DCGM_FI_DEV_BOARD_POWER_WATTS)),
            ("gtemp", "C", Source::Field(DCGM_FI_DEV_GPU_TEMP_CELSIUS)),
            ("mtemp", "C", Source::Field(DCGM_FI_DEV_MEMORY_TEMP_CELSIUS)),
        ],
    ),
    (
        'u',
        &[
            ("sm", "%", Source::Field(DCGM_FI_DEV_GPU_UTIL_RATIO)),
            ("mem", "%", Source::Field(DCGM_FI_DEV_MEM_COPY_UTIL)),
            ("enc", "%", Source::Field(DCGM_FI_DEV_ENC_UTIL)),
            ("dec", "%", Source::Field(DCGM_FI_DEV_DEC_UTIL)),
            // JPEG and OFA utilisation exist only as profiling metrics, per engine.
            ("jpg", "%", Source::None),
            ("ofa", "%", Source::None),
        ],
    ),
    (
        'c',
        &[
            ("mclk", "MHz", Source::Field(DCGM_FI_DEV_MEM_CLOCK)),
            ("pclk", "MHz", Source::Field(DCGM_FI_DEV_SM_CLOCK)),
        ],
    ),
    (
        'v',
        &[
            (
                "pviol",
                "%",
                Source::ViolationPercent(DCGM_FI_DEV_POWER_VIOLATION),
            ),
            (
                "tviol",
                "bool",
                Source::ViolationBool(DCGM_FI_DEV_THERMAL_VIOLATION),
            ),
        ],
    ),
    (
        'm',
        &[
            ("fb", "MB", Source::Field(DCGM_FI_DEV_FB_USED)),
            ("bar1", "MB", Source::Field(DCGM_FI_DEV_BAR1_USED)),
            // Confidential-compute protected memory has no DCGM field.
            ("ccpm", "MB", Source::None),
        ],
    ),
    (
        'e',
        &[
            (
                "sbecc",
                "errs",
                Source::Field(DCGM_FI_DEV_ECC_SBE_VOL_TOTAL),
            ),
            (
                "dbecc",
                "errs",
                Source::Field(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL),
            ),
            ("pci", "errs", Source::Field(DCGM_FI_DEV_PCIE_REPLAY_TOTAL)),
        ],
    ),
    (
        't',
        &[
            (
                "rxpci",
                "MB/s",
                Source::KbToMb(DCGM_FI_DEV_PCIE_RX_THROUGHPUT),
            ),
            (
                "txpci",
                "MB/s",
                Source::KbToMb(DCGM_FI_DEV_PCIE_TX_THROUGHPUT),
            ),
        ],
    ),
];

/// A column of the output: its title, unit, width and where its value comes from.
struct Column {
    name: String,
    unit: String,
    width: usize,
    /// A group column (`-s`), or one of the `-e` fields.
    source: Either,
}

enum Either {
    Group(Source),
    Field(FieldId),
}

/// The columns of `-s GROUPS`, in nvidia-smi's order whatever the order given.
fn group_columns(select: &str) -> common::Result<Vec<Column>, String> {
    let letters: Vec<char> = select.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some(bad) = letters
        .iter()
        .find(|c| !GROUPS.iter().any(|(g, _)| g == *c))
    {
        return Err(format!(
            "unknown -s group {bad:?}: give some of p (power, temperature), u (utilisation), \
             c (clocks), v (violations), m (memory), e (ECC, PCIe replays), t (PCIe throughput)"
        ));
    }
    if letters.is_empty() {
        return Err("-s needs at least one group of pucvmet".into());
    }
    Ok(GROUPS
        .iter()
        .filter(|(g, _)| letters.contains(g))
        .flat_map(|(_, cols)| cols.iter())
        .map(|&(name, unit, source)| Column {
            name: name.to_string(),
            unit: unit.to_string(),
            width: 6,
            source: Either::Group(source),
        })
        .collect())
}

/// What a violation column remembers of an entity: the last counter and its time, and the
/// last value printed (shown again while no new sample has come).
#[derive(Clone, Copy, Default)]
struct Violation {
    last: Option<(i64, i64)>,
    shown: Option<i64>,
}

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    if cli.delay_ms == 0 {
        return Err("the delay must be at least 1 ms".into());
    }
    let mut columns = match &cli.select {
        Some(s) => group_columns(s)?,
        None => Vec::new(),
    };
    let nvsmi = cli.select.is_some();
    let typed: Vec<String> = match (&cli.fields, nvsmi) {
        (Some(f), _) => f.clone(),
        (None, true) => Vec::new(),
        (None, false) => DEFAULT_FIELDS.split(',').map(String::from).collect(),
    };
    for t in &typed {
        let f = FieldId::parse(t)?;
        let meta = f.meta().expect("parsed fields are known");
        // The user's own spelling titles every format, so a column is found under what was typed.
        let t = t.trim();
        let name = if t.parse::<u16>().is_ok() {
            f.tag()
        } else {
            t.to_string()
        };
        let width = if nvsmi {
            name.len().max(6)
        } else {
            (meta.width.max(6) as usize).max(name.len())
        };
        columns.push(Column {
            unit: unit(&meta).to_string(),
            name,
            width,
            source: Either::Field(f),
        });
    }
    let mut fields: Vec<FieldId> = columns
        .iter()
        .filter_map(|c| match c.source {
            Either::Group(s) => s.field().map(FieldId),
            Either::Field(f) => Some(f),
        })
        .collect();
    fields.sort();
    fields.dedup();
    let mut builder = cli
        .conn
        .reader()
        .fields(&fields)
        .update_frequency(Duration::from_millis(cli.delay_ms))
        .max_keep_age(Duration::from_secs(60))
        .ignore_blank(false);
    if let Some(e) = &cli.entities {
        let ents = common::parse_entities(e)?;
        if nvsmi && ents.iter().any(|e| e.group != EntityGroup::Gpu) {
            return Err("-s reports GPUs only: give GPU ids to -i".into());
        }
        builder = builder.entities(&ents);
    }
    let mut reader = cli.conn.connect_reader(builder.build()?)?;
    let simulated = reader.is_simulated().unwrap_or(false);
    let format = if cli.csv {
        Format::Csv
    } else if cli.json {
        Format::Json
    } else {
        Format::Table
    };
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    match format {
        Format::Table if nvsmi => {
            // nvidia-smi dmon's layout: every column right-aligned and followed by a space.
            let mut h = String::from("# gpu ");
            let mut u = String::from("# Idx ");
            for c in &columns {
                let w = c.width;
                h += &format!("{:>w$} ", c.name);
                u += &format!("{:>w$} ", c.unit);
            }
            common::outln!("{h}\n{u}");
        }
        Format::Table => {
            let mut h = format!("{:<16}", "#Entity");
            let mut u = format!("{:<16}", "ID");
            for c in &columns {
                let w = c.width;
                h += &format!(" {:>w$}", c.name);
                u += &format!(" {:>w$}", c.unit);
            }
            common::outln!("{h}\n{u}");
        }
        Format::Csv => {
            common::outln!("timestamp,entity_group,entity_id,{}", names.join(","));
        }
        Format::Json => {}
    }
    let mut violations: HashMap<(Entity, u16), Violation> = HashMap::new();
    let mut n = 0u64;
    let mut snap = dcgm_reader::Snapshot::new();
    loop {
        reader.latest_into(&mut snap)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        for (entity, values) in &snap {
            let cells: Vec<Option<Value>> = columns
                .iter()
                .map(|c| match c.source {
                    Either::Field(f) => values.get(&f).map(|v| v.value.clone()),
                    Either::Group(s) => group_cell(s, entity, values, &mut violations),
                })
                .collect();
            let line = match format {
                Format::Table if nvsmi => {
                    let mut s = format!("{:>5} ", entity.id);
                    for (c, v) in columns.iter().zip(&cells) {
                        let w = c.width;
                        s += &format!("{:>w$} ", cell(v.as_ref(), "-"));
                    }
                    s
                }
                _ => render(&format, entity, &columns, &cells, now, simulated),
            };
            common::outln!("{line}");
        }
        n += 1;
        if cli.count != 0 && n >= cli.count {
            break;
        }
        std::thread::sleep(Duration::from_millis(cli.delay_ms));
    }
    Ok(ExitCode::SUCCESS)
}

/// The value of a group column for one entity: whole numbers as nvidia-smi prints them, a
/// blank where DCGM has none.
fn group_cell(
    source: Source,
    entity: &Entity,
    values: &std::collections::BTreeMap<FieldId, FieldValue>,
    violations: &mut HashMap<(Entity, u16), Violation>,
) -> Option<Value> {
    let field = source.field()?;
    let v = values.get(&FieldId(field))?;
    let x = v.value.as_f64()?;
    match source {
        Source::Field(_) => Some(Value::Int(x.round() as i64)),
        Source::KbToMb(_) => Some(Value::Int((x / 1024.0).round() as i64)),
        Source::ViolationPercent(_) | Source::ViolationBool(_) => {
            let state = violations.entry((*entity, field)).or_default();
            let now = (x as i64, v.timestamp_us);
            match state.last {
                Some((ns, ts)) if now.1 > ts => {
                    let grew = (now.0 - ns).max(0) as f64;
                    let share = grew / ((now.1 - ts) as f64 * 1000.0);
                    state.shown = Some(match source {
                        Source::ViolationBool(_) => i64::from(grew > 0.0),
                        _ => (share * 100.0).round().clamp(0.0, 100.0) as i64,
                    });
                }
                _ => {}
            }
            if state.last.is_none_or(|(_, ts)| now.1 > ts) {
                state.last = Some(now);
            }
            // The first sample has nothing to compare with.
            state.shown.map(Value::Int)
        }
        Source::None => None,
    }
}

/// A value as a table or CSV cell; `blank` where there is none.
fn cell(v: Option<&Value>, blank: &str) -> String {
    match v {
        None | Some(Value::Blank(_)) => blank.to_string(),
        Some(Value::Double(d)) => format!("{d:.2}"),
        Some(v) => v.to_string(),
    }
}

/// The unit of a column. libdcgm's own table leaves it empty for many fields (utilisation,
/// clocks, framebuffer), whose 4.6 names or meaning still say it.
fn unit(m: &FieldMeta) -> &'static str {
    let info = dcgm::raw::sys::field_by_id(m.id.0).expect("parsed fields are known");
    if !info.unit.is_empty() {
        return info.unit;
    }
    let name = info.name;
    if name.ends_with("_RATIO") || name.ends_with("_UTIL") || name.ends_with("_PERCENT") {
        "%"
    } else if name.contains("_CLOCK") || name.ends_with("_MHZ") {
        "MHz"
    } else if name.starts_with("DCGM_FI_DEV_FB_") || name.ends_with("_MIB") {
        "MiB"
    } else {
        ""
    }
}

fn render(
    format: &Format,
    entity: &Entity,
    columns: &[Column],
    cells: &[Option<Value>],
    now_ms: u128,
    simulated: bool,
) -> String {
    match format {
        Format::Table => {
            let mut s = format!("{:<16}", common::entity_label(entity));
            for (c, v) in columns.iter().zip(cells) {
                let w = c.width;
                s += &format!(" {:>w$}", cell(v.as_ref(), "N/A"));
            }
            s
        }
        Format::Csv => {
            let vals: Vec<String> = cells
                .iter()
                .map(|v| {
                    let c = cell(v.as_ref(), "N/A");
                    if c.contains(',') || c.contains('"') {
                        format!("\"{}\"", c.replace('"', "\"\""))
                    } else {
                        c
                    }
                })
                .collect();
            format!(
                "{now_ms},{},{},{}",
                entity.group.name(),
                entity.id,
                vals.join(",")
            )
        }
        Format::Json => {
            let mut obj = serde_json::Map::new();
            obj.insert("timestamp_ms".into(), serde_json::json!(now_ms as u64));
            obj.insert(
                "entity_group".into(),
                serde_json::json!(entity.group.name()),
            );
            obj.insert("entity_id".into(), serde_json::json!(entity.id));
            if simulated {
                obj.insert("simulated".into(), serde_json::json!(true));
            }
            for (c, v) in columns.iter().zip(cells) {
                let j = match v {
                    Some(Value::Int(i)) => serde_json::json!(i),
                    Some(Value::Double(d)) => serde_json::json!(d),
                    Some(Value::String(s)) => serde_json::json!(s),
                    _ => serde_json::Value::Null,
                };
                obj.insert(c.name.clone(), j);
            }
            serde_json::Value::Object(obj).to_string()
        }
    }
}
