//! The command-line tools of dcgm-rs (`dcgm-dmon`, `dcgm-query`, `dcgm-stat`, `dcgm-top`,
//! `dcgm-discovery`, `dcgm-health`, `dcgm-diag`, `dcgm-policy`, `dcgm-topology`, `dcgm-nvlink`,
//! `dcgm-doctor`), installed with `cargo install dcgm-tools`. Each binary in `src/bin/` is a
//! `main` over the modules here: what every tool shares (how to reach DCGM, real, remote or
//! simulated, and how to name entities on the command line), and the formats the tools share
//! with NVIDIA's (the nvidia-smi report, gpustat's per-GPU stats, process owners).

pub mod container;
pub mod engine;
pub mod gpu_stats;
pub mod host_process;
pub mod local_time;
pub mod nvsmi_properties;
pub mod nvsmi_report;
pub mod process;
pub mod query;
pub mod stat;
pub mod top;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, Once, OnceLock, mpsc};
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
    finish(match run(&parse_from(std::env::args_os())) {
        Ok(code) => code,
        Err(e) => report(e),
    })
}

/// Ends the process with `code` once its output is flushed, without running the C++ static
/// destructors of libdcgm. The tools keep the embedded engine until exit
/// ([`dcgm::HandleBuilder::keep_engine_until_exit`]: stopping it costs seconds); at `exit`
/// libdcgm's destructors free what its still-running threads use, and about one run in
/// twenty crashed there after printing everything (SIGSEGV or "corrupted size vs.
/// prev_size", seen with the real 4.1.1, 4.5.3 and 4.6.0 under load). `_exit` ends those
/// threads with the process instead; nothing of the engine outlives it.
pub fn finish(code: ExitCode) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // `ExitCode` does not give its number back on stable Rust: find it.
    let n = (0..=255u8)
        .find(|n| ExitCode::from(*n) == code)
        .unwrap_or(1);
    // SAFETY: `_exit` takes a plain status and does not return; the output is flushed above,
    // and nothing of this process needs its exit handlers (the OS reclaims everything).
    unsafe { libc::_exit(i32::from(n)) }
}

/// Parses a tool's command line as `C::parse_from` does, and gives `--verbose` the short `-v`
/// where the tool has no `-v` of its own (`stat` keeps gpustat's `-v`, its version).
pub fn parse_from<C: clap::Parser>(args: impl IntoIterator<Item = OsString>) -> C {
    let mut cmd = C::command();
    let has_verbose = cmd.get_arguments().any(|a| a.get_id() == "verbose");
    let v_taken = cmd.get_arguments().any(|a| a.get_short() == Some('v'));
    if has_verbose && !v_taken {
        cmd = cmd.mut_arg("verbose", |a| a.short('v'));
    }
    let matches = cmd.clone().get_matches_from(args);
    C::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut cmd).exit())
}

/// Says why the tool failed on stderr and gives its exit status: [`EXIT_NOT_IN_RELEASE`] for
/// a feature the DCGM release lacks (one line saying which release it needs), 1 otherwise.
pub fn report(e: Box<dyn std::error::Error>) -> ExitCode {
    if let Some(e @ dcgm::Error::NotInRelease { .. }) = e.downcast_ref::<dcgm::Error>() {
        eprintln!("{e}");
        return ExitCode::from(EXIT_NOT_IN_RELEASE);
    }
    eprintln!("error: {e}");
    ExitCode::FAILURE
}

/// The exit status of a tool asked for a feature the loaded DCGM release does not have.
pub const EXIT_NOT_IN_RELEASE: u8 = 4;

