//! The simulated machine's description: a TOML or JSON file named by `DCGM_SIM_CONFIG`, a
//! preset named by it, a JSON string given to `dcgmSimConfigure`, or the built-in default node.
//!
//! The default node ([`SimConfig::default`], preset `default`) is calm: readings follow a
//! simulated workload and nothing goes wrong. The preset `faults`
//! (`DCGM_SIM_CONFIG=faults`, [`SimConfig::faults`]) is the same node with three scripted
//! incidents a few seconds after start (XID 13 on GPU 3 at 1.5 s, a double-bit ECC error on
//! GPU 5 at 2.5 s, GPU 1 at 91 °C at 3.5 s), so that policy, health and alerting have
//! something to report. The preset `workloads` ([`SimConfig::workloads`]) is eight H200s,
//! each running a [`Workload`] profile (`workload = "pcie_bound"` in a config's `[[gpus]]`),
//! so that the doctor has one of each finding to show. A `DCGM_SIM_CONFIG` value that names
//! an existing file is always read as a file.
//!
//! A config that does not parse, or that has a key the simulator does not know, is an error
//! that names the file, the line and the column, and quotes the line:
//! `DCGM_SIM_CONFIG=node.toml: line 3, column 1 (colour = "red"): unknown field `colour`, …`.

use serde::{Deserialize, Serialize};

/// Environment variable naming the config file (`.toml` or `.json`) or a preset
/// ([`PRESETS`]).
pub const CONFIG_ENV: &str = "DCGM_SIM_CONFIG";
/// The names `DCGM_SIM_CONFIG` takes for a built-in node: `default` (the calm default node),
/// `faults` (the same node with scripted incidents) and `workloads` (eight H200s, each running
/// a workload profile that shows one of the doctor's findings), `burn` (eight H200s under a
/// stress test, what `dcgm-burn --simulate` reads unless told otherwise).
pub const PRESETS: &[&str] = &["default", "faults", "workloads", "burn"];
/// Environment variable with comma-separated faults, merged over the config's
/// (`init_fails`, `connect_refused`, `drop_after=N`, `down_ms=N`, `slow_ms=N`, `prof_in_use`,
/// `unsupported=ID;ID`, `blank=ID;ID`).
pub const FAULTS_ENV: &str = "DCGM_SIM_FAULTS";

/// libdcgm 4.6.0's wait for the answer to one request to a host engine
/// (`ExchangeModuleCommandAsync`'s default `timeoutMs`).
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 60_000;

/// The whole simulated node.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// Seed of every generated value: the same seed gives the same values at the same times.
    pub seed: u64,
    /// Host name reported by the simulated host engine.
    pub hostname: String,
    /// Driver version string.
    pub driver_version: String,
    /// CUDA driver version as DCGM encodes it (12080 = 12.8).
    pub cuda_driver_version: i64,
    /// GPUs, in GPU-id order.
    pub gpus: Vec<GpuConfig>,
    /// Number of NvSwitches.
    pub nvswitches: u32,
    /// CPU sockets and their cores.
    pub cpus: Vec<CpuConfig>,
    /// The CPU sockets and their cores are this host's, as DCGM's sysmon module finds them:
    /// each NUMA node with CPUs a socket owning the logical CPUs of its `cpulist` (see
    /// `/sys/devices/system/node`); `cpus` then only names their models, in order. Their
    /// readings stay simulated. A host without that information has no CPUs.
    pub host_cpus: bool,
    /// Processes using the GPUs.
    pub processes: Vec<ProcessConfig>,
    /// Incidents that happen at given times after the engine starts.
    pub events: Vec<EventConfig>,
    /// Addresses where a simulated nv-hostengine answers (`localhost`, `host:port`,
    /// `unix:///path`). Empty: only embedded mode works.
    pub hostengines: Vec<String>,
    /// How long libdcgm waits for a host engine's answer to one request, in milliseconds
    /// (DCGM 4.6.0: 60000, whatever `timeoutMs` says). A connect to something that accepts
    /// and never answers costs two of them, as on the real library: the version request, then
    /// the login. Lower it in tests that connect to such a listener.
    pub request_timeout_ms: u64,
    /// Faults to inject.
    pub faults: FaultConfig,
    /// The DCGM release to speak (`"4.5.3"`; 3.3.9 and 4.0.0 to 4.6.x): its version string,
    /// struct versions, functions and field ids (see the crate README's "Older DCGM releases"). Left out: 4.6.0.
    /// `DCGM_SIM_VERSION` wins over it. A number the simulator does not speak is an error
    /// that names the line.
    #[serde(deserialize_with = "release_number")]
    pub dcgm_version: Option<String>,
}

