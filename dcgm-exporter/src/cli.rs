//! The command line: dcgm-exporter's flags, each also read from dcgm-exporter's environment
//! variable for it (a flag given on the command line wins).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use dcgm_prometheus::{DeviceSelection, EntitySelection, LabelOptions};

use crate::attribution::kubelet_wire::DEFAULT_SOCKET;
use crate::attribution::kubernetes::GpuIdType;
use crate::health::DEFAULT_MAX_AGE_INTERVALS;
use crate::http::server;

/// The longest `--collect-interval`: a day. Longer is a typing mistake, and DCGM takes update
/// intervals in microseconds (an `i64`), which a `u64` of milliseconds can overflow.
pub const MAX_COLLECT_INTERVAL_MS: u64 = 24 * 60 * 60 * 1000;

/// The longest XID and clock-event window (`-x`, `--clock-events-count-window-size`): a week.
/// DCGM keeps the samples of the window that long.
pub const MAX_WINDOW_MS: u64 = 7 * 24 * 60 * 60 * 1000;

/// The most collection intervals `--health-max-age-intervals` takes.
pub const MAX_HEALTH_AGE_INTERVALS: u32 = 1000;

/// Checks the syntax of a listen address (`:PORT`, `HOST:PORT`, `[IPV6]:PORT`, a port from 0
/// to 65535), so that a typing mistake is a configuration error (exit status 2); whether the
/// host name resolves and the port is free is only known when binding (exit status 1).
///
/// ```
/// use dcgm_exporter::cli::listen_address;
/// assert_eq!(listen_address(":9400").as_deref(), Ok(":9400"));
/// assert!(listen_address("[::1]:9400").is_ok());
/// assert!(listen_address("localhost").is_err());
/// assert!(listen_address(":99999").is_err());
/// ```
///
/// # Errors
///
/// What is wrong with the address, and what it should look like.
pub fn listen_address(s: &str) -> Result<String, String> {
    let shape = "expected :PORT, HOST:PORT or [IPV6]:PORT, like :9400 or 127.0.0.1:9400";
    let Some((host, port)) = s.rsplit_once(':') else {
        return Err(format!("no port: {shape}"));
    };
    if port.parse::<u16>().is_err() {
        return Err(format!("{port:?} is not a port (0 to 65535): {shape}"));
    }
    let bracketed = host.starts_with('[') || host.ends_with(']');
    if bracketed {
        let inner = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .ok_or_else(|| format!("unbalanced brackets in {host:?}: {shape}"))?;
        inner
            .parse::<std::net::Ipv6Addr>()
            .map_err(|_| format!("{inner:?} is not an IPv6 address: {shape}"))?;
    } else if host.contains(':') {
        return Err(format!(
            "an IPv6 address needs brackets ([{host}]:{port}): {shape}"
        ));
    } else if host.chars().any(|c| c.is_whitespace() || c == '/') {
        return Err(format!("{host:?} is not a host name or address: {shape}"));
    }
    Ok(s.to_string())
}

