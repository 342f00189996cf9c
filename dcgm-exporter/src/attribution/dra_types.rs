//! The types of the DRA attribution ([`super::dra`]) that the rest of the exporter shares:
//! the claim behind a holder (for its `dra_*` labels), the settings, and the counts of the
//! last mapping (for `/metrics` and `/health`). What a claimed device is on this node is
//! `dra_target`'s.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::cdi::{self, PassReport};
use super::resource_slice::ResourceSliceConfig;

/// The claim and device behind a DRA holder, for its `dra_*` labels.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DraClaim {
    /// The ResourceClaim's name.
    pub claim_name: String,
    /// Its namespace.
    pub claim_namespace: String,
    /// The DRA driver (`gpu.nvidia.com`).
    pub driver_name: String,
    /// The driver's pool (the node's name, for the NVIDIA driver).
    pub pool_name: String,
    /// The device within the pool (`gpu-0`, `gpu-0-mig-1g10gb-19-0`).
    pub device_name: String,
}

/// The gauge of how the claimed devices were mapped.
pub const DEVICES_METRIC: &str = "dcgm_exporter_dra_devices";

/// How the NVIDIA DRA devices of the last kubelet answer were mapped, shared by the kubelet
/// thread (which sets it) and the collector (which exports it as [`DEVICES_METRIC`]).
#[derive(Debug, Default)]
pub struct DraStats {
    /// (by a CDI spec, by a ResourceSlice, unmapped); `None` before the first answer and
    /// after a failed `List`.
    counts: Mutex<Option<[usize; 3]>>,
    /// The last pass over the CDI directory, and the files read since the start.
    cdi: Mutex<Option<CdiState>>,
}

/// The CDI directory as the last pass found it (for `/metrics` and `/health`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdiState {
    /// The directory.
    pub dir: PathBuf,
    /// What the pass did and found; `Err`: the directory could not be listed.
    pub pass: Result<PassReport, String>,
    /// Spec files read (parsed) since the start: unchanged files are not read again.
    pub reads: u64,
    /// When the pass ended.
    pub at: std::time::Instant,
}

/// The gauge of the CDI spec files by state, and the counter of files read.
pub const CDI_FILES_METRIC: &str = "dcgm_exporter_cdi_spec_files";
/// The counter of spec files read (parsed).
pub const CDI_READS_METRIC: &str = "dcgm_exporter_cdi_spec_reads_total";

impl DraStats {
    /// The counts of the last answer: (CDI, ResourceSlice, unmapped).
    pub fn get(&self) -> Option<[usize; 3]> {
        *self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets the counts (`None`: no answer to count).
    pub fn set(&self, counts: Option<[usize; 3]>) {
        *self.counts.lock().unwrap_or_else(|p| p.into_inner()) = counts;
    }

    /// The last pass over the CDI directory (`None` before the first that needed it).
    pub fn cdi(&self) -> Option<CdiState> {
        self.cdi.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Sets the last pass over the CDI directory.
    pub fn set_cdi(&self, state: CdiState) {
        *self.cdi.lock().unwrap_or_else(|p| p.into_inner()) = Some(state);
    }

    /// Appends [`DEVICES_METRIC`] in the Prometheus text format; nothing before the first
    /// kubelet answer or after a failed one.
    ///
    /// ```
    /// let stats = dcgm_exporter::attribution::dra_types::DraStats::default();
    /// stats.set(Some([2, 1, 0]));
    /// let mut out = String::new();
    /// stats.write(&mut out);
    /// assert!(out.contains("dcgm_exporter_dra_devices{source=\"cdi\"} 2\n"));
    /// assert!(out.contains("dcgm_exporter_dra_devices{source=\"resource_slice\"} 1\n"));
    /// assert!(out.contains("dcgm_exporter_dra_devices{source=\"unmapped\"} 0\n"));
    /// ```
    pub fn write(&self, out: &mut String) {
        use std::fmt::Write as _;
        if let Some(c) = self.cdi() {
            let (ok, rejected, deferred, over) = match &c.pass {
                Ok(p) => (p.specs, p.rejected.len(), p.deferred, p.over_limit),
                Err(_) => (0, 0, 0, 0),
            };
            let _ = write!(
                out,
                "# HELP {CDI_FILES_METRIC} CDI spec files of the last pass over --cdi-spec-dir, by \
                 state: usable specs (ok), refused or unparsable (rejected), changed but left for \
                 the next pass by its budget (deferred), past the {} files read (over_limit).\n\
                 # TYPE {CDI_FILES_METRIC} gauge\n\
                 {CDI_FILES_METRIC}{{state=\"ok\"}} {ok}\n\
                 {CDI_FILES_METRIC}{{state=\"rejected\"}} {rejected}\n\
                 {CDI_FILES_METRIC}{{state=\"deferred\"}} {deferred}\n\
                 {CDI_FILES_METRIC}{{state=\"over_limit\"}} {over}\n\
                 # HELP {CDI_READS_METRIC} CDI spec files read and parsed (a file is read again \
                 only when its size, time or inode changes).\n\
                 # TYPE {CDI_READS_METRIC} counter\n\
                 {CDI_READS_METRIC} {}\n",
                cdi::MAX_SPECS,
                c.reads
            );
        }
        let Some([cdi, slice, unmapped]) = self.get() else {
            return;
        };
        let _ = write!(
            out,
            "# HELP {DEVICES_METRIC} NVIDIA DRA devices of the kubelet's last answer, by what \
             mapped them to a GPU or MIG instance (cdi, resource_slice) or unmapped.\n\
             # TYPE {DEVICES_METRIC} gauge\n\
             {DEVICES_METRIC}{{source=\"cdi\"}} {cdi}\n\
             {DEVICES_METRIC}{{source=\"resource_slice\"}} {slice}\n\
             {DEVICES_METRIC}{{source=\"unmapped\"}} {unmapped}\n"
        );
    }
}

/// Settings of the DRA attribution.
#[derive(Debug, Clone)]
pub struct DraConfig {
    /// The CDI spec directory (`--cdi-spec-dir`).
    pub cdi_dir: PathBuf,
    /// Where the NVIDIA driver's `/proc/driver` tables are (`--proc-root`).
    pub proc_root: PathBuf,
    /// With `--kubernetes-dra-resource-slices`: look up the devices no CDI spec maps in the
    /// API server's ResourceSlices.
    pub resource_slices: Option<ResourceSliceConfig>,
    /// Where the counts of each answer go.
    pub stats: Arc<DraStats>,
    /// What one pass over the CDI directory may read of changed files (`--once` has one
    /// pass: it reads them all).
    pub budget: cdi::Budget,
}