/// One GPU.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GpuConfig {
    /// Product name (`NVIDIA H100 80GB HBM3`).
    pub model: String,
    /// `GPU-…` UUID (generated from the seed when left out).
    pub uuid: String,
    /// PCI bus id (generated when left out).
    pub pci_bus_id: String,
    /// Board serial number.
    pub serial: String,
    /// Frame-buffer memory in MiB.
    pub memory_mib: i64,
    /// Power limit in watts.
    pub power_limit_w: f64,
    /// Left out of a config file: the clock of the `model` (A100, A30, H100, H200; others get
    /// the H100's).
    #[serde(default)]
    pub max_sm_clock_mhz: i64,
    /// Left out of a config file: the clock of the `model`, as for `max_sm_clock_mhz`.
    #[serde(default)]
    pub mem_clock_mhz: i64,
    /// Number of NVLinks.
    pub nvlinks: u32,
    /// MIG layout: GPU instances, each with its compute instances. Empty: MIG disabled,
    /// unless `mig_mode` is set.
    pub mig: Vec<MigInstanceConfig>,
    /// MIG mode enabled with no instance yet (implied by a non-empty `mig`), for creating
    /// instances with `dcgmCreateMigEntity`.
    pub mig_mode: bool,
    /// Multiplies the workload's utilisation (0 = idle GPU).
    pub load: f64,
    /// What runs on the GPU: the default node's training cycle, or one of the profiles that
    /// show each of the doctor's findings, with the telemetry moving together as it did on a
    /// real H200 ([`Workload`]).
    pub workload: Workload,
}

/// What a simulated GPU runs. Each profile but `training` holds one behaviour throughout, its
/// readings (utilisation, the profiling fields, PCIe bytes, clocks and their event reasons,
/// power against the limit, temperature, violation counters, memory) moving together as they
/// did on a real H200 running the same kind of work (`shared/fixtures/h200-traces`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// A 120-second training cycle of idle (10 s), compute (90 s) and checkpoint (20 s),
    /// scaled by `load` (the default node's).
    #[default]
    Training,
    /// Dense math below the power limit, clocks at their maximum: compute-bound, healthy.
    Steady,
    /// Kernels for 0.4 s, then 0.8 s waiting on the host, again and again: a starved data
    /// loader.
    Sawtooth,
    /// Pageable host-to-device copies back to back: PCIe busy at about a third of the link,
    /// SMs idle.
    PcieBound,
    /// A stream of tiny kernels: utilisation about a third, SM activity near zero.
    TinyKernels,
    /// Streaming kernels: DRAM busy, math pipes mostly idle.
    MemoryBound,
    /// Nothing runs, but most of the memory is held.
    MemoryIdle,
    /// Dense math held at the power limit: SW power cap set, clocks a quarter below maximum.
    PowerCapped,
    /// Dense math on a hot GPU: SW thermal slowdown set, clocks well below maximum.
    ThermalThrottle,
    /// The steady profile on a slow card: clocks and power well below its peers', no reason
    /// reported.
    Straggler,
    /// A stress test (`dcgm-burn --simulate`): utilisation 100 %, power near the limit, clocks
    /// at their maximum, temperature rising over the first minute as a real card warms.
    Burn,
    /// `burn` on a card whose SM clock is stuck at a fifth of its maximum (a broken fan or a
    /// clock locked by hand), no reason reported.
    BurnStuckClock,
    /// `burn` on a hot card: it climbs to 91 °C, SW thermal slowdown set, clocks held down.
    BurnHot,
    /// `burn` on a card that throws single-bit ECC errors under load (two a second).
    BurnEcc,
}