/// The `--verbose` line naming the DCGM release and what it lacks: `DCGM 4.1.1 (library
/// /path/libdcgm.so.4); not in this release: diagnostics, ...`.
pub fn release_line(h: &Handle) -> String {
    let Some(v) = h.dcgm_version() else {
        return "DCGM release: unknown (the library reports no version)".into();
    };
    let missing: Vec<String> = dcgm::Capability::ALL
        .iter()
        .filter(|c| !h.supports(**c))
        .map(|c| format!("{c} ({})", c.since()))
        .collect();
    if missing.is_empty() {
        format!("DCGM {v}: every capability this SDK uses")
    } else {
        format!("DCGM {v}; not in this release: {}", missing.join(", "))
    }
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
///
/// Which engine: `--host ADDRESS` names an nv-hostengine; `--embedded` starts DCGM's embedded
/// engine in the process; `--simulate` reads dcgm-sim (its engines are in-process: nothing is
/// looked for). Otherwise the tool looks for a local nv-hostengine, as `dcgmi` does (see
/// [`engine`]), and starts the embedded engine only when none answers within
/// [`engine::PROBE_DEADLINE`]. `--verbose` says on stderr which was used.
#[derive(Debug, Clone, Args)]
pub struct ConnectArgs {
    /// Use the dcgm-sim simulator instead of NVIDIA's libdcgm (output is labelled simulated).
    #[arg(long)]
    pub simulate: bool,
    /// Connect to this nv-hostengine (host, host:port, unix:///path) instead of looking for a
    /// local one.
    #[arg(long, value_name = "ADDRESS")]
    pub host: Option<String>,
    /// Start DCGM's embedded engine in this process without looking for a local nv-hostengine
    /// (by default one answering at 127.0.0.1:5555 or unix:///tmp/nv-hostengine, or at the
    /// comma-separated addresses of DCGM_HOSTENGINE_ADDRESS, is used, as dcgmi does).
    #[arg(long, conflicts_with = "host")]
    pub embedded: bool,
    /// Load libdcgm (or dcgm-sim) from this path.
    #[arg(long, value_name = "PATH")]
    pub lib: Option<PathBuf>,
    /// Give up on the --host engine when it has not answered within this many seconds (a port
    /// that accepts connections but never answers would otherwise hang the tool).
    #[arg(long, value_name = "SECONDS", default_value = "5", value_parser = parse_seconds)]
    pub connect_timeout: Duration,
    /// Say on stderr which engine is used: the nv-hostengine found or named, or the embedded
    /// engine and why.
    #[arg(long)]
    pub verbose: bool,
    /// The engine chosen, once per process (clones share it).
    #[arg(skip)]
    chosen: Arc<OnceLock<Chosen>>,
}

/// Which engine a tool uses, as [`ConnectArgs::chosen`] settled it.
#[derive(Debug)]
enum Chosen {
    Embedded,
    /// An nv-hostengine: named by `--host` (nothing connected yet), or found by the automatic
    /// choice, with the handle it connected (taken by the first user).
    Host {
        address: String,
        probed: Mutex<Option<Handle>>,
    },
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

    /// Prints `what` on stderr under `--verbose`.
    fn say(&self, what: std::fmt::Arguments<'_>) {
        if self.verbose {
            eprintln!("{what}");
        }
    }

    /// The engine to use, chosen on the first call (the automatic choice probes then).
    fn chosen(&self) -> &Chosen {
        self.chosen.get_or_init(|| self.choose())
    }

    fn choose(&self) -> Chosen {
        if let Some(address) = &self.host {
            self.say(format_args!(
                "using the nv-hostengine at {address} (--host)"
            ));
            return Chosen::Host {
                address: address.clone(),
                probed: Mutex::new(None),
            };
        }
        if self.simulate {
            self.say(format_args!(
                "starting dcgm-sim's embedded engine (--simulate never looks for an nv-hostengine)"
            ));
            return Chosen::Embedded;
        }
        if self.embedded {
            self.say(format_args!("starting DCGM's embedded engine (--embedded)"));
            return Chosen::Embedded;
        }
        let addresses = engine::addresses();
        let t0 = std::time::Instant::now();
        let found = engine::find(&self.builder(), &addresses);
        let took = format!("looked for {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
        match found {
            engine::Found::Engine(address, handle) => {
                self.say(format_args!(
                    "using the nv-hostengine at {address} ({took})"
                ));
                Chosen::Host {
                    address,
                    probed: Mutex::new(Some(handle)),
                }
            }
            engine::Found::Nothing(why) if why.is_empty() => {
                self.say(format_args!(
                    "no nv-hostengine address to try ({} is empty): starting DCGM's embedded \
                     engine",
                    engine::ADDRESS_ENV
                ));
                Chosen::Embedded
            }
            engine::Found::Nothing(why) => {
                self.say(format_args!(
                    "no nv-hostengine answered at {}: starting DCGM's embedded engine ({took})",
                    why.join(", ")
                ));
                Chosen::Embedded
            }
        }
    }

    /// Opens a handle as asked, and says on stderr when the data is simulated. A host engine
    /// that has not answered within `--connect-timeout` ends the tool (see
    /// [`ConnectArgs::bounded`]).
    pub fn open(&self) -> dcgm::Result<Handle> {
        let h = match self.chosen() {
            Chosen::Embedded => self.builder().embedded()?,
            Chosen::Host { address, probed } => match lock(probed).take() {
                Some(h) => h,
                None => {
                    let builder = self.builder().timeout(self.connect_timeout);
                    let owned = address.clone();
                    self.bounded(address, move || builder.connect(&owned))?
                }
            },
        };
        if h.is_simulated() {
            say_simulated();
        }
        if self.verbose {
            eprintln!("{}", release_line(&h));
        }
        Ok(h)
    }

    /// A reader builder with the same connection choices.
    pub fn reader(&self) -> ReaderBuilder {
        self.reader_from(dcgm_reader::Reader::builder())
    }

    /// `b` with the same connection choices.
    pub fn reader_from(&self, b: ReaderBuilder) -> ReaderBuilder {
        let mut b = b.keep_engine_until_exit(true);
        if let Some(p) = &self.lib {
            b = b.library_path(p);
        } else if self.simulate {
            b = b.simulator();
        }
        b.connection(match self.chosen() {
            Chosen::Host { address, .. } => Connection::Remote(address.clone()),
            Chosen::Embedded => Connection::Embedded,
        })
    }

    /// Connects `reader` now, bounded by `--connect-timeout` when it talks to a host engine,
    /// and says on stderr when the data is simulated.
    pub fn connect_reader(&self, mut reader: Reader) -> dcgm::Result<Reader> {
        let reader = match self.chosen() {
            Chosen::Embedded => {
                reader.connect()?;
                reader
            }
            Chosen::Host { address, probed } => {
                let reader = self.bounded(address, move || reader.connect().map(|()| reader))?;
                // The reader has its own connection now: the probe's is let go.
                drop(lock(probed).take());
                reader
            }
        };
        if reader.is_simulated().unwrap_or(false) {
            say_simulated();
        }
        Ok(reader)
    }

    /// Runs `connect` (the talk with the host engine at `address`) on a thread of its own and
    /// waits at most `--connect-timeout` for it. libdcgm's own timeout (`dcgmConnect_v2`'s
    /// `timeoutMs`) bounds only the TCP connect: a peer that accepts the connection and never
    /// answers keeps its handshake waiting forever. When the deadline passes the tool says so
    /// and exits with status 1; the stuck thread ends with the process.
    pub fn bounded<T: Send + 'static>(
        &self,
        address: &str,
        connect: impl FnOnce() -> T + Send + 'static,
    ) -> T {
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
                "no answer from the host engine at {address} within {} s: check that what \
                 listens there is a running nv-hostengine, or wait longer with --connect-timeout \
                 SECONDS",
                self.connect_timeout.as_secs_f64()
            )),
        }
    }
}

/// The probed handle's slot; a panic elsewhere cannot leave it half-written.
fn lock(slot: &Mutex<Option<Handle>>) -> std::sync::MutexGuard<'_, Option<Handle>> {
    slot.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
    finish(ExitCode::FAILURE)
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
            finish(ExitCode::SUCCESS);
        }
        fail(format_args!("cannot write to stdout: {e}"));
    }
}

/// `println!` that exits quietly on a closed pipe (see [`write_stdout`]).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `--help` text of the tools whose only exit statuses are success and error.
pub const EXIT_STATUS: &str = "Exit status: 0 success, 1 error (the reason on stderr), 4 a feature \
     this DCGM release lacks (the release it needs on stderr).";

/// `--help` text of the tools that grade GPUs (`health`, `diag`).
pub const EXIT_STATUS_GRADED: &str = "Exit status: 0 pass, 2 warn, 3 fail (the worst result seen), 1 error (the reason on stderr), \
     4 not in this DCGM release.";