/// Checks a host engine address (`-r`): `HOST`, `HOST:PORT`, `[IPV6]:PORT`,
/// `tcp://HOST[:PORT]`, `unix:///PATH` (or a bare `/PATH`), `vsock://CID:PORT`, as
/// `dcgmConnect_v3` takes them (no port: 5555, except for vsock, which libdcgm 4.6.0
/// refuses without one). Blank entries pass (they are dropped).
///
/// ```
/// use dcgm_exporter::cli::hostengine_address;
/// assert!(hostengine_address("tcp://10.0.0.1:5555").is_ok());
/// assert!(hostengine_address("unix:///run/nv-hostengine").is_ok());
/// assert!(hostengine_address("vsock://3:5555").is_ok());
/// assert!(hostengine_address("node-1:5555").is_ok());
/// assert!(hostengine_address("vsock://host:5555").is_err());
/// assert!(hostengine_address("vsock://3").is_err());
/// assert!(hostengine_address("unix://relative").is_err());
/// assert!(hostengine_address("http://node:5555").is_err());
/// assert!(hostengine_address("tcp://node:99999").is_err());
/// ```
///
/// # Errors
///
/// What is wrong, and the accepted shapes.
pub fn hostengine_address(s: &str) -> Result<String, String> {
    let shapes = "expected HOST[:PORT], tcp://HOST[:PORT], unix:///PATH or vsock://CID:PORT";
    let t = s.trim();
    if t.is_empty() {
        return Ok(String::new());
    }
    let port_ok = |p: &str| matches!(p.parse::<u16>(), Ok(n) if n > 0);
    let lower = t.to_ascii_lowercase();
    if let Some((scheme, _)) = lower.split_once("://") {
        let rest = &t[scheme.len() + 3..];
        match scheme {
            "unix" => {
                if !rest.starts_with('/') || rest.len() < 2 {
                    return Err(format!(
                        "{t:?}: a unix socket needs an absolute path (unix:///run/nv-hostengine)"
                    ));
                }
            }
            "vsock" => {
                // libdcgm 4.6.0 refuses `vsock://CID` without a port (DCGM_ST_BADPARAM,
                // measured), whatever its header says: asked for here.
                let Some((cid, port)) = rest.split_once(':') else {
                    return Err(format!(
                        "{t:?}: a vsock address needs its port (vsock://{rest}:5555): \
                         libdcgm 4.6.0 refuses one without"
                    ));
                };
                if cid.parse::<u32>().is_err() {
                    return Err(format!(
                        "{t:?}: a vsock address is a context id (a number) and a port, like \
                         vsock://3:5555"
                    ));
                }
                if !port_ok(port) {
                    return Err(format!("{t:?}: {port:?} is not a port (1 to 65535)"));
                }
            }
            "tcp" => host_port(rest, &port_ok).map_err(|e| format!("{t:?}: {e}; {shapes}"))?,
            _ => return Err(format!("{t:?}: unknown scheme {scheme:?}; {shapes}")),
        }
        return Ok(t.to_string());
    }
    if t.starts_with('/') {
        return Ok(t.to_string());
    }
    host_port(t, &port_ok).map_err(|e| format!("{t:?}: {e}; {shapes}"))?;
    Ok(t.to_string())
}

/// `HOST`, `HOST:PORT` or `[IPV6]:PORT`.
fn host_port(s: &str, port_ok: &dyn Fn(&str) -> bool) -> Result<(), String> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or_else(|| "unbalanced brackets".to_string())?;
        h.parse::<std::net::Ipv6Addr>()
            .map_err(|_| format!("{h:?} is not an IPv6 address"))?;
        (h, after.strip_prefix(':'))
    } else {
        match s.rsplit_once(':') {
            Some((h, _)) if h.contains(':') => {
                return Err("an IPv6 address needs brackets".into());
            }
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c == '/') {
        return Err(format!("{host:?} is not a host name or address"));
    }
    if let Some(p) = port
        && !port_ok(p)
    {
        return Err(format!("{p:?} is not a port (1 to 65535)"));
    }
    Ok(())
}

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// `time level message` lines.
    Text,
    /// One JSON object per line: `time`, `level`, `msg`.
    Json,
}

/// `--dcgm-log-level`: DCGM's own severities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "UPPER")]
pub enum DcgmLogLevel {
    /// Nothing.
    None,
    /// Fatal errors.
    Fatal,
    /// Errors.
    Error,
    /// Warnings.
    Warn,
    /// Information.
    Info,
    /// Debugging.
    Debug,
    /// Everything.
    Verb,
}

impl From<DcgmLogLevel> for dcgm::LogSeverity {
    fn from(l: DcgmLogLevel) -> Self {
        match l {
            DcgmLogLevel::None => Self::None,
            DcgmLogLevel::Fatal => Self::Fatal,
            DcgmLogLevel::Error => Self::Error,
            DcgmLogLevel::Warn => Self::Warning,
            DcgmLogLevel::Info => Self::Info,
            DcgmLogLevel::Debug => Self::Debug,
            DcgmLogLevel::Verb => Self::Verbose,
        }
    }
}