impl Workload {
    /// Every workload, by its config name.
    pub const ALL: [Workload; 14] = [
        Workload::Training,
        Workload::Steady,
        Workload::Sawtooth,
        Workload::PcieBound,
        Workload::TinyKernels,
        Workload::MemoryBound,
        Workload::MemoryIdle,
        Workload::PowerCapped,
        Workload::ThermalThrottle,
        Workload::Straggler,
        Workload::Burn,
        Workload::BurnStuckClock,
        Workload::BurnHot,
        Workload::BurnEcc,
    ];

    /// The name a config gives it (`pcie_bound`).
    pub fn name(self) -> &'static str {
        match self {
            Workload::Training => "training",
            Workload::Steady => "steady",
            Workload::Sawtooth => "sawtooth",
            Workload::PcieBound => "pcie_bound",
            Workload::TinyKernels => "tiny_kernels",
            Workload::MemoryBound => "memory_bound",
            Workload::MemoryIdle => "memory_idle",
            Workload::PowerCapped => "power_capped",
            Workload::ThermalThrottle => "thermal_throttle",
            Workload::Straggler => "straggler",
            Workload::Burn => "burn",
            Workload::BurnStuckClock => "burn_stuck_clock",
            Workload::BurnHot => "burn_hot",
            Workload::BurnEcc => "burn_ecc",
        }
    }
}

/// A MIG GPU instance.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MigInstanceConfig {
    /// Profile name, e.g. `3g.40gb`.
    pub profile: String,
    /// Memory slices / compute slices of the profile.
    pub slices: u32,
    /// Number of compute instances in it.
    pub compute_instances: u32,
}

/// A CPU socket.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CpuConfig {
    /// Product name.
    pub model: String,
    /// Number of cores.
    pub cores: u32,
}

/// A process on a GPU.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProcessConfig {
    /// Process id.
    pub pid: u32,
    /// Command name.
    pub name: String,
    /// The user running it.
    pub user: String,
    /// The GPUs it runs on.
    pub gpus: Vec<u32>,
    /// GPU memory it uses on each, in MiB.
    pub memory_mib: i64,
    /// Its own SM utilisation on each of its GPUs, in percent, all its life. Process
    /// statistics (`dcgmGetPidInfo`) then report what DCGM 4.6 computes from the per-process
    /// utilisation samples: its samples in the watch's keep-age window (`dcgmWatchPidFields`'
    /// `maxKeepAge`, back to its start), summed, over the number of samples of every process
    /// with a utilisation of its own on that GPU in the window. `None`: they report the GPU's
    /// utilisation over its life, as for a process alone on it.
    pub sm_util_percent: Option<f64>,
}

/// A scripted incident.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EventConfig {
    /// Milliseconds after the engine starts.
    pub at_ms: u64,
    /// The GPU it happens on.
    pub gpu: u32,
    /// `xid`, `dbe`, `sbe`, `pcie_replay`, `thermal`, `power`, `nvlink`, `retired_pages`, or
    /// `lost` (the GPU stops answering: every field of it reads blank from then on, or for
    /// `duration_ms`, as a GPU fallen off the bus does).
    pub kind: String,
    /// XID number, temperature, power, or count, depending on `kind`.
    pub value: i64,
    /// How long the condition lasts, in milliseconds (0, the default: for good). A `thermal`
    /// or `power` event holds its reading that long, then the reading follows the workload
    /// again; a `dbe` or `sbe` event's errors leave the volatile count when it ends (as after
    /// a GPU reset) and stay in the aggregate count; a `lost` GPU answers again. Other kinds
    /// are instants: a duration on them is a config error.
    pub duration_ms: u64,
}

