//! `dmon`: watch fields of GPUs (or any entities) and print a line per entity every interval,
//! like `dcgmi dmon` / `nvidia-smi dmon`.
//!
//! ```text
//! cargo run --example dmon -- --simulate -e gpu_temp,power_usage,DCGM_FI_DEV_GPU_UTIL -c 5
//! cargo run --example dmon -- -i 0,gi:1 -e fb_used --csv | tee log.csv
//! ```

mod common;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use dcgm::{Entity, FieldId, FieldMeta, Value};

#[derive(Debug, Parser)]
#[command(
    name = "dmon",
    about = "Print DCGM field values of GPUs and other entities at an interval", after_help = common::EXIT_STATUS)]
struct Cli {
    #[command(flatten)]
    conn: common::ConnectArgs,
    /// Fields: ids, DCGM_FI_* names (4.6 or pre-4.6) or tags, comma-separated. Every format
    /// titles a column with the name as given (a numeric id with the field's tag).
    #[arg(
        short = 'e',
        long = "fields",
        value_delimiter = ',',
        default_value = "gpu_temp,power_usage,gpu_utilization,mem_copy_utilization,sm_clock,memory_clock,fb_used"
    )]
    fields: Vec<String>,
    /// Delay between samples, in milliseconds.
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

fn main() -> ExitCode {
    common::main(run)
}

fn run(cli: &Cli) -> common::Result {
    let fields: Vec<FieldId> = cli
        .fields
        .iter()
        .map(|f| FieldId::parse(f))
        .collect::<Result<_, _>>()?;
    if cli.delay_ms == 0 {
        return Err("the delay must be at least 1 ms".into());
    }
    let mut builder = cli
        .conn
        .reader()
        .fields(&fields)
        .update_frequency(Duration::from_millis(cli.delay_ms))
        .max_keep_age(Duration::from_secs(60))
        .ignore_blank(false);
    if let Some(e) = &cli.entities {
        let ents = common::parse_entities(e)?;
        builder = builder.entities(&ents);
    }
    let mut reader = cli.conn.connect_reader(builder.build()?)?;
    let simulated = reader.is_simulated().unwrap_or(false);
    let metas: Vec<FieldMeta> = fields
        .iter()
        .map(|f| f.meta().expect("parsed fields are known"))
        .collect();
    // The user's own spelling titles every format, so a column is found under what was typed.
    let names: Vec<String> = cli
        .fields
        .iter()
        .zip(&fields)
        .map(|(typed, f)| {
            let typed = typed.trim();
            if typed.parse::<u16>().is_ok() {
                f.tag()
            } else {
                typed.to_string()
            }
        })
        .collect();
    let units: Vec<&str> = metas.iter().map(unit).collect();
    let format = if cli.csv {
        Format::Csv
    } else if cli.json {
        Format::Json
    } else {
        Format::Table
    };
    let widths: Vec<usize> = metas
        .iter()
        .zip(&names)
        .map(|(m, n)| (m.width.max(6) as usize).max(n.len()))
        .collect();
    match format {
        Format::Table => {
            let mut h = format!("{:<16}", "#Entity");
            let mut u = format!("{:<16}", "ID");
            for ((n, unit), &w) in names.iter().zip(&units).zip(&widths) {
                h += &format!(" {n:>w$}");
                u += &format!(" {unit:>w$}");
            }
            common::outln!("{h}\n{u}");
        }
        Format::Csv => {
            common::outln!("timestamp,entity_group,entity_id,{}", names.join(","));
        }
        Format::Json => {}
    }
    let mut n = 0u64;
    let mut snap = dcgm_reader::Snapshot::new();
    loop {
        reader.latest_into(&mut snap)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        for (entity, values) in &snap {
            let cells: Vec<Option<&Value>> = fields
                .iter()
                .map(|f| values.get(f).map(|v| &v.value))
                .collect();
            let line = render(&format, entity, &names, &widths, &cells, now, simulated);
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

fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Blank(_)) => "N/A".to_string(),
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
    names: &[String],
    widths: &[usize],
    cells: &[Option<&Value>],
    now_ms: u128,
    simulated: bool,
) -> String {
    match format {
        Format::Table => {
            let mut s = format!("{:<16}", common::entity_label(entity));
            for (&w, v) in widths.iter().zip(cells) {
                s += &format!(" {:>w$}", cell(*v));
            }
            s
        }
        Format::Csv => {
            let vals: Vec<String> = cells
                .iter()
                .map(|v| {
                    let c = cell(*v);
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
            for (name, v) in names.iter().zip(cells) {
                let j = match v {
                    Some(Value::Int(i)) => serde_json::json!(i),
                    Some(Value::Double(d)) => serde_json::json!(d),
                    Some(Value::String(s)) => serde_json::json!(s),
                    _ => serde_json::Value::Null,
                };
                obj.insert(name.clone(), j);
            }
            serde_json::Value::Object(obj).to_string()
        }
    }
}