/// dcgm-exporter's flags.
#[derive(Debug, Parser)]
#[command(
    name = "dcgm-exporter",
    version,
    about = "Prometheus exporter of NVIDIA DCGM metrics, compatible with dcgm-exporter",
    after_help = "Every flag shared with dcgm-exporter also reads its environment variable \
                  (shown with each flag). SIGHUP reloads the counters file.\n\n\
                  Exit status: 0 success, 1 DCGM or server failure, 2 bad configuration."
)]
pub struct Cli {
    /// Counters file (dcgm-exporter's CSV format); default: the built-in default counters.
    #[arg(
        short = 'f',
        long = "collectors",
        value_name = "FILE",
        env = "DCGM_EXPORTER_COLLECTORS"
    )]
    pub collectors: Option<PathBuf>,
    /// Listen address: `:PORT` (every interface), `HOST:PORT` or `[IPV6]:PORT`.
    #[arg(
        short = 'a',
        long = "address",
        default_value = ":9400",
        value_parser = listen_address,
        env = "DCGM_EXPORTER_LISTEN"
    )]
    pub address: String,
    /// Collection interval in milliseconds (1 to 86400000, a day).
    #[arg(
        short = 'c',
        long = "collect-interval",
        default_value_t = 30000,
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(1..=MAX_COLLECT_INTERVAL_MS),
        env = "DCGM_EXPORTER_INTERVAL"
    )]
    pub collect_interval_ms: u64,
    /// `/health` answers 503 when the last good collection is older than this many collection
    /// intervals (2 to 1000), also while a collection waits on a host engine that stopped
    /// answering.
    #[arg(
        long = "health-max-age-intervals",
        default_value_t = DEFAULT_MAX_AGE_INTERVALS,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(2..=i64::from(MAX_HEALTH_AGE_INTERVALS))
    )]
    pub health_max_age_intervals: u32,
    /// Connect to a host engine at HOST:PORT, `tcp://HOST[:PORT]`, `unix:///PATH` or
    /// `vsock://CID:PORT` (default: start DCGM's embedded engine). Several (repeated, or
    /// comma-separated): one connection each, every series labelled with its `hostengine`.
    #[arg(
        short = 'r',
        long = "remote-hostengine-info",
        value_name = "ADDRESS",
        value_parser = hostengine_address,
        value_delimiter = ',',
        action = clap::ArgAction::Append,
        env = "DCGM_REMOTE_HOSTENGINE_INFO"
    )]
    pub remote: Vec<String>,
    /// Devices to export: `f` (GPUs, or the GPU instances of GPUs in MIG mode), `g`, `g:0,1`,
    /// `g:0-3` (GPUs), `i`, `i:0,2-4` (MIG GPU instances).
    #[arg(
        short = 'd',
        long = "devices",
        default_value = "f",
        env = "DCGM_EXPORTER_DEVICES_STR"
    )]
    pub devices: DeviceSelection,
    /// NvSwitches and their NVLinks, for the counters file's NvSwitch and NVLink rows: `f`,
    /// `g`, `g:0,1` (switches), `i`, `i:0-7` (links of every switch). GPU links follow `-d`.
    #[arg(
        short = 's',
        long = "switch-devices",
        default_value = "f",
        env = "DCGM_EXPORTER_OTHER_DEVICES_STR"
    )]
    pub switch_devices: EntitySelection,
    /// CPUs and their cores, for the counters file's CPU and CPU-core rows: `f`, `g`, `g:0,1`
    /// (CPUs), `i`, `i:0-7` (cores).
    #[arg(
        short = 'p',
        long = "cpu-devices",
        default_value = "f",
        env = "DCGM_EXPORTER_CPU_DEVICES_STR"
    )]
    pub cpu_devices: EntitySelection,
    /// Label GPUs with the Kubernetes pod, namespace and container holding them (from the
    /// kubelet's pod-resources socket).
    #[arg(short = 'k', long = "kubernetes", env = "DCGM_EXPORTER_KUBERNETES")]
    pub kubernetes: bool,
    /// How the kubelet names whole GPUs: `uid` (GPU UUID) or `device-name` (`nvidiaN`).
    #[arg(
        long = "kubernetes-gpu-id-type",
        value_enum,
        default_value = "uid",
        env = "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE"
    )]
    pub kubernetes_gpu_id_type: GpuIdType,
    /// The kubelet's pod-resources socket.
    #[arg(
        long = "pod-resources-kubelet-socket",
        value_name = "PATH",
        default_value = DEFAULT_SOCKET,
        env = "DCGM_POD_RESOURCES_KUBELET_SOCKET"
    )]
    pub pod_resources_socket: PathBuf,
    /// Add a `pod_uid` label to the pod labels: the UID in the cgroup of the pod's processes
    /// on the GPU (left out while no process of the pod runs on it).
    #[arg(
        long = "kubernetes-enable-pod-uid",
        env = "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_UID"
    )]
    pub kubernetes_pod_uid: bool,
    /// More resource names counted as GPUs besides `nvidia.com/gpu` and `nvidia.com/mig-*`
    /// (comma-separated).
    #[arg(
        long = "nvidia-resource-names",
        value_delimiter = ',',
        value_name = "NAMES",
        env = "NVIDIA_RESOURCE_NAMES"
    )]
    pub nvidia_resource_names: Vec<String>,
    /// With --kubernetes: add the labels of the pod holding a GPU to its series, from the
    /// API server (the pods of this node, `NODE_NAME`; needs list on pods), keys with
    /// characters other than `[a-zA-Z0-9_]` as `_`.
    #[arg(
        long = "kubernetes-enable-pod-labels",
        env = "DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS",
        requires = "kubernetes"
    )]
    pub kubernetes_enable_pod_labels: bool,
    /// With --kubernetes-enable-pod-labels: only the pod labels whose key matches one of
    /// these regular expressions (comma-separated; none: all).
    #[arg(
        long = "kubernetes-pod-label-allowlist-regex",
        value_name = "REGEX",
        value_delimiter = ',',
        action = clap::ArgAction::Append,
        env = "DCGM_EXPORTER_KUBERNETES_POD_LABEL_ALLOWLIST_REGEX"
    )]
    pub kubernetes_pod_label_allowlist_regex: Vec<String>,
    /// With --kubernetes: every pod sharing a GPU or MIG instance (time slicing, MPS) gets
    /// series of its own (with `vgpu`, its replica), and `DCGM_FI_DEV_GPU_UTIL` and
    /// `DCGM_FI_DEV_FB_USED` per pod from its processes, beside the device's own series.
    #[arg(
        long = "kubernetes-virtual-gpus",
        env = "KUBERNETES_VIRTUAL_GPUS",
        requires = "kubernetes"
    )]
    pub kubernetes_virtual_gpus: bool,
    /// With --kubernetes: label the GPUs and MIG instances that Dynamic Resource Allocation
    /// claims give containers (NVIDIA DRA driver `gpu.nvidia.com`), mapped through the
    /// driver's CDI spec files (--cdi-spec-dir), with `dra_*` labels.
    #[arg(
        long = "kubernetes-enable-dra",
        env = "KUBERNETES_ENABLE_DRA",
        requires = "kubernetes"
    )]
    pub kubernetes_enable_dra: bool,
    /// Where the DRA driver writes its CDI spec files (with --kubernetes-enable-dra).
    #[arg(
        long = "cdi-spec-dir",
        value_name = "DIR",
        default_value = crate::attribution::cdi::DEFAULT_DIR,
        env = "DCGM_EXPORTER_CDI_SPEC_DIR"
    )]
    pub cdi_spec_dir: PathBuf,
    /// With --kubernetes-enable-dra: look up the claimed devices that no CDI spec maps in
    /// their driver's ResourceSlices, through the API server with the pod's service account
    /// (it needs get and list on resourceslices in resource.k8s.io).
    #[arg(
        long = "kubernetes-dra-resource-slices",
        env = "DCGM_EXPORTER_KUBERNETES_DRA_RESOURCE_SLICES",
        requires = "kubernetes_enable_dra"
    )]
    pub kubernetes_dra_resource_slices: bool,
    /// How long a pool's ResourceSlices (or the failure to get them) are kept before the
    /// API server is asked again (with --kubernetes-dra-resource-slices).
    #[arg(
        long = "kubernetes-dra-resource-slice-refresh",
        value_name = "DURATION",
        default_value = "60s",
        value_parser = slice_refresh,
        env = "DCGM_EXPORTER_KUBERNETES_DRA_RESOURCE_SLICE_REFRESH"
    )]
    pub kubernetes_dra_resource_slice_refresh: Duration,
    /// The service account's token and ca.crt, for the API server (with
    /// --kubernetes-dra-resource-slices).
    #[arg(
        long = "kubernetes-service-account-dir",
        value_name = "DIR",
        default_value = crate::attribution::resource_slice::DEFAULT_SERVICE_ACCOUNT_DIR,
        env = "DCGM_EXPORTER_KUBERNETES_SERVICE_ACCOUNT_DIR"
    )]
    pub kubernetes_service_account_dir: PathBuf,
    /// Directory of HPC job mappings: a file per GPU (`0`, `1`, or `<gpu>.<instance>` for
    /// MIG) listing its jobs, one per line, exported as `hpc_job` labels.
    #[arg(
        long = "hpc-job-mapping-dir",
        value_name = "DIR",
        env = "DCGM_HPC_JOB_MAPPING_DIR"
    )]
    pub hpc_job_mapping_dir: Option<PathBuf>,
    /// With --hpc-job-mapping-dir: export each job on a GPU as one DCGM_EXP_HPC_JOB_INFO
    /// series (value 1) to join on, instead of an `hpc_job` label on every series.
    #[arg(
        long = "hpc-job-info-series",
        env = "DCGM_EXPORTER_HPC_JOB_INFO_SERIES"
    )]
    pub hpc_job_info_series: bool,
    /// Where the processes DCGM lists on the GPUs are seen, for their cgroups
    /// (DCGM_EXP_POD_FB_USED, pod_uid): the host's /proc, or where it is mounted.
    #[arg(
        long = "proc-root",
        value_name = "DIR",
        default_value = "/proc",
        env = "DCGM_EXPORTER_PROC_ROOT"
    )]
    pub proc_root: PathBuf,
    /// Leave the host-name label out.
    #[arg(short = 'n', long = "no-hostname", env = "DCGM_EXPORTER_NO_HOSTNAME")]
    pub no_hostname: bool,
    /// Name of the host-name label: `hostname`, as dcgm-exporter since its 4.8 line;
    /// `Hostname` for dashboards and rules written for the older name.
    #[arg(
        long = "hostname-label",
        default_value = "hostname",
        value_name = "NAME",
        env = "DCGM_EXPORTER_HOSTNAME_LABEL"
    )]
    pub hostname_label: String,
    /// Replace the blanks of GPU model names with dashes.
    #[arg(
        long = "replace-blanks-in-model-name",
        visible_alias = "rbmn",
        env = "DCGM_EXPORTER_REPLACE_BLANKS_IN_MODEL_NAME"
    )]
    pub replace_blanks: bool,
    /// Window of DCGM_EXP_XID_ERRORS_COUNT, in milliseconds (1 to 604800000, a week).
    #[arg(
        short = 'x',
        long = "xid-count-window-size",
        default_value_t = 300000,
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(1..=MAX_WINDOW_MS),
        env = "DCGM_EXPORTER_XID_COUNT_WINDOW_SIZE"
    )]
    pub xid_window_ms: u64,
    /// Window of DCGM_EXP_CLOCK_EVENTS_COUNT, in milliseconds (1 to 604800000, a week).
    #[arg(
        long = "clock-events-count-window-size",
        default_value_t = 300000,
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(1..=MAX_WINDOW_MS),
        env = "DCGM_EXPORTER_CLOCK_EVENTS_COUNT_WINDOW_SIZE"
    )]
    pub clock_window_ms: u64,
    /// Web configuration (Prometheus exporter-toolkit format): TLS, basic auth (bcrypt).
    #[arg(
        long = "web-config-file",
        value_name = "FILE",
        env = "DCGM_EXPORTER_WEB_CONFIG_FILE"
    )]
    pub web_config_file: Option<PathBuf>,
    /// Write the embedded DCGM engine's own log to standard output.
    #[arg(long = "enable-dcgm-log", env = "DCGM_EXPORTER_ENABLE_DCGM_LOG")]
    pub enable_dcgm_log: bool,
    /// Severity of the DCGM log.
    #[arg(
        long = "dcgm-log-level",
        value_enum,
        default_value = "NONE",
        env = "DCGM_EXPORTER_DCGM_LOG_LEVEL"
    )]
    pub dcgm_log_level: DcgmLogLevel,
    /// Log format.
    #[arg(
        long = "log-format",
        value_enum,
        default_value = "text",
        env = "DCGM_EXPORTER_LOG_FORMAT"
    )]
    pub log_format: LogFormat,
    /// Debug logging.
    #[arg(long, env = "DCGM_EXPORTER_DEBUG")]
    pub debug: bool,
    /// Read from dcgm-sim, the DCGM simulator, instead of GPUs (the output says so).
    #[arg(long, visible_alias = "fake-gpus", env = "DCGM_EXPORTER_USE_FAKE_GPUS")]
    pub simulate: bool,
    /// Start even when DCGM cannot be loaded or reached: the listener answers `/health` with
    /// 503 until it can (by default a library that does not load is a start-up error).
    #[arg(long = "disable-startup-validate", env = "DISABLE_STARTUP_VALIDATE")]
    pub disable_startup_validate: bool,
    /// Print one exposition to stdout and exit.
    #[arg(long)]
    pub once: bool,
    /// Connections one client address may hold at once (past it, its new connections are
    /// closed at once). Not in dcgm-exporter.
    #[arg(
        long = "web-max-connections-per-client",
        value_name = "N",
        default_value_t = server::MAX_PER_CLIENT,
        value_parser = per_client_limit,
    )]
    pub web_max_per_client: usize,
    /// Time a client has to send a whole request, head and body (e.g. `10s`, `500ms`);
    /// dcgm-exporter 4.8.3's `--web-read-timeout`.
    #[arg(
        long = "web-read-timeout",
        visible_alias = "web-request-timeout",
        value_name = "DURATION",
        default_value = "10s",
        value_parser = web_timeout,
        env = "DCGM_EXPORTER_WEB_READ_TIMEOUT"
    )]
    pub web_request_timeout: Duration,
    /// Time a keep-alive connection may stay without a request.
    #[arg(
        long = "web-idle-timeout",
        value_name = "DURATION",
        default_value = "10s",
        value_parser = web_timeout,
        env = "DCGM_EXPORTER_WEB_IDLE_TIMEOUT"
    )]
    pub web_idle_timeout: Duration,
    /// Time a response may take to be written, however slowly the client reads.
    #[arg(
        long = "web-write-timeout",
        value_name = "DURATION",
        default_value = "10s",
        value_parser = web_timeout,
        env = "DCGM_EXPORTER_WEB_WRITE_TIMEOUT"
    )]
    pub web_write_timeout: Duration,
    /// Listen on the socket systemd passes (socket activation: `LISTEN_FDS`, `LISTEN_PID`,
    /// descriptor 3) instead of `--address`.
    #[arg(long = "web-systemd-socket", env = "DCGM_EXPORTER_SYSTEMD_SOCKET")]
    pub web_systemd_socket: bool,
    /// A YAML file of flags (`collect-interval: 10000`, ...): the command line, then the
    /// environment, win over it.
    #[arg(
        long = "config-file",
        value_name = "FILE",
        env = "DCGM_EXPORTER_CONFIG_FILE"
    )]
    pub config_file: Option<PathBuf>,
    /// `/metrics` responses served at once; past it a scrape is answered 503 at once
    /// (0: no limit beyond the connection limits).
    #[arg(
        long = "max-concurrent-scrapes",
        value_name = "N",
        default_value_t = 0,
        value_parser = clap::value_parser!(u32).range(0..=65_536),
        env = "DCGM_EXPORTER_MAX_CONCURRENT_SCRAPES"
    )]
    pub max_concurrent_scrapes: u32,
    /// Add the exporter's own metrics to `/metrics`: its process (`process_*`) and its
    /// `/metrics` handler (`promhttp_metric_handler_*`).
    #[arg(
        long = "enable-exporter-metrics",
        env = "DCGM_EXPORTER_ENABLE_EXPORTER_METRICS"
    )]
    pub enable_exporter_metrics: bool,
    /// How long DCGM keeps the samples of the exporter's watches (DCGM's `maxKeepAge`):
    /// a duration (`5m`) or seconds; default 4 collect intervals, at least 30 s. The XID and
    /// clock-event windows' watch keeps at least its window.
    #[arg(
        long = "watch-max-keep-age",
        value_name = "DURATION",
        value_parser = keep_age,
        env = "DCGM_EXPORTER_WATCH_MAX_KEEP_AGE"
    )]
    pub watch_max_keep_age: Option<Duration>,
    /// How many samples DCGM keeps per watched field (DCGM's `maxKeepSamples`; 0: no
    /// limit, only the age).
    #[arg(
        long = "watch-max-keep-samples",
        value_name = "N",
        default_value_t = 0,
        value_parser = clap::value_parser!(u32).range(0..=1_000_000),
        env = "DCGM_EXPORTER_WATCH_MAX_KEEP_SAMPLES"
    )]
    pub watch_max_keep_samples: u32,
    /// `/health` answers 503 while the exporter sees no GPU (none found, or none left by
    /// `-d`).
    #[arg(
        long = "health-require-gpus",
        env = "DCGM_EXPORTER_HEALTH_REQUIRE_GPUS"
    )]
    pub health_require_gpus: bool,
    /// Label the series of each GPU with the containers whose processes run on it, from
    /// the container runtime's CRI socket (`--container-runtime-socket`), without Kubernetes.
    #[arg(long = "container-labels", env = "DCGM_EXPORTER_CONTAINER_LABELS")]
    pub container_labels: bool,
    /// The container runtime's CRI socket (containerd, CRI-O), for `--container-labels`.
    #[arg(
        long = "container-runtime-socket",
        value_name = "PATH",
        default_value = crate::attribution::cri::DEFAULT_SOCKET,
        env = "DCGM_CONTAINER_RUNTIME_SOCKET"
    )]
    pub container_runtime_socket: PathBuf,
    /// OTLP export (`--otlp-*`, `--no-metrics-endpoint`).
    #[command(flatten)]
    pub otlp: crate::otlp::config::OtlpArgs,
}