/// The event kinds that take a `duration_ms`.
pub const DURABLE_EVENT_KINDS: &[&str] = &["thermal", "power", "dbe", "sbe", "lost"];

/// Faults to inject.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FaultConfig {
    /// `dcgmInit` fails with `DCGM_ST_INIT_ERROR`.
    pub init_fails: bool,
    /// Device attributes come back as a GPU that reports little does on the real library:
    /// every number a blank sentinel (32-bit, the low half of the 64-bit one, not-supported),
    /// brand, serial, VBIOS and InfoROM `<<<NULL>>>`, no clock sets.
    pub blank_attributes: bool,
    /// Other struct-shaped answers leave their numbers blank too: the MIG hierarchy's NVML ids,
    /// profiles and slices, the current configuration, the CPUs' serial numbers.
    pub blank_structs: bool,
    /// Every `dcgmConnect*` fails with `DCGM_ST_CONNECTION_NOT_VALID`.
    pub connect_refused: bool,
    /// A standalone connection breaks after this many calls (a host-engine restart). It
    /// happens once in a process: like a real host engine's restart, it outlives the client's
    /// `dcgmShutdown` and an unload of the library (which is never unloaded), so a client that
    /// retries its start-up connects again after `down_ms`.
    pub drop_after_calls: Option<u64>,
    /// How long the restarted host engine refuses connections, in milliseconds.
    pub down_ms: u64,
    /// Fields reported as not supported on every entity.
    pub unsupported_fields: Vec<u16>,
    /// Fields whose value is always blank.
    pub blank_fields: Vec<u16>,
    /// Extra latency added to every call, in milliseconds.
    pub slow_ms: u64,
    /// The profiling module is held by another client.
    pub profiling_in_use: bool,
}

impl Default for GpuConfig {
    fn default() -> Self {
        Self {
            model: "NVIDIA H100 80GB HBM3".into(),
            uuid: String::new(),
            pci_bus_id: String::new(),
            serial: String::new(),
            memory_mib: 81559,
            power_limit_w: 700.0,
            max_sm_clock_mhz: 1980,
            mem_clock_mhz: 2619,
            nvlinks: 18,
            mig: Vec::new(),
            mig_mode: false,
            load: 1.0,
            workload: Workload::Training,
        }
    }
}

impl Default for MigInstanceConfig {
    fn default() -> Self {
        Self {
            profile: "1g.10gb".into(),
            slices: 1,
            compute_instances: 1,
        }
    }
}

impl Default for CpuConfig {
    fn default() -> Self {
        Self {
            model: "Simulated Xeon 8480+".into(),
            cores: 56,
        }
    }
}

impl Default for ProcessConfig {
    fn default() -> Self {
        Self {
            pid: 1000,
            name: "python3".into(),
            user: "user".into(),
            gpus: vec![0],
            memory_mib: 1024,
            sm_util_percent: None,
        }
    }
}

impl Default for EventConfig {
    fn default() -> Self {
        Self {
            at_ms: 0,
            gpu: 0,
            kind: "xid".into(),
            value: 13,
            duration_ms: 0,
        }
    }
}

