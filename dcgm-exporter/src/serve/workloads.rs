//! The workloads the GPUs' labels name: Kubernetes pods (the kubelet's pod map and the thread
//! that refreshes it), DRA claims, HPC jobs, and the attribution each collector applies.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dcgm_exporter::attribution::kubernetes::PodMapper;
use dcgm_exporter::attribution::pods::{PodCache, PodRefresher};
use dcgm_exporter::attribution::{Attribution, AttributionConfig};
use dcgm_exporter::cli::Cli;
use dcgm_exporter::health::SourceBoard;
use dcgm_exporter::http::server::Published;

use super::fail;

/// The kubelet's pod map the flags ask for (with `--kubernetes`), and the refresher feeding
/// it (the caller runs it once or in its thread).
pub(crate) fn pods(cli: &Cli) -> (Option<(PodMapper, Arc<PodCache>)>, Option<PodRefresher>) {
    let mut pods = None;
    let mut refresher = None;
    if cli.kubernetes {
        let mapper = PodMapper {
            socket: cli.pod_resources_socket.clone(),
            id_type: cli.kubernetes_gpu_id_type,
            extra_resources: cli.nvidia_resource_names.clone(),
            pod_uid: cli.kubernetes_pod_uid,
            virtual_gpus: cli.kubernetes_virtual_gpus,
            dra: cli.kubernetes_enable_dra.then(|| {
                dcgm_exporter::attribution::dra_types::DraConfig {
                    cdi_dir: cli.cdi_spec_dir.clone(),
                    proc_root: cli.proc_root.clone(),
                    resource_slices: cli.kubernetes_dra_resource_slices.then(|| {
                        dcgm_exporter::attribution::resource_slice::ResourceSliceConfig {
                            service_account_dir: cli.kubernetes_service_account_dir.clone(),
                            refresh: cli.kubernetes_dra_resource_slice_refresh,
                        }
                    }),
                    stats: Arc::default(),
                    // `--once` has one pass: it reads every changed spec.
                    budget: if cli.once {
                        dcgm_exporter::attribution::cdi::Budget {
                            bytes: u64::MAX,
                            time: Duration::MAX,
                        }
                    } else {
                        dcgm_exporter::attribution::cdi::Budget::default()
                    },
                }
            }),
        };
        let cache = Arc::new(PodCache::default());
        match PodRefresher::new(mapper.clone(), cache.clone()) {
            Ok(r) => {
                refresher = Some(r);
                pods = Some((mapper, cache));
            }
            Err(e) => log::error!("no Kubernetes labels: cannot start the gRPC client: {e}"),
        }
    }
    (pods, refresher)
}

/// The DRA mapping counts the kubelet thread keeps (with `--kubernetes-enable-dra`).
pub(crate) fn dra_stats(
    pods: &Option<(PodMapper, Arc<PodCache>)>,
) -> Option<Arc<dcgm_exporter::attribution::dra_types::DraStats>> {
    pods.as_ref()?.0.dra.as_ref().map(|d| d.stats.clone())
}

/// The workload attribution the flags ask for, over the pod map `pods`, for the collector of
/// host engine `engine` (`None`: the embedded engine).
pub(crate) fn attribution(
    cli: &Cli,
    pods: Option<(PodMapper, Arc<PodCache>)>,
    engine: Option<&str>,
    hpc_board: Option<SourceBoard>,
) -> Attribution {
    Attribution::new(
        pods,
        AttributionConfig {
            hpc_dir: cli.hpc_job_mapping_dir.clone(),
            hpc_info_series: cli.hpc_job_info_series,
            proc_root: cli.proc_root.clone(),
            local_engine: engine.is_none_or(is_local_engine),
            hpc_board,
            container_runtime: cli
                .container_labels
                .then(|| cli.container_runtime_socket.clone()),
            pod_labels: cli.kubernetes_enable_pod_labels.then(|| {
                (
                    cli.kubernetes_service_account_dir.clone(),
                    // Checked at start (settings::check).
                    dcgm_exporter::attribution::pod_labels::Allowlist::new(
                        &cli.kubernetes_pod_label_allowlist_regex,
                    )
                    .unwrap_or_default(),
                )
            }),
        },
    )
}

/// Whether a host engine address is on this host: a unix socket, `localhost`, a loopback
/// address.
fn is_local_engine(address: &str) -> bool {
    if address.starts_with("unix://") || address.starts_with('/') {
        return true;
    }
    let host = dcgm_prometheus::default_hostname(Some(address));
    host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// With `--hpc-job-mapping-dir`: where the job reader reports how the directory reads, for
/// `/health`.
pub(crate) fn hpc_board(cli: &Cli) -> Option<SourceBoard> {
    cli.hpc_job_mapping_dir.as_ref().map(|_| Arc::default())
}

/// Starts the kubelet thread: it refreshes the pod map about every `interval` and reports to
/// `/health`. A thread that cannot start is exit status 1.
pub(crate) fn spawn_refresher(
    refresher: PodRefresher,
    interval: Duration,
    published: &Arc<Mutex<Published>>,
) -> Result<(), ExitCode> {
    let p = published.clone();
    refresher
        .spawn(interval, move |k| {
            p.lock().unwrap_or_else(|p| p.into_inner()).health.kubelet = Some(k);
        })
        .map_err(|e| fail(1, format_args!("cannot start the kubelet thread: {e}")))
}