/// A web timeout: from 10 ms to 1 hour.
fn web_timeout(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| format!("{s:?}: {e} (e.g. 10s, 500ms)"))?;
    if d < Duration::from_millis(10) || d > Duration::from_secs(3600) {
        return Err(format!("{s:?} is outside 10ms..1h"));
    }
    Ok(d)
}

/// `--watch-max-keep-age`: a duration (`300s`, `5m`) or a number of seconds, from 1 s to a
/// week.
fn keep_age(s: &str) -> Result<Duration, String> {
    let d = match s.trim().parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => Duration::from_secs_f64(secs),
        Ok(_) => return Err(format!("{s:?} is not a duration")),
        Err(_) => humantime::parse_duration(s.trim())
            .map_err(|e| format!("{s:?}: {e} (e.g. 300s, 5m, or 300)"))?,
    };
    if d < Duration::from_secs(1) || d > Duration::from_millis(MAX_WINDOW_MS) {
        return Err(format!("{s:?} is outside 1s..7d"));
    }
    Ok(d)
}

/// The ResourceSlice refresh interval: from 1 s to a day.
fn slice_refresh(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| format!("{s:?}: {e} (e.g. 60s, 5m)"))?;
    if d < Duration::from_secs(1) || d > Duration::from_secs(86_400) {
        return Err(format!("{s:?} is outside 1s..24h"));
    }
    Ok(d)
}

