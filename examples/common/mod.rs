//! What every example tool shares: how to reach DCGM (real, remote or simulated) and how to
//! name entities on the command line.

#![allow(dead_code)]

pub mod gpu_stats;
pub mod process;

use std::path::PathBuf;

use clap::Args;
use dcgm::{Entity, EntityGroup, Handle, HandleBuilder};
use dcgm_reader::{Connection, ReaderBuilder};

/// Connection options shared by the tools.
#[derive(Debug, Clone, Args)]
pub struct ConnectArgs {
    /// Use the dcgm-sim simulator instead of NVIDIA's libdcgm (output is labelled simulated).
    #[arg(long)]
    pub simulate: bool,
    /// Connect to this nv-hostengine (host, host:port, unix:///path) instead of starting the
    /// embedded engine.
    #[arg(long, value_name = "ADDRESS")]
    pub host: Option<String>,
    /// Load libdcgm (or dcgm-sim) from this path.
    #[arg(long, value_name = "PATH")]
    pub lib: Option<PathBuf>,
}

impl ConnectArgs {
    fn builder(&self) -> HandleBuilder {
        // Every tool exits when its work is done: stopping the embedded engine first would
        // only add the real library's two-second stop to each run.
        let mut b = Handle::builder().keep_engine_until_exit(true);
        if let Some(p) = &self.lib {
            b = b.library_path(p);
        } else if self.simulate {
            b = b.simulator();
        }
        b
    }

    /// Opens a handle as asked, and says on stderr when the data is simulated.
    pub fn open(&self) -> dcgm::Result<Handle> {
        let h = match &self.host {
            Some(a) => self.builder().connect(a)?,
            None => self.builder().embedded()?,
        };
        if h.is_simulated() {
            eprintln!("# SIMULATED DATA: reading from dcgm-sim, not from real GPUs");
        }
        Ok(h)
    }

    /// A reader builder with the same connection choices.
    pub fn reader(&self) -> ReaderBuilder {
        let mut b = dcgm_reader::Reader::builder().keep_engine_until_exit(true);
        if let Some(p) = &self.lib {
            b = b.library_path(p);
        } else if self.simulate {
            b = b.simulator();
        }
        b.connection(match &self.host {
            Some(a) => Connection::Remote(a.clone()),
            None => Connection::Embedded,
        })
    }
}

/// Parses an entity list: `0,1` (GPUs), `gi:0` (MIG GPU instance), `ci:1` (compute instance),
/// `sw:0` (NvSwitch), `cpu:0`, `core:3`, `link:N` (packed link id).
pub fn parse_entities(s: &str) -> Result<Vec<Entity>, String> {
    s.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            let (kind, id) = t.split_once(':').unwrap_or(("gpu", t));
            let group = match kind {
                "gpu" | "g" => EntityGroup::Gpu,
                "gi" | "i" => EntityGroup::GpuInstance,
                "ci" => EntityGroup::ComputeInstance,
                "sw" | "switch" | "s" => EntityGroup::Switch,
                "cpu" | "c" => EntityGroup::Cpu,
                "core" => EntityGroup::CpuCore,
                "link" => EntityGroup::Link,
                other => return Err(format!("unknown entity kind {other:?} in {t:?}")),
            };
            let id: u32 = id.parse().map_err(|_| format!("bad entity id in {t:?}"))?;
            Ok(Entity::new(group, id))
        })
        .collect()
}

/// Short label of an entity for tables (`GPU 0`, `GPU_I 1`, ...).
pub fn entity_label(e: &Entity) -> String {
    e.to_string()
}

/// Prints an error with its hint and exits with status 1.
pub fn fail(e: impl std::fmt::Display) -> ! {
    eprintln!("error: {e}");
    std::process::exit(1)
}

/// Formats sorted ids as ranges: `0-55,60,62-63`.
pub fn ranges(ids: &[u32]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// Writes to stdout. When stdout is closed (the tool piped into `head`), the reader has what it
/// wanted: exit quietly with status 0 instead of panicking as `println!` does.
pub fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        fail(format_args!("cannot write to stdout: {e}"));
    }
}

/// `println!` that exits quietly on a closed pipe (see [`write_stdout`]).
#[allow(unused_macros)]
macro_rules! outln {
    () => {
        $crate::common::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::common::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}
#[allow(unused_imports)]
pub(crate) use outln;

/// `--help` text of the tools whose only exit statuses are success and error.
pub const EXIT_STATUS: &str = "Exit status: 0 success, 1 error (the reason on stderr).";

/// `--help` text of the tools that grade GPUs (`health`, `diag`).
pub const EXIT_STATUS_GRADED: &str =
    "Exit status: 0 pass, 2 warn, 3 fail (the worst result seen), 1 error (the reason on stderr).";