impl Default for SimConfig {
    /// A believable, calm 8-GPU training node: H100s over four NvSwitches, GPU 7 in MIG mode,
    /// two CPU sockets, a training job on GPUs 0–6, an inference server on a MIG instance, and
    /// no incidents ([`SimConfig::faults`] adds some).
    fn default() -> Self {
        let bus = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"];
        let gpus = (0..8)
            .map(|i| GpuConfig {
                mig: if i == 7 {
                    vec![
                        MigInstanceConfig {
                            profile: "3g.40gb".into(),
                            slices: 3,
                            compute_instances: 1,
                        },
                        MigInstanceConfig {
                            profile: "2g.20gb".into(),
                            slices: 2,
                            compute_instances: 2,
                        },
                        MigInstanceConfig {
                            profile: "1g.10gb".into(),
                            slices: 1,
                            compute_instances: 1,
                        },
                    ]
                } else {
                    Vec::new()
                },
                pci_bus_id: format!("00000000:{}:00.0", bus[i]),
                load: if i == 7 { 0.4 } else { 1.0 },
                ..GpuConfig::default()
            })
            .collect();
        Self {
            seed: 42,
            hostname: "sim-node-0".into(),
            driver_version: "570.133.20".into(),
            cuda_driver_version: 12080,
            gpus,
            nvswitches: 4,
            cpus: vec![CpuConfig::default(), CpuConfig::default()],
            host_cpus: false,
            processes: vec![
                ProcessConfig {
                    pid: 4242,
                    name: "python3 train.py".into(),
                    user: "mlops".into(),
                    gpus: (0..7).collect(),
                    memory_mib: 62_000,
                    ..ProcessConfig::default()
                },
                ProcessConfig {
                    pid: 5151,
                    name: "tritonserver".into(),
                    user: "triton".into(),
                    gpus: vec![7],
                    memory_mib: 9_000,
                    ..ProcessConfig::default()
                },
            ],
            events: Vec::new(),
            hostengines: vec![
                "localhost".into(),
                "127.0.0.1".into(),
                "unix:///tmp/nv-hostengine".into(),
            ],
            request_timeout_ms: DEFAULT_REQUEST_TIMEOUT_MS,
            faults: FaultConfig::default(),
            dcgm_version: None,
        }
    }
}

impl SimConfig {
    /// The preset `faults`: the default node with an XID 13 on GPU 3 at 1.5 s, a double-bit
    /// ECC error on GPU 5 at 2.5 s and GPU 1 at 91 °C at 3.5 s, so that `policy`, `health` and
    /// alert rules have something to report.
    pub fn faults() -> Self {
        let events = vec![
            EventConfig {
                at_ms: 1500,
                gpu: 3,
                kind: "xid".into(),
                value: 13,
                duration_ms: 0,
            },
            EventConfig {
                at_ms: 2500,
                gpu: 5,
                kind: "dbe".into(),
                value: 1,
                duration_ms: 0,
            },
            EventConfig {
                at_ms: 3500,
                gpu: 1,
                kind: "thermal".into(),
                value: 91,
                duration_ms: 0,
            },
        ];
        Self {
            events,
            ..Self::default()
        }
    }

    /// The preset `workloads`: eight H200s running a mix of [`Workload`] profiles, so that
    /// `doctor --simulate` shows several findings at once. GPUs 0–3 are the ranks of one
    /// training job, GPU 3 a straggler among them; GPU 4 is starved by its data loader, GPU 5
    /// bound by pageable PCIe copies, GPU 6 runs tiny kernels shared by two processes, and
    /// GPU 7 holds most of its memory while idle.
    pub fn workloads() -> Self {
        use Workload::*;
        let mix = [
            Steady,
            Steady,
            Steady,
            Straggler,
            Sawtooth,
            PcieBound,
            TinyKernels,
            MemoryIdle,
        ];
        let h200 = GpuConfig {
            model: "NVIDIA H200".into(),
            memory_mib: 143_771,
            max_sm_clock_mhz: 0,
            mem_clock_mhz: 0,
            ..GpuConfig::default()
        };
        let gpus = mix
            .iter()
            .map(|&workload| GpuConfig {
                workload,
                ..h200.clone()
            })
            .collect();
        let process = |pid: u32, name: &str, gpus: Vec<u32>, memory_mib: i64| ProcessConfig {
            pid,
            name: name.into(),
            user: "mlops".into(),
            gpus,
            memory_mib,
            ..ProcessConfig::default()
        };
        Self {
            hostname: "sim-workloads-0".into(),
            gpus,
            processes: vec![
                process(4242, "python3 train.py", (0..4).collect(), 62_000),
                process(4343, "python3 train_loader.py", vec![4], 30_000),
                process(4444, "python3 copy_h2d.py", vec![5], 2_200),
                process(4545, "python3 tiny_kernels.py", vec![6], 2_000),
                process(4546, "python3 eval.py", vec![6], 1_500),
                process(4646, "jupyter-kernel", vec![7], 104_000),
            ],
            ..Self::default()
        }
    }