/// Connections per client: from 1 to 65,536.
fn per_client_limit(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=65_536).contains(&n) => Ok(n),
        _ => Err(format!("{s:?} is not a number from 1 to 65536")),
    }
}

impl Cli {
    /// The HTTP server's limits the flags ask for.
    pub fn web_limits(&self) -> server::Limits {
        server::Limits {
            max_per_client: self.web_max_per_client,
            request_timeout: self.web_request_timeout,
            idle_timeout: self.web_idle_timeout,
            write_timeout: self.web_write_timeout,
            max_concurrent_scrapes: self.max_concurrent_scrapes as usize,
            exporter_metrics: self.enable_exporter_metrics,
            ..server::Limits::default()
        }
    }

    /// The host engines to read (`-r`, blanks dropped, each once); empty: the embedded engine.
    pub fn hostengines(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in self
            .remote
            .iter()
            .map(|r| r.trim())
            .filter(|r| !r.is_empty())
        {
            if !out.iter().any(|o| o == r) {
                out.push(r.to_string());
            }
        }
        out
    }

    /// The label options the flags ask for, for the series of host engine `engine` (`None`:
    /// the embedded engine); with several engines each series also gets `hostengine`.
    pub fn label_options(&self, engine: Option<&str>) -> LabelOptions {
        LabelOptions {
            hostname: (!self.no_hostname).then(|| dcgm_prometheus::default_hostname(engine)),
            hostengine: engine
                .filter(|_| self.hostengines().len() > 1)
                .map(str::to_string),
            hostname_label: self.hostname_label.clone(),
            replace_blanks_in_model_name: self.replace_blanks,
            ..LabelOptions::default()
        }
    }
}
