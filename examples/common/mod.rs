//! What every example tool shares: how to reach DCGM (real, remote or simulated) and how to
//! name entities on the command line.

#![allow(dead_code)]

pub mod container;
pub mod gpu_stats;
pub mod host_process;
pub mod local_time;
pub mod nvsmi_properties;
pub mod nvsmi_report;
pub mod process;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Once, mpsc};
use std::time::Duration;

use clap::Args;
use dcgm::{Entity, EntityGroup, Group, Handle, HandleBuilder};
use dcgm_reader::{Connection, Reader, ReaderBuilder};

/// What a tool's `run` returns: its exit status, or the error that ends it with status 1
/// (see [`report`]). Every error converts into it with `?`, a message with `.into()`.
pub type Result<T = ExitCode, E = Box<dyn std::error::Error>> = std::result::Result<T, E>;

/// Every tool's `main`: `fn main() -> ExitCode { common::main(run) }`. Parses the command
/// line (clap exits with status 2 on a bad one), runs the tool and returns its exit status, or
/// reports the error that ended it (status 1).
pub fn main<C: clap::Parser>(run: impl FnOnce(&C) -> Result) -> ExitCode {
    match run(&C::parse()) {
        Ok(code) => code,
        Err(e) => report(e),
    }
}

/// Says why the tool failed on stderr and gives its exit status, 1.
pub fn report(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::FAILURE
}

/// Says on stderr, once in the process however often it is called, that the data comes from
/// the simulator: the one place every tool says so in words (JSON outputs also carry
/// `"simulated": true`, as data).
pub fn say_simulated() {
    static SAID: Once = Once::new();
    SAID.call_once(|| eprintln!("# SIMULATED DATA: reading from dcgm-sim, not from real GPUs"));
}

/// A group of the GPUs given on the command line, or of every GPU when none is given, named
/// after the tool and the process; and the GPUs in it.
pub fn gpu_group(handle: &Handle, tool: &str, given: &[u32]) -> dcgm::Result<(Group, Vec<u32>)> {
    let gpus = if given.is_empty() {
        handle.system().gpu_ids()?
    } else {
        given.to_vec()
    };
    let group = Group::with_gpus(handle, &format!("{tool}-{}", std::process::id()), &gpus)?;
    Ok((group, gpus))
}

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
    /// Give up on the --host engine when it has not answered within this many seconds (a port
    /// that accepts connections but never answers would otherwise hang the tool).
    #[arg(long, value_name = "SECONDS", default_value = "5", value_parser = parse_seconds)]
    pub connect_timeout: Duration,
}

/// `--connect-timeout`: a positive number of seconds (fractions allowed).
fn parse_seconds(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(secs > 0.0 && secs <= 3600.0) {
        return Err(format!(
            "{s} s: give a number of seconds above 0 and at most 3600"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
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

    /// Opens a handle as asked, and says on stderr when the data is simulated. A `--host`
    /// engine that has not answered within `--connect-timeout` ends the tool (see
    /// [`ConnectArgs::bounded`]).
    pub fn open(&self) -> dcgm::Result<Handle> {
        let h = match &self.host {
            Some(a) => {
                let builder = self.builder().timeout(self.connect_timeout);
                let address = a.clone();
                self.bounded(move || builder.connect(&address))?
            }
            None => self.builder().embedded()?,
        };
        if h.is_simulated() {
            say_simulated();
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

    /// Connects `reader` now, bounded by `--connect-timeout` when it talks to a `--host`, and
    /// says on stderr when the data is simulated.
    pub fn connect_reader(&self, mut reader: Reader) -> dcgm::Result<Reader> {
        let reader = if self.host.is_none() {
            reader.connect()?;
            reader
        } else {
            self.bounded(move || reader.connect().map(|()| reader))?
        };
        if reader.is_simulated().unwrap_or(false) {
            say_simulated();
        }
        Ok(reader)
    }

    /// Runs `connect` (the talk with the `--host` engine) on a thread of its own and waits at
    /// most `--connect-timeout` for it. libdcgm's own timeout (`dcgmConnect_v2`'s `timeoutMs`)
    /// bounds only the TCP connect: a peer that accepts the connection and never answers keeps
    /// its handshake waiting forever. When the deadline passes the tool says so and exits with
    /// status 1; the stuck thread ends with the process.
    pub fn bounded<T: Send + 'static>(&self, connect: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("connect".into())
            .spawn(move || {
                // The receiver is gone only when the deadline has passed and the tool is
                // exiting: nothing is left to tell.
                let _ = tx.send(connect());
            })
            .unwrap_or_else(|e| fail(format_args!("cannot start the connect thread: {e}")));
        match rx.recv_timeout(self.connect_timeout) {
            Ok(v) => v,
            Err(_) => fail(format_args!(
                "no answer from the host engine at {} within {} s: check that what listens there \
                 is a running nv-hostengine, or wait longer with --connect-timeout SECONDS",
                self.host.as_deref().unwrap_or("localhost"),
                self.connect_timeout.as_secs_f64()
            )),
        }
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

/// Prints an error with its hint and exits with status 1, from where no `Result` can carry
/// it back to `main` (a thread's deadline, a write to stdout deep in a loop).
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