    /// The preset `burn`: eight H200s each running the [`Workload::Burn`] stress-test profile
    /// under one `dcgm-burn` process, none of them weak; `dcgm-burn --simulate` reads it
    /// unless `DCGM_SIM_CONFIG` names another node.
    pub fn burn() -> Self {
        let mut cfg = Self::workloads();
        for g in &mut cfg.gpus {
            g.workload = Workload::Burn;
        }
        cfg.hostname = "sim-burn-0".into();
        cfg.processes = vec![ProcessConfig {
            pid: 4747,
            name: "dcgm-burn".into(),
            user: "root".into(),
            gpus: (0..8).collect(),
            memory_mib: 1_600,
            ..ProcessConfig::default()
        }];
        cfg
    }

    /// The preset of this name ([`PRESETS`]), defaults filled in.
    pub fn preset(name: &str) -> Option<Self> {
        let mut cfg = match name {
            "default" => Self::default(),
            "faults" => Self::faults(),
            "workloads" => Self::workloads(),
            "burn" => Self::burn(),
            _ => return None,
        };
        cfg.fill_defaults();
        Some(cfg)
    }

    /// Parses a config from TOML or JSON text (JSON if it starts with `{`). An error names the
    /// line and column and quotes the line (`line 3, column 1 (colour = "red"): unknown field
    /// ...`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut cfg: SimConfig = if text.trim_start().starts_with('{') {
            serde_json::from_str(text).map_err(|e| {
                let full = e.to_string();
                let suffix = format!(" at line {} column {}", e.line(), e.column());
                let message = full.strip_suffix(&suffix).unwrap_or(&full);
                located(text, e.line(), e.column(), message)
            })?
        } else {
            toml::from_str(text).map_err(|e| {
                let (line, column) = e
                    .span()
                    .map_or((0, 0), |span| line_and_column(text, span.start));
                located(text, line, column, e.message())
            })?
        };
        cfg.fill_defaults();
        cfg.check_events()?;
        Ok(cfg)
    }

    /// Refuses a `duration_ms` on an event kind that is an instant ([`DURABLE_EVENT_KINDS`]).
    fn check_events(&self) -> Result<(), String> {
        for (i, e) in self.events.iter().enumerate() {
            if e.duration_ms > 0 && !DURABLE_EVENT_KINDS.contains(&e.kind.as_str()) {
                return Err(format!(
                    "events[{i}]: kind {:?} is an instant and takes no duration_ms (only {} do)",
                    e.kind,
                    DURABLE_EVENT_KINDS.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// The config from `DCGM_SIM_CONFIG` (a file, or a preset name; unset or empty: the default
    /// node), with `DCGM_SIM_FAULTS` applied. Errors start with `DCGM_SIM_CONFIG=<value>: `.
    pub fn from_env() -> Result<Self, String> {
        let mut cfg = match std::env::var_os(CONFIG_ENV).filter(|v| !v.is_empty()) {
            Some(value) => Self::from_value(std::path::Path::new(&value))
                .map_err(|e| format!("{CONFIG_ENV}={}: {e}", value.to_string_lossy()))?,
            None => Self::preset("default").unwrap_or_default(),
        };
        if let Ok(spec) = std::env::var(FAULTS_ENV) {
            cfg.faults.apply_spec(&spec)?;
        }
        Ok(cfg)
    }

    /// What a `DCGM_SIM_CONFIG` value names: an existing file, or else a preset.
    fn from_value(value: &std::path::Path) -> Result<Self, String> {
        if !value.exists() {
            if let Some(cfg) = value.to_str().and_then(Self::preset) {
                return Ok(cfg);
            }
            return Err(format!(
                "no such file, and not a preset name ({})",
                PRESETS.join(", ")
            ));
        }
        let text = std::fs::read_to_string(value).map_err(|e| format!("cannot read it: {e}"))?;
        Self::parse(&text)
    }

    /// Fills UUIDs, bus ids and serials left empty, deterministically from the seed, and
    /// clocks left out, from the GPU model.
    pub fn fill_defaults(&mut self) {
        let seed = self.seed;
        for (i, g) in self.gpus.iter_mut().enumerate() {
            let (sm, mem) = model_clocks_mhz(&g.model);
            if g.max_sm_clock_mhz <= 0 {
                g.max_sm_clock_mhz = sm;
            }
            if g.mem_clock_mhz <= 0 {
                g.mem_clock_mhz = mem;
            }
            let h = crate::values::mix(seed ^ 0x5555, i as u64, 0);
            let h2 = crate::values::mix(seed ^ 0xaaaa, i as u64, 1);
            if g.uuid.is_empty() {
                g.uuid = format!(
                    "GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
                    (h >> 32) as u32,
                    (h >> 16) as u16,
                    h as u16,
                    (h2 >> 48) as u16,
                    h2 & 0xffff_ffff_ffff
                );
            }
            if g.pci_bus_id.is_empty() {
                g.pci_bus_id = format!("00000000:{:02X}:00.0", 0x10 + i * 0x10);
            }
            if g.serial.is_empty() {
                g.serial = format!("16523{:08}", h % 100_000_000);
            }
        }
    }
}

/// `dcgm_version`: a release the simulator speaks ([`crate::personality::Release::parse`]),
/// checked while the config is read so that an error names its line.
fn release_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = Option::<String>::deserialize(d)?;
    if let Some(v) = &v {
        crate::personality::Release::parse(v).map_err(serde::de::Error::custom)?;
    }
    Ok(v)
}

/// `line L, column C (the line): message`, or the message alone when the place is unknown.
fn located(text: &str, line: usize, column: usize, message: &str) -> String {
    match text.lines().nth(line.wrapping_sub(1)) {
        Some(src) if line > 0 => {
            format!("line {line}, column {column} ({}): {message}", src.trim())
        }
        _ => message.to_string(),
    }
}

/// The 1-based line and column of a byte offset.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

/// Maximum SM clock and memory clock, in MHz, of a GPU model as NVML reports them.
fn model_clocks_mhz(model: &str) -> (i64, i64) {
    if model.contains("A100") {
        (1410, 1593)
    } else if model.contains("A30") {
        (1440, 1215)
    } else if model.contains("H200") {
        (1980, 3201)
    } else {
        (1980, 2619)
    }
}

impl FaultConfig {
    /// Applies a `DCGM_SIM_FAULTS`-style spec.
    pub fn apply_spec(&mut self, spec: &str) -> Result<(), String> {
        let ids = |v: &str| -> Result<Vec<u16>, String> {
            v.split(';')
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.trim()
                        .parse()
                        .map_err(|_| format!("bad field id {s:?} in {FAULTS_ENV}"))
                })
                .collect()
        };
        let num = |v: &str| -> Result<u64, String> {
            v.trim()
                .parse()
                .map_err(|_| format!("bad number {v:?} in {FAULTS_ENV}"))
        };
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item.split_once('=').unwrap_or((item, ""));
            match k {
                "init_fails" => self.init_fails = true,
                "blank_attributes" => self.blank_attributes = true,
                "blank_structs" => self.blank_structs = true,
                "connect_refused" => self.connect_refused = true,
                "drop_after" => self.drop_after_calls = Some(num(v)?),
                "down_ms" => self.down_ms = num(v)?,
                "slow_ms" => self.slow_ms = num(v)?,
                "prof_in_use" => self.profiling_in_use = true,
                "unsupported" => self.unsupported_fields.extend(ids(v)?),
                "blank" => self.blank_fields.extend(ids(v)?),
                other => return Err(format!("unknown fault {other:?} in {FAULTS_ENV}")),
            }
        }
        Ok(())
    }
}
